# calibration/: catalogs, the config.json reader and the roofline predictor.
llmsim_test(test_calibration SOURCES test_calibration.c LIBS llmsim_calibration
            LABELS calibration unit)
# fitting, fitted profiles, the CPU benchmark grid and the Vidur import (its shared-data parts
# are skipped when ../shared/data/vidur is absent)
llmsim_test(test_calibration_fit SOURCES test_calibration_fit.c LIBS llmsim_calibration
            LABELS calibration unit CPU 1200)
# calibrate, calibrate validate and profile list|show|import-vidur through the llmsim binary
llmsim_test(test_calibration_cli SOURCES test_calibration_cli.c LIBS llmsim_core
            LABELS calibration cli CPU 2400)
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
# the roofline on today's models: capped sums, MoE (touched experts, expert parallelism, skew,
# all-to-all), MLA, DeepSeek sparse attention, gated DeltaNet, windows, per-operator points
llmsim_test(test_cost SOURCES test_cost.c LIBS llmsim_calibration LABELS calibration unit)
# expert placement: the imbalance factor's properties, the step time against the skew, refusals
llmsim_test(test_placement SOURCES test_placement.c LIBS llmsim_study LABELS calibration unit)
# every config.json of ../shared/data/models through the chunked scheduler (skipped when the
# shared data is absent)
llmsim_test(test_cost_models SOURCES test_cost_models.c LIBS llmsim_store
            LABELS calibration e2e validation CPU 1200)
if(TARGET llmsim)
  add_dependencies(test_cost_models llmsim)
endif()
# the roofline per operator against Vidur's A100 tables (development data; skipped when absent)
llmsim_test(test_fidelity_ops SOURCES test_fidelity_ops.c LIBS llmsim_calibration
            LABELS calibration validation CPU 1200)
# end to end against the measured H100 serving rows: `llmsim validate aic-silicon-h100`
# (tests/validate.cmake runs the shipped set)
