/*
 * source.c: the workload source the engine pulls arrivals from, one at a time.
 *
 * Arrivals come from the scenario's process or from a trace's time column; lengths from the
 * length distributions, from joint (prompt, output) pairs, or from the trace's rows, read as
 * the run goes. Each purpose draws from its own random stream (arrivals, prompt, output, trace
 * pairs), all derived from the seed, so the workload never depends on the scheduler.
 *
 * Processes (times in seconds, converted to ns at the end):
 *   poisson, gamma, constant: a renewal process whose first request comes at t = 0, then gaps
 *     Exp(rate), Gamma(k = 1/cv^2, theta = cv^2/rate), or exactly 1/rate
 *   burst: every request at t = 0
 *   schedule: a Poisson process whose rate is piecewise constant (ramps, spikes), started at 0
 *   closed: `concurrency` clients all send at t = 0; each sends its next request
 *     think_time_ms after its previous one finished (or was rejected). With a fixed think time
 *     the ready times come in order, so they wait in a FIFO ring.
 * Synthetic lengths are clipped so that prompt <= context - 1 and prompt + output <= context
 * (the model's context, or memory.max_model_len). Trace lengths are replayed as recorded (the
 * engine rejects what can never fit, as a real server would); a zero length is raised to 1.
 * A clip of either kind counts the request once in scn_source_clipped().
 *
 * Times are checked before they become nanoseconds: an arrival after SCN_HORIZON_S (a process
 * at a tiny rate, a trace stretched by time_scale or rate) stops the run with an error rather
 * than overflowing int64.
 *
 * The source owns its generators, samplers, pairs table and trace reader.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "rng.h"
#include "scn_int.h"

struct scn_source {
    scn_workload w;
    int32_t ctx;   /* context limit for synthetic lengths; 0 = none */
    int64_t limit; /* requests to emit; 0 = until the trace ends */
    gsl_rng *g_arr, *g_prompt, *g_output, *g_pairs;
    /* the Poisson arrivals' and the pairs' streams drawn inline (their GSL generators above are
     * then never drawn: in debug builds they draw beside them, to compare) */
    sim_mt m_arr, m_pairs;
    scn_sampler *ps, *os;
    scn_pairs *pairs;
    scn_trace_reader *tr;
    scn_sessions_src *ss; /* multi-turn sessions, or NULL */
    gsl_rng *g_prefix;    /* shared prefixes: which group */
    eng_segment seg[2];   /* shared prefix + the request's own part */
    eng_segment *hseg;    /* a trace row's hash_ids as segments */
    int32_t caphseg;
    /* the replayed rows' hash_ids prefixes (chained hashes, never 0) and how many rows hold each
     * (2: two or more), open addressing; NULL: not counted (every row's content may be shared) */
    uint64_t *pfx;
    uint8_t *pfxn;
    int64_t pfxcap, pfxused;
    int tails; /* count them: not where offload tiers keep the caches' blocks (no use there) */
    int timed; /* arrivals come from the trace */
    int64_t emitted, clipped, skipped;
    /* synthetic arrivals */
    double t_s; /* time of the latest arrival, s */
    int step;   /* schedule: the current step */
    /* closed loop */
    int64_t *ready; /* ring of client ready times, ns */
    int32_t head, nready;
    /* trace timing */
    int have_first;
    int64_t first_raw;      /* raw time of the trace's first row, ns */
    int64_t base_raw;       /* raw time of the first replayed row, ns */
    int64_t win_lo, win_hi; /* window, ns after the first row; hi < 0 = open */
    double factor;          /* re-based ns -> replay ns */
    /* trace.repeat: the copy being replayed, its rows so far, its latest arrival (ns after its
     * first) and the shift of its arrivals (ns) */
    int64_t copy, copy_n, copy_last, shift;
};

/* ---- trace rows ---- */

