/*
 * cmd_sweep.c: `llmsim sweep FILE --vary KEY=V1,V2,...|KEY=START:STOP:STEP ...`: runs the
 * cross product of the varied keys (study/sweep.c) and prints the per-point table with 95%
 * intervals and, when the scheduler is varied, paired differences against the first one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "study_sweep.h"

static const cli_command sweep_cmd = {
    .name = "sweep",
    .args = "FILE --vary KEY=V1,V2,...",
    .summary = "Runs the scenario in FILE over the cross product of the varied keys, each point "
               "--reps times "
               "with seeds S, S+1, ... (the same seeds at every point, so comparisons are paired), "
               "in --jobs "
               "worker processes, and prints each point's mean and 95% interval.",
    .details =
        "Each point is an ordinary run, written with its sweep_points row in one transaction by "
        "this process (the workers only simulate); the same command run again skips the points "
        "already stored. --vary KEY=START:STOP:STEP gives START, START+STEP, ... <= STOP. "
        "--shard I/N runs the I-th of N deterministic slices of the tasks (task t when t % N == "
        "I - 1) into its own database; `llmsim merge` combines the shards.",
    CLI_SIMULATES(1, "requests")};

static int set_shard(void *arg, const char *v)
{
    sim_err err = {{0}};
    return cli_call_status("sweep", study_sweep_set_shard(arg, v, &err), &err);
}

static int add_vary(void *arg, const char *v)
{
    sim_err err = {{0}};
    return cli_call_status("sweep", study_sweep_add_vary(arg, v, &err), &err);
}

static void print_value(sim_interval v)
{
    char buf[48];
    if (isnan(v.half))
        snprintf(buf, sizeof buf, "%.2f", v.mean);
    else
        snprintf(buf, sizeof buf, "%.2f±%.2f", v.mean, v.half);
    printf(" %18s", buf);
}

/* A shard shows the points it has runs of; a whole sweep shows every point. */
static int shown_point(const study_sweep *sw, const study_sweep_table *t, int p)
{
    return sw->nshards <= 1 || study_sweep_cell(t, 0, p)->n > 0;
}

static void print_paired(const study_sweep *sw, const study_sweep_table *t)
{
    int k = study_sweep_paired_key(sw);
    if (k < 0)
        return;
    printf("\npaired differences (same seeds) against scheduler %s, mean ± 95%% CI:\n",
           sw->v[k].val[0]);
    for (int p = 0; p < sw->npoints; p++) {
        int base = study_sweep_base_point(sw, p, k);
        if (base == p || !shown_point(sw, t, p))
            continue;
        char params[1024];
        study_sweep_params(sw, p, params, sizeof params);
        printf("%-48s", params);
        if (study_sweep_paired_reps(t, p, base) == 0) {
            char where[1024];
            study_sweep_params(sw, base, where, sizeof where);
            printf("  no difference: the baseline %s has no repetition %s\n", where,
                   sw->nshards > 1 ? "in this shard (its runs are in the other shards: `llmsim "
                                     "merge` the shards' databases, then `llmsim report --sweep`)"
                                   : "stored");
            continue;
        }
        for (int m = 0; m < CLI_SWEEP_SHOWN; m++)
            print_value(study_sweep_paired(t, m, p, base));
        printf("\n");
    }
}

/* A count's mean over the repetitions, "-" when none has it. */
static void print_count(sim_interval v)
{
    char buf[48];
    snprintf(buf, sizeof buf, isnan(v.mean) ? "-" : "%.0f", v.mean);
    printf(" %9s", buf);
}

/* Under the table: the points that rejected requests, and why (means over repetitions). */
static void print_rejections(const study_sweep *sw, const study_sweep_table *t)
{
    for (int p = 0; p < sw->npoints; p++) {
        double rej = study_sweep_cell(t, CLI_SWEEP_SHOWN + 1, p)->v.mean;
        if (!shown_point(sw, t, p) || !(rej > 0))
            continue;
        char params[1024];
        study_sweep_params(sw, p, params, sizeof params);
        printf("(%s: %.0f rejected, not in its latencies:", params, rej);
        for (int m = CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS; m < CLI_SWEEP_LOADED; m++) {
            const study_cell *c = study_sweep_cell(t, m, p);
            if (c->n > 0)
                printf(" %s: %.0f in %d of %d reps;",
                       eng_reject_reason_name(
                           (eng_reject_reason)(m - CLI_SWEEP_SHOWN - CLI_SWEEP_COUNTS + 1)),
                       c->v.mean, c->n, study_sweep_cell(t, 0, p)->n);
        }
        printf(")\n");
    }
}

