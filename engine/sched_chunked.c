/*
 * sched_chunked.c: chunked prefill with a per-iteration token budget (Sarathi-Serve,
 * DeepSpeed-FastGen's SplitFuse), on paged KV as in vllm.
 *
 * Queues: waiting (FCFS; recompute-preempted requests at the front), running (by arrival:
 * requests still prefilling and the decode cohort), swapped (by arrival).
 */
#include <stdlib.h>

#include "engine.h"
#include "rqlist.h"

typedef struct chunked {
    eng_rq_list waiting, running, swapped;
    eng_rq_array pf; /* admitted requests still prefilling, by arrival (sched_flag) */
    int64_t token_budget, max_num_seqs, watermark_blocks;
    int swap;
} chunked;

static const eng_param chunked_params[] = {
    {"token_budget", ENG_PARAM_INT, "512", 1, 1e7, NULL,
     "tokens per iteration: decodes first, prefill chunks fill the rest",
     ENG_PARAM_AT(chunked, token_budget)},
    ENG_PARAM_MAX_NUM_SEQS(chunked),
    ENG_PARAM_WATERMARK,
    ENG_PARAM_PREEMPTION(chunked),
    ENG_PARAM_END};

static int chunked_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    chunked *c = st;
    c->watermark_blocks = eng_cfg_watermark_blocks(cfg, chunked_params, r);
    return 0;
}

static void chunked_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    chunked *c = st;
    if (eng_kv_blocks_for(r, (int64_t)rq->prompt + rq->output) >
        eng_kv_total(r) - c->watermark_blocks) {
        eng_reject(r, rq, ENG_REJECT_KV);
        return;
    }
    eng_list_push_back(&c->waiting, rq);
}

static void preempt(chunked *c, eng_replica *r, eng_request *rq)
{
    eng_array_remove(&c->pf, rq);
    eng_list_remove(&c->running, rq);
    int swap = c->swap && rq->status == ENG_RQ_DECODE;
    eng_preempt(r, rq, swap);
    if (swap)
        eng_list_insert_by_id(&c->swapped, rq);
    else
        eng_list_push_front(&c->waiting, rq);
}

/* Adds a chunk of up to `left` tokens of rq's prefill, as much as the free blocks above
 * `reserve` hold; returns the tokens added (0 when none fit). */
static int32_t add_chunk(eng_replica *r, eng_batch *out, eng_request *rq, int64_t left,
                         int64_t reserve)
{
    int64_t n = rq->prefill_target - rq->prefilled;
    if (n > left)
        n = left;
    n = eng_prefill_tokens_fitting(r, rq, (int32_t)n, eng_kv_free(r) - reserve);
    if (n <= 0)
        return 0;
    eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
    return (int32_t)n;
}

static int form_batch(chunked *c, eng_replica *r, eng_batch *out);

static int chunked_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    chunked *c = st;
    int n;
    /* Prefills that hold blocks but cannot get more, with nothing decoding, would wait for
     * each other forever: free the newest, as a block-starved step in vLLM does. */
    while ((n = form_batch(c, r, out)) == 0 && c->running.n > 0)
        preempt(c, r, c->running.tail);
    return n;
}

