# sim/: the DES core. Unit tests of the event order, cancellation and run loop, the random
# streams and the statistics helpers, and the queueing-theory validation (M/M/1, M/D/1).
llmsim_test(test_sim_evq SOURCES test_sim_evq.c LIBS llmsim_core LABELS sim unit TIMEOUT 120)
llmsim_test(test_sim_rng SOURCES test_sim_rng.c LIBS llmsim_core LABELS sim unit TIMEOUT 60)
llmsim_test(test_sim_stats SOURCES test_sim_stats.c LIBS llmsim_core LABELS sim unit TIMEOUT 60)
llmsim_test(test_sim_queue SOURCES test_sim_queue.c LIBS llmsim_core LABELS sim validation
            TIMEOUT 300)
