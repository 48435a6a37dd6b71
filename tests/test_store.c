/*
 * test_store.c: the results store: a new database's identity (application_id, schema version),
 * refusal of other programs' databases without writing to them, the upgrade of a version-1
 * database (and its atomicity), the views' columns and values for a run written by the run
 * writer, the read cursors and queries plots use, the capacity tables, and the generic reads.
 *
 * Every database lives in a scratch folder; version-1 and foreign databases are made through
 * the store itself (store_exec): tests reach SQLite only through the store.
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

#include "records.h"
#include "run_info.h"
#include "scratch.h"
#include "store_util.h"

#include "metrics.h"
#include "store.h"
#include "store_capacity.h"
#include "store_query.h"
#include "store_validation.h"
#include "store_run.h"
#include "store_sweep.h"
#include "test_main.h"

static char dir[256];

static const char *path_of(const char *name)
{
    return scratch_path(dir, name);
}

/* ---------------- whole files ---------------- */

static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return b;
}

/* ---------------- dropping a schema (to make v1 and foreign databases) ---------------- */

typedef struct objects {
    char v[64][64];
    char type[64][8];
    int n;
} objects;

static int collect(void *arg, int ncols, const char *const *cols, const char *const *vals)
{
    objects *ns = arg;
    assert_true(ns->n < 64);
    snprintf(ns->v[ns->n], sizeof ns->v[0], "%s", vals[0]);
    snprintf(ns->type[ns->n], sizeof ns->type[0], "%s", vals[1]);
    ns->n++;
    return 0;
}

/* Drops every view and table of s. */
static void drop_all(store *s)
{
    objects ns = {0};
    sim_err err = {{0}};
    assert_int_equal(store_query(s,
                                 "SELECT name, type FROM sqlite_master WHERE type IN ('view',"
                                 " 'table') AND name NOT LIKE 'sqlite_%' ORDER BY type DESC",
                                 collect, &ns, &err),
                     0);
    tstore_exec(s, "PRAGMA foreign_keys=OFF");
    for (int i = 0; i < ns.n; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DROP %s %s", strcmp(ns.type[i], "view") ? "TABLE" : "VIEW",
                 ns.v[i]);
        tstore_exec(s, sql);
    }
    tstore_exec(s, "PRAGMA foreign_keys=ON");
}

/* The schema of llmsim's version 1, as store.c, sweep.c and profile.c created it. */
static const char v1_schema[] =
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY, name TEXT, scenario TEXT NOT NULL, scheduler TEXT NOT NULL,"
    " seed INTEGER NOT NULL, version TEXT NOT NULL, profile TEXT NOT NULL, model TEXT, gpu TEXT,"
    " dtype TEXT, replicas INTEGER, tensor_parallel INTEGER, hardware TEXT, store_level TEXT,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE requests ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), req_id INTEGER NOT NULL, replica INTEGER,"
    " arrival_ns INTEGER NOT NULL, first_scheduled_ns INTEGER, last_scheduled_ns INTEGER,"
    " first_token_ns INTEGER, finish_ns INTEGER, prompt_tokens INTEGER NOT NULL,"
    " output_tokens INTEGER NOT NULL, preemptions INTEGER NOT NULL, scheduled INTEGER NOT NULL,"
    " status TEXT NOT NULL, reject_reason TEXT, PRIMARY KEY (run_id, req_id)) WITHOUT ROWID;"
    "CREATE TABLE iterations ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), replica INTEGER NOT NULL,"
    " iter INTEGER NOT NULL, start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " cpu_ns INTEGER NOT NULL, gpu_ns INTEGER NOT NULL, num_seqs INTEGER NOT NULL,"
    " prefill_tokens INTEGER NOT NULL, decode_tokens INTEGER NOT NULL,"
    " kv_blocks_used INTEGER NOT NULL, preempted INTEGER NOT NULL, prefill_seqs INTEGER,"
    " prefill_pairs REAL, prefill_kv REAL, prefill_q2 REAL, decode_ctx INTEGER,"
    " emit_seqs INTEGER, PRIMARY KEY (run_id, replica, iter)) WITHOUT ROWID;"
    "CREATE TABLE metrics ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL,"
    " PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
    "CREATE TABLE profiles (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    " kind TEXT NOT NULL CHECK (kind IN ('measured', 'imported')), backend TEXT NOT NULL,"
    " model TEXT NOT NULL, gpu TEXT NOT NULL, device TEXT, versions TEXT, source TEXT,"
    " dtype TEXT, tp INTEGER NOT NULL, layers INTEGER, hidden INTEGER, heads INTEGER,"
    " kv_heads INTEGER, head_dim INTEGER, intermediate INTEGER, vocab INTEGER,"
    " max_context INTEGER, gated_mlp INTEGER, tied_embeddings INTEGER, qkv_bias INTEGER,"
    " seed INTEGER, med_ape REAL, p95_ape REAL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE sweeps ("
    " id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, file TEXT, scenario TEXT NOT NULL,"
    " varied TEXT NOT NULL, reps INTEGER NOT NULL, base_seed INTEGER NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE sweep_points ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL,"
    " rep INTEGER NOT NULL, seed INTEGER NOT NULL,"
    " run_id INTEGER NOT NULL UNIQUE REFERENCES runs(id), params TEXT NOT NULL,"
    " saturated INTEGER NOT NULL, PRIMARY KEY (sweep_id, point, rep)) WITHOUT ROWID;"
    "CREATE TABLE sweep_params ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL,"
    " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (sweep_id, point, key))"
    " WITHOUT ROWID;"
    "INSERT INTO schema_version VALUES (1);"
    "INSERT INTO runs (name, scenario, scheduler, seed, version, profile, replicas)"
    " VALUES ('old', 'name: old', 'orca', 7, '0.1.0', 'roofline', 1);"
    "INSERT INTO metrics VALUES (1, 'p99_ttft_ms', 12.5), (1, 'output_throughput', 900);"
    "INSERT INTO sweeps VALUES (1, 'k', 'f.yaml', 'name: old', 'workload.arrival.rate=3', 1, 7,"
    " '2024-01-01T00:00:00Z');"
    "INSERT INTO sweep_points VALUES (1, 0, 0, 7, 1, 'workload.arrival.rate=3', 0);"
    "INSERT INTO sweep_params VALUES (1, 0, 'workload.arrival.rate', '3');";

