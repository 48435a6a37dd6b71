llmsim_test(test_sweep SOURCES test_sweep.c LIBS PkgConfig::SQLITE3 LABELS e2e TIMEOUT 600)
add_dependencies(test_sweep llmsim)
