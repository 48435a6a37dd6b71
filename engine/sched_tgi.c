/*
 * sched_tgi.c: Hugging Face text-generation-inference's router (continuous batching with
 * batch concatenation).
 *
 * The running batch decodes; a new batch of waiting requests is prefilled (pausing decoding)
 * only when it would hold at least waiting_served_ratio x the running requests, or when
 * requests have waited max_waiting_tokens decode steps; it then joins the running batch.
 * Admission reserves prompt + max new tokens against max_batch_total_tokens and the KV cache.
 */
#include "engine.h"
#include "rqlist.h"

typedef struct tgi {
    eng_rq_list waiting;
    int32_t running;
    int64_t running_tokens; /* sum of prompt + output of running requests */
    int64_t waiting_steps;  /* TGI's waiting_tokens: 1 after a prefill, +1 per decode step */
    double ratio;
    int64_t max_waiting_tokens, max_batch_prefill_tokens, max_batch_total_tokens;
    int64_t max_batch_size;
} tgi;

static const eng_param tgi_params[] = {
    {"waiting_served_ratio", ENG_PARAM_DOUBLE, "0.3", 0, 1e6, NULL,
     "prefill during decoding only when waiting >= ratio x running"},
    {"max_waiting_tokens", ENG_PARAM_INT, "20", 0, 1e9, NULL,
     "decode steps after which waiting requests are prefilled regardless of the ratio"},
    {"max_batch_prefill_tokens", ENG_PARAM_INT, "4096", 1, 1e9, NULL,
     "most prompt tokens in one prefill"},
    {"max_batch_total_tokens", ENG_PARAM_INT, "0", 0, 1e10, NULL,
     "most prompt + new tokens reserved by the running batch (0: the KV cache's capacity)"},
    {"max_batch_size", ENG_PARAM_INT, "0", 0, 1e6, NULL, "most requests running (0: no limit)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

extern const eng_sched_ops eng_sched_tgi;

static int tgi_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    tgi *t = st;
    const eng_sched_ops *ops = &eng_sched_tgi;
    /* MODEL: TGI launcher/src/main.rs (v2-v3): waiting_served_ratio defaults to 0.3 (1.2
     * before), max_waiting_tokens to 20 */
    t->ratio = eng_cfg_double(cfg, ops, "waiting_served_ratio");
    t->max_waiting_tokens = eng_cfg_int(cfg, ops, "max_waiting_tokens");
    t->max_batch_prefill_tokens = eng_cfg_int(cfg, ops, "max_batch_prefill_tokens");
    t->max_batch_total_tokens = eng_cfg_int(cfg, ops, "max_batch_total_tokens");
    /* MODEL: TGI derives max_batch_total_tokens from the memory left after warm-up */
    if (t->max_batch_total_tokens == 0)
        t->max_batch_total_tokens = eng_kv_total(r) * eng_kv_block_size(r);
    t->max_batch_size = eng_cfg_int(cfg, ops, "max_batch_size");
    return 0;
}

static void tgi_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    tgi *t = st;
    /* MODEL: TGI validation refuses inputs above max_batch_prefill_tokens and requests whose
     * input + max_new_tokens exceed max_batch_total_tokens */
    if (rq->prompt > t->max_batch_prefill_tokens ||
        (int64_t)rq->prompt + rq->output > t->max_batch_total_tokens) {
        eng_reject(r, rq, ENG_REJECT_BATCH);
        return;
    }
    eng_list_push_back(&t->waiting, rq);
}

/* MODEL: TGI Queue::next_batch: entries in order while the prefill budget, the token budget
 * left by the running batch and the batch size allow. Returns how many. */
static int32_t batch_fit(const tgi *t, const eng_replica *r)
{
    int32_t n = 0;
    int64_t prefill = 0, budget = t->max_batch_total_tokens - t->running_tokens;
    int64_t blocks = eng_kv_free(r);
    for (eng_request *rq = t->waiting.head; rq; rq = rq->sched_next) {
        int64_t need = (int64_t)rq->prompt + rq->output;
        if (prefill + rq->prompt > t->max_batch_prefill_tokens || need > budget)
            break;
        if (t->max_batch_size > 0 && t->running + n + 1 > t->max_batch_size)
            break;
        if (eng_kv_blocks_for(r, need) > blocks)
            break;
        prefill += rq->prompt;
        budget -= need;
        blocks -= eng_kv_blocks_for(r, need);
        n++;
    }
    return n;
}

/* The waiting requests batch_fit takes, prefilled as a new batch; fewer than min_size means no
 * batch. Returns the number admitted into out (0 when the batch would be smaller). */
