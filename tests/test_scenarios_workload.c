/*
 * test_scenarios_workload.c: the synthetic generators against theory over large samples
 * (mean and variance of every arrival process and length distribution, cv for gamma), the
 * piecewise-constant schedule, and the closed loop's bound on requests in flight (the test
 * drives the source directly, simulating finishes).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"
#include "scenario.h"
#include "stats.h"
#include "test_main.h"

extern const scn_resolver test_resolver; /* support/scenarios_resolver.c */

/* A scenario on the 8192-token fake model with the given workload lines. */
static scn_source *make(const char *workload, uint64_t seed, scn_scenario *s)
{
    char text[2048];
    sim_err e;
    snprintf(text, sizeof text, "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n%s", workload);
    if (scn_load_text("w.yaml", text, NULL, 0, &test_resolver, s, &e))
        fail_msg("%s", e.msg);
    scn_source *src = scn_source_new(s, seed, &e);
    if (!src)
        fail_msg("%s", e.msg);
    return src;
}

static void near(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%s: got %.6g, want %.6g (+-%.1f%%)", what, got, want, rel * 100);
}

/* Draws n arrivals; gap and length statistics into the given accumulators (may be NULL). */
static void drain(scn_source *src, int64_t n, sim_welford *gaps, sim_welford *prompt,
                  sim_welford *output)
{
    eng_arrival a;
    sim_err e;
    int64_t prev = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(scn_source_ops()->next(src, prev, &a, &e), ENG_SRC_OK);
        assert_true(a.t >= prev);
        if (gaps && i > 0)
            sim_welford_add(gaps, (double)(a.t - prev) / 1e9);
        if (prompt)
            sim_welford_add(prompt, a.prompt);
        if (output)
            sim_welford_add(output, a.output);
        prev = a.t;
    }
}

enum { N = 200000 };

static void poisson(void **state)
{
    scn_scenario s;
    scn_source *src = make("  num_requests: 200000\n  arrival: {process: poisson, rate: 4}\n"
                           "  prompt_tokens: 10\n  output_tokens: 10\n",
                           3, &s);
    sim_welford g = {0};
    drain(src, N, &g, NULL, NULL);
    near(g.mean, 0.25, 0.01, "poisson mean gap");
    near(sim_welford_var(&g), 0.0625, 0.02, "poisson gap variance");
    scn_source_free(src);
    scn_free(&s);
}

static void gamma_cv(void **state)
{
    const double cvs[] = {0.5, 3.0};
    for (int i = 0; i < 2; i++) {
        char w[256];
        snprintf(w, sizeof w,
                 "  num_requests: 400000\n  arrival: {process: gamma, rate: 8, cv: %g}\n"
                 "  prompt_tokens: 10\n  output_tokens: 10\n",
                 cvs[i]);
        scn_scenario s;
        scn_source *src = make(w, 11, &s);
        sim_welford g = {0};
        drain(src, 400000, &g, NULL, NULL);
        double var = cvs[i] * cvs[i] / 64.0; /* (cv / rate)^2 */
        near(g.mean, 0.125, 0.02, "gamma mean gap");
        near(sim_welford_var(&g), var, 0.06, "gamma gap variance");
        near(sqrt(sim_welford_var(&g)) / g.mean, cvs[i], 0.03, "gamma cv");
        scn_source_free(src);
        scn_free(&s);
    }
}

static void constant_and_burst(void **state)
{
    scn_scenario s;
    scn_source *src = make("  num_requests: 1000\n  arrival: {process: constant, rate: 3}\n"
                           "  prompt_tokens: 10\n  output_tokens: 10\n",
                           1, &s);
    eng_arrival a;
    sim_err e;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_int_equal(a.t, llround(i * 1e9 / 3));
    }
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_END);
    scn_source_free(src);
    scn_free(&s);
    src = make("  num_requests: 50\n  arrival: {process: burst}\n"
               "  prompt_tokens: 10\n  output_tokens: 10\n",
               1, &s);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_int_equal(a.t, 0);
    }
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_END);
    scn_source_free(src);
    scn_free(&s);
}

/* Piecewise-constant rate: counts per step are Poisson with mean rate x length; the process
 * ends when the rate stays 0. */
