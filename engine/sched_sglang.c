/*
 * sched_sglang.c: SGLang's scheduler (python/sglang/srt/managers/scheduler.py,
 * schedule_policy.py, schedule_batch.py; SGLang 0.4.x, 2025): a step is either a prefill batch
 * or a decode batch; prefill is admitted under a conservative estimate of the memory the running
 * requests will still need (new_token_ratio, decaying while nothing goes wrong), one request at
 * a time is chunk-prefilled, and running requests are retracted when decode memory runs out.
 * The radix cache is the engine's block store (ENG_PC_AT_COMPLETION: a prefill's tokens are
 * inserted once computed); see docs/schedulers.md for where its block granularity differs from
 * SGLang's token-granular tree.
 *
 * Queues: waiting (arrival order; retracted requests are appended, as _extend_requests_to_queue
 * does), running (the decode batch, in the engine's cohort), chunked (the request being
 * chunk-prefilled, or NULL). With enable_priority_scheduling the waiting queue is a heap by
 * (priority, arrival) and a second heap over the running batch gives the requests a
 * high-priority arrival may preempt (rqheap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rqheap.h"
#include "rqlist.h"

/* MODEL: schedule_policy.py CLIP_MAX_NEW_TOKENS_ESTIMATION; global_config.py
 * retract_decode_steps */
#define CLIP_MAX_NEW 4096
#define RETRACT_DECODE_STEPS 20

typedef struct sglang {
    eng_rq_list waiting, running;
    eng_request *chunked;
    int64_t max_running, chunked_prefill_size, max_prefill_tokens;
    int lpm, mixed;
    double ratio, init_ratio, min_ratio, decay;
    int batch_is_full;
    int retracted_now; /* retracted while forming the current batch */
    /* the running requests' remaining outputs: sum of min(output - generated, CLIP) is
     * clipped * CLIP + r0_sum - unclipped * step, where r0 = output - generated + step at
     * joining; requests that joined with more than CLIP left are rescanned (they are rare) */
    int64_t r0_sum, unclipped;
    eng_rq_list longs; /* running requests that joined with more than CLIP tokens left */
    /* --enable-priority-scheduling: waiting and running as heaps; the preemption threshold */
    int prio;
    eng_rq_heap wheap, rheap;
    int64_t prio_threshold;
} sglang;

static const eng_param sglang_params[] = {
    {"max_running_requests", ENG_PARAM_INT, "0", 0, 1e6, NULL,
     "most requests running (0: min(KV tokens / 2, the request pool SGLang sizes))",
     ENG_PARAM_AT(sglang, max_running)},
    {"chunked_prefill_size", ENG_PARAM_INT, "0", 0, 1e9, NULL,
     "most tokens one prefill batch takes (0: 8192, 2048 on GPUs under 25 GB)",
     ENG_PARAM_AT(sglang, chunked_prefill_size)},
    {"max_prefill_tokens", ENG_PARAM_INT, "16384", 1, 1e9, NULL,
     "most new input tokens admitted per prefill batch", ENG_PARAM_AT(sglang, max_prefill_tokens)},
    {"schedule_policy", ENG_PARAM_ENUM, "fcfs", 0, 0, "fcfs|lpm",
     "waiting order: arrival, or longest cached prefix first (lpm)", ENG_PARAM_AT(sglang, lpm)},
    {"schedule_conservativeness", ENG_PARAM_DOUBLE, "1.0", 0, 100, NULL,
     "scales the new-token ratio that reserves memory for running requests", ENG_PARAM_NOWHERE},
    {"disable_radix_cache", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "turn the radix (prefix) cache off", ENG_PARAM_NOWHERE},
    {"enable_mixed_chunk", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "run the decode batch in the same step as a prefill batch (--enable-mixed-chunk)",
     ENG_PARAM_AT(sglang, mixed)},
    {"enable_priority_scheduling", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "waiting order by (priority, arrival), and a full batch preempts running requests of "
     "much lower priority (--enable-priority-scheduling; priorities from workload.classes)",
     ENG_PARAM_AT(sglang, prio)},
    {"schedule_low_priority_values_first", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "smaller priority values go first (SGLang's default: larger first)", ENG_PARAM_NOWHERE},
    {"priority_scheduling_preemption_threshold", ENG_PARAM_INT, "10", 0, 1e9, NULL,
     "a waiting request preempts running ones whose priority is more than this below its own",
     ENG_PARAM_AT(sglang, prio_threshold)},
    ENG_PARAM_END};

