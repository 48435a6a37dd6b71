/*
 * sched_vllm.c: vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, vLLM 0.10-0.11, the
 * default engine since 2025): one token budget per step shared by the running requests
 * (decodes and unfinished prefill chunks) and then the waiting ones, chunked prefill always on,
 * prefix caching on by default, recompute preemption of the running list's tail.
 *
 * Queues: waiting (FCFS; preempted requests go back to its front), running (in the order they
 * were scheduled, as vLLM's self.running list), and pf: the running requests still prefilling,
 * in running order. With scheduling_policy priority (`--scheduling-policy priority`) the
 * waiting queue is a heap ordered by (priority, arrival) and a second heap over the running
 * requests gives the one preempted first, the largest (priority, arrival). Every running request
 * that is not prefilling is in the engine's decode cohort; V1 runs all of them each step (the
 * budget is at least max_num_seqs, and a request only starts a partial prefill when the budget ends
 * with it, so decodes come first).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rqheap.h"
#include "rqlist.h"

typedef struct vllm1 {
    eng_rq_list waiting, running;
    eng_rq_array pf; /* running requests still prefilling, running order (sched_flag) */
    int64_t max_num_seqs, max_num_batched_tokens, long_prefill_threshold;
    int prefix_caching;
    int preempted; /* the last step formed preempted a request */
    /* scheduling_policy priority: waiting and running as heaps (rqheap.h), the requests a step
     * skipped while their KV loads, and the stamp of the step being formed (sched_key of a
     * running request whose prefill chunk it holds) */
    int prio;
    eng_rq_heap wheap, rheap;
    eng_request **skip;
    int32_t nskip, capskip;
    int64_t stamp;
} vllm1;

static const eng_param vllm1_params[] = {
    {"max_num_seqs", ENG_PARAM_INT, "0", 0, 1e6, NULL,
     "most requests running at once (0: vLLM's default for the GPU and entry point)",
     ENG_PARAM_AT(vllm1, max_num_seqs)},
    {"max_num_batched_tokens", ENG_PARAM_INT, "0", 0, 1e9, NULL,
     "token budget per step, decodes and prefill chunks (0: vLLM's default for the GPU and "
     "entry point)",
     ENG_PARAM_AT(vllm1, max_num_batched_tokens)},
    {"entry_point", ENG_PARAM_ENUM, "server", 0, 0, "server|offline",
     "which defaults vLLM picks: `vllm serve` (OPENAI_API_SERVER) or the LLM class (LLM_CLASS)",
     ENG_PARAM_NOWHERE},
    {"enable_prefix_caching", ENG_PARAM_BOOL, "true", 0, 0, NULL,
     "automatic prefix caching (on by default in V1)", ENG_PARAM_AT(vllm1, prefix_caching)},
    {"long_prefill_token_threshold", ENG_PARAM_INT, "0", 0, 1e9, NULL,
     "most prefill tokens one request gets per step (0: no limit)",
     ENG_PARAM_AT(vllm1, long_prefill_threshold)},
    {"async_scheduling", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "schedule step n+1 while step n runs (sets cpu_overhead.async)", ENG_PARAM_NOWHERE},
    {"scheduling_policy", ENG_PARAM_ENUM, "fcfs", 0, 0, "fcfs|priority",
     "waiting order: arrival, or (priority, arrival) with the lowest-priority running request "
     "preempted first (--scheduling-policy; priorities from workload.classes)",
     ENG_PARAM_AT(vllm1, prio)},
    ENG_PARAM_END};

/* MODEL: vLLM engine/arg_utils.py EngineArgs.get_batch_defaults (0.11): GPUs with at least
 * 70 GiB that are not A100s (H100, H200, MI300X) get 8192 batched tokens for `vllm serve` and
 * 16384 for the LLM class, 1024 sequences; others 2048 / 8192 tokens and 256 sequences. */
static void batch_defaults(const eng_replica *r, int offline, int64_t *tokens, int64_t *seqs)
{
    const eng_gpu *g = &eng_replica_config(r)->gpu;
    int big = (double)g->mem_bytes >= 70.0 * (double)(INT64_C(1) << 30) && !strstr(g->name, "a100");
    if (big) {
        *tokens = offline ? 16384 : 8192;
        *seqs = 1024;
    } else {
        *tokens = offline ? 8192 : 2048;
        *seqs = 256;
    }
}

static int vllm1_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    vllm1 *v = st;
    int64_t tokens, seqs;
    batch_defaults(r, strcmp(eng_cfg_str(cfg, vllm1_params, "entry_point"), "offline") == 0,
                   &tokens, &seqs);
    if (v->max_num_seqs == 0)
        v->max_num_seqs = seqs;
    if (v->max_num_batched_tokens == 0)
        v->max_num_batched_tokens = tokens;
    /* MODEL: vLLM v1/core/sched/request_queue.py PriorityRequestQueue: a heap of requests
     * ordered by (priority, arrival_time), smaller values first */
    v->wheap = (eng_rq_heap){.sign = 1};
    v->rheap = (eng_rq_heap){.sign = 1, .max = 1};
    /* MODEL: vLLM SchedulerConfig refuses max_num_batched_tokens < max_num_seqs */
    if (v->max_num_batched_tokens < v->max_num_seqs)
        return -1;
    /* MODEL: vLLM V1 caches a block as soon as its tokens are scheduled (allocate_slots ->
     * cache_blocks) */
    if (v->prefix_caching)
        eng_prefix_cache_enable(r, ENG_PC_AT_SCHEDULE);
    return 0;
}

