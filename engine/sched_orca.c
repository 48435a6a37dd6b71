/*
 * sched_orca.c: Orca-style iteration-level scheduling with selective batching.
 *
 * MODEL: Orca (Yu et al., OSDI'22), section 4: the scheduler picks requests at every iteration;
 * new requests join a running batch at any iteration and finished ones leave at once. Selective
 * batching runs the newcomers' prefill and the running requests' decode in one iteration.
 * Each admitted request reserves KV for prompt + maximum output up front (Algorithm 1 reserves
 * max_tokens slots), so nothing is ever preempted.
 */
#include "engine.h"
#include "rqlist.h"

typedef struct orca {
    eng_rq_list waiting; /* arrival order */
    int32_t running;     /* admitted and not finished */
    int64_t max_num_seqs;
    int64_t max_num_batched_tokens; /* 0 = no limit on newcomers' prompt tokens per iteration */
} orca;

static const eng_param orca_params[] = {ENG_PARAM_MAX_NUM_SEQS(orca),
                                        {"max_num_batched_tokens", ENG_PARAM_INT, "0", 0, 1e9, NULL,
                                         "most prompt tokens admitted per iteration (0: no limit)",
                                         ENG_PARAM_AT(orca, max_num_batched_tokens)},
                                        ENG_PARAM_END};

static void orca_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    orca *o = st;
    if (o->max_num_batched_tokens > 0 && rq->prompt > o->max_num_batched_tokens) {
        eng_reject(r, rq, ENG_REJECT_BATCH);
        return;
    }
    eng_list_push_back(&o->waiting, rq);
}

static int orca_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    orca *o = st;
    int64_t tokens = 0;
    /* MODEL: Orca Algorithm 1 walks requests in arrival order and stops at the first one whose
     * reservation does not fit (first come, first served; no skipping ahead). */
    eng_request *rq;
    while ((rq = o->waiting.head) && o->running < o->max_num_seqs) {
        if (o->max_num_batched_tokens > 0 && tokens + rq->prompt > o->max_num_batched_tokens)
            break;
        if (eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output) != 0)
            break;
        eng_list_pop_front(&o->waiting);
        eng_batch_add_prefill(r, out, rq, rq->prefill_target, rq->prefill_target);
        tokens += rq->prompt;
        o->running++;
    }
    return eng_batch_finish(r, out);
}

static void orca_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    orca *o = st;
    o->running--;
}

/* MODEL: Orca reserves a request's prompt + output when it admits it (Algorithm 1); a request
 * prefilled elsewhere takes a seat and that reservation the same way */
static int64_t orca_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                             int64_t incoming, int64_t incoming_tokens)
{
    const orca *o = st;
    if (o->running + incoming >= o->max_num_seqs)
        return -1;
    return eng_kv_blocks_for(r, (int64_t)rq->prompt + rq->pd_output);
}

static void orca_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    orca *o = st;
    eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output); /* held already: marks it */
    o->running++;
}

static int orca_check(const void *st, const eng_replica *r)
{
    const orca *o = st;
    if (eng_list_check(&o->waiting) != 0 || o->running < 0 || o->running > o->max_num_seqs)
        return -1;
    return 0;
}

const eng_sched_ops eng_sched_orca = {
    ENG_SCHED_OPS_BASE("orca", orca, orca),
    .summary = "iteration-level batching; prefill and decode share iterations; KV reserved "
               "for prompt + output up front",
    .pd_admit = orca_pd_admit,
    .pd_join = orca_pd_join,
    /* Decode runs: every running request reserved its blocks to completion, so nothing the
     * first waiting request's admission reads (seats, free blocks) moves before a finish or an
     * arrival: the next step is the same decode batch. */
    .run_steps = eng_sched_runs_unbounded,
};
