/*
 * sched_vllm_v0.c: vLLM V0's default scheduler (vllm/core/scheduler.py, v0.4-v0.6): paged KV,
 * prefill-prioritised iterations, preemption of the latest-arrived running request, and
 * multi-step scheduling (v0.6, --num-scheduler-steps).
 *
 * Queues: waiting (FCFS; preempted-by-recompute requests go back to its front), running (by
 * arrival: vLLM sorts it by its FCFS priority before preempting), swapped (by arrival). All
 * running requests that are not prefilling are in the engine's decode cohort.
 */
#include "engine.h"
#include "rqlist.h"

typedef struct vllm {
    eng_rq_list waiting, running, swapped;
    int64_t max_num_seqs, max_num_batched_tokens, watermark_blocks;
    int32_t steps; /* num_scheduler_steps */
    int swap;
    int64_t fit_most; /* the most tokens never_fits lets through; -2: not known (vllm_init) */
} vllm;

static const eng_param vllm_params[] = {
    ENG_PARAM_MAX_NUM_SEQS(vllm),
    {"max_num_batched_tokens", ENG_PARAM_INT, "0", 0, 1e9, NULL,
     "most tokens per iteration (0: max(max_model_len, 2048), vLLM's default)",
     ENG_PARAM_AT(vllm, max_num_batched_tokens)},
    ENG_PARAM_WATERMARK,
    ENG_PARAM_PREEMPTION(vllm),
    {"num_scheduler_steps", ENG_PARAM_INT, "1", 1, 1024, NULL,
     "decode steps run per scheduler call (vLLM 0.6 multi-step scheduling)",
     ENG_PARAM_AT(vllm, steps)},
    ENG_PARAM_END};

/* MODEL: vLLM v0 BlockSpaceManager.can_allocate: AllocStatus.NEVER when the prompt's blocks
 * (the tokens to prefill, not prompt + output) exceed the cache less the watermark */
static int never_fits_blocks(const vllm *v, const eng_replica *r, int64_t tokens)
{
    return eng_kv_blocks_for(r, tokens) > eng_kv_total(r) - v->watermark_blocks;
}

static int never_fits(const vllm *v, const eng_replica *r, int64_t tokens)
{
    /* the cache's size and the layout stay as vllm_init saw them (a restarted replica starts
     * its policy again): the blocks grow with the tokens, so a count is over fit_most exactly
     * when its blocks are over the cache less the watermark */
    if (v->fit_most >= -1) {
        SIM_ASSERT(NULL, (tokens > v->fit_most) == never_fits_blocks(v, r, tokens));
        return tokens > v->fit_most;
    }
    return never_fits_blocks(v, r, tokens);
}

static int vllm_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    vllm *v = st;
    if (v->max_num_batched_tokens == 0) {
        /* MODEL: vLLM v0 SchedulerConfig: max(max_model_len, 2048) without chunked prefill */
        int32_t len = eng_replica_max_len(r);
        v->max_num_batched_tokens = len > 2048 ? len : 2048;
    }
    v->watermark_blocks = eng_cfg_watermark_blocks(cfg, vllm_params, r);
    v->fit_most = eng_kv_tokens_within(r, eng_kv_total(r) - v->watermark_blocks);
    /* the boundary: fit_most fits (or is -1), one token more does not */
    SIM_ASSERT(NULL, v->fit_most < -1 || v->fit_most == INT64_MAX ||
                         ((v->fit_most < 0 || !never_fits_blocks(v, r, v->fit_most)) &&
                          never_fits_blocks(v, r, v->fit_most + 1)));
    return 0;
}

static void vllm_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm *v = st;
    /* MODEL: vLLM v0 ignores a prompt longer than min(max_model_len, max_num_batched_tokens),
     * and one that can never be allocated (see never_fits) */
    if (rq->prompt > v->max_num_batched_tokens) {
        eng_reject(r, rq, ENG_REJECT_BATCH);
        return;
    }
    if (never_fits(v, r, rq->prompt)) {
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
        /* a recompute whose prompt + generated tokens can never be allocated again is ignored,
         * as can_allocate's NEVER ignores it in vLLM v0 */
        if (never_fits(v, r, n)) {
            eng_list_pop_front(&v->waiting);
            eng_reject(r, rq, ENG_REJECT_KV);
            continue;
        }
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
        eng_list_insert_by_id(&v->running, rq);
        tokens += n;
    }
    return out->nchunks;
}

static void preempt(vllm *v, eng_replica *r, eng_request *rq)
{
    eng_list_remove(&v->running, rq);
    eng_preempt(r, rq, v->swap);
    if (v->swap)
        eng_list_insert_by_id(&v->swapped, rq);
    else
        eng_list_push_front(&v->waiting, rq);
}

