llmsim_test(test_cli SOURCES test_cli.c LIBS llmsim_store LABELS e2e CPU 1200)
add_dependencies(test_cli llmsim)
# models, precisions and layouts through the program: list, scenario check, run notes
llmsim_test(test_models_cli SOURCES test_models_cli.c LIBS llmsim_store LABELS e2e CPU 480)
add_dependencies(test_models_cli llmsim)
