llmsim_test(test_engine SOURCES test_engine.c LIBS llmsim_engine)
llmsim_test(test_engine_router SOURCES test_engine_router.c LIBS llmsim_engine)
# The engines' rules (vllm V1, vllm-v0's fixes, sglang, trtllm, tgi's defaults) and the prefix
# cache's, one test per rule.
llmsim_test(test_engines SOURCES test_engines.c LIBS llmsim_engine)
# Decode runs change nothing: every policy with one event per step and with its runs.
llmsim_test(test_runs SOURCES test_runs.c LIBS llmsim_study TIMEOUT 900)
