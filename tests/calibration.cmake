# calibration/: catalogs, the config.json reader and the roofline predictor.
llmsim_test(test_calibration SOURCES test_calibration.c LIBS llmsim_calibration
            LABELS calibration unit)
