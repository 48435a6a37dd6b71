llmsim_test(test_cli SOURCES test_cli.c LIBS llmsim_store LABELS e2e TIMEOUT 300)
add_dependencies(test_cli llmsim)