static int sglang_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    sglang *g = st;
    const eng_config *c = eng_replica_config(r);
    int64_t kv_tokens = eng_kv_total(r) * eng_kv_block_size(r);
    if (g->max_running == 0) {
        /* MODEL: SGLang model_runner.py: the request pool holds
         * min(max(kv_tokens / context_len * 512, 2048), 4096) requests; scheduler.py:
         * max_running_requests = min(max_total_num_tokens // 2, pool size) */
        int64_t pool = kv_tokens / eng_replica_max_len(r) * 512;
        pool = pool < 2048 ? 2048 : pool > 4096 ? 4096 : pool;
        g->max_running = kv_tokens / 2 < pool ? kv_tokens / 2 : pool;
        if (g->max_running < 1)
            g->max_running = 1;
    }
    if (g->chunked_prefill_size == 0)
        /* MODEL: SGLang server_args.py: chunked_prefill_size 2048 below 25 GB of GPU memory,
         * else 8192 */
        g->chunked_prefill_size = c->gpu.mem_bytes < INT64_C(25) * 1000 * 1000 * 1000 ? 2048 : 8192;
    /* MODEL: SGLang scheduler.py init: init_new_token_ratio = min(0.7 x conservativeness, 1),
     * min_new_token_ratio = init x 0.14, decay = (init - min) / 600 per decode step
     * (global_config.py defaults) */
    double cons = eng_cfg_double(cfg, sglang_params, "schedule_conservativeness");
    g->init_ratio = 0.7 * cons < 1.0 ? 0.7 * cons : 1.0;
    g->min_ratio = g->init_ratio * 0.14 < 1.0 ? g->init_ratio * 0.14 : 1.0;
    g->decay = (g->init_ratio - g->min_ratio) / 600.0;
    g->ratio = g->init_ratio;
    if (!eng_cfg_int(cfg, sglang_params, "disable_radix_cache"))
        eng_prefix_cache_enable(r, ENG_PC_AT_COMPLETION);
    /* MODEL: SGLang schedule_policy.py _sort_by_priority_and_fcfs: the waiting queue sorted by
     * (priority x sign, wait_queue_entry_time), sign -1 (larger values first) unless
     * --schedule-low-priority-values-first; scheduler.py: try_preemption =
     * enable_priority_scheduling. Priority with lpm sorts by prefix alone there: refused. */
    int32_t sign = eng_cfg_int(cfg, sglang_params, "schedule_low_priority_values_first") ? 1 : -1;
    g->wheap = (eng_rq_heap){.sign = sign};
    g->rheap = (eng_rq_heap){.sign = sign, .max = 1};
    return g->prio && g->lpm ? -1 : 0;
}

/* ---- the waiting queue: a list in arrival order, or a heap by priority ---- */

static void waiting_push(sglang *g, eng_request *rq)
{
    if (g->prio)
        eng_heap_push(&g->wheap, rq);
    else
        eng_list_push_back(&g->waiting, rq);
}

static void waiting_remove(sglang *g, eng_request *rq)
{
    if (g->prio)
        eng_heap_remove(&g->wheap, rq);
    else
        eng_list_remove(&g->waiting, rq);
}

static int64_t waiting_n(const sglang *g)
{
    return g->prio ? g->wheap.n : g->waiting.n;
}

static int64_t clip_new(int64_t n)
{
    return n < CLIP_MAX_NEW ? n : CLIP_MAX_NEW;
}

