/*
 * test_cli.c: the llmsim program end to end: a run is stored and summarised, the same scenario
 * and seed give byte-identical JSON and identical rows, overrides apply, and bad input exits
 * non-zero with a message naming the file, line and key, adding nothing to the database; --version
 * names the build (commit, modified tree, cost model) that stored runs record, and merge notes
 * runs of different builds.
 */
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

static const char small[] = "name: small\n"
                            "seed: 3\n"
                            "model: llama-3-8b\n"
                            "gpu: h100-sxm\n"
                            "scheduler: {name: orca, max_num_seqs: 256}\n"
                            "workload:\n"
                            "  num_requests: 200\n"
                            "  arrival: {process: poisson, rate: 8.0}\n"
                            "  prompt_tokens: {dist: uniform, min: 100, max: 2000}\n"
                            "  output_tokens: {dist: uniform, min: 10, max: 300}\n";

/* FNV-1a state over the text of each column of each row, and the rows seen. */
typedef struct digest_st {
    uint64_t x;
    int rows;
} digest_st;

static int digest_row(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    digest_st *d = arg;
    d->rows++;
    for (int c = 1; c < ncols; c++) { /* skip run_id */
        for (const char *t = vals[c]; t && *t; t++)
            d->x = (d->x ^ (unsigned char)*t) * 1099511628211ULL;
        d->x = (d->x ^ '|') * 1099511628211ULL;
    }
    return 0;
}

/* A digest of every row of a table for one run (FNV-1a over the text of each column). */
static uint64_t digest(const char *db, const char *table, int run)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE run_id = %d ORDER BY 2, 3", table, run);
    sim_err err = {{0}};
    store *s = store_open_readonly(db, &err);
    if (!s)
        fail_msg("%s", err.msg);
    digest_st d = {1469598103934665603ULL, 0};
    if (store_query(s, sql, digest_row, &d, &err) != 0)
        fail_msg("%s", err.msg);
    store_close(s);
    assert_true(d.rows > 0);
    return d.x;
}

