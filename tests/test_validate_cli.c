/*
 * test_validate_cli.c: llmsim validate through the program: --list, a set replayed with its
 * report, JSON that is the same run after run, the validation stored and drawn (its .dat and .gp
 * written whether or not gnuplot is installed), plot validation, a bad set refused naming the
 * file and line with nothing stored, usage errors, and --ops against a stored profile.
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

#include "e2e_util.h"
#include "test_main.h"

#define DATA LLMSIM_SOURCE_DIR "/tests/data_validate"
#define BIN "LLMSIM_VALIDATION_DIR=" LLMSIM_SOURCE_DIR "/validation " LLMSIM_BINARY

static char out[1 << 17], err[1 << 14];

static void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("output does not contain '%s':\n%s", want, text);
}

static void test_list(void **state)
{
    (void)state;
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --list"), 0);
    assert_has(out, "aic-silicon-h100");
    assert_has(out, "vidur-a100-ops");
    assert_has(out, "operators");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --list --json"), 0);
    assert_has(out, "\"name\": \"aic-silicon-h100\"");
}

static void test_report_and_store(void **state)
{
    (void)state;
    char db[300], png[300], path[320];
    snprintf(db, sizeof db, "%s/r.db", e2e_dir);
    snprintf(png, sizeof png, "%s/v.png", e2e_dir);
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    BIN " validate " DATA "/small.yaml --db %s -o %s --jobs 2", db, png);
    if (st != 0 && st != 3) /* 3: drawn but for gnuplot */
        fail_msg("exit %d: %s", st, err);
    assert_has(out, "measurements: 8: 3 predicted, 5 cannot be expressed, 0 failed");
    assert_has(out, "error by group");
    assert_has(out, "median|e|");
    assert_has(out, "chunked stands for the engine");
    assert_has(out, "disaggregated serving is not modelled");
    assert_has(out, "stored as validation 1");
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM validation_rows"), 8);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 3);
    snprintf(path, sizeof path, "%s/v.dat", e2e_dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/v.gp", e2e_dir);
    assert_int_equal(access(path, R_OK), 0);
    /* the stored validation drawn again */
    snprintf(png, sizeof png, "%s/w.svg", e2e_dir);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                BIN " plot validation --validation 1 --db %s -o %s", db, png);
    assert_true(st == 0 || st == 3);
    st =
        e2e_sh(out, sizeof out, err, sizeof err, BIN " plot validation --validation 9 --db %s", db);
    assert_int_equal(st, 1);
    assert_has(err, "no validation 9");
}

/* The JSON of two replays differs only in the validation and run ids. */
static void test_json_repeatable(void **state)
{
    (void)state;
    static char a[1 << 16];
    char db[300];
    snprintf(db, sizeof db, "%s/j.db", e2e_dir);
    assert_int_equal(e2e_sh(a, sizeof a, err, sizeof err,
                            BIN " validate " DATA "/small.yaml --db %s --json", db),
                     0);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            BIN " validate " DATA "/small.yaml --db %s --json --jobs 1", db),
                     0);
    assert_has(a, "\"validation_id\": 1");
    assert_has(out, "\"validation_id\": 2");
    assert_has(out, "\"status\": \"cannot\"");
    assert_has(out, "\"median_abs_error\"");
    /* blank the ids, then compare */
    char *texts[2] = {a, out};
    for (int t = 0; t < 2; t++)
        for (char *p = texts[t]; (p = strstr(p, "_id\": ")) != NULL; p += 6)
            for (char *d = p + 6; *d >= '0' && *d <= '9'; d++)
                *d = '0';
    assert_string_equal(a, out);
}

static void test_bad_set(void **state)
{
    (void)state;
    char db[300], set[300];
    snprintf(db, sizeof db, "%s/b.db", e2e_dir);
    e2e_file(set, sizeof set, "bad.yaml",
             "name: bad\nkind: serving\ndescription: d\nsource: s\n"
             "table: " DATA "/small.csv\nscenario: " DATA "/base.yaml\nid: id\n"
             "measured: {mean_ttft_ms: ttft_ms}\nrules:\n  - column: nope\n"
             "    cases: {a: {}}\n");
    int st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate %s --db %s", set, db);
    assert_int_equal(st, 1);
    assert_has(err, "bad.yaml:10: rules.0.column: no column 'nope'");
    assert_int_not_equal(access(db, F_OK), 0); /* nothing written */
    st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate nosuch --db %s", db);
    assert_int_equal(st, 1);
    assert_has(err, "no validation set 'nosuch'");
    assert_has(err, "aic-silicon-h100");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, BIN " validate"), 2);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --profile x"), 2);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --bogus"), 2);
    st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --ops " DATA "/small.yaml");
    assert_int_equal(st, 1);
    assert_has(err, "is a serving set");
}

