/*
 * test_sweep_scale.c: sweeps at cluster scale, end to end through the llmsim binary.
 *
 *  - one writer: a sweep keeps every point while another process holds the database's write
 *    lock longer than SQLite's 10 s busy timeout (workers that wrote themselves lost them);
 *  - two identical sweeps started at once store every point once, with no UNIQUE-constraint
 *    error;
 *  - a thousand repetitions of a point, each its own run;
 *  - a sweep run as 3 shards and merged (one shard twice) gives byte-identical metrics and
 *    requests to the sweep run whole, and the same `sweep --json` table;
 *  - merge refuses a shard of another sweep under the same key, a foreign file, a newer
 *    schema, a conflicting profile, and notes sweeps that differ only in their arguments;
 *    plain runs, capacity searches, profiles and validations merge once however often they are
 *    given;
 *  - two sweeps sharing a point's run merge to both complete, whatever second their runs were
 *    made in.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "store_profile.h"
#include "test_main.h"

static const char scenario[] = "name: sc\n"
                               "seed: 3\n"
                               "model: llama-3-8b\n"
                               "gpu: h100-sxm\n"
                               "scheduler: {name: orca}\n"
                               "workload:\n"
                               "  num_requests: 60\n"
                               "  arrival: {process: poisson, rate: 4.0}\n"
                               "  prompt_tokens: {dist: uniform, min: 100, max: 900}\n"
                               "  output_tokens: {dist: uniform, min: 10, max: 90}\n";

static char scn[300];

static const char *at(const char *name)
{
    return scratch_path(e2e_dir, name);
}

/* Runs `llmsim ARGS`; out/err captured (16 KiB each); returns the exit status. */
static char out[65536], err[65536];
#define llmsim(...) e2e_llmsim(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* The rows of sql on db, one line each ("a|b|c"), into a malloc'd string. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static int add_row(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    text *t = arg;
    for (int i = 0; i < ncols; i++) {
        const char *v = vals[i] ? vals[i] : "NULL";
        size_t len = strlen(v) + 2;
        if (t->n + len + 1 > t->cap) {
            t->cap = 2 * (t->n + len + 1);
            t->s = realloc(t->s, t->cap);
        }
        t->n += (size_t)snprintf(t->s + t->n, t->cap - t->n, "%s%c", v, i + 1 < ncols ? '|' : '\n');
    }
    return 0;
}

static char *rows(const char *db, const char *sql)
{
    sim_err e = {{0}};
    text t = {calloc(1, 1), 0, 1};
    store *s = store_open_readonly(db, &e);
    if (!s || store_query(s, sql, add_row, &t, &e) != 0)
        fail_msg("%s: %s", db, e.msg);
    store_close(s);
    return t.s;
}

static const char METRICS[] = "SELECT p.point, p.rep, p.seed, m.name, m.value FROM sweep_points p "
                              "JOIN metrics m ON m.run_id = p.run_id ORDER BY 1, 2, 4";
static const char REQUESTS[] = "SELECT p.point, p.rep, r.req_id, r.replica, r.arrival_ns, "
                               "r.first_scheduled_ns, r.first_token_ns, r.finish_ns, "
                               "r.prompt_tokens, r.output_tokens, r.status FROM sweep_points p "
                               "JOIN requests r ON r.run_id = p.run_id ORDER BY 1, 2, 3";

static void same_rows(const char *a, const char *b, const char *sql)
{
    char *x = rows(a, sql), *y = rows(b, sql);
    assert_true(strlen(x) > 100);
    if (strcmp(x, y) != 0)
        fail_msg("%s and %s differ for %s", a, b, sql);
    free(x);
    free(y);
}

/* ---- shards and merge ---- */

static const char ARGS[] = "--vary scheduler.name=orca,vllm --vary workload.arrival.rate=2,5,8 "
                           "--reps 2 --jobs 2";