static void schedule(void **state)
{
    scn_scenario s;
    scn_source *src = make("  num_requests: 1000000\n  arrival:\n    process: schedule\n"
                           "    steps:\n      - {start_s: 0, rate: 5}\n"
                           "      - {start_s: 1000, rate: 0}\n"
                           "      - {start_s: 1500, rate: 20}\n"
                           "      - {start_s: 2500, rate: 0}\n"
                           "  prompt_tokens: 10\n  output_tokens: 10\n",
                           9, &s);
    eng_arrival a;
    sim_err e;
    int64_t counts[4] = {0}, prev = 0;
    int rc;
    while ((rc = scn_source_ops()->next(src, prev, &a, &e)) == ENG_SRC_OK) {
        double t = (double)a.t / 1e9;
        assert_true(a.t >= prev);
        counts[t < 1000 ? 0 : t < 1500 ? 1 : t < 2500 ? 2 : 3]++;
        prev = a.t;
    }
    assert_int_equal(rc, ENG_SRC_END);
    assert_true(llabs(counts[0] - 5000) < 4 * sqrt(5000));
    assert_int_equal(counts[1], 0);
    assert_true(llabs(counts[2] - 20000) < 4 * sqrt(20000));
    assert_int_equal(counts[3], 0);
    scn_source_free(src);
    scn_free(&s);
}

static void length_moments(const char *prompt, double mean, double var, double tol, uint64_t seed)
{
    char w[512];
    snprintf(w, sizeof w,
             "  num_requests: 200000\n  arrival: {process: burst}\n  prompt_tokens: %s\n"
             "  output_tokens: 1\n",
             prompt);
    scn_scenario s;
    scn_source *src = make(w, seed, &s);
    sim_welford p = {0};
    drain(src, N, NULL, &p, NULL);
    near(p.mean, mean, tol, prompt);
    near(sim_welford_var(&p), var, 3 * tol, prompt);
    assert_int_equal(scn_source_clipped(src), 0);
    scn_source_free(src);
    scn_free(&s);
}

static void lengths(void **state)
{
    length_moments("{dist: fixed, value: 77}", 77, 0, 0, 1);
    /* integers a..b inclusive: mean (a+b)/2, variance ((b-a+1)^2 - 1) / 12 */
    length_moments("{dist: uniform, min: 1500, max: 2000}", 1750, (501.0 * 501 - 1) / 12, 0.005, 2);
    /* normal far from its truncation: N(mean, std^2) plus 1/12 for rounding */
    length_moments("{dist: normal, mean: 1000, std: 200}", 1000, 40000 + 1.0 / 12, 0.005, 3);
    /* lognormal: E = mean, Var = (exp(sigma^2) - 1) mean^2 */
    length_moments("{dist: lognormal, mean: 600, sigma: 0.5}", 600, (exp(0.25) - 1) * 600 * 600,
                   0.01, 4);
    /* zipf over min..max: P(min + k - 1) ~ k^-s */
    double z = 0, m1 = 0, m2 = 0;
    for (int k = 1; k <= 1000; k++) {
        double w = pow(k, -1.2), x = 99 + k;
        z += w;
        m1 += w * x;
        m2 += w * x * x;
    }
    length_moments("{dist: zipf, min: 100, max: 1099, s: 1.2}", m1 / z, m2 / z - m1 * m1 / z / z,
                   0.01, 5);
}

/* Truncated normal: draws stay inside [min, max]; clipping bounds count the clipped. */
static void truncation_and_clipping(void **state)
{
    scn_scenario s;
    scn_source *src = make("  num_requests: 100000\n  arrival: {process: burst}\n"
                           "  prompt_tokens: {dist: normal, mean: 100, std: 100, min: 50, "
                           "max: 120}\n"
                           "  output_tokens: {dist: lognormal, mean: 100, sigma: 1, max: 150}\n",
                           6, &s);
    eng_arrival a;
    sim_err e;
    int64_t over = 0;
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_true(a.prompt >= 50 && a.prompt <= 120);
        assert_true(a.output >= 1 && a.output <= 150);
        over += a.output == 150;
    }
    /* P(lognormal(mu = ln 100 - 0.5, 1) > 150.5) */
    double p = 0.5 * erfc((log(150.5) - (log(100) - 0.5)) / sqrt(2));
    int64_t clipped = scn_source_clipped(src);
    assert_true(fabs((double)clipped / 100000 - p) < 0.01);
    assert_true(clipped <= over);
    scn_source_free(src);
    scn_free(&s);
}

