/*
 * cmd_run.c: `llmsim run FILE`: one simulation, stored as one run in one transaction, and its
 * summary.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "store_query.h"

static const cli_command run_cmd = {
    .name = "run",
    .args = "[FILE]",
    .summary =
        "Simulates the scenario in FILE, stores the run in one transaction and prints its summary.",
    .details =
        "A failed run stores nothing. --json prints vLLM's benchmark keys (date, model_id, "
        "num_prompts, request_rate, burstiness, max_concurrency, then the metrics) and the "
        "run_id; the same scenario and seed give the same --json output but for run_id and "
        "date (the stored run's creation time). A run that takes over 2 s shows its "
        "progress on stderr (not with --quiet). Without FILE, --model, --gpu and --isl/--osl "
        "(or --lengths sharegpt) describe the question: vLLM, 1,000 Poisson requests at "
        "--rate (1 req/s by default); with FILE they override its keys.",
    CLI_SIMULATES(0, "requests")};

static void report_notes(const cli_common *c, const study_result *r)
{
    cli_note(c, "%s", r->note);
    if (r->clipped > 0)
        cli_note(c,
                 "llmsim: %lld request lengths were clipped to their bounds or the model's "
                 "context\n",
                 (long long)r->clipped);
    if (r->skipped > 0)
        cli_note(c, "llmsim: %lld bad trace rows skipped\n", (long long)r->skipped);
    for (int k = 1; k < ENG_REJECT_REASON_COUNT; k++)
        if (r->tot.rejected_by[k])
            cli_note(c, "llmsim: %lld requests rejected: %s\n", (long long)r->tot.rejected_by[k],
                     eng_reject_reason_name((eng_reject_reason)k));
    if (r->saturated)
        cli_note(c, "llmsim: saturated: the queue was still growing when arrivals ended "
                    "(latency percentiles depend on the run's length)\n");
}

/* The stored run's created time (UTC) in vLLM's date format ("%Y%m%d-%H%M%S",
 * vllm/benchmarks/serve.py); -1 when the run is not stored. */
static int stored_date(store *s, int64_t run, char *buf, size_t len)
{
    store_run_meta m;
    sim_err ignore;
    int y, mo, d, h, mi, sec;
    if (!s || !run || store_run_get(s, run, &m, &ignore) != 0 ||
        sscanf(m.created, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &sec) != 6)
        return -1;
    snprintf(buf, len, "%04d%02d%02d-%02d%02d%02d", y, mo, d, h, mi, sec);
    return 0;
}

/* The run's date: the stored run's, so the same stored run always says the same date; the
 * current time when the run is not stored. */