static void shards_merge_to_the_whole(void **state)
{
    assert_int_equal(llmsim("sweep %s --db %s %s --json", scn, at("whole.db"), ARGS), 0);
    static char whole_json[sizeof out];
    snprintf(whole_json, sizeof whole_json, "%s", out);
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(
            llmsim("sweep %s --db %s/s%d.db %s --shard %d/3", scn, e2e_dir, i, ARGS, i), 0);
        assert_non_null(strstr(err, "shard"));
    }
    /* 12 tasks, t % 3 == I - 1 */
    assert_int_equal(e2e_query_int(at("s1.db"), "SELECT count(*) FROM sweep_points"), 4);
    assert_int_equal(e2e_query_int(at("s2.db"), "SELECT count(*) FROM runs"), 4);
    /* shard 2 given twice, and the output merged into again: nothing doubles */
    assert_int_equal(llmsim("merge %s %s %s %s %s", at("m.db"), at("s1.db"), at("s2.db"),
                            at("s3.db"), at("s2.db")),
                     0);
    assert_non_null(strstr(out, "sweep 1 (")); /* its key */
    assert_non_null(strstr(out, "12 of 12 runs, complete"));
    assert_non_null(strstr(err, "s2.db: 0 runs added, 4 already there"));
    assert_int_equal(llmsim("merge %s %s", at("m.db"), at("s3.db")), 0);
    assert_int_equal(e2e_query_int(at("m.db"), "SELECT count(*) FROM runs"), 12);
    assert_int_equal(e2e_query_int(at("m.db"), "SELECT count(*) FROM sweep_points"), 12);
    assert_int_equal(e2e_query_int(at("m.db"), "SELECT count(*) FROM sweep_params"), 12);
    assert_int_equal(e2e_query_int(at("m.db"), "SELECT count(*) FROM sweeps"), 1);
    assert_int_equal(e2e_query_int(at("m.db"), "SELECT count(*) FROM requests"), 12 * 60);
    /* byte-identical metrics and requests, point by point */
    same_rows(at("whole.db"), at("m.db"), METRICS);
    same_rows(at("whole.db"), at("m.db"), REQUESTS);
    /* the merged database answers the sweep as the whole one does: nothing to run */
    assert_int_equal(llmsim("sweep %s --db %s %s --json", scn, at("m.db"), ARGS), 0);
    assert_non_null(strstr(err, "12 stored, 0 to run"));
    assert_string_equal(out, whole_json);
    /* a sweep that differs in its arguments is another sweep: merged beside it, with a note */
    assert_int_equal(llmsim("sweep %s --db %s %s --seed 9 --shard 1/3", scn, at("other.db"), ARGS),
                     0);
    assert_int_equal(llmsim("merge %s %s", at("m.db"), at("other.db")), 0);
    assert_non_null(strstr(out, "sweep 2 ("));
    assert_non_null(strstr(out, "4 of 12 runs"));
    assert_non_null(strstr(err, "note: sweeps 1 and 2 vary the same values"));
    /* a shard whose paired difference has its baseline in another shard says so (it printed
     * nan): one repetition, orca in shard 1, vllm in shard 2 */
    assert_int_equal(llmsim("sweep %s --db %s --vary scheduler.name=orca,vllm --jobs 1 --shard "
                            "2/2",
                            scn, at("half.db")),
                     0);
    assert_non_null(strstr(out, "no difference: the baseline scheduler.name=orca has no "
                                "repetition in this shard"));
    assert_null(strstr(out, "nan"));
    assert_int_equal(llmsim("sweep %s --db %s --vary scheduler.name=orca,vllm --jobs 1 --shard "
                            "2/2 --json",
                            scn, at("half.db")),
                     0);
    assert_non_null(strstr(out, "\"missing\": \"the baseline's repetitions are in other shards\""));
    assert_null(strstr(out, "nan"));
}

static void merge_refusals(void **state)
{
    assert_int_equal(llmsim("sweep %s --db %s %s --shard 1/2", scn, at("r1.db"), ARGS), 0);
    assert_int_equal(llmsim("sweep %s --db %s %s --shard 2/2", scn, at("r2.db"), ARGS), 0);
    /* the same key with another definition: not a shard of the same sweep */
    sim_err e = {{0}};
    store *s = store_open(at("r2.db"), &e);
    assert_non_null(s);
    assert_int_equal(store_exec(s, "UPDATE sweeps SET base_seed = base_seed + 1", &e), 0);
    store_close(s);
    assert_int_equal(llmsim("merge %s %s %s", at("rm.db"), at("r1.db"), at("r2.db")), 1);
    assert_non_null(strstr(err, "is defined differently"));
    assert_non_null(strstr(err, "not shards of one sweep"));
    /* the output the failed merge created is gone: no half-merged database */
    assert_int_not_equal(access(at("rm.db"), F_OK), 0);
    /* into an output that exists, the inputs before the failure stay merged */
    assert_int_equal(llmsim("merge %s %s", at("rm.db"), at("r1.db")), 0);
    assert_int_equal(llmsim("merge %s %s %s", at("rm.db"), at("r1.db"), at("r2.db")), 1);
    assert_int_equal(e2e_query_int(at("rm.db"), "SELECT count(*) FROM runs"), 6);
    /* not an llmsim database, the output itself, a missing file */
    e2e_write(at("notes.db"), "not a database\n");
    assert_int_equal(llmsim("merge %s %s", at("rm.db"), at("notes.db")), 1);
    assert_int_equal(llmsim("merge %s %s", at("rm.db"), at("rm.db")), 1);
    assert_non_null(strstr(err, "is the output database itself"));
    assert_int_equal(llmsim("merge %s %s", at("rm.db"), at("nothere.db")), 1);
    /* a newer schema */
    s = store_open(at("r1.db"), &e);
    assert_int_equal(store_exec(s, "UPDATE schema_version SET version = 99", &e), 0);
    store_close(s);
    assert_int_equal(llmsim("merge %s %s", at("rm.db"), at("r1.db")), 1);
    assert_non_null(strstr(err, "schema version 99 is newer"));
    assert_int_equal(e2e_query_int(at("rm.db"), "SELECT count(*) FROM runs"), 6);
    assert_int_equal(llmsim("merge"), 2);
}