/* A version-1 database at path, as llmsim 0.1 left it (application_id 0, schema_version 1),
 * with the statements `extra` (may be NULL) run after its schema. */
static void make_v1(const char *path, const char *extra)
{
    unlink(path);
    store *s = tstore_open(path, 0);
    drop_all(s);
    tstore_exec(s, "PRAGMA application_id = 0");
    tstore_exec(s, v1_schema);
    if (extra)
        tstore_exec(s, extra);
    store_close(s);
}

/* ---------------- writing a run ---------------- */

static eng_request request(int64_t id, int replica, int64_t arrival, int prompt, int output)
{
    eng_request rq;
    memset(&rq, 0, sizeof rq);
    rq.id = id;
    rq.replica = replica;
    rq.prompt = prompt;
    rq.output = output;
    rq.status = ENG_RQ_FINISHED;
    rq.t_arrival = arrival;
    rq.t_first_sched = rq.t_last_sched = arrival + 1000;
    rq.t_first_token = arrival + 2000000;
    rq.t_finish = arrival + 2000000 + (int64_t)(output - 1) * 30000000;
    rq.scheduled = 1;
    return rq;
}

#define NRQ 4
#define NIT 5

#define NSP 4

static eng_request rqs[NRQ];
static eng_iter_rec its[NIT];
/* request 2's two spans (preempted, then finished), request 0's and request 1's one each, in
 * the order a run reports them (by end time) */
static eng_span_rec sps[NSP];

static void fill_rows(void)
{
    rqs[0] = request(0, 0, 0, 100, 10);
    rqs[1] = request(1, 1, 5000000, 200, 1);
    rqs[2] = request(2, 0, 9000000, 300, 4);
    rqs[2].preemptions = 1;
    rqs[2].scheduled = 2;
    rqs[3] = request(3, 1, 11000000, 90000, 5);
    rqs[3].status = ENG_RQ_REJECTED;
    rqs[3].reject = ENG_REJECT_CONTEXT;
    rqs[3].t_first_sched = rqs[3].t_last_sched = rqs[3].t_first_token = rqs[3].t_finish = -1;
    rqs[3].scheduled = 0;
    sps[0] = (eng_span_rec){2, 0, 0, 9000000, -1, 9500000, ENG_SPAN_PREEMPTED};
    sps[1] = (eng_span_rec){
        0, 0, 0, rqs[0].t_first_sched, rqs[0].t_first_token, rqs[0].t_finish, ENG_SPAN_FINISHED};
    sps[2] = (eng_span_rec){
        1, 1, 0, rqs[1].t_first_sched, rqs[1].t_first_token, rqs[1].t_finish, ENG_SPAN_FINISHED};
    sps[3] = (eng_span_rec){2, 0, 1, 9700000, 9800000, rqs[2].t_finish, ENG_SPAN_FINISHED};
    sps[0].end = ENG_SPAN_SWAPPED;
    for (int i = 0; i < NIT; i++) {
        eng_iter_rec *it = &its[i];
        memset(it, 0, sizeof *it);
        it->replica = i % 2;
        it->iter = i / 2;
        it->start_ns = 1000 + 7000000 * (int64_t)i;
        it->duration_ns = 6000000 + i;
        it->cpu_ns = 100 + i;
        it->gpu_ns = 5900000 + i;
        it->num_seqs = 1 + i;
        it->prefill_tokens = i == 0 ? 100 : 0;
        it->decode_tokens = i;
        it->kv_blocks_used = 10 + i;
        it->preempted = i == 3;
        it->shape.num_seqs = it->num_seqs;
        it->shape.prefill_tokens = it->prefill_tokens;
        it->shape.decode_seqs = it->decode_tokens;
        it->shape.tokens = it->prefill_tokens + it->decode_tokens;
        it->shape.prefill_seqs = i == 0;
        it->shape.prefill_pairs = 5050.5 * i;
        it->shape.prefill_kv = 100.25 * i;
        it->shape.prefill_q2 = 1e4 * i;
        it->shape.decode_ctx = 1000 * i;
        it->shape.emit_seqs = 1 + i;
    }
}

/* The metrics of rqs as the program stores them: the engine's summary, then saturated. */
static int summary(eng_metric *m, double saturated)
{
    eng_metrics em;
    eng_metrics_init(&em);
    for (int i = 0; i < NRQ; i++)
        eng_metrics_request(&em, &rqs[i]);
    int n = eng_metrics_summary(&em, m);
    eng_metrics_free(&em);
    snprintf(m[n].name, sizeof m[n].name, "saturated");
    m[n++].value = saturated;
    return n;
}

/* Writes the rows (iterations in reverse, to check the cursor's order) and metrics as one run;
 * returns its id. */
static int64_t write_run(store *s, const store_run_info *info, store_run_hook hook, void *arg)
{
    sim_err err = {{0}};
    store_run *w = store_run_begin(s, info, 0, &err);
    if (!w)
        fail_msg("%s", err.msg);
    for (int i = NIT - 1; i >= 0; i--)
        store_run_iteration(w, &its[i]);
    for (int i = 0; i < NRQ; i++)
        store_run_request(w, &rqs[i]);
    for (int i = 0; i < NSP; i++)
        store_run_span(w, &sps[i]);
    eng_metric m[ENG_MAX_METRICS + 1];
    int n = summary(m, 1);
    int64_t id = 0;
    if (store_run_finish(w, m, n, hook, arg, &id, &err) != 0)
        return -1;
    return id;
}

static store_run_info run_info(void)
{
    return test_run_info("t", STORE_REQUESTS);
}

/* ---------------- tests ---------------- */

static void test_metric_names(void **state)
{
    fill_rows();
    eng_metric m[ENG_MAX_METRICS + 1];
    int n = summary(m, 0), k;
    const char *const *names = eng_metric_names(&k);
    assert_int_equal(k + 1, n); /* the engine's summary, plus the program's saturated */
    for (int i = 0; i < k; i++)
        assert_string_equal(names[i], m[i].name);
    assert_string_equal(m[k].name, "saturated");
}

