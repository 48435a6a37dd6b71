llmsim_test(test_sweep SOURCES test_sweep.c LIBS llmsim_store LABELS e2e TIMEOUT 600)
add_dependencies(test_sweep llmsim)