static void vllm1_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    vllm1 *v = st;
    if (v->prio)
        eng_heap_push(&v->wheap, rq);
    else
        eng_list_push_back(&v->waiting, rq);
}

static int64_t waiting_n(const vllm1 *v)
{
    return v->prio ? v->wheap.n : v->waiting.n;
}

static void run_push(vllm1 *v, eng_request *rq)
{
    eng_list_push_back(&v->running, rq);
    if (v->prio)
        eng_heap_push(&v->rheap, rq);
}

static void run_remove(vllm1 *v, eng_request *rq)
{
    eng_array_remove(&v->pf, rq);
    eng_list_remove(&v->running, rq);
    if (v->prio)
        eng_heap_remove(&v->rheap, rq);
}

/* MODEL: vLLM V1 Scheduler._preempt_request: recompute preemption; the request's blocks are
 * freed (to the prefix cache) and it goes back to the front of the waiting queue (a priority
 * queue's prepend_request is add_request: it takes its place by (priority, arrival)) */
static void preempt(vllm1 *v, eng_replica *r, eng_request *rq)
{
    run_remove(v, rq);
    eng_preempt(r, rq, 0);
    if (v->prio)
        eng_heap_push(&v->wheap, rq);
    else
        eng_list_push_front(&v->waiting, rq);
}

/* MODEL: vLLM V1 schedule(): when allocate_slots fails for a running request, the lowest
 * priority one is preempted: with FCFS self.running.pop(), the request scheduled last; with
 * PRIORITY max(self.running, key=(priority, arrival_time)). */
static eng_request *victim(const vllm1 *v)
{
    return v->prio ? eng_heap_top(&v->rheap) : v->running.tail;
}

/* Prefill tokens rq would get with `budget` left. */
static int64_t chunk_of(const vllm1 *v, const eng_replica *r, const eng_request *rq, int64_t hit,
                        int64_t budget)
{
    int64_t start = hit > rq->prefilled ? hit : rq->prefilled;
    int64_t n = rq->prefill_target - start;
    /* MODEL: vLLM V1 schedule(): num_new_tokens capped by long_prefill_token_threshold, then by
     * the budget left */
    if (v->long_prefill_threshold > 0 && n > v->long_prefill_threshold)
        n = v->long_prefill_threshold;
    return eng_kv_align_chunk(r, rq, start, n < budget ? n : budget);
}

/* The running requests: every decode, then the unfinished prefills in running order, under the
 * budget; when blocks run out the running list's tail is preempted. Returns the budget left, or
 * -1 when something was preempted (V1 then schedules no waiting request this step). */
static int64_t schedule_running(vllm1 *v, eng_replica *r, eng_batch *out)
{
    int preempted = 0;
    while (eng_decode_blocks_needed(r) > eng_kv_free(r) && v->running.tail) {
        preempt(v, r, victim(v));
        preempted = 1;
    }
    int64_t budget = v->max_num_batched_tokens - eng_cohort_size(r);
    eng_array_drop_prefilled(&v->pf);
    for (int32_t i = 0; i < v->pf.n && budget > 0; i++) {
        eng_request *rq = v->pf.rq[i];
        int64_t n = chunk_of(v, r, rq, 0, budget);
        if (n == 0)
            continue; /* MODEL: vLLM V1: an aligned chunk of no token waits a step */
        int stop = 0;
        while (!stop && eng_prefill_blocks_needed(r, rq, (int32_t)n) + eng_decode_blocks_needed(r) >
                            eng_kv_free(r)) {
            eng_request *x = victim(v);
            /* a victim whose chunk this step already holds: vLLM takes the chunk back out of
             * the step (scheduled_running_reqs); here the step keeps it and rq waits instead,
             * an approximation of a rare case (KV exhausted in the middle of prefills) */
            if (x != rq && x->sched_key == v->stamp && x->status == ENG_RQ_PREFILL)
                break;
            preempt(v, r, x);
            preempted = 1;
            stop = x == rq;
        }
        if (rq->status != ENG_RQ_PREFILL ||
            eng_prefill_blocks_needed(r, rq, (int32_t)n) + eng_decode_blocks_needed(r) >
                eng_kv_free(r))
            break; /* it preempted itself: V1 stops scheduling running requests */
        eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
        rq->sched_key = v->stamp;
        budget -= n;
    }
    return preempted ? -1 : budget;
}

/* The waiting queue's next request at or after rq in its order (rq NULL: its first); with
 * priority, the heap's top (those skipped this step are out of the heap meanwhile). */
static eng_request *waiting_next(const vllm1 *v, const eng_request *rq)
{
    if (v->prio)
        return eng_heap_top(&v->wheap);
    return rq ? rq->sched_next : v->waiting.head;
}