static int32_t new_batch(tgi *t, eng_replica *r, eng_batch *out, int32_t min_size)
{
    int32_t n = batch_fit(t, r);
    if (n == 0 || n < min_size)
        return 0;
    for (int32_t i = 0; i < n; i++) {
        eng_request *rq = eng_list_pop_front(&t->waiting);
        eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output);
        eng_batch_add_prefill(r, out, rq, rq->prompt, rq->prompt);
        t->running++;
        t->running_tokens += (int64_t)rq->prompt + rq->output;
    }
    return n;
}

static int tgi_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    tgi *t = st;
    if (t->waiting.n > 0) {
        /* MODEL: TGI batching_task: min_size = floor(batch x waiting_served_ratio), dropped
         * once waiting_tokens >= max_waiting_tokens; with nothing running any batch goes */
        int32_t min_size = 0;
        if (t->running > 0 && t->waiting_steps < t->max_waiting_tokens)
            min_size = (int32_t)(t->running * t->ratio);
        if (new_batch(t, r, out, min_size) > 0) {
            /* MODEL: TGI backends/v3/src/backend.rs batching_task: waiting_tokens = 1 once a
             * new batch is prefilled, += 1 after each decode */
            t->waiting_steps = 1;
            return out->nchunks; /* decoding pauses for the prefill */
        }
    }
    if (eng_cohort_size(r) == 0)
        return 0;
    eng_batch_decode_all(r, out);
    t->waiting_steps++;
    return eng_cohort_size(r);
}

static void tgi_on_finish(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    tgi *t = st;
    t->running--;
    t->running_tokens -= (int64_t)rq->prompt + rq->output;
}

/* A request prefilled elsewhere is admitted as TGI admits a batch entry: its prompt + new
 * tokens against max_batch_total_tokens and the KV cache (reserved), under max_batch_size */
static int64_t tgi_pd_admit(const void *st, const eng_replica *r, const eng_request *rq,
                            int64_t incoming, int64_t incoming_tokens)
{
    const tgi *t = st;
    int64_t need = (int64_t)rq->prompt + rq->pd_output;
    if ((t->max_batch_size > 0 && t->running + incoming >= t->max_batch_size) ||
        t->running_tokens + incoming_tokens + need > t->max_batch_total_tokens)
        return -1;
    return eng_kv_blocks_for(r, need);
}

static void tgi_pd_join(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    tgi *t = st;
    eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output); /* held already: marks it */
    t->running++;
    t->running_tokens += (int64_t)rq->prompt + rq->output;
}

/* Decode runs: every running request reserved its blocks, so the waiting requests that fit stay
 * the same until a finish or an arrival; they are prefilled once they are waiting_served_ratio
 * x the running ones, or once waiting_tokens reaches max_waiting_tokens: the steps until then
 * are the same decode batch (all of them when none fits). Each skipped step counts its decode
 * in waiting_tokens. */
static int64_t tgi_run_steps(const void *st, const eng_replica *r)
{
    const tgi *t = st;
    if (t->waiting.n == 0 || batch_fit(t, r) == 0)
        return INT64_MAX;
    /* this step's call counted waiting_steps - 1; the call counting w batches when
     * w >= max_waiting_tokens */
    int64_t left = t->max_waiting_tokens - (t->waiting_steps - 1);
    return left > 1 ? left : 1;
}

static void tgi_on_run(void *st, eng_replica *r, int64_t n)
{
    tgi *t = st;
    t->waiting_steps += n - 1;
}

static int tgi_check(const void *st, const eng_replica *r)
{
    const tgi *t = st;
    if (eng_list_check(&t->waiting) || t->running < 0 ||
        t->running_tokens > t->max_batch_total_tokens)
        return -1;
    return 0;
}

const eng_sched_ops eng_sched_tgi = {
    .name = "tgi",
    .abi = ENG_SCHED_ABI,
    .state_size = sizeof(tgi),
    .params = tgi_params,
    .summary = "text-generation-inference router: decoding pauses for a new prefill batch only "
               "when waiting >= waiting_served_ratio x running or after max_waiting_tokens steps",
    .init = tgi_init,
    .on_arrival = tgi_on_arrival,
    .next_batch = tgi_next_batch,
    .on_finish = tgi_on_finish,
    .check = tgi_check,
    .pd_admit = tgi_pd_admit,
    .pd_join = tgi_pd_join,
    .run_steps = tgi_run_steps,
    .on_run = tgi_on_run,
};