static void test_create(void **state)
{
    const char *path = path_of("new.db");
    store *s = tstore_open(path, 0);
    assert_string_equal(store_path(s), path);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(STORE_SCHEMA_VERSION, 6);
    assert_int_equal(tstore_intf(s, "PRAGMA application_id"), 0x4C4C4D53);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM schema_version"), 1);
    assert_int_equal(tstore_intf(s, "SELECT version FROM schema_version"), 6);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM sqlite_master WHERE name IN"
                                    " ('capacity_searches', 'capacity_probes', 'capacity_results',"
                                    " 'run_summary', 'sweep_curve', 'request_spans',"
                                    " 'request_spans_all', 'validations', 'validation_rows',"
                                    " 'validation_values', 'validation_stats', 'fleet_windows',"
                                    " 'fleet_timeline', 'fleet_pools')"),
                     14);
    int64_t cookie = tstore_intf(s, "PRAGMA schema_version");
    store_close(s);
    /* opening again changes nothing (the views are kept when their text is the same) */
    s = tstore_open(path, 0);
    assert_int_equal(tstore_intf(s, "PRAGMA schema_version"), cookie);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM schema_version"), 1);
    store_close(s);
    s = tstore_open(path, 1);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_close(s);
    /* an empty file is a new database */
    const char *empty = path_of("empty.db");
    FILE *f = fopen(empty, "w");
    assert_non_null(f);
    fclose(f);
    s = tstore_open(empty, 0);
    assert_int_equal(tstore_intf(s, "PRAGMA application_id"), STORE_APPLICATION_ID);
    store_close(s);
    /* read-only: a missing file is an error naming it */
    sim_err err = {{0}};
    assert_null(store_open_readonly(path_of("missing.db"), &err));
    assert_non_null(strstr(err.msg, "missing.db"));
}

/* Another program's database (its own application_id or tables, no schema_version) is refused
 * by both opens, and store_open writes nothing to it. */
static void check_refused(const char *path, const char *expect)
{
    long n0, n1;
    char *before = slurp(path, &n0);
    sim_err err = {{0}};
    assert_null(store_open(path, &err));
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, expect));
    char *after = slurp(path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, (size_t)n0);
    char wal[400];
    snprintf(wal, sizeof wal, "%s-wal", path);
    assert_int_not_equal(access(wal, F_OK), 0);
    memset(&err, 0, sizeof err);
    assert_null(store_open_readonly(path, &err));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "not an llmsim database"));
    free(before);
    free(after);
}

static void test_foreign_refused(void **state)
{
    /* another application_id */
    const char *path = path_of("foreign.db");
    store *s = tstore_open(path, 0);
    drop_all(s);
    tstore_exec(s, "PRAGMA application_id = 305419896; CREATE TABLE notes (x TEXT);"
                   "INSERT INTO notes VALUES ('theirs'); PRAGMA journal_mode=DELETE");
    store_close(s);
    check_refused(path, "0x12345678");
    /* application_id 0 (the sqlite3 shell's), tables but no schema_version */
    const char *plain = path_of("plain.db");
    s = tstore_open(plain, 0);
    drop_all(s);
    tstore_exec(s, "PRAGMA application_id = 0; CREATE TABLE t (x); INSERT INTO t VALUES (1);"
                   "PRAGMA journal_mode=DELETE");
    store_close(s);
    check_refused(plain, "another program");
    /* not a database at all */
    const char *text = path_of("text.db");
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++)
        fputs("this is a text file, not a database\n", f);
    fclose(f);
    sim_err err = {{0}};
    assert_null(store_open(text, &err));
    assert_non_null(strstr(err.msg, text));
}

static void test_upgrade_v1(void **state)
{
    const char *path = path_of("v1.db");
    make_v1(path, NULL);
    /* read-only, a version-1 database opens as it is and reads */
    store *s = tstore_open(path, 1);
    assert_int_equal(store_schema_version(s), 1);
    store_run_meta m;
    sim_err err = {{0}};
    assert_int_equal(store_run_get(s, 1, &m, &err), 0);
    assert_string_equal(m.scheduler, "orca");
    assert_true(m.offered_rate == 0 && m.num_requests == 0);
    store_close(s);
    /* writable: upgraded in place, through version 2 to 3 */
    s = tstore_open(path, 0);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(tstore_intf(s, "PRAGMA application_id"), STORE_APPLICATION_ID);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM schema_version"), 1);
    assert_int_equal(tstore_intf(s, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM validations"), 0);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM pragma_table_info('runs') WHERE name IN"
                                    " ('offered_rate', 'num_requests', 'kv_blocks')"),
                     3);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM request_spans"), 0);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM runs WHERE name = 'old' AND seed = 7"
                                    " AND offered_rate IS NULL AND num_requests IS NULL"),
                     1);
    assert_true(tstore_double(s, "SELECT p99_ttft_ms FROM run_summary WHERE id = 1") == 12.5);
    assert_true(tstore_double(s, "SELECT offered_rate FROM sweep_curve WHERE run_id = 1") == 3.0);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM capacity_searches"), 0);
    /* new runs land beside the old one */
    fill_rows();
    store_run_info in = run_info();
    in.offered_rate = 4;
    assert_int_equal(write_run(s, &in, NULL, NULL), 2);
    store_close(s);
}

/* A version-2 database at path, as llmsim left it before request spans: today's schema less
 * request_spans and runs.kv_blocks, with one run of requests. `extra` (may be NULL) runs after. */
static void make_v2(const char *path, const char *extra)
{
    store *s = tstore_open(path, 0);
    fill_rows();
    store_run_info in = run_info();
    assert_int_equal(write_run(s, &in, NULL, NULL), 1);
    tstore_exec(s, "DROP VIEW request_spans_all; DROP TABLE request_spans;"
                   "ALTER TABLE runs DROP COLUMN kv_blocks;"
                   "DROP TABLE validation_stats; DROP TABLE validation_values;"
                   " DROP TABLE validation_rows; DROP TABLE validations;"
                   "UPDATE schema_version SET version = 2");
    if (extra)
        tstore_exec(s, extra);
    store_close(s);
}

/* Version 2 reads as it is (no spans: the cursor gives no rows), and upgrades to the current
 * version in place; a failed upgrade leaves it at 2. */
