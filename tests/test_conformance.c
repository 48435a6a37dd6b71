/*
 * test_conformance.c: every registered scheduling policy over the same workloads, checked for the
 * rules every policy must keep.
 *
 * The policies come from eng_sched_all(), so a policy added to the registry is covered without
 * editing this file. Each is run as it is registered, and once more per optional behaviour it
 * declares: with `preemption: swap` when it declares `preemption`, and with a batching delay when
 * it declares `max_wait_ms`.
 *
 * Workloads: light load, overload (a small cache, so paged policies preempt), long prompts,
 * prompts that cannot fit (beyond the context and beyond the KV cache), a burst, the overload
 * with asynchronous CPU overhead, all on a tiny model with a linear cost; and one realistic
 * configuration (llama-3-8b on two h100-sxm replicas, roofline costs).
 *
 * Checks. After every event (Debug builds; the engine's own per-event walker eng_check is
 * called first, then ours, because sim_set_check holds one hook; by default after every 16th
 * event, which keeps the suite quick on a busy machine, and after every one with --full, the
 * `heavy` label's run): the requests done so far
 * were each recorded once, when they were done; the iteration count matches the records.
 * At every iteration start (the recorder): KV blocks in use within capacity; one iteration at a
 * time per replica. After the run:
 *  - every arrival is recorded exactly once, finished or rejected with a reason;
 *  - each finished request produced exactly its output tokens: its own count, the sum of tokens
 *    the iterations sampled (eng_shape.emit_seqs) against the sum of outputs, the inter-token
 *    gaps reported through on_itl against the sum of (output - 1), and, per request,
 *    enough iteration ends of its replica between its first token and its finish to produce
 *    output - 1 further tokens;
 *  - KV in use never above capacity, and zero at the end (see check_kv_end);
 *  - arrival <= first scheduled <= first token <= last token <= finish;
 *  - no request waits while its replica is idle (see check_no_starvation);
 *  - a request that fits comfortably is never rejected; one beyond the context always is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "engine.h"
#include "engine_util.h"
#include "roofline.h"

/* ---------------- variants: a policy and the settings it runs with ---------------- */

typedef struct variant {
    const eng_sched_ops *ops;
    const char *key, *val; /* one extra setting, or NULL */
    char name[96];
} variant;

/* ---------------- workloads ---------------- */

typedef struct workload {
    const char *name;
    int realistic;            /* llama-3-8b on h100-sxm (roofline); else the tiny model */
    int64_t kv_tokens;        /* tiny model: KV cache in tokens */
    int n;                    /* requests */
    int64_t gap_max_ns;       /* arrival gaps uniform in [0, gap_max_ns] */
    int32_t p_lo, p_hi;       /* prompt tokens, uniform */
    int32_t o_lo, o_hi;       /* output tokens, uniform */
    int async;                /* CPU overhead, overlapped with the GPU (2: tokens delivered at
                                 the end of their own step, cpu.own_step; 3: also each step
                                 formed when the one before starts, cpu.form_ahead) */
    int want_preemption;      /* policies declaring `preemption` must preempt here */
    int edge_cases;           /* replace some requests with lengths at the limits */
    const eng_arrival *fixed; /* non-NULL: exactly these n arrivals */
} workload;

/* Preemption at the cache's edge (128 blocks of 16, a watermark of 1 block for the paged
 * policies): the newer request reaches 127 blocks, all it will ever need, before the older one
 * needs its second block; the newer one is preempted holding the whole cache less the
 * watermark, and must still run once the older one is done. */
static const eng_arrival edge_preempt[] = {{.t = 0, .prompt = 1, .output = 100},
                                           {.t = 0, .prompt = 2010, .output = 22}};