/* Closed loop: never more than N requests in flight; the j-th request after the first wave
 * comes exactly think_time after the j-th finish; LATER while every client waits. The test
 * plays the engine: one pulled arrival pending at a time, finishes after a pseudo-random
 * service time, on_done at each finish. */
static void closed_loop(void **state)
{
    enum { C = 8, TOTAL = 5000 };
    const int64_t think = 50 * 1000000;
    scn_scenario s;
    scn_source *src = make("  num_requests: 5000\n"
                           "  arrival: {process: closed, concurrency: 8, think_time_ms: 50}\n"
                           "  prompt_tokens: {dist: uniform, min: 10, max: 100}\n"
                           "  output_tokens: 20\n",
                           8, &s);
    const eng_source_ops *ops = scn_source_ops();
    int64_t finish[C], *arr = calloc(TOTAL, sizeof *arr), *done = calloc(TOTAL, sizeof *done);
    int nfly = 0, narr = 0, ndone = 0, later = 0, pending = 0, ended = 0;
    int64_t now = 0;
    unsigned seed = 1;
    eng_arrival a;
    sim_err e;
    for (;;) {
        if (!pending && !ended) {
            int rc = ops->next(src, now, &a, &e);
            if (rc == ENG_SRC_OK) {
                assert_true(a.t >= now);
                pending = 1;
            } else if (rc == ENG_SRC_END) {
                ended = 1;
            } else {
                assert_int_equal(rc, ENG_SRC_LATER);
                assert_int_equal(nfly, C);
                later++;
            }
        }
        int k = -1;
        for (int i = 0; i < nfly; i++)
            if (k < 0 || finish[i] < finish[k])
                k = i;
        if (pending && (k < 0 || a.t <= finish[k])) { /* the arrival comes first */
            now = a.t;
            pending = 0;
            assert_true(nfly < C);
            arr[narr++] = now;
            seed = seed * 1103515245u + 12345u;
            finish[nfly++] = now + 1000000 + (int64_t)(seed % 500000000u);
        } else if (k >= 0) {
            now = finish[k];
            finish[k] = finish[--nfly];
            done[ndone++] = now;
            ops->on_done(src, now, NULL);
        } else {
            break;
        }
    }
    assert_int_equal(narr, TOTAL);
    assert_int_equal(ndone, TOTAL);
    assert_true(later > 0);
    for (int i = 0; i < C; i++)
        assert_int_equal(arr[i], 0);
    for (int j = 0; C + j < TOTAL; j++)
        assert_int_equal(arr[C + j], done[j] + think);
    assert_int_equal(scn_source_emitted(src), TOTAL);
    free(arr);
    free(done);
    scn_source_free(src);
    scn_free(&s);
}

/* ---- hand-made traces (tests/data_scn): bad rows, datetime parsing, relative paths ---- */

#define DATA LLMSIM_SOURCE_DIR "/tests/data_scn/"

static scn_source *trace_src(const char *trace, scn_scenario *s)
{
    char w[1024];
    snprintf(w, sizeof w, "  trace: %s\n", trace);
    return make(w, 1, s);
}

static void bad_rows_error(void **state)
{
    scn_scenario s;
    scn_source *src = trace_src("{path: " DATA "bad.csv, format: csv, columns: {time: t, "
                                "prompt: p, output: o}}",
                                &s);
    eng_arrival a;
    sim_err e;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.t, 500000000);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_ERROR);
    assert_non_null(strstr(e.msg, "data_scn/bad.csv:4: bad row: field 'p' is not a whole number"));
    scn_source_free(src);
    scn_free(&s);
}