static void print_table(const study_sweep *sw, const study_sweep_table *t)
{
    printf("sweep %lld: %d points x %d reps%s\n", (long long)sw->id, sw->npoints, sw->reps,
           sw->reps > 1 ? " (mean ± 95% CI)" : "");
    printf("%-48s", "point");
    for (int m = 0; m < CLI_SWEEP_SHOWN; m++)
        printf(" %18s", cli_sweep_loaded[m]);
    printf(" %9s %9s  saturated\n", "completed", "rejected");
    for (int p = 0; p < sw->npoints; p++) {
        if (!shown_point(sw, t, p))
            continue;
        char params[1024];
        study_sweep_params(sw, p, params, sizeof params);
        printf("%-48s", params);
        for (int m = 0; m < CLI_SWEEP_SHOWN; m++)
            print_value(study_sweep_cell(t, m, p)->v);
        for (int m = CLI_SWEEP_SHOWN; m < CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS; m++)
            print_count(study_sweep_cell(t, m, p)->v);
        /* a point saturated in some repetitions only has a mean that mixes saturated and
         * stable runs: say how many */
        char sat[48];
        printf("  %s\n", cli_saturation(study_sweep_cell(t, 0, p), sat, sizeof sat));
    }
    print_rejections(sw, t);
    print_paired(sw, t);
}

static void json_interval(sim_jsonw *j, const char *key, sim_interval v)
{
    sim_jsonw_open(j, key, '{');
    sim_jsonw_num(j, "mean", v.mean);
    sim_jsonw_num(j, "ci95", v.half);
    sim_jsonw_close(j, '}');
}

/* --json loads the table's metrics, counts and rejections (cli_sweep_loaded) and then the
 * fleet's (docs/fleet.md) */
#define JSON_FLEET 4
#define JSON_LOADED (CLI_SWEEP_LOADED + JSON_FLEET)
static const char *json_loaded[JSON_LOADED];

static const char *const *json_metrics(void)
{
    static const char *const fleet[JSON_FLEET] = {"gpu_hours", "energy_kwh",
                                                  "joules_per_output_token", "cost_per_mtok_usd"};
    for (int m = 0; m < CLI_SWEEP_LOADED; m++)
        json_loaded[m] = cli_sweep_loaded[m];
    for (int m = 0; m < JSON_FLEET; m++)
        json_loaded[CLI_SWEEP_LOADED + m] = fleet[m];
    return json_loaded;
}

/* Whether loaded metric m is one --json shows as a value (and pairs): the table's and the
 * fleet's, not the counts or the rejections by reason. */
static int json_valued(int m)
{
    return m < CLI_SWEEP_SHOWN || m >= CLI_SWEEP_LOADED;
}

/* Point p's metrics, counts and fleet figures ("metrics"), and its rejections by reason. */
static void json_point_metrics(sim_jsonw *j, const study_sweep_table *t, int p)
{
    sim_jsonw_open(j, "metrics", '{');
    for (int m = 0; m < CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS; m++)
        json_interval(j, json_loaded[m], study_sweep_cell(t, m, p)->v);
    for (int m = CLI_SWEEP_LOADED; m < JSON_LOADED; m++)
        json_interval(j, json_loaded[m], study_sweep_cell(t, m, p)->v);
    sim_jsonw_close(j, '}');
    sim_jsonw_open(j, "rejected_by", '{');
    for (int m = CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS; m < CLI_SWEEP_LOADED; m++)
        if (study_sweep_cell(t, m, p)->n > 0)
            json_interval(j, json_loaded[m] + 9, study_sweep_cell(t, m, p)->v);
    sim_jsonw_close(j, '}');
}