/* A row's hash_ids must cover its prompt: ceil(prompt / hash_block) of them. */
static int check_hashes(const scn_source *s, scn_trace_reader *tr, const scn_trace_row *row,
                        sim_err *err)
{
    int64_t hb = s->w.trace.hash_block;
    if (hb <= 0 || row->nhash < 0 || row->nhash == (row->prompt + hb - 1) / hb)
        return 0;
    sim_errf(err,
             "%s:%lld: bad row: hash_ids has %d ids, but input_length %lld needs %lld (one per "
             "%lld tokens)",
             s->w.trace.path, (long long)scn_trace_line(tr), row->nhash, (long long)row->prompt,
             (long long)((row->prompt + hb - 1) / hb), (long long)hb);
    return -1;
}

/* The next good row: 1, 0 at the end, -1 with err for a bad row (unless skipping), -2 I/O. */
static int good_row(scn_source *s, scn_trace_reader *tr, scn_trace_row *row, int64_t *skipped,
                    sim_err *err)
{
    for (;;) {
        int rc = scn_trace_next(tr, row, err);
        if (rc == 1 && check_hashes(s, tr, row, err))
            rc = -1;
        if (rc == -1 && s->w.trace.skip_bad_rows) {
            (*skipped)++;
            continue;
        }
        return rc;
    }
}

/* The next row inside the window: 1, 0 past its end, <0 on error. Sets *rel to the row's time
 * after the trace's first row (ns). */
static int window_row(scn_source *s, scn_trace_reader *tr, scn_trace_row *row, int *have_first,
                      int64_t *first_raw, int64_t *skipped, sim_err *err)
{
    for (;;) {
        int rc = good_row(s, tr, row, skipped, err);
        if (rc != 1 || !s->timed)
            return rc;
        if (!*have_first) {
            *have_first = 1;
            *first_raw = row->t_ns;
        }
        int64_t rel = row->t_ns - *first_raw;
        if (rel < s->win_lo)
            continue;
        if (s->win_hi >= 0 && rel >= s->win_hi)
            return 0;
        return 1;
    }
}

/* The hash of ids[0..k] from that of ids[0..k) (h, 0 for none): never 0. A collision can only
 * count a prefix as shared that is not (a row's content kept in the table as before). */
static uint64_t pfx_next(uint64_t h, int64_t id)
{
    uint64_t x = (h ^ (uint64_t)id) * UINT64_C(0x9e3779b97f4a7c15) + UINT64_C(0x7f4a7c159e3779b9);
    x ^= x >> 29;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 32;
    return x ? x : 1;
}

/* The slot of prefix hash h in s->pfx: where it is, or the empty one where it would go. */
static int64_t pfx_slot(const scn_source *s, uint64_t h)
{
    int64_t mask = s->pfxcap - 1, i = (int64_t)(h & (uint64_t)mask);
    while (s->pfx[i] && s->pfx[i] != h)
        i = (i + 1) & mask;
    return i;
}

static void pfx_grow(scn_source *s)
{
    uint64_t *old = s->pfx;
    uint8_t *oldn = s->pfxn;
    int64_t oldcap = s->pfxcap;
    s->pfxcap = oldcap ? 2 * oldcap : 4096;
    s->pfx = sim_xcalloc((size_t)s->pfxcap, sizeof *s->pfx);
    s->pfxn = sim_xcalloc((size_t)s->pfxcap, sizeof *s->pfxn);
    for (int64_t i = 0; i < oldcap; i++)
        if (old[i]) {
            int64_t j = pfx_slot(s, old[i]);
            s->pfx[j] = old[i];
            s->pfxn[j] = oldn[i];
        }
    free(old);
    free(oldn);
}

static void pfx_count(scn_source *s, const scn_trace_row *row)
{
    uint64_t h = 0;
    for (int32_t k = 0; k < row->nhash; k++) {
        if (2 * (s->pfxused + 1) > s->pfxcap)
            pfx_grow(s);
        h = pfx_next(h, row->hash[k]);
        int64_t i = pfx_slot(s, h);
        s->pfxused += s->pfx[i] == 0;
        s->pfx[i] = h;
        s->pfxn[i] += s->pfxn[i] < 2;
    }
}

