/*
 * test_validate.c: validation sets (study/validate.c, validate_ops.c): the error statistics
 * against hand computation; a small serving set whose rows map onto scenario runs (a predicted
 * row equals the same scenario run directly), with its inexpressible rows kept and their
 * reasons; transcribed rows; the stored table; bad set files refused naming the file, line and
 * key; operator sets (one kernel's roofline time out of the pass's, all-reduces, refused
 * tables); the shipped sets are listed and found (test_validate_data replays them).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "e2e_util.h"
#include "roofline.h"
#include "store_validation.h"
#include "study_validate.h"

#include "models_util.h"
#include "test_main.h"

#define DATA LLMSIM_SOURCE_DIR "/tests/data_validate"

static const study_vrow *row_named(const study_vset *v, const char *id)
{
    for (int i = 0; i < v->nrows; i++)
        if (strcmp(v->rows[i].id, id) == 0)
            return &v->rows[i];
    fail_msg("no row %s", id);
    return NULL;
}

static void load_ok(const char *path, const char *match, study_vset *v)
{
    sim_err err = {{0}};
    if (study_vset_load(path, match, v, &err) != 0)
        fail_msg("%s", err.msg);
}

/* Runs v at the summary level in `jobs` workers, storing into db (none when NULL); the test
 * fails with the message when the run cannot be made. */
static void run_ok(study_vset *v, const char *db, int jobs)
{
    sim_err err = {{0}};
    if (study_vset_run(v, db, jobs, STORE_SUMMARY, NULL, NULL, &err) != 0)
        fail_msg("%s", err.msg);
}

/* The error message of loading path, which must fail. */
static void load_fails(const char *path, char *msg, size_t len)
{
    study_vset v;
    sim_err err = {{0}};
    assert_int_equal(study_vset_load(path, NULL, &v, &err), -1);
    snprintf(msg, len, "%s", err.msg);
    study_vset_free(&v);
}

static void assert_has(const char *text, const char *want);

/* Loading path must fail with a message holding want. */
static void load_refused(const char *path, const char *want)
{
    char msg[1024];
    load_fails(path, msg, sizeof msg);
    assert_has(msg, want);
}

static void write_set(const char *path, const char *extra, const char *rules);

static void assert_has(const char *text, const char *want)
{
    if (!text || !strstr(text, want))
        fail_msg("'%s' does not contain '%s'", text ? text : "(null)", want);
}

/* ---- statistics ---- */

static void test_quantile(void **state)
{
    (void)state;
    const double v[] = {1, 2, 3, 4};
    assert_true(fabs(study_quantile(v, 4, 0.5) - 2.5) < 1e-12); /* between ranks 1 and 2 */
    assert_true(fabs(study_quantile(v, 4, 0.9) - 3.7) < 1e-12); /* position 2.7 */
    assert_true(study_quantile(v, 4, 1) == 4 && study_quantile(v, 4, 0) == 1);
    assert_true(study_quantile(v, 1, 0.9) == 1);
    assert_true(isnan(study_quantile(v, 0, 0.5)));
}

static void add_row(study_vset *v, const char *id, const char *group, double meas, double pred,
                    study_vstatus st)
{
    v->rows = realloc(v->rows, (size_t)(v->nrows + 1) * sizeof *v->rows);
    study_vrow *r = &v->rows[v->nrows++];
    memset(r, 0, sizeof *r);
    r->id = strdup(id);
    r->group = strdup(group);
    r->count = 1;
    r->status = st;
    for (int m = 0; m < STUDY_VMAX_METRICS; m++)
        r->measured[m] = r->predicted[m] = NAN;
    r->measured[0] = meas;
    r->predicted[0] = pred;
}

/* An empty set measuring mean_ttft_ms and, when tpot, mean_tpot_ms. */
static void empty_set(study_vset *v, int tpot)
{
    memset(v, 0, sizeof *v);
    v->nmetrics = 1 + tpot;
    snprintf(v->metric[0].name, sizeof v->metric[0].name, "mean_ttft_ms");
    snprintf(v->metric[1].name, sizeof v->metric[1].name, "mean_tpot_ms");
}

/* A group's statistics as worked out by hand: its name, rows, |error| median, p90 and worst,
 * signed median, and the worst row's id. */
typedef struct want_stat {
    const char *group;
    int n;
    double median_abs, p90_abs, worst_abs, signed_median;
    const char *worst;
} want_stat;

static void check_stat(const study_vset *v, const study_vstat *st, const want_stat *w)
{
    assert_string_equal(st->group, w->group);
    assert_int_equal(st->n, w->n);
    assert_true(fabs(st->median_abs - w->median_abs) < 1e-12);
    assert_true(fabs(st->p90_abs - w->p90_abs) < 1e-12);
    assert_true(fabs(st->worst_abs - w->worst_abs) < 1e-12);
    assert_true(fabs(st->signed_median - w->signed_median) < 1e-12);
    assert_string_equal(v->rows[st->worst_row].id, w->worst);
}

static void test_stats_by_hand(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 0);
    /* group a: errors +10%, -20%, +30%, -5% */
    add_row(&v, "a1", "a", 100, 110, STUDY_V_OK);
    add_row(&v, "a2", "a", 50, 40, STUDY_V_OK);
    add_row(&v, "a3", "a", 10, 13, STUDY_V_OK);
    add_row(&v, "a4", "a", 200, 190, STUDY_V_OK);
    /* group b: +50%; and rows that must not count */
    add_row(&v, "b1", "b", 2, 3, STUDY_V_OK);
    add_row(&v, "b2", "b", 2, NAN, STUDY_V_OK);
    add_row(&v, "c1", "c", 5, 50, STUDY_V_CANNOT);
    study_vstat *st;
    int n = study_vset_stats(&v, &st);
    assert_int_equal(n, 3); /* a, b, all (c has no predicted row) */
    /* a: |e| sorted .05 .1 .2 .3: median (.1 + .2) / 2 = .15, p90 at position 2.7: .2 + .7 x
     * .1 = .27, worst .3 (a3); signed sorted -.2 -.05 .1 .3: median (-.05 + .1) / 2 = .025.
     * b: one row, +50%. all: |e| .05 .1 .2 .3 .5: median .2, p90 at 3.6: .3 + .6 x .2 = .42,
     * worst .5 (b1); signed -.2 -.05 .1 .3 .5: median .1 */
    static const want_stat want[] = {{"a", 4, 0.15, 0.27, 0.3, 0.025, "a3"},
                                     {"b", 1, 0.5, 0.5, 0.5, 0.5, "b1"},
                                     {"all", 5, 0.2, 0.42, 0.5, 0.1, "b1"}};
    for (int i = 0; i < 3; i++)
        check_stat(&v, &st[i], &want[i]);
    int64_t ok, cannot, failed;
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 6 && cannot == 1 && failed == 0);
    free(st);
    study_vset_free(&v);
}

/* A row of TTFT measured / predicted, TPOT measured, and overrides of the clients and output
 * tokens (0: none). */
static void add_resid_row(study_vset *v, const char *id, const char *group, double ttft_m,
                          double ttft_p, double tpot_m, int clients, int osl)
{
    add_row(v, id, group, ttft_m, ttft_p, STUDY_V_OK);
    study_vrow *r = &v->rows[v->nrows - 1];
    r->measured[1] = tpot_m;
    char buf[64];
    if (clients) {
        r->sets = realloc(r->sets, (size_t)(r->nsets + 2) * sizeof *r->sets);
        r->sets[r->nsets++] = strdup("workload.arrival.concurrency=99"); /* overridden below */
        snprintf(buf, sizeof buf, "workload.arrival.concurrency=%d", clients);
        r->sets[r->nsets++] = strdup(buf);
    }
    if (osl) {
        r->sets = realloc(r->sets, (size_t)(r->nsets + 1) * sizeof *r->sets);
        snprintf(buf, sizeof buf, "workload.output_tokens=%d", osl);
        r->sets[r->nsets++] = strdup(buf);
    }
}

/* A row of TTFT 100 / 90 ms, TPOT measured / predicted, and the overrides a serving set gives:
 * clients, input and output tokens and the model length that follows them. */