/* Two sweeps that share a point (the same scenario and seed, so the same run) merge to both
 * sweeps complete, each with its own run, whether or not their runs were made in the same
 * second: `created` pinned to one value makes the rows equal but for the id, and that run was
 * once taken as already there, its point dropped (sweep_points.run_id is UNIQUE) and the sweep
 * left "1 of 2 runs" or "2 of 2" by the clock. */
static void overlapping_sweeps_merge_alike(void **state)
{
    const char *few = "--set workload.num_requests=20 --jobs 1 --quiet";
    assert_int_equal(
        llmsim("sweep %s --db %s --vary workload.arrival.rate=2,5 %s", scn, at("ov-a.db"), few), 0);
    assert_int_equal(llmsim("sweep %s --db %s --vary workload.arrival.rate=2,8,5 --shard 1/2 %s",
                            scn, at("ov-b.db"), few),
                     0);
    /* b's shard holds points 0 and 2 (rates 2 and 5): both runs of a, equal but for the id
     * and perhaps `created` */
    const char *same = "SELECT count(*) FROM runs r JOIN other.runs o ON o.seed = r.seed AND "
                       "o.offered_rate = r.offered_rate AND o.scenario = r.scenario";
    char q[512];
    snprintf(q, sizeof q, "ATTACH '%s' AS other", at("ov-b.db"));
    sim_err e = {{0}};
    store *s = store_open(at("ov-a.db"), &e);
    assert_non_null(s);
    int64_t shared = -1;
    assert_int_equal(store_exec(s, q, &e), 0);
    assert_int_equal(store_query_int(s, same, &shared, &e), 0);
    store_close(s);
    assert_int_equal(shared, 2);
    for (int pinned = 0; pinned <= 1; pinned++) {
        if (pinned) /* as if both sweeps ran within one second */
            for (int i = 0; i < 2; i++) {
                s = store_open(at(i ? "ov-b.db" : "ov-a.db"), &e);
                assert_non_null(s);
                assert_int_equal(
                    store_exec(s, "UPDATE runs SET created = '2026-01-02T03:04:05Z'", &e), 0);
                store_close(s);
            }
        for (int order = 0; order < 2; order++) {
            char db[32], first[320], second[320];
            snprintf(db, sizeof db, "ov-m%d%d.db", pinned, order);
            snprintf(first, sizeof first, "%s", at(order ? "ov-a.db" : "ov-b.db"));
            snprintf(second, sizeof second, "%s", at(order ? "ov-b.db" : "ov-a.db"));
            assert_int_equal(llmsim("merge %s %s %s", at(db), first, second), 0);
            assert_non_null(strstr(out, "2 of 2 runs, complete")); /* a */
            assert_non_null(strstr(out, "2 of 3 runs"));           /* b's shard */
            assert_non_null(strstr(err, ": 2 runs added, 0 already there; 2 sweep points"));
            assert_null(strstr(err, "already there; 0 sweep points"));
            assert_int_equal(e2e_query_int(at(db), "SELECT count(*) FROM runs"), 4);
            assert_int_equal(e2e_query_int(at(db), "SELECT count(*) FROM sweep_points"), 4);
            assert_int_equal(e2e_query_int(at(db), "SELECT count(*) FROM sweep_points p JOIN runs "
                                                   "r ON r.id = p.run_id"),
                             4);
            /* merged again: nothing added, every run already there through its point */
            assert_int_equal(llmsim("merge %s %s %s", at(db), second, first), 0);
            assert_non_null(strstr(err, ": 0 runs added, 2 already there; 0 sweep points"));
            assert_int_equal(e2e_query_int(at(db), "SELECT count(*) FROM runs"), 4);
        }
    }
}

