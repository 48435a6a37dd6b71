# The classic batching experiments, from the shipped scenarios/exp*.yaml, with the roofline
# predictor; each test prints the figures it asserts on. Reads the ShareGPT length table under
# ../shared/data in place when present (lognormal lengths otherwise).
llmsim_test(test_experiments
  SOURCES test_experiments.c
  LIBS llmsim_study
  LABELS experiments
  CPU 1200)
