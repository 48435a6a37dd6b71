llmsim_test(test_engine SOURCES test_engine.c LIBS llmsim_engine)
llmsim_test(test_engine_router SOURCES test_engine_router.c LIBS llmsim_engine)
# The engines' rules (vllm V1, vllm-v0's fixes, sglang, trtllm, tgi's defaults) and the prefix
# cache's, one test per rule.
llmsim_test(test_engines SOURCES test_engines.c LIBS llmsim_engine)
# Decode runs change nothing: every policy with one event per step and with its runs.
llmsim_test(test_runs SOURCES test_runs.c LIBS llmsim_study TIMEOUT 900)
# The cache-aware routers on shipped scenarios: no herding on sessions, the weighted router on a
# long trace (an index that never empties would spin past its CPU budget), each router on
# scenarios/routers.yaml.
llmsim_test(test_router_scn SOURCES test_router_scn.c LIBS llmsim_study LABELS e2e CPU 120)