static void bad_rows_skip(void **state)
{
    static const char *const want[] = {
        "bad.csv:5: bad row: missing field 'o'", "bad.csv:6: bad row: field 'p' is negative",
        "bad.csv:7: bad row: time goes backwards", "bad.csv:9: bad row: missing field 'o'"};
    /* each bad row's message, read with the reader directly through error mode */
    scn_scenario s;
    sim_err e;
    const char *const trace = "{path: " DATA "bad.csv, format: csv, columns: {time: t, prompt: "
                              "p, output: o}}";
    for (int i = 0; i < 4; i++) {
        scn_source *src = trace_src(trace, &s);
        eng_arrival a;
        int bad = 0, rc;
        while ((rc = scn_source_ops()->next(src, 0, &a, &e)) != ENG_SRC_END)
            if (rc == ENG_SRC_ERROR && bad++ == i + 1)
                break;
        assert_int_equal(rc, ENG_SRC_ERROR);
        if (!strstr(e.msg, want[i]))
            fail_msg("'%s' lacks '%s'", e.msg, want[i]);
        scn_source_free(src);
        scn_free(&s);
    }
    /* on_bad_row: skip, through a scenario file whose trace path is relative to it */
    assert_int_equal(scn_load(DATA "rel.yaml", NULL, 0, &test_resolver, &s, &e), 0);
    scn_source *src = scn_source_new(&s, 1, &e);
    assert_non_null(src);
    eng_arrival a;
    int64_t t[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        t[i] = a.t;
    }
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_END);
    assert_int_equal(t[0], 0);
    assert_int_equal(t[1], 500000);  /* 0.5 units of 1 ms */
    assert_int_equal(t[2], 2500000); /* 2.5 ms */
    assert_int_equal(a.prompt, 50);
    assert_int_equal(scn_source_skipped(src), 5);
    scn_source_free(src);
    scn_free(&s);
}

/* A source over a mooncake trace of these rows, written to the scratch file path (a mkstemp
 * template, filled in), with these more keys of workload.trace ("" or ", key: value..."). */
static scn_source *mooncake_src(char *path, const char *rows, const char *more, scn_scenario *s)
{
    assert_int_equal(scratch_write(path, rows), 0);
    char w[512];
    snprintf(w, sizeof w, "  trace: {path: %s, format: mooncake%s}\n", path, more);
    return make(w, 1, s);
}

/* Mooncake hash_ids: one segment per id, 512 tokens each but the last (the prompt's content);
 * ids that do not cover the prompt make a bad row naming the file and line. */
static void mooncake_hash_ids(void **state)
{
    char path[] = "/tmp/llmsim-hash-XXXXXX", w[512];
    scn_scenario s;
    scn_source *src =
        mooncake_src(path,
                     "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, "
                     "\"hash_ids\": [7, 8]}\n"
                     "{\"timestamp\": 10, \"input_length\": 600, \"output_length\": 5, "
                     "\"hash_ids\": [7]}\n",
                     "", &s);
    eng_arrival a;
    sim_err e;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.nseg, 2);
    assert_true(a.seg[0].len == 512 && a.seg[1].len == 88 && a.seg[0].id != a.seg[1].id);
    uint64_t first = a.seg[0].id;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_ERROR);
    assert_non_null(strstr(e.msg, ":2: bad row: hash_ids has 1 ids"));
    scn_source_free(src);
    scn_free(&s);
    /* hash_block_tokens: 0 ignores them: no content */
    snprintf(w, sizeof w, "  trace: {path: %s, format: mooncake, hash_block_tokens: 0}\n", path);
    src = make(w, 1, &s);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.nseg, 0);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    scn_source_free(src);
    scn_free(&s);
    (void)first;
    unlink(path);
}

/* Drains a trace's source: arrival times and first content ids; the count. */
static int replay_all(const char *trace, int64_t *t, uint64_t *id, int max)
{
    scn_scenario s;
    scn_source *src = trace_src(trace, &s);
    eng_arrival a;
    sim_err e;
    int n = 0, rc;
    while ((rc = scn_source_ops()->next(src, 0, &a, &e)) == ENG_SRC_OK) {
        assert_true(n < max);
        t[n] = a.t;
        id[n++] = a.nseg > 0 ? a.seg[0].id : 0;
    }
    assert_int_equal(rc, ENG_SRC_END);
    scn_source_free(src);
    scn_free(&s);
    return n;
}

/* trace.repeat: copies back to back, each shifted by span + span / (n - 1) (here 30 + 15 ms),
 * with content of its own; deterministic; a repeat below 1 or not an integer refused. */
