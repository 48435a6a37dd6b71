# Fixed-seed summaries of the shipped scenarios (every scheduler, both preemption modes, every
# router, TP, async CPU, closed loop, every engine preset, prefill/decode pools, speculative
# decoding), compared exactly with tests/golden/*.txt. Regenerate after
# an intended change: LLMSIM_GOLDEN_UPDATE=1 build-debug/tests/test_golden
llmsim_test(test_golden SOURCES test_golden.c LIBS llmsim_study LABELS golden CPU 2400)