static void sglang_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    sglang *g = st;
    /* PrefillAdder.add_one_req wants input + min(max_new_tokens, CLIP) below the free tokens:
     * a request that cannot pass even on an empty server would wait for ever; refuse it */
    if ((int64_t)rq->prompt + clip_new(rq->output) >= eng_kv_total(r) * eng_kv_block_size(r)) {
        eng_reject(r, rq, ENG_REJECT_KV);
        return;
    }
    waiting_push(g, rq);
}

/* ---- the running batch's remaining outputs ---- */

static void run_add(sglang *g, eng_replica *r, eng_request *rq)
{
    int64_t left = rq->output - eng_rq_generated(r, rq);
    rq->sched_key = left + eng_replica_steps(r); /* r0 */
    if (left > CLIP_MAX_NEW) {
        rq->sched_flag = 2;
        eng_list_push_back(&g->longs, rq);
    } else {
        rq->sched_flag = 1;
        eng_list_push_back(&g->running, rq);
        g->r0_sum += rq->sched_key;
        g->unclipped++;
    }
    if (g->prio)
        eng_heap_push(&g->rheap, rq);
}

static void run_remove(sglang *g, eng_request *rq)
{
    if (rq->sched_flag == 2) {
        eng_list_remove(&g->longs, rq);
    } else if (rq->sched_flag == 1) {
        eng_list_remove(&g->running, rq);
        g->r0_sum -= rq->sched_key;
        g->unclipped--;
    }
    if (g->prio && rq->sched_flag)
        eng_heap_remove(&g->rheap, rq);
    rq->sched_flag = 0;
}

/* sum over running requests of min(remaining output, CLIP) */
static int64_t running_need(sglang *g, eng_replica *r)
{
    int64_t step = eng_replica_steps(r);
    eng_request *rq = g->longs.head;
    while (rq) { /* those now within CLIP move to the plain sums */
        eng_request *next = rq->sched_next;
        if (rq->sched_key - step <= CLIP_MAX_NEW) {
            eng_list_remove(&g->longs, rq);
            rq->sched_flag = 1;
            eng_list_push_back(&g->running, rq);
            g->r0_sum += rq->sched_key;
            g->unclipped++;
        }
        rq = next;
    }
    return g->longs.n * CLIP_MAX_NEW + g->r0_sum - g->unclipped * step;
}

static int64_t running_n(const sglang *g)
{
    return g->running.n + g->longs.n;
}

/* ---- prefill ---- */

/* MODEL: SGLang schedule_policy.py LPM: waiting requests sorted by longest cached prefix,
 * falling back to FCFS above 128 waiting requests. Insertion sort (stable), hits in sched_key
 * of the waiting requests. */
static void sort_lpm(sglang *g, eng_replica *r)
{
    if (g->waiting.n > 128 || g->waiting.n < 2)
        return;
    eng_rq_list sorted = {0};
    eng_request *rq;
    while ((rq = eng_list_pop_front(&g->waiting))) {
        rq->sched_key = eng_prefix_match(r, rq, NULL);
        eng_request *after = sorted.tail;
        while (after && after->sched_key < rq->sched_key)
            after = after->sched_prev;
        if (!after) {
            eng_list_push_front(&sorted, rq);
        } else {
            rq->sched_prev = after;
            rq->sched_next = after->sched_next;
            if (after->sched_next)
                after->sched_next->sched_prev = rq;
            else
                sorted.tail = rq;
            after->sched_next = rq;
            sorted.n++;
        }
    }
    g->waiting = sorted;
}

typedef struct adder {
    int64_t rem_total, cur_rem, rem_input, rem_chunk;
    int32_t n; /* requests in the prefill batch */
} adder;

enum { CONTINUE, NO_TOKEN, OTHER };

/* MODEL: PrefillAdder.budget_state */
static int budget_state(const adder *a)
{
    if (a->rem_total <= 0 || a->cur_rem <= 0)
        return NO_TOKEN;
    if (a->rem_input <= 0 || a->rem_chunk <= 0)
        return OTHER;
    return CONTINUE;
}