/* Tokens at the end of row's prompt that no other replayed row holds: those from its first id
 * whose prefix (that id and every one before it) only this row has. 0: none, or not counted. */
static int32_t pfx_own_tail(const scn_source *s, const scn_trace_row *row)
{
    if (!s->pfx)
        return 0;
    uint64_t h = 0;
    for (int32_t k = 0; k < row->nhash; k++) {
        h = pfx_next(h, row->hash[k]);
        if (s->pfxn[pfx_slot(s, h)] < 2)
            return (int32_t)(row->prompt - (int64_t)k * s->w.trace.hash_block);
    }
    return 0;
}

/* One streaming pass over the rows a copy replays (copies never share content), before the
 * replay: the window's native rate into *rate when rate is not NULL (rescaling to a target rate
 * needs it), and with count, which content the rows share (pfx_count). A row that cannot be read
 * is an error where the rate is wanted; otherwise it leaves the count off (the replay reports it
 * where it comes). */
static int prepass(scn_source *s, const scn_trace_spec *sp, double *rate, int count, sim_err *err)
{
    sim_err ignored = {0};
    sim_err *e = rate ? err : &ignored;
    scn_trace_reader *tr = scn_trace_open(sp, e);
    if (!tr)
        return rate ? -1 : 0;
    scn_trace_row row;
    int have_first = 0, rc = 1;
    int64_t first = 0, skipped = 0, n = 0, t0 = 0, t1 = 0;
    while ((s->limit == 0 || n < s->limit) &&
           (rc = window_row(s, tr, &row, &have_first, &first, &skipped, e)) == 1) {
        if (n++ == 0)
            t0 = row.t_ns;
        t1 = row.t_ns;
        if (count)
            pfx_count(s, &row);
    }
    scn_trace_close(tr);
    if (rc < 0 && (s->limit == 0 || n < s->limit)) {
        free(s->pfx);
        free(s->pfxn);
        s->pfx = NULL;
        s->pfxn = NULL;
        return rate ? -1 : 0;
    }
    if (!rate)
        return 0;
    if (n < 2 || t1 <= t0)
        return sim_errf(err, "%s: cannot rescale to a rate: the replayed rows span no time",
                        sp->path);
    *rate = (double)(n - 1) / ((double)(t1 - t0) / 1e9);
    return 0;
}

static int open_trace(scn_source *s, sim_err *err)
{
    const scn_trace *t = &s->w.trace;
    scn_trace_spec sp = scn_trace_spec_of(t);
    s->tr = scn_trace_open(&sp, err);
    if (!s->tr)
        return -1;
    s->timed = scn_trace_has_time(s->tr);
    s->win_lo = (int64_t)llround(t->start_s * 1e9);
    s->win_hi = t->duration_s > 0 ? s->win_lo + (int64_t)llround(t->duration_s * 1e9) : -1;
    s->factor = t->time_scale > 0 ? t->time_scale : 1.0;
    int rescale = s->timed && t->rate > 0;
    int count = s->tails && scn_trace_has_hashes(s->tr) && t->hash_block > 0;
    double native = 0;
    if ((rescale || count) && prepass(s, &sp, rescale ? &native : NULL, count, err))
        return -1;
    if (rescale)
        s->factor = native / t->rate;
    return 0;
}

/* MODEL: trace.repeat: the next copy of the window starts one mean gap after the last one's last
 * arrival: shift += span + span / (n - 1), span its last arrival after its first (replay ns), n
 * its rows (a copy of one row: no gap); the trace is read again from its start, nothing kept. */
static int next_copy(scn_source *s, sim_err *err)
{
    s->shift += s->copy_last + (s->copy_n > 1 ? s->copy_last / (s->copy_n - 1) : 0);
    s->copy++;
    s->copy_n = s->copy_last = 0;
    s->have_first = 0;
    scn_trace_close(s->tr);
    scn_trace_spec sp = scn_trace_spec_of(&s->w.trace);
    s->tr = scn_trace_open(&sp, err);
    return s->tr ? 0 : -1;
}

