/*
 * cmd_report.c: `llmsim report --run ID | --sweep ID | --capacity ID -o FILE.html`: one
 * self-contained HTML page (plots/report.c) with the setting, the summary tables, the plots as
 * inline SVG and the scenario, for a study people mail around.
 *
 * What each report holds:
 *   --run: the run's row, its throughput and latency tables, TTFT and TPOT CDFs (request rows),
 *     the timeline (iteration rows) and the gantt chart (at most 200 requests);
 *   --sweep: each point's mean and 95% interval as the sweep command prints them (study/), the
 *     paired differences when the scheduler varies, and latency-throughput curves;
 *   --capacity: the question, each choice's answer, every probe with its latencies, and the
 *     probes' p99 TTFT against their rate.
 * Figures a run's store level cannot give are named in a note instead. Exit status: 0, 1 on a
 * user error, 2 on bad usage, 3 when gnuplot is missing (the page is written without figures).
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "plots.h"
#include "store_query.h"
#include "study_sweep.h"

static const cli_command report_cmd = {
    .name = "report",
    .args = "--run ID | --sweep ID | --capacity ID",
    .summary = "Writes one self-contained HTML page (no network needed to view it) with the "
               "setting, the summary tables, the plots as inline SVG and the scenario of a stored "
               "run, sweep or capacity search.",
    .details = "Figures need gnuplot; without it the page is written with the tables only (exit "
               "status 3).",
    .common = CLI_DB | CLI_QUIET};

/* ---- tables ---- */

#define MAX_TABLES 8
#define MAX_FIGS 6
#define MAX_COLS 16 /* the widest table: the probes' */

typedef struct report {
    plt_report r;
    plt_table t[MAX_TABLES];
    plt_figure f[MAX_FIGS];
    char *scenario;
} report;

static plt_table *table(report *rp, const char *title, int ncols, ...)
{
    plt_table *t = &rp->t[rp->r.ntables++];
    const char *names[MAX_COLS];
    assert(ncols <= MAX_COLS);
    va_list ap;
    va_start(ap, ncols);
    for (int c = 0; c < ncols; c++)
        names[c] = va_arg(ap, const char *);
    va_end(ap);
    plt_table_start(t, title, ncols, names);
    rp->r.tables = rp->t;
    return t;
}