static void test_run_is_deterministic(void **state)
{
    char scn[300], db[300], j1[8192], j2[8192], err[4096];
    e2e_file(scn, sizeof scn, "small.yaml", small);
    snprintf(db, sizeof db, "%s/det.db", e2e_dir);
    assert_int_equal(
        e2e_sh(j1, sizeof j1, err, sizeof err, "%s run %s --db %s --json", LLMSIM_BINARY, scn, db),
        0);
    assert_int_equal(
        e2e_sh(j2, sizeof j2, err, sizeof err, "%s run %s --db %s --json", LLMSIM_BINARY, scn, db),
        0);
    /* identical but for the run's identity: its id and its date */
    assert_non_null(strstr(j1, "\"run_id\": 1, "));
    assert_non_null(strstr(j2, "\"run_id\": 2, "));
    assert_non_null(strstr(j1, "\"date\": \""));
    const char *b1 = strstr(j1, "\"model_id\""), *b2 = strstr(j2, "\"model_id\"");
    assert_non_null(b1);
    assert_non_null(b2);
    assert_string_equal(b1, b2);
    /* vLLM's result keys, and its metadata */
    static const char *const keys[] = {"\"model_id\": \"llama-3-8b\"",
                                       "\"num_prompts\": 200",
                                       "\"request_rate\": 8,",
                                       "\"burstiness\": 1,",
                                       "\"max_concurrency\": null",
                                       "\"failed\": 0",
                                       "\"std_ttft_ms\": ",
                                       "\"std_tpot_ms\": ",
                                       "\"std_itl_ms\": ",
                                       "\"std_e2el_ms\": ",
                                       "\"max_output_tokens_per_s\": ",
                                       "\"max_concurrent_requests\": "};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(j1, keys[i]))
            fail_msg("--json lacks %s: %s", keys[i], j1);
    /* the date is the stored run's */
    char created[32], date[64];
    sim_err e = {{0}};
    store *s = store_open_readonly(db, &e);
    assert_non_null(s);
    store_run_meta m;
    assert_int_equal(store_run_get(s, 1, &m, &e), 0);
    store_close(s);
    snprintf(created, sizeof created, "%.4s%.2s%.2s-%.2s%.2s%.2s", m.created, m.created + 5,
             m.created + 8, m.created + 11, m.created + 14, m.created + 17);
    snprintf(date, sizeof date, "\"date\": \"%s\"", created);
    assert_non_null(strstr(j1, date));
    assert_non_null(strstr(j1, "\"p99_ttft_ms\""));
    assert_non_null(strstr(j1, "\"completed\": 200"));
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 2);
    /* the database says it is llmsim's, and which schema it follows */
    assert_int_equal(e2e_query_int(db, "PRAGMA application_id"), STORE_APPLICATION_ID);
    assert_int_equal(e2e_query_int(db, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(e2e_query_int(db, "SELECT completed FROM run_summary WHERE id = 2"), 200);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM requests WHERE run_id = 1"), 200);
    assert_true(e2e_query_int(db, "SELECT count(*) FROM iterations WHERE run_id = 1") > 0);
    const char *tables[] = {"requests", "iterations", "metrics"};
    for (int i = 0; i < 3; i++)
        assert_true(digest(db, tables[i], 1) == digest(db, tables[i], 2));
    /* a different seed changes the workload */
    assert_int_equal(e2e_sh(j2, sizeof j2, err, sizeof err, "%s run %s --db %s --json --seed 4",
                            LLMSIM_BINARY, scn, db),
                     0);
    assert_string_not_equal(strstr(j1, "\"model_id\""), strstr(j2, "\"model_id\""));
}

/* The text summary states the validated error of the nearest group of the error table in the
 * validation folder (LLMSIM_VALIDATION_DIR), or that the scenario is not validated. */
static void test_run_states_validated_error(void **state)
{
    char scn[300], dir[300], table[400], out[8192], err[4096];
    e2e_file(scn, sizeof scn, "small.yaml", small);
    snprintf(dir, sizeof dir, "%s/vdir", e2e_dir);
    snprintf(table, sizeof table, "%s/errors.csv", dir);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "mkdir -p %s", dir), 0);
    e2e_write(table, "set,engine,generation,kind,serving,metric,n,median_abs,p90_abs,"
                     "signed_median\n"
                     "dev,orca,hopper,dense,agg,TTFT,12,0.18,0.5,-0.05\n"
                     "dev,orca,hopper,dense,agg,TPOT,12,0.07,0.2,0.02\n");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "LLMSIM_VALIDATION_DIR=%s %s run %s --no-db", dir, LLMSIM_BINARY, scn),
                     0);
    if (!strstr(out, "TTFT validated to a median 18% (p90 50%, signed -5%); TPOT validated to a "
                     "median 7% (p90 20%, signed +2%) on 12 orca hopper dense rows of dev\n"))
        fail_msg("%s", out);
    /* an A100 is another generation: not validated */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "LLMSIM_VALIDATION_DIR=%s %s run %s --no-db --set gpu=a100-80gb", dir,
                            LLMSIM_BINARY, scn),
                     0);
    if (!strstr(out, "not validated: no validated orca rows on ampere GPUs"))
        fail_msg("%s", out);
}

/* A long run reports its progress on stderr (here after 0 s instead of 2), never with --quiet,
 * and a short one says nothing. */
static void test_run_progress(void **state)
{
    char scn[300], out[8192], err[8192];
    e2e_file(scn, sizeof scn, "small.yaml", small);
    const char *many = "--set workload.num_requests=5000 --set workload.arrival.rate=20";
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "LLMSIM_PROGRESS_AFTER=0 %s run %s --no-db %s", LLMSIM_BINARY, scn,
                            many),
                     0);
    assert_non_null(strstr(err, "/5000 requests done"));
    assert_non_null(strstr(err, "5000/5000 requests done (100%)"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "LLMSIM_PROGRESS_AFTER=0 %s run %s --no-db %s --quiet", LLMSIM_BINARY,
                            scn, many),
                     0);
    assert_string_equal(err, "");
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --no-db", LLMSIM_BINARY, scn), 0);
    assert_null(strstr(err, "requests done"));
}

static void test_override_and_store_levels(void **state)
{
    char scn[300], db[300], out[8192], err[4096];
    e2e_file(scn, sizeof scn, "small.yaml", small);
    snprintf(db, sizeof db, "%s/ovr.db", e2e_dir);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s run %s --db %s --set scheduler.max_num_seqs=4 --store summary",
                            LLMSIM_BINARY, scn, db),
                     0);
    assert_non_null(strstr(out, "Successful requests"));
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs WHERE scenario LIKE "
                                       "'%max_num_seqs: 4%'"),
                     1);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM requests"), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM metrics WHERE name = 'p99_ttft_ms'"),
                     1);
}

