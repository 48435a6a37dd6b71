# Today's layer mixes in the engine: sliding windows, chunked local attention, DeepSeek sparse
# attention and linear-attention state in the KV accounting and the capped attention sums.
llmsim_test(test_hybrid SOURCES test_hybrid.c LIBS llmsim_engine llmsim_calibration)
# Speculative decoding in the engine: acceptance draws, verification and drafter costs, the
# lookahead's KV, ITL of multi-token steps, the batch-size rule.
llmsim_test(test_spec SOURCES test_spec.c LIBS llmsim_engine)
# Speculative decoding as scenarios say it: keys, the measured acceptance curves (read in place
# from ../shared/data/speculative, skipped when absent), drafters, and runs on the roofline.
llmsim_test(test_spec_scn SOURCES test_spec_scn.c LIBS llmsim_study LABELS e2e CPU 2400)
# memory.mamba_cache_mode align: vLLM's opt-in prefix caching for hybrid models (aligned blocks,
# a state per cached block, aligned chunks), on Qwen3.5's config from ../shared/data.
llmsim_test(test_mamba_align SOURCES test_mamba_align.c LIBS llmsim_study LABELS e2e CPU 2400)
