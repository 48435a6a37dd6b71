/*
 * sched_trtllm.c: TensorRT-LLM's in-flight batching (the C++ batch manager,
 * cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp and microBatchScheduler.cpp,
 * TensorRT-LLM 0.17-0.19): each step the capacity scheduler picks the requests that may run
 * (GUARANTEED_NO_EVICT: a new request starts only if the blocks it needs to completion are free
 * besides what the running ones still need; MAX_UTILIZATION: only the next step's blocks,
 * pausing the latest-started requests when they run out), then the micro-batch scheduler fills
 * max_num_tokens: generation requests one token each, then contexts, whole or (with chunked
 * context) in chunks of whole blocks. KV block reuse is the engine's prefix cache, filled once a
 * context has run.
 *
 * Queues: waiting (arrival order, as TensorRT-LLM's active request list; paused requests return
 * to their place), started (by arrival: contexts under way and generation requests), ctx (the
 * started requests still in their context phase, by arrival).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rqlist.h"

typedef struct trtllm {
    eng_rq_list waiting, started;
    eng_rq_array ctx; /* started, still in context (sched_flag) */
    int64_t max_batch_size, max_num_tokens;
    int no_evict, chunked, overlap;
    int64_t retiring; /* requests finished in the step that just ended (overlap scheduler) */
    int64_t held;     /* of them, the seats held while the current step was formed */
} trtllm;

static const eng_param trtllm_params[] = {
    {"capacity_scheduler_policy", ENG_PARAM_ENUM, "guaranteed_no_evict", 0, 0,
     "guaranteed_no_evict|max_utilization",
     "reserve blocks to completion, or only for the next step (pausing when short)",
     ENG_PARAM_NOWHERE},
    {"max_batch_size", ENG_PARAM_INT, "2048", 1, 1e6, NULL, "most requests in a step",
     ENG_PARAM_AT(trtllm, max_batch_size)},
    {"max_num_tokens", ENG_PARAM_INT, "8192", 1, 1e9, NULL,
     "most tokens in a step: context tokens plus one per generation request",
     ENG_PARAM_AT(trtllm, max_num_tokens)},
    {"enable_chunked_context", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "split contexts into chunks (of whole KV blocks) that fill the step's token budget",
     ENG_PARAM_AT(trtllm, chunked)},
    {"enable_block_reuse", ENG_PARAM_BOOL, "true", 0, 0, NULL, "reuse cached KV blocks of prefixes",
     ENG_PARAM_NOWHERE},
    {"overlap_scheduler", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "the PyTorch backend's overlap scheduler: step n+1 is formed before step n's results are "
     "read, so a request that finished in step n holds its seat through step n+1",
     ENG_PARAM_AT(trtllm, overlap)},
    ENG_PARAM_END};

static int trtllm_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    trtllm *t = st;
    /* MODEL: TensorRT-LLM executor defaults (CapacitySchedulerPolicy GUARANTEED_NO_EVICT;
     * BuildConfig max_batch_size 2048, max_num_tokens 8192; chunked context off; KvCacheConfig
     * enable_block_reuse on) */
    t->no_evict =
        strcmp(eng_cfg_str(cfg, trtllm_params, "capacity_scheduler_policy"), "max_utilization");
    if (eng_cfg_int(cfg, trtllm_params, "enable_block_reuse"))
        eng_prefix_cache_enable(r, ENG_PC_AT_COMPLETION);
    return 0;
}

static void trtllm_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    trtllm *t = st;
    /* MODEL: without chunked context a context must fit max_num_tokens in one step
     * (microBatchScheduler: "The number of context tokens exceeds the limit value") */
    if (!t->chunked && rq->prompt > t->max_num_tokens) {
        eng_reject(r, rq, ENG_REJECT_BATCH);
        return;
    }
    eng_list_push_back(&t->waiting, rq);
}

/* MODEL: MaxUtilizationScheduler: when a started request cannot get its next step's blocks, the
 * last started request of the active list (the latest-arrived) is paused: its blocks are freed
 * and it returns to the context phase later, with its generated tokens (LlmRequest::pause) */