/* MODEL: PrefillAdder.add_one_req (non-chunked and chunked cases) for waiting request rq */
static int add_one(sglang *g, eng_replica *r, eng_batch *out, adder *a, eng_request *rq)
{
    eng_kv_onboard(r, rq); /* HiCache: init_load_back of its host-held prefix (kv_offload) */
    int32_t hit = eng_prefix_match(r, rq, NULL);
    int64_t extend = rq->prefill_target - hit, max_new = clip_new(rq->output - rq->generated);
    if (extend + max_new >= a->rem_total)
        return NO_TOKEN;
    if (extend > a->rem_input && a->n > 0)
        return OTHER;
    int64_t n = extend <= a->rem_chunk ? extend : a->rem_chunk;
    if (n <= 0)
        return OTHER;
    if (eng_batch_add_prefill_hit(r, out, rq, hit, (int32_t)n) != 0)
        return NO_TOKEN; /* the blocks are short: the estimate let too much in */
    waiting_remove(g, rq);
    if (n < extend) {
        g->chunked = rq; /* new_being_chunked_req: no max_new reserved until its last chunk */
        max_new = 0;
    }
    a->rem_total -= n + max_new;
    a->cur_rem -= n;
    a->rem_input -= n;
    a->rem_chunk -= n;
    a->n++;
    return budget_state(a);
}

/* MODEL: SGLang scheduler.py get_new_batch_prefill: with --enable-mixed-chunk the running
 * batch's decode tokens (one per running request) are taken from the prefill budgets
 * (PrefillAdder(..., mixed_with_decode_tokens = running_bs): rem_total, cur_rem, rem_input and
 * rem_chunk all start that much lower) */
static void mixed_offset(const sglang *g, adder *a)
{
    if (!g->mixed)
        return;
    int64_t bs = running_n(g);
    a->rem_total -= bs;
    a->cur_rem -= bs;
    a->rem_input -= bs;
    a->rem_chunk -= bs;
}

/* MODEL: SGLang get_new_batch_prefill, mixed-style chunked prefill: when the running batch is
 * not empty, it is prepared for decode and mixed into the prefill batch (mix_with_running):
 * one step runs the new prefill chunks and a decode token of every running request. Mixing
 * needs chunked prefill (chunked_prefill_size > 0, as SGLang's is_mixed_chunk requires); a
 * step whose decode tokens would not fit the free blocks runs the prefill alone. */
static void mix_running(const sglang *g, eng_replica *r, eng_batch *out)
{
    if (g->mixed && running_n(g) > 0 && eng_cohort_size(r) > 0 &&
        eng_decode_blocks_needed(r) <= eng_kv_free(r))
        eng_batch_decode_all(r, out);
}

/* A running request's clipped remaining output, as the adder reserves it. */
static int64_t reserve_of(const sglang *g, eng_replica *r, const eng_request *rq)
{
    return (int64_t)((double)clip_new(rq->output - eng_rq_generated(r, rq)) * g->ratio);
}

/* MODEL: SGLang PrefillAdder.preempt_to_schedule: the running requests in order of (priority
 * x -sign, -wait_queue_entry_time) (the least important, then the newest, first) are taken
 * while each is more than priority_scheduling_preemption_threshold below rq (at least one),
 * until their reservations (min(max_new - generated, CLIP) x new_token_ratio each) cover what rq
 * asks for beyond rem_total_tokens (its extend tokens plus min(max_new, CLIP)); if they do, they
 * are released (their KV freed, back to the waiting queue) and rq may be added. The candidates come
 * off the running heap one by one, O(log n) each; those not taken go back. */
