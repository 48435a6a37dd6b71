/*
 * kv_hybrid.c: prefix caching for models with linear-attention (Mamba-like) layers, vLLM's
 * opt-in `mamba_cache_mode: align`. Without it such a model's prefix cache stays off (kv.c).
 *
 * MODEL: vLLM (vllm/platforms/interface.py, the hybrid block-size alignment; vllm/config/cache.py
 * CacheConfig.mamba_cache_mode; vllm/v1/core/single_type_kv_cache_manager.py MambaManager;
 * vllm/v1/core/sched/scheduler.py _mamba_block_aligned_split). All KV cache groups share one
 * page size: vLLM raises the attention block size to the smallest multiple of the kernel's
 * block alignment (16, FlashAttention and FlashInfer's MultipleOf(16)) whose page of one
 * full-attention layer holds one linear-attention layer's state, and pads the state page up to
 * it (Qwen3.5-397B-A17B at tensor_parallel 8: 521 tokens' worth of state, blocks of 528 tokens).
 * In align mode the linear-attention state is kept at block boundaries (mamba_block_size =
 * block_size) and a prefix hit must end at a boundary whose state is cached
 * (MambaManager.find_longest_cache_hit), so hits come in whole aligned blocks; the scheduler
 * cuts a prefill chunk at a block boundary so that its state can be cached.
 *
 * llmsim's approximation, stated: every block carries its boundary's state, one padded page per
 * linear-attention KV cache group beside its full-attention page(s) (vLLM's accounting in its
 * "all" mode: cdiv(tokens, block_size) state blocks per group). vLLM's align mode keeps a state
 * only where a scheduler step ended (and at the prompt's last whole block), so llmsim's hits are
 * an upper bound of align's and its cache holds a little fewer blocks.
 */
#include <string.h>

#include "engine_int.h"

/* MODEL: FlashAttention's and FlashInfer's get_supported_kernel_block_sizes: MultipleOf(16) */
#define KERNEL_BLOCK_ALIGN 16

int32_t eng_kv_hybrid_block_size(const eng_config *c)
{
    const eng_model *m = &c->model;
    int64_t full = m->layers - m->linear_layers - m->window_layers;
    if (m->linear_layers <= 0 || full <= 0)
        return 0;
    eng_layout l;
    eng_gpu_share g;
    eng_config_layout(c, &l);
    eng_model_gpu_share(m, eng_config_dtype(c), eng_config_kv_dtype(c), &l, &g);
    int64_t attn = g.kv_per_token / full, state = g.state_per_seq / m->linear_layers;
    if (attn <= 0 || state <= 0)
        return 0;
    int64_t unit = KERNEL_BLOCK_ALIGN * attn;
    return (int32_t)(KERNEL_BLOCK_ALIGN * ((state + unit - 1) / unit));
}

/* Raises one pool's block size (its own layout) to the aligned size. */
static void align_pool(const eng_config *c, eng_pool_config *pool)
{
    eng_config pc = *c;
    pc.pool = *pool;
    int32_t b = eng_kv_hybrid_block_size(&pc);
    if (pool->block_size < b)
        pool->block_size = b;
}

int eng_kv_hybrid_apply(eng_config *c, sim_err *err)
{
    if (c->mamba_cache_mode != ENG_MAMBA_ALIGN)
        return 0;
    if (c->model.linear_layers <= 0)
        return sim_errf(err,
                        "memory.mamba_cache_mode: align is for models with linear-attention "
                        "(Mamba) layers; %s has none (its prefix cache needs no opt-in)",
                        c->model.name);
    if (c->model.layers - c->model.linear_layers - c->model.window_layers <= 0)
        return sim_errf(err,
                        "memory.mamba_cache_mode: align: %s has no full-attention layer whose "
                        "blocks could align to its state",
                        c->model.name);
    if (strcmp(c->sched.name, "vllm") != 0)
        return sim_errf(err,
                        "memory.mamba_cache_mode: align is vLLM V1's option (scheduler vllm); "
                        "scheduler %s has no prefix caching for hybrid models",
                        c->sched.name);
    align_pool(c, &c->pool);
    for (int k = 0; c->pd.enabled && k < 2; k++)
        align_pool(c, &c->pd.pool[k]);
    for (int k = 0; k < c->groups.n; k++)
        align_pool(c, &c->groups.group[k]);
    return 0;
}

void eng_kv_hybrid_layout(const eng_config *c, eng_kv_plan *p)
{
    if (c->mamba_cache_mode != ENG_MAMBA_ALIGN || p->state_blocks <= 0)
        return;
    /* one padded state page per linear-attention group beside each block (see above) */
    int64_t per = 1 + (int64_t)p->state_blocks;
    p->block_bytes *= per;
    p->model_block_bytes *= per;
    p->state_blocks = 0;
}

int64_t eng_kv_align_chunk(const eng_replica *r, const eng_request *rq, int64_t start, int64_t n)
{
    if (r->pool->cfg.mamba_cache_mode != ENG_MAMBA_ALIGN || r->pool->cfg.model.linear_layers <= 0)
        return n;
    /* MODEL: vLLM Scheduler._mamba_block_aligned_split: while prefilling, a chunk ends at a
     * block boundary, or at the prompt's last whole block (its state then cached), or at the
     * prompt's end */
    int64_t bs = r->kv.block_size, end = rq->prefill_target;
    int64_t last = end - end % bs;
    if (start + n < last)
        return n / bs * bs;
    if (start < last && last < start + n)
        return last - start;
    return n;
}