static void test_upgrade_v2(void **state)
{
    const char *path = path_of("v2.db");
    make_v2(path, NULL);
    store *s = tstore_open(path, 1);
    sim_err err = {{0}};
    assert_int_equal(store_schema_version(s), 2);
    assert_int_equal(store_has_spans(s), 0);
    store_run_meta m;
    assert_int_equal(store_run_get(s, 1, &m, &err), 0);
    assert_int_equal(m.kv_blocks, 0);
    assert_int_equal(store_run_count_spans(s, 1, &err), 0);
    store_span_cursor *c = store_spans_open(s, 1, INT64_MIN, INT64_MAX, &err);
    assert_non_null(c);
    eng_span_rec sp;
    assert_int_equal(store_spans_next(c, &sp, &err), 0);
    store_spans_close(c);
    store_close(s);
    s = tstore_open(path, 0);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(tstore_intf(s, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM request_spans"), 0);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM runs WHERE kv_blocks IS NULL"), 1);
    store_run_info in = run_info();
    in.kv_blocks = 777;
    assert_int_equal(write_run(s, &in, NULL, NULL), 2);
    /* only request 2, preempted, has its spans stored; the view adds the others' */
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM request_spans WHERE run_id = 2"), 2);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM request_spans_all WHERE run_id = 2"),
                     NSP);
    assert_int_equal(tstore_intf(s, "SELECT kv_blocks FROM runs WHERE id = 2"), 777);
    store_close(s);
    /* a table where a view must go fails the upgrade after its ALTER TABLE: nothing of it
     * stays */
    const char *blocked = path_of("v2-blocked.db");
    make_v2(blocked, "DROP VIEW run_summary; CREATE TABLE run_summary (x)");
    assert_null(store_open(blocked, &err));
    print_message("upgrade failed as expected: %s\n", err.msg);
    s = tstore_open(blocked, 1);
    assert_int_equal(store_schema_version(s), 2);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM pragma_table_info('runs') WHERE name ="
                                    " 'kv_blocks'"),
                     0);
    store_close(s);
}

/* A version-2 database gains the validation tables on a writable open; read-only, it says it
 * keeps no validations. */
static void test_upgrade_v2_validation(void **state)
{
    const char *path = path_of("v2-validation.db");
    make_v2(path, NULL);
    store *s;
    s = tstore_open(path, 1);
    assert_int_equal(store_schema_version(s), 2);
    store_validation_meta m;
    sim_err err = {{0}};
    assert_int_equal(store_validation_get(s, 1, &m, &err), -1);
    assert_non_null(strstr(err.msg, "schema version 2 keeps no validations"));
    store_close(s);
    s = tstore_open(path, 0);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(tstore_intf(s, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(
        tstore_intf(s, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'validation%%'"), 4);
    store_close(s);
}

/* A validation is written whole: heading, rows, values (with their error) and statistics. */
static void test_validation_table(void **state)
{
    store *s = tstore_open(path_of("validation.db"), 0);
    sim_err err = {{0}};
    store_validation_info in = {
        .name = "v", .kind = "serving", .version = "test", .rows = 3, .ok = 1, .cannot = 2};
    store_vwriter *w = store_validation_begin(s, &in, &err);
    assert_non_null(w);
    store_vrow r0 = {.seq = 0, .row_id = "a", .grp = "g", .line = 2, .status = STORE_V_OK};
    store_vrow r1 = {.seq = 1,
                     .row_id = "b",
                     .grp = "g",
                     .measurements = 2,
                     .status = STORE_V_CANNOT,
                     .reason = "why"};
    assert_int_equal(store_validation_row(w, &r0, &err), 0);
    assert_int_equal(store_validation_value(w, 0, "mean_ttft_ms", 0, 10, 12, &err), 0);
    assert_int_equal(store_validation_row(w, &r1, &err), 0);
    assert_int_equal(store_validation_value(w, 1, "mean_ttft_ms", 0, 5, NAN, &err), 0);
    store_vstat st = {.grp = "all",
                      .metric = "mean_ttft_ms",
                      .n = 1,
                      .median_abs = 0.2,
                      .p90_abs = 0.2,
                      .worst_abs = 0.2,
                      .signed_median = 0.2,
                      .worst_row = "a"};
    assert_int_equal(store_validation_stat(w, &st, &err), 0);
    int64_t id = 0;
    assert_int_equal(store_validation_finish(w, &id, &err), 0);
    assert_int_equal(id, 1);
    assert_true(fabs(tstore_double(s, "SELECT error FROM validation_values WHERE seq = 0") - 0.2) <
                1e-12);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM validation_values WHERE seq = 1 AND"
                                    " predicted IS NULL AND error IS NULL"),
                     1);
    assert_int_equal(tstore_intf(s, "SELECT measurements FROM validation_rows WHERE seq = 1"), 2);
    store_validation_meta m;
    assert_int_equal(store_validation_get(s, 1, &m, &err), 0);
    assert_true(m.rows == 3 && m.ok == 1 && m.cannot == 2 && !strcmp(m.kind, "serving"));
    /* an aborted validation leaves nothing */
    w = store_validation_begin(s, &in, &err);
    assert_int_equal(store_validation_row(w, &r0, &err), 0);
    store_validation_abort(w);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM validations"), 1);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM validation_rows"), 2);
    assert_int_equal(store_validation_get(s, 2, &m, &err), -1);
    assert_non_null(strstr(err.msg, "no validation 2"));
    store_close(s);
}

/* An upgrade that fails half-way leaves the version-1 database as it was. */
static void test_upgrade_is_atomic(void **state)
{
    const char *path = path_of("v1-blocked.db");
    /* a table where a view must go makes the upgrade fail after its ALTER TABLEs */
    make_v1(path, "CREATE TABLE sweep_curve (x)");
    sim_err err = {{0}};
    assert_null(store_open(path, &err));
    print_message("upgrade failed as expected: %s\n", err.msg);
    assert_non_null(strstr(err.msg, path));
    store *s = tstore_open(path, 1);
    assert_int_equal(store_schema_version(s), 1);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM pragma_table_info('runs') WHERE name ="
                                    " 'offered_rate'"),
                     0);
    assert_int_equal(tstore_intf(s, "PRAGMA application_id"), 0);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM sqlite_master WHERE name IN"
                                    " ('run_summary', 'capacity_searches')"),
                     0);
    store_close(s);
    /* a newer schema is refused */
    const char *newer = path_of("newer.db");
    char sql[80];
    snprintf(sql, sizeof sql, "UPDATE schema_version SET version = %d", STORE_SCHEMA_VERSION + 1);
    s = tstore_open(newer, 0);
    tstore_exec(s, sql);
    store_close(s);
    memset(&err, 0, sizeof err);
    assert_null(store_open(newer, &err));
    assert_non_null(strstr(err.msg, "newer"));
}