static void add_pair_row(study_vset *v, const char *id, int clients, int isl, int osl,
                         double tpot_m, double tpot_p)
{
    add_row(v, id, "m", 100, 90, STUDY_V_OK);
    study_vrow *r = &v->rows[v->nrows - 1];
    r->measured[1] = tpot_m;
    r->predicted[1] = tpot_p;
    const char *fmt[] = {"workload.arrival.concurrency=%d", "workload.input_tokens=%d",
                         "workload.output_tokens=%d", "memory.max_model_len=%d"};
    int val[] = {clients, isl, osl, isl + osl + 1500};
    r->sets = calloc(4, sizeof *r->sets);
    for (int k = 0; k < 4; k++) {
        char buf[64];
        snprintf(buf, sizeof buf, fmt[k], val[k]);
        r->sets[r->nsets++] = strdup(buf);
    }
}

/* The excess of a mixed step over its prediction and the error of the closed loop's cycle split
 * into a decode step and the rest, from rows that differ only in their output length, against
 * hand computation. */
static void test_residuals_mixed_step(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 1);
    /* 5 clients, 512 input tokens: 101 output tokens against the longest sibling, 401: measured
     * TPOT 1.5 ms apart, predicted 0: 1.5 / (4 x (1/100 - 1/400)) = 50 ms; 201 against 401:
     * 0.5 and 0.5, 0 ms; 401 has no longer sibling */
    add_pair_row(&v, "m1", 5, 512, 101, 12, 10);
    add_pair_row(&v, "m2", 5, 512, 401, 10.5, 10);
    add_pair_row(&v, "m3", 5, 512, 201, 11, 10.5);
    /* another input length is no sibling; one client has no other clients' mixed steps */
    add_pair_row(&v, "m4", 5, 1024, 801, 20, 10);
    add_pair_row(&v, "m5", 1, 512, 101, 9, 8);
    add_pair_row(&v, "m6", 1, 512, 401, 8, 8);
    study_vresid *rs;
    assert_int_equal(study_vset_residuals(&v, &rs), 2); /* m, all */
    assert_int_equal(rs[0].npairs, 2);
    assert_true(fabs(rs[0].mixed_median - 25) < 1e-9);
    assert_int_equal(rs[1].npairs, 2);
    /* the cycles, TTFT 100 / 90 + (OSL - 1) x TPOT: m1 1300 / 1090 and m2 4300 / 4090 give a
     * decode step of 10 / 10 and a rest of 300 / 90 (-0.7); m3 2300 / 2190 against m2: 10 / 9.5
     * (-0.05), 300 / 290; one client's m5 1000 / 890 against m6 3300 / 3290: 7.667 / 8
     * (+0.0435), 233.3 / 90 (-0.614): decode median 0, rest median -0.614 */
    assert_int_equal(rs[0].ncycles, 3);
    assert_true(fabs(rs[0].decode_error) < 1e-9);
    assert_true(fabs(rs[0].rest_error - (90.0 / (1000 - 100 * 2300.0 / 300) - 1)) < 1e-9);
    free(rs);
    /* without a predicted TPOT a pair tells nothing */
    v.rows[1].predicted[1] = NAN;
    assert_int_equal(study_vset_residuals(&v, &rs), 2);
    assert_int_equal(rs[0].npairs, 0);
    assert_true(isnan(rs[0].mixed_median));
    assert_int_equal(rs[0].ncycles, 1); /* m5 and m6 */
    assert_true(fabs(rs[0].decode_error - (8 / (2300.0 / 300) - 1)) < 1e-9);
    free(rs);
    study_vset_free(&v);
}

/* The seats a closed loop is short of its clients, from rows that differ only in their output
 * length, against hand computation. */
static void test_residuals_seats(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 1);
    /* 5 clients, 512 input tokens, 10 ms of TPOT measured and predicted: 101 output tokens at
     * TTFT 100 / 90 and 401 at 850 / 90; the cycles, TTFT + (OSL - 1) x TPOT, 1100 and 4850
     * measured: the residual grows by 750, (4850 - 1100) / 5 = 750 a seat: one seat short */
    add_pair_row(&v, "s1", 5, 512, 101, 10, 10);
    add_pair_row(&v, "s2", 5, 512, 401, 10, 10);
    v.rows[1].measured[0] = 850;
    /* 1024 input tokens: a TTFT that grows as much as predicted is no seat short (0); one client
     * cannot be short of a place (not counted) */
    add_pair_row(&v, "s3", 5, 1024, 101, 10, 10);
    add_pair_row(&v, "s4", 5, 1024, 401, 10, 10);
    v.rows[3].measured[0] = 400;
    v.rows[3].predicted[0] = 390;
    add_pair_row(&v, "s5", 1, 512, 101, 10, 10);
    add_pair_row(&v, "s6", 1, 512, 401, 10, 10);
    v.rows[5].measured[0] = 850;
    study_vresid *rs;
    assert_int_equal(study_vset_residuals(&v, &rs), 2); /* m, all */
    assert_int_equal(rs[0].nseats, 2);
    assert_true(fabs(rs[0].seats_median - 0.5) < 1e-9); /* the median of 0 and 1 */
    free(rs);
    /* alone, the first pair reads one seat */
    v.rows[3].status = STUDY_V_FAILED;
    assert_int_equal(study_vset_residuals(&v, &rs), 2);
    assert_int_equal(rs[0].nseats, 1);
    assert_true(fabs(rs[0].seats_median - 1) < 1e-9);
    free(rs);
    study_vset_free(&v);
}

/* A row of group g whose TTFT residual is ms at prompt length isl (0: no prompt override), 10 ms
 * of measured TPOT. */
static void add_prompt_row(study_vset *v, const char *id, const char *g, int isl, double ms)
{
    add_row(v, id, g, 100 + ms, 100, STUDY_V_OK);
    study_vrow *r = &v->rows[v->nrows - 1];
    r->measured[1] = 10;
    if (isl == 0)
        return;
    char buf[64];
    r->sets = calloc(2, sizeof *r->sets);
    r->sets[r->nsets++] = strdup("workload.prompt_tokens=7"); /* overridden below */
    snprintf(buf, sizeof buf, "workload.prompt_tokens=%d", isl);
    r->sets[r->nsets++] = strdup(buf);
}

/* The TTFT residual by prompt length: each length's median, shortest first, against hand
 * computation; rows without a prompt length left out, lengths past the shortest eight counted. */
static void test_residuals_by_prompt(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 1);
    /* group p: 40 and 60 ms at 1024 tokens (median 50), -20 ms at 256, 90 ms at 4096, and a row
     * without a prompt length */
    add_prompt_row(&v, "p1", "p", 1024, 40);
    add_prompt_row(&v, "p2", "p", 4096, 90);
    add_prompt_row(&v, "p3", "p", 256, -20);
    add_prompt_row(&v, "p4", "p", 1024, 60);
    add_prompt_row(&v, "p5", "p", 0, 500);
    /* group q: ten lengths, 100 to 1000 tokens, one row each: the two longest are counted */
    for (int k = 1; k <= 10; k++) {
        char id[16];
        snprintf(id, sizeof id, "q%d", k);
        add_prompt_row(&v, id, "q", 1100 - 100 * k, k);
    }
    study_vresid *rs;
    assert_int_equal(study_vset_residuals(&v, &rs), 3); /* p, q, all */
    assert_string_equal(rs[0].group, "p");
    assert_int_equal(rs[0].n, 5);
    assert_int_equal(rs[0].nprompt, 3);
    assert_int_equal(rs[0].prompt_more, 0);
    int tokens[] = {256, 1024, 4096}, rows[] = {1, 2, 1};
    double median[] = {-20, 50, 90};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rs[0].by_prompt[i].tokens, tokens[i]);
        assert_int_equal(rs[0].by_prompt[i].n, rows[i]);
        assert_true(fabs(rs[0].by_prompt[i].median_ms - median[i]) < 1e-9);
    }
    assert_int_equal(rs[1].nprompt, STUDY_VRESID_NPROMPT);
    assert_int_equal(rs[1].prompt_more, 2);
    /* 100 tokens is q10's (10 ms), 800 tokens q3's (3 ms) */
    assert_int_equal(rs[1].by_prompt[0].tokens, 100);
    assert_true(fabs(rs[1].by_prompt[0].median_ms - 10) < 1e-9);
    assert_int_equal(rs[1].by_prompt[7].tokens, 800);
    assert_true(fabs(rs[1].by_prompt[7].median_ms - 3) < 1e-9);
    /* all: 100 to 700 tokens with p's 256 among them; 800, 900, 1000, 1024 (two rows) and 4096
     * counted */
    assert_string_equal(rs[2].group, "all");
    assert_int_equal(rs[2].nprompt, STUDY_VRESID_NPROMPT);
    assert_int_equal(rs[2].by_prompt[2].tokens, 256);
    assert_int_equal(rs[2].by_prompt[7].tokens, 700);
    assert_int_equal(rs[2].prompt_more, 6);
    /* no row has an output length: no request time */
    assert_int_equal(rs[0].by_prompt[1].nlife, 0);
    assert_true(isnan(rs[0].by_prompt[1].life_median_ms));
    free(rs);
    study_vset_free(&v);
}

