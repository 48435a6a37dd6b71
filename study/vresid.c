/*
 * vresid.c: the TTFT residual of a serving set in decode steps and in closed-loop gaps (see
 * study_validate.h, study_vset_residuals): `llmsim validate SET --residuals`.
 *
 * A mechanism that the model lacks leaves its signature in the residual, measured TTFT less
 * predicted. A harness that takes a later chunk than the first token's as the first response
 * (an empty role chunk, tokens held back by a reasoning parser or a detokenizer, streamed in
 * batches) adds a whole number of decode steps, the same for every output length; a client
 * that waits for another request to finish before its own is served adds the closed loop's
 * time between completions, which grows with the output length. The report gives the residual
 * in both units so a reader can tell them apart.
 *
 * It also tells time spent in the steps from time spent outside them. Rows that differ only in
 * the output length share their prefills: while a request decodes, each of the other clients'
 * new requests adds one mixed step (a prefill with decodes) to its steps, at any output length,
 * so a mixed step's extra time shows in TPOT over the output length. From two such rows, the
 * excess of a mixed step over its prediction is (measured TPOT difference - predicted TPOT
 * difference) / ((clients - 1) x (1 / (shorter output - 1) - 1 / (longer output - 1))), the
 * clients' arrivals taken as spread apart (where they come in lock-step rounds, fewer mixed
 * steps fall within a request's decode and the figure understates the excess). A TTFT residual
 * that the mixed step does not carry is a wait: steps of others, or time outside the steps.
 *
 * The same pairs split the closed loop's cycle, the time a client takes per request, TTFT +
 * (output - 1) x TPOT (no think time), into decode steps and the rest. Each cycle holds one
 * request of every client, so its prefills (and any time per request outside the steps) are the
 * same at both output lengths, and the cycles differ by (output difference) decode steps of the
 * full batch, however the scheduler arranges the prefills (separate prefill steps or mixed
 * ones, clients in lock-step or spread apart). So one decode step takes (cycle difference) /
 * (output difference), measured and predicted, and the rest of the shorter row's cycle (the
 * clients' prefills, the waits between, time per request) is its cycle less (output - 1) such
 * steps. Their predicted / measured - 1 say whether a TPOT error is the decode step's price or
 * the prefills' (the longer row's later steps read longer contexts, a drift that grows with the
 * output difference; a rest that comes out negative is not counted).
 *
 * The same pairs count the seats a closed loop is short of its clients. With C clients and C - k
 * places to run (a batch limit, a request that holds a place, KV for fewer), k clients wait at
 * any time: a request waits k / C of the cycle for a place, however long the output (cycle = C x
 * (time running) / (C - k), wait = cycle - time running = k x cycle / C). So between two rows
 * that differ only in the output length, the TTFT residual grows by k x (measured cycle
 * difference) / C: the pair's (measured - predicted TTFT difference) / (measured cycle
 * difference / C) reads k, 0 where the prediction has the places the engine had. A wait of a
 * fixed time, a whole number of decode steps or a prefill priced wrong is the same at both output
 * lengths and reads 0.
 *
 * The residual is also given by prompt length: time per request outside the engine (a front
 * end, a submission or response path) is the same at every length, a prefill priced too fast
 * grows with it, and a prefill priced too slowly shrinks with it. Beside it goes the residual of
 * the request's whole time, arrival to last token: the cycle above, TTFT + (output tokens - 1) x
 * TPOT. Time the model leaves out adds to both: a wait before the engine lengthens the request as
 * much as its first token, a prefill priced too fast more (the other clients' prefills within its
 * decode too). In a closed loop whose GPU never idles, a request's whole time is one round of the
 * loop, every client's prefill and the decode steps between; how many of the other clients'
 * prefills come before a request's own and how many during its decode moves time between its
 * TTFT and its TPOT and leaves the whole unchanged. Where the decode steps are priced right
 * (TPOT's own error is in the whole too), a TTFT residual with no residual of the whole is
 * therefore the order of the prefills, not time left out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

/* A residual of at least FEW_LO and under FEW_HI steps is "a few steps"; within NEAR of a whole
 * number it is near a whole step (half of such rows are, by chance, when fractions are spread
 * evenly). */
#define FEW_LO 0.75
#define FEW_HI 8.5
#define NEAR 0.25

