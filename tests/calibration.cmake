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
# the model description and its sizing: dtypes, parameters, KV, layouts, the config.json reader's
# families and refusals, the roofline's refusals
llmsim_test(test_models SOURCES test_models.c LIBS llmsim_calibration LABELS calibration unit)
# every config.json of ../shared/data/models against published parameter counts (skipped when
# the shared data is absent)
llmsim_test(test_models_data SOURCES test_models_data.c LIBS llmsim_calibration
            LABELS calibration validation)
# the roofline on today's models: capped sums, MoE (touched experts, expert parallelism, skew,
# all-to-all), MLA, DeepSeek sparse attention, gated DeltaNet, windows, per-operator points
llmsim_test(test_cost SOURCES test_cost.c LIBS llmsim_calibration LABELS calibration unit)
# every config.json of ../shared/data/models through the chunked scheduler (skipped when the
# shared data is absent)
llmsim_test(test_cost_models SOURCES test_cost_models.c LIBS llmsim_store
            LABELS calibration e2e validation TIMEOUT 300)
if(TARGET llmsim)
  add_dependencies(test_cost_models llmsim)
endif()
# the roofline per operator against Vidur's A100 tables (development data; skipped when absent)
llmsim_test(test_fidelity_ops SOURCES test_fidelity_ops.c LIBS llmsim_calibration
            LABELS calibration validation TIMEOUT 300)
# end-to-end against the measured H100 serving rows (development data): TPOT median |error| at
# most 10% (issue 13); skipped when the data or python3 is absent
find_program(LLMSIM_PYTHON3 python3)
if(LLMSIM_PYTHON3 AND TARGET llmsim)
  add_test(NAME fidelity_aic_h100
           COMMAND ${LLMSIM_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/fidelity/aic_h100.py
                   --llmsim $<TARGET_FILE:llmsim> --lockstep --jobs 2 --check-tpot 10
                   --data ${PROJECT_SOURCE_DIR}/../shared/data/validation/aic-silicon-h100.csv)
  set_tests_properties(fidelity_aic_h100 PROPERTIES LABELS "calibration;validation;e2e"
                       TIMEOUT 900 SKIP_RETURN_CODE 77)
endif()