static const workload workloads[] = {
    {"light load", 0, 8192, 60, 40 * SIM_NS_PER_MS, 10, 300, 1, 60, 0, 0, 0, NULL},
    {"overload", 0, 2048, 300, 2 * SIM_NS_PER_MS, 20, 400, 1, 300, 0, 1, 0, NULL},
    {"long prompts", 0, 8192, 50, 20 * SIM_NS_PER_MS, 1500, 3500, 1, 100, 0, 0, 0, NULL},
    {"cannot fit", 0, 3000, 150, 5 * SIM_NS_PER_MS, 1, 3500, 1, 1200, 0, 0, 1, NULL},
    {"burst", 0, 4096, 400, 0, 10, 200, 1, 200, 0, 0, 0, NULL},
    {"overload, async CPU", 0, 2048, 300, 2 * SIM_NS_PER_MS, 20, 400, 1, 300, 1, 1, 0, NULL},
    {"overload, async CPU, own step", 0, 2048, 300, 2 * SIM_NS_PER_MS, 20, 400, 1, 300, 2, 1, 0,
     NULL},
    {"overload, async CPU, own step, formed ahead", 0, 2048, 300, 2 * SIM_NS_PER_MS, 20, 400, 1,
     300, 3, 1, 0, NULL},
    {"preempted at the cache's edge", 0, 2048, 2, 0, 1, 1, 1, 1, 0, 1, 0, edge_preempt},
    {"llama-3-8b on 2 x h100-sxm", 1, 0, 200, 150 * SIM_NS_PER_MS, 100, 7000, 1, 1500, 0, 0, 0,
     NULL},
};

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static int32_t uniform(uint64_t *x, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(lcg(x) % (uint64_t)(hi - lo + 1));
}

/* Arrivals of w; edge cases (tiny model: context 4096, cache kv_tokens) go at fixed positions. */
static eng_arrival *make_arrivals(const workload *w, int32_t block)
{
    eng_arrival *a = calloc((size_t)w->n, sizeof *a);
    if (w->fixed) {
        memcpy(a, w->fixed, (size_t)w->n * sizeof *a);
        return a;
    }
    uint64_t x = 12345;
    int64_t t = 0;
    for (int i = 0; i < w->n; i++) {
        if (w->gap_max_ns > 0)
            t += (int64_t)(lcg(&x) % (uint64_t)(w->gap_max_ns + 1));
        a[i] = (eng_arrival){.t = t,
                             .prompt = uniform(&x, w->p_lo, w->p_hi),
                             .output = uniform(&x, w->o_lo, w->o_hi)};
    }
    if (w->edge_cases) {
        int32_t cache = (int32_t)(w->kv_tokens / block * block);
        const int32_t edge[][2] = {
            {cache - 1, 1},  /* exactly the whole cache */
            {cache, 1},      /* one token beyond it */
            {4095, 1},       /* exactly the context (beyond the cache) */
            {4096, 1},       /* one beyond the context */
            {1, 4096},       /* the context in outputs */
            {1, 1},          /* the smallest request */
            {cache / 2, 1},  /* half the cache, answered at once */
            {20, cache / 3}, /* long generation */
        };
        for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
            int i = (int)(k * 17 + 3) % w->n;
            a[i].prompt = edge[k][0];
            a[i].output = edge[k][1];
        }
    }
    return a;
}

/* ---------------- source, cost, recorder ---------------- */

/* Tiny model: the linear cost of engine_util.h, with swap traffic. */
static const eng_predictor_ops linear_ops = {"linear", linear_ns, linear_xfer_ns, NULL, NULL, NULL,
                                             NULL,     NULL,      NULL,           NULL, NULL};

typedef struct conf_rec {
    sim_ctx *ctx;
    eng_engine *e;
    const list_src *src;
    int64_t kv_total; /* blocks per replica */
    int32_t nrep;
    eng_request *rq; /* by id */
    int32_t *seen;   /* on_request calls, by id */
    int32_t *nspan;  /* on_span calls, by id */
    int32_t *npre;   /* of them, ended by a preemption or a swap-out */
    int64_t *span0;  /* start of the first span, by id */
    int64_t *spanz;  /* end of the latest span, by id */
    int64_t recorded;
    eng_iter_rec *it;
    int64_t nit, capit;
    int64_t *busy_until; /* per replica: end of its latest iteration */
    int64_t emitted;     /* tokens sampled, summed over iterations */
    int64_t itl_gaps;    /* inter-token gaps reported through on_itl */
    int64_t max_kv;      /* most blocks in use at any iteration */
    int64_t checks;      /* per-event checks run */
    int64_t last_now;
    int nerr;
    char err[512];
} conf_rec;

