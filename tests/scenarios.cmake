# Scenario files and workloads: loading, validation, overrides, generators, trace replay.
llmsim_test(test_scenarios
  SOURCES test_scenarios.c test_scenarios_resolver.c
  LIBS llmsim_scenarios)
