# calibration/: catalogs, the config.json reader and the roofline predictor.
llmsim_test(test_calibration SOURCES test_calibration.c LIBS llmsim_calibration
            LABELS calibration unit)
# fitting, fitted profiles, the CPU benchmark grid and the Vidur import (its shared-data parts
# are skipped when ../shared/data/vidur is absent)
llmsim_test(test_calibration_fit SOURCES test_calibration_fit.c LIBS llmsim_calibration
            LABELS calibration unit TIMEOUT 300)
# calibrate, calibrate validate and profile list|show|import-vidur through the llmsim binary
llmsim_test(test_calibration_cli SOURCES test_calibration_cli.c LIBS llmsim_core
            LABELS calibration cli TIMEOUT 600)
if(TARGET llmsim)
  add_dependencies(test_calibration_cli llmsim)
endif()
# the Vidur import against hostile numbers (1e20, inf, nan, fractions) and an empty mlp.csv
llmsim_test(test_calibration_vidur SOURCES test_calibration_vidur.c LIBS llmsim_calibration
            LABELS calibration unit)
# the model description and its sizing: dtypes, parameters, KV, layouts, the config.json reader's
# families and refusals, the roofline's refusals
llmsim_test(test_models SOURCES test_models.c LIBS llmsim_calibration LABELS calibration unit)
# every config.json of ../shared/data/models against published parameter counts (skipped when
# the shared data is absent)
llmsim_test(test_models_data SOURCES test_models_data.c LIBS llmsim_calibration
            LABELS calibration validation)