/* Bad input names the file, the line and the key, exits non-zero and stores nothing. */
static void test_bad_scenarios_store_nothing(void **state)
{
    static const struct {
        const char *text, *expect;
    } cases[] = {
        {"name: x\nmodel: llama-3-8b\ngpu: h100-sxm\nworkload:\n  num_requests: 0\n",
         "num_requests"},
        {"name: x\nmodel: llama-3-8b\ngpu: h100-sxm\nbogus: 1\n", "bogus"},
        {"name: x\nmodel: llama-9\ngpu: h100-sxm\n", "llama-3-8b"},
        {"name: x\nmodel: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: fifo}\n", "vllm"},
        {"name: x\nmodel: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: orca, max_num_seqs: "
         "lots}\n",
         "max_num_seqs"},
    };
    char scn[300], db[300], err[4096];
    snprintf(db, sizeof db, "%s/bad.db", e2e_dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(scn, sizeof scn, "%s/bad%zu.yaml", e2e_dir, i);
        e2e_write(scn, cases[i].text);
        int st = e2e_sh(NULL, 0, err, sizeof err, "%s run %s --db %s", LLMSIM_BINARY, scn, db);
        print_message("case %zu: exit %d: %s", i, st, err);
        assert_true(st != 0);
        assert_non_null(strstr(err, scn));
        assert_non_null(strstr(err, cases[i].expect));
        assert_true(access(db, F_OK) != 0); /* not even created */
    }
    /* with an existing database: the bad run adds no row */
    char good[300], out[8192];
    e2e_file(good, sizeof good, "small.yaml", small);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --db %s --store summary",
                            LLMSIM_BINARY, good, db),
                     0);
    snprintf(scn, sizeof scn, "%s/bad0.yaml", e2e_dir);
    assert_true(e2e_sh(NULL, 0, err, sizeof err, "%s run %s --db %s", LLMSIM_BINARY, scn, db) != 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 1);
    /* an unwritable database is an error naming it */
    assert_true(e2e_sh(NULL, 0, err, sizeof err, "%s run %s --db /nonexistent/dir/x.db",
                       LLMSIM_BINARY, good) != 0);
    assert_non_null(strstr(err, "/nonexistent/dir/x.db"));
}

/* scenario check refuses what run refuses: it builds the same cost model (fp8 on an A100 has
 * no tensor cores for it), and with --db it looks the named profile up. */
static void test_check_refuses_what_run_refuses(void **state)
{
    char scn[300], db[300], out[8192], err[4096];
    e2e_file(scn, sizeof scn, "small.yaml", small);
    snprintf(db, sizeof db, "%s/check.db", e2e_dir);
    const char *fp8 = "--set dtype=fp8 --set gpu=a100-80gb";
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --no-db %s", LLMSIM_BINARY, scn, fp8),
        1);
    assert_non_null(strstr(err, "no fp8 tensor cores"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s scenario check %s %s",
                            LLMSIM_BINARY, scn, fp8),
                     1);
    assert_non_null(strstr(err, "no fp8 tensor cores"));
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s scenario check %s --json", LLMSIM_BINARY, scn),
        0);
    assert_non_null(strstr(out, "\"cost_model\": \"roofline h100-sxm bf16 (not measured)\""));
    /* a profile the database lacks: run refuses it, and so does check given the database */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s run %s --db %s --set profile=nope", LLMSIM_BINARY, scn, db),
                     1);
    assert_non_null(strstr(err, "no profile named 'nope'"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s scenario check %s --db %s --set profile=nope", LLMSIM_BINARY, scn,
                            db),
                     1);
    assert_non_null(strstr(err, "no profile named 'nope'"));
    /* without --db it says it did not look */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s scenario check %s --set profile=nope", LLMSIM_BINARY, scn),
                     0);
    assert_non_null(strstr(out, "profile 'nope' not looked up"));
    /* a missing database is an error, and check creates none */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s scenario check %s --set profile=nope --db %s/none.db",
                            LLMSIM_BINARY, scn, e2e_dir),
                     1);
    assert_non_null(strstr(err, "none.db"));
    char none[320];
    snprintf(none, sizeof none, "%s/none.db", e2e_dir);
    assert_int_not_equal(access(none, F_OK), 0);
}