static void run_date(store *s, int64_t run, char *buf, size_t len)
{
    if (stored_date(s, run, buf, len) == 0)
        return;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

/* vLLM's "burstiness" of arrival process a: the gamma shape, "inf" for constant gaps, null for a
 * trace, a burst or a closed loop. */
static void put_burstiness(sim_jsonw *j, const scn_arrival *a, int trace)
{
    if (trace || a->kind == SCN_ARR_BURST || a->kind == SCN_ARR_CLOSED)
        sim_jsonw_num(j, "burstiness", NAN);
    else if (a->kind == SCN_ARR_CONSTANT)
        sim_jsonw_str(j, "burstiness", "inf");
    else if (a->kind == SCN_ARR_GAMMA)
        sim_jsonw_num(j, "burstiness", a->cv > 0 ? 1.0 / (a->cv * a->cv) : NAN);
    else
        sim_jsonw_num(j, "burstiness", 1.0);
}

/* The offered load as vLLM's benchmark states it: request_rate, burstiness, max_concurrency. */
static void put_load(sim_jsonw *j, const scn_scenario *scn)
{
    const scn_workload *w = &scn->workload;
    const scn_arrival *a = &w->arrival;
    int trace = w->trace.present && !w->trace.lengths_only;
    double rate = study_offered_rate(scn);
    if (!trace && (a->kind == SCN_ARR_BURST || a->kind == SCN_ARR_CLOSED))
        sim_jsonw_str(j, "request_rate", "inf");
    else
        sim_jsonw_num(j, "request_rate", rate > 0 ? rate : NAN);
    put_burstiness(j, a, trace);
    if (!trace && a->kind == SCN_ARR_CLOSED)
        sim_jsonw_int(j, "max_concurrency", a->concurrency);
    else
        sim_jsonw_num(j, "max_concurrency", NAN);
}

/* The metadata vLLM's benchmark writes before its results (vllm/benchmarks/serve.py: date,
 * model_id, num_prompts, request_rate ("inf" when every request is sent at once), burstiness
 * (the gamma shape: 1 for Poisson, 1 / cv^2 for gamma, "inf" for constant gaps), max_concurrency
 * (null without a cap)), and the run id; null where the workload has no such figure (a trace
 * at its own pace). */
static void print_meta(sim_jsonw *j, const scn_scenario *scn, const study_result *r,
                       const char *date)
{
    sim_jsonw_str(j, "date", date);
    if (r->run_id)
        sim_jsonw_int(j, "run_id", r->run_id);
    else
        sim_jsonw_num(j, "run_id", NAN);
    sim_jsonw_str(j, "model_id", scn->engine.model.name);
    sim_jsonw_int(j, "num_prompts", r->tot.arrived);
    put_load(j, scn);
    const char *x = cli_extrapolated(scn);
    if (x) /* only on a GPU the cost model extrapolates to: other runs' JSON is unchanged */
        sim_jsonw_str(j, "extrapolated", x);
}

static void print_json(const scn_scenario *scn, const study_result *r, store *s)
{
    char date[32];
    run_date(s, r->run_id, date, sizeof date);
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    print_meta(&j, scn, r, date);
    cli_print_metrics_json(&j, NULL, r);
    sim_jsonw_close(&j, '}');
}

static void print_text(const scn_scenario *scn, uint64_t seed, const study_result *r)
{
    char where[200];
    const eng_config *e = &scn->engine;
    printf("llmsim run: %s | %s on %s (%s) | scheduler %s | seed %llu\n", scn->name, e->model.name,
           cli_deployment(scn, where, sizeof where), r->label,
           e->pd.enabled ? e->pd.pool[ENG_POOL_DECODE].sched.name : e->sched.name,
           (unsigned long long)seed);
    const char *x = cli_extrapolated(scn);
    if (x)
        printf("note: %s\n", x);
    cli_print_validated(stdout, scn);
    cli_print_summary(stdout, r);
}

static void print(const cli_common *c, const scn_scenario *scn, uint64_t seed,
                  const study_result *r, store *s)
{
    if (c->json)
        print_json(scn, r, s);
    else
        print_text(scn, seed, r);
    fflush(stdout);
}

/* ---- progress: requests done, shown once the run has taken PROGRESS_AFTER_S ---- */

#define PROGRESS_AFTER_S 2.0

typedef struct progress {
    cli_progress bar;
    int64_t done;
} progress;

static void progress_start(progress *p, const cli_common *c, const scn_scenario *scn)
{
    const scn_workload *w = &scn->workload;
    int64_t total = w->num_requests > 0 ? w->num_requests : w->trace.limit;
    memset(p, 0, sizeof *p);
    cli_progress_start(&p->bar, "requests", total > INT32_MAX ? 0 : (int)total, c->quiet);
    /* LLMSIM_PROGRESS_AFTER (seconds) shortens the wait, so tests can see the report */
    const char *env = getenv("LLMSIM_PROGRESS_AFTER");
    p->bar.delay_s = env && *env ? atof(env) : PROGRESS_AFTER_S;
}

/* Every finished or rejected request; the clock is read once per 1024 of them. */
static void progress_request(void *st, const eng_request *rq)
{
    progress *p = st;
    if ((++p->done & 1023) == 0)
        cli_progress_update(&p->bar, (int)(p->done > INT32_MAX ? INT32_MAX : p->done));
}

static void progress_end(progress *p)
{
    cli_progress_finish(&p->bar, (int)(p->done > INT32_MAX ? INT32_MAX : p->done));
}

static const eng_recorder_ops progress_ops = {progress_request, NULL, NULL, NULL};

/* Runs scn with seed into res, storing it in s (when not NULL) at c's level, with a progress
 * report unless quiet. 0, or -1 with err. */
static int simulate(const cli_common *c, const scn_scenario *scn, uint64_t seed, store *s,
                    study_result *res, sim_err *err)
{
    study_sink sink = {.s = s, .level = c->level};
    progress pr;
    progress_start(&pr, c, scn);
    study_hooks hooks = {.rec = &progress_ops, .rec_st = &pr};
    int rc = study_run(scn, seed, s, s ? &sink : NULL, c->quiet ? NULL : &hooks, res, err);
    progress_end(&pr);
    return rc;
}

/* Parses run's command line into c and *no_db, with the quick options in q (whose buffers
 * c's overrides then point into); *file is the scenario's name and *text its text when the
 * options describe it (NULL for a file to read). CLI_GO, or the exit status. */
static int parse(int argc, char **argv, cli_quick *q, cli_common *c, int *no_db, const char **file,
                 const char **text)
{
    memset(q, 0, sizeof *q);
    cli_option opts[2 + CLI_QUICK_NOPTS] = {{"--no-db", NULL, CLI_FLAG, no_db,
                                             "simulate without storing anything", NULL, 0, 0, NULL,
                                             NULL}};
    opts[cli_quick_options(q, opts, 1)] = (cli_option)CLI_END;
    int npos, st = cli_parse(&run_cmd, opts, c, argc, argv, file, &npos);
    if (st == CLI_GO)
        st = cli_quick_apply("run", q, c, file, text);
    return st;
}

/* The closing note: where the run was stored, and how long it took to simulate. */
static void note_stored(const cli_common *c, const study_result *res)
{
    if (res->run_id)
        cli_note(c, "llmsim: run %lld stored in %s (simulated in %.3f s)\n", (long long)res->run_id,
                 c->db, res->wall_s);
    else
        cli_note(c, "llmsim: simulated in %.3f s (not stored)\n", res->wall_s);
}

/* Simulates scn (with --seed's seed, or its own) into res, stored in s when not NULL, and
 * prints its notes and summary. 0, or -1 with err. */
static int run_and_print(const cli_common *c, const scn_scenario *scn, store *s, study_result *res,
                         sim_err *err)
{
    uint64_t seed = c->seed_given ? c->seed : scn->seed;
    if (simulate(c, scn, seed, s, res, err) != 0)
        return -1;
    report_notes(c, res);
    print(c, scn, seed, res, s);
    note_stored(c, res);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    int no_db = 0;
    cli_quick q;
    cli_common c;
    const char *file = NULL, *text;
    int st = parse(argc, argv, &q, &c, &no_db, &file, &text);
    if (st != CLI_GO)
        return st;
    sim_err err = {{0}};
    scn_scenario scn;
    store *s = NULL;
    study_result *res = sim_xcalloc(1, sizeof *res);
    int rc = 1;
    if ((text ? study_load_text(file, text, c.sets, c.nsets, &scn, &err)
              : study_load(file, c.sets, c.nsets, &scn, &err)) != 0)
        goto fail;
    cli_note(&c, "%s", scn.notes);
    if (!no_db && !(s = store_open(c.db, &err)))
        goto fail;
    if (run_and_print(&c, &scn, s, res, &err) != 0)
        goto fail;
    rc = 0;
    goto out;
fail:
    cli_fail(NULL, &err);
out:
    store_close(s);
    scn_free(&scn);
    free(res);
    return rc;
}