static int form_batch(chunked *c, eng_replica *r, eng_batch *out)
{
    eng_request *rq;
    /* MODEL: Sarathi-Serve and vLLM v0 chunked prefill (_schedule_chunked_prefill): running
     * requests first, sorted by FCFS priority; when one cannot get its next block, the
     * lowest-priority (latest-arrived) running request is preempted */
    while (eng_decode_blocks_needed(r) > eng_kv_free(r) && c->running.tail)
        preempt(c, r, c->running.tail);
    /* swap-in as in vllm: above the watermark, or, with nothing running, once the blocks fit
     * (else a request swapped out holding the cache less the watermark waits forever) */
    while (
        c->swapped.n && (rq = c->swapped.head) && c->running.n < c->max_num_seqs &&
        (eng_kv_free(r) - rq->kv_blocks - 1 - eng_decode_blocks_needed(r) >= c->watermark_blocks ||
         (c->running.n == 0 && rq->kv_blocks <= eng_kv_free(r)))) {
        eng_list_pop_front(&c->swapped);
        eng_swap_in(r, rq);
        eng_list_insert_by_id(&c->running, rq);
    }
    /* MODEL: Sarathi-Serve stall-free batching: every decode runs, then prefill chunks fill the
     * rest of the token budget */
    int64_t left = c->token_budget - eng_cohort_size(r);
    int64_t decode_need = eng_decode_blocks_needed(r);
    /* partially prefilled requests continue before new ones start (they are in running);
     * what they still need is promised to them */
    int64_t promised = 0;
    eng_array_drop_prefilled(&c->pf);
    for (int32_t i = 0; i < c->pf.n; i++) {
        rq = c->pf.rq[i];
        if (left > 0)
            left -= add_chunk(r, out, rq, left, decode_need);
        promised += eng_prefill_blocks_needed(r, rq, rq->prefill_target - rq->prefilled);
    }
    /* MODEL: new requests are admitted FCFS while seats, budget and blocks allow; vLLM v0's
     * can_allocate wants the whole prompt's blocks above the watermark at admission, even when
     * the prompt is then computed in chunks */
    while (left > 0 && c->swapped.n == 0 && (rq = c->waiting.head) &&
           c->running.n < c->max_num_seqs) {
        int64_t whole = eng_prefill_blocks_needed(r, rq, rq->prefill_target);
        if (eng_kv_free(r) - whole - promised - decode_need < c->watermark_blocks)
            break;
        int32_t n = add_chunk(r, out, rq, left, decode_need + promised + c->watermark_blocks);
        if (n == 0)
            break;
        promised += eng_prefill_blocks_needed(r, rq, rq->prefill_target);
        eng_list_pop_front(&c->waiting);
        eng_list_insert_by_id(&c->running, rq);
        /* MODEL: Sarathi-Serve (sarathi/core/scheduler/sarathi_scheduler.py) sorts the running
         * requests by FCFS priority, so partial prefills continue in arrival order */
        eng_array_insert_by_id(&c->pf, rq);
        left -= n;
    }
    return eng_batch_finish(r, out);
}

static void chunked_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    chunked *c = st;
    eng_array_remove(&c->pf, rq);
    eng_list_remove(&c->running, rq);
}

static void chunked_fini(void *st)
{
    chunked *c = st;
    free(c->pf.rq);
}

/* A request prefilled elsewhere takes a seat as a prefill would: under max_num_seqs, its
 * prompt's blocks above the watermark (vLLM V0's chunked-prefill path, can_allocate) */
static int64_t chunked_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                                int64_t incoming, int64_t incoming_tokens)
{
    const chunked *c = st;
    return eng_kv_seat_blocks(r, rq, c->running.n + incoming, c->max_num_seqs, c->watermark_blocks);
}

static void chunked_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    chunked *c = st;
    eng_list_insert_by_id(&c->running, rq);
}

/* Decode runs: the next step is the same decode batch while nothing is swapped out or under
 * way in its prefill and no waiting request could start (none waits, or no seat or budget is
 * left). */
static int64_t chunked_run_steps(const void *st, const eng_replica *r)
{
    const chunked *c = st;
    if (c->swapped.n > 0 || c->pf.n > 0)
        return 1;
    if (c->waiting.n > 0 && c->running.n < c->max_num_seqs &&
        c->token_budget - eng_cohort_size(r) > 0)
        return 1;
    return INT64_MAX;
}

static int chunked_check(const void *st, const eng_replica *r)
{
    const chunked *c = st;
    if (eng_list_check(&c->waiting) || eng_list_check(&c->running) || eng_list_check(&c->swapped))
        return -1;
    return c->running.n <= c->max_num_seqs ? 0 : -1;
}

const eng_sched_ops eng_sched_chunked = {
    ENG_SCHED_OPS_BASE("chunked", chunked, chunked),
    .init = chunked_init,
    .summary = "Sarathi-Serve / SplitFuse: token budget per iteration, decodes first, prefill "
               "chunks fill the rest; paged KV with preemption",
    .fini = chunked_fini,
    ENG_SCHED_OPS_DECODE(chunked),
    .runs_past_finishes = 1,
};