/* Column names of the first row of a query, joined by ',', and that row's values. */
typedef struct row {
    char cols[4096];
    char vals[4096];
    int rows;
} row;

static int first(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    row *r = arg;
    if (r->rows++)
        return 0;
    size_t a = 0, b = 0;
    for (int i = 0; i < ncols; i++) {
        a += (size_t)snprintf(r->cols + a, sizeof r->cols - a, "%s%s", i ? "," : "", names[i]);
        b += (size_t)snprintf(r->vals + b, sizeof r->vals - b, "%s%s", i ? "," : "",
                              vals[i] ? vals[i] : "NULL");
        assert_true(a < sizeof r->cols && b < sizeof r->vals);
    }
    return 0;
}

typedef struct sweep_hook {
    int64_t sweep;
    int point, rep;
} sweep_hook;

static int add_point(void *arg, store *s, int64_t run_id, sim_err *err)
{
    sweep_hook *h = arg;
    return store_sweep_add(s, h->sweep, h->point, h->rep, 42, run_id,
                           "workload.arrival.rate=4,scheduler.name=vllm", 1, err);
}

static void test_views(void **state)
{
    store *s = tstore_open(path_of("views.db"), 0);
    fill_rows();
    store_run_info in = run_info();
    in.offered_rate = 2.5;
    in.num_requests = NRQ;
    int64_t run = write_run(s, &in, NULL, NULL);
    assert_int_equal(run, 1);
    /* run_summary: the run's columns, then every metric, then saturated */
    row r = {0};
    sim_err err = {{0}};
    assert_int_equal(store_query(s, "SELECT * FROM run_summary WHERE id = 1", first, &r, &err), 0);
    assert_int_equal(r.rows, 1);
    char expect[8192] = "id,name,model,gpu,dtype,scheduler,replicas,tensor_parallel,offered_rate,"
                        "num_requests,seed,profile,created";
    int n;
    const char *const *names = eng_metric_names(&n);
    for (int i = 0; i < n; i++)
        snprintf(expect + strlen(expect), sizeof expect - strlen(expect), ",%s", names[i]);
    strcat(expect, ",saturated");
    names = eng_pd_metric_names(&n); /* NULL for an aggregated run */
    for (int i = 0; i < n; i++)
        snprintf(expect + strlen(expect), sizeof expect - strlen(expect), ",%s", names[i]);
    names = eng_offload_metric_names(&n); /* NULL without offload tiers */
    for (int i = 0; i < n; i++)
        snprintf(expect + strlen(expect), sizeof expect - strlen(expect), ",%s", names[i]);
    assert_string_equal(r.cols, expect);
    assert_non_null(strstr(r.vals, "1,t,llama-3-8b,h100-sxm,fp16,vllm,2,1,2.5,4,42,roofline,"));
    eng_metric m[ENG_MAX_METRICS + 1];
    int nm = summary(m, 1);
    for (int i = 0; i < nm; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT \"%.39s\" FROM run_summary WHERE id = 1", m[i].name);
        double v = tstore_double(s, sql); /* SQLite stores NaN as NULL, read back as NaN */
        assert_true(v == m[i].value || (isnan(v) && isnan(m[i].value)));
    }
    assert_int_equal(tstore_intf(s, "SELECT completed FROM run_summary"), 3);
    assert_int_equal(tstore_intf(s, "SELECT rejected FROM run_summary"), 1);
    assert_int_equal(tstore_intf(s, "SELECT saturated FROM run_summary"), 1);
    /* a zero-initialised info stores NULL for the offered rate and request count */
    store_run_info plain = run_info();
    int64_t run2 = write_run(s, &plain, NULL, NULL);
    assert_int_equal(
        tstore_intf(s,
                    "SELECT count(*) FROM run_summary WHERE id = %lld AND offered_rate IS"
                    " NULL AND num_requests IS NULL",
                    (long long)run2),
        1);
    /* sweep_curve: one row per point and repetition */
    int64_t sw;
    assert_int_equal(store_sweep_open(s, "key", "f.yaml", "name: t", "rate", 1, 42, &sw, &err), 0);
    const char *keys[] = {"workload.arrival.rate", "scheduler.name"}, *vals[] = {"4", "vllm"};
    assert_int_equal(store_sweep_set_params(s, sw, 0, 2, keys, vals, &err), 0);
    sweep_hook h = {sw, 0, 0};
    int64_t run3 = write_run(s, &plain, add_point, &h);
    memset(&r, 0, sizeof r);
    assert_int_equal(store_query(s, "SELECT * FROM sweep_curve", first, &r, &err), 0);
    assert_int_equal(r.rows, 1);
    assert_string_equal(r.cols, "sweep_id,point,rep,seed,run_id,saturated,params,scheduler,"
                                "offered_rate,output_throughput,request_throughput,"
                                "median_ttft_ms,p99_ttft_ms,median_tpot_ms,p99_tpot_ms,"
                                "median_itl_ms,p99_itl_ms,median_e2el_ms,p99_e2el_ms");
    assert_int_equal(
        tstore_intf(s,
                    "SELECT count(*) FROM sweep_curve WHERE sweep_id = %lld AND point = 0"
                    " AND rep = 0 AND seed = 42 AND saturated = 1 AND params ="
                    " 'workload.arrival.rate=4,scheduler.name=vllm' AND scheduler ="
                    " 'vllm'",
                    (long long)sw),
        1);
    assert_int_equal(tstore_intf(s, "SELECT run_id FROM sweep_curve"), run3);
    assert_true(tstore_double(s, "SELECT offered_rate FROM sweep_curve") == 4.0);
    assert_true(tstore_double(s, "SELECT p99_ttft_ms FROM sweep_curve") ==
                tstore_double(s, "SELECT p99_ttft_ms FROM run_summary WHERE id = 1"));
    /* the run's own offered rate comes first */
    tstore_exec(s, "UPDATE runs SET offered_rate = 3.5 WHERE id = 3");
    assert_true(tstore_double(s, "SELECT offered_rate FROM sweep_curve") == 3.5);
    store_close(s);
}