static void test_list(void **state)
{
    char out[16384], err[1024];
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list gpus", LLMSIM_BINARY), 0);
    assert_non_null(strstr(out, "h100-sxm"));
    assert_non_null(strstr(out, "rtx-4090"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list models", LLMSIM_BINARY), 0);
    assert_non_null(strstr(out, "opt-13b"));
    assert_non_null(strstr(out, "qwen2.5-0.5b"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list schedulers", LLMSIM_BINARY),
                     0);
    const char *names[] = {"static", "orca",   "vllm",   "vllm-v0",     "chunked",
                           "tgi",    "sglang", "trtllm", "token_budget"};
    for (int i = 0; i < 9; i++)
        assert_non_null(strstr(out, names[i]));
    /* the engine presets, each with the source of its CPU figures */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list engines", LLMSIM_BINARY), 0);
    const char *engines[] = {
        "vllm 0.11 (default)", "vllm 0.6", "sglang 0.4", "trtllm 0.19", "tgi 3", "Vidur", "#13957"};
    for (int i = 0; i < 7; i++)
        assert_non_null(strstr(out, engines[i]));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list nothing", LLMSIM_BINARY), 2);
}

/* The first line of text (at most len - 1 characters) into out. */
static void first_line(const char *text, char *out, size_t len)
{
    size_t n = strcspn(text, "\n");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), text);
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

static int copy_version(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    snprintf(arg, 64, "%s", vals[0] ? vals[0] : "");
    return 0;
}

/* --version names the source commit (and a modified tree) and the cost model's inputs; a stored
 * run records that version; merge says when the runs it combines came from different builds. */
static void test_build_identity(void **state)
{
    char out[4096], err[4096], scn[300], a[300], b[300], c[300];
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s --version", LLMSIM_BINARY), 0);
    char version[256], line[256];
    first_line(out, line, sizeof line);
    assert_int_equal(strncmp(line, "llmsim 0.1.0+", 13), 0);
    snprintf(version, sizeof version, "%s", line + 7);
    const char *commit = strstr(out, "\ncommit "),
               *cost = strstr(out, "\ncost model inputs sha256 ");
    assert_non_null(commit);
    assert_non_null(cost);
    commit += 8;
    cost += 26;
    assert_true(is_hex(cost, 64));
    char want[256];
    if (strncmp(commit, "unknown", 7) == 0) {
        snprintf(want, sizeof want, "0.1.0+unknown.cm%.8s", cost);
    } else {
        assert_true(is_hex(commit, 40));
        int dirty = strncmp(commit + 40, " (tree modified)", 16) == 0;
        snprintf(want, sizeof want, "0.1.0+g%.7s%s.cm%.8s", commit, dirty ? ".dirty" : "", cost);
    }
    assert_string_equal(version, want);

    e2e_file(scn, sizeof scn, "small.yaml", small);
    snprintf(a, sizeof a, "%s/build-a.db", e2e_dir);
    snprintf(b, sizeof b, "%s/build-b.db", e2e_dir);
    snprintf(c, sizeof c, "%s/build-c.db", e2e_dir);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --db %s --quiet",
                            LLMSIM_BINARY, scn, a),
                     0);
    sim_err e = {{0}};
    store *s = store_open_readonly(a, &e);
    assert_non_null(s);
    char stored[64] = "";
    assert_int_equal(store_query(s, "SELECT version FROM runs", copy_version, stored, &e), 0);
    store_close(s);
    assert_string_equal(stored, version);

    /* one build: no note; a run of another cost model merged in: a note naming both */
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s", LLMSIM_BINARY, c, a), 0);
    assert_null(strstr(err, "builds"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "cp %s %s", a, b), 0);
    s = store_open(b, &e);
    assert_non_null(s);
    assert_int_equal(store_exec(s, "UPDATE runs SET version = '0.1.0+g0000000.cm00000000'", &e), 0);
    store_close(s);
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s", LLMSIM_BINARY, c, b), 0);
    assert_non_null(strstr(err, "holds runs of 2 builds"));
    assert_non_null(strstr(err, version));
    assert_non_null(strstr(err, "0.1.0+g0000000.cm00000000 (1 runs)"));
}

LLMSIM_TESTS(tests, test_run_is_deterministic, test_run_progress, test_run_states_validated_error,
             test_override_and_store_levels, test_bad_scenarios_store_nothing,
             test_check_refuses_what_run_refuses, test_list, test_build_identity);

int main(void)
{
    return e2e_run_group(tests);
}