static void row2(plt_table *t, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void row2(plt_table *t, const char *what, const char *fmt, ...)
{
    char v[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    const char *cells[2] = {what, v};
    plt_table_row(t, cells);
}

static plt_figure *figure(report *rp, plt_kind kind, const char *caption)
{
    plt_figure *f = &rp->f[rp->r.nfigs++];
    memset(f, 0, sizeof *f);
    f->plot.kind = kind;
    snprintf(f->caption, sizeof f->caption, "%s", caption);
    rp->r.figs = rp->f;
    return f;
}

static void note(report *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(report *rp, const char *fmt, ...)
{
    if (rp->r.nnotes == PLT_REPORT_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rp->r.notes[rp->r.nnotes++], sizeof rp->r.notes[0], fmt, ap);
    va_end(ap);
}

/* The validated error of the group nearest the stored scenario (validation/errors.csv). */
static void validated_note(report *rp)
{
    char buf[512];
    if (*cli_validated_of_text(rp->scenario, buf, sizeof buf))
        note(rp, "Validation: %s.", buf);
}

static void free_report(report *rp)
{
    for (int i = 0; i < rp->r.ntables; i++)
        plt_table_free(&rp->t[i]);
    free(rp->scenario);
}

/* A number for a table: "-" for NaN, else %.*f. */
static const char *num(char *buf, size_t len, double v, int digits)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", digits, v);
    return buf;
}

/* ---- a run ---- */

typedef struct metrics {
    eng_metric m[ENG_MAX_METRICS + 8];
    int n;
} metrics;

static double metric(const metrics *ms, const char *name)
{
    for (int i = 0; i < ms->n; i++)
        if (strcmp(ms->m[i].name, name) == 0)
            return ms->m[i].value;
    return NAN;
}

/* The run's setting: scenario, deployment, scheduler, cost model, seed, workload. */
static void setting_table(report *rp, const store_run_meta *m)
{
    plt_table *t = table(rp, "Run", 2, "", "");
    row2(t, "run", "%lld", (long long)m->id);
    row2(t, "scenario", "%s", m->name);
    row2(t, "model", "%s", m->model);
    row2(t, "GPU", "%s", m->gpu);
    row2(t, "dtype", "%s", m->dtype);
    row2(t, "scheduler", "%s", m->scheduler);
    row2(t, "replicas x tensor parallel", "%d x %d", m->replicas, m->tensor_parallel);
    row2(t, "cost model", "%s", m->profile);
    row2(t, "seed", "%llu", (unsigned long long)m->seed);
    if (m->offered_rate > 0)
        row2(t, "offered rate (req/s)", "%.4g", m->offered_rate);
    row2(t, "requests offered", "%lld", (long long)m->num_requests);
    if (m->kv_blocks > 0)
        row2(t, "KV cache of a replica (blocks)", "%lld", (long long)m->kv_blocks);
    row2(t, "stored", "%s (level %s), llmsim %s", m->created, m->level, m->version);
}

/* A row per reason requests were rejected for, when any were. */
static void rejected_rows(plt_table *t, const metrics *ms)
{
    for (int k = 1; k < ENG_REJECT_REASON_COUNT; k++) {
        double v = metric(ms, study_reject_metric((eng_reject_reason)k));
        if (v > 0)
            row2(t, "", "rejected: %s: %.0f", eng_reject_reason_name((eng_reject_reason)k), v);
    }
}

/* Whether the run saturated, with a note on what that means for its percentiles. */
static void saturated_row(plt_table *t, const metrics *ms)
{
    double sat = metric(ms, "saturated");
    row2(t, "saturated", "%s", isnan(sat) ? "-" : sat > 0 ? "yes" : "no");
    if (sat > 0)
        snprintf(t->note, sizeof t->note, "%s",
                 "The queue was still growing when arrivals ended: the latency percentiles "
                 "depend on the run's length.");
}

/* Requests completed and rejected, throughput and goodput, and whether the run saturated. */
static void throughput_table(report *rp, const metrics *ms)
{
    plt_table *t = table(rp, "Throughput", 2, "", "");
    static const char *const tp[][3] = {
        {"completed requests", "completed", "0"},
        {"failed (rejected) requests", "failed", "0"},
        {"duration (s, simulated)", "duration", "2"},
        {"request throughput (req/s)", "request_throughput", "3"},
        {"output throughput (tok/s)", "output_throughput", "1"},
        {"total token throughput (tok/s)", "total_token_throughput", "1"},
        {"request goodput (req/s)", "request_goodput", "3"},
        {"peak output throughput (tok/s, 1 s)", "max_output_tokens_per_s", "0"},
        {"peak concurrent requests", "max_concurrent_requests", "0"}};
    char b[64];
    for (size_t i = 0; i < sizeof tp / sizeof tp[0]; i++)
        row2(t, tp[i][0], "%s", num(b, sizeof b, metric(ms, tp[i][1]), tp[i][2][0] - '0'));
    rejected_rows(t, ms);
    saturated_row(t, ms);
}

/* A row: label, then for each of the n (at most 6) prefixes the metric "<prefix>_<stem>" (ms,
 * 2 digits). */
static void stat_row(plt_table *t, const metrics *ms, const char *label, const char *stem,
                     const char *const *pre, int n)
{
    char cells[7][64], name[64];
    const char *c[7] = {label};
    for (int j = 0; j < n; j++) {
        snprintf(name, sizeof name, "%s_%s", pre[j], stem);
        c[j + 1] = num(cells[j + 1], sizeof cells[0], metric(ms, name), 2);
    }
    plt_table_row(t, c);
}

/* Each client-side latency's mean, percentiles and deviation. */
static void latency_table(report *rp, const metrics *ms)
{
    plt_table *t = table(rp, "Latency (ms)", 7, "", "mean", "median", "p90", "p95", "p99", "std");
    static const char *const pre[6] = {"mean", "median", "p90", "p95", "p99", "std"};
    int nlat;
    const eng_latency *lat = eng_latency_all(&nlat);
    for (int i = 0; i < nlat; i++)
        if (lat[i].flags & ENG_LAT_CLIENT)
            stat_row(t, ms, lat[i].label, lat[i].stem, pre, 6);
}

static void run_tables(report *rp, const store_run_meta *m, const metrics *ms)
{
    setting_table(rp, m);
    throughput_table(rp, ms);
    latency_table(rp, ms);
}

/* A disaggregated run's KV transfer and wait times. */
static void transfer_table(report *rp, const metrics *ms)
{
    plt_table *t =
        table(rp, "KV transfer latency (ms)", 6, "", "mean", "median", "p90", "p95", "p99");
    static const char *const pre[5] = {"mean", "median", "p90", "p95", "p99"};
    static const char *const what[2][2] = {{"kv_transfer_ms", "transfer (prefill end to arrival)"},
                                           {"kv_wait_ms", "wait for decode-side KV"}};
    for (int i = 0; i < 2; i++)
        stat_row(t, ms, what[i][1], what[i][0], pre, 5);
}

/* A disaggregated run: its pools (from the stored scenario, which loads again as it ran), the
 * split in GPUs, how busy each pool was, and the KV transfers. */
static void pd_tables(report *rp, const metrics *ms)
{
    if (isnan(metric(ms, "prefill_gpus")))
        return;
    char where[240] = "(the stored scenario does not load here)", b[64];
    scn_scenario scn;
    sim_err ignore;
    if (rp->scenario && study_load_text("(stored run)", rp->scenario, NULL, 0, &scn, &ignore) == 0)
        cli_deployment(&scn, where, sizeof where);
    scn_free(&scn);
    plt_table *t = table(rp, "Disaggregated pools", 2, "", "");
    row2(t, "pools", "%s", where);
    row2(t, "split (GPUs)", "%.0f prefill : %.0f decode", metric(ms, "prefill_gpus"),
         metric(ms, "decode_gpus"));
    row2(t, "prefill pool busy", "%.1f%%", 100 * metric(ms, "prefill_utilization"));
    row2(t, "decode pool busy", "%.1f%%", 100 * metric(ms, "decode_utilization"));
    row2(t, "KV transfers", "%.0f (%.0f held back by the decode pool)", metric(ms, "kv_transfers"),
         metric(ms, "kv_transfers_held"));
    row2(t, "KV per request (MB)", "%s",
         num(b, sizeof b, metric(ms, "kv_transfer_bytes_per_request") / 1e6, 2));
    transfer_table(rp, ms);
}

/* Notes on the figures a run's stored rows (nrq requests, nit iterations) leave out. */
static void figure_notes(report *rp, const store_run_meta *m, int64_t nrq, int64_t nit)
{
    if (nrq == 0)
        note(rp,
             "The run was stored at level %s, without request rows: no CDF or gantt chart (run "
             "it again with --store requests).",
             m->level);
    else if (nrq > PLT_GANTT_MAX_REQ)
        note(rp, "No gantt chart: the run has %lld requests (at most %d are drawn).",
             (long long)nrq, PLT_GANTT_MAX_REQ);
    if (nit == 0)
        note(rp, "No timeline: the run was stored without iteration rows.");
}

/* A figure of one run. */
static plt_figure *run_figure(report *rp, plt_kind kind, const char *caption, int64_t run)
{
    plt_figure *f = figure(rp, kind, caption);
    f->plot.runs[f->plot.nruns++] = run;
    return f;
}

static void run_figures(report *rp, store *s, const store_run_meta *m, sim_err *err)
{
    int64_t nrq = store_run_count_requests(s, m->id, err);
    int64_t nit = store_run_count_iterations(s, m->id, err);
    if (nrq > 0) {
        run_figure(rp, PLT_CDF, "TTFT of every finished request (CDF).", m->id)->plot.metric =
            "ttft";
        run_figure(rp, PLT_CDF, "TPOT of every finished request (CDF).", m->id)->plot.metric =
            "tpot";
    }
    if (nit > 0)
        run_figure(rp, PLT_TIMELINE,
                   "Sequences in each iteration's batch, KV blocks in use against the KV capacity, "
                   "and preemptions.",
                   m->id);
    if (nrq > 0 && nrq <= PLT_GANTT_MAX_REQ)
        run_figure(rp, PLT_GANTT,
                   "Each request: queued, prefill, decode, and the waits after preemptions.",
                   m->id);
    figure_notes(rp, m, nrq, nit);
}

/* A note when a run's roofline prices are extrapolated (cal_gpu_extrapolated): a row of
 * (gpu, profile) at a time, the profile being the cost model's label. */
static int extrapolated_row(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    report *rp = arg;
    const char *x = ncols >= 2 && vals[0] && vals[1] && strncmp(vals[1], "roofline", 8) == 0
                        ? cal_gpu_extrapolated(vals[0])
                        : NULL;
    if (x)
        note(rp, "%s: %s.", vals[0], x);
    return 0;
}

/* The notes of extrapolated_row for the distinct (gpu, profile) of the runs `where` selects. */
static int extrapolation_notes(report *rp, store *s, const char *where, sim_err *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT DISTINCT gpu, profile FROM runs WHERE %s ORDER BY gpu",
             where);
    return store_query(s, sql, extrapolated_row, rp, err);
}

/* Run run's title and setting line: model, GPU, replicas, scheduler and cost model. */
static void run_heading(report *rp, int64_t run, const store_run_meta *m)
{
    snprintf(rp->r.title, sizeof rp->r.title, "Run %lld: %.120s", (long long)run, m->name);
    snprintf(rp->r.setting, sizeof rp->r.setting,
             "%.60s on %.40s (%s, %d replica%s x TP %d), scheduler %.40s, cost model: %.160s",
             m->model, m->gpu, m->dtype, m->replicas, m->replicas == 1 ? "" : "s",
             m->tensor_parallel, m->scheduler, m->profile);
}

static int run_report(report *rp, store *s, int64_t run, sim_err *err)
{
    store_run_meta m;
    metrics ms;
    if (store_run_get(s, run, &m, err) != 0 ||
        (ms.n = store_run_metrics(s, run, ms.m, ENG_MAX_METRICS + 8, err)) < 0 ||
        store_run_scenario(s, run, &rp->scenario, err) != 0)
        return -1;
    run_heading(rp, run, &m);
    char where[64];
    snprintf(where, sizeof where, "id = %lld", (long long)run);
    if (extrapolation_notes(rp, s, where, err) != 0)
        return -1;
    run_tables(rp, &m, &ms);
    pd_tables(rp, &ms);
    run_figures(rp, s, &m, err);
    snprintf(rp->r.footer, sizeof rp->r.footer, "llmsim %s: run %lld of %s, stored %s.",
             study_version(), (long long)run, rp->r.db, m.created);
    rp->r.scenario = rp->scenario;
    validated_note(rp);
    return 0;
}

/* ---- a sweep ---- */

/* The shown metrics with intervals (and paired), then the completed and rejected requests. */
#define NLOADED (CLI_SWEEP_SHOWN + CLI_SWEEP_COUNTS)

static const char *interval(char *buf, size_t len, sim_interval v)
{
    if (isnan(v.mean))
        snprintf(buf, len, "-");
    else if (isnan(v.half))
        snprintf(buf, len, "%.2f", v.mean);
    else
        snprintf(buf, len, "%.2f ± %.2f", v.mean, v.half);
    return buf;
}

/* The note under the points: points saturated in some repetitions only, points rejecting. */
static void points_note(plt_table *t, int partial, int rejecting)
{
    size_t nn = 0;
    if (partial)
        nn =
            (size_t)snprintf(t->note, sizeof t->note,
                             "%d point%s saturated in only some repetitions: %s mean mixes "
                             "saturated and stable runs. ",
                             partial, partial > 1 ? "s are" : " is", partial > 1 ? "their" : "its");
    if (rejecting && nn < sizeof t->note)
        snprintf(t->note + nn, sizeof t->note - nn,
                 "%d point%s rejected requests: a rejected request is a failed one, left out of "
                 "the latencies.",
                 rejecting, rejecting > 1 ? "s" : "");
}

/* Each point's metrics (mean and interval over its repetitions), counts and saturation. */
static void points_table(report *rp, const study_sweep *sw, const study_sweep_table *tb)
{
    char title[160];
    snprintf(title, sizeof title, "Points (%d repetitions each%s)", sw->reps,
             sw->reps > 1 ? "; mean ± 95% CI" : "");
    plt_table *t =
        table(rp, title, NLOADED + 2, "point", "output tok/s", "median TTFT ms", "p99 TTFT ms",
              "median TPOT ms", "p99 TPOT ms", "p99 ITL ms", "completed", "rejected", "saturated");
    int partial = 0, rejecting = 0;
    for (int p = 0; p < sw->npoints; p++) {
        char params[1024], cells[NLOADED][64], sat[48];
        const char *c[NLOADED + 2];
        study_sweep_params(sw, p, params, sizeof params);
        c[0] = params;
        for (int m = 0; m < CLI_SWEEP_SHOWN; m++)
            c[m + 1] = interval(cells[m], sizeof cells[m], study_sweep_cell(tb, m, p)->v);
        for (int m = CLI_SWEEP_SHOWN; m < NLOADED; m++)
            c[m + 1] = num(cells[m], sizeof cells[m], study_sweep_cell(tb, m, p)->v.mean, 0);
        rejecting += study_sweep_cell(tb, CLI_SWEEP_SHOWN + 1, p)->v.mean > 0;
        const study_cell *cl = study_sweep_cell(tb, 0, p);
        cli_saturation(cl, sat, sizeof sat);
        partial += cl->saturated > 0 && cl->saturated < cl->n;
        c[NLOADED + 1] = sat;
        plt_table_row(t, c);
    }
    points_note(t, partial, rejecting);
}

/* Each point's differences from its baseline scheduler's point (key k), over paired seeds. */
static void paired_table(report *rp, const study_sweep *sw, const study_sweep_table *tb, int k)
{
    char title[160];
    snprintf(title, sizeof title, "Paired differences against scheduler %s (same seeds)",
             sw->v[k].val[0]);
    plt_table *t = table(rp, title, CLI_SWEEP_SHOWN + 1, "point", "output tok/s", "median TTFT ms",
                         "p99 TTFT ms", "median TPOT ms", "p99 TPOT ms", "p99 ITL ms");
    int unpaired = 0;
    for (int p = 0; p < sw->npoints; p++) {
        int base = study_sweep_base_point(sw, p, k);
        if (base == p)
            continue;
        unpaired += study_sweep_paired_reps(tb, p, base) == 0;
        char params[1024], cells[CLI_SWEEP_SHOWN][64];
        const char *c[CLI_SWEEP_SHOWN + 1];
        study_sweep_params(sw, p, params, sizeof params);
        c[0] = params;
        for (int m = 0; m < CLI_SWEEP_SHOWN; m++)
            c[m + 1] = interval(cells[m], sizeof cells[m], study_sweep_paired(tb, m, p, base));
        plt_table_row(t, c);
    }
    if (unpaired)
        snprintf(t->note, sizeof t->note,
                 "%d point%s no difference (-): %s baseline has no repetition in this database "
                 "(a shard's: the baseline's runs are in another shard; merge the shards' "
                 "databases with llmsim merge).",
                 unpaired, unpaired > 1 ? "s show" : " shows", unpaired > 1 ? "their" : "its");
}

static void sweep_table(report *rp, const study_sweep *sw, const study_sweep_table *tb)
{
    points_table(rp, sw, tb);
    int k = study_sweep_paired_key(sw);
    if (k >= 0)
        paired_table(rp, sw, tb, k);
}

static int first_text(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    char **out = arg;
    if (!*out && ncols > 0)
        *out = sim_xstrdup(vals[0] ? vals[0] : "");
    return 0;
}

/* The page of sweep id: its title and setting, the tables, two curves, the footer. */
static void sweep_page(report *rp, int64_t id, const store_sweep_meta *m, const study_sweep *sw,
                       const study_sweep_table *tb)
{
    snprintf(rp->r.title, sizeof rp->r.title, "Sweep %lld: %.160s", (long long)id, m->file);
    snprintf(rp->r.setting, sizeof rp->r.setting,
             "%d points x %d repetitions (seeds from %llu); varied: %.300s", sw->npoints, sw->reps,
             (unsigned long long)sw->seed, m->varied);
    sweep_table(rp, sw, tb);
    plt_figure *f = figure(rp, PLT_CURVE, "p99 TTFT against output throughput.");
    f->plot.sweep = id;
    f = figure(rp, PLT_CURVE, "p99 TPOT against output throughput.");
    f->plot.sweep = id;
    f->plot.metric = "tpot";
    snprintf(rp->r.footer, sizeof rp->r.footer, "llmsim %s: sweep %lld of %s, made %s.",
             study_version(), (long long)id, rp->r.db, m->created);
    rp->r.scenario = rp->scenario;
    validated_note(rp);
}

static int sweep_report(report *rp, store *s, int64_t id, sim_err *err)
{
    study_sweep sw;
    store_sweep_meta m;
    if (store_sweep_get(s, id, &m, err) != 0 || study_sweep_from_store(s, id, &sw, err) != 0)
        return -1;
    study_sweep_table tb;
    int rc = study_sweep_table_load(&sw, s, cli_sweep_loaded, NLOADED, &tb, err);
    if (rc == 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT scenario FROM sweeps WHERE id = %lld", (long long)id);
        rc = store_query(s, sql, first_text, &rp->scenario, err) ? -1 : 0;
    }
    if (rc == 0) {
        char where[128];
        snprintf(where, sizeof where,
                 "id IN (SELECT run_id FROM sweep_points WHERE sweep_id = %lld)", (long long)id);
        rc = extrapolation_notes(rp, s, where, err);
    }
    if (rc == 0)
        sweep_page(rp, id, &m, &sw, &tb);
    study_sweep_table_free(&tb);
    study_sweep_free(&sw);
    return rc;
}

/* ---- a capacity search ---- */

typedef struct rows {
    plt_table *t;
} rows;

/* Each result row of a query becomes a table row (NULL as "-"). */
static int add_rows(void *arg, int ncols, const char *const *names, const char *const *vals)
{
    plt_table *t = ((rows *)arg)->t;
    const char *c[16];
    for (int i = 0; i < t->ncols && i < 16; i++)
        c[i] = i < ncols && vals[i] ? vals[i] : "-";
    plt_table_row(t, c);
    return 0;
}

/* The search's question (file, SLOs, target, compared key) and its scenario. */
static int question_table(report *rp, store *s, int64_t id, sim_err *err)
{
    char sql[512];
    plt_table *t = table(rp, "Question", 6, "scenario file", "SLOs", "target rate (req/s)",
                         "compared key", "precision", "base seed");
    rows r = {t};
    snprintf(sql, sizeof sql,
             "SELECT coalesce(file, '-'), slo, coalesce(target_rate, '-'),"
             " coalesce(nullif(compare_key, ''), '-'), coalesce(precision, '-'), base_seed"
             " FROM capacity_searches WHERE id = %lld",
             (long long)id);
    if (store_query(s, sql, add_rows, &r, err) != 0)
        return -1;
    if (t->nrows == 0)
        return sim_errf(err, "%s: no capacity search %lld in this database", store_path(s),
                        (long long)id);
    snprintf(sql, sizeof sql, "SELECT scenario FROM capacity_searches WHERE id = %lld",
             (long long)id);
    return store_query(s, sql, first_text, &rp->scenario, err) != 0 ? -1 : 0;
}

/* Each choice's answer: its rate per replica, replicas and GPUs. */
static int answer_table(report *rp, store *s, int64_t id, sim_err *err)
{
    char sql[512];
    rows r;
    r.t = table(rp, "Answer", 4, "choice", "rate per replica (req/s)", "replicas", "GPUs");
    snprintf(sql, sizeof sql,
             "SELECT coalesce(nullif(choice, ''), '(scenario)'), CASE WHEN rate_per_replica"
             " IS NULL THEN 'none: unreachable (see the probes)' ELSE printf('%%.3f',"
             " rate_per_replica) END, replicas, gpus"
             " FROM capacity_results WHERE search_id = %lld"
             " ORDER BY choice",
             (long long)id);
    return store_query(s, sql, add_rows, &r, err);
}

/* Every probe the search made, with its first seed's run's latencies and rejections. */
static int probes_table(report *rp, store *s, int64_t id, sim_err *err)
{
    char sql[2048];
    rows r;
    r.t = table(rp, "Probes (every probe the search made; its first seed's run)", 12, "#", "choice",
                "phase", "rate (req/s)", "replicas", "met the SLOs", "saturated", "p99 TTFT ms",
                "p99 TPOT ms", "completed", "rejected", "why rejected");
    snprintf(sql, sizeof sql,
             "SELECT p.seq, coalesce(nullif(p.choice, ''), '(scenario)'), p.phase,"
             " printf('%%.3f', p.rate), p.replicas, CASE p.ok WHEN 1 THEN 'yes' ELSE 'no' END,"
             " CASE p.saturated WHEN 1 THEN 'yes' ELSE 'no' END,"
             " printf('%%.1f', (SELECT value FROM metrics m WHERE m.run_id = p.run_id AND"
             " m.name = 'p99_ttft_ms')), printf('%%.2f', (SELECT value FROM metrics m WHERE"
             " m.run_id = p.run_id AND m.name = 'p99_tpot_ms')),"
             " (SELECT CAST(value AS INTEGER) FROM metrics m WHERE m.run_id = p.run_id AND"
             " m.name = 'completed'), (SELECT CAST(value AS INTEGER) FROM metrics m WHERE"
             " m.run_id = p.run_id AND m.name = 'rejected'), (SELECT group_concat(substr(name,"
             " 10) || ' ' || CAST(value AS INTEGER), ', ') FROM metrics m WHERE m.run_id ="
             " p.run_id AND m.name LIKE 'rejected\\_%%' ESCAPE '\\') FROM capacity_probes p"
             " WHERE p.search_id = %lld ORDER BY p.seq",
             (long long)id);
    return store_query(s, sql, add_rows, &r, err);
}

/* The page of capacity search id, once its tables are read: title, setting (SLOs, choices,
 * probes), the probes' figure and the footer. */
static void capacity_page(report *rp, int64_t id)
{
    snprintf(rp->r.title, sizeof rp->r.title, "Capacity search %lld", (long long)id);
    snprintf(rp->r.setting, sizeof rp->r.setting, "SLOs %s; %d choices, %d probes",
             rp->t[0].cells[rp->t[0].ncols + 1], rp->t[1].nrows, rp->t[2].nrows);
    plt_figure *f = figure(rp, PLT_PROBES,
                           "p99 TTFT of every probe of the rate search against its rate, per "
                           "choice (filled: met the SLOs), with the TTFT SLO when it has one.");
    f->plot.sweep = id;
    snprintf(rp->r.footer, sizeof rp->r.footer, "llmsim %s: capacity search %lld of %s.",
             study_version(), (long long)id, rp->r.db);
    rp->r.scenario = rp->scenario;
    validated_note(rp);
}

static int capacity_report(report *rp, store *s, int64_t id, sim_err *err)
{
    if (question_table(rp, s, id, err) != 0 || answer_table(rp, s, id, err) != 0 ||
        probes_table(rp, s, id, err) != 0)
        return -1;
    char where[128];
    snprintf(where, sizeof where,
             "id IN (SELECT run_id FROM capacity_probes WHERE search_id = %lld)", (long long)id);
    if (extrapolation_notes(rp, s, where, err) != 0)
        return -1;
    capacity_page(rp, id);
    return 0;
}

/* ---- the command ---- */

/* report-run<ID>.html, report-sweep<ID>.html or report-capacity<ID>.html, into name. */
static const char *default_name(int64_t run, int64_t sweep, int64_t cap, char *name, size_t len)
{
    snprintf(name, len, "report-%s%lld.html",
             run     ? "run"
             : sweep ? "sweep"
                     : "capacity",
             (long long)(run + sweep + cap));
    return name;
}

/* Says what the page holds: 0, or 3 when its figures are missing for want of gnuplot. */
static int written(const cli_common *c, const char *out, const plt_report_result *res)
{
    cli_note(c, "llmsim: wrote %s (%d figure%s drawn", out, res->drawn, res->drawn == 1 ? "" : "s");
    if (res->failed)
        cli_note(c, ", %d could not be drawn: the page says why", res->failed);
    cli_note(c, ")\n");
    if (!res->missing)
        return 0;
    fprintf(stderr,
            "llmsim report: gnuplot is not installed, so the %d figures are missing from the "
            "page. Install it (apt-get install gnuplot-nox) and run the report again.\n",
            res->missing);
    return 3;
}

/* The report's sections, read from its database: a run's, a sweep's or a capacity search's. */
static int build_report(report *rp, int64_t run, int64_t sweep, int64_t cap, sim_err *err)
{
    store *s = store_open_readonly(rp->r.db, err);
    if (!s)
        return -1;
    int bad = (run && run_report(rp, s, run, err) != 0) ||
              (sweep && sweep_report(rp, s, sweep, err) != 0) ||
              (cap && capacity_report(rp, s, cap, err) != 0);
    store_close(s);
    return bad ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
    int64_t run = 0, sweep = 0, cap = 0;
    const char *out = NULL;
    const cli_option opts[] = {
        {"--run", "ID", CLI_INT64, &run, "a stored run", NULL, 1, 9e18, NULL, NULL},
        {"--sweep", "ID", CLI_INT64, &sweep, "a stored sweep", NULL, 1, 9e18, NULL, NULL},
        {"--capacity", "ID", CLI_INT64, &cap, "a stored capacity search", NULL, 1, 9e18, NULL,
         NULL},
        CLI_OUTPUT(&out, "the HTML file",
                   "report-run<ID>.html, report-sweep<ID>.html or report-capacity<ID>.html"),
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&report_cmd, opts, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    if ((run > 0) + (sweep > 0) + (cap > 0) != 1) {
        fprintf(stderr, "llmsim report: give one of --run ID, --sweep ID or --capacity ID\n");
        return 2;
    }
    char name[96];
    if (!out)
        out = default_name(run, sweep, cap, name, sizeof name);
    report rp;
    memset(&rp, 0, sizeof rp);
    rp.r.db = c.db;
    rp.r.out = out;
    sim_err err = {{0}};
    plt_report_result res;
    int rc = 1;
    if (build_report(&rp, run, sweep, cap, &err) != 0 || plt_report_write(&rp.r, &res, &err) != 0)
        cli_fail("report", &err);
    else
        rc = written(&c, out, &res);
    free_report(&rp);
    return rc;
}