static void test_cursors(void **state)
{
    const char *path = path_of("cursors.db");
    store *w = tstore_open(path, 0);
    fill_rows();
    store_run_info in = run_info();
    in.offered_rate = 2.5;
    in.num_requests = 9;
    in.kv_blocks = 4096;
    assert_int_equal(write_run(w, &in, NULL, NULL), 1);
    in.level = STORE_SUMMARY;
    assert_int_equal(write_run(w, &in, NULL, NULL), 2);
    store_close(w);
    store *s = tstore_open(path, 1);
    sim_err err = {{0}};
    /* the run's row */
    store_run_meta m;
    assert_int_equal(store_run_get(s, 1, &m, &err), 0);
    assert_int_equal(m.id, 1);
    assert_string_equal(m.scheduler, "vllm");
    assert_string_equal(m.model, "llama-3-8b");
    assert_string_equal(m.level, "requests");
    assert_true(m.seed == 42 && m.replicas == 2 && m.tensor_parallel == 1);
    assert_true(m.offered_rate == 2.5 && m.num_requests == 9 && m.kv_blocks == 4096);
    assert_int_equal(strlen(m.created), 20);
    assert_int_equal(store_run_get(s, 7, &m, &err), -1);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "no run 7 in this database"));
    /* counts */
    assert_int_equal(store_run_count_requests(s, 1, &err), NRQ);
    assert_int_equal(store_run_count_iterations(s, 1, &err), NIT);
    assert_int_equal(store_run_count_requests(s, 2, &err), 0);
    eng_metric mets[ENG_MAX_METRICS];
    int nm = store_run_metrics(s, 1, mets, ENG_MAX_METRICS, &err), k;
    eng_metric_names(&k);
    assert_int_equal(nm, k + 1);
    for (int i = 1; i < nm; i++)
        assert_true(strcmp(mets[i - 1].name, mets[i].name) < 0);
    /* iterations in (replica, iter) order, every field back */
    store_iter_cursor *ic = store_iterations_open(s, 1, &err);
    assert_non_null(ic);
    eng_iter_rec it;
    int order[NIT] = {0, 2, 4, 1, 3}, n = 0, rc;
    while ((rc = store_iterations_next(ic, &it, &err)) == 1) {
        assert_true(n < NIT);
        rec_check("iteration", n, &it, &its[order[n]], rec_iter_fields,
                  REC_NFIELDS(rec_iter_fields));
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, NIT);
    store_iterations_close(ic);
    /* requests in id order */
    store_rq_cursor *qc = store_requests_open(s, 1, &err);
    assert_non_null(qc);
    eng_request q;
    n = 0;
    while ((rc = store_requests_next(qc, &q, &err)) == 1) {
        rec_check("request", n, &q, &rqs[n], rec_request_fields, REC_NFIELDS(rec_request_fields));
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, NRQ);
    store_requests_close(qc);
    /* latencies: finished requests only; TPOT needs two output tokens */
    double *v;
    assert_int_equal(store_request_latencies(s, 1, STORE_LAT_TTFT, &v, &err), 3);
    for (int i = 0; i < 3; i++)
        assert_true(v[i] == (double)(rqs[i].t_first_token - rqs[i].t_arrival) / 1e6);
    free(v);
    assert_int_equal(store_request_latencies(s, 1, STORE_LAT_TPOT, &v, &err), 2);
    assert_true(v[1] == (double)(rqs[2].t_finish - rqs[2].t_first_token) / 1e6 / 3);
    free(v);
    assert_int_equal(store_request_latencies(s, 1, STORE_LAT_E2E, &v, &err), 3);
    free(v);
    assert_int_equal(store_request_latencies(s, 2, STORE_LAT_E2E, &v, &err), 0);
    assert_null(v);
    /* spans in (request, span) order, every field back */
    assert_int_equal(store_has_spans(s), 1);
    assert_int_equal(store_run_count_spans(s, 1, &err), NSP);
    store_span_cursor *sc = store_spans_open(s, 1, INT64_MIN, INT64_MAX, &err);
    assert_non_null(sc);
    eng_span_rec sp;
    int sorder[NSP] = {1, 2, 0, 3};
    n = 0;
    while ((rc = store_spans_next(sc, &sp, &err)) == 1) {
        assert_true(n < NSP);
        assert_memory_equal(&sp, &sps[sorder[n++]], sizeof sp);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, NSP);
    store_spans_close(sc);
    /* windows: only the rows that overlap [9.6 ms, 9.9 ms]: request 0's span (to 272 ms) and
     * request 2's second one */
    sc = store_spans_open(s, 1, 9600000, 9900000, &err);
    assert_int_equal(store_spans_next(sc, &sp, &err), 1);
    assert_true(sp.req == 0 && sp.span == 0);
    assert_int_equal(store_spans_next(sc, &sp, &err), 1);
    assert_true(sp.req == 2 && sp.span == 1);
    assert_int_equal(store_spans_next(sc, &sp, &err), 0);
    store_spans_close(sc);
    ic = store_iterations_open_range(s, 1, 7000500, 7001500, &err);
    n = 0;
    while (store_iterations_next(ic, &it, &err) == 1) /* only iteration 1 (from 7001000) */
        n++;
    store_iterations_close(ic);
    assert_int_equal(n, 1);
    qc = store_requests_open_range(s, 1, 10000000, 10000000, &err);
    n = 0;
    while (store_requests_next(qc, &q, &err) == 1)
        n += q.t_arrival <= 10000000 && (q.t_finish < 0 || q.t_finish >= 10000000);
    store_requests_close(qc);
    assert_int_equal(n, tstore_intf(s, "SELECT count(*) FROM requests WHERE run_id = 1 AND"
                                       " arrival_ns <= 10000000 AND (finish_ns IS NULL OR"
                                       " finish_ns >= 10000000)"));
    /* a summary-level run has no rows */
    ic = store_iterations_open(s, 2, &err);
    assert_int_equal(store_iterations_next(ic, &it, &err), 0);
    store_iterations_close(ic);
    assert_int_equal(store_run_count_spans(s, 2, &err), 0);
    /* the scenario text */
    char *text;
    assert_int_equal(store_run_scenario(s, 1, &text, &err), 0);
    assert_string_equal(text, "name: t");
    free(text);
    assert_int_equal(store_run_scenario(s, 8, &text, &err), -1);
    store_close(s);
}

