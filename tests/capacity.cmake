# Capacity search and recommendation: rejections as failures, the unloaded verdict, intervals
# and seeds, named and crossed --compare choices, the GPU cap.
llmsim_test(test_capacity SOURCES test_capacity.c LIBS llmsim_study LABELS e2e TIMEOUT 900)
llmsim_test(test_recommend SOURCES test_recommend.c LIBS llmsim_study LABELS e2e TIMEOUT 1200)
