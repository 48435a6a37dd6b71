# sim/: the DES core. Unit tests of the event order, cancellation and run loop, the random
# streams and the statistics helpers, and the queueing-theory validation (M/M/1, M/D/1).
llmsim_test(test_sim_evq SOURCES test_sim_evq.c LIBS llmsim_core LABELS sim unit CPU 480)
llmsim_test(test_sim_rng SOURCES test_sim_rng.c LIBS llmsim_core LABELS sim unit CPU 240)
llmsim_test(test_sim_stats SOURCES test_sim_stats.c LIBS llmsim_core LABELS sim unit CPU 240)
llmsim_test(test_sim_queue SOURCES test_sim_queue.c LIBS llmsim_core LABELS sim validation
            CPU 1200)
# the test runner: hang detection by CPU-time progress, no wall-clock limit on any test
llmsim_add_test(test_watchdog CPU 120 sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/watchdog.sh
                $<TARGET_FILE:llmsim_watchdog> ${CMAKE_BINARY_DIR})
set_tests_properties(test_watchdog PROPERTIES LABELS "unit")
# the heavy property run: the full run lengths (label `heavy`, run by .ci/run after the suite;
# scripts/test.sh leaves it out)
llmsim_add_test(test_sim_queue_full CPU 2400 $<TARGET_FILE:test_sim_queue> --full)
set_tests_properties(test_sim_queue_full PROPERTIES LABELS "sim;validation;heavy")