/* The residual of a request's whole time by prompt length, TTFT + (output tokens - 1) x TPOT,
 * against hand computation: a TTFT residual that the decode phase gives back leaves none. */
static void test_residuals_request_time(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 1);
    /* group p at 4096 tokens, 101 output tokens, measured TPOT 10 ms: r1 measures a TTFT 100 ms
     * over its prediction and a TPOT 1 ms under it (100 - 100 x 1 = 0); r2 40 ms over, its TPOT
     * as predicted (+40); r3 60 ms over and 0.5 ms under (60 - 50 = +10) */
    double ttft[] = {100, 40, 60}, tpot[] = {11, 10, 10.5};
    for (int k = 0; k < 3; k++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", k + 1);
        add_prompt_row(&v, id, "p", 4096, ttft[k]);
        study_vrow *r = &v.rows[v.nrows - 1];
        r->predicted[1] = tpot[k];
        r->sets = realloc(r->sets, (size_t)(r->nsets + 1) * sizeof *r->sets);
        r->sets[r->nsets++] = strdup("workload.output_tokens=101");
    }
    /* r4 at 4096 without a predicted TPOT counts for TTFT only */
    add_prompt_row(&v, "r4", "p", 4096, 20);
    study_vresid *rs;
    assert_int_equal(study_vset_residuals(&v, &rs), 2);
    assert_int_equal(rs[0].nprompt, 1);
    assert_int_equal(rs[0].by_prompt[0].n, 4);
    assert_true(fabs(rs[0].by_prompt[0].median_ms - 50) < 1e-9); /* of 20, 40, 60, 100 */
    assert_int_equal(rs[0].by_prompt[0].nlife, 3);
    assert_true(fabs(rs[0].by_prompt[0].life_median_ms - 10) < 1e-9); /* of 0, 10, 40 */
    free(rs);
    study_vset_free(&v);
}

/* The TTFT residual in decode steps and closed-loop gaps, against hand computation. */
static void test_residuals_by_hand(void **state)
{
    (void)state;
    study_vset v;
    empty_set(&v, 1);
    /* group s: residuals of 2, 3.1 and 4.6 steps of 10 ms (20, 31, 46 ms); 8 clients of 80
     * output tokens make a gap of 80 x 10 / 8 = 100 ms */
    add_resid_row(&v, "s1", "s", 120, 100, 10, 8, 80);
    add_resid_row(&v, "s2", "s", 131, 100, 10, 8, 80);
    add_resid_row(&v, "s3", "s", 146, 100, 10, 8, 80);
    /* group g: a residual of one gap, 4 clients of 100 tokens at 5 ms (125 ms, 25 steps), and a
     * row without its clients (no gap); a row without TPOT and one not predicted do not count */
    add_resid_row(&v, "g1", "g", 300, 175, 5, 4, 100);
    add_resid_row(&v, "g2", "g", 300, 290, 5, 0, 100);
    add_resid_row(&v, "g3", "g", 300, 290, NAN, 4, 100);
    add_row(&v, "x1", "x", 300, 200, STUDY_V_CANNOT);
    study_vresid *rs;
    int n = study_vset_residuals(&v, &rs);
    assert_int_equal(n, 3); /* s, g, all */
    assert_string_equal(rs[0].group, "s");
    assert_int_equal(rs[0].n, 3);
    assert_true(fabs(rs[0].median_ms - 31) < 1e-9);
    /* steps 2, 3.1, 4.6: quartiles at positions 0.5 and 1.5 */
    assert_true(fabs(rs[0].steps_p25 - 2.55) < 1e-9 && fabs(rs[0].steps_median - 3.1) < 1e-9 &&
                fabs(rs[0].steps_p75 - 3.85) < 1e-9);
    /* 2 and 3.1 lie within a quarter step of a whole number, 4.6 does not */
    assert_int_equal(rs[0].few, 3);
    assert_int_equal(rs[0].near_whole, 2);
    assert_int_equal(rs[0].ngap, 3);
    assert_true(fabs(rs[0].gaps_median - 0.31) < 1e-9);
    assert_int_equal(rs[0].npairs, 0); /* the same output length: no sibling */
    assert_string_equal(rs[1].group, "g");
    assert_int_equal(rs[1].n, 2);
    assert_int_equal(rs[1].few, 1); /* 2 steps (g2); 25 (g1) is more than a few */
    assert_int_equal(rs[1].ngap, 1);
    assert_true(fabs(rs[1].gaps_median - 1) < 1e-9);
    assert_string_equal(rs[2].group, "all");
    assert_int_equal(rs[2].n, 5);
    assert_int_equal(rs[2].near_whole, 3);
    free(rs);
    /* a set that measures no TPOT has none */
    v.nmetrics = 1;
    assert_int_equal(study_vset_residuals(&v, &rs), -1);
    assert_null(rs);
    study_vset_free(&v);
}

/* ---- a serving set ---- */

/* Row id of v, which could not be expressed for a reason holding why. */
static const study_vrow *row_cannot(const study_vset *v, const char *id, const char *why)
{
    const study_vrow *r = row_named(v, id);
    assert_int_equal(r->status, STUDY_V_CANNOT);
    assert_has(r->reason, why);
    return r;
}

static void test_serving_rows(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/small.yaml", NULL, &v);
    assert_int_equal(v.nrows, 8);
    assert_int_equal(v.nmetrics, 2);
    assert_string_equal(v.metric[0].name, "mean_ttft_ms");
    assert_string_equal(v.metric[0].label, "TTFT");
    const study_vrow *r1 = row_named(&v, "r1");
    assert_int_equal(r1->status, STUDY_V_OK);
    assert_string_equal(r1->group, "chunked");
    assert_int_equal(r1->line, 2);
    assert_true(r1->measured[0] == 20.5 && r1->measured[1] == 2.5);
    assert_has(r1->approx, "chunked stands for the engine");
    /* the overrides: `set` first, then the rules' in order */
    assert_int_equal(r1->nsets, 8);
    assert_string_equal(r1->sets[0], "workload.arrival.concurrency=2");
    assert_string_equal(r1->sets[1], "workload.num_requests=8");
    assert_string_equal(r1->sets[5], "scheduler.name=chunked");
    assert_string_equal(r1->sets[7], "model=qwen2.5-0.5b");
    assert_int_equal(row_named(&v, "r2")->status, STUDY_V_OK);
    /* r2 runs as it is, but its fixed-length clients stay in lock-step: the scenario's note
     * comes along as an approximation */
    assert_has(row_named(&v, "r2")->approx, "lock-step");
    /* what cannot be expressed, and why */
    assert_string_equal(row_cannot(&v, "r3", "")->reason, "disaggregated serving is not modelled");
    assert_has(row_cannot(&v, "r4", "{backend} = 'tgi2' has no mapping")->reason,
               "small.yaml:24)"); /* the rule's line */
    row_cannot(&v, "r6", "tensor_parallel 3 does not divide");
    row_cannot(&v, "r7", "nothing measured");
    row_cannot(&v, "r8", "ttft_ms: 'abc' is not a number");
    /* a sliding window that binds is priced: the engine fills the capped sums */
    assert_int_equal(row_named(&v, "r5")->status, STUDY_V_OK);
    int64_t ok, cannot, failed;
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 3 && cannot == 5 && failed == 0);
    study_vset_free(&v);
}

