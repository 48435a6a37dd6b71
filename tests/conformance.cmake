# The conformance suite: every registered scheduling policy over the same workloads, with the
# invariants every policy must keep checked after every 16th event in Debug builds, and after
# every event in the heavy run (label `heavy`, run by .ci/run after the suite).
llmsim_test(test_conformance
  SOURCES test_conformance.c
  LIBS llmsim_engine llmsim_calibration
  LABELS conformance
  CPU 1200)
llmsim_add_test(test_conformance_full CPU 4800 $<TARGET_FILE:test_conformance> --full)
set_tests_properties(test_conformance_full PROPERTIES LABELS "conformance;heavy")
