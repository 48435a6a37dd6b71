/*
 * metrics.c: summary metrics of a run, in a fixed order with the names vLLM's serving benchmark
 * uses (completed, duration, request_throughput, ..., mean_ttft_ms, median_ttft_ms, p99_ttft_ms).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* the vocabulary (metrics.h); the order is the summary's */
static const eng_latency latencies[ENG_LAT_COUNT] = {
    {ENG_LAT_TTFT, "ttft", NULL, "ttft_ms", "TTFT", ENG_LAT_SLO | ENG_LAT_CLIENT},
    {ENG_LAT_TPOT, "tpot", NULL, "tpot_ms", "TPOT", ENG_LAT_SLO | ENG_LAT_CLIENT},
    {ENG_LAT_ITL, "itl", NULL, "itl_ms", "ITL", ENG_LAT_SLO | ENG_LAT_CLIENT},
    {ENG_LAT_E2EL, "e2el", "e2e", "e2el_ms", "E2E latency", ENG_LAT_SLO | ENG_LAT_CLIENT},
    {ENG_LAT_WAITING, "waiting", NULL, "waiting_ms", "Waiting", ENG_LAT_CLIENT},
    {ENG_LAT_SCHED, "sched_overhead", NULL, "sched_overhead_ms", "Sched overhead", 0},
    {ENG_LAT_KV_TRANSFER, "kv_transfer", NULL, "kv_transfer_ms", "KV transfer", ENG_LAT_PD},
    {ENG_LAT_KV_WAIT, "kv_wait", NULL, "kv_wait_ms", "KV wait", ENG_LAT_PD}};

const eng_latency *eng_latency_all(int *n)
{
    *n = ENG_LAT_COUNT;
    return latencies;
}

const eng_latency *eng_latency_find(const char *name, unsigned flags)
{
    for (int i = 0; i < ENG_LAT_COUNT; i++) {
        const eng_latency *l = &latencies[i];
        if ((l->flags & flags) == flags &&
            (!strcmp(l->name, name) || (l->alias && !strcmp(l->alias, name))))
            return l;
    }
    return NULL;
}

const char *eng_latency_names(unsigned flags, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < ENG_LAT_COUNT && off < len; i++) {
        const eng_latency *l = &latencies[i];
        if ((l->flags & flags) != flags)
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", l->name);
        if (l->alias && off < len)
            off += (size_t)snprintf(buf + off, len - off, " (or %s)", l->alias);
    }
    return buf;
}

/* The samples of latency id in m. */
static sim_samples *samples_of(eng_metrics *m, eng_lat_id id)
{
    sim_samples *const all[ENG_LAT_COUNT] = {&m->ttft,    &m->tpot,  &m->itl,  &m->e2el,
                                             &m->waiting, &m->sched, &m->xfer, &m->xfer_wait};
    return all[id];
}

void eng_metrics_init(eng_metrics *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < ENG_LAT_COUNT; i++) {
        sim_samples_init(samples_of(m, (eng_lat_id)i));
        if (!(latencies[i].flags & ENG_LAT_SLO)) /* no std_ in the summary */
            sim_samples_no_std(samples_of(m, (eng_lat_id)i));
    }
    m->t_first_arrival = -1;
}

void eng_metrics_free(eng_metrics *m)
{
    for (int i = 0; i < ENG_LAT_COUNT; i++)
        sim_samples_free(samples_of(m, (eng_lat_id)i));
    free(m->tok_win);
    m->tok_win = NULL;
    for (int32_t k = 0; m->cls && k < m->classes->n; k++) {
        sim_samples_free(&m->cls[k].ttft);
        sim_samples_free(&m->cls[k].tpot);
        sim_samples_free(&m->cls[k].e2el);
    }
    free(m->cls);
    m->cls = NULL;
}

void eng_metrics_classes(eng_metrics *m, const eng_classes *cl)
{
    m->classes = cl;
    m->cls = sim_xcalloc((size_t)cl->n, sizeof *m->cls);
    for (int32_t k = 0; k < cl->n; k++) {
        sim_samples_init(&m->cls[k].ttft);
        sim_samples_init(&m->cls[k].tpot);
        sim_samples_init(&m->cls[k].e2el);
    }
}