static int preempt_to_schedule(sglang *g, eng_replica *r, adder *a, eng_request *rq)
{
    int64_t need = rq->prefill_target - eng_prefix_match(r, rq, NULL) +
                   clip_new(rq->output - rq->generated) - a->rem_total;
    int64_t n = 0, bs = eng_kv_block_size(r);
    eng_request **v = sim_xmalloc((size_t)(g->rheap.n + 1) * sizeof *v);
    eng_request *x;
    while ((x = eng_heap_top(&g->rheap)) &&
           (int64_t)g->rheap.sign * (x->priority - rq->priority) > g->prio_threshold) {
        eng_heap_remove(&g->rheap, x);
        v[n++] = x;
        need -= reserve_of(g, r, x);
        if (need <= 0) /* checked after taking one: at least one is taken */
            break;
    }
    int ok = n > 0 && need <= 0;
    for (int64_t i = 0; i < n; i++) {
        eng_heap_push(&g->rheap, v[i]);
        if (!ok)
            continue;
        int64_t credit = reserve_of(g, r, v[i]), before = eng_kv_free(r);
        run_remove(g, v[i]);
        eng_preempt(r, v[i], 0);
        waiting_push(g, v[i]);
        int64_t freed = (eng_kv_free(r) - before) * bs;
        a->rem_total += credit + freed;
        a->cur_rem += freed;
    }
    free(v);
    g->retracted_now += ok ? (int)n : 0;
    return ok;
}

/* The waiting requests in the queue's order, the next after rq (NULL: the first); with a heap,
 * its top, rq having left it or stopped the walk. */
static eng_request *waiting_next(const sglang *g, const eng_request *rq)
{
    if (g->prio)
        return eng_heap_top(&g->wheap);
    return rq ? rq->sched_next : g->waiting.head;
}

/* MODEL: SGLang _get_new_batch_prefill_raw: a batch is full once the running and the new
 * requests reach max_running_requests; without priority scheduling that ends the batch; with
 * it (try_preemption) the request may preempt lower-priority running ones and go on. */
static int batch_full(sglang *g, eng_replica *r, adder *a, eng_request *rq)
{
    if (running_n(g) + a->n >= g->max_running)
        g->batch_is_full = 1;
    return g->batch_is_full && !(g->prio && preempt_to_schedule(g, r, a, rq));
}

static int new_prefill_batch(sglang *g, eng_replica *r, eng_batch *out)
{
    /* MODEL: get_new_batch_prefill: with try_preemption, batch_is_full is reset at each try and
     * a full running batch does not skip the try */
    if (g->prio)
        g->batch_is_full = 0;
    if ((g->batch_is_full || waiting_n(g) == 0) && !g->chunked)
        return 0;
    if (running_n(g) >= g->max_running && !g->prio) {
        g->batch_is_full = 1;
        return 0;
    }
    if (g->lpm)
        sort_lpm(g, r);
    /* MODEL: PrefillAdder.__init__: rem_total_tokens = available + evictable, less
     * min(max_new - generated, CLIP) x new_token_ratio for each running request */
    int64_t free_tokens = eng_kv_free(r) * eng_kv_block_size(r);
    adder a = {free_tokens - (int64_t)((double)running_need(g, r) * g->ratio), free_tokens,
               g->max_prefill_tokens, g->chunked_prefill_size, 0};
    mixed_offset(g, &a);
    if (g->chunked) {
        /* MODEL: PrefillAdder.add_chunked_req: the chunked request continues first */
        eng_request *rq = g->chunked;
        int64_t left = rq->prefill_target - rq->prefilled;
        int64_t n = left < a.rem_chunk ? left : a.rem_chunk;
        if (eng_prefill_blocks_needed(r, rq, (int32_t)n) > eng_kv_free(r))
            return 0; /* cannot happen while its decode neighbours are paused */
        eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
        int64_t max_new = n == left ? clip_new(rq->output) : 0;
        a.rem_total -= n + max_new;
        a.cur_rem -= n;
        a.rem_input -= n;
        a.rem_chunk -= n;
        a.n++;
        if (n == left)
            g->chunked = NULL;
    }
    eng_request *rq = waiting_next(g, NULL);
    while (rq) {
        eng_request *next = g->prio ? NULL : rq->sched_next;
        if (batch_full(g, r, &a, rq))
            break;
        if (g->chunked) /* one request is chunked at a time */
            break;
        int res = add_one(g, r, out, &a, rq);
        if (res != CONTINUE) {
            if (res == NO_TOKEN)
                g->batch_is_full = 1;
            break;
        }
        rq = g->prio ? waiting_next(g, NULL) : next;
    }
    return out->nchunks;
}

