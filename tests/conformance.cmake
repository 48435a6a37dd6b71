# The conformance suite: every registered scheduling policy over the same workloads, with the
# invariants every policy must keep checked after every event in Debug builds.
llmsim_test(test_conformance
  SOURCES test_conformance.c
  LIBS llmsim_engine llmsim_calibration
  LABELS conformance
  TIMEOUT 300)