/* Point p's differences from its baseline point base (paired key k), or why there are none. */
static void json_paired(sim_jsonw *j, const study_sweep *sw, const study_sweep_table *t, int p,
                        int base, int k)
{
    sim_jsonw_open(j, "paired", '{');
    sim_jsonw_str(j, "against", sw->v[k].val[0]);
    if (study_sweep_paired_reps(t, p, base) == 0)
        sim_jsonw_str(j, "missing",
                      sw->nshards > 1 ? "the baseline's repetitions are in other shards"
                                      : "the baseline has no stored repetition");
    else
        for (int m = 0; m < JSON_LOADED; m++)
            if (json_valued(m))
                json_interval(j, json_loaded[m], study_sweep_paired(t, m, p, base));
    sim_jsonw_close(j, '}');
}

static void json_point(sim_jsonw *j, const study_sweep *sw, const study_sweep_table *t, int p)
{
    int k = study_sweep_paired_key(sw), base = k >= 0 ? study_sweep_base_point(sw, p, k) : p;
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_int(j, "point", p);
    sim_jsonw_open(j, "params", '{');
    for (int v = 0; v < sw->nv; v++)
        sim_jsonw_str(j, sw->v[v].key, sw->v[v].val[study_sweep_digit(sw, p, v)]);
    sim_jsonw_close(j, '}');
    sim_jsonw_int(j, "reps", study_sweep_cell(t, 0, p)->n);
    sim_jsonw_int(j, "saturated_reps", study_sweep_cell(t, 0, p)->saturated);
    char sat[48];
    snprintf(sat, sizeof sat, "%d of %d", study_sweep_cell(t, 0, p)->saturated,
             study_sweep_cell(t, 0, p)->n);
    sim_jsonw_str(j, "saturated_in", sat);
    json_point_metrics(j, t, p);
    if (base != p)
        json_paired(j, sw, t, p, base, k);
    sim_jsonw_close(j, '}');
}

static void print_json(const study_sweep *sw, const study_sweep_table *t, int failed)
{
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    sim_jsonw_int(&j, "sweep_id", sw->id);
    sim_jsonw_int(&j, "points", sw->npoints);
    sim_jsonw_int(&j, "reps", sw->reps);
    sim_jsonw_int(&j, "failed_runs", failed);
    sim_jsonw_open(&j, "results", '[');
    for (int p = 0; p < sw->npoints; p++)
        if (shown_point(sw, t, p))
            json_point(&j, sw, t, p);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

typedef struct progress_arg {
    const study_sweep *sw;
    const cli_common *c;
    cli_progress bar;
} progress_arg;

static void task_done(void *arg, int32_t task, int ok, const char *msg, int finished, int total)
{
    progress_arg *a = arg;
    if (!ok)
        fprintf(stderr, "%sllmsim sweep: point %d rep %d: %s\n", a->bar.tty ? "\n" : "",
                task / a->sw->reps, task % a->sw->reps, msg);
    cli_progress_update(&a->bar, finished);
}

static int summarize(const cli_common *c, const study_sweep *sw, store *s, int failed, sim_err *err)
{
    study_sweep_table t;
    int rc = c->json ? study_sweep_table_load(sw, s, json_metrics(), JSON_LOADED, &t, err)
                     : study_sweep_table_load(sw, s, cli_sweep_loaded, CLI_SWEEP_LOADED, &t, err);
    if (rc == 0 && c->json)
        print_json(sw, &t, failed);
    else if (rc == 0)
        print_table(sw, &t);
    study_sweep_table_free(&t);
    return rc;
}

/* The sweep's options into sw (and jobs, c); CLI_GO, or the exit status. */
static int parse(int argc, char **argv, study_sweep *sw, int *jobs, cli_common *c)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    *jobs = ncpu > 0 ? (int)ncpu : 1;
    sw->reps = 1;
    const cli_option opts[] = {
        {"--vary", "KEY=VALUES", CLI_CALL, NULL,
         "a key and its values: V1,V2,... or START:STOP:STEP; repeatable (at most 8 keys)", NULL, 0,
         0, add_vary, sw},
        {"--reps", "R", CLI_INT, &sw->reps, "repetitions of each point (seeds S, S+1, ...)", "1", 1,
         1000, NULL, NULL},
        {"--jobs", "N", CLI_INT, jobs, "worker processes", "the number of cores", 1, 4096, NULL,
         NULL},
        {"--shard", "I/N", CLI_CALL, NULL,
         "run only the I-th of N slices of the tasks (1 <= I <= N), for sweeps spread over "
         "machines",
         "all tasks", 0, 0, set_shard, sw},
        CLI_END};
    const char *file;
    int npos, st = cli_parse(&sweep_cmd, opts, c, argc, argv, &file, &npos);
    if (st == CLI_GO && sw->nv == 0) {
        fprintf(stderr, "llmsim sweep: give at least one --vary KEY=VALUES\n");
        st = 2;
    }
    sw->file = file;
    sw->sets = c->sets;
    sw->nsets = c->nsets;
    sw->seed = c->seed;
    sw->seed_given = c->seed_given;
    sw->level = c->level;
    return st;
}

