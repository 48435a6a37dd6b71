# Fleets: GPU-hours, cost and energy in the summary, the catalog's price and power rows, the
# price: and power: settings.
llmsim_test(test_fleet SOURCES test_fleet.c LIBS llmsim_study LABELS e2e CPU 120)
# Autoscaling: a day against fixed fleets, cold starts, draining.
llmsim_test(test_autoscale SOURCES test_autoscale.c LIBS llmsim_study LABELS e2e CPU 160)
# Autoscaled prefill and decode pools (Dynamo's planner): each pool on its own metric, one
# replica per adjustment, draining, the GPU budget, determinism, refusals.
llmsim_test(test_pd_autoscale SOURCES test_pd_autoscale.c LIBS llmsim_study LABELS e2e CPU 200)
# Faults: crashes with and without retries, waiting for a replacement, slowdowns, refusals.
llmsim_test(test_faults SOURCES test_faults.c LIBS llmsim_study LABELS e2e CPU 120)
# Request classes and priority scheduling: vLLM's and SGLang's priority orders and preemption,
# shedding by class, per-class goodput, the classes' keys.
llmsim_test(test_prio SOURCES test_prio.c LIBS llmsim_study LABELS e2e CPU 60)
# The fleet timeline an autoscaled run stores, and llmsim plot fleet (the shipped diurnal day's
# first 6,000 requests).
llmsim_test(test_fleet_plot SOURCES test_fleet_plot.c LIBS llmsim_store LABELS e2e CPU 600)
add_dependencies(test_fleet_plot llmsim)