/* ---- decode ---- */

static int by_retract_order(const void *x, const void *y)
{
    /* MODEL: ScheduleBatch.retract_decode sorts by (output tokens, -input tokens), descending,
     * and pops from the end: fewest output tokens first, the longest input among equals */
    const eng_request *a = *(eng_request *const *)x, *b = *(eng_request *const *)y;
    if (a->sched_key != b->sched_key)
        return a->sched_key < b->sched_key ? 1 : -1;
    if (a->prompt != b->prompt)
        return a->prompt > b->prompt ? 1 : -1;
    return a->id < b->id ? 1 : -1;
}

/* MODEL: ScheduleBatch.retract_decode: retract requests until decode memory suffices (at least
 * one, never the last), then new_token_ratio = min(1, (decoded + 20 x remaining requests) /
 * their max_new_tokens). Retracted requests free their KV but what the radix tree holds. */
static void retract(sglang *g, eng_replica *r)
{
    int64_t n = running_n(g);
    eng_request **v = sim_xmalloc((size_t)n * sizeof *v);
    int64_t k = 0;
    for (eng_rq_list *l = &g->running; l; l = l == &g->running ? &g->longs : NULL)
        for (eng_request *rq = l->head; rq; rq = rq->sched_next)
            v[k++] = rq;
    /* the running lists are rebuilt from the survivors below */
    g->running = (eng_rq_list){0};
    g->longs = (eng_rq_list){0};
    g->rheap.n = 0;
    g->r0_sum = g->unclipped = 0;
    for (int64_t i = 0; i < n; i++) /* the sort's key, in sched_key until run_add */
        v[i]->sched_key = eng_rq_generated(r, v[i]);
    qsort(v, (size_t)n, sizeof *v, by_retract_order);
    int first = 1;
    while (n > 1 && (first || eng_decode_blocks_needed(r) > eng_kv_free(r))) {
        first = 0;
        eng_request *rq = v[--n];
        rq->sched_flag = 0;
        eng_preempt(r, rq, 0);
        waiting_push(g, rq);
        g->retracted_now++;
    }
    int64_t decoded = 0, max_new = 0;
    for (int64_t i = 0; i < n; i++) {
        decoded += eng_rq_generated(r, v[i]);
        max_new += v[i]->output;
        v[i]->sched_flag = 0;
        run_add(g, r, v[i]);
    }
    free(v);
    double est = max_new > 0 ? (double)(decoded + RETRACT_DECODE_STEPS * n) / (double)max_new : 1;
    g->ratio = est < 1.0 ? est : 1.0;
    g->batch_is_full = 0;
    /* a chunked prefill holding the blocks the last decode needs goes back to waiting too (SGLang
     * has no rule for this corner; without one the replica would stop) */
    if (eng_decode_blocks_needed(r) > eng_kv_free(r) && g->chunked) {
        eng_preempt(r, g->chunked, 0);
        if (g->prio)
            eng_heap_push(&g->wheap, g->chunked);
        else
            eng_list_push_front(&g->waiting, g->chunked);
        g->chunked = NULL;
    }
}

static int sglang_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    sglang *g = st;
    g->retracted_now = 0;
    /* MODEL: Scheduler.get_next_batch_to_run: a new prefill batch if one can be formed (the
     * decode batch waits meanwhile), else the decode batch */
    if (new_prefill_batch(g, r, out) > 0) {
        mix_running(g, r, out);
        return out->nchunks + (g->mixed ? eng_cohort_size(r) : 0);
    }
    if (running_n(g) == 0) {
        /* MODEL: Scheduler event loop: an idle server re-initialises new_token_ratio */
        g->ratio = g->init_ratio;
        return 0;
    }
    /* MODEL: Scheduler.update_running_batch: retract when decode memory runs out, else decay
     * new_token_ratio towards its minimum */
    if (eng_decode_blocks_needed(r) > eng_kv_free(r))
        retract(g, r);
    else
        g->ratio = g->ratio - g->decay > g->min_ratio ? g->ratio - g->decay : g->min_ratio;
    eng_batch_decode_all(r, out);
    return eng_cohort_size(r);
}