static int metric_named(const study_vset *v, const char *name)
{
    for (int m = 0; m < v->nmetrics; m++)
        if (strcmp(v->metric[m].name, name) == 0)
            return m;
    return -1;
}

/* The value of the row's last override of key, NAN when none or not a number. */
static double override_of(const study_vrow *r, const char *key)
{
    size_t kl = strlen(key);
    for (int i = r->nsets - 1; i >= 0; i--) {
        const char *s = r->sets[i];
        if (strncmp(s, key, kl) != 0 || s[kl] != '=')
            continue;
        char *end;
        double x = strtod(s + kl + 1, &end);
        return end != s + kl + 1 && *end == '\0' ? x : NAN;
    }
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The residual of row r in ms, steps and gaps (NAN where unknown); 0 when the row has none. */
static int residual_of(const study_vrow *r, int ttft, int tpot, double *ms, double *steps,
                       double *gaps)
{
    if (r->status != STUDY_V_OK || !isfinite(r->measured[ttft]) || !isfinite(r->predicted[ttft]) ||
        !isfinite(r->measured[tpot]) || r->measured[tpot] <= 0)
        return 0;
    *ms = r->measured[ttft] - r->predicted[ttft];
    *steps = *ms / r->measured[tpot];
    double clients = override_of(r, "workload.arrival.concurrency");
    double osl = override_of(r, "workload.output_tokens");
    double gap = osl * r->measured[tpot] / clients;
    *gaps = isfinite(gap) && gap > 0 ? *ms / gap : NAN;
    return 1;
}

/* Whether an override is one of those that follow the output length (the set derives the
 * model length from it). */
static int follows_osl(const char *set)
{
    return strncmp(set, "workload.output_tokens=", 23) == 0 ||
           strncmp(set, "memory.max_model_len=", 21) == 0;
}

/* Whether rows a and b differ only in their output length: the same overrides in order, but
 * for those that follow it. */
static int osl_siblings(const study_vrow *a, const study_vrow *b)
{
    if (a->nsets != b->nsets || strcmp(a->group, b->group) != 0)
        return 0;
    for (int k = 0; k < a->nsets; k++) {
        const char *x = a->sets[k], *y = b->sets[k];
        size_t kl = strcspn(x, "=");
        if (strcmp(x, y) != 0 && (!follows_osl(x) || strncmp(x, y, kl + 1) != 0))
            return 0;
    }
    return 1;
}

/* What a pair of rows tells (see the head of this file). */
enum { PAIR_MIXED, PAIR_DECODE, PAIR_REST, PAIR_SEATS, NPAIR };

/* The closed loop's cycle of row r, measured (m = 1) or predicted, for out output tokens. */
static double cycle_of(const study_vrow *r, int m, int ttft, int tpot, double out)
{
    const double *x = m ? r->measured : r->predicted;
    return x[ttft] + (out - 1) * x[tpot];
}

/* The decode step's (rest 0) or the rest of the cycle's (rest 1) predicted / measured - 1 that
 * rows a and b (b with the longer output oa < ob) imply; NAN when they cannot tell. */
static double cycle_error(const study_vrow *a, const study_vrow *b, int ttft, int tpot, double oa,
                          double ob, int rest)
{
    double v[2];
    for (int m = 0; m < 2; m++) {
        double ca = cycle_of(a, m, ttft, tpot, oa), cb = cycle_of(b, m, ttft, tpot, ob);
        double step = (cb - ca) / (ob - oa);
        v[m] = rest ? ca - (oa - 1) * step : step;
    }
    return v[1] > 0 && v[0] > 0 ? v[0] / v[1] - 1 : NAN;
}

/* The seats short of the clients that rows a and b (b with the longer output ob > oa) imply
 * (see the head of this file); NAN when they cannot tell. */
static double seats_short(const study_vrow *a, const study_vrow *b, int ttft, int tpot, double oa,
                          double ob, double clients)
{
    double cycle = cycle_of(b, 1, ttft, tpot, ob) - cycle_of(a, 1, ttft, tpot, oa);
    double grown =
        (b->measured[ttft] - a->measured[ttft]) - (b->predicted[ttft] - a->predicted[ttft]);
    return cycle > 0 ? grown / (cycle / clients) : NAN;
}

/* What rows a and b (b with the longer output) imply of kind `what`: the excess of a mixed
 * step's time over its prediction in ms, a cycle_error or the seats short; NAN when they cannot
 * tell. */
static double pair_value(const study_vrow *a, const study_vrow *b, int ttft, int tpot, int what)
{
    double clients = override_of(a, "workload.arrival.concurrency");
    double oa = override_of(a, "workload.output_tokens");
    double ob = override_of(b, "workload.output_tokens");
    if (!(oa > 1) || !(ob > oa) || b->status != STUDY_V_OK)
        return NAN;
    if (what == PAIR_DECODE || what == PAIR_REST) /* one client's cycle splits as well */
        return cycle_error(a, b, ttft, tpot, oa, ob, what == PAIR_REST);
    if (!(clients > 1))
        return NAN;
    if (what == PAIR_SEATS)
        return seats_short(a, b, ttft, tpot, oa, ob, clients);
    double measured = a->measured[tpot] - b->measured[tpot];
    double predicted = a->predicted[tpot] - b->predicted[tpot];
    return (measured - predicted) / ((clients - 1) * (1 / (oa - 1) - 1 / (ob - 1)));
}

/* The index of row i's sibling of the longest output (osl_siblings), -1 when none. */
static int sibling_of(const study_vset *v, int i)
{
    const study_vrow *r = &v->rows[i];
    int best = -1;
    double longest = override_of(r, "workload.output_tokens");
    for (int j = 0; j < v->nrows; j++) {
        double o = override_of(&v->rows[j], "workload.output_tokens");
        if (j != i && o > longest && osl_siblings(r, &v->rows[j])) {
            best = j;
            longest = o;
        }
    }
    return best;
}

/* For each row of group g (NULL: every row) and its sibling of the longest output, what the
 * pair implies of each kind (PAIR_*) into out[kind], sorted; their counts into n[kind]. */
static void pairs_of(const study_vset *v, const char *g, int ttft, int tpot, double *out[NPAIR],
                     int n[NPAIR])
{
    memset(n, 0, NPAIR * sizeof *n);
    for (int i = 0; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        if ((g && strcmp(r->group, g) != 0) || r->status != STUDY_V_OK)
            continue;
        int best = sibling_of(v, i);
        for (int k = 0; best >= 0 && k < NPAIR; k++) {
            double x = pair_value(r, &v->rows[best], ttft, tpot, k);
            if (isfinite(x))
                out[k][n[k]++] = x;
        }
    }
    for (int k = 0; k < NPAIR; k++)
        qsort(out[k], (size_t)n[k], sizeof *out[k], cmp_double);
}

/* The residual of row r's whole time in ms, measured - predicted TTFT + (output tokens - 1) x
 * TPOT (see the head of this file), given its TTFT residual ms; NAN when its output length or
 * predicted TPOT is unknown. */
static double life_of(const study_vrow *r, int tpot, double ms)
{
    double osl = override_of(r, "workload.output_tokens");
    if (!(osl >= 1) || !isfinite(r->predicted[tpot]))
        return NAN;
    return ms + (osl - 1) * (r->measured[tpot] - r->predicted[tpot]);
}

/* The residual by prompt length of the rows of group g (NULL: every row) into st->by_prompt:
 * the STUDY_VRESID_NPROMPT shortest lengths, each with its rows' medians; buf holds 2 x nrows. */
static void by_prompt(const study_vset *v, const char *g, int ttft, int tpot, double *buf,
                      study_vresid *st)
{
    double *life = buf + v->nrows;
    for (double last = -1;;) {
        /* the shortest length above the last one, and its rows' residuals */
        double next = -1;
        int n = 0, nl = 0;
        for (int i = 0; i < v->nrows; i++) {
            const study_vrow *r = &v->rows[i];
            double ms, steps, gaps, p = override_of(r, "workload.prompt_tokens");
            if ((g && strcmp(r->group, g) != 0) || !(p > last) ||
                !residual_of(r, ttft, tpot, &ms, &steps, &gaps))
                continue;
            if (next < 0 || p < next) {
                next = p;
                n = nl = 0;
            }
            if (p != next)
                continue;
            buf[n++] = ms;
            life[nl] = life_of(r, tpot, ms);
            nl += !isnan(life[nl]);
        }
        if (next < 0)
            return;
        last = next;
        if (st->nprompt == STUDY_VRESID_NPROMPT) {
            st->prompt_more += n;
            continue;
        }
        qsort(buf, (size_t)n, sizeof *buf, cmp_double);
        qsort(life, (size_t)nl, sizeof *life, cmp_double);
        st->by_prompt[st->nprompt].tokens = (int)next;
        st->by_prompt[st->nprompt].n = n;
        st->by_prompt[st->nprompt].median_ms = study_quantile(buf, n, 0.5);
        st->by_prompt[st->nprompt].nlife = nl;
        st->by_prompt[st->nprompt].life_median_ms = study_quantile(life, nl, 0.5);
        st->nprompt++;
    }
}

/* The residuals of the rows of group g (NULL: every row) into *st; returns its row count. */
static int resid_of(const study_vset *v, const char *g, int ttft, int tpot, double *buf,
                    study_vresid *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->group, sizeof st->group, "%s", g ? g : "all");
    double *ms = buf, *steps = buf + v->nrows, *gaps = buf + 2 * (size_t)v->nrows;
    int n = 0;
    for (int i = 0; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        if ((g && strcmp(r->group, g) != 0) ||
            !residual_of(r, ttft, tpot, &ms[n], &steps[n], &gaps[st->ngap]))
            continue;
        if (steps[n] >= FEW_LO && steps[n] < FEW_HI) {
            st->few++;
            st->near_whole += fabs(steps[n] - round(steps[n])) <= NEAR;
        }
        st->ngap += !isnan(gaps[st->ngap]);
        n++;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    qsort(steps, (size_t)n, sizeof *steps, cmp_double);
    qsort(gaps, (size_t)st->ngap, sizeof *gaps, cmp_double);
    st->n = n;
    st->median_ms = study_quantile(ms, n, 0.5);
    st->steps_p25 = study_quantile(steps, n, 0.25);
    st->steps_median = study_quantile(steps, n, 0.5);
    st->steps_p75 = study_quantile(steps, n, 0.75);
    st->gaps_median = study_quantile(gaps, st->ngap, 0.5);
    /* buf holds (3 + NPAIR) x nrows: ms, steps and gaps above, whose medians are taken, then the
     * pairs' kinds; by_prompt reuses the first 2 x nrows */
    double *pair[NPAIR];
    int np[NPAIR];
    for (int k = 0; k < NPAIR; k++)
        pair[k] = buf + (3 + (size_t)k) * (size_t)v->nrows;
    pairs_of(v, g, ttft, tpot, pair, np);
    st->npairs = np[PAIR_MIXED];
    st->mixed_median = study_quantile(pair[PAIR_MIXED], np[PAIR_MIXED], 0.5);
    st->ncycles = np[PAIR_DECODE];
    st->decode_error = study_quantile(pair[PAIR_DECODE], np[PAIR_DECODE], 0.5);
    st->rest_error = study_quantile(pair[PAIR_REST], np[PAIR_REST], 0.5);
    st->nseats = np[PAIR_SEATS];
    st->seats_median = study_quantile(pair[PAIR_SEATS], np[PAIR_SEATS], 0.5);
    by_prompt(v, g, ttft, tpot, buf, st);
    return n;
}

int study_vset_residuals(const study_vset *v, study_vresid **out)
{
    *out = NULL;
    int ttft = metric_named(v, "mean_ttft_ms"), tpot = metric_named(v, "mean_tpot_ms");
    if (ttft < 0 || tpot < 0)
        return -1;
    double *buf = sim_xmalloc(((3 + NPAIR) * (size_t)v->nrows + 1) * sizeof *buf);
    *out = sim_xmalloc(((size_t)v->nrows + 1) * sizeof **out);
    int n = 0;
    for (int i = 0; i < v->nrows; i++) {
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp((*out)[k].group, v->rows[i].group) == 0;
        if (!seen && resid_of(v, v->rows[i].group, ttft, tpot, buf, &(*out)[n]) > 0)
            n++;
    }
    if (n > 0 && resid_of(v, NULL, ttft, tpot, buf, &(*out)[n]) > 0)
        n++;
    free(buf);
    if (n == 0) {
        free(*out);
        *out = NULL;
    }
    return n;
}