static void pause_last(trtllm *t, eng_replica *r)
{
    eng_request *rq = t->started.tail;
    eng_array_remove(&t->ctx, rq);
    eng_list_remove(&t->started, rq);
    eng_preempt(r, rq, 0);
    eng_list_insert_by_id(&t->waiting, rq);
}

/* Context tokens for rq this step with `left` of the token budget: 0 when none fit. */
static int64_t context_chunk(const trtllm *t, const eng_replica *r, const eng_request *rq,
                             int64_t hit, int64_t left)
{
    int64_t rem = rq->prefill_target - (hit > rq->prefilled ? hit : rq->prefilled);
    if (!t->chunked)
        return rem <= left ? rem : 0;
    /* MODEL: setCtxRequestsChunkSize<FIRST_COME_FIRST_SERVED>: a chunk shorter than the rest of
     * the context is cut to a multiple of the chunk unit (tokens per block) */
    if (rem <= left)
        return rem;
    int64_t unit = eng_kv_block_size(r);
    return left / unit * unit;
}

/* MODEL: TensorRT-LLM's overlap executor loop (tensorrt_llm/_torch/pyexecutor/py_executor.py,
 * _executor_loop_overlap) fetches and schedules step n+1 before it processes step n's results
 * (_process_previous_batch, whose _handle_responses tears finished requests down): a request
 * that emitted its last token in step n is still active, and still counted against
 * max_num_active_requests = max_batch_size, while step n+1 is formed ("retiring", as TensorRT-LLM
 * PR #18457 calls it; PR #16278: "the overlap executor prepares the next iteration before
 * finished requests from the previous iteration release their sequence slots"). Its seat frees
 * for the step after. The seats of the requests that finished in the step just ended; reading
 * them clears them. */
static int64_t retiring_seats(trtllm *t, const eng_replica *r)
{
    /* with nothing else in flight the extra step is one lone wasted token: the seat is taken
     * as free at once rather than stalling an idle replica (a step of one sequence early) */
    int64_t n = t->overlap && (eng_cohort_size(r) > 0 || t->ctx.n > 0) ? t->retiring : 0;
    t->retiring = 0;
    return n;
}

static int trtllm_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    trtllm *t = st;
    /* generation requests run first, one token each (the capacity scheduler keeps every
     * in-progress generation request; with MAX_UTILIZATION their next blocks must fit) */
    if (!t->no_evict)
        while (eng_decode_blocks_needed(r) > eng_kv_free(r) && t->started.tail)
            pause_last(t, r);
    int64_t left = t->max_num_tokens - eng_cohort_size(r);
    t->held = retiring_seats(t, r);
    int64_t seats = t->max_batch_size - eng_cohort_size(r) - t->held;
    int64_t decode_need = eng_decode_blocks_needed(r);
    /* contexts under way continue, in arrival order */
    eng_array_drop_prefilled(&t->ctx);
    for (int32_t i = 0; i < t->ctx.n && left > 0 && seats > 0; i++) {
        eng_request *rq = t->ctx.rq[i];
        int64_t n = context_chunk(t, r, rq, 0, left);
        if (n <= 0)
            break;
        while (!t->no_evict &&
               eng_prefill_blocks_needed(r, rq, (int32_t)n) + decode_need > eng_kv_free(r) &&
               rq->status == ENG_RQ_PREFILL) {
            pause_last(t, r);
            decode_need = eng_decode_blocks_needed(r);
        }
        if (rq->status != ENG_RQ_PREFILL)
            break;
        eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
        left -= n;
        seats--;
    }
    /* new contexts in arrival order, while they fit; the first that does not stops the step */
    eng_request *rq;
    while (left > 0 && seats > 0 && (rq = t->waiting.head)) {
        eng_kv_onboard(r, rq); /* its host-held blocks onboarded (kv_offload) */
        int32_t hit = eng_prefix_match(r, rq, NULL);
        int64_t n = context_chunk(t, r, rq, t->chunked ? hit : 0, left);
        if (!t->chunked && n > 0) /* the whole context, what the cache holds not computed */
            n = rq->prefill_target - hit;
        if (n <= 0)
            break;
        int64_t total = (int64_t)rq->prefill_target + (rq->output - rq->generated);
        if (t->no_evict) {
            /* MODEL: GuaranteedNoEvictScheduler: enoughAvailableBlocks: the blocks to
             * completion (context + remaining output; reused blocks not credited in 0.17-0.19)
             * must be free besides the running requests' own */
            if (eng_kv_blocks_for(r, total) + decode_need > eng_kv_free(r))
                break;
            eng_list_pop_front(&t->waiting);
            eng_prefix_attach(r, rq, hit);
            eng_kv_reserve(r, rq, total);
            eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
        } else {
            /* MODEL: MaxUtilizationScheduler: only this step's blocks; a new request pauses no
             * one (the started requests all arrived before it) */
            if (eng_prefill_hit_blocks_needed(r, rq, hit, (int32_t)n) + decode_need >
                eng_kv_free(r))
                break;
            eng_list_pop_front(&t->waiting);
            eng_batch_add_prefill_hit(r, out, rq, hit, (int32_t)n);
        }
        eng_list_insert_by_id(&t->started, rq);
        if (rq->prefilled + n < rq->prefill_target)
            eng_array_insert_by_id(&t->ctx, rq);
        left -= n;
        seats--;
    }
    return eng_batch_finish(r, out);
}