static void test_serving_match(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/small.yaml", "r2", &v);
    assert_int_equal(v.nrows, 1);
    assert_int_equal(v.skipped, 7);
    study_vset_free(&v);
}

/* A predicted row is the same scenario run directly, and running twice gives the same. */
static void test_serving_run(void **state)
{
    (void)state;
    study_vset v, w;
    sim_err err = {{0}};
    load_ok(DATA "/small.yaml", NULL, &v);
    load_ok(DATA "/small.yaml", NULL, &w);
    if (study_vset_run(&v, NULL, 2, STORE_SUMMARY, NULL, NULL, &err) ||
        study_vset_run(&w, NULL, 1, STORE_SUMMARY, NULL, NULL, &err))
        fail_msg("%s", err.msg);
    const study_vrow *r1 = row_named(&v, "r1");
    assert_int_equal(r1->status, STUDY_V_OK);
    scn_scenario scn;
    study_result *res = calloc(1, sizeof *res);
    if (study_load(DATA "/base.yaml", (const char *const *)r1->sets, r1->nsets, &scn, &err) ||
        study_run(&scn, scn.seed, NULL, NULL, NULL, res, &err))
        fail_msg("%s", err.msg);
    assert_true(scn.workload.arrival.concurrency == 2 && scn.workload.num_requests == 8);
    assert_true(r1->predicted[0] == study_metric(res, "mean_ttft_ms"));
    assert_true(r1->predicted[1] == study_metric(res, "mean_tpot_ms"));
    assert_true(r1->predicted[0] > 0 && r1->predicted[1] > 0);
    for (int i = 0; i < v.nrows; i++)
        for (int m = 0; m < 2; m++)
            assert_true(memcmp(&v.rows[i].predicted[m], &w.rows[i].predicted[m], sizeof(double)) ==
                        0);
    scn_free(&scn);
    free(res);
    study_vset_free(&v);
    study_vset_free(&w);
}

/* Regimes: each row falls in the first whose condition holds (a column's text compared, a
 * measured value against the others), and the errors are summarised by regime and by
 * validated group (engine, GPU generation, kind of model, serving); the table of the latter is
 * written and read back for the nearest group. */
static void test_regimes_and_error_table(void **state)
{
    (void)state;
    char path[300], table[300];
    snprintf(path, sizeof path, "%s/regimes.yaml", e2e_dir);
    snprintf(table, sizeof table, "%s/errors.csv", e2e_dir);
    write_set(
        path,
        "set:\n  workload.arrival.concurrency: \"{conc}\"\n"
        "  workload.num_requests: \"{conc*4}\"\n  tensor_parallel: \"{tp}\"\n"
        "regimes:\n  - {name: orca, when: \"'{backend}' == 'orca'\"}\n"
        "  - {name: slow, when: \"{ttft_ms} > 10 * {tpot_ms}\"}\n  - {name: rest}\n",
        "  - column: backend\n    cases: {chunked: {}, orca: {set: {scheduler.name: orca}}}\n");
    study_vset v;
    sim_err err = {{0}};
    load_ok(path, NULL, &v);
    assert_string_equal(row_named(&v, "r2")->regime, "orca");
    assert_string_equal(row_named(&v, "r3")->regime, "slow"); /* 25 > 10 x 2 */
    assert_string_equal(row_named(&v, "r1")->regime, "rest"); /* 20.5 < 10 x 2.5 */
    assert_string_equal(row_named(&v, "r1")->key.engine, "chunked");
    assert_string_equal(row_named(&v, "r1")->key.generation, "hopper");
    assert_string_equal(row_named(&v, "r1")->key.kind, "dense");
    assert_string_equal(row_named(&v, "r1")->key.serving, "agg");
    run_ok(&v, NULL, 1);
    study_vstat *st = NULL;
    int n = study_vset_stats_by(&v, STUDY_VBY_REGIME, &st);
    int seen_orca = 0;
    for (int k = 0; k < n; k++)
        if (strcmp(st[k].group, "orca") == 0 && st[k].metric == 0) {
            seen_orca = 1;
            assert_int_equal(st[k].n, 1);
            assert_true(fabs(st[k].median_abs - fabs(study_vrow_error(row_named(&v, "r2"), 0))) <
                        1e-12);
        }
    assert_true(seen_orca);
    free(st);
    n = study_vset_stats_by(&v, STUDY_VBY_VALIDATED, &st);
    assert_true(n >= 2);
    assert_string_equal(st[0].group, "chunked hopper dense agg");
    free(st);
    if (study_verrors_write(&v, table, &err))
        fail_msg("%s", err.msg);
    /* the nearest group: exact, then the other kind of model, else none */
    study_vkey k = {"chunked", "hopper", "dense", "agg"};
    study_verror e[4];
    int exact = -1;
    assert_int_equal(study_verrors_nearest(table, &k, e, 4, &exact, &err), 1); /* TTFT */
    assert_int_equal(exact, 1);
    assert_string_equal(e[0].metric, "TTFT");
    assert_string_equal(e[0].set, "bad");
    snprintf(k.kind, sizeof k.kind, "moe");
    assert_int_equal(study_verrors_nearest(table, &k, e, 4, &exact, &err), 1);
    assert_int_equal(exact, 0);
    snprintf(k.generation, sizeof k.generation, "cdna");
    assert_int_equal(study_verrors_nearest(table, &k, e, 4, &exact, &err), 0);
    snprintf(k.generation, sizeof k.generation, "hopper");
    snprintf(k.serving, sizeof k.serving, "pd");
    assert_int_equal(study_verrors_nearest(table, &k, e, 4, &exact, &err), 0);
    /* a malformed table is an error naming its line */
    e2e_write(table, "set,engine,generation,kind,serving,metric,n,median_abs,p90_abs,"
                     "signed_median\nx,y\n");
    assert_int_equal(study_verrors_nearest(table, &k, e, 4, &exact, &err), -1);
    assert_has(err.msg, "errors.csv:2: expected set,engine");
    study_vset_free(&v);
}

/* Mean TTFT and TPOT over the requests that arrive after the first `skip`, by hand. */
typedef struct by_hand {
    int64_t skip, n, n2;
    double ttft, tpot;
} by_hand;

static void hand_request(void *st, const eng_request *rq)
{
    by_hand *h = st;
    if (rq->id < h->skip || rq->status != ENG_RQ_FINISHED)
        return;
    h->n++;
    h->ttft += (double)(rq->t_first_token - rq->t_arrival) / 1e6;
    if (rq->output > 1) {
        h->n2++;
        h->tpot += (double)(rq->t_finish - rq->t_first_token) / 1e6 / (rq->output - 1);
    }
}

