# llmsim validate: validation sets, their statistics, the stored table and the refusals (small
# fixtures in tests/data_validate), the shipped sets over ../shared/data (skipped when it is
# absent), and the command through the program.
llmsim_test(test_validate SOURCES test_validate.c LIBS llmsim_study ${MATH_LIB}
            LABELS validation unit CPU 1200)
llmsim_test(test_validate_data SOURCES test_validate_data.c LIBS llmsim_study ${MATH_LIB}
            LABELS validation CPU 1200)
llmsim_test(test_validate_cli SOURCES test_validate_cli.c LIBS llmsim_store ${MATH_LIB}
            LABELS validation e2e CPU 1200)
add_dependencies(test_validate_cli llmsim)