static void trtllm_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    trtllm *t = st;
    t->retiring += rq->status == ENG_RQ_FINISHED;
    eng_array_remove(&t->ctx, rq);
    eng_list_remove(&t->started, rq);
}

/* MODEL: TensorRT-LLM's generation server schedules a disaggregated generation request with
 * the same capacity scheduler: GUARANTEED_NO_EVICT reserves its blocks to completion (the
 * received context + its remaining output), MAX_UTILIZATION the context's; max_batch_size seats */
static int64_t trtllm_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                               int64_t incoming, int64_t incoming_tokens)
{
    const trtllm *t = st;
    if (t->started.n + incoming >= t->max_batch_size)
        return -1;
    return eng_kv_blocks_for(r, t->no_evict ? (int64_t)rq->prompt + rq->pd_output : rq->prompt);
}

static void trtllm_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    trtllm *t = st;
    if (t->no_evict)
        eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output); /* held already: marks it */
    eng_list_insert_by_id(&t->started, rq);
}

/* Decode runs: the next step is the same decode batch while no context is under way and no new
 * one could start: none waits, no token or seat is left, or (GUARANTEED_NO_EVICT) every request
 * holds its blocks to completion, so nothing the first waiting request's admission reads moves
 * before a finish. Seats held by retiring requests (overlap scheduler) free at the next step:
 * with requests waiting, that step is formed anew. */
static int64_t trtllm_run_steps(const void *st, const eng_replica *r)
{
    const trtllm *t = st;
    if (t->ctx.n > 0 || (t->held > 0 && t->waiting.n > 0))
        return 1;
    if (t->waiting.n == 0 || t->no_evict || t->max_num_tokens - eng_cohort_size(r) <= 0 ||
        t->max_batch_size - eng_cohort_size(r) <= 0)
        return INT64_MAX;
    return 1;
}

static void trtllm_fini(void *st)
{
    trtllm *t = st;
    free(t->ctx.rq);
}

static int trtllm_check(const void *st, const eng_replica *r)
{
    const trtllm *t = st;
    return eng_list_check(&t->waiting) || eng_list_check(&t->started) ? -1 : 0;
}

const eng_sched_ops eng_sched_trtllm = {
    ENG_SCHED_OPS_BASE("trtllm", trtllm, trtllm),
    .init = trtllm_init,
    .summary = "TensorRT-LLM (0.17-0.19) in-flight batching: GUARANTEED_NO_EVICT or "
               "MAX_UTILIZATION capacity, max_num_tokens per step, optional chunked context, "
               "KV block reuse",
    .fini = trtllm_fini,
    ENG_SCHED_OPS_DECODE(trtllm),
};
