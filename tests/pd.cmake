# Disaggregated prefill/decode end to end: the link (transfer time, sharing per port), the
# decode pool's backpressure, heterogeneous pools, the two transfer disciplines, every policy
# in either pool, the loader, the prefill:decode capacity search and the shipped scenarios.
llmsim_test(test_pd SOURCES test_pd.c LIBS llmsim_study LABELS e2e CPU 3600)