/* Takes rq out of the waiting queue; skip: it waits on (its KV loads), out of the way of this
 * step's walk. */
static void waiting_take(vllm1 *v, eng_request *rq, int skip)
{
    if (!v->prio) {
        if (!skip)
            eng_list_remove(&v->waiting, rq);
        return;
    }
    eng_heap_remove(&v->wheap, rq);
    if (!skip)
        return;
    if (v->nskip == v->capskip) {
        v->capskip = v->capskip ? 2 * v->capskip : 16;
        v->skip = sim_xrealloc(v->skip, (size_t)v->capskip * sizeof *v->skip);
    }
    v->skip[v->nskip++] = rq;
}

/* MODEL: vLLM V1 schedule(): waiting requests only when no running request was preempted this
 * step, in the queue's order (FCFS, or (priority, arrival)) while budget and seats remain; each
 * starts after its longest cached prefix (get_computed_blocks) and stops the loop when its
 * blocks do not fit */
static void schedule_waiting(vllm1 *v, eng_replica *r, eng_batch *out, int64_t budget)
{
    eng_request *rq, *next;
    for (rq = waiting_next(v, NULL); budget > 0 && rq && v->running.n < v->max_num_seqs;
         rq = next) {
        next = v->prio ? NULL : rq->sched_next;
        /* MODEL: vLLM V1 schedule(): a request whose KV an offload tier is loading
         * (WAITING_FOR_REMOTE_KVS) is skipped (skipped_waiting_requests, put back after the
         * loop); those behind it may go */
        if (eng_kv_loading(r, rq)) {
            waiting_take(v, rq, 1);
            next = waiting_next(v, rq);
            continue;
        }
        int32_t hit = eng_prefix_match(r, rq, NULL);
        int64_t n = chunk_of(v, r, rq, hit, budget);
        if (n == 0)
            break; /* MODEL: vLLM V1: an aligned chunk of no token stops the waiting loop */
        if (eng_prefill_hit_blocks_needed(r, rq, hit, (int32_t)n) + eng_decode_blocks_needed(r) >
            eng_kv_free(r))
            break;
        waiting_take(v, rq, 0);
        eng_batch_add_prefill_hit(r, out, rq, hit, (int32_t)n);
        run_push(v, rq);
        if (rq->prefilled + n < rq->prefill_target)
            eng_array_push(&v->pf, rq);
        budget -= n;
        if (v->prio)
            next = waiting_next(v, NULL);
    }
    for (int32_t i = 0; i < v->nskip; i++)
        eng_heap_push(&v->wheap, v->skip[i]);
    v->nskip = 0;
}

static int vllm1_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    vllm1 *v = st;
    v->stamp++;
    int64_t budget = schedule_running(v, r, out);
    v->preempted = budget < 0;
    schedule_waiting(v, r, out, budget);
    return eng_batch_finish(r, out);
}

static void vllm1_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    run_remove(st, rq);
}

/* MODEL: vLLM V1 decode instance (KV transfer): a waiting request is taken only while
 * len(running) < max_num_running_reqs, and its remote KV gets the prompt's blocks
 * (allocate_slots of num_external_computed_tokens); once loaded it runs with the others */
static int64_t vllm1_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                              int64_t incoming, int64_t incoming_tokens)
{
    const vllm1 *v = st;
    if (v->running.n + incoming >= v->max_num_seqs)
        return -1;
    return eng_kv_blocks_for(r, rq->prompt);
}

static void vllm1_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    run_push(st, rq);
}

/* Decode runs: the next step is the same decode batch while no prefill is under way, nothing was
 * preempted and no waiting request could start (none waits, or no seat or budget is left). */
static int64_t vllm1_run_steps(const void *st, const eng_replica *r)
{
    const vllm1 *v = st;
    if (v->pf.n > 0 || v->preempted)
        return 1;
    if (waiting_n(v) > 0 && v->running.n < v->max_num_seqs &&
        v->max_num_batched_tokens - eng_cohort_size(r) > 0)
        return 1;
    return INT64_MAX;
}

static void vllm1_fini(void *st)
{
    vllm1 *v = st;
    SIM_FREE_ALL(v->pf.rq, v->wheap.a, v->rheap.a, v->skip);
}

static int vllm1_check(const void *st, const eng_replica *r)
{
    const vllm1 *v = st;
    if (eng_list_check(&v->waiting) || eng_list_check(&v->running))
        return -1;
    if (v->prio && (eng_heap_check(&v->wheap) || eng_heap_check(&v->rheap) ||
                    v->rheap.n != v->running.n || v->waiting.n != 0))
        return -1;
    return v->running.n <= v->max_num_seqs ? 0 : -1;
}

const eng_sched_ops eng_sched_vllm = {
    ENG_SCHED_OPS_BASE("vllm", vllm1, vllm1),
    .init = vllm1_init,
    .summary = "vLLM V1 (0.10-0.11): one token budget per step for running then waiting "
               "requests, chunked prefill, prefix caching, recompute preemption",
    .fini = vllm1_fini,
    ENG_SCHED_OPS_DECODE(vllm1),
    .runs_past_finishes = 1,
};