static void save_profile(const char *db, const char *device)
{
    cal_profile *p = cal_profile_new("tiny-prof");
    snprintf(p->kind, sizeof p->kind, "imported");
    snprintf(p->backend, sizeof p->backend, "vidur");
    snprintf(p->model, sizeof p->model, "llama-3-8b");
    snprintf(p->gpu, sizeof p->gpu, "a100-80gb");
    snprintf(p->device, sizeof p->device, "%s", device);
    p->tp = 1;
    for (int i = 1; i <= 5; i++) {
        cal_point pt = {.op = 0, .x = i, .t_ns = 1000.0 * i};
        cal_profile_add_point(p, &pt);
    }
    sim_err e = {{0}};
    store *s = store_open(db, &e);
    if (!s || store_profile_save(s, p, 0, &e) != 0)
        fail_msg("%s", e.msg);
    store_close(s);
    cal_profile_free(p);
}

/* Runs, capacity searches, profiles and validations, merged once however often they are
 * given. */
static void merge_anything(void **state)
{
    assert_int_equal(llmsim("run %s --db %s --quiet", scn, at("a.db")), 0);
    assert_int_equal(
        llmsim("run %s --db %s --quiet --set workload.num_requests=20", scn, at("a.db")), 0);
    assert_int_equal(llmsim("capacity %s --db %s --quiet --slo ttft_p99=1000ms --target-rate 6",
                            scn, at("b.db")),
                     0);
    save_profile(at("a.db"), "device one");
    int64_t probes = e2e_query_int(at("b.db"), "SELECT count(*) FROM capacity_probes");
    int64_t b_runs = e2e_query_int(at("b.db"), "SELECT count(*) FROM runs");
    assert_true(probes > 0 && b_runs > 0);
    assert_int_equal(
        llmsim("merge %s %s %s %s %s", at("ab.db"), at("a.db"), at("b.db"), at("a.db"), at("b.db")),
        0);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM runs"), 2 + b_runs);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM requests"),
                     80 + e2e_query_int(at("b.db"), "SELECT count(*) FROM requests"));
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM capacity_searches"), 1);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM capacity_probes"), probes);
    /* every probe still points at its own run */
    assert_int_equal(
        e2e_query_int(at("ab.db"), "SELECT count(*) FROM capacity_probes p JOIN runs r ON r.id = "
                                   "p.run_id"),
        e2e_query_int(at("b.db"), "SELECT count(*) FROM capacity_probes WHERE run_id IS NOT NULL"));
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM profiles"), 1);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM profile_points"), 5);
    /* a validation with its rows, values and statistics, its rows pointing at their runs */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s validate %s/tests/data_validate/small.yaml --db %s --jobs 1",
                            LLMSIM_BINARY, LLMSIM_SOURCE_DIR, at("v.db")),
                     0);
    int64_t vruns = e2e_query_int(at("v.db"), "SELECT count(*) FROM runs");
    int64_t vvalues = e2e_query_int(at("v.db"), "SELECT count(*) FROM validation_values");
    int64_t vstats = e2e_query_int(at("v.db"), "SELECT count(*) FROM validation_stats");
    assert_true(vruns > 0 && vvalues > 0 && vstats > 0);
    assert_int_equal(llmsim("merge %s %s %s", at("ab.db"), at("v.db"), at("v.db")), 0);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM validations"), 1);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM validation_rows"), 8);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM validation_values"), vvalues);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM validation_stats"), vstats);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM runs"), 2 + b_runs + vruns);
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM validation_rows v JOIN "
                                                "runs r ON r.id = v.run_id"),
                     vruns);
    /* a profile of the same name that differs is refused, and nothing of that input is kept */
    assert_int_equal(llmsim("run %s --db %s --quiet", scn, at("c.db")), 0);
    save_profile(at("c.db"), "device two");
    assert_int_equal(llmsim("merge %s %s", at("ab.db"), at("c.db")), 1);
    assert_non_null(strstr(err, "profile 'tiny-prof' differs"));
    assert_int_equal(e2e_query_int(at("ab.db"), "SELECT count(*) FROM runs"), 2 + b_runs + vruns);
}

/* ---- concurrency ---- */