/* What the runs did in wall_s seconds: stored, stored meanwhile by another process, failed. */
static void note_done(const cli_common *c, const study_sweep *sw, const study_sweep_stats *st,
                      double wall_s)
{
    cli_note(c, "llmsim sweep %lld: %d runs in %.2f s", (long long)sw->id, st->stored, wall_s);
    if (st->skipped)
        cli_note(c, " (%d stored meanwhile by another process)", st->skipped);
    cli_note(c, "\n");
    if (st->failed)
        fprintf(stderr, "llmsim sweep: %d runs failed; run the same command again to retry them\n",
                st->failed);
}

/* Runs the pending tasks with a progress report; the number that failed, or -1 with err when
 * the workers could not start. */
static int run_pending(const cli_common *c, const study_sweep *sw, store *s, int jobs,
                       const int32_t *pending, int n, sim_err *err)
{
    if (n == 0)
        return 0;
    progress_arg pa = {sw, c, {0}};
    cli_progress_start(&pa.bar, "runs", n, c->quiet);
    cli_progress_update(&pa.bar, 0);
    double t0 = sim_wall_seconds();
    study_sweep_stats st;
    if (study_sweep_run(sw, s, c->db, jobs, pending, n, task_done, &pa, &st, err) != 0)
        return -1;
    note_done(c, sw, &st, sim_wall_seconds() - t0);
    return st.failed;
}

/* The plan: points, repetitions (and shard), runs already stored and runs to make on how many
 * jobs. */
static void note_plan(const cli_common *c, const study_sweep *sw, int stored, int n, int jobs)
{
    int used = jobs < n ? jobs : n;
    if (sw->nshards > 1)
        cli_note(c,
                 "llmsim sweep %lld: %d points x %d reps, shard %d/%d; %d stored, %d to run on "
                 "%d jobs\n",
                 (long long)sw->id, sw->npoints, sw->reps, sw->shard, sw->nshards, stored, n, used);
    else
        cli_note(c, "llmsim sweep %lld: %d points x %d reps; %d stored, %d to run on %d jobs\n",
                 (long long)sw->id, sw->npoints, sw->reps, stored, n, used);
}

int cmd_sweep(int argc, char **argv)
{
    study_sweep sw;
    memset(&sw, 0, sizeof sw);
    cli_common c;
    int jobs, st = parse(argc, argv, &sw, &jobs, &c);
    if (st != CLI_GO) {
        study_sweep_free(&sw);
        return st;
    }
    sim_err err = {{0}};
    scn_scenario base;
    store *s = NULL;
    int32_t *pending = NULL;
    int n = 0, stored = 0, rc = 1;
    if (study_sweep_check(&sw, &base, &err) != 0)
        goto fail;
    cli_note(&c, "%s", base.notes);
    if (!(s = store_open(c.db, &err)) ||
        study_sweep_prepare(&sw, s, &base, &pending, &n, &stored, &err) != 0)
        goto fail;
    note_plan(&c, &sw, stored, n, jobs);
    int failed = run_pending(&c, &sw, s, jobs, pending, n, &err);
    if (failed < 0 || summarize(&c, &sw, s, failed, &err) != 0)
        goto fail;
    rc = failed ? 1 : 0;
    goto out;
fail:
    cli_fail(NULL, &err);
out:
    free(pending);
    store_close(s);
    scn_free(&base);
    study_sweep_free(&sw);
    return rc;
}
