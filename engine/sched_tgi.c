/*
 * sched_tgi.c: Hugging Face text-generation-inference's router (continuous batching with
 * batch concatenation).
 *
 * The running batch decodes; a new batch of waiting requests is prefilled (pausing decoding)
 * only when it would hold at least waiting_served_ratio x the running requests, or when
 * requests have waited max_waiting_tokens decode steps; it then joins the running batch.
 * Admission reserves prompt + max new tokens against max_batch_total_tokens and the KV cache.
 *
 * TGI 3 (chunked_prefill, prefix_caching: the `tgi` engine preset): every step offers the
 * queue the prefill budget the running batch leaves, a prompt over it is prefilled in chunks
 * (one request at a time is partly prefilled), and a prompt starts after its longest cached
 * prefix.
 */
#include <string.h>

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
    int chunked;          /* 1: TGI 3's chunked prefill */
    eng_request *partial; /* chunked: the request whose prefill continues (NULL: none) */
} tgi;

static const eng_param tgi_params[] = {
    {"waiting_served_ratio", ENG_PARAM_DOUBLE, "0.3", 0, 1e6, NULL,
     "prefill during decoding only when waiting >= ratio x running", ENG_PARAM_AT(tgi, ratio)},
    {"max_waiting_tokens", ENG_PARAM_INT, "20", 0, 1e9, NULL,
     "decode steps after which waiting requests are prefilled regardless of the ratio",
     ENG_PARAM_AT(tgi, max_waiting_tokens)},
    {"max_batch_prefill_tokens", ENG_PARAM_INT, "4096", 0, 1e9, NULL,
     "most prompt tokens in one prefill (0: as TGI 3's launcher computes it, else 4096)",
     ENG_PARAM_AT(tgi, max_batch_prefill_tokens)},
    {"max_batch_total_tokens", ENG_PARAM_INT, "0", 0, 1e10, NULL,
     "most prompt + new tokens reserved by the running batch (0: the KV cache's capacity)",
     ENG_PARAM_AT(tgi, max_batch_total_tokens)},
    {"max_batch_size", ENG_PARAM_INT, "0", 0, 1e6, NULL, "most requests running (0: no limit)",
     ENG_PARAM_AT(tgi, max_batch_size)},
    {"chunked_prefill", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "TGI 3: every step fills the prefill budget the running batch leaves, chunking a longer "
     "prompt (waiting_served_ratio and max_waiting_tokens then unused)",
     ENG_PARAM_AT(tgi, chunked)},
    {"prefix_caching", ENG_PARAM_BOOL, "false", 0, 0, NULL,
     "TGI 3's radix allocator: a prompt starts after its longest cached prefix", ENG_PARAM_NOWHERE},
    ENG_PARAM_END};

/* MODEL: TGI 3's launcher (launcher/src/main.rs, main and compute_optimal): with no
 * --max-batch-prefill-tokens it takes the card's f16 FLOP/s times the shards over the model's
 * FLOPs per token (Config::flop: 2 x hidden x head_dim x (3 heads + 2 KV heads) for attention,
 * 6 x hidden x intermediate_size (x num_experts_per_tok) for the MLP, times the layers), when
 * the card is one it knows by nvidia-smi's name and the result exceeds 100, else 4096; then at
 * most max_position_embeddings. Its table: NVIDIA H100 80GB HBM3 900, L4 121, A10G 125 TFLOP/s
 * (its A100, T4 and 4090 entries never match the names nvidia-smi prints). */
static int64_t launcher_prefill_tokens(const eng_config *c)
{
    static const struct {
        const char *gpu;
        double flops;
    } cards[] = {{"h100-sxm", 900e12}, {"l4", 121e12}, {"a10g", 125e12}};
    const eng_model *m = &c->model;
    double card = 0, h = m->hidden, d = m->head_dim > 0 ? m->head_dim : h / m->heads;
    for (size_t i = 0; i < sizeof cards / sizeof cards[0]; i++)
        if (strcmp(c->gpu.name, cards[i].gpu) == 0)
            card = cards[i].flops * (c->tensor_parallel > 0 ? c->tensor_parallel : 1);
    double inter = (double)m->intermediate * (m->experts_per_tok > 0 ? m->experts_per_tok : 1);
    double flop =
        (2 * h * d * (3.0 * m->heads + 2.0 * m->kv_heads) + 6 * h * inter) * (double)m->layers;
    int64_t v = 4096;
    if (card > 0 && flop > 0 && card / flop > 100)
        v = (int64_t)(card / flop);
    return m->max_context > 0 && m->max_context < v ? m->max_context : v;
}

