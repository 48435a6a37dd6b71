# Scenario files and workloads: loading, validation, overrides, generators, trace replay.
llmsim_test(test_scenarios
  SOURCES test_scenarios.c support/scenarios_resolver.c
  LIBS llmsim_scenarios)
llmsim_test(test_scenarios_workload
  SOURCES test_scenarios_workload.c support/scenarios_resolver.c
  LIBS llmsim_scenarios)
# replays the real traces under ../shared/data/traces in place; skipped (77) when absent
llmsim_test(test_scenarios_traces
  SOURCES test_scenarios_traces.c support/scenarios_resolver.c
  LIBS llmsim_scenarios
  CPU 1200)
# the loader's limits (depth, sizes) and the simulated horizon (int64 ns): defects found by fuzz
# and fault tests, each case a reproducer
llmsim_test(test_scenarios_limits
  SOURCES test_scenarios_limits.c support/scenarios_resolver.c
  LIBS llmsim_scenarios
  LABELS scenarios unit)
# whole-file length tables kept between runs (a sweep worker's scn_cache)
llmsim_test(test_scenarios_cache
  SOURCES test_scenarios_cache.c support/scenarios_resolver.c
  LIBS llmsim_scenarios
  LABELS scenarios unit)