/* A warm-up (the first arrivals) is left out of the compared metrics. */
static void test_warmup(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/warm.yaml", e2e_dir);
    FILE *in = fopen(DATA "/small.yaml", "r");
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    char *set = strstr(text, "set:\n"),
         *osl = strstr(text, "  workload.output_tokens: \"{osl}\"\n");
    char *out = malloc(sizeof text + 512);
    /* random output lengths, so that rounds differ */
    snprintf(out, sizeof text + 512,
             "%.*swarmup: \"{conc}\"\n%.*s  workload.output_tokens: \"{{dist: uniform, min: 2, "
             "max: {osl}}}\"\n%s",
             (int)(set - text), text, (int)(osl - set), set, osl + 34);
    char *p;
    while ((p = strstr(out, "table: small.csv")) || (p = strstr(out, "scenario: base.yaml"))) {
        char rest[8192];
        int table = p[0] == 't';
        snprintf(rest, sizeof rest, "%s", p + (table ? 16 : 19));
        sprintf(p, "%s%s", table ? "table: " DATA "/small.csv" : "scenario: " DATA "/base.yaml",
                rest);
    }
    e2e_write(path, out);
    free(out);
    study_vset v;
    sim_err err = {{0}};
    load_ok(path, "r1", &v);
    assert_int_equal(v.rows[0].warmup, 2);
    run_ok(&v, NULL, 1);
    const study_vrow *r1 = row_named(&v, "r1");
    by_hand h = {.skip = 2};
    eng_recorder_ops ops = {hand_request, NULL, NULL, NULL};
    study_hooks hooks = {.rec = &ops, .rec_st = &h};
    scn_scenario scn;
    study_result *res = calloc(1, sizeof *res);
    if (study_load(DATA "/base.yaml", (const char *const *)r1->sets, r1->nsets, &scn, &err) ||
        study_run(&scn, scn.seed, NULL, NULL, &hooks, res, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(h.n, 6); /* 8 requests, the first 2 left out */
    if (fabs(r1->predicted[0] - h.ttft / h.n) > 1e-9 * r1->predicted[0] ||
        fabs(r1->predicted[1] - h.tpot / h.n2) > 1e-9 * r1->predicted[1])
        fail_msg("TTFT %g vs %g, TPOT %g vs %g", r1->predicted[0], h.ttft / h.n, r1->predicted[1],
                 h.tpot / h.n2);
    /* the first clients queue behind each other: the warm-up changes the mean */
    assert_true(r1->predicted[0] != study_metric(res, "mean_ttft_ms"));
    scn_free(&scn);
    free(res);
    study_vset_free(&v);
}

static void test_transcribed_rows(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/rows.yaml", NULL, &v);
    assert_int_equal(v.nrows, 2);
    assert_int_equal(v.nmetrics, 2);
    assert_string_equal(v.metric[1].name, "median_tpot_ms");
    const study_vrow *t1 = row_named(&v, "t1");
    assert_int_equal(t1->status, STUDY_V_OK);
    assert_true(t1->measured[0] == 10 && t1->measured[1] == 1.5);
    assert_int_equal(t1->nsets, 2);
    assert_string_equal(t1->sets[1], "workload.prompt_tokens=32");
    assert_int_equal(row_named(&v, "t2")->status, STUDY_V_CANNOT);
    run_ok(&v, NULL, 1);
    assert_true(row_named(&v, "t1")->predicted[0] > 0);
    study_vset_free(&v);
}

/* A disaggregated row is checked pool by pool: llama-3-70b fits on the pools' four GPUs each,
 * not on the deployment's own single GPU (which a disaggregated run never uses). */
static void test_disaggregated_row(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/pd.yaml", NULL, &v);
    const study_vrow *p1 = row_named(&v, "p1");
    if (p1->status != STUDY_V_OK)
        fail_msg("p1: %s", p1->reason);
    run_ok(&v, NULL, 1);
    assert_true(row_named(&v, "p1")->predicted[0] > 0);
    study_vset_free(&v);
}

/* ---- the stored table ---- */

static int64_t q_int(store *s, const char *sql)
{
    int64_t v = -1;
    sim_err err = {{0}};
    if (store_query_int(s, sql, &v, &err) != 0)
        fail_msg("%s: %s", sql, err.msg);
    return v;
}

static double q_double(store *s, const char *sql)
{
    double v = NAN;
    sim_err err = {{0}};
    if (store_query_double(s, sql, &v, &err) != 0)
        fail_msg("%s: %s", sql, err.msg);
    return v;
}

typedef struct pts {
    int n;
    char first_metric[48];
} pts;

static int count_point(void *arg, const char *metric, const char *grp, const char *row_id,
                       double measured, double predicted)
{
    pts *p = arg;
    if (p->n++ == 0)
        snprintf(p->first_metric, sizeof p->first_metric, "%s", metric);
    assert_true(measured > 0 && predicted > 0);
    return 0;
}

static void test_stored_table(void **state)
{
    (void)state;
    char db[300];
    snprintf(db, sizeof db, "%s/v.db", e2e_dir);
    study_vset v;
    sim_err err = {{0}};
    load_ok(DATA "/small.yaml", NULL, &v);
    run_ok(&v, db, 2);
    for (int i = 0; i < v.nrows; i++)
        if (v.rows[i].status == STUDY_V_FAILED)
            fail_msg("%s: %s", v.rows[i].id, v.rows[i].reason);
    study_vstat *st;
    int nst = study_vset_stats(&v, &st);
    int64_t id = 0;
    store *s = store_open(db, &err);
    if (!s || study_vset_store(&v, st, nst, s, &id, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_validation_meta m;
    if (store_validation_get(s, id, &m, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(m.name, "small");
    assert_string_equal(m.kind, "serving");
    if (!(m.rows == 8 && m.ok == 3 && m.cannot == 5 && m.failed == 0))
        fail_msg("rows %lld ok %lld cannot %lld failed %lld", (long long)m.rows, (long long)m.ok,
                 (long long)m.cannot, (long long)m.failed);
    pts p = {0};
    assert_int_equal(store_validation_points(s, id, count_point, &p, &err), 0);
    assert_int_equal(p.n, 6); /* three rows, two metrics */
    assert_string_equal(p.first_metric, "mean_ttft_ms");
    /* rows with their status and reason, and each run stored */
    assert_int_equal(q_int(s, "SELECT count(*) FROM validation_rows WHERE status = 'cannot'"), 5);
    assert_int_equal(q_int(s, "SELECT count(*) FROM validation_rows r JOIN runs ON runs.id ="
                              " r.run_id WHERE r.status = 'ok'"),
                     3);
    assert_int_equal(q_int(s, "SELECT count(*) FROM validation_rows WHERE row_id = 'r3' AND"
                              " reason = 'disaggregated serving is not modelled'"),
                     1);
    /* a value and its error, and the statistics as computed */
    const study_vrow *r1 = row_named(&v, "r1");
    double pred = q_double(s, "SELECT predicted FROM validation_values v JOIN validation_rows r"
                              " USING (validation_id, seq) WHERE r.row_id = 'r1' AND"
                              " v.metric = 'mean_ttft_ms'");
    double e = q_double(s, "SELECT error FROM validation_values v JOIN validation_rows r"
                           " USING (validation_id, seq) WHERE r.row_id = 'r1' AND"
                           " v.metric = 'mean_ttft_ms'");
    assert_true(pred == r1->predicted[0]);
    assert_true(fabs(e - (r1->predicted[0] / 20.5 - 1)) < 1e-12);
    assert_true(q_double(s, "SELECT median_abs FROM validation_stats WHERE grp = 'all' AND"
                            " metric = 'mean_tpot_ms'") == st[nst - 1].median_abs);
    /* the measured value of a row that could not run is kept */
    assert_true(q_double(s, "SELECT measured FROM validation_values v JOIN validation_rows r"
                            " USING (validation_id, seq) WHERE r.row_id = 'r6' AND"
                            " v.metric = 'mean_ttft_ms'") == 25);
    store_close(s);
    free(st);
    study_vset_free(&v);
}

/* ---- bad set files ---- */

/* Writes a set file of small.csv's columns with `rules` and the given extras. */
static void write_set(const char *path, const char *extra, const char *rules)
{
    char text[4096];
    snprintf(text, sizeof text,
             "name: bad\n"                         /* 1 */
             "kind: serving\n"                     /* 2 */
             "description: a bad set\n"            /* 3 */
             "source: the tests\n"                 /* 4 */
             "table: " DATA "/small.csv\n"         /* 5 */
             "scenario: " DATA "/base.yaml\n"      /* 6 */
             "id: id\n"                            /* 7 */
             "measured: {mean_ttft_ms: ttft_ms}\n" /* 8 */
             "%s"                                  /* 9 */
             "rules:\n"
             "%s",
             extra, rules);
    e2e_write(path, text);
}

/* Templates that begin with '=' are arithmetic once expanded (a harness's limit derived from a
 * row: a sum rounded up to a block), a number stands for itself among alternatives, and a rule's
 * value may be an expression (a comparison gives 1 or 0). */
static void test_template_arithmetic(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/arith.yaml", e2e_dir);
    write_set(path,
              "set:\n  workload.arrival.concurrency: \"{conc}\"\n"
              "  workload.num_requests: \"=ceil(({conc} + {isl} + 100) / 32) * 32\"\n"
              "  workload.prompt_tokens: \"=max({isl}, 100) - min(1, 2)\"\n"
              "  workload.output_tokens: \"={note|4} * 2\"\n",
              "  - value: \"={tp} > 1 && {conc} >= 4\"\n    cases:\n"
              "      \"0\": {}\n      \"1\": {approx: wide}\n"
              "  - column: backend\n    cases: {chunked: {}, orca: {}, tgi2: {}}\n");
    study_vset v;
    load_ok(path, NULL, &v);
    const study_vrow *r1 = row_named(&v, "r1"), *r2 = row_named(&v, "r2");
    assert_string_equal(r1->sets[1], "workload.num_requests=192"); /* ceil(166 / 32) x 32 */
    assert_string_equal(r1->sets[2], "workload.prompt_tokens=99");
    assert_string_equal(r1->sets[3], "workload.output_tokens=8"); /* an empty note: 4 */
    assert_null(r1->approx && strstr(r1->approx, "wide") ? r1->approx : NULL);
    assert_has(r2->approx, "wide");                               /* tp 2 and 4 clients */
    assert_string_equal(r2->sets[3], "workload.output_tokens=6"); /* its note, 3 */
    study_vrow *r3 = (study_vrow *)row_named(&v, "r3");
    assert_int_equal(r3->status, STUDY_V_OK);
    study_vset_free(&v);
    /* a malformed expression is refused when the set is read, naming its line and key */
    write_set(path, "set: {workload.num_requests: \"={conc} +* 2\"}\n",
              "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "arith.yaml:9: set.workload.num_requests: ={conc} +* 2 (its placeholders "
                       "read as 1: '1 +* 2': expected a number");
    write_set(path, "set: {workload.num_requests: \"=floor({conc}, 2)\"}\n",
              "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "unknown function or wrong argument count");
}

static void test_bad_sets(void **state)
{
    (void)state;
    char path[300], msg[1024];
    snprintf(path, sizeof path, "%s/bad.yaml", e2e_dir);
    /* a rule on a column the table does not have */
    write_set(path, "group: \"{backend}\"\n", "  - column: nope\n    cases: {a: {}}\n");
    load_fails(path, msg, sizeof msg);
    assert_has(msg, "bad.yaml:11: rules.0.column: no column 'nope'");
    assert_has(msg, "columns: id, mode, backend");
    /* a template naming a column the table does not have */
    write_set(path, "group: \"{backend} {nope}\"\n", "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "bad.yaml:9: group: {nope}: no column 'nope'");
    /* an unknown mapping key */
    write_set(path, "", "  - column: mode\n    cases:\n      agg: {sett: {tp: 1}}\n");
    load_refused(path,
                 "bad.yaml:12: rules.0.cases.agg.sett: unknown key (valid: set, approx, cannot)");
    /* an override the base scenario refuses */
    write_set(path, "",
              "  - column: backend\n    cases:\n      orca: {set: {scheduler.name: nosuch}}\n");
    load_fails(path, msg, sizeof msg);
    assert_has(msg, "bad.yaml:12: rules.0.cases.orca.set.scheduler.name: the base scenario "
                    "refuses it");
    assert_has(msg, "unknown scheduler 'nosuch'");
    /* overrides that are only valid together (a preset's version with its engine's name, and
     * the preset's policy) are tried together */
    write_set(path, "",
              "  - column: backend\n    cases:\n      orca: {set: {engine.name: vllm, "
              "engine.version: \"0.14\", scheduler.name: vllm}}\n");
    study_vset ok;
    load_ok(path, NULL, &ok);
    study_vset_free(&ok);
    /* a measured metric that is not a summary metric */
    write_set(path, "measured: {mean_ttft: ttft_ms}\n", "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "measured");
    /* a warm-up with a metric whose samples are not attributed to requests */
    e2e_write(path, "name: bad\nkind: serving\ndescription: d\nsource: s\n"
                    "table: " DATA "/small.csv\nscenario: " DATA "/base.yaml\nid: id\n"
                    "measured: {mean_itl_ms: ttft_ms}\nwarmup: 2\n");
    load_refused(path, "bad.yaml:9: warmup: mean_itl_ms cannot leave a warm-up out");
    /* an unknown top-level key, and a malformed template */
    write_set(path, "mapping: {}\n", "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "bad.yaml:9: mapping: unknown key");
    write_set(path, "set: {tensor_parallel: \"{tp\"}\n",
              "  - column: mode\n    cases: {agg: {}}\n");
    load_refused(path, "bad.yaml:9: set.tensor_parallel:");
    /* a transcribed row that does not cite its source */
    e2e_write(path, "name: bad\nkind: serving\ndescription: d\nsource: s\n"
                    "scenario: " DATA "/base.yaml\nrows:\n  - id: x\n"
                    "    measured: {mean_ttft_ms: 1}\n");
    load_refused(path, "bad.yaml:7: rows.0.source: missing");
    /* a missing table */
    e2e_write(path, "name: bad\nkind: serving\ndescription: d\nsource: s\n"
                    "scenario: " DATA "/base.yaml\ntable: nothere.csv\nid: id\n");
    load_fails(path, msg, sizeof msg);
    assert_has(msg, "bad.yaml:6: table:");
    assert_has(msg, "nothere.csv: cannot open");
    /* an unknown kind */
    e2e_write(path, "name: bad\nkind: service\ndescription: d\nsource: s\n");
    load_refused(path, "bad.yaml:2: kind: unknown kind 'service'");
}

/* A table NAME.csv holding rows and its set's path NAME.yaml, both in e2e_dir (300 bytes
 * each). */
static void table_files(const char *name, const char *rows, char *csv, char *path)
{
    snprintf(csv, 300, "%s/%s.csv", e2e_dir, name);
    snprintf(path, 300, "%s/%s.yaml", e2e_dir, name);
    e2e_write(csv, rows);
}

/* Rows equal in every column but the set's `repeats.except` are one measurement: the later ones
 * are listed as repeats of the first and counted once, whether the first is predicted or not. */
static void test_repeats(void **state)
{
    (void)state;
    char path[300], csv[300], text[2048];
    table_files("rep",
                "id,backend,conc,isl,osl,ttft_ms,note\n"
                "a,chunked,2,64,8,20.5,first file\n"
                "b,chunked,2,64,8,20.5,second file\n"
                "c,chunked,2,64,8,21,\n"
                "d,tgi2,2,64,8,25,x\n"
                "e,tgi2,2,64,8,25,y\n",
                csv, path);
    const char *head = "name: rep\nkind: serving\ndescription: d\nsource: s\n"
                       "table: %s\nscenario: " DATA "/base.yaml\nid: id\n"
                       "measured: {mean_ttft_ms: ttft_ms}\n%s"
                       "rules:\n  - column: backend\n    cases: {chunked: {}}\n";
    snprintf(text, sizeof text, head, csv, "repeats: {except: [id, note]}\n");
    e2e_write(path, text);
    study_vset v;
    int64_t ok, cannot, failed;
    load_ok(path, NULL, &v);
    assert_int_equal(v.nrows, 5);
    const study_vrow *b = row_named(&v, "b"), *e = row_named(&v, "e");
    assert_int_equal(b->status, STUDY_V_REPEAT);
    assert_string_equal(b->reason, "a (line 2)");
    assert_int_equal(e->status, STUDY_V_REPEAT);
    assert_string_equal(e->reason, "d (line 5)");
    assert_true(b->count == 0 && isnan(study_vrow_error(b, 0)));
    assert_int_equal(row_named(&v, "c")->status, STUDY_V_OK);
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 2 && cannot == 1 && failed == 0);
    assert_has(v.notes, "2 rows repeat an earlier row's measurement (every column equal but id, "
                        "note)");
    study_vset_free(&v);
    /* without `repeats` every row stands for itself */
    snprintf(text, sizeof text, head, csv, "");
    e2e_write(path, text);
    load_ok(path, NULL, &v);
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 3 && cannot == 2 && failed == 0);
    study_vset_free(&v);
    /* a column the table does not have */
    snprintf(text, sizeof text, head, csv, "repeats: {except: [id, nope]}\n");
    e2e_write(path, text);
    load_refused(path, "rep.yaml:9: repeats.except: no column 'nope'");
}

/* `repeats: {measured: {digits, same}}`: rows whose measured values agree to that many
 * significant digits and whose `same` columns are equal are one measurement whatever else they
 * say, compared through the first of them that can be expressed (here a later row: the first
 * one's engine has no mapping), the others listed with the columns they differ in. */
static void test_repeats_measured(void **state)
{
    (void)state;
    char path[300], csv[300], text[2048];
    table_files("mrep",
                "id,backend,conc,isl,osl,ttft_ms,note\n"
                "f,tgi2,,64,8,30.000000000000004,no clients\n"
                "g,chunked,2,64,8,30,config\n"
                "h,chunked,2,64,8,30.0001,\n"
                "i,chunked,2,128,8,30,\n"
                "j,chunked,2,128,8,30,again\n",
                csv, path);
    const char *head = "name: mrep\nkind: serving\ndescription: d\nsource: s\n"
                       "table: %s\nscenario: " DATA "/base.yaml\nid: id\n"
                       "measured: {mean_ttft_ms: ttft_ms}\n%s"
                       "rules:\n  - column: backend\n    cases: {chunked: {}}\n";
    snprintf(text, sizeof text, head, csv,
             "repeats: {except: [id, note], measured: {digits: 12, same: [isl, osl]}}\n");
    e2e_write(path, text);
    study_vset v;
    int64_t ok, cannot, failed;
    load_ok(path, NULL, &v);
    const study_vrow *f = row_named(&v, "f");
    assert_int_equal(f->status, STUDY_V_REPEAT);
    assert_string_equal(f->reason, "g (line 3): the same measured values to 12 digits; the "
                                   "columns differ in backend, conc, ttft_ms");
    assert_int_equal(row_named(&v, "g")->status, STUDY_V_OK);
    assert_int_equal(row_named(&v, "h")->status, STUDY_V_OK);      /* differs in the 6th digit */
    assert_int_equal(row_named(&v, "i")->status, STUDY_V_OK);      /* another length */
    assert_string_equal(row_named(&v, "j")->reason, "i (line 5)"); /* equal but the note */
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 3 && cannot == 0 && failed == 0);
    assert_has(v.notes, "1 rows repeat another row's measured values to 12 significant digits "
                        "with the same isl, osl");
    study_vset_free(&v);
    /* without `measured` the first row is refused and the second predicted on its own */
    snprintf(text, sizeof text, head, csv, "repeats: {except: [id, note]}\n");
    e2e_write(path, text);
    load_ok(path, NULL, &v);
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 3 && cannot == 1 && failed == 0);
    assert_int_equal(row_named(&v, "f")->status, STUDY_V_CANNOT);
    study_vset_free(&v);
    /* bad criteria */
    snprintf(text, sizeof text, head, csv,
             "repeats: {except: [id], measured: {digits: 3, same: [isl]}}\n");
    e2e_write(path, text);
    load_refused(path, "repeats.measured.digits: expected the significant digits");
    snprintf(text, sizeof text, head, csv,
             "repeats: {except: [id], measured: {digits: 12, same: [nope]}}\n");
    e2e_write(path, text);
    load_refused(path, "repeats.measured.same: no column 'nope'");
    snprintf(text, sizeof text, head, csv,
             "repeats: {except: [id], measured: {digits: 12, same: [isl], x: 1}}\n");
    e2e_write(path, text);
    load_refused(path, "repeats.measured");
}

/* A row whose id encodes a layout (_tp<N>[_0]_ep<M|none>[_0]) that no stated role's columns
 * agree with contradicts itself: refused, its reason naming both readings, unless the set's
 * rules read {id_layout} and map it; a row that agrees (or one role of a disaggregated row
 * does, or the id gives ep none) is predicted as before. */
static void test_id_layout(void **state)
{
    (void)state;
    char path[300], csv[300], text[4096];
    table_files("lay",
                "id,mode,tp_size,attention_dp_size,moe_ep_size,p_tp,p_ep,d_tp,d_ep,isl,ttft\n"
                "m_agg_c2_tp1_ep1_7,agg,1,,1,,,,,64,20\n"
                "m_agg_c2_tp1_ep2_8,agg,1,2,4,,,,,64,20\n"
                "m_agg_c2_tp2_ep1_9,agg,1,,1,,,,,64,20\n"
                "m_agg_c2_tp1_0_ep1_0_3,agg,1,,1,,,,,64,20\n"
                "m_agg_c2_tp1_epnone_4,agg,1,,4,,,,,64,20\n"
                "m_agg_c2_tpnone_epnone_5,agg,1,,4,,,,,64,20\n"
                "m_dis_c2_tp2_ep1_6,disagg,,,,1,1,2,1,64,20\n"
                "m_dis_c2_tp4_0_ep1_0_7,disagg,,,,1,1,2,1,64,20\n",
                csv, path);
    const char *head = "name: lay\nkind: serving\ndescription: d\nsource: s\n"
                       "table: %s\nscenario: " DATA "/base.yaml\nid: id\n"
                       "measured: {mean_ttft_ms: ttft}\n%s"
                       "set: {workload.arrival.concurrency: \"2\", workload.num_requests: \"8\", "
                       "workload.prompt_tokens: \"{isl}\", workload.output_tokens: \"8\", "
                       "scheduler.name: chunked, scheduler.token_budget: \"256\"}\n"
                       "rules:\n  - column: mode\n    cases: {agg: {}, disagg: {cannot: pools}}\n";
    const char *layout =
        "id_layout: {tp: [tp_size, p_tp, d_tp], attention_dp: [attention_dp_size"
        ", attention_dp_size, attention_dp_size], ep: [moe_ep_size, p_ep, d_ep]}\n";
    snprintf(text, sizeof text, head, csv, layout);
    e2e_write(path, text);
    study_vset v;
    int64_t ok, cannot, failed;
    load_ok(path, NULL, &v);
    assert_int_equal(row_named(&v, "m_agg_c2_tp1_ep1_7")->status, STUDY_V_OK);
    const study_vrow *r = row_named(&v, "m_agg_c2_tp1_ep2_8");
    assert_int_equal(r->status, STUDY_V_CANNOT);
    assert_string_equal(r->reason, "its id says tp1 ep2, its columns tp_size 1 x attention_dp_size "
                                   "2, moe_ep_size 4: the layout is contradictory");
    r = row_named(&v, "m_agg_c2_tp2_ep1_9");
    assert_int_equal(r->status, STUDY_V_CANNOT);
    assert_string_equal(r->reason, "its id says tp2 ep1, its columns tp_size 1, moe_ep_size 1: the "
                                   "layout is contradictory");
    assert_int_equal(row_named(&v, "m_agg_c2_tp1_0_ep1_0_3")->status, STUDY_V_OK);
    assert_int_equal(row_named(&v, "m_agg_c2_tp1_epnone_4")->status, STUDY_V_OK);
    assert_int_equal(row_named(&v, "m_agg_c2_tpnone_epnone_5")->status, STUDY_V_OK);
    /* one role agrees: the id may name it; the mapping's own refusal stands */
    assert_string_equal(row_named(&v, "m_dis_c2_tp2_ep1_6")->reason, "pools");
    r = row_named(&v, "m_dis_c2_tp4_0_ep1_0_7");
    assert_string_equal(r->reason, "its id says tp4 ep1, its columns p_tp 1, p_ep 1; d_tp 2, d_ep "
                                   "1: the layout is contradictory");
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 4 && cannot == 4 && failed == 0);
    study_vset_free(&v);
    /* without id_layout the columns are taken as they are */
    snprintf(text, sizeof text, head, csv, "");
    e2e_write(path, text);
    load_ok(path, NULL, &v);
    assert_int_equal(row_named(&v, "m_agg_c2_tp1_ep2_8")->status, STUDY_V_OK);
    study_vset_free(&v);
    /* rules that read {id_layout} map a contradictory row themselves, with the id's counts
     * ({id_tp}, {id_ep}; id_ep "none" for epnone); a row whose id names no layout reads "" */
    char both[2600];
    snprintf(both, sizeof both, "%s%s", head,
             "  - value: \"{id_layout|0} {id_tp|0} {id_ep|0}\"\n"
             "    cases:\n"
             "      contradicts 1 2: {set: {scheduler.token_budget: \"={id_ep} * 100\"}, "
             "approx: read as the id}\n"
             "      contradicts 2 1: {cannot: neither reading}\n"
             "    otherwise: {}\n");
    snprintf(text, sizeof text, both, csv, layout);
    e2e_write(path, text);
    load_ok(path, NULL, &v);
    r = row_named(&v, "m_agg_c2_tp1_ep2_8");
    assert_int_equal(r->status, STUDY_V_OK);
    assert_string_equal(r->sets[r->nsets - 1], "scheduler.token_budget=200");
    assert_has(r->approx, "read as the id");
    assert_string_equal(row_named(&v, "m_agg_c2_tp2_ep1_9")->reason, "neither reading");
    assert_int_equal(row_named(&v, "m_agg_c2_tp1_ep1_7")->status, STUDY_V_OK);
    assert_int_equal(row_named(&v, "m_agg_c2_tpnone_epnone_5")->status, STUDY_V_OK);
    /* the disaggregated row no role agrees with is the rules' too: its mode's refusal stands */
    assert_string_equal(row_named(&v, "m_dis_c2_tp4_0_ep1_0_7")->reason, "pools");
    study_vset_free(&v);
    /* ... and the derived cells read as the id gives them */
    snprintf(both, sizeof both, "%s%s", head,
             "  - value: \"{id_layout|0}/{id_tp|0}/{id_ep|0}\"\n"
             "    cases:\n"
             "      agrees/1/1: {}\n      contradicts/1/2: {}\n      contradicts/2/1: {}\n"
             "      agrees/1/none: {}\n      0/0/0: {}\n      agrees/2/1: {}\n"
             "      contradicts/4/1: {}\n");
    snprintf(text, sizeof text, both, csv, layout);
    e2e_write(path, text);
    load_ok(path, NULL, &v);
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok == 6 && cannot == 2 && failed == 0); /* the two disaggregated rows: pools */
    study_vset_free(&v);
    /* {id_layout} without id_layout: no such column */
    snprintf(text, sizeof text, both, csv, "");
    e2e_write(path, text);
    load_refused(path, "no column 'id_layout'");
    /* a column the table does not have; lists of different lengths */
    snprintf(text, sizeof text, head, csv, "id_layout: {tp: [tp_size], ep: [nope]}\n");
    e2e_write(path, text);
    load_refused(path, "lay.yaml:9: id_layout.ep: no column 'nope'");
    snprintf(text, sizeof text, head, csv, "id_layout: {tp: [tp_size, p_tp], ep: [moe_ep_size]}\n");
    e2e_write(path, text);
    load_refused(path, "lay.yaml:9: id_layout: tp and ep");
}

/* ---- operator sets ---- */

static void test_operator_rows(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/ops.yaml", NULL, &v);
    assert_int_equal(v.kind, STUDY_V_OPERATORS);
    assert_string_equal(v.metric[0].name, "time_us");
    int64_t ok, cannot, failed;
    study_vset_counts(&v, &ok, &cannot, &failed);
    /* 8 + 1 shapes x 9 operators (the two norms are one operator), 2 all-reduces in one node;
     * the refused table's 8 shapes x 9 and the all-reduce across two nodes */
    assert_int_equal(ok, 9 * 9 + 2);
    assert_int_equal(cannot, 8 * 9 + 1);
    const study_vrow *q = row_named(&v, "llama-2-7b tp1 qkv_proj tokens=1024");
    assert_string_equal(q->group, "qkv_proj");
    assert_true(fabs(q->measured[0] - 60) < 1e-9); /* 0.06 ms in the table */
    assert_true(q->predicted[0] > 0);
    const study_vrow *ar = row_named(&v, "all_reduce 2 GPUs on 2 nodes");
    assert_int_equal(ar->status, STUDY_V_CANNOT);
    assert_has(ar->reason, "across nodes");
    assert_int_equal(row_named(&v, "Llama-2-7b-hf tp1")->count, 8 * 9);
    /* the table's size is bytes, priced as NCCL's ring (not the custom all-reduce) */
    const study_vrow *a4 = row_named(&v, "all_reduce 4 GPUs 1048576 bytes");
    eng_model m = catalog_model("llama-3-8b");
    cal_serving sv = cal_serving_tp(m.weight_dtype, 4);
    eng_predictor p = roofline_of(&m, "a100-80gb", &sv);
    assert_true(fabs(a4->predicted[0] - cal_roofline_allreduce_ns(&p, 1048576, 1) / 1e3) < 1e-9);
    cal_predictor_free(&p);
    study_vset_free(&v);
}

/* One kernel's time, as the set predicts it, times its runs in a pass is the roofline's time
 * of the whole pass for that operator. */
static void test_operator_kernel_sums(void **state)
{
    (void)state;
    study_vset v;
    load_ok(DATA "/ops.yaml", "tp1", &v);
    eng_model m = catalog_model("llama-2-7b");
    cal_serving sv = cal_serving_tp(ENG_FP16, 1);
    eng_predictor p = roofline_of(&m, "a100-80gb", &sv);
    eng_shape s;
    memset(&s, 0, sizeof s);
    eng_shape_add_decodes(&s, 1024, 0); /* the set prices kernels in a graph-launched pass */
    static const struct {
        const char *op;
        int per_layer, once;
    } k[] = {{"qkv_proj", 1, 0}, {"rmsnorm", 2, 1}, {"add", 2, 0},
             {"mlp_act", 1, 0},  {"embed", 0, 1},   {"mlp_down", 1, 0}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char id[128];
        snprintf(id, sizeof id, "llama-2-7b tp1 %s tokens=1024", k[i].op);
        double one = row_named(&v, id)->predicted[0] * 1e3;
        double pass = cal_roofline_op_ns(&p, &s, k[i].op);
        double runs = k[i].per_layer * m.layers + k[i].once;
        if (fabs(one * runs - pass) > 1e-6 * pass)
            fail_msg("%s: %g ns x %g runs != %g ns", k[i].op, one, runs, pass);
    }
    cal_predictor_free(&p);
    study_vset_free(&v);
}

/* ---- the shipped sets ---- */

static void test_shipped_list(void **state)
{
    (void)state;
    char path[1024];
    sim_err err = {{0}};
    setenv("LLMSIM_VALIDATION_DIR", LLMSIM_SOURCE_DIR "/validation", 1);
    assert_int_equal(study_vset_list(NULL, NULL, &err), 3);
    assert_int_equal(study_vset_path("aic-silicon-h100", path, sizeof path, &err), 0);
    assert_has(path, "validation/aic-silicon-h100.yaml");
    assert_int_equal(study_vset_path("nosuch", path, sizeof path, &err), -1);
    assert_has(err.msg, "aic-silicon-h100, vidur-a100-ops, vidur-h100-ops");
}

LLMSIM_TEST_MAIN(e2e_group_setup, e2e_group_teardown, test_quantile, test_stats_by_hand,
                 test_residuals_by_hand, test_residuals_mixed_step, test_residuals_seats,
                 test_residuals_by_prompt, test_residuals_request_time, test_serving_rows,
                 test_serving_match, test_serving_run, test_warmup, test_transcribed_rows,
                 test_disaggregated_row, test_stored_table, test_template_arithmetic,
                 test_regimes_and_error_table, test_bad_sets, test_repeats, test_repeats_measured,
                 test_id_layout, test_operator_rows, test_operator_kernel_sums, test_shipped_list)
