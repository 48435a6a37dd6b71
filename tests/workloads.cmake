# Workloads where token identity matters (shared prefixes, sessions, closed-loop ramps) and the
# engine presets, end to end through study/.
llmsim_test(test_workloads SOURCES test_workloads.c LIBS llmsim_study LABELS e2e CPU 1200)
# The Mooncake traces' ideal prefix-cache bound and replays against it; reads ../shared/data in
# place, skipped (77) when absent.
llmsim_test(test_prefix_traces SOURCES test_prefix_traces.c LIBS llmsim_study CPU 2400)
# KV offload tiers behind the GPU cache (kv_offload): hits, bandwidth, capacity, sharing, refusals.
llmsim_test(test_offload SOURCES test_offload.c LIBS llmsim_study LABELS e2e CPU 1200)
# Pipeline parallelism (pipeline_parallel): Llama-3.1-405B as TP8 PP2, batches in flight.
llmsim_test(test_pipeline SOURCES test_pipeline.c LIBS llmsim_study LABELS e2e CPU 1200)
# Mixed GPU pools (replicas: [{gpu, count, ...}]): throughput between its parts, routing by capacity.
llmsim_test(test_mixed SOURCES test_mixed.c LIBS llmsim_study LABELS e2e CPU 1200)
llmsim_test(test_mixed_pd SOURCES test_mixed_pd.c LIBS llmsim_study LABELS e2e CPU 1200)