static void trace_repeat(void **state)
{
    char path[] = "/tmp/llmsim-repeat-XXXXXX";
    assert_int_equal(scratch_write(path, "{\"timestamp\": 1000, \"input_length\": 600, "
                                         "\"output_length\": 5, \"hash_ids\": [7, 8]}\n"
                                         "{\"timestamp\": 1010, \"input_length\": 100, "
                                         "\"output_length\": 5, \"hash_ids\": [7]}\n"
                                         "{\"timestamp\": 1030, \"input_length\": 512, "
                                         "\"output_length\": 5, \"hash_ids\": [9]}\n"),
                     0);
    char tr[512];
    int64_t t1[4], t3[12], t3b[12], ts[12];
    uint64_t id1[4], id3[12], id3b[12], ids[12];
    snprintf(tr, sizeof tr, "{path: %s, format: mooncake}", path);
    assert_int_equal(replay_all(tr, t1, id1, 4), 3);
    snprintf(tr, sizeof tr, "{path: %s, format: mooncake, repeat: 3}", path);
    assert_int_equal(replay_all(tr, t3, id3, 12), 9);
    assert_int_equal(replay_all(tr, t3b, id3b, 12), 9);
    assert_memory_equal(t3, t3b, sizeof t3[0] * 9);
    assert_memory_equal(id3, id3b, sizeof id3[0] * 9);
    const int64_t ms = 1000000, off[3] = {0, 10, 30};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) {
            assert_int_equal(t3[3 * k + i], (45 * k + off[i]) * ms);
            /* copy 0 as recorded; later copies their own ids, shared within the copy */
            if (k == 0)
                assert_true(id3[i] == id1[i]);
            for (int j = 0; j < 3 * k; j++)
                assert_true(id3[3 * k + i] != id3[j]);
        }
    for (int k = 0; k < 3; k++)
        assert_true(id3[3 * k] == id3[3 * k + 1] && id3[3 * k] != id3[3 * k + 2]);
    /* stretched copies are shifted by their stretched span; limit counts over all copies */
    snprintf(tr, sizeof tr, "{path: %s, format: mooncake, repeat: 3, time_scale: 2, limit: 7}",
             path);
    assert_int_equal(replay_all(tr, ts, ids, 12), 7);
    assert_int_equal(ts[6], 180 * ms);
    /* refusals */
    static const char *bad[] = {"0", "-1", "1.5", "two"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        scn_scenario s;
        sim_err e;
        snprintf(text, sizeof text,
                 "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n  trace: {path: %s, format: "
                 "mooncake, repeat: %s}\n",
                 path, bad[i]);
        assert_int_equal(scn_load_text("w.yaml", text, NULL, 0, &test_resolver, &s, &e), -1);
        if (!strstr(e.msg, "workload.trace.repeat"))
            fail_msg("'%s' lacks workload.trace.repeat", e.msg);
        printf("  repeat: %s: %s\n", bad[i], e.msg);
        scn_free(&s);
    }
    unlink(path);
}

/* A shared prefix: `groups` prefixes of `tokens` tokens, each request's own prompt after one. */
static void shared_prefix_segments(void **state)
{
    scn_scenario s;
    scn_source *src = make("  num_requests: 200\n  arrival: {process: poisson, rate: 5}\n"
                           "  prompt_tokens: 100\n  output_tokens: 10\n"
                           "  shared_prefix: {tokens: 1000, groups: 3}\n",
                           1, &s);
    uint64_t ids[8];
    int nids = 0;
    eng_arrival a;
    sim_err e;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_true(a.prompt == 1100 && a.nseg == 2 && a.seg[0].len == 1000 && a.seg[1].len == 100);
        int k = 0;
        while (k < nids && ids[k] != a.seg[0].id)
            k++;
        if (k == nids)
            ids[nids++] = a.seg[0].id;
        assert_true(nids <= 3);
    }
    assert_int_equal(nids, 3);
    scn_source_free(src);
    scn_free(&s);
}

/* hash_ids of 1 to 19 digits: the same number is the same content however many digits it has
 * (18 are read digit by digit, more through strtoll); past INT64_MAX, or signed, a bad row. */
