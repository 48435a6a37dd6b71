# Fleets: GPU-hours, cost and energy in the summary, the catalog's price and power rows, the
# price: and power: settings.
llmsim_test(test_fleet SOURCES test_fleet.c LIBS llmsim_study LABELS e2e CPU 120)
# Autoscaling: a day against fixed fleets, cold starts, draining.
llmsim_test(test_autoscale SOURCES test_autoscale.c LIBS llmsim_study LABELS e2e CPU 160)
# The fleet timeline an autoscaled run stores, and llmsim plot fleet (the shipped diurnal day's
# first 6,000 requests).
llmsim_test(test_fleet_plot SOURCES test_fleet_plot.c LIBS llmsim_store LABELS e2e CPU 600)
add_dependencies(test_fleet_plot llmsim)
