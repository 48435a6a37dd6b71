/*
 * sched_static.c: naive (static, request-level) batching, as in the classic generate_batch loop.
 *
 * A batch forms when batch_size requests wait or the oldest has waited max_wait_ms; prompts are
 * padded to the longest in the batch; the batch runs until its longest output is done, and no
 * request joins it meanwhile. Finished sequences keep their slots: their decode work is still
 * computed (charged as padding) until the batch ends.
 */
#include <stdint.h>

#include "engine.h"
#include "rqlist.h"

typedef struct stat_batch {
    eng_rq_list waiting;
    int64_t batch_size, max_wait_ns;
    int32_t live;        /* sequences of the running batch not yet finished */
    int32_t slots;       /* sequences the batch started with */
    int32_t max_prompt;  /* padded prompt length of the running batch */
    int32_t finished;    /* finished slots still computed */
    int64_t fin_ctx0;    /* sum over finished slots of (padded context - step) */
    int64_t live_pad;    /* sum over live sequences of (max_prompt - prompt): padded keys */
    int64_t slot_blocks; /* KV blocks reserved per slot (padded prompt + output) */
} stat_batch;

static const eng_param static_params[] = {
    {"batch_size", ENG_PARAM_INT, "8", 1, 1e5, NULL, "requests per batch",
     ENG_PARAM_AT(stat_batch, batch_size)},
    {"max_wait_ms", ENG_PARAM_DOUBLE, "0", 0, 1e9, NULL,
     "start a smaller batch once the oldest request has waited this long", ENG_PARAM_NOWHERE},
    ENG_PARAM_END};

static int static_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    stat_batch *s = st;
    s->max_wait_ns = (int64_t)(eng_cfg_double(cfg, static_params, "max_wait_ms") * 1e6);
    return 0;
}

static void static_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    stat_batch *s = st;
    eng_list_push_back(&s->waiting, rq);
}

/* MODEL: naive batching reserves KV for every slot at the padded maximum (prompt and output):
 * the batch takes the first requests in arrival order whose padded reservation fits. */
static int32_t batch_fits(const stat_batch *s, const eng_replica *r, int32_t *maxp)
{
    int32_t n = 0, mp = 0, mo = 0;
    for (const eng_request *rq = s->waiting.head; rq && n < s->batch_size; rq = rq->sched_next) {
        int32_t p = rq->prompt > mp ? rq->prompt : mp;
        int32_t o = rq->output > mo ? rq->output : mo;
        if ((n + 1) * eng_kv_blocks_for(r, (int64_t)p + o) > eng_kv_free(r))
            break;
        n++;
        mp = p;
        mo = o;
    }
    *maxp = mp;
    return n;
}

static int start_batch(stat_batch *s, eng_replica *r, eng_batch *out, int64_t now)
{
    if (s->waiting.n == 0)
        return 0;
    int64_t oldest = s->waiting.head->t_arrival;
    if (s->waiting.n < s->batch_size && now < oldest + s->max_wait_ns) {
        eng_replica_wake_at(r, oldest + s->max_wait_ns);
        return 0;
    }
    int32_t maxp, n = batch_fits(s, r, &maxp);
    int32_t maxo = 0;
    eng_request *rq = s->waiting.head;
    for (int32_t i = 0; i < n; i++, rq = rq->sched_next)
        maxo = rq->output > maxo ? rq->output : maxo;
    s->slots = s->live = n;
    s->max_prompt = maxp;
    s->finished = 0;
    s->fin_ctx0 = 0;
    s->live_pad = 0;
    s->slot_blocks = eng_kv_blocks_for(r, (int64_t)maxp + maxo);
    for (int32_t i = 0; i < n; i++) {
        rq = eng_list_pop_front(&s->waiting);
        eng_kv_reserve(r, rq, (int64_t)maxp + maxo);
        /* MODEL: prompts are padded to the longest in the batch; the prefill computes all */
        eng_batch_add_prefill(r, out, rq, rq->prompt, maxp);
        s->live_pad += maxp - rq->prompt;
    }
    return n;
}

static int static_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    stat_batch *s = st;
    if (s->slots == 0)
        return start_batch(s, r, out, now);
    /* MODEL: finished sequences keep their slots: the batch's decode still computes them,
     * over their padded contexts, until the longest output is done */
    eng_batch_decode_all(r, out);
    out->steps = INT32_MAX; /* nothing joins a running batch: the same step until a finish */
    out->pad_seqs = s->finished;
    out->pad_ctx = s->fin_ctx0 + (int64_t)s->finished * eng_replica_steps(r) + s->live_pad;
    return s->slots;
}

static void static_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    stat_batch *s = st;
    s->live--;
    s->live_pad -= s->max_prompt - rq->prompt;
    if (s->live > 0) {
        /* the slot keeps decoding padding: its context grows one per step from here, and its
         * memory stays reserved until the batch ends */
        s->finished++;
        s->fin_ctx0 += (int64_t)s->max_prompt + rq->output - 1 - eng_replica_steps(r);
        eng_kv_hold(r, s->slot_blocks);
    } else {
        eng_kv_release(r, (int64_t)s->finished * s->slot_blocks);
        s->slots = 0;
        s->finished = 0;
        s->fin_ctx0 = 0;
        s->live_pad = 0;
    }
}

static int static_check(const void *st, const eng_replica *r)
{
    const stat_batch *s = st;
    if (eng_list_check(&s->waiting) != 0 || s->live < 0 || s->live > s->slots)
        return -1;
    return 0;
}

const eng_sched_ops eng_sched_static = {
    ENG_SCHED_OPS_BASE("static", static, stat_batch),
    .init = static_init,
    .summary = "naive batching: batch_size requests (or max_wait_ms), padded prompts, the "
               "batch runs until its longest output is done; no joining",
    /* Decode runs: nothing joins a running batch, so every step up to a finish is the same
     * batch (its padded slots one token longer each step, as next_batch counts them). */
    .run_steps = eng_sched_runs_unbounded,
};