typedef struct walk {
    char text[1024];
    int rows, stop_at;
} walk;

static int list_run(void *arg, const store_run_meta *m)
{
    walk *w = arg;
    w->rows++;
    snprintf(w->text + strlen(w->text), sizeof w->text - strlen(w->text), "%lld:%s;",
             (long long)m->id, m->scheduler);
    return w->rows == w->stop_at ? 5 : 0;
}

static int list_key(void *arg, const char *key)
{
    walk *w = arg;
    snprintf(w->text + strlen(w->text), sizeof w->text - strlen(w->text), "%s;", key);
    return 0;
}

static int curve_row(void *arg, const store_curve_row *r)
{
    walk *w = arg;
    w->rows++;
    snprintf(w->text + strlen(w->text), sizeof w->text - strlen(w->text),
             "%lld/%lld run %lld sat %d y %d:%g x %d:%g %s;", (long long)r->point,
             (long long)r->rep, (long long)r->run_id, r->saturated, r->has_y, r->y, r->has_x, r->x,
             r->series ? r->series : "(null)");
    return 0;
}

static void test_sweep_reads(void **state)
{
    const char *path = path_of("sweep.db");
    store *s = tstore_open(path, 0);
    fill_rows();
    sim_err err = {{0}};
    int64_t sw;
    assert_int_equal(store_sweep_open(s, "k1", "f.yaml", "name: t", "a;b", 2, 1, &sw, &err), 0);
    const char *keys[] = {"workload.arrival.rate", "scheduler.name"};
    const char *v0[] = {"2", "orca"}, *v1[] = {"8", "vllm"};
    assert_int_equal(store_sweep_set_params(s, sw, 0, 2, keys, v0, &err), 0);
    assert_int_equal(store_sweep_set_params(s, sw, 1, 2, keys, v1, &err), 0);
    store_run_info in = run_info();
    for (int p = 0; p < 2; p++)
        for (int rep = 0; rep < 2; rep++) {
            sweep_hook h = {sw, p, rep};
            in.scheduler = p ? "vllm" : "orca";
            in.offered_rate = 0.5 + p;
            assert_true(write_run(s, &in, add_point, &h) > 0);
        }
    store_close(s);
    s = tstore_open(path, 1);
    store_sweep_meta m;
    assert_int_equal(store_sweep_get(s, sw, &m, &err), 0);
    assert_string_equal(m.key, "k1");
    assert_string_equal(m.file, "f.yaml");
    assert_int_equal(m.reps, 2);
    assert_int_equal(store_sweep_get(s, 9, &m, &err), -1);
    assert_non_null(strstr(err.msg, "no sweep 9 in this database"));
    walk w = {0};
    assert_int_equal(store_sweep_keys(s, sw, list_key, &w, &err), 0);
    assert_string_equal(w.text, "scheduler.name;workload.arrival.rate;");
    /* runs, walked and stopped early */
    memset(&w, 0, sizeof w);
    assert_int_equal(store_run_list(s, list_run, &w, &err), 0);
    assert_string_equal(w.text, "1:orca;2:orca;3:vllm;4:vllm;");
    memset(&w, 0, sizeof w);
    w.stop_at = 2;
    assert_int_equal(store_run_list(s, list_run, &w, &err), 5);
    assert_int_equal(w.rows, 2);
    /* the curve: y and x metrics by scheduler; x from the varied rate; series by a key;
     * offered_rate: the varied value first, then a metric, then the run's column */
    static const struct {
        store_curve_query q;
        const char *text, *has[2]; /* the whole text, or two rows it holds */
    } curves[] = {
        {{.y_metric = "rejected", .x_metric = "completed"},
         "0/0 run 1 sat 1 y 1:1 x 1:3 orca;0/1 run 2 sat 1 y 1:1 x 1:3 orca;1/0 run 3 sat 1 y 1:1 "
         "x 1:3 vllm;1/1 run 4 sat 1 y 1:1 x 1:3 vllm;",
         {NULL, NULL}},
        {{.y_metric = "nothing",
          .x_metric = "completed",
          .x_param = "workload.arrival.rate",
          .by = "workload.arrival.rate"},
         NULL,
         {"0/0 run 1 sat 1 y 0:0 x 1:2 2;", "1/1 run 4 sat 1 y 0:0 x 1:8 8;"}},
        {{.y_metric = "nothing", .x_metric = "offered_rate", .by = "no.such.key"},
         NULL,
         {"0/0 run 1 sat 1 y 0:0 x 1:0.5 (null);", "1/0 run 3 sat 1 y 0:0 x 1:1.5 (null);"}},
    };
    for (size_t i = 0; i < sizeof curves / sizeof curves[0]; i++) {
        store_curve_query q = curves[i].q;
        q.sweep = sw;
        memset(&w, 0, sizeof w);
        assert_int_equal(store_sweep_curve(s, &q, curve_row, &w, &err), 0);
        if (curves[i].text)
            assert_string_equal(w.text, curves[i].text);
        for (int k = 0; k < 2 && curves[i].has[k]; k++)
            assert_non_null(strstr(w.text, curves[i].has[k]));
    }
    store_close(s);
}

static int probe_hook(void *arg, store *s, int64_t run_id, sim_err *err)
{
    store_capacity_probe *p = arg;
    p->run_id = run_id;
    if (store_capacity_add_probe(s, 1, p, err) != 0)
        return -1;
    return p->ok < 0 ? sim_errf(err, "hook refuses") : 0;
}