static void mooncake_long_hash_ids(void **state)
{
    char path[] = "/tmp/llmsim-hashlen-XXXXXX";
    scn_scenario s;
    scn_source *src =
        mooncake_src(path,
                     "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 5, "
                     "\"hash_ids\": [123456789012345678, 9223372036854775807, 5]}\n"
                     "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 5, "
                     "\"hash_ids\": [ 123456789012345678 ,9223372036854775807,0005]}\n"
                     "{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 5, "
                     "\"hash_ids\": [1234567890123456789, 6, 7]}\n"
                     "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, "
                     "\"hash_ids\": [9223372036854775808]}\n"
                     "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, "
                     "\"hash_ids\": [-3]}\n",
                     "", &s);
    eng_arrival a;
    sim_err e;
    uint64_t first[3];
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.nseg, 3);
    for (int k = 0; k < 3; k++)
        first[k] = a.seg[k].id;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    for (int k = 0; k < 3; k++)
        assert_true(a.seg[k].id == first[k]);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_true(a.seg[0].id != first[0] && a.seg[0].id != first[1]);
    for (int line = 4; line <= 5; line++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_ERROR);
        char want[64];
        snprintf(want, sizeof want, ":%d: bad row: field 'hash_ids'", line);
        assert_non_null(strstr(e.msg, want));
    }
    scn_source_free(src);
    scn_free(&s);
    unlink(path);
}

/* A row's own tail: its prompt from the first id whose prefix (it and the ids before it) no other
 * replayed row has; 0 where every prefix is another row's too. Counted over the rows replayed:
 * with limit 3, row A shares [1, 2] with B only; each copy of repeat has the same tails. */
static void mooncake_own_tail(void **state)
{
    static const char rows[] = "{\"timestamp\": 0, \"input_length\": 1300, \"output_length\": 5, "
                               "\"hash_ids\": [1, 2, 3]}\n"
                               "{\"timestamp\": 1, \"input_length\": 1200, \"output_length\": 5, "
                               "\"hash_ids\": [1, 2, 4]}\n"
                               "{\"timestamp\": 2, \"input_length\": 600, \"output_length\": 5, "
                               "\"hash_ids\": [1, 9]}\n"
                               "{\"timestamp\": 3, \"input_length\": 100, \"output_length\": 5, "
                               "\"hash_ids\": [5]}\n"
                               "{\"timestamp\": 4, \"input_length\": 1400, \"output_length\": 5, "
                               "\"hash_ids\": [1, 2, 3]}\n";
    static const struct {
        const char *more;
        int n;
        int32_t tail[10];
    } cases[] = {
        {"", 5, {0, 176, 88, 100, 0}},
        {", limit: 3", 3, {276, 176, 88}},
        {", limit: 6, repeat: 2", 6, {0, 176, 88, 100, 0, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[] = "/tmp/llmsim-own-XXXXXX";
        scn_scenario s;
        scn_source *src = mooncake_src(path, rows, cases[c].more, &s);
        eng_arrival a;
        sim_err e;
        for (int i = 0; i < cases[c].n; i++) {
            assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
            if (a.own_tail != cases[c].tail[i])
                fail_msg("case %zu row %d: own tail %d, want %d", c, i, a.own_tail,
                         cases[c].tail[i]);
        }
        scn_source_free(src);
        scn_free(&s);
        unlink(path);
    }
}

static void mooncake_and_azure_parsing(void **state)
{
    scn_scenario s;
    scn_source *src = trace_src("{path: " DATA "bad.jsonl, format: mooncake, on_bad_row: skip, "
                                "hash_block_tokens: 0}",
                                &s); /* hash_ids ignored: the last row's is not a list of ids */
    eng_arrival a;
    sim_err e;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_true(a.t == 0 && a.prompt == 10 && a.output == 5);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_true(a.t == SIM_NS_PER_S && a.prompt == 12 && a.output == 1);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_END);
    assert_int_equal(scn_source_skipped(src), 3);
    assert_int_equal(scn_source_clipped(src), 1); /* output 0 raised to 1 */
    scn_source_free(src);
    scn_free(&s);
    /* datetimes across midnight and a year boundary, CRLF line ends */
    src = trace_src("{path: " DATA "azure_midnight.csv, format: azure}", &s);
    const int64_t want[] = {0, 750000000, 1750000100};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        assert_int_equal(a.t, want[i]);
        assert_int_equal(a.prompt, 100 * (i + 1));
        assert_int_equal(a.output, 10 * (i + 1));
    }
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_END);
    scn_source_free(src);
    scn_free(&s);
}

