# Fleets: GPU-hours, cost and energy in the summary, the catalog's price and power rows, the
# price: and power: settings.
llmsim_test(test_fleet SOURCES test_fleet.c LIBS llmsim_study LABELS e2e CPU 120)
# Autoscaling: a day against fixed fleets, cold starts, draining.
llmsim_test(test_autoscale SOURCES test_autoscale.c LIBS llmsim_study LABELS e2e CPU 160)
# Faults: crashes with and without retries, waiting for a replacement, slowdowns, refusals.
llmsim_test(test_faults SOURCES test_faults.c LIBS llmsim_study LABELS e2e CPU 120)
# Request classes and priority scheduling: vLLM's and SGLang's priority orders and preemption,
# shedding by class, per-class goodput, the classes' keys.
llmsim_test(test_prio SOURCES test_prio.c LIBS llmsim_study LABELS e2e CPU 60)