/* Probe seq of vllm in phase at rate on replicas, which met the SLOs. */
static store_capacity_probe met_probe(int64_t seq, store_capacity_phase phase, double rate,
                                      int replicas)
{
    return (store_capacity_probe){
        .seq = seq, .choice = "vllm", .phase = phase, .rate = rate, .replicas = replicas, .ok = 1};
}

static void test_capacity(void **state)
{
    store *s = tstore_open(path_of("capacity.db"), 0);
    fill_rows();
    sim_err err = {{0}};
    store_capacity_info info = {.file = "c.yaml",
                                .scenario = "name: c",
                                .slo = "ttft_p99=1000ms,tpot_p99=50ms",
                                .target_rate = 12,
                                .compare_key = "scheduler.name",
                                .precision = 0.05,
                                .base_seed = 5};
    int64_t id;
    assert_int_equal(store_capacity_open(s, &info, &id, &err), 0);
    assert_int_equal(id, 1);
    /* probes written in their runs' transactions */
    store_run_info in = run_info();
    store_capacity_probe p = met_probe(0, STORE_CAPACITY_SEARCH, 4, 1);
    int64_t run = write_run(s, &in, probe_hook, &p);
    assert_int_equal(run, 1);
    p.seq = 1;
    p.rate = 8;
    p.ok = 0;
    p.saturated = 1;
    assert_int_equal(write_run(s, &in, probe_hook, &p), 2);
    /* a probe whose run fails is not stored, and neither is the run */
    p.seq = 2;
    p.ok = -1;
    assert_int_equal(write_run(s, &in, probe_hook, &p), -1);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM runs"), 2);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM capacity_probes"), 2);
    /* a cluster probe without a stored run; a duplicate seq is an error */
    store_capacity_probe c = met_probe(2, STORE_CAPACITY_CLUSTER, 12, 3);
    assert_int_equal(store_capacity_add_probe(s, id, &c, &err), 0);
    assert_int_equal(store_capacity_add_probe(s, id, &c, &err), -1);
    assert_non_null(strstr(err.msg, "capacity probe"));
    store_capacity_result r = {.choice = "vllm", .rate_per_replica = 4.5, .replicas = 3, .gpus = 3};
    assert_int_equal(store_capacity_add_result(s, id, &r, &err), 0);
    r.replicas = r.gpus = 4;
    assert_int_equal(store_capacity_add_result(s, id, &r, &err), 0); /* replaces */
    store_capacity_result none = {0};
    assert_int_equal(store_capacity_add_result(s, id, &none, &err), 0);
    /* what landed */
    static const tstore_row landed[] = {
        {"SELECT count(*) FROM capacity_searches WHERE file = 'c.yaml' AND"
         " slo = 'ttft_p99=1000ms,tpot_p99=50ms' AND target_rate = 12 AND"
         " compare_key = 'scheduler.name' AND precision = 0.05 AND"
         " base_seed = 5 AND scenario = 'name: c'",
         1},
        {"SELECT count(*) FROM capacity_probes WHERE search_id = 1 AND"
         " seq = 1 AND choice = 'vllm' AND phase = 'search' AND rate = 8"
         " AND replicas = 1 AND ok = 0 AND saturated = 1 AND run_id = 2",
         1},
        {"SELECT count(*) FROM capacity_probes WHERE seq = 2 AND"
         " phase = 'cluster' AND run_id IS NULL AND replicas = 3",
         1},
        {"SELECT count(*) FROM capacity_results", 2},
        {"SELECT replicas FROM capacity_results WHERE choice = 'vllm'", 4},
        {"SELECT count(*) FROM capacity_results WHERE choice = '' AND"
         " rate_per_replica IS NULL AND replicas IS NULL",
         1},
    };
    tstore_expect(s, landed, sizeof landed / sizeof landed[0]);
    /* a probe must name a search that exists */
    assert_int_equal(store_capacity_add_probe(s, 99, &c, &err), -1);
    store_close(s);
}

static int count_rows(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    int *n = arg;
    assert_int_equal(ncols, 2);
    assert_string_equal(names[0], "a");
    assert_null(vals[1]);
    return ++*n == 3 ? 9 : 0;
}

static void test_generic_reads(void **state)
{
    const char *path = path_of("generic.db");
    store *s = tstore_open(path, 0);
    sim_err err = {{0}};
    int n = 0;
    assert_int_equal(
        store_query(s, "SELECT 1 AS a, NULL AS b; SELECT 2 AS a, NULL AS b;", count_rows, &n, &err),
        0);
    assert_int_equal(n, 2);
    /* a non-zero return stops the walk and is returned */
    assert_int_equal(store_query(s,
                                 "SELECT value AS a, NULL AS b FROM (SELECT 1 AS value UNION"
                                 " ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4)",
                                 count_rows, &n, &err),
                     9);
    assert_int_equal(store_query(s, "SELECT 1", NULL, NULL, &err), 0);
    /* reads only */
    assert_int_equal(store_query(s, "DELETE FROM runs", NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "only read"));
    int64_t v;
    assert_int_equal(store_query_int(s, "INSERT INTO schema_version VALUES (9)", &v, &err), -1);
    assert_int_equal(tstore_intf(s, "SELECT count(*) FROM schema_version"), 1);
    /* errors name the database */
    assert_int_equal(store_query(s, "SELECT nope FROM nowhere", NULL, NULL, &err), -1);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "nowhere"));
    assert_int_equal(store_query_int(s, "SELECT 1 WHERE 0", &v, &err), -1);
    assert_non_null(strstr(err.msg, "no row"));
    double d;
    assert_int_equal(store_query_double(s, "SELECT NULL", &d, &err), 0);
    assert_true(isnan(d));
    assert_int_equal(store_query_double(s, "SELECT 2.5", &d, &err), 0);
    assert_true(d == 2.5);
    store_close(s);
}

LLMSIM_TESTS(tests, test_metric_names, test_create, test_foreign_refused, test_upgrade_v1,
             test_upgrade_v2, test_upgrade_is_atomic, test_upgrade_v2_validation,
             test_validation_table, test_views, test_cursors, test_sweep_reads, test_capacity,
             test_generic_reads);

int main(void)
{
    return scratch_run_group(tests, dir, "/tmp/llmsim-test-store-XXXXXX");
}