/* The next row of the replay, the copies of trace.repeat back to back: as window_row. */
static int replay_row(scn_source *s, scn_trace_row *row, sim_err *err)
{
    int rc = window_row(s, s->tr, row, &s->have_first, &s->first_raw, &s->skipped, err);
    if (rc != 0 || s->copy + 1 >= s->w.trace.repeat || s->copy_n == 0)
        return rc;
    if (next_copy(s, err))
        return -1;
    return window_row(s, s->tr, row, &s->have_first, &s->first_raw, &s->skipped, err);
}

/* ---- creation ---- */

scn_source *scn_source_new(const scn_scenario *sc, uint64_t seed, sim_err *err)
{
    return scn_source_new_cached(sc, seed, NULL, err);
}

scn_source *scn_source_new_cached(const scn_scenario *sc, uint64_t seed, scn_cache *cache,
                                  sim_err *err)
{
    scn_source *s = sim_xcalloc(1, sizeof *s);
    s->w = sc->workload;
    const scn_workload *w = &s->w;
    s->ctx = sc->engine.max_model_len > 0 ? sc->engine.max_model_len : sc->engine.model.max_context;
    s->limit = w->num_requests;
    if (w->trace.present && w->trace.limit > 0 && (s->limit == 0 || w->trace.limit < s->limit))
        s->limit = w->trace.limit;
    s->g_arr = sim_rng_new_stream(seed, SIM_STREAM_ARRIVALS);
    s->g_prompt = sim_rng_new_stream(seed, SIM_STREAM_PROMPT);
    s->g_output = sim_rng_new_stream(seed, SIM_STREAM_OUTPUT);
    s->g_pairs = sim_rng_new_stream(seed, SIM_STREAM_TRACE);
    sim_mt_stream(&s->m_arr, seed, SIM_STREAM_ARRIVALS);
    sim_mt_stream(&s->m_pairs, seed, SIM_STREAM_TRACE);
    s->t_s = -1;
    s->tails = sc->engine.offload.ntiers == 0;
    if (w->sessions.present) {
        if (!(s->ss = scn_sessions_new(w, s->ctx, seed, cache, err)))
            goto fail;
        return s;
    }
    if (w->prefix.present)
        s->g_prefix = sim_rng_new_stream(seed, SIM_STREAM_CLIENT);
    if (w->trace.present) {
        if (open_trace(s, err))
            goto fail;
    } else if (w->lengths.present) {
        if (!(s->pairs = scn_pairs_new(&w->lengths, cache, err)))
            goto fail;
    } else {
        s->ps = scn_sampler_new(&w->prompt, "workload.prompt_tokens", 0, cache, err);
        s->os = s->ps ? scn_sampler_new(&w->output, "workload.output_tokens", 1, cache, err) : NULL;
        if (!s->os)
            goto fail;
    }
    if (!s->timed && w->arrival.kind == SCN_ARR_CLOSED) {
        int32_t n = w->arrival.concurrency;
        s->ready = sim_xcalloc((size_t)n, sizeof *s->ready);
        s->nready = n;
        /* MODEL: a ramp starts client i of N at i x ramp_up_s / N (aiperf
         * --concurrency-ramp-duration; vLLM bench serve --ramp-up-strategy linear) */
        for (int32_t i = 0; i < n; i++)
            s->ready[i] = (int64_t)llround(w->arrival.ramp_up_s * 1e9 * i / n);
    }
    return s;
fail:
    scn_source_free(s);
    return NULL;
}

void scn_source_free(scn_source *s)
{
    if (!s)
        return;
    gsl_rng_free(s->g_arr);
    gsl_rng_free(s->g_prompt);
    gsl_rng_free(s->g_output);
    gsl_rng_free(s->g_pairs);
    scn_sampler_free(s->ps);
    scn_sampler_free(s->os);
    scn_pairs_free(s->pairs);
    scn_trace_close(s->tr);
    scn_sessions_free(s->ss);
    if (s->g_prefix)
        gsl_rng_free(s->g_prefix);
    SIM_FREE_ALL(s->hseg, s->pfx, s->pfxn, s->ready, s);
}