/* Requests whose prefill completed joined the cohort: they join the running batch. */
static void sglang_on_batch_end(void *st, eng_replica *r, const eng_batch *b, int64_t now)
{
    sglang *g = st;
    for (int32_t i = 0; i < b->nchunks; i++) {
        eng_request *rq = b->chunks[i].rq;
        if (rq->status == ENG_RQ_DECODE && rq->sched_flag == 0)
            run_add(g, r, rq);
    }
}

static void sglang_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    sglang *g = st;
    run_remove(g, rq);
    if (g->chunked == rq)
        g->chunked = NULL;
    /* MODEL: update_running_batch: a batch that shrank is no longer full */
    g->batch_is_full = 0;
}

/* MODEL: SGLang's decode server (disaggregation/decode.py DecodePreallocQueue) preallocates a
 * transferred request's prompt KV when that, plus num_reserved_decode_tokens (512 by default)
 * for each running request and itself, fits in the free KV, under max_running_requests */
#define RESERVED_DECODE_TOKENS 512
static int64_t sglang_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                               int64_t incoming, int64_t incoming_tokens)
{
    const sglang *g = st;
    int64_t seated = running_n(g) + incoming;
    int64_t need = eng_kv_blocks_for(r, rq->prompt);
    int64_t free_tokens = (eng_kv_free(r) - need) * eng_kv_block_size(r);
    if (seated >= g->max_running || free_tokens < RESERVED_DECODE_TOKENS * (seated + 1))
        return -1;
    return need;
}

static void sglang_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    run_add(st, r, rq);
}

/* Decode runs: the next step is the same decode batch while no request is chunk-prefilled and
 * no new prefill batch can form (none waits, or the batch is full until a finish); nothing was
 * retracted this step (retraction makes room for prefills). Each skipped step decays
 * new_token_ratio as its decode step would. */
static int64_t sglang_run_steps(const void *st, const eng_replica *r)
{
    const sglang *g = st;
    if (g->chunked || g->retracted_now > 0 || (waiting_n(g) > 0 && (!g->batch_is_full || g->prio)))
        return 1;
    return INT64_MAX;
}

static void sglang_on_run(void *st, eng_replica *r, int64_t n)
{
    sglang *g = st;
    for (int64_t i = 1; i < n && g->ratio > g->min_ratio; i++)
        g->ratio = g->ratio - g->decay > g->min_ratio ? g->ratio - g->decay : g->min_ratio;
}

static void sglang_fini(void *st)
{
    sglang *g = st;
    free(g->wheap.a);
    free(g->rheap.a);
}

static int sglang_check(const void *st, const eng_replica *r)
{
    const sglang *g = st;
    if (eng_list_check(&g->waiting) || eng_list_check(&g->running) || eng_list_check(&g->longs))
        return -1;
    if (g->prio && (eng_heap_check(&g->wheap) || eng_heap_check(&g->rheap) ||
                    g->rheap.n != running_n(g) || g->waiting.n != 0))
        return -1;
    return running_n(g) <= g->max_running ? 0 : -1;
}

const eng_sched_ops eng_sched_sglang = {
    ENG_SCHED_OPS_BASE("sglang", sglang, sglang),
    .init = sglang_init,
    .summary = "SGLang (0.4): prefill or decode batches, radix prefix cache, admission by a "
               "decaying new-token ratio, one chunked prefill at a time, decode retraction",
    .on_batch_end = sglang_on_batch_end,
    .fini = sglang_fini,
    ENG_SCHED_OPS_DECODE(sglang),
    .on_run = sglang_on_run,
};
