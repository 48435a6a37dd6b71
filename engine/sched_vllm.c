/*
 * sched_vllm.c: vLLM v0's default scheduler: paged KV, prefill-prioritised iterations,
 * preemption of the newest running request.
 *
 * Queues: waiting (FCFS; preempted-by-recompute requests go back to its front), running
 * (admission order), swapped (swap preemption). All running requests that are not prefilling
 * are in the engine's decode cohort.
 */
#include "engine.h"
#include "rqlist.h"

typedef struct vllm {
    eng_rq_list waiting, running, swapped;
    int64_t max_num_seqs, max_num_batched_tokens, watermark_blocks;
    int swap;
} vllm;

static const eng_param vllm_params[] = {
    {"max_num_seqs", ENG_PARAM_INT, "256", 1, 1e6, NULL, "most requests running at once"},
    {"max_num_batched_tokens", ENG_PARAM_INT, "0", 0, 1e9, NULL,
     "most tokens per iteration (0: max(max_model_len, 2048), vLLM's default)"},
    {"watermark", ENG_PARAM_DOUBLE, "0.01", 0, 0.5, NULL,
     "fraction of KV blocks kept free when admitting"},
    {"preemption", ENG_PARAM_ENUM, "recompute", 0, 0, "recompute|swap",
     "what happens to a preempted request's KV"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

extern const eng_sched_ops eng_sched_vllm;

static int vllm_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    vllm *v = st;
    const eng_sched_ops *ops = &eng_sched_vllm;
    v->max_num_seqs = eng_cfg_int(cfg, ops, "max_num_seqs");
    v->max_num_batched_tokens = eng_cfg_int(cfg, ops, "max_num_batched_tokens");
    if (v->max_num_batched_tokens == 0) {
        /* MODEL: vLLM v0 SchedulerConfig: max(max_model_len, 2048) without chunked prefill */
        int32_t len = eng_replica_max_len(r);
        v->max_num_batched_tokens = len > 2048 ? len : 2048;
    }
    /* MODEL: vLLM v0 BlockSpaceManager: watermark_blocks = watermark x num_gpu_blocks */
    v->watermark_blocks = (int64_t)(eng_cfg_double(cfg, ops, "watermark") * eng_kv_total(r));
    v->swap = eng_cfg_str(cfg, ops, "preemption")[0] == 's';
    return 0;
}

static void vllm_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm *v = st;
    /* MODEL: vLLM v0 ignores a prompt longer than min(max_model_len, max_num_batched_tokens),
     * and one whose blocks exceed the cache less the watermark (AllocStatus.NEVER) */
    if (rq->prompt > v->max_num_batched_tokens) {
        eng_reject(r, rq, ENG_REJECT_BATCH);
        return;
    }
    if (eng_kv_blocks_for(r, (int64_t)rq->prompt + rq->output) >
        eng_kv_total(r) - v->watermark_blocks) {
        eng_reject(r, rq, ENG_REJECT_KV);
        return;
    }
    eng_list_push_back(&v->waiting, rq);
}

/* Prefill step: admit waiting requests in order while budget, seats and blocks allow. */
static int schedule_prefills(vllm *v, eng_replica *r, eng_batch *out)
{
    int64_t tokens = 0;
    eng_request *rq;
    while ((rq = v->waiting.head)) {
        int32_t n = rq->prefill_target;
        /* MODEL: budget checks of vLLM v0 _schedule_prefills; a recompute longer than the
         * budget still runs when it is alone, so a preempted request is never stranded */
        if (tokens + n > v->max_num_batched_tokens && out->nchunks > 0)
            break;
        if (v->running.n + 1 > v->max_num_seqs)
            break;
        /* MODEL: vLLM v0 can_allocate: LATER when free - needed < watermark */
        if (eng_kv_free(r) - eng_prefill_blocks_needed(r, rq, n) < v->watermark_blocks)
            break;
        eng_list_pop_front(&v->waiting);
        eng_batch_add_prefill(r, out, rq, n, n);
        eng_list_push_back(&v->running, rq);
        tokens += n;
    }
    return out->nchunks;
}

static void preempt(vllm *v, eng_replica *r, eng_request *rq)
{
    eng_list_remove(&v->running, rq);
    eng_preempt(r, rq, v->swap);
    if (v->swap)
        eng_list_push_back(&v->swapped, rq);
    else
        eng_list_push_front(&v->waiting, rq);
}

static int vllm_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    vllm *v = st;
    /* MODEL: vLLM v0 _schedule_default: prefills first (only when nothing is swapped out);
     * a step that admits prefills runs no decodes */
    if (v->swapped.n == 0 && schedule_prefills(v, r, out) > 0)
        return out->nchunks;
    /* MODEL: vLLM v0 _schedule_running: when a running request cannot append a slot, the
     * lowest-priority (most recently admitted) running request is preempted */
    int preempted = 0;
    while (eng_decode_blocks_needed(r) > eng_kv_free(r) && v->running.tail) {
        preempt(v, r, v->running.tail);
        preempted = 1;
    }
    /* MODEL: vLLM v0 _schedule_swapped runs only when nothing was preempted this step; its
     * can_swap_in wants the blocks plus one per sequence above the watermark. With nothing
     * running the watermark protects no one, and a request swapped out holding the whole cache
     * less the watermark would wait forever (no prefill runs while one is swapped), so it then
     * comes back once its blocks fit: it never needs more than the cache less the watermark. */
    eng_request *rq;
    while (
        !preempted && (rq = v->swapped.head) && v->running.n < v->max_num_seqs &&
        (eng_kv_free(r) - rq->kv_blocks - 1 - eng_decode_blocks_needed(r) >= v->watermark_blocks ||
         (v->running.n == 0 && rq->kv_blocks <= eng_kv_free(r)))) {
        eng_list_pop_front(&v->swapped);
        eng_swap_in(r, rq);
        eng_list_push_back(&v->running, rq);
    }
    if (eng_cohort_size(r) == 0)
        return 0;
    eng_batch_decode_all(r, out);
    return eng_cohort_size(r);
}

static void vllm_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm *v = st;
    eng_list_remove(&v->running, rq);
}

static int vllm_check(const void *st, const eng_replica *r)
{
    const vllm *v = st;
    if (eng_list_check(&v->waiting) || eng_list_check(&v->running) || eng_list_check(&v->swapped))
        return -1;
    return v->running.n <= v->max_num_seqs ? 0 : -1;
}

const eng_sched_ops eng_sched_vllm = {
    .name = "vllm",
    .abi = ENG_SCHED_ABI,
    .state_size = sizeof(vllm),
    .params = vllm_params,
    .summary = "vLLM v0: paged KV, prefill-only or decode-only iterations, watermark, "
               "preemption of the newest request (recompute or swap)",
    .init = vllm_init,
    .on_arrival = vllm_on_arrival,
    .next_batch = vllm_next_batch,
    .on_finish = vllm_on_finish,
    .check = vllm_check,
};