static int tgi_init(void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    tgi *t = st;
    /* MODEL: TGI launcher/src/main.rs (v2-v3): waiting_served_ratio defaults to 0.3 (1.2
     * before), max_waiting_tokens to 20 */
    if (t->max_batch_prefill_tokens == 0)
        t->max_batch_prefill_tokens = launcher_prefill_tokens(eng_replica_config(r));
    /* MODEL: TGI's radix allocator (backends/v3/src/radix.rs) inserts a request's blocks into
     * the trie when they are freed; the engine's nearest mode shares them once computed */
    if (eng_cfg_int(cfg, tgi_params, "prefix_caching"))
        eng_prefix_cache_enable(r, ENG_PC_AT_COMPLETION);
    /* MODEL: TGI derives max_batch_total_tokens from the memory left after warm-up */
    if (t->max_batch_total_tokens == 0)
        t->max_batch_total_tokens = eng_kv_total(r) * eng_kv_block_size(r);
    return 0;
}

static void tgi_on_arrival(void *st, eng_replica *r, eng_request *rq, int64_t now)
{
    tgi *t = st;
    /* MODEL: TGI validation refuses inputs above max_batch_prefill_tokens and requests whose
     * input + max_new_tokens exceed max_batch_total_tokens */
    if ((!t->chunked && rq->prompt > t->max_batch_prefill_tokens) ||
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

/* Whether waiting request rq can join now (chunked): the token budget left by the running
 * batch, max_batch_size and its blocks to completion. */
static int admissible(const tgi *t, const eng_replica *r, const eng_request *rq)
{
    int64_t need = (int64_t)rq->prompt + rq->output;
    return need <= t->max_batch_total_tokens - t->running_tokens &&
           !(t->max_batch_size > 0 && t->running + 1 > t->max_batch_size) &&
           eng_kv_blocks_for(r, need) <= eng_kv_free(r);
}

/* Admits rq with `hit` cached tokens and a first chunk of n. */
static void admit(tgi *t, eng_replica *r, eng_batch *out, eng_request *rq, int32_t hit, int32_t n)
{
    eng_list_pop_front(&t->waiting);
    if (hit > 0)
        eng_prefix_attach(r, rq, hit);
    eng_kv_reserve(r, rq, (int64_t)rq->prompt + rq->output);
    eng_batch_add_prefill(r, out, rq, n, n);
    t->running++;
    t->running_tokens += (int64_t)rq->prompt + rq->output;
    if (rq->prefilled + n < rq->prefill_target)
        t->partial = rq;
}

/* MODEL: TGI 3 with chunking (backends/v3/src/backend.rs batching_task: the next batch gets
 * max_batch_prefill_tokens less the running batch's current tokens, no min_size;
 * backends/v3/src/queue.rs State::next_batch: entries in order, each prefilling what follows
 * its cached prefix, the one over the budget cut to what is left, which closes the batch). The
 * running requests decode in the same step; a chunked prompt's next chunk comes first. */
static int chunked_next_batch(tgi *t, eng_replica *r, eng_batch *out)
{
    int64_t budget = t->max_batch_prefill_tokens - eng_cohort_size(r);
    if (t->partial && t->partial->prefilled >= t->partial->prefill_target)
        t->partial = NULL;
    if (t->partial && budget > 0) {
        eng_request *rq = t->partial;
        int64_t n = rq->prefill_target - rq->prefilled;
        n = n < budget ? n : budget;
        eng_batch_add_prefill(r, out, rq, (int32_t)n, (int32_t)n);
        budget -= n;
    }
    eng_request *rq;
    while (!t->partial && budget > 0 && (rq = t->waiting.head) && admissible(t, r, rq)) {
        int32_t hit = eng_prefix_match(r, rq, NULL);
        int64_t n = rq->prefill_target - hit;
        admit(t, r, out, rq, hit, (int32_t)(n < budget ? n : budget));
        budget -= n;
    }
    return eng_batch_finish(r, out);
}

static int tgi_next_batch(void *st, eng_replica *r, eng_batch *out, int64_t now)
{
    tgi *t = st;
    if (t->chunked)
        return chunked_next_batch(t, r, out);
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
    if (t->chunked) /* every step offers the queue the budget the decodes leave */
        return t->waiting.n > 0 && t->max_batch_prefill_tokens > eng_cohort_size(r) &&
                       admissible(t, r, t->waiting.head)
                   ? 1
                   : INT64_MAX;
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
    ENG_SCHED_OPS_BASE("tgi", tgi, tgi),
    .init = tgi_init,
    .summary = "text-generation-inference router: decoding pauses for a new prefill batch only "
               "when waiting >= waiting_served_ratio x running or after max_waiting_tokens steps",
    ENG_SCHED_OPS_DECODE(tgi),
    .on_run = tgi_on_run,
};