/* Starts `llmsim ARGS` in the background with its output in files; returns its pid. */
static pid_t start(const char *tag, const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "exec %s %s >%s/%s.out 2>%s/%s.err", LLMSIM_BINARY, args, e2e_dir,
             tag, e2e_dir, tag);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int finish(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void slurp(const char *tag, const char *ext, char *buf, size_t len)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.%s", e2e_dir, tag, ext);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static void two_identical_sweeps_at_once(void **state)
{
    const char *args = "--vary workload.arrival.rate=1:30:1 --vary scheduler.name=orca,vllm "
                       "--jobs 2 --store requests";
    pid_t a = start("ta", "sweep %s --db %s %s", scn, at("twice.db"), args);
    pid_t b = start("tb", "sweep %s --db %s %s", scn, at("twice.db"), args);
    int sa = finish(a), sb = finish(b);
    char ea[65536], eb[65536];
    slurp("ta", "err", ea, sizeof ea);
    slurp("tb", "err", eb, sizeof eb);
    print_message("first: %.300s\nsecond: %.300s\n", ea, eb);
    assert_int_equal(sa, 0);
    assert_int_equal(sb, 0);
    const char *bad[] = {"UNIQUE", "constraint", "failed", "locked"};
    for (int i = 0; i < 4; i++) {
        assert_null(strstr(ea, bad[i]));
        assert_null(strstr(eb, bad[i]));
    }
    assert_int_equal(e2e_query_int(at("twice.db"), "SELECT count(*) FROM sweep_points"), 60);
    assert_int_equal(e2e_query_int(at("twice.db"), "SELECT count(*) FROM runs"), 60);
    assert_int_equal(e2e_query_int(at("twice.db"), "SELECT count(*) FROM requests"), 60 * 60);
    assert_int_equal(e2e_query_int(at("twice.db"), "SELECT count(*) FROM sweeps"), 1);
}

/* Another process holds the write lock for longer than SQLite's busy timeout (10 s) while the
 * sweep's runs finish: workers that wrote the database themselves gave up ("database is
 * locked") and lost their points; the one writer waits and keeps them. */
static void a_long_lock_loses_nothing(void **state)
{
    const char *db = at("locked.db");
    pid_t sweep = start("lk",
                        "sweep %s --db %s --vary name=a,b --jobs 2 --set "
                        "workload.num_requests=3000 --set workload.arrival.rate=20",
                        scn, db);
    /* once the sweep has registered its points (its runs are being simulated), take the lock;
     * no limit on the wait but the sweep's own end */
    int64_t registered = 0;
    while (registered < 2 && waitpid(sweep, NULL, WNOHANG) == 0) {
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        registered = e2e_query_int(db, "SELECT count(*) FROM sweep_params");
    }
    assert_int_equal(registered, 2);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        sim_err e = {{0}};
        store *s = store_open(db, &e);
        if (!s || store_begin(s, &e) != 0)
            _exit(1);
        sleep(12);
        store_rollback(s);
        store_close(s);
        _exit(0);
    }
    int st = finish(sweep);
    int hs = finish(holder);
    char e[65536];
    slurp("lk", "err", e, sizeof e);
    print_message("%s", e);
    assert_int_equal(hs, 0);
    assert_int_equal(st, 0);
    assert_null(strstr(e, "locked"));
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_points"), 2);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM requests"), 6000);
}

/* A thousand repetitions of a point (the most --reps allows), each its own stored run. The
 * pool itself is run with 100,000 tasks in test_pool (the old pool hung past ~24,600 pending
 * tasks); a Debug build spends ~10 ms on each tiny run, so this sweep stays small. */
static void a_thousand_reps(void **state)
{
    const char *tiny = "--set workload.num_requests=1 --store summary --jobs 2 --quiet";
    int st = llmsim("sweep %s --db %s --vary workload.arrival.rate=2 --reps 1000 %s", scn,
                    at("many.db"), tiny);
    if (st != 0)
        fail_msg("%s", err);
    assert_int_equal(e2e_query_int(at("many.db"), "SELECT count(*) FROM sweep_points"), 1000);
    assert_int_equal(e2e_query_int(at("many.db"), "SELECT count(DISTINCT seed) FROM sweep_points"),
                     1000);
    assert_int_equal(e2e_query_int(at("many.db"), "SELECT count(DISTINCT run_id) FROM metrics"),
                     1000);
}

LLMSIM_TESTS(tests, shards_merge_to_the_whole, merge_refusals, merge_anything,
             overlapping_sweeps_merge_alike, two_identical_sweeps_at_once,
             a_long_lock_loses_nothing, a_thousand_reps);

int main(void)
{
    if (e2e_mkdir() != 0)
        return 1;
    e2e_file(scn, sizeof scn, "sc.yaml", scenario);
    if (getenv("LLMSIM_TEST_FILTER")) /* one test while iterating: LLMSIM_TEST_FILTER=name */
        cmocka_set_test_filter(getenv("LLMSIM_TEST_FILTER"));
    return scratch_run_group_in(tests, e2e_dir);
}