/* ---- arrival times ---- */

/* Schedule: advances t_s by one arrival of the piecewise-constant Poisson process. 0, or -1
 * when the rate stays 0 forever. */
static int schedule_next(scn_source *s)
{
    const scn_arrival *a = &s->w.arrival;
    double t = s->t_s < 0 ? 0 : s->t_s, e = gsl_ran_exponential(s->g_arr, 1.0);
    for (;;) {
        double end = s->step + 1 < a->nsteps ? a->step_start_s[s->step + 1] : INFINITY;
        double r = a->step_rate[s->step];
        if (r > 0 && t + e / r < end) {
            s->t_s = t + e / r;
            return 0;
        }
        if (isinf(end))
            return -1;
        e -= r * (end - t);
        t = end;
        s->step++;
    }
}

/* to_ns of a negative time, or -1 with err for one past the horizon (or not a number). */
static __attribute__((noinline)) int to_ns_rest(const scn_source *s, double ns, const char *what,
                                                int64_t *out, sim_err *err)
{
    if (!(ns <= SCN_HORIZON_S * 1e9))
        return sim_errf(err,
                        "%s: request %lld would arrive at %.6g s, past the simulated horizon of "
                        "%.0e s (time is int64 nanoseconds)",
                        what, (long long)s->emitted + 1, ns / 1e9, SCN_HORIZON_S);
    *out = (int64_t)llround(ns);
    return 0;
}

/* ns (a double, as computed) rounded into *out, halves away from zero; -1 with err when it lies
 * past the horizon (`what` names the cause). A time from 0 to the horizon (every arrival's) is
 * rounded here inline, without the libm call (ns - i is exact); the rest by to_ns_rest. */
static inline int to_ns(const scn_source *s, double ns, const char *what, int64_t *out,
                        sim_err *err)
{
    if (ns >= 0 && ns <= SCN_HORIZON_S * 1e9) {
        int64_t i = (int64_t)ns;
        *out = ns - (double)i >= 0.5 ? i + 1 : i;
        return 0;
    }
    return to_ns_rest(s, ns, what, out, err);
}

/* gsl_ran_exponential(g_arr, mu) drawn inline: -mu log1p(-u) of a uniform u, as GSL draws it. */
static double exponential(scn_source *s, double mu)
{
    double e = -mu * log1p(-sim_mt_uniform(&s->m_arr));
    SIM_ASSERT(NULL, e == gsl_ran_exponential(s->g_arr, mu));
    return e;
}

/* The next synthetic arrival (ns): ENG_SRC_OK, ENG_SRC_LATER (closed loop, every client
 * waiting), ENG_SRC_END (a schedule whose rate stays 0) or ENG_SRC_ERROR (past the horizon). */
static int next_time(scn_source *s, int64_t now, int64_t *t, sim_err *err)
{
    const scn_arrival *a = &s->w.arrival;
    switch (a->kind) {
    case SCN_ARR_CLOSED:
        if (s->nready == 0)
            return ENG_SRC_LATER;
        *t = s->ready[s->head];
        if (*t > (int64_t)(SCN_HORIZON_S * 1e9)) {
            to_ns(s, (double)*t, "workload.arrival.think_time_ms", t, err); /* the message */
            return ENG_SRC_ERROR;
        }
        s->head = (s->head + 1) % a->concurrency;
        s->nready--;
        return ENG_SRC_OK;
    case SCN_ARR_BURST:
        *t = 0;
        return ENG_SRC_OK;
    case SCN_ARR_SCHEDULE:
        if (schedule_next(s))
            return ENG_SRC_END;
        break;
    case SCN_ARR_CONSTANT:
        s->t_s = (double)s->emitted / a->rate;
        break;
    case SCN_ARR_GAMMA:
        if (s->t_s < 0) {
            s->t_s = 0;
        } else {
            double k = 1.0 / (a->cv * a->cv);
            s->t_s += gsl_ran_gamma(s->g_arr, k, 1.0 / (a->rate * k));
        }
        break;
    case SCN_ARR_POISSON:
        s->t_s = s->t_s < 0 ? 0 : s->t_s + exponential(s, 1.0 / a->rate);
        break;
    default: /* the loader knows no other process: never priced as another one */
        SIM_CHECK(NULL, !"an arrival process the source does not know");
    }
    return to_ns(s, s->t_s * 1e9, "workload.arrival", t, err) ? ENG_SRC_ERROR : ENG_SRC_OK;
}

