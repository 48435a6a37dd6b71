/*
 * test_plots.c: `llmsim plot` and `llmsim export trace` end to end.
 *
 * The group setup builds one database with `llmsim run` (three schedulers on the demo scenario,
 * plus eight short runs that the test itself files as a two-rate, two-scheduler, two-repetition
 * sweep by inserting sweeps/sweep_points/sweep_params rows, so the curve does not depend on the
 * sweep command). Each plot kind must produce an image of the expected size (read from the PNG
 * header) and a data file holding exactly the numbers in the database; where gnuplot is not
 * installed the image checks are skipped and the data files are still checked. The trace must
 * be well-formed JSON (read by sim's JSON reader) with one "X" event per iteration.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "scratch.h"
#include "store_util.h"

#include "json.h"
#include "store.h"
#include "store_query.h"
#include "expect_text.h"
#include "test_main.h"

static char db[300];
static int have_gnuplot;
static int64_t preempt_run; /* vLLM in a small KV cache: requests preempted and resumed */

static char out[65536], err[65536];

/* Runs a shell command; returns its exit status with stdout and stderr in out and err. */
#define sh(...) e2e_sh(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* `llmsim CMD --db (the test database) -o (the scratch folder)/FILE` is a user error (exit 1)
 * whose message holds says (the whole message stays in err). */
static void user_error(const char *cmd, const char *file, const char *says)
{
    e2e_llmsim_says(err, sizeof err, 1, says, "%s --db %s -o %s/%s", cmd, db, e2e_dir, file);
}

static double query_double(const char *sql)
{
    return tstore_double_at(db, sql);
}

static int64_t query_int(const char *fmt, ...)
{
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return (int64_t)llround(query_double(sql));
}

static void exec_sql(const char *sql)
{
    tstore_exec_at(db, sql);
}

/* Runs the demo scenario with extra --set arguments; returns the new run's id. */
static int64_t run_demo(const char *sets)
{
    int rc =
        sh("%s run %s/scenarios/demo.yaml --db %s %s", LLMSIM_BINARY, LLMSIM_SOURCE_DIR, db, sets);
    if (rc != 0)
        fail_msg("llmsim run failed (%d): %s", rc, err);
    return query_int("SELECT max(id) FROM runs");
}