/* --residuals: the TTFT residual per group in the report and the JSON; refused with --ops and
 * for a set that measures no TPOT, naming it, with nothing stored. */
static void test_residuals(void **state)
{
    (void)state;
    char db[300], set[300];
    snprintf(db, sizeof db, "%s/res.db", e2e_dir);
    for (int json = 0; json < 2; json++) {
        int st = e2e_sh(out, sizeof out, err, sizeof err,
                        BIN " validate " DATA "/small.yaml --db %s --residuals%s", db,
                        json ? " --json" : "");
        if (st != 0)
            fail_msg("exit %d: %s", st, err);
        if (json)
            break;
        assert_has(out, "TTFT residual (measured - predicted) by group");
        assert_has(out, "near whole");
        assert_has(out, "gaps");
        assert_has(out, "mixed: how much longer a mixed step");
        assert_has(out, "decode, rest: the same pairs split the closed loop's cycle");
        assert_has(out, "seats: the same pairs' TTFT residual growth");
        assert_has(out, "TTFT residual by prompt length");
        assert_has(out, "request time residual by prompt length");
    }
    assert_has(out, "\"ttft_residuals\": [");
    assert_has(out, "\"steps_median\"");
    assert_has(out, "\"gaps_median\"");
    assert_has(out, "\"n_pairs\"");
    assert_has(out, "\"n_cycles\"");
    assert_has(out, "\"n_seat_pairs\"");
    assert_has(out, "\"by_prompt_tokens\": [");
    assert_has(out, "\"prompt_tokens\":");
    assert_has(out, "\"n_request_time\":");
    /* without the flag, neither */
    int st =
        e2e_sh(out, sizeof out, err, sizeof err, BIN " validate " DATA "/small.yaml --db %s", db);
    assert_int_equal(st, 0);
    assert_null(strstr(out, "TTFT residual"));
    st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --ops --residuals");
    assert_int_equal(st, 2);
    assert_has(err, "--residuals goes with a serving set");
    snprintf(set, sizeof set, "%s/ttft-only.yaml", e2e_dir);
    snprintf(db, sizeof db, "%s/res2.db", e2e_dir);
    e2e_write(set, "name: t\nkind: serving\ndescription: d\nsource: s\n"
                   "table: " DATA "/small.csv\nscenario: " DATA "/base.yaml\nid: id\n"
                   "measured: {mean_ttft_ms: ttft_ms}\n");
    st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate %s --db %s --residuals", set, db);
    assert_int_equal(st, 1);
    assert_has(err, "ttft-only.yaml measures no mean_ttft_ms or no mean_tpot_ms");
    assert_int_not_equal(access(db, F_OK), 0); /* nothing written */
}

static void test_ops(void **state)
{
    (void)state;
    char db[300];
    snprintf(db, sizeof db, "%s/o.db", e2e_dir);
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    BIN " validate --ops " DATA "/ops.yaml --db %s", db);
    if (st != 0)
        fail_msg("exit %d: %s", st, err);
    assert_has(out, "measurements: 156: 83 predicted, 73 cannot be expressed");
    assert_has(out, "qkv_proj");
    assert_has(out, "all_reduce 2 GPUs on 2 nodes");
    /* a stored profile's points against the roofline */
    st = e2e_sh(out, sizeof out, err, sizeof err,
                LLMSIM_BINARY " profile import-vidur " DATA "/vidur --gpu a100 --model "
                              "Llama-2-7b-hf --out fixture --db %s",
                db);
    if (st != 0)
        fail_msg("import: exit %d: %s%s", st, out, err);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                BIN " validate --ops --profile fixture --db %s --json", db);
    if (st != 0)
        fail_msg("exit %d: %s", st, err);
    assert_has(out, "\"set\": \"profile fixture\"");
    assert_has(out, "\"predicted\": 72");
    st = e2e_sh(out, sizeof out, err, sizeof err, BIN " validate --ops --profile nope --db %s", db);
    assert_int_equal(st, 1);
}

LLMSIM_TEST_MAIN(e2e_group_setup, e2e_group_teardown, test_list, test_report_and_store,
                 test_json_repeatable, test_bad_set, test_residuals, test_ops)