/* ---- lengths ---- */

static void clip_context(const scn_source *s, int64_t *p, int64_t *o, int *clipped)
{
    if (s->ctx < 2)
        return;
    if (*p > s->ctx - 1) {
        *p = s->ctx - 1;
        *clipped = 1;
    }
    if (*p + *o > s->ctx) {
        *o = s->ctx - *p;
        *clipped = 1;
    }
}

static void raise_zero(int64_t *v, int *clipped)
{
    if (*v < 1) {
        *v = 1;
        *clipped = 1;
    }
    if (*v > INT32_MAX) {
        *v = INT32_MAX;
        *clipped = 1;
    }
}

/* A content id: kind and number mixed (no two kinds share ids). */
static uint64_t seg_id(uint64_t kind, uint64_t n)
{
    uint64_t x = kind * UINT64_C(0x9e3779b97f4a7c15) ^ (n + UINT64_C(0x632bd3f9a1));
    x ^= x >> 31;
    x *= UINT64_C(0xd6e8feb86659fd93);
    return x ^ (x >> 32);
}

/* MODEL: Mooncake's hash_ids are remapped hashes of 512-token prompt blocks (prefix-chained: equal
 * leading ids mean a shared prefix): the prompt is one segment per id, the last one the rest.
 * Each copy of trace.repeat has content of its own (copy 0 the ids as recorded): prefixes are
 * shared within a copy as in the trace, never across copies. */
static void hash_segments(scn_source *s, const scn_trace_row *row, int64_t copy)
{
    if (row->nhash > s->caphseg) {
        s->caphseg = row->nhash;
        s->hseg = sim_xrealloc(s->hseg, (size_t)s->caphseg * sizeof *s->hseg);
    }
    int64_t hb = s->w.trace.hash_block, left = row->prompt;
    uint64_t kind = UINT64_C(0x686173685f6964) + (uint64_t)copy;
    for (int32_t i = 0; i < row->nhash; i++) {
        int64_t len = left < hb ? left : hb;
        s->hseg[i] = (eng_segment){seg_id(kind, (uint64_t)row->hash[i]), (int32_t)len};
        left -= len;
    }
}