static void violation(conf_rec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(conf_rec *c, const char *fmt, ...)
{
    if (c->nerr++ > 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

static void rec_request(void *st, const eng_request *rq)
{
    conf_rec *c = st;
    if (rq->id < 0 || rq->id >= c->src->next) {
        violation(c, "request id %lld was never handed out by the source", (long long)rq->id);
        return;
    }
    if (c->seen[rq->id]++ > 0)
        violation(c, "request %lld recorded twice", (long long)rq->id);
    c->rq[rq->id] = *rq;
    c->recorded++;
}

static void rec_iteration(void *st, const eng_iter_rec *it)
{
    conf_rec *c = st;
    if (it->kv_blocks_used < 0 || it->kv_blocks_used > c->kv_total)
        violation(c, "iteration %lld of replica %d: %lld KV blocks in use of %lld",
                  (long long)it->iter, it->replica, (long long)it->kv_blocks_used,
                  (long long)c->kv_total);
    if (it->replica < 0 || it->replica >= c->nrep) {
        violation(c, "iteration on replica %d of %d", it->replica, c->nrep);
        return;
    }
    if (it->start_ns < c->busy_until[it->replica] || it->duration_ns < 1)
        violation(c, "replica %d: iteration %lld starts at %lld ns, before the previous one ends",
                  it->replica, (long long)it->iter, (long long)it->start_ns);
    c->busy_until[it->replica] = it->start_ns + it->duration_ns;
    if (it->kv_blocks_used > c->max_kv)
        c->max_kv = it->kv_blocks_used;
    c->emitted += it->shape.emit_seqs;
    if (c->nit == c->capit) {
        c->capit = c->capit ? 2 * c->capit : 1024;
        c->it = realloc(c->it, (size_t)c->capit * sizeof *c->it);
    }
    c->it[c->nit++] = *it;
}

static void rec_itl(void *st, int64_t gap_ns, int64_t count)
{
    conf_rec *c = st;
    if (gap_ns <= 0 || count <= 0)
        violation(c, "inter-token gap of %lld ns reported %lld times", (long long)gap_ns,
                  (long long)count);
    c->itl_gaps += count;
}

/* Spans come in order per request, never overlap, and only the last one ends in a finish. */
static void rec_span(void *st, const eng_span_rec *sp)
{
    conf_rec *c = st;
    if (sp->req < 0 || sp->req >= c->src->next || c->seen[sp->req]) {
        violation(c, "span of request %lld reported outside its life", (long long)sp->req);
        return;
    }
    int64_t id = sp->req;
    if (sp->span != c->nspan[id] || sp->start_ns > sp->end_ns ||
        (c->nspan[id] > 0 && sp->start_ns < c->spanz[id]) ||
        (sp->decode_ns >= 0 && (sp->decode_ns < sp->start_ns || sp->decode_ns > sp->end_ns)) ||
        (c->nspan[id] > 0 && c->npre[id] != c->nspan[id]))
        violation(c,
                  "request %lld: span %d [%lld, %lld, decode %lld, %s] after %d spans ending "
                  "at %lld",
                  (long long)id, sp->span, (long long)sp->start_ns, (long long)sp->end_ns,
                  (long long)sp->decode_ns, eng_span_end_name(sp->end), c->nspan[id],
                  (long long)c->spanz[id]);
    if (c->nspan[id]++ == 0)
        c->span0[id] = sp->start_ns;
    c->npre[id] += sp->end != ENG_SPAN_FINISHED;
    c->spanz[id] = sp->end_ns;
}

static const eng_recorder_ops rec_ops = {rec_request, rec_iteration, rec_itl, rec_span};

/* The per-event checks run after every check_every-th event: 1 with --full, else 16. */
static uint64_t check_every = 16;

/* After every event (Debug builds). sim_set_check holds one hook, so this one runs the engine's
 * walker first, failing as the engine's own hook does, then checks what the records allow. */
static void conf_check(void *arg)
{
    conf_rec *c = arg;
    char buf[256];
    if (eng_check(c->e, buf, sizeof buf) != 0) {
        fprintf(stderr, "engine check failed: %s\n", buf);
        sim_assert_fail(c->ctx, __FILE__, __LINE__, "eng_check");
    }
    const eng_totals *t = eng_get_totals(c->e);
    int64_t now = sim_now(c->ctx);
    c->checks++;
    if (now < c->last_now)
        violation(c, "time went back from %lld to %lld ns", (long long)c->last_now, (long long)now);
    c->last_now = now;
    if (t->finished + t->rejected != c->recorded)
        violation(c, "at %lld ns: %lld finished + %lld rejected but %lld recorded", (long long)now,
                  (long long)t->finished, (long long)t->rejected, (long long)c->recorded);
    if (t->finished + t->rejected > t->arrived || t->arrived > c->src->next)
        violation(c, "at %lld ns: %lld done of %lld arrived, %d handed out", (long long)now,
                  (long long)(t->finished + t->rejected), (long long)t->arrived, c->src->next);
    if (t->iterations != c->nit)
        violation(c, "at %lld ns: %lld iterations counted, %lld recorded", (long long)now,
                  (long long)t->iterations, (long long)c->nit);
}

/* ---------------- configurations ---------------- */

static void realistic_config(eng_config *c)
{
    eng_config_defaults(c);
    assert_int_equal(cal_model_find("llama-3-8b", &c->model), 0);
    assert_int_equal(cal_gpu_find("h100-sxm", &c->gpu), 0);
    c->replicas = 2;
    snprintf(c->router, sizeof c->router, "least_outstanding");
}

/* ---------------- checks after the run ---------------- */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("%s / %s: ", v->name, w->name);                                            \
            fail_msg(__VA_ARGS__);                                                                 \
        }                                                                                          \
    } while (0)

/* The iterations of one replica in start order, with their ends, and its idle stretches: the
 * non-empty gaps [a, b) before its first iteration, between two, and after its last. */
typedef struct rep_iters {
    int64_t *start, *end;
    int64_t n;
    int64_t *ia, *ib;
    int64_t nidle;
} rep_iters;

static rep_iters *split_iters(const conf_rec *c)
{
    rep_iters *r = calloc((size_t)c->nrep, sizeof *r);
    for (int32_t i = 0; i < c->nrep; i++) {
        r[i].start = calloc((size_t)c->nit + 1, sizeof *r[i].start);
        r[i].end = calloc((size_t)c->nit + 1, sizeof *r[i].end);
        r[i].ia = calloc((size_t)c->nit + 2, sizeof *r[i].ia);
        r[i].ib = calloc((size_t)c->nit + 2, sizeof *r[i].ib);
    }
    for (int64_t k = 0; k < c->nit; k++) {
        rep_iters *ri = &r[c->it[k].replica];
        ri->start[ri->n] = c->it[k].start_ns;
        ri->end[ri->n++] = c->it[k].start_ns + c->it[k].duration_ns;
    }
    for (int32_t i = 0; i < c->nrep; i++) {
        rep_iters *ri = &r[i];
        for (int64_t k = 0; k <= ri->n; k++) {
            int64_t a = k == 0 ? INT64_MIN : ri->end[k - 1];
            int64_t b = k == ri->n ? INT64_MAX : ri->start[k];
            if (a < b) {
                ri->ia[ri->nidle] = a;
                ri->ib[ri->nidle++] = b;
            }
        }
    }
    return r;
}

static void free_iters(rep_iters *r, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(r[i].start);
        free(r[i].end);
        free(r[i].ia);
        free(r[i].ib);
    }
    free(r);
}