static void trace_errors_at_load(void **state)
{
    static const struct {
        const char *trace, *frag;
    } cases[] = {
        {"{path: nothere.csv, format: csv, columns: {prompt: p, output: o}}",
         "w.yaml:4: workload.trace.path: nothere.csv: cannot open"},
        {"{path: " DATA "bad.csv, format: csv, columns: {prompt: p, output: x}}",
         "workload.trace.path: " DATA "bad.csv:1: no column 'x' in the header (columns: t, p, o)"},
        {"{path: " DATA "bad.csv, format: csv}", "workload.trace.columns: missing"},
        {"{path: " DATA "bad.csv, format: parquet}",
         "workload.trace.format: unknown format 'parquet' (valid: azure, mooncake, vidur, "
         "csv)"},
        {"{path: " DATA "bad.csv, format: csv, columns: {prompt: p, output: o}, rate: 3}",
         "need arrival times"},
        {"{path: " DATA "bad.jsonl, format: mooncake, rate: 2, time_scale: 2}",
         "workload.trace.rate: give rate or time_scale, not both"},
        {"{path: " DATA "bad.jsonl, format: mooncake, on_bad_row: ignore}",
         "workload.trace.on_bad_row: unknown on_bad_row 'ignore' (valid: error, skip)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        scn_scenario s;
        sim_err e;
        snprintf(text, sizeof text, "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n  trace: %s\n",
                 cases[i].trace);
        assert_int_equal(scn_load_text("w.yaml", text, NULL, 0, &test_resolver, &s, &e), -1);
        if (!strstr(e.msg, cases[i].frag))
            fail_msg("'%s' lacks '%s'", e.msg, cases[i].frag);
        scn_free(&s);
    }
    /* a timed trace leaves no room for an arrival process; prompt_tokens are not used */
    scn_scenario s;
    sim_err e;
    const char *text = "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n"
                       "  trace: {path: " DATA "bad.jsonl, format: mooncake}\n"
                       "  arrival: {process: poisson, rate: 1}\n";
    assert_int_equal(scn_load_text("w.yaml", text, NULL, 0, &test_resolver, &s, &e), -1);
    assert_non_null(strstr(e.msg, "w.yaml:5: workload.arrival: not used: the trace gives"));
    scn_free(&s);
}

/* Streaming: a 3-million-row trace (about 50 MB) replays without the process growing by
 * anything like the file's size: the reader keeps only the line being parsed. */
static void streaming(void **state)
{
    char path[] = "/tmp/llmsim_stream_XXXXXX";
    FILE *f = scratch_file(path);
    assert_non_null(f);
    enum { ROWS = 3000000 };
    fprintf(f, "t,p,o\n");
    for (int i = 0; i < ROWS; i++)
        fprintf(f, "%d.%03d,%d,%d\n", i / 1000, i % 1000, 1000 + i % 977, 1 + i % 301);
    fclose(f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long before = ru.ru_maxrss; /* KiB */
    char trace[256];
    snprintf(trace, sizeof trace,
             "{path: %s, format: csv, columns: {time: t, prompt: p, output: o}}", path);
    scn_scenario s;
    scn_source *src = trace_src(trace, &s);
    eng_arrival a;
    sim_err e;
    int64_t n = 0, prev = 0;
    while (scn_source_ops()->next(src, prev, &a, &e) == ENG_SRC_OK) {
        assert_int_equal(a.t, n * 1000000);
        prev = a.t;
        n++;
    }
    assert_int_equal(n, ROWS);
    getrusage(RUSAGE_SELF, &ru);
    printf("  %d rows replayed; peak RSS grew by %ld KiB\n", ROWS, ru.ru_maxrss - before);
    assert_true(ru.ru_maxrss - before < 16 * 1024);
    scn_source_free(src);
    scn_free(&s);
    unlink(path);
}

LLMSIM_TEST_MAIN(NULL, NULL, poisson, gamma_cv, constant_and_burst, schedule, lengths,
                 truncation_and_clipping, closed_loop, bad_rows_error, bad_rows_skip,
                 mooncake_and_azure_parsing, mooncake_hash_ids, mooncake_long_hash_ids,
                 mooncake_own_tail, trace_repeat, shared_prefix_segments, trace_errors_at_load,
                 streaming)