/* Whether a request with these latencies meets the SLO (ms; 0: none). */
static int meets(double ttft, double tpot, double e2el, double slo_ttft, double slo_tpot,
                 double slo_e2e)
{
    return (slo_ttft <= 0 || ttft <= slo_ttft) && (slo_tpot <= 0 || tpot <= slo_tpot) &&
           (slo_e2e <= 0 || e2el <= slo_e2e);
}

/* Class k's SLO: its own, else the run's. */
static void class_slo(const eng_metrics *m, int32_t k, double *ttft, double *tpot, double *e2e)
{
    const eng_class *c = &m->classes->c[k];
    *ttft = c->slo.ttft_ms > 0 ? c->slo.ttft_ms : m->slo_ttft_ms;
    *tpot = c->slo.tpot_ms > 0 ? c->slo.tpot_ms : m->slo_tpot_ms;
    *e2e = c->slo.e2e_ms > 0 ? c->slo.e2e_ms : m->slo_e2e_ms;
}

static void class_request(eng_metrics *m, const eng_request *rq, double ttft, double tpot,
                          double e2el)
{
    eng_class_metrics *c = &m->cls[rq->wclass];
    double st, sp, se;
    c->completed++;
    sim_samples_add(&c->ttft, ttft);
    sim_samples_add(&c->e2el, e2el);
    if (rq->output > 1)
        sim_samples_add(&c->tpot, tpot);
    class_slo(m, rq->wclass, &st, &sp, &se);
    c->good += meets(ttft, tpot, e2el, st, sp, se);
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

/* A finished request's TTFT, TPOT (0 for a single output token) and end-to-end latency, in ms. */
static void request_latencies(const eng_request *rq, double *ttft, double *tpot, double *e2el)
{
    *ttft = ms(rq->t_first_token - rq->t_arrival);
    *e2el = ms(rq->t_finish - rq->t_arrival);
    *tpot = rq->output > 1 ? ms(rq->t_finish - rq->t_first_token) / (rq->output - 1) : 0;
}

void eng_metrics_request(eng_metrics *m, const eng_request *rq)
{
    if (m->t_first_arrival < 0 || rq->t_arrival < m->t_first_arrival)
        m->t_first_arrival = rq->t_arrival;
    if (rq->status == ENG_RQ_REJECTED) {
        m->rejected++;
        if (m->cls)
            m->cls[rq->wclass].rejected++;
        return;
    }
    m->completed++;
    m->prompt_tokens += rq->prompt;
    m->prefix_hit_tokens += rq->cached_tokens;
    m->output_tokens += rq->output;
    if (rq->t_finish > m->t_last_finish)
        m->t_last_finish = rq->t_finish;
    double ttft, tpot, e2el;
    request_latencies(rq, &ttft, &tpot, &e2el);
    sim_samples_add(&m->ttft, ttft);
    sim_samples_add(&m->e2el, e2el);
    if (rq->output > 1)
        sim_samples_add(&m->tpot, tpot);
    sim_samples_add(&m->waiting, ms(rq->t_first_sched - rq->t_arrival));
    m->good += meets(ttft, tpot, e2el, m->slo_ttft_ms, m->slo_tpot_ms, m->slo_e2e_ms);
    if (m->cls)
        class_request(m, rq, ttft, tpot, e2el);
}

int eng_metrics_good(const eng_metrics *m, const eng_request *rq)
{
    if (rq->status == ENG_RQ_REJECTED)
        return 0;
    double ttft, tpot, e2el;
    request_latencies(rq, &ttft, &tpot, &e2el);
    return meets(ttft, tpot, e2el, m->slo_ttft_ms, m->slo_tpot_ms, m->slo_e2e_ms);
}

void eng_metrics_iteration_cpu(eng_metrics *m, int64_t cpu_ns, int64_t count)
{
    sim_samples_add_n(&m->sched, ms(cpu_ns), (size_t)count);
}

void eng_metrics_iterations_cpu_each(eng_metrics *m, int64_t cpu_ns, int64_t count)
{
    sim_samples_add_each(&m->sched, ms(cpu_ns), (size_t)count);
}

/* Folds the buckets before b into the peak and moves the window to start at b. */
static void tokens_advance(eng_metrics *m, int64_t b)
{
    int64_t k = b - m->tok_base;
    if (k <= 0)
        return;
    if (k > m->tok_cap)
        k = m->tok_cap;
    for (int64_t i = 0; i < k; i++)
        if (m->tok_win[i] > m->tok_peak)
            m->tok_peak = m->tok_win[i];
    if (k > 0) {
        memmove(m->tok_win, m->tok_win + k, (size_t)(m->tok_cap - k) * sizeof *m->tok_win);
        memset(m->tok_win + m->tok_cap - k, 0, (size_t)k * sizeof *m->tok_win);
    }
    m->tok_base = b;
}

void eng_metrics_tokens_put(eng_metrics *m, int64_t now_ns, int64_t end_ns, int64_t count)
{
    if (count <= 0 || end_ns < 0)
        return;
    /* MODEL: vLLM's max_output_tokens_per_s counts each token in the 1-second bucket
     * int(token_time - first start) and takes the fullest bucket (vllm/benchmarks/serve.py) */
    int64_t b = end_ns / 1000000000;
    if (now_ns >= 0)
        tokens_advance(m, now_ns / 1000000000);
    if (b - m->tok_base >= m->tok_cap) {
        int64_t n = m->tok_cap ? m->tok_cap : 16;
        while (n <= b - m->tok_base)
            n *= 2;
        m->tok_win = sim_xrealloc(m->tok_win, (size_t)n * sizeof *m->tok_win);
        memset(m->tok_win + m->tok_cap, 0, (size_t)(n - m->tok_cap) * sizeof *m->tok_win);
        m->tok_cap = n;
    }
    m->tok_win[b - m->tok_base] += count;
}

void eng_metrics_concurrency(eng_metrics *m, int64_t n)
{
    if (n > m->max_concurrent)
        m->max_concurrent = n;
}

void eng_metrics_transfer(eng_metrics *m, int64_t xfer_ns, int64_t wait_ns, double bytes, int held)
{
    m->transfers++;
    m->transfers_held += held != 0;
    m->xfer_bytes += bytes;
    sim_samples_add(&m->xfer, ms(xfer_ns));
    sim_samples_add(&m->xfer_wait, ms(wait_ns));
}

static int put(eng_metric *out, int n, const char *name, double v)
{
    snprintf(out[n].name, sizeof out[n].name, "%s", name);
    out[n].value = v;
    return n + 1;
}

static int put_dist(eng_metric *out, int n, const char *what, sim_samples *s)
{
    static const struct {
        const char *prefix;
        double p;
    } pct[] = {{"median", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}};
    enum { NPCT = sizeof pct / sizeof pct[0] };
    double ps[NPCT], v[NPCT];
    char name[40];
    snprintf(name, sizeof name, "mean_%s", what);
    n = put(out, n, name, sim_samples_mean(s));
    for (size_t i = 0; i < NPCT; i++)
        ps[i] = pct[i].p;
    sim_samples_percentiles(s, ps, NPCT, v);
    for (size_t i = 0; i < NPCT; i++) {
        snprintf(name, sizeof name, "%s_%s", pct[i].prefix, what);
        n = put(out, n, name, v[i]);
    }
    return n;
}

/* Kept in eng_metrics_summary's order (put_dist's percentiles for each distribution of the
 * latencies table, then std_ of its SLO metrics); tests/test_store.c checks the two agree. */
#define DIST(w) "mean_" w, "median_" w, "p90_" w, "p95_" w, "p99_" w
static const char *const metric_names[] = {"completed",
                                           "rejected",
                                           "total_input_tokens",
                                           "total_output_tokens",
                                           "duration",
                                           "request_throughput",
                                           "output_throughput",
                                           "total_token_throughput",
                                           "request_goodput",
                                           DIST("ttft_ms"),
                                           DIST("tpot_ms"),
                                           DIST("itl_ms"),
                                           DIST("e2el_ms"),
                                           DIST("waiting_ms"),
                                           DIST("sched_overhead_ms"),
                                           "prefix_hit_rate",
                                           "prefix_hit_tokens",
                                           "prefix_evicted_blocks",

                                           "failed",
                                           "std_ttft_ms",
                                           "std_tpot_ms",
                                           "std_itl_ms",
                                           "std_e2el_ms",
                                           "max_output_tokens_per_s",
                                           "max_concurrent_requests",
                                           "gpu_hours",
                                           "energy_kwh",
                                           "joules_per_output_token",
                                           "cost_usd",
                                           "cost_per_mtok_usd",
                                           "cost_per_output_mtok_usd"};
static const char *const pd_metric_names[] = {
    "prefill_gpus",         "decode_gpus",
    "prefill_utilization",  "decode_utilization",
    "kv_transfers",         "kv_transfers_held",
    "kv_transfer_bytes",    "kv_transfer_bytes_per_request",
    DIST("kv_transfer_ms"), DIST("kv_wait_ms")};
#undef DIST

const char *const *eng_metric_names(int *n)
{
    *n = (int)(sizeof metric_names / sizeof metric_names[0]);
    return metric_names;
}

const char *const *eng_pd_metric_names(int *n)
{
    *n = (int)(sizeof pd_metric_names / sizeof pd_metric_names[0]);
    return pd_metric_names;
}

/* The disaggregated run's metrics (pd_metric_names' order). */
static int put_pd(eng_metrics *m, eng_metric *out, int n, double dur)
{
    static const char *const pool[2] = {"prefill", "decode"};
    char name[40];
    for (int p = 0; p < 2; p++) {
        snprintf(name, sizeof name, "%s_gpus", pool[p]);
        n = put(out, n, name, (double)m->pool_gpus[p]);
    }
    for (int p = 0; p < 2; p++) {
        double cap = (double)m->pool_replicas[p] * dur * 1e9;
        snprintf(name, sizeof name, "%s_utilization", pool[p]);
        n = put(out, n, name, cap > 0 ? (double)m->pool_busy_ns[p] / cap : 0);
    }
    n = put(out, n, "kv_transfers", (double)m->transfers);
    n = put(out, n, "kv_transfers_held", (double)m->transfers_held);
    n = put(out, n, "kv_transfer_bytes", m->xfer_bytes);
    n = put(out, n, "kv_transfer_bytes_per_request",
            m->transfers ? m->xfer_bytes / (double)m->transfers : 0);
    n = put_dist(out, n, latencies[ENG_LAT_KV_TRANSFER].stem, &m->xfer);
    return put_dist(out, n, latencies[ENG_LAT_KV_WAIT].stem, &m->xfer_wait);
}

double eng_metrics_duration(const eng_metrics *m)
{
    return m->completed ? (double)(m->t_last_finish - m->t_first_arrival) / 1e9 : 0;
}

/* The fleet's metrics (metric_names' order after max_concurrent_requests). */
static int put_fleet(const eng_metrics *m, eng_metric *out, int n)
{
    double tokens = (double)(m->prompt_tokens + m->output_tokens),
           out_tok = (double)m->output_tokens;
    n = put(out, n, "gpu_hours", m->fleet_gpu_s / 3600);
    n = put(out, n, "energy_kwh", m->fleet_energy_j / 3.6e6);
    n = put(out, n, "joules_per_output_token", out_tok > 0 ? m->fleet_energy_j / out_tok : NAN);
    n = put(out, n, "cost_usd", m->fleet_cost_usd);
    n = put(out, n, "cost_per_mtok_usd", tokens > 0 ? m->fleet_cost_usd * 1e6 / tokens : NAN);
    return put(out, n, "cost_per_output_mtok_usd",
               out_tok > 0 ? m->fleet_cost_usd * 1e6 / out_tok : NAN);
}

int eng_metrics_summary(eng_metrics *m, eng_metric *out)
{
    double dur = eng_metrics_duration(m);
    double per_s = dur > 0 ? 1.0 / dur : 0;
    int n = 0;
    n = put(out, n, "completed", (double)m->completed);
    n = put(out, n, "rejected", (double)m->rejected);
    n = put(out, n, "total_input_tokens", (double)m->prompt_tokens);
    n = put(out, n, "total_output_tokens", (double)m->output_tokens);
    n = put(out, n, "duration", dur);
    n = put(out, n, "request_throughput", (double)m->completed * per_s);
    n = put(out, n, "output_throughput", (double)m->output_tokens * per_s);
    n = put(out, n, "total_token_throughput",
            (double)(m->prompt_tokens + m->output_tokens) * per_s);
    n = put(out, n, "request_goodput", (double)m->good * per_s);
    for (int i = 0; i < ENG_LAT_COUNT; i++)
        if (!(latencies[i].flags & ENG_LAT_PD))
            n = put_dist(out, n, latencies[i].stem, samples_of(m, (eng_lat_id)i));
    n = put(out, n, "prefix_hit_rate",
            m->prompt_tokens ? (double)m->prefix_hit_tokens / (double)m->prompt_tokens : 0);
    n = put(out, n, "prefix_hit_tokens", (double)m->prefix_hit_tokens);
    n = put(out, n, "prefix_evicted_blocks", (double)m->prefix_evictions);
    int64_t peak = m->tok_peak;
    for (int64_t b = 0; b < m->tok_cap; b++)
        peak = m->tok_win[b] > peak ? m->tok_win[b] : peak;
    n = put(out, n, "failed", (double)m->rejected);
    for (int i = 0; i < ENG_LAT_COUNT; i++) {
        char name[40];
        snprintf(name, sizeof name, "std_%s", latencies[i].stem);
        if (latencies[i].flags & ENG_LAT_SLO)
            n = put(out, n, name, sim_samples_std(samples_of(m, (eng_lat_id)i)));
    }
    n = put(out, n, "max_output_tokens_per_s", (double)peak);
    n = put(out, n, "max_concurrent_requests", (double)m->max_concurrent);
    n = put_fleet(m, out, n);
    if (m->pd)
        n = put_pd(m, out, n, dur);
    return n;
}

int eng_metrics_class_summary(eng_metrics *m, eng_metric *out, int n)
{
    double dur = eng_metrics_duration(m);
    for (int32_t k = 0; m->cls && k < m->classes->n; k++) {
        eng_class_metrics *c = &m->cls[k];
        double arrived = (double)(c->completed + c->rejected);
        const struct {
            const char *name;
            double v;
        } rows[] = {{"completed", (double)c->completed},
                    {"rejected", (double)c->rejected},
                    {"slo_attainment", arrived > 0 ? (double)c->good / arrived : NAN},
                    {"request_goodput", dur > 0 ? (double)c->good / dur : 0},
                    {"mean_ttft_ms", sim_samples_mean(&c->ttft)},
                    {"median_ttft_ms", sim_samples_percentile(&c->ttft, 50)},
                    {"p90_ttft_ms", sim_samples_percentile(&c->ttft, 90)},
                    {"p99_ttft_ms", sim_samples_percentile(&c->ttft, 99)},
                    {"mean_tpot_ms", sim_samples_mean(&c->tpot)},
                    {"p99_tpot_ms", sim_samples_percentile(&c->tpot, 99)},
                    {"p99_e2el_ms", sim_samples_percentile(&c->e2el, 99)}};
        for (size_t i = 0; i < sizeof rows / sizeof rows[0] && n < ENG_MAX_METRICS; i++) {
            snprintf(out[n].name, sizeof out[n].name, "class.%s.%s", m->classes->c[k].name,
                     rows[i].name);
            out[n++].value = rows[i].v;
        }
    }
    return n;
}