static int on_path(const char *prog)
{
    const char *path = getenv("PATH");
    char buf[1024];
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (access(buf, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* The sweep: rates 2 and 8 x orca and vllm x 2 repetitions (seeds 1 and 2) = points 0..3. */
static void make_sweep(void)
{
    static const char *const scheds[2] = {"orca", "vllm"};
    static const int rates[2] = {2, 8};
    exec_sql("INSERT INTO sweeps (id, key, file, scenario, varied, reps, base_seed) VALUES (1,"
             " 'test', 'demo.yaml', 'demo', 'workload.arrival.rate;scheduler.name', 2, 1)");
    for (int p = 0; p < 4; p++) {
        int rate = rates[p / 2];
        const char *s = scheds[p % 2];
        char sql[1024];
        for (int rep = 0; rep < 2; rep++) {
            char sets[256];
            snprintf(sets, sizeof sets,
                     "--seed %d --set workload.num_requests=40 --set workload.arrival.rate=%d "
                     "--set scheduler.name=%s --store summary",
                     rep + 1, rate, s);
            int64_t run = run_demo(sets);
            /* the high-rate orca point is filed as saturated, to check the flag is carried */
            snprintf(sql, sizeof sql,
                     "INSERT INTO sweep_points VALUES (1, %d, %d, %d, %lld,"
                     " 'workload.arrival.rate=%d,scheduler.name=%s', %d)",
                     p, rep, rep + 1, (long long)run, rate, s, p == 2 && rep == 1);
            exec_sql(sql);
        }
        snprintf(sql, sizeof sql,
                 "INSERT INTO sweep_params VALUES (1, %d, 'workload.arrival.rate', '%d');"
                 "INSERT INTO sweep_params VALUES (1, %d, 'scheduler.name', '%s')",
                 p, rate, p, s);
        exec_sql(sql);
    }
}

static int setup(void **state)
{
    if (e2e_mkdir() != 0)
        return -1;
    snprintf(db, sizeof db, "%s/plots.db", e2e_dir);
    have_gnuplot = on_path("gnuplot");
    if (!have_gnuplot)
        fprintf(stderr, "test_plots: gnuplot not on PATH: image checks skipped, data checked\n");
    static const char *const scheds[3] = {"orca", "static", "vllm"};
    for (int i = 0; i < 3; i++) { /* runs 1, 2, 3 */
        char sets[128];
        snprintf(sets, sizeof sets, "--set workload.num_requests=60 --set scheduler.name=%s",
                 scheds[i]);
        run_demo(sets);
    }
    make_sweep(); /* runs 4..11 */
    preempt_run = run_demo("--set scheduler.name=vllm --set memory.gpu_utilization=0.22"
                           " --set workload.arrival.rate=6 --set workload.num_requests=80");
    if (query_int("SELECT count(*) FROM requests WHERE run_id = %lld AND preemptions > 0",
                  (long long)preempt_run) < 3)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    return e2e_rmdir();
}

/* Checks path is a PNG of w x h pixels (the IHDR chunk right after the signature). */
static void check_png(const char *path, int w, int h)
{
    if (!have_gnuplot)
        return;
    uint32_t pw, ph;
    e2e_png_size(path, &pw, &ph);
    assert_int_equal(pw, w);
    assert_int_equal(ph, h);
}

/* Runs a plot; expects the image drawn (status 0), or status 3 where gnuplot is missing. */
static void plot(const char *args)
{
    int rc = sh("%s plot %s --db %s", LLMSIM_BINARY, args, db);
    if (rc != (have_gnuplot ? 0 : 3))
        fail_msg("llmsim plot %s: status %d: %s", args, rc, err);
}

/* A data file's blocks: rows of numbers; "# " lines are comments, two blank lines end a block.
 */
typedef struct table {
    int nblocks;
    int rows[64];       /* rows per block */
    double *v[64];      /* rows x cols values per block */
    int cols[64];       /* columns of the block's first row */
    char names[64][96]; /* "# series: NAME" */
} table;

static void read_table(const char *path, table *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int blanks = 0, b = 0, started = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n') {
            blanks++;
            continue;
        }
        if (blanks >= 2 && started) {
            b++;
            started = 0;
        }
        blanks = 0;
        assert_true(b < 64);
        if (strncmp(line, "# series: ", 10) == 0) {
            size_t n = strcspn(line + 10, "\n");
            assert_true(n < sizeof t->names[b]);
            memcpy(t->names[b], line + 10, n);
            t->names[b][n] = '\0';
        }
        if (line[0] == '#')
            continue;
        double vals[16];
        int n = 0;
        char *p = line, *end;
        while (n < 16 && (vals[n] = strtod(p, &end), end != p)) {
            n++;
            p = end;
        }
        if (!started)
            t->cols[b] = n;
        assert_int_equal(n, t->cols[b]);
        t->v[b] = realloc(t->v[b], (size_t)(t->rows[b] + 1) * (size_t)n * sizeof(double));
        memcpy(t->v[b] + (size_t)t->rows[b] * (size_t)n, vals, (size_t)n * sizeof(double));
        t->rows[b]++;
        started = 1;
    }
    fclose(f);
    t->nblocks = b + started;
}

static void free_table(table *t)
{
    for (int i = 0; i < 64; i++)
        free(t->v[i]);
}

/* Runs a plot (args) that writes NAME.png and NAME.dat in the scratch folder: the picture is
 * w x h (unchecked when w is 0, or without gnuplot) and the data is read into *t. */
static void plot_table(const char *args, const char *name, int w, int h, table *t)
{
    char path[320];
    plot(args);
    if (w > 0) {
        snprintf(path, sizeof path, "%s/%s.png", e2e_dir, name);
        check_png(path, w, h);
    }
    snprintf(path, sizeof path, "%s/%s.dat", e2e_dir, name);
    read_table(path, t);
}

static double cell(const table *t, int b, int row, int col)
{
    return t->v[b][(size_t)row * (size_t)t->cols[b] + (size_t)col];
}

static void test_curve(void **state)
{
    char args[512], path[320];
    snprintf(args, sizeof args, "curve --sweep 1 -o %s/curve.png --size 800x500", e2e_dir);
    table t;
    plot_table(args, "curve", 800, 500, &t);
    assert_int_equal(t.nblocks, 3); /* orca, vllm, then the saturated points */
    assert_string_equal(t.names[0], "orca");
    assert_string_equal(t.names[1], "vllm");
    for (int s = 0; s < 2; s++) {
        assert_int_equal(t.rows[s], 2);
        for (int r = 0; r < 2; r++) {
            int point = (int)cell(&t, s, r, 8);
            char sql[512];
            snprintf(sql, sizeof sql,
                     "SELECT avg(value) FROM metrics JOIN sweep_points USING (run_id)"
                     " WHERE sweep_id = 1 AND point = %d AND name = '%s'",
                     point, "p99_ttft_ms");
            double y = query_double(sql);
            assert_true(fabs(cell(&t, s, r, 1) - y) <= 1e-8 * y);
            snprintf(sql, sizeof sql,
                     "SELECT avg(value) FROM metrics JOIN sweep_points USING (run_id)"
                     " WHERE sweep_id = 1 AND point = %d AND name = 'output_throughput'",
                     point);
            double x = query_double(sql);
            assert_true(fabs(cell(&t, s, r, 0) - x) <= 1e-8 * x);
            assert_true(cell(&t, s, r, 2) <= cell(&t, s, r, 1)); /* CI around the mean */
            assert_true(cell(&t, s, r, 3) >= cell(&t, s, r, 1));
            assert_int_equal((int)cell(&t, s, r, 7), 2);                  /* reps */
            assert_int_equal((int)cell(&t, s, r, 6), point == 2 ? 1 : 0); /* saturated */
        }
        assert_true(cell(&t, s, 0, 0) < cell(&t, s, 1, 0)); /* sorted by x */
    }
    assert_int_equal(t.rows[2], 1);
    /* saturation is counted per repetition: point 2 was saturated in 1 of its 2, so it is drawn
     * and reported as such */
    assert_true(cell(&t, 2, 0, 3) == 1 && cell(&t, 2, 0, 4) == 2);
    free_table(&t);
    expect_all(err, FRAGS("saturated in only some repetitions", "orca at x=", "1 of 2"));
    snprintf(path, sizeof path, "%s/curve.gp", e2e_dir);
    char *gp = e2e_read_all(path);
    /* titles and axes in words, with the setting; plain tick labels */
    assert_non_null(strstr(gp, "plot_title = 'p99 TTFT (ms) vs output throughput (tok/s) — "
                               "llama-3-8b, h100-sxm, demo workload'"));
    expect_all(gp, FRAGS("ylabel = 'p99 TTFT (ms)'", "keytitle = 'scheduler'", "nsat_some = 1",
                         "set format y '%.10g'"));
    free(gp);
    /* against offered rate, p50 TPOT, lines per scheduler named with --by */
    snprintf(args, sizeof args,
             "curve --sweep 1 -o %s/rate.svg --x rate --metric tpot --pct p50"
             " --by scheduler.name",
             e2e_dir);
    plot_table(args, "rate", 0, 0, &t);
    assert_string_equal(t.names[0], "orca");
    assert_string_equal(t.names[1], "vllm");
    assert_true(cell(&t, 1, 0, 0) == 2.0 && cell(&t, 1, 1, 0) == 8.0);
    free_table(&t);
    snprintf(path, sizeof path, "%s/rate.gp", e2e_dir);
    gp = e2e_read_all(path);
    assert_non_null(strstr(gp, "'median TPOT (ms) vs offered rate (req/s)"));
    free(gp);
    /* lines by rate would join orca and vllm points: refused, naming --by */
    user_error("plot curve --sweep 1 --x rate --by workload.arrival.rate", "x.png",
               "also varies scheduler.name");
    assert_non_null(strstr(err, "--by workload.arrival.rate,scheduler.name"));
    if (have_gnuplot) {
        snprintf(path, sizeof path, "%s/rate.svg", e2e_dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(out, 1, 4096, f);
        out[n] = '\0';
        fclose(f);
        assert_non_null(strstr(out, "<svg"));
    }
    /* a key the sweep does not vary is a user error that lists the varied ones */
    user_error("plot curve --sweep 1 --by foo", "x.png", "scheduler.name, workload.arrival.rate");
    user_error("plot curve --sweep 9", "x.png", "no sweep 9");
}

/* A sweep of one scheduler over two token budgets: one line per budget, not one zig-zag line
 * named "chunked". */
static void test_curve_other_keys(void **state)
{
    char args[512], path[320], sql[1024];
    exec_sql(
        "INSERT INTO sweeps (id, key, file, scenario, varied, reps, base_seed) VALUES (2,"
        " 'test2', 'demo.yaml', 'demo', 'workload.arrival.rate;scheduler.token_budget', 1, 1)");
    static const int rates[2] = {2, 8}, budgets[2] = {256, 1024};
    for (int p = 0; p < 4; p++) {
        char sets[256];
        snprintf(sets, sizeof sets,
                 "--set workload.num_requests=40 --set workload.arrival.rate=%d --set "
                 "scheduler.name=chunked --set scheduler.token_budget=%d --store summary",
                 rates[p / 2], budgets[p % 2]);
        int64_t run = run_demo(sets);
        snprintf(sql, sizeof sql,
                 "INSERT INTO sweep_points VALUES (2, %d, 0, 1, %lld, '', 0);"
                 "INSERT INTO sweep_params VALUES (2, %d, 'workload.arrival.rate', '%d');"
                 "INSERT INTO sweep_params VALUES (2, %d, 'scheduler.token_budget', '%d')",
                 p, (long long)run, p, rates[p / 2], p, budgets[p % 2]);
        exec_sql(sql);
    }
    snprintf(args, sizeof args, "curve --sweep 2 -o %s/budget.png", e2e_dir);
    table t;
    plot_table(args, "budget", 1000, 600, &t);
    assert_int_equal(t.nblocks, 2);
    assert_string_equal(t.names[0], "token_budget=256");
    assert_string_equal(t.names[1], "token_budget=1024");
    for (int b = 0; b < 2; b++) {
        assert_int_equal(t.rows[b], 2);
        for (int r = 0; r < 2; r++)
            assert_int_equal((int)cell(&t, b, r, 8) % 2, b); /* points of one budget only */
    }
    free_table(&t);
    snprintf(path, sizeof path, "%s/budget.gp", e2e_dir);
    char *gp = e2e_read_all(path);
    assert_non_null(strstr(gp, "keytitle = 'token_budget'"));
    free(gp);
}

static void test_cdf(void **state)
{
    char args[512];
    snprintf(args, sizeof args, "cdf --run 1,2,3 -o %s/cdf.png", e2e_dir);
    table t;
    plot_table(args, "cdf", 1000, 600, &t);
    assert_int_equal(t.nblocks, 3);
    for (int b = 0; b < 3; b++) {
        int run = b + 1;
        assert_int_equal(t.rows[b], query_int("SELECT count(*) FROM requests WHERE run_id = %d"
                                              " AND status = 'finished'",
                                              run));
        assert_true(cell(&t, b, t.rows[b] - 1, 1) == 1.0);
        for (int r = 1; r < t.rows[b]; r++)
            assert_true(cell(&t, b, r, 0) >= cell(&t, b, r - 1, 0));
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT max(first_token_ns - arrival_ns) / 1e6 FROM requests WHERE run_id = %d",
                 run);
        assert_true(fabs(cell(&t, b, t.rows[b] - 1, 0) - query_double(sql)) < 1e-6);
    }
    /* the legends name what differs between the runs: here the scheduler */
    assert_string_equal(t.names[0], "run 1: orca");
    assert_string_equal(t.names[2], "run 3: vllm");
    free_table(&t);
    /* and more than the scheduler when more differs */
    snprintf(args, sizeof args, "cdf --run 1,%lld -o %s/cdf2.png", (long long)preempt_run, e2e_dir);
    plot_table(args, "cdf2", 0, 0, &t);
    assert_non_null(strstr(t.names[0], "run 1: orca"));
    expect_all(t.names[1], FRAGS("vllm", "6 req/s", "80 requests", "gpu_utilization=0.22"));
    free_table(&t);
    /* per-token gaps are not stored: itl is refused with a pointer to tpot */
    user_error("plot cdf --run 1 --metric itl", "x.png", "tpot");
    /* runs stored without requests say how to store them */
    user_error("plot cdf --run 4", "x.png", "--store requests");
}

static void test_timeline(void **state)
{
    char args[512], path[320];
    snprintf(args, sizeof args, "timeline --run 1,2 -o %s/timeline.png", e2e_dir);
    table t;
    plot_table(args, "timeline", 1000, 200 + 300 * 2, &t);
    assert_int_equal(t.nblocks, 2);
    for (int b = 0; b < 2; b++) {
        int run = b + 1;
        assert_int_equal(t.rows[b],
                         query_int("SELECT count(*) FROM iterations WHERE run_id = %d", run));
        assert_int_equal((int64_t)cell(&t, b, 0, 3),
                         query_int("SELECT num_seqs FROM iterations WHERE run_id = %d AND "
                                   "replica = 0 AND iter = 0",
                                   run));
        assert_int_equal((int64_t)cell(&t, b, t.rows[b] - 1, 4),
                         query_int("SELECT kv_blocks_used FROM iterations WHERE run_id = %d "
                                   "ORDER BY iter DESC LIMIT 1",
                                   run));
    }
    free_table(&t);
    /* the KV capacity and the preemptions of a run that had some */
    snprintf(args, sizeof args, "timeline --run %lld -o %s/timeline-pre.png",
             (long long)preempt_run, e2e_dir);
    plot_table(args, "timeline-pre", 0, 0, &t);
    assert_int_equal(t.cols[0], 8);
    int64_t pre = 0;
    for (int r = 0; r < t.rows[0]; r++)
        pre += (int64_t)cell(&t, 0, r, 7);
    assert_int_equal(pre, query_int("SELECT sum(preempted) FROM iterations WHERE run_id = %lld",
                                    (long long)preempt_run));
    assert_true(pre > 0);
    free_table(&t);
    snprintf(path, sizeof path, "%s/timeline-pre.gp", e2e_dir);
    char *gp = e2e_read_all(path), want[64];
    snprintf(
        want, sizeof want, "kvcap[1] = %lld\n",
        (long long)query_int("SELECT kv_blocks FROM runs WHERE id = %lld", (long long)preempt_run));
    assert_non_null(strstr(gp, want));
    assert_true(query_int("SELECT kv_blocks FROM runs WHERE id = %lld", (long long)preempt_run) >
                0);
    free(gp);
    /* the default name; an unknown run is a user error naming it */
    assert_int_equal(sh("cd %s && %s plot timeline --run 3 --db %s", e2e_dir, LLMSIM_BINARY, db),
                     have_gnuplot ? 0 : 3);
    snprintf(path, sizeof path, "%s/timeline-run3.png", e2e_dir);
    check_png(path, 1000, 500);
    user_error("plot timeline --run 99", "x.png", "no run 99");
    snprintf(path, sizeof path, "%s/x.dat", e2e_dir);
    assert_int_not_equal(access(path, F_OK), 0); /* a failed plot leaves no data file */
}

/* Each request's ticks in gantt table t (block 0, column 8): the iterations of its replica that
 * start inside its scheduled time, the rows of spans (a table or view of run's requests) from
 * column from to column to. */
static void check_ticks(const table *t, long long run, const char *spans, const char *from,
                        const char *to)
{
    for (int r = 0; r < t->rows[0]; r++) {
        int req = (int)cell(t, 0, r, 0);
        assert_int_equal((int64_t)cell(t, 0, r, 8),
                         query_int("SELECT count(*) FROM iterations i JOIN %s q ON"
                                   " q.run_id = i.run_id AND q.replica = i.replica WHERE"
                                   " q.run_id = %lld AND q.req_id = %d AND i.start_ns >="
                                   " q.%s AND i.start_ns < q.%s",
                                   spans, run, req, from, to));
    }
}

static void test_gantt(void **state)
{
    char args[512];
    snprintf(args, sizeof args, "gantt --run 2 -o %s/gantt.png", e2e_dir);
    int64_t nrq = query_int("SELECT count(*) FROM requests WHERE run_id = 2");
    table t;
    plot_table(args, "gantt", 1000, (int)nrq * 12 + 160, &t);
    assert_int_equal(t.nblocks, 4); /* requests, iterations, spans, waits after preemption */
    assert_int_equal(t.rows[0], nrq);
    assert_int_equal(t.rows[1], query_int("SELECT count(*) FROM iterations WHERE run_id = 2"));
    assert_int_equal(t.rows[2], nrq); /* static batching never preempts: one span each */
    assert_true(isnan(cell(&t, 3, 0, 1)));
    check_ticks(&t, 2, "requests", "first_scheduled_ns", "finish_ns");
    for (int r = 0; r < t.rows[0]; r++)
        assert_true(cell(&t, 0, r, 8) > 0);
    free_table(&t);
    /* more than 200 requests: refused with a suggestion */
    int64_t big = run_demo("--set workload.num_requests=201 --set workload.output_tokens.value=4");
    char cmd[64];
    snprintf(cmd, sizeof cmd, "plot gantt --run %lld", (long long)big);
    user_error(cmd, "x.png", "at most 200");
    assert_int_equal(sh("%s plot gantt --run 1,2 --db %s", LLMSIM_BINARY, db), 1);
}

/* A run with preemptions: each request's spans as stored, the waits between them, and its
 * iterations counted only inside its spans. */
static void test_gantt_preemptions(void **state)
{
    char args[512], path[320];
    long long run = (long long)preempt_run;
    snprintf(args, sizeof args, "gantt --run %lld -o %s/gantt-pre.png", run, e2e_dir);
    table t;
    plot_table(args, "gantt-pre", 0, 0, &t);
    assert_int_equal(t.nblocks, 4);
    assert_int_equal(t.rows[2],
                     query_int("SELECT count(*) FROM request_spans_all WHERE run_id = %lld", run));
    assert_int_equal(t.rows[3], query_int("SELECT count(*) FROM request_spans WHERE run_id = %lld"
                                          " AND end_reason <> 'finished'",
                                          run));
    assert_int_equal(t.rows[3], query_int("SELECT sum(preemptions) FROM requests WHERE"
                                          " run_id = %lld",
                                          run));
    for (int r = 0; r < t.rows[2]; r++) {
        int req = (int)cell(&t, 2, r, 0), span = (int)cell(&t, 2, r, 1);
        assert_int_equal(llround(cell(&t, 2, r, 2) * 1e9),
                         query_int("SELECT start_ns FROM request_spans_all WHERE run_id = %lld"
                                   " AND req_id = %d AND span = %d",
                                   run, req, span));
        assert_int_equal(llround(cell(&t, 2, r, 4) * 1e9),
                         query_int("SELECT end_ns FROM request_spans_all WHERE run_id = %lld"
                                   " AND req_id = %d AND span = %d",
                                   run, req, span));
    }
    for (int r = 0; r < t.rows[3]; r++) { /* a wait runs from one span's end to the next start */
        int req = (int)cell(&t, 3, r, 0);
        assert_true(cell(&t, 3, r, 2) > cell(&t, 3, r, 1));
        assert_int_equal(query_int("SELECT count(*) FROM request_spans WHERE run_id = %lld AND"
                                   " req_id = %d AND end_ns = %lld",
                                   run, req, llround(cell(&t, 3, r, 1) * 1e9)),
                         1);
        assert_int_equal(query_int("SELECT count(*) FROM request_spans WHERE run_id = %lld AND"
                                   " req_id = %d AND start_ns = %lld",
                                   run, req, llround(cell(&t, 3, r, 2) * 1e9)),
                         1);
    }
    check_ticks(&t, run, "request_spans_all", "start_ns", "end_ns");
    free_table(&t);
    /* a database from before schema 3 has no spans: drawn unbroken, and the note says so */
    char old[320];
    snprintf(old, sizeof old, "%s/v2.db", e2e_dir);
    assert_int_equal(sh("cp %s %s", db, old), 0);
    sim_err e = {{0}};
    store *s = store_open(old, &e);
    assert_non_null(s);
    assert_int_equal(store_exec(s,
                                "DROP VIEW request_spans_all; DROP TABLE request_spans;"
                                " ALTER TABLE runs DROP COLUMN kv_blocks;"
                                " UPDATE schema_version SET version = 2",
                                &e),
                     0);
    store_close(s);
    assert_int_equal(
        sh("%s plot gantt --run %lld --db %s -o %s/gantt-v2.png", LLMSIM_BINARY, run, old, e2e_dir),
        have_gnuplot ? 0 : 3);
    assert_non_null(strstr(err, "preemptions are not shown"));
    snprintf(path, sizeof path, "%s/gantt-v2.dat", e2e_dir);
    read_table(path, &t);
    assert_int_equal(t.rows[2], t.rows[0]);
    free_table(&t);
}

/* With no gnuplot on PATH: status 3, the install line, and the data and script still written. */
static void test_without_gnuplot(void **state)
{
    char path[320];
    assert_int_equal(sh("PATH=%s/nothing-here %s plot cdf --run 1 --db %s -o %s/nognu.png", e2e_dir,
                        LLMSIM_BINARY, db, e2e_dir),
                     3);
    assert_non_null(strstr(err, "apt-get install gnuplot-nox"));
    assert_non_null(strstr(err, "nognu.dat"));
    snprintf(path, sizeof path, "%s/nognu.dat", e2e_dir);
    table t;
    read_table(path, &t);
    assert_int_equal(t.rows[0], 60);
    free_table(&t);
    snprintf(path, sizeof path, "%s/nognu.gp", e2e_dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/nognu.png", e2e_dir);
    assert_int_not_equal(access(path, F_OK), 0);
    /* the script written beside it draws the image later */
    if (have_gnuplot) {
        assert_int_equal(sh("gnuplot %s/nognu.gp", e2e_dir), 0);
        check_png(path, 1000, 600);
    }
}

static void test_bad_usage(void **state)
{
    assert_int_equal(sh("%s plot pie --run 1 --db %s", LLMSIM_BINARY, db), 2);
    assert_non_null(strstr(err, "unknown kind 'pie'"));
    assert_int_equal(sh("%s plot curve --run 1 --db %s", LLMSIM_BINARY, db), 2);
    assert_int_equal(sh("%s plot cdf --run x --db %s", LLMSIM_BINARY, db), 2);
    assert_int_equal(
        sh("%s plot cdf --run 1 --db %s/missing.db -o %s/x.png", LLMSIM_BINARY, e2e_dir, e2e_dir),
        1);
    assert_non_null(strstr(err, "missing.db"));
    user_error("plot cdf --run 1", "x.gif", ".gif");
}

/* The members "ph": "X" (complete events) at any depth of the JSON value v. */
static long x_events(const sim_json *v)
{
    long n =
        v->kind == SIM_JSON_STR && v->key && strcmp(v->key, "ph") == 0 && strcmp(v->str, "X") == 0;
    for (const sim_json *c = v->child; c; c = c->next)
        n += x_events(c);
    return n;
}

/* The "X" events of the trace text (read from name); the test fails unless it is well-formed
 * JSON. */
static long trace_x_events(const char *name, const char *text)
{
    char why[256];
    sim_json_doc *d = sim_json_parse(name, text, why, sizeof why);
    if (!d)
        fail_msg("%s", why);
    long n = x_events(sim_json_root(d));
    sim_json_free(d);
    return n;
}

static void test_export_trace(void **state)
{
    for (int run = 1; run <= 3; run++) {
        char path[320];
        snprintf(path, sizeof path, "%s/trace%d.json", e2e_dir, run);
        assert_int_equal(sh("%s export trace --run %d --db %s -o %s", LLMSIM_BINARY, run, db, path),
                         0);
        char *text = e2e_read_all(path);
        assert_int_equal(trace_x_events(path, text),
                         query_int("SELECT count(*) FROM iterations WHERE run_id = %d", run));
        assert_non_null(strstr(text, "\"traceEvents\""));
        assert_non_null(strstr(text, "\"name\":\"decode\",\"cat\":\"request\",\"ph\":\"b\""));
        free(text);
    }
    user_error("export trace --run 77", "t.json", "no run 77");
    user_error("export trace --run 4", "t.json", "no iteration rows");
    assert_int_equal(sh("%s export chrome --run 1 --db %s", LLMSIM_BINARY, db), 2);
}

static int64_t count_of(const char *text, const char *what)
{
    int64_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Preemptions in the trace: a mark at each, a wait until the resume, and a recompute after a
 * recompute preemption; a window keeps only what overlaps it. */
static void test_export_trace_preemptions_and_window(void **state)
{
    char path[320];
    long long run = (long long)preempt_run;
    snprintf(path, sizeof path, "%s/trace-pre.json", e2e_dir);
    assert_int_equal(sh("%s export trace --run %lld --db %s -o %s", LLMSIM_BINARY, run, db, path),
                     0);
    char *text = e2e_read_all(path);
    trace_x_events(path, text);
    int64_t pre = query_int("SELECT sum(preemptions) FROM requests WHERE run_id = %lld", run);
    assert_int_equal(count_of(text, "{\"name\":\"preempted\",\"cat\":\"request\",\"ph\":\"n\""),
                     pre);
    assert_int_equal(count_of(text, "{\"name\":\"preempted\",\"cat\":\"request\",\"ph\":\"b\""),
                     pre);
    assert_int_equal(count_of(text, "{\"name\":\"recompute\",\"cat\":\"request\",\"ph\":\"b\""),
                     pre);
    long whole = (long)strlen(text);
    free(text);
    /* a window of one second in the middle of the run */
    double from = floor(query_int("SELECT max(start_ns) FROM iterations WHERE run_id = %lld", run) /
                        2e9),
           to = from + 1;
    snprintf(path, sizeof path, "%s/trace-win.json", e2e_dir);
    assert_int_equal(sh("%s export trace --run %lld --db %s -o %s --from %g --to %g", LLMSIM_BINARY,
                        run, db, path, from, to),
                     0);
    text = e2e_read_all(path);
    assert_true((long)strlen(text) < whole / 4);
    int64_t lo = llround(from * 1e9), hi = llround(to * 1e9);
    assert_int_equal(trace_x_events(path, text),
                     query_int("SELECT count(*) FROM iterations WHERE run_id = %lld AND"
                               " start_ns <= %lld AND start_ns + duration_ns >= %lld",
                               run, (long long)hi, (long long)lo));
    /* every request event lies in the window */
    for (const char *p = text; (p = strstr(p, "\"cat\":\"request\"")); p++) {
        const char *ts = strstr(p, "\"ts\":");
        assert_non_null(ts);
        double t = strtod(ts + 5, NULL) * 1e3;
        assert_true(t >= (double)lo - 1 && t <= (double)hi + 1);
    }
    assert_non_null(strstr(text, "\"window_from_us\""));
    free(text);
    /* a window with nothing in it, and one that ends before it starts */
    char cmd[96];
    snprintf(cmd, sizeof cmd, "export trace --run %lld --from 1e6 --to 2e6", run);
    user_error(cmd, "t.json", "no iteration between");
    assert_int_equal(sh("%s export trace --run %lld --db %s -o %s/t.json --from 5 --to 2",
                        LLMSIM_BINARY, run, db, e2e_dir),
                     2);
}

LLMSIM_TEST_MAIN(setup, teardown, test_curve, test_curve_other_keys, test_cdf, test_timeline,
                 test_gantt, test_without_gnuplot, test_bad_usage, test_export_trace,
                 test_gantt_preemptions, test_export_trace_preemptions_and_window)