static int vllm_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    vllm *v = st;
    /* MODEL: vLLM v0 _schedule_default: prefills first (only when nothing is swapped out);
     * a step that admits prefills runs no decodes, and runs as a single step even with
     * multi-step scheduling (vLLM PR #7000: prefills force a single step) */
    if (v->swapped.n == 0 && schedule_prefills(v, r, out) > 0)
        return out->nchunks;
    /* MODEL: vLLM v0 _schedule_running sorts the running queue by FCFS priority
     * (vllm/core/policy.py: now - arrival_time) and, when a request cannot append its slots,
     * preempts the lowest-priority one: the latest-arrived running request. With multi-step
     * scheduling the slots cover num_scheduler_steps tokens (num_lookahead_slots = steps - 1). */
    int preempted = 0;
    while (eng_decode_blocks_needed_steps(r, v->steps) > eng_kv_free(r) && v->running.tail) {
        preempt(v, r, v->running.tail);
        preempted = 1;
    }
    /* MODEL: vLLM v0 _schedule_swapped runs only when nothing was preempted this step; its
     * can_swap_in wants the blocks plus one per sequence above the watermark. With nothing
     * running the watermark protects no one, and a request swapped out holding the whole cache
     * less the watermark would wait forever (no prefill runs while one is swapped), so it then
     * comes back once its blocks fit: it never needs more than the cache less the watermark. */
    eng_request *rq;
    while (!preempted && (rq = v->swapped.head) && v->running.n < v->max_num_seqs &&
           (eng_kv_free(r) - rq->kv_blocks - 1 - eng_decode_blocks_needed_steps(r, v->steps) >=
                v->watermark_blocks ||
            (v->running.n == 0 && rq->kv_blocks <= eng_kv_free(r)))) {
        eng_list_pop_front(&v->swapped);
        eng_swap_in(r, rq);
        eng_list_insert_by_id(&v->running, rq);
    }
    if (eng_cohort_size(r) == 0)
        return 0;
    eng_batch_decode_all(r, out);
    /* MODEL: vLLM 0.6 multi-step scheduling: a decode batch runs num_scheduler_steps forward
     * passes per scheduler call; sequences that finish on the way keep their slots until the
     * last step (the batch is not rebuilt in between) */
    if (v->steps > 1 && eng_decode_blocks_needed_steps(r, v->steps) <= eng_kv_free(r))
        out->fixed_steps = v->steps;
    return eng_cohort_size(r);
}

static void vllm_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm *v = st;
    eng_list_remove(&v->running, rq);
}

/* A disaggregated decode instance takes a request like a prefill (eng_kv_seat_blocks) */
static int64_t vllm_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                             int64_t incoming, int64_t incoming_tokens)
{
    const vllm *v = st;
    return eng_kv_seat_blocks(r, rq, v->running.n + incoming, v->max_num_seqs, v->watermark_blocks);
}

static void vllm_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm *v = st;
    eng_list_insert_by_id(&v->running, rq);
}

/* Decode runs: the next step is the same decode batch while nothing waits to be admitted or
 * swapped in (or the first waiting request has no seat: only a finish frees one), without
 * multi-step scheduling (its lookahead slots are its own rule). */
static int64_t vllm_run_steps(const void *st, const eng_replica *r)
{
    const vllm *v = st;
    if (v->steps > 1 || v->swapped.n > 0)
        return 1;
    const eng_request *head = v->waiting.head;
    if (head && (v->running.n + 1 <= v->max_num_seqs || never_fits(v, r, head->prefill_target)))
        return 1;
    return INT64_MAX;
}

static int vllm_check(const void *st, const eng_replica *r)
{
    const vllm *v = st;
    if (eng_list_check(&v->waiting) || eng_list_check(&v->running) || eng_list_check(&v->swapped))
        return -1;
    for (const eng_request *rq = v->running.head; rq && rq->sched_next; rq = rq->sched_next)
        if (rq->id > rq->sched_next->id)
            return -1;
    return v->running.n <= v->max_num_seqs ? 0 : -1;
}

const eng_sched_ops eng_sched_vllm_v0 = {
    ENG_SCHED_OPS_BASE("vllm-v0", vllm, vllm),
    .init = vllm_init,
    .summary = "vLLM V0 (0.4-0.6): paged KV, prefill-only or decode-only iterations, watermark, "
               "preemption of the latest-arrived request (recompute or swap), multi-step",
    ENG_SCHED_OPS_DECODE(vllm),
    .runs_past_finishes = 1,
};