static int src_next(void *st, int64_t now, eng_arrival *out, sim_err *err)
{
    scn_source *s = st;
    int64_t t = 0, p, o;
    int clipped = 0;
    if (s->limit > 0 && s->emitted >= s->limit)
        return ENG_SRC_END;
    if (s->ss) {
        eng_arrival a;
        memset(&a, 0, sizeof a);
        int rc = scn_sessions_next(s->ss, now, &a);
        if (rc == ENG_SRC_OK || rc == ENG_SRC_LATER)
            *out = a;
        s->emitted += rc == ENG_SRC_OK;
        return rc;
    }
    /* a fresh arrival's content (none unless set below); out is left alone unless one is
     * returned, and then written whole */
    const eng_segment *seg = NULL;
    int32_t nseg = 0, own_tail = 0;
    if (!s->timed) {
        int rc = next_time(s, now, &t, err);
        if (rc != ENG_SRC_OK)
            return rc;
    }
    if (s->tr) {
        scn_trace_row row;
        int rc = replay_row(s, &row, err);
        if (rc < 0)
            return ENG_SRC_ERROR;
        if (rc == 0)
            return ENG_SRC_END;
        if (s->timed) {
            if (s->copy_n == 0)
                s->base_raw = row.t_ns;
            int64_t rel = row.t_ns - s->base_raw;
            const char *key = s->w.trace.rate > 0 ? "workload.trace.rate (rescaled)"
                                                  : "workload.trace.time_scale";
            if (s->factor != 1.0 && to_ns(s, (double)rel * s->factor, key, &rel, err)) {
                sim_err_prefix(err, "%s:%lld", s->w.trace.path, (long long)scn_trace_line(s->tr));
                return ENG_SRC_ERROR;
            }
            s->copy_last = rel;
            if (s->shift > 0 &&
                to_ns(s, (double)rel + (double)s->shift, "workload.trace.repeat", &rel, err))
                return ENG_SRC_ERROR;
            t = rel;
        }
        s->copy_n++;
        p = row.prompt;
        o = row.output;
        raise_zero(&p, &clipped);
        raise_zero(&o, &clipped);
        if (row.nhash > 0 && s->w.trace.hash_block > 0 && p == row.prompt) {
            hash_segments(s, &row, s->copy);
            seg = s->hseg;
            nseg = row.nhash;
            own_tail = pfx_own_tail(s, &row);
        }
    } else {
        if (s->pairs) {
            scn_pairs_draw_mt(s->pairs, &s->m_pairs, &p, &o);
#ifdef SIM_DEBUG
            int64_t dp, dout;
            scn_pairs_draw(s->pairs, s->g_pairs, &dp, &dout);
            SIM_CHECK(NULL, dp == p && dout == o);
#endif
        } else {
            p = scn_sampler_draw(s->ps, s->g_prompt, &clipped);
            o = scn_sampler_draw(s->os, s->g_output, &clipped);
        }
        int64_t own = p;
        if (s->w.prefix.present)
            p += s->w.prefix.tokens;
        raise_zero(&p, &clipped);
        raise_zero(&o, &clipped);
        clip_context(s, &p, &o, &clipped);
        if (s->w.prefix.present && p > s->w.prefix.tokens) {
            own = p - s->w.prefix.tokens;
            int64_t g =
                (int64_t)gsl_rng_uniform_int(s->g_prefix, (unsigned long)s->w.prefix.groups);
            s->seg[0] =
                (eng_segment){seg_id(UINT64_C(0x707265666978), (uint64_t)g), s->w.prefix.tokens};
            s->seg[1] =
                (eng_segment){seg_id(UINT64_C(0x6f776e), (uint64_t)s->emitted), (int32_t)own};
            seg = s->seg;
            nseg = 2;
        }
    }
    s->clipped += clipped;
    s->emitted++;
    *out = (eng_arrival){.t = t > now ? t : now,
                         .prompt = (int32_t)p,
                         .output = (int32_t)o,
                         .seg = seg,
                         .nseg = nseg,
                         .own_tail = own_tail};
    return ENG_SRC_OK;
}

static void src_done(void *st, int64_t now, const eng_request *rq)
{
    scn_source *s = st;
    const scn_arrival *a = &s->w.arrival;
    if (s->ss) {
        scn_sessions_done(s->ss, now, rq);
        return;
    }
    if (!s->ready || s->nready >= a->concurrency)
        return;
    int64_t think = (int64_t)llround(a->think_time_ms * 1e6);
    s->ready[(s->head + s->nready) % a->concurrency] = now + think;
    s->nready++;
}

static const eng_source_ops source_ops = {.next = src_next, .on_done = src_done};

const eng_source_ops *scn_source_ops(void)
{
    return &source_ops;
}

int64_t scn_source_clipped(const scn_source *s)
{
    return s->clipped + (s->ss ? scn_sessions_clipped(s->ss) : 0);
}

int64_t scn_source_skipped(const scn_source *s)
{
    return s->skipped;
}

int64_t scn_source_emitted(const scn_source *s)
{
    return s->emitted;
}