/* Index of the first entry of the sorted array x[0..n) above t (n when none). */
static int64_t first_above(const int64_t *x, int64_t n, int64_t t)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (x[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int64_t first_end_after(const rep_iters *ri, int64_t t)
{
    return first_above(ri->end, ri->n, t);
}

static int ends_at(const rep_iters *ri, int64_t t)
{
    int64_t k = first_end_after(ri, t - 1);
    return k < ri->n && ri->end[k] == t;
}

/*
 * No waiting request starves while capacity is free, made checkable:
 * a replica is idle between the end of one of its iterations and the start of its next (and
 * before its first). While it is idle nothing runs there, so every request routed to it that is
 * in the system (arrived, not yet finished or rejected) is waiting, whatever its history
 * (queued, preempted by recompute, swapped out); and every accepted request fits in the cache
 * (otherwise it is rejected on arrival), which an idle replica holds no running sequence in.
 * So a request in the system during an idle stretch of its replica is a stall: the policy left
 * capacity unused, or holds KV for requests it does not run. The one deliberate delay is a
 * batching timeout: for a policy declaring max_wait_ms, a request may wait that long after
 * arriving (its batch starts once the oldest request waited max_wait_ms, and it is not older than
 * the oldest). Violation: an idle stretch [a, b) of replica r and a request on r in the system
 * over [arrival + grace, done) with max(a, arrival + grace) < min(b, done).
 */
static void check_no_starvation(const conf_rec *c, const rep_iters *reps, int64_t grace,
                                const variant *v, const workload *w)
{
    int64_t n = c->src->next;
    for (int64_t id = 0; id < n; id++) {
        const eng_request *rq = &c->rq[id];
        const rep_iters *ri = &reps[rq->replica];
        int64_t lo = rq->t_arrival + grace, hi = rq->t_finish;
        if (lo >= hi)
            continue;
        /* the first idle stretch ending after lo is the only one that can start before hi
         * without ending before lo, as the stretches are sorted and disjoint */
        int64_t k = first_above(ri->ib, ri->nidle, lo);
        if (k == ri->nidle)
            continue;
        int64_t a = ri->ia[k], b = ri->ib[k];
        CHECK(a >= hi,
              "request %lld (arrived %lld ns, done %lld ns) was in the system while replica %d "
              "was idle from %lld to %lld ns",
              (long long)id, (long long)rq->t_arrival, (long long)rq->t_finish, rq->replica,
              (long long)a, (long long)b);
    }
}

static void check_request(const conf_rec *c, const eng_config *cfg, const rep_iters *reps,
                          const eng_request *rq, const variant *v, const workload *w)
{
    int32_t max_len = cfg->max_model_len > 0 ? cfg->max_model_len : cfg->model.max_context;
    int64_t total = (int64_t)rq->prompt + rq->output;
    int64_t blocks = (total + cfg->block_size - 1) / cfg->block_size;
    CHECK(rq->t_finish >= rq->t_arrival, "request %lld done before it arrived", (long long)rq->id);
    if (total > max_len)
        CHECK(rq->status == ENG_RQ_REJECTED && rq->reject == ENG_REJECT_CONTEXT,
              "request %lld of %lld tokens beyond the context of %d: %s", (long long)rq->id,
              (long long)total, max_len, eng_rq_status_name(rq->status));
    if (rq->status == ENG_RQ_REJECTED) {
        CHECK(rq->reject > ENG_REJECT_NONE && rq->reject < ENG_REJECT_REASON_COUNT,
              "request %lld rejected without a reason", (long long)rq->id);
        CHECK(c->nspan[rq->id] == 0, "rejected request %lld has %d spans", (long long)rq->id,
              c->nspan[rq->id]);
        CHECK(rq->reject != ENG_REJECT_CONTEXT || total > max_len,
              "request %lld of %lld tokens rejected for the context of %d", (long long)rq->id,
              (long long)total, max_len);
        /* every policy must serve a request that fits comfortably */
        CHECK(total > max_len || blocks * 2 > c->kv_total || rq->prompt > 2048,
              "request %lld (%d + %d tokens, %lld of %lld blocks) rejected: %s", (long long)rq->id,
              rq->prompt, rq->output, (long long)blocks, (long long)c->kv_total,
              eng_reject_reason_name(rq->reject));
        return;
    }
    CHECK(rq->status == ENG_RQ_FINISHED && rq->reject == ENG_REJECT_NONE,
          "request %lld recorded as %s", (long long)rq->id, eng_rq_status_name(rq->status));
    CHECK(rq->generated == rq->output, "request %lld produced %d of %d tokens", (long long)rq->id,
          rq->generated, rq->output);
    CHECK(rq->t_arrival <= rq->t_first_sched && rq->t_first_sched <= rq->t_last_sched &&
              rq->t_first_sched <= rq->t_first_token && rq->t_first_token <= rq->t_last_token &&
              rq->t_last_token <= rq->t_finish,
          "request %lld timestamps out of order: arrival %lld, scheduled %lld (last %lld), first "
          "token %lld, last token %lld, finish %lld",
          (long long)rq->id, (long long)rq->t_arrival, (long long)rq->t_first_sched,
          (long long)rq->t_last_sched, (long long)rq->t_first_token, (long long)rq->t_last_token,
          (long long)rq->t_finish);
    CHECK(rq->scheduled >= 1 + (rq->preemptions > 0 ? 1 : 0) && rq->kv_blocks == 0,
          "request %lld: %d admissions, %d preemptions, %d blocks held at the end",
          (long long)rq->id, rq->scheduled, rq->preemptions, rq->kv_blocks);
    /* one span per admission, all but the last ended by a preemption, from the first
     * scheduling to the finish */
    CHECK(c->nspan[rq->id] == rq->scheduled && c->npre[rq->id] == rq->preemptions &&
              c->span0[rq->id] == rq->t_first_sched && c->spanz[rq->id] == rq->t_finish,
          "request %lld: %d spans (%d preempted) from %lld to %lld; %d admissions, %d "
          "preemptions, scheduled at %lld, finished at %lld",
          (long long)rq->id, c->nspan[rq->id], c->npre[rq->id], (long long)c->span0[rq->id],
          (long long)c->spanz[rq->id], rq->scheduled, rq->preemptions, (long long)rq->t_first_sched,
          (long long)rq->t_finish);
    /* tokens come out at iteration ends: one at the first token, one at the finish, and
     * output - 1 of them after the first token, each needing its own iteration. With async
     * output processing a token is delivered at the end of the iteration after the one that
     * made it, except when the replica then goes idle and delivers at once, so the first token
     * may be one iteration late while the finish is not; an engine that reads a step's results
     * right after launching the next (cpu.own_step) delivers them at the end of that step. */
    const rep_iters *ri = &reps[rq->replica];
    int64_t ends = first_end_after(ri, rq->t_finish) - first_end_after(ri, rq->t_first_token);
    int64_t late = cfg->cpu.async && !cfg->cpu.own_step ? 1 : 0;
    CHECK(ends_at(ri, rq->t_first_token) && ends_at(ri, rq->t_finish) &&
              ends >= rq->output - 1 - late,
          "request %lld: %d tokens but only %lld iterations of replica %d end between its first "
          "token and its finish",
          (long long)rq->id, rq->output, (long long)ends, rq->replica);
}

/* KV returns to zero: when every request is recorded as done, the engine's walker (blocks in use
 * equal the blocks live requests hold) passing means no block is in use. */
static void check_kv_end(conf_rec *c, const variant *v, const workload *w)
{
    char buf[256];
    CHECK(eng_check(c->e, buf, sizeof buf) == 0, "engine check after the run: %s", buf);
    CHECK(c->recorded == c->src->n, "%lld of %d requests recorded", (long long)c->recorded,
          c->src->n);
    CHECK(c->max_kv <= c->kv_total, "%lld KV blocks in use of %lld", (long long)c->max_kv,
          (long long)c->kv_total);
}

static int by_time_then_departure(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* {time, +1 arrival / -1 departure} */
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* vLLM's max_output_tokens_per_s and max_concurrent_requests as its benchmark computes them
 * (vllm/benchmarks/serve.py), from the records: tokens per 1-second bucket of their iteration's
 * end from the first arrival, and a sweep over [arrival, finish) of finished requests, a
 * departure before an arrival at the same instant. */
static void check_vllm_peaks(conf_rec *c, const eng_totals *t, const variant *v, const workload *w)
{
    eng_metric m[ENG_MAX_METRICS];
    int n = eng_summary(c->e, m);
    double peak_tok = NAN, peak_conc = NAN;
    for (int i = 0; i < n; i++) {
        if (strcmp(m[i].name, "max_output_tokens_per_s") == 0)
            peak_tok = m[i].value;
        if (strcmp(m[i].name, "max_concurrent_requests") == 0)
            peak_conc = m[i].value;
    }
    int64_t last = 0;
    for (int64_t k = 0; k < c->nit; k++) {
        int64_t b = (c->it[k].start_ns + c->it[k].duration_ns - t->first_arrival_ns) / 1000000000;
        last = b > last ? b : last;
    }
    int64_t *bucket = calloc((size_t)last + 1, sizeof *bucket), want = 0;
    for (int64_t k = 0; k < c->nit; k++) {
        int64_t b = (c->it[k].start_ns + c->it[k].duration_ns - t->first_arrival_ns) / 1000000000;
        bucket[b] += c->it[k].shape.emit_seqs;
        want = bucket[b] > want ? bucket[b] : want;
    }
    free(bucket);
    CHECK(peak_tok == (double)want, "max_output_tokens_per_s %g, the buckets say %lld", peak_tok,
          (long long)want);
    int64_t(*ev)[2] = calloc((size_t)(2 * w->n), sizeof *ev), ne = 0, cur = 0, conc = 0;
    for (int64_t id = 0; id < w->n; id++)
        if (c->rq[id].status == ENG_RQ_FINISHED) {
            ev[ne][0] = c->rq[id].t_arrival;
            ev[ne++][1] = 1;
            ev[ne][0] = c->rq[id].t_finish;
            ev[ne++][1] = -1;
        }
    qsort(ev, (size_t)ne, sizeof *ev, by_time_then_departure);
    for (int64_t k = 0; k < ne; k++) {
        cur += ev[k][1];
        conc = cur > conc ? cur : conc;
    }
    free(ev);
    CHECK(peak_conc == (double)conc, "max_concurrent_requests %g, the sweep says %lld", peak_conc,
          (long long)conc);
}

/* ---------------- one run ---------------- */

static void run_one(const variant *v, const workload *w)
{
    eng_config cfg;
    eng_predictor pred = {&linear_ops, NULL, "linear test cost"};
    sim_err err;
    if (w->realistic) {
        realistic_config(&cfg);
        cal_serving sv = cal_serving_tp(cfg.dtype, 1);
        assert_int_equal(cal_roofline_new(&cfg.model, &cfg.gpu, &sv, &pred, &err), 0);
    } else {
        tiny_config(&cfg, w->kv_tokens);
    }
    if (w->async)
        cfg.cpu = (eng_cpu_overhead){.per_iteration_us = 200,
                                     .per_seq_us = 2,
                                     .async = 1,
                                     .own_step = w->async >= 2,
                                     .form_ahead = w->async == 3};
    snprintf(cfg.sched.name, sizeof cfg.sched.name, "%s", v->ops->name);
    if (v->key)
        assert_int_equal(eng_cfg_set(&cfg.sched, v->key, v->val), 0);

    eng_arrival *arr = make_arrivals(w, cfg.block_size);
    list_src src = {arr, w->n, 0};
    conf_rec *c = calloc(1, sizeof *c);
    c->src = &src;
    c->nrep = cfg.replicas;
    c->rq = calloc((size_t)w->n, sizeof *c->rq);
    c->seen = calloc((size_t)w->n, sizeof *c->seen);
    c->nspan = calloc((size_t)w->n, sizeof *c->nspan);
    c->npre = calloc((size_t)w->n, sizeof *c->npre);
    c->span0 = calloc((size_t)w->n, sizeof *c->span0);
    c->spanz = calloc((size_t)w->n, sizeof *c->spanz);
    c->busy_until = calloc((size_t)cfg.replicas, sizeof *c->busy_until);
    c->ctx = sim_new(7);
    c->e = eng_new(c->ctx, &cfg, &(eng_costs){&pred, NULL}, &list_ops, &src, &rec_ops, c, &err);
    if (!c->e)
        fail_msg("%s / %s: %s", v->name, w->name, err.msg);
    c->kv_total = eng_get_kv_plan(c->e)->blocks;
    sim_set_check(c->ctx, conf_check, c);
    sim_set_check_every(c->ctx, check_every);
    assert_int_equal(eng_run(c->e, &err), 0);
    const eng_totals *t = eng_get_totals(c->e);

    CHECK(c->nerr == 0, "%d violations; the first: %s", c->nerr, c->err);
#ifdef SIM_DEBUG
    CHECK(c->checks > 0 || sim_events_run(c->ctx) < check_every,
          "the per-event check never ran in %llu events",
          (unsigned long long)sim_events_run(c->ctx));
#endif
    CHECK(src.next == w->n && t->arrived == w->n, "%lld of %d requests arrived",
          (long long)t->arrived, w->n);
    for (int64_t id = 0; id < w->n; id++)
        CHECK(c->seen[id] == 1, "request %lld recorded %d times", (long long)id, c->seen[id]);
    check_kv_end(c, v, w);
    CHECK(c->emitted == t->output_tokens,
          "iterations sampled %lld tokens, finished requests asked for %lld", (long long)c->emitted,
          (long long)t->output_tokens);
    int64_t gaps = 0;
    for (int64_t id = 0; id < w->n; id++)
        if (c->rq[id].status == ENG_RQ_FINISHED)
            gaps += c->rq[id].output - 1;
    CHECK(c->itl_gaps == gaps, "%lld inter-token gaps reported, finished requests have %lld",
          (long long)c->itl_gaps, (long long)gaps);
    check_vllm_peaks(c, t, v, w);
    rep_iters *reps = split_iters(c);
    for (int64_t id = 0; id < w->n; id++)
        check_request(c, &cfg, reps, &c->rq[id], v, w);
    int64_t grace = 0;
    if (eng_sched_param(v->ops, "max_wait_ms"))
        grace = (int64_t)(eng_cfg_double(&cfg.sched, v->ops->params, "max_wait_ms") * 1e6);
    check_no_starvation(c, reps, grace, v, w);
    if (w->want_preemption && eng_sched_param(v->ops, "preemption"))
        CHECK(t->preemptions > 0, "a paged policy never preempted under overload");
    print_message("%-28s %-28s %4lld done %3lld rejected %5lld preempted %6lld iterations, "
                  "peak KV %lld/%lld\n",
                  v->name, w->name, (long long)t->finished, (long long)t->rejected,
                  (long long)t->preemptions, (long long)t->iterations, (long long)c->max_kv,
                  (long long)c->kv_total);

    free_iters(reps, c->nrep);
    eng_free(c->e);
    sim_free(c->ctx);
    if (w->realistic)
        cal_predictor_free(&pred);
    free(c->it);
    free(c->busy_until);
    free(c->seen);
    free(c->nspan);
    free(c->npre);
    free(c->span0);
    free(c->spanz);
    free(c->rq);
    free(c);
    free(arr);
}

static void test_variant(void **state)
{
    const variant *v = *state;
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        run_one(v, &workloads[i]);
}

/* The suite's own sanity: the registry is sound and the built-in policies are all there. */
static void test_registry(void **state)
{
    char buf[256];
    assert_int_equal(eng_sched_registry_check(buf, sizeof buf), 0);
    static const char *const builtin[] = {"static", "orca", "vllm-v0", "chunked",
                                          "tgi",    "vllm", "sglang",  "trtllm"};
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        assert_non_null(eng_sched_find(builtin[i]));
}

/* Optional behaviours a policy may declare, each run as its own variant. */
static const struct {
    const char *key, *val;
} options[] = {{"preemption", "swap"},
               {"max_wait_ms", "5"},
               {"num_scheduler_steps", "8"},
               {"enable_prefix_caching", "false"},
               {"async_scheduling", "true"},
               {"long_prefill_token_threshold", "64"},
               {"schedule_policy", "lpm"},
               {"chunked_prefill_size", "128"},
               {"capacity_scheduler_policy", "max_utilization"},
               {"enable_chunked_context", "true"}};

int main(int argc, char **argv)
{
    check_every = argc > 1 && strcmp(argv[1], "--full") == 0 ? 1 : 16;
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    size_t nopt = sizeof options / sizeof options[0];
    variant *vars = calloc(n * (1 + nopt), sizeof *vars);
    struct CMUnitTest *tests = calloc(n * (1 + nopt) + 1, sizeof *tests);
    size_t nv = 0;
    tests[0] = (struct CMUnitTest)cmocka_unit_test(test_registry);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k <= nopt; k++) {
            if (k > 0 && !eng_sched_param(all[i], options[k - 1].key))
                continue;
            variant *v = &vars[nv];
            v->ops = all[i];
            if (k > 0) {
                v->key = options[k - 1].key;
                v->val = options[k - 1].val;
                snprintf(v->name, sizeof v->name, "%s %s=%s", all[i]->name, v->key, v->val);
            } else {
                snprintf(v->name, sizeof v->name, "%s", all[i]->name);
            }
            tests[1 + nv] = (struct CMUnitTest){v->name, test_variant, NULL, NULL, v};
            nv++;
        }
    int rc = _cmocka_run_group_tests("conformance", tests, 1 + nv, NULL, NULL);
    free(tests);
    free(vars);
    return rc;
}
