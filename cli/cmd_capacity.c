/*
 * cmd_capacity.c: `llmsim capacity FILE --slo ttft_p99=1000ms,tpot_p99=50ms [--target-rate R]
 * [--compare KEY=V1,V2,... | --compare 'NAME: K=V,K=V; ...']...`: the highest rate per replica
 * within the SLOs and the replicas a target rate needs (study/capacity.c), one row per choice,
 * or the verdict that says why there is none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "study_capacity.h"
#include "study_validate.h"

static const cli_command capacity_cmd = {
    .name = "capacity",
    .args = "[FILE] --slo METRIC_PCT=VALUE,...",
    .summary =
        "Finds, for the scenario in FILE (or each --compare choice), the highest arrival rate one "
        "replica sustains within the SLOs, and with --target-rate the replicas (and GPUs) that "
        "rate needs, checked by simulating the whole cluster behind the scenario's router.",
    .details =
        "Search: first the unloaded case (one request at a time): if it misses an SLO or rejects "
        "more than --max-rejected, the answer is 'unreachable' and that choice stops. Then "
        "Poisson arrivals from the unloaded capacity (its throughput), doubling until a rate "
        "fails, then bisection to --precision; the search never goes below the unloaded "
        "capacity. A probe fails when saturated, when it rejects more than --max-rejected of its "
        "requests, or when a percentile is over its SLO; each percentile has a 95% interval "
        "(batch means over tenths of the run), and a probe whose interval holds a limit is run "
        "again with the next seed, up to --seeds (decided by the mean then, marked '~'). SLO "
        "metrics: ttft, tpot, itl, e2el (or e2e) with p50, p90, p95 or p99; values in ms or s; "
        "tps_per_user=N bounds the mean TPOT at 1000/N ms. Every probe is an ordinary run, "
        "stored with the search (tables capacity_searches, capacity_probes, capacity_results). "
        "--compare KEY=V1,V2 compares values of one key; --compare 'tp8: tensor_parallel=8; "
        "dp8ep8: data_parallel_attention=8,expert_parallel=8' compares named choices of "
        "several keys; a second --compare makes the cross product (named A/B). A scenario with "
        "prefill and decode pools counts one copy of its pools as a replica; --compare "
        "pd=1:1,1:2,2:3 tries prefill:decode replica ratios, and --target-rate without "
        "--compare searches the split with the fewest GPUs (for 1, 2, ... prefill replicas, the "
        "fewest decode replicas that meet the SLOs at that rate), reporting GPUs per pool. "
        "--minimise cost adds each choice's cost per hour (its GPUs at their catalog price, or "
        "the scenario's price:) and marks the cheapest choice meeting the SLOs (with "
        "--target-rate: the cheapest cluster; without: the most requests/s per USD), and the "
        "prefill:decode search looks for the cheapest split; --minimise gpus marks the fewest "
        "GPUs. A GPU without a price is refused, never priced as another. "
        "Without FILE, --model, --gpu and --isl/--osl (or --lengths sharegpt) describe the "
        "question (vLLM, 1,000 Poisson requests); with FILE they override its keys.",
    CLI_SIMULATES(0, "summary")};

typedef struct cap_args {
    study_capacity *cap;
    char slo_text[1024];
} cap_args;

/* What the progress callbacks see. */
typedef struct cap_state {
    cli_common c;
    study_capacity cap;
    cli_quick q;
    int objective; /* --minimise given: the table marks the choice it picks */
} cap_state;

static int take_objective(void *arg, const char *v)
{
    cap_state *s = arg;
    if (study_objective_parse(v, &s->cap.minimise) == 0) {
        s->objective = 1;
        return 0;
    }
    fprintf(stderr, "llmsim capacity: --minimise expects gpus or cost; got '%s'\n", v);
    return -1;
}

/* Parses one --slo argument into cap's SLOs and appends it to text (for the store). 0, or -1
 * after a message naming cmd. Shared with recommend. */
int cli_slo_add(const char *cmd, study_capacity *cap, char *text, size_t len, const char *v)
{
    sim_err err = {{0}};
    if (study_slo_parse(v, cap->slo, STUDY_MAX_SLO, &cap->nslo, &err) != 0) {
        fprintf(stderr, "llmsim %s: %s\n", cmd, err.msg);
        return -1;
    }
    size_t n = strlen(text);
    snprintf(text + n, len - n, "%s%s", n ? "," : "", v);
    return 0;
}

static int add_slo(void *arg, const char *v)
{
    cap_args *a = arg;
    return cli_slo_add("capacity", a->cap, a->slo_text, sizeof a->slo_text, v);
}

static int add_compare(void *arg, const char *v)
{
    sim_err err = {{0}};
    return cli_call_status("capacity", study_capacity_compare(arg, v, &err), &err);
}

/* ---- progress ---- */

static void on_probe(void *arg, const char *choice, const char *phase, double rate, int replicas,
                     const study_trial *t)
{
    const cap_state *s = arg;
    const cli_common *c = &s->c;
    const study_capacity *cap = &s->cap;
    char r[32], v[96], rej[200], line[600];
    size_t n = 0;
    line[0] = '\0';
    for (int i = 0; i < cap->nslo && n < sizeof line; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", i ? ", " : "",
                              study_trial_value(cap, t, i, v, sizeof v));
    const char *verdict = t->ok ? (t->uncertain ? "meets (by the mean)" : "meets")
                                : (t->saturated ? "saturated" : "misses");
    cli_note(c, "  %s%s[%s] ", choice ? choice : "", choice ? " " : "", phase);
    if (strcmp(phase, "unloaded") == 0)
        cli_note(c, "one request at a time, %s req/s", study_fmt_num(rate, r, sizeof r));
    else if (strcmp(phase, "search") == 0)
        cli_note(c, "%s req/s", study_fmt_num(rate, r, sizeof r));
    else
        cli_note(c, "%d replicas at %s req/s", replicas, study_fmt_num(rate, r, sizeof r));
    cli_note(c, ": %s, %s, %d seed%s: %s\n", line, study_trial_rejections(t, rej, sizeof rej),
             t->seeds, t->seeds == 1 ? "" : "s", verdict);
}

static void on_cluster(void *arg, const char *choice, double rate, int replicas, int gpus,
                       int64_t requests)
{
    const cli_common *c = &((const cap_state *)arg)->c;
    char r[32], q[32];
    cli_note(c, "  %s%s[cluster] checking %d replicas", choice ? choice : "", choice ? " " : "",
             replicas);
    if (gpus > 0)
        cli_note(c, " (%d GPUs)", gpus);
    cli_note(c, " at %s req/s", study_fmt_num(rate, r, sizeof r));
    if (requests > 0)
        cli_note(c, ", %s requests", study_fmt_num((double)requests, q, sizeof q));
    cli_note(c, "...\n");
}

/* ---- the table ---- */

static const study_trial *shown_trial(const study_capacity *cap, const study_answer *a)
{
    if (a->verdict == STUDY_UNREACHABLE)
        return &a->unloaded;
    return cap->target > 0 && a->replicas ? &a->at_target : &a->at_rate;
}

/* The quick options as given, and the user's own --set overrides (after the options'). */
static void print_asked(const cap_state *s)
{
    const study_capacity *cap = &s->cap;
    if (s->q.shown[0])
        printf("asked: %s\n", s->q.shown);
    if (cap->nsets > s->q.nbuf) { /* the options' overrides come first: the user's follow */
        printf("--set:");
        for (int i = s->q.nbuf; i < cap->nsets; i++)
            printf(" %s", cap->sets[i]);
        printf("\n");
    }
}

static void print_head(const cap_state *s, const scn_scenario *scn)
{
    const study_capacity *cap = &s->cap;
    char where[200];
    const eng_config *e = &scn->engine;
    printf("capacity: %s | %s on %s | scheduler %s | SLO", scn->name, e->model.name,
           cli_deployment(scn, where, sizeof where),
           e->pd.enabled ? e->pd.pool[ENG_POOL_DECODE].sched.name : e->sched.name);
    for (int i = 0; i < cap->nslo; i++)
        printf(" %s<=%gms", cap->slo[i].label, cap->slo[i].limit_ms);
    if (cap->target > 0)
        printf(" | target %g req/s", cap->target);
    printf(" | max rejected %g%%", 100 * cap->max_rejected);
    if (cap->max_gpus > 0)
        printf(" | max %d GPUs", cap->max_gpus);
    printf("\n");
    const char *x = cli_extrapolated(scn);
    if (x)
        printf("note: %s\n", x);
    if (cap->fit_note[0])
        printf("pipelined: %s\n", cap->fit_note);
    cli_print_validated(stdout, scn);
    print_asked(s);
}

/* The copies of answer a's replica the table and the JSON count: those the target rate needs,
 * else one. */
static int copies(const study_capacity *cap, const study_answer *a)
{
    return cap->target > 0 && a->replicas ? a->replicas : 1;
}

/* A disaggregated answer's GPUs per pool for n copies of its pools. */
static void pool_gpus(const study_answer *a, int n, int *p, int *d)
{
    *p = n * a->prefill * a->prefill_gpus;
    *d = n * a->decode * a->decode_gpus;
}

/* "1,004~" or "1,004" (~: decided by the mean), right-aligned in w. */
static void print_value(const study_trial *t, int i, int w)
{
    char v[40], cell[48];
    study_fmt_num(t->value[i], v, sizeof v);
    snprintf(cell, sizeof cell, "%s%s", v, t->uncertain ? "~" : "");
    printf(" %*s", w, cell);
}

/* What the objective weighs of answer a (lower is better): with a target rate its cluster's
 * GPUs or USD per hour, without one the GPUs or USD per hour of a request/s of one replica;
 * NaN when a is not found or has no price. */
static double objective(const study_capacity *cap, const study_answer *a)
{
    if (a->verdict != STUDY_FOUND || (cap->target > 0 && !a->replicas) || !(a->rate > 0))
        return NAN;
    if (cap->target > 0)
        return study_answer_cost(a, a->replicas, cap->minimise);
    return study_answer_cost(a, 1, cap->minimise) / a->rate;
}

/* The choice the objective picks, -1 when none is found (ties: the first). */
static int best_choice(const study_capacity *cap, const study_answer *ans, int n)
{
    int best = -1;
    for (int k = 0; k < n; k++) {
        double v = objective(cap, &ans[k]);
        if (!isnan(v) && (best < 0 || v < objective(cap, &ans[best])))
            best = k;
    }
    return best;
}

static const char *best_mark(const study_capacity *cap)
{
    if (cap->minimise == STUDY_MIN_COST)
        return cap->target > 0 ? "  <- cheapest" : "  <- most req/s per USD";
    return cap->target > 0 ? "  <- fewest GPUs" : "  <- most req/s per GPU";
}

/* A disaggregated answer's pools for n copies: "replicas x GPUs each" of prefill and decode. */
static void print_pools(const study_answer *a, int n)
{
    int gp, gd;
    pool_gpus(a, n, &gp, &gd);
    printf(" %5dx%-4d %5dx%-4d", gp / a->prefill_gpus, a->prefill_gpus, gd / a->decode_gpus,
           a->decode_gpus);
}

static void print_row(const study_capacity *cap, int pd, const char *name, const study_answer *a,
                      const char *mark)
{
    char r[32], done[32], rej[32];
    const study_trial *t = shown_trial(cap, a);
    printf("%-16s", name);
    if (a->verdict == STUDY_UNREACHABLE || a->verdict == STUDY_UNREACHABLE_LOAD) {
        printf(" %s\n", a->why);
        return;
    }
    snprintf(r, sizeof r, "%.4g", a->rate);
    printf(" %14s", r);
    if (cap->target > 0 && a->replicas)
        printf(" %9d %6d", a->replicas, a->replicas * a->tp);
    else if (cap->target > 0)
        printf(" %9s %6s", "n/a", "n/a");
    if (cap->minimise == STUDY_MIN_COST)
        printf(" %8.2f", study_answer_usd_h(a, copies(cap, a)));
    if (pd)
        print_pools(a, copies(cap, a));
    for (int i = 0; i < cap->nslo; i++)
        print_value(t, i, 16);
    printf(" %10s %9s", study_fmt_num((double)t->completed, done, sizeof done),
           study_fmt_num((double)t->rejected, rej, sizeof rej));
    if (a->verdict != STUDY_FOUND)
        printf("  %s", a->why);
    printf("%s\n", mark);
}

/* Choice k's validated error into buf, or "" when it is the scenario's (base: the heading's). */
static const char *choice_validated(const study_capacity *cap, int k, const char *base, char *buf,
                                    size_t len)
{
    scn_scenario c;
    sim_err ignore = {{0}};
    buf[0] = '\0';
    if (study_capacity_load_choice(cap, k, &c, &ignore) == 0 &&
        strcmp(study_verrors_describe(&c, buf, len), base) == 0)
        buf[0] = '\0';
    scn_free(&c);
    return buf;
}

/* Under the table: each choice's overrides and, where it is not the heading's, its validated
 * error; the reasons of any rejections. */
static void print_notes(const study_capacity *cap, const scn_scenario *scn, const study_answer *ans,
                        int nchoice)
{
    char sets[600], rej[300], base[512], mine[512];
    study_verrors_describe(scn, base, sizeof base);
    for (int k = 0; k < cap->ncmp; k++) {
        choice_validated(cap, k, base, mine, sizeof mine);
        printf("(%s: %s%s%s)\n", cap->choice[k].name,
               study_choice_sets(&cap->choice[k], sets, sizeof sets), mine[0] ? "; " : "", mine);
    }
    for (int k = 0; k < nchoice; k++) {
        const study_trial *t = shown_trial(cap, &ans[k]);
        if (t->rejected && ans[k].verdict != STUDY_UNREACHABLE)
            printf("(%s: %s)\n", cap->ncmp ? cap->choice[k].name : "rejections",
                   study_trial_rejections(t, rej, sizeof rej));
    }
}

static void print_table(const cap_state *s, const scn_scenario *scn, const study_answer *ans,
                        int nchoice)
{
    const study_capacity *cap = &s->cap;
    int pd = scn->engine.pd.enabled;
    print_head(s, scn);
    printf("%-16s %14s", "choice", pd ? "rate/copy" : "rate/replica");
    if (cap->target > 0)
        printf(" %9s %6s", pd ? "copies" : "replicas", "GPUs");
    if (cap->minimise == STUDY_MIN_COST)
        printf(" %8s", "USD/h");
    if (pd)
        printf(" %10s %10s", "prefill", "decode");
    for (int i = 0; i < cap->nslo; i++)
        printf(" %16s", cap->slo[i].label);
    printf(" %10s %9s\n", "completed", "rejected");
    int best = s->objective ? best_choice(cap, ans, nchoice) : -1;
    for (int k = 0; k < nchoice; k++)
        print_row(cap, pd, cap->ncmp ? cap->choice[k].name : "-", &ans[k],
                  k == best ? best_mark(cap) : "");
    int rough = 0;
    for (int k = 0; k < nchoice; k++)
        rough |= ans[k].verdict == STUDY_FOUND && shown_trial(cap, &ans[k])->uncertain;
    printf("(SLO columns: the percentiles achieved %s, mean over the seeds run; completed and "
           "rejected: summed over them%s)\n",
           cap->target > 0 ? "by the cluster at the target rate" : "at the highest rate found",
           rough ? "; ~: no interval (a run too short for batches), decided by the value" : "");
    if (cap->minimise == STUDY_MIN_COST)
        printf("(USD/h: the GPUs of %s at each GPU's price per GPU-hour; n/a: no price)\n",
               cap->target > 0 ? "the cluster" : "one replica");
    if (pd)
        printf("(a copy is the scenario's pools, or the ratio's replicas; prefill and decode: "
               "replicas x GPUs each%s)\n",
               cap->target > 0 ? ", for the copies the target rate needs" : " in one copy");
    print_notes(cap, scn, ans, nchoice);
}

/* The prefill:decode search's splits, the cheapest marked. */
static void print_split(const cap_state *s, const scn_scenario *scn, const study_answer *ans, int n,
                        int best)
{
    const study_capacity *cap = &s->cap;
    char done[32], rej[32];
    print_head(s, scn);
    int cost = cap->minimise == STUDY_MIN_COST;
    printf("%-14s %12s %12s %6s", "prefill:decode", "prefill GPUs", "decode GPUs", "GPUs");
    if (cost)
        printf(" %8s", "USD/h");
    for (int i = 0; i < cap->nslo; i++)
        printf(" %16s", cap->slo[i].label);
    printf(" %10s %9s\n", "completed", "rejected");
    for (int k = 0; k < n; k++) {
        const study_answer *a = &ans[k];
        int gp, gd;
        char ratio[32];
        pool_gpus(a, 1, &gp, &gd);
        snprintf(ratio, sizeof ratio, "%d:%d", a->prefill, a->decode);
        printf("%-14s %12d %12d %6d", ratio, gp, gd, gp + gd);
        if (cost)
            printf(" %8.2f", study_answer_usd_h(a, 1));
        for (int i = 0; i < cap->nslo; i++)
            print_value(&a->at_target, i, 16);
        printf(" %10s %9s", study_fmt_num((double)a->at_target.completed, done, sizeof done),
               study_fmt_num((double)a->at_target.rejected, rej, sizeof rej));
        printf("%s\n", k != best ? "" : cost ? "  <- cheapest" : "  <- fewest GPUs");
    }
    if (best < 0)
        printf("(no split of up to %d replicas per pool%s met the SLOs at %g req/s)\n",
               STUDY_PD_MAX, cap->max_gpus > 0 ? " within --max-gpus" : "", cap->target);
    printf("(for each prefill count, the fewest decode replicas meeting the SLOs at the target "
           "rate; SLO columns: the percentiles achieved%s)\n",
           cost ? "; USD/h: each pool's GPUs at their price per GPU-hour" : "");
}

/* ---- JSON ---- */

/* "sets": the overrides ("key=value") of choice c. */
static void json_choice_sets(sim_jsonw *j, const study_choice *c)
{
    sim_jsonw_open(j, "sets", '[');
    for (int i = 0; i < c->nsets; i++)
        sim_jsonw_str(j, NULL, c->set[i]);
    sim_jsonw_close(j, ']');
}

/* The pipeline the model was searched on (study_capacity_fit): why, and its overrides. */
static void json_pipelined(sim_jsonw *j, const study_capacity *cap)
{
    sim_jsonw_open(j, "pipelined", '{');
    sim_jsonw_str(j, "why", cap->fit_note);
    json_choice_sets(j, &cap->fit);
    sim_jsonw_close(j, '}');
}

/* The search's limits: SLOs (ms), target rate, rejections allowed, GPU cap, runs made. */
static void json_limits(sim_jsonw *j, const study_capacity *cap)
{
    sim_jsonw_open(j, "slo_ms", '{');
    for (int i = 0; i < cap->nslo; i++)
        sim_jsonw_num(j, cap->slo[i].label, cap->slo[i].limit_ms);
    sim_jsonw_close(j, '}');
    if (cap->target > 0)
        sim_jsonw_num(j, "target_rate", cap->target);
    sim_jsonw_num(j, "max_rejected", cap->max_rejected);
    if (cap->max_gpus > 0)
        sim_jsonw_int(j, "max_gpus", cap->max_gpus);
    sim_jsonw_int(j, "runs", cap->runs);
}

static void json_head(sim_jsonw *j, const study_capacity *cap, const scn_scenario *scn)
{
    if (cap->search_id)
        sim_jsonw_int(j, "search_id", cap->search_id);
    sim_jsonw_str(j, "scenario", scn->name);
    sim_jsonw_str(j, "model", scn->engine.model.name);
    sim_jsonw_str(j, "gpu", scn->engine.gpu.name);
    sim_jsonw_str(j, "scheduler", scn->engine.sched.name);
    const char *x = cli_extrapolated(scn);
    if (x)
        sim_jsonw_str(j, "extrapolated", x);
    char v[512];
    sim_jsonw_str(j, "validated", study_verrors_describe(scn, v, sizeof v));
    sim_jsonw_open(j, "sets", '[');
    for (int i = 0; i < cap->nsets; i++)
        sim_jsonw_str(j, NULL, cap->sets[i]);
    sim_jsonw_close(j, ']');
    if (cap->fit.nsets > 0)
        json_pipelined(j, cap);
    json_limits(j, cap);
}

static void json_trial(sim_jsonw *j, const char *key, const study_capacity *cap,
                       const study_trial *t)
{
    char k[128];
    sim_jsonw_open(j, key, '{');
    for (int i = 0; i < cap->nslo; i++) {
        sim_jsonw_num(j, cap->slo[i].label, t->value[i]);
        snprintf(k, sizeof k, "%s_half", cap->slo[i].label);
        sim_jsonw_num(j, k, t->half[i]);
    }
    sim_jsonw_bool(j, "ok", t->ok);
    sim_jsonw_bool(j, "uncertain", t->uncertain);
    sim_jsonw_bool(j, "saturated", t->saturated);
    sim_jsonw_int(j, "seeds", t->seeds);
    sim_jsonw_num(j, "throughput", t->throughput);
    sim_jsonw_int(j, "arrived", t->arrived);
    sim_jsonw_int(j, "completed", t->completed);
    sim_jsonw_int(j, "rejected", t->rejected);
    sim_jsonw_open(j, "rejected_by", '{');
    for (int r = 1; r < ENG_REJECT_REASON_COUNT; r++)
        if (t->rejected_by[r])
            sim_jsonw_int(j, eng_reject_reason_name((eng_reject_reason)r), t->rejected_by[r]);
    sim_jsonw_close(j, '}');
    sim_jsonw_close(j, '}');
}

/* One prefill:decode split at the target rate: replicas and GPUs per pool, cost, the mark. */
static void json_split(sim_jsonw *j, const study_capacity *cap, const study_answer *a, int best)
{
    int gp, gd;
    pool_gpus(a, 1, &gp, &gd);
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_int(j, "prefill_replicas", a->prefill);
    sim_jsonw_int(j, "decode_replicas", a->decode);
    sim_jsonw_int(j, "prefill_gpus", gp);
    sim_jsonw_int(j, "decode_gpus", gd);
    sim_jsonw_int(j, "gpus", gp + gd);
    sim_jsonw_bool(j, "fewest_gpus", best && cap->minimise == STUDY_MIN_GPUS);
    if (cap->minimise == STUDY_MIN_COST) {
        sim_jsonw_num(j, "usd_per_hour", study_answer_usd_h(a, 1));
        sim_jsonw_bool(j, "cheapest", best);
    }
    json_trial(j, "at_target", cap, &a->at_target);
    sim_jsonw_close(j, '}');
}

static void print_split_json(const study_capacity *cap, const scn_scenario *scn,
                             const study_answer *ans, int n, int best)
{
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    json_head(&j, cap, scn);
    sim_jsonw_open(&j, "splits", '[');
    for (int k = 0; k < n; k++)
        json_split(&j, cap, &ans[k], k == best);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

/* A compared choice's name, overrides and validation (when it differs from the scenario's,
 * base). */
static void json_choice_name(sim_jsonw *j, const study_capacity *cap, int k, const char *base)
{
    char mine[512];
    sim_jsonw_str(j, "choice", cap->choice[k].name);
    json_choice_sets(j, &cap->choice[k]);
    if (*choice_validated(cap, k, base, mine, sizeof mine))
        sim_jsonw_str(j, "validated", mine);
}

/* A choice's size: GPUs per replica, replicas and GPUs at the target rate, cost, pool GPUs. */
static void json_choice_size(sim_jsonw *j, const study_capacity *cap, const study_answer *a)
{
    sim_jsonw_int(j, "gpus_per_replica", a->tp);
    if (cap->target > 0) {
        sim_jsonw_int(j, "replicas", a->replicas);
        sim_jsonw_int(j, "gpus", (int64_t)a->replicas * a->tp);
    }
    if (cap->minimise == STUDY_MIN_COST)
        sim_jsonw_num(j, "usd_per_hour", study_answer_usd_h(a, copies(cap, a)));
}

/* A disaggregated choice's GPUs per pool (nothing for an aggregated one). */
static void json_choice_pools(sim_jsonw *j, const study_capacity *cap, const study_answer *a)
{
    int gp, gd;
    if (!a->prefill)
        return;
    pool_gpus(a, copies(cap, a), &gp, &gd);
    sim_jsonw_int(j, "prefill_gpus", gp);
    sim_jsonw_int(j, "decode_gpus", gd);
}

/* One choice's answer: verdict, rates, size, mark, and its probes. */
static void json_choice(sim_jsonw *j, const cap_state *st, const study_answer *a, int k, int best,
                        const char *base)
{
    const study_capacity *cap = &st->cap;
    sim_jsonw_open(j, NULL, '{');
    if (cap->ncmp)
        json_choice_name(j, cap, k, base);
    sim_jsonw_str(j, "verdict", study_verdict_name(a->verdict));
    if (a->why[0])
        sim_jsonw_str(j, "why", a->why);
    sim_jsonw_num(j, "unloaded_rate", a->unloaded_rate);
    sim_jsonw_num(j, "rate_per_replica", a->rate);
    json_choice_size(j, cap, a);
    if (st->objective)
        sim_jsonw_bool(j, "best", k == best);
    json_choice_pools(j, cap, a);
    json_trial(j, "unloaded", cap, &a->unloaded);
    if (a->verdict != STUDY_UNREACHABLE)
        json_trial(j, "at_rate", cap, &a->at_rate);
    if (cap->target > 0 && a->replicas)
        json_trial(j, "at_target", cap, &a->at_target);
    sim_jsonw_close(j, '}');
}

static void print_json(const cap_state *st, const scn_scenario *scn, const study_answer *ans,
                       int nchoice)
{
    const study_capacity *cap = &st->cap;
    int best = st->objective ? best_choice(cap, ans, nchoice) : -1;
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    json_head(&j, cap, scn);
    if (cap->ncmp)
        sim_jsonw_str(&j, "compare", cap->compare);
    if (st->objective)
        sim_jsonw_str(&j, "minimise", cap->minimise == STUDY_MIN_COST ? "cost" : "gpus");
    char base[512];
    study_verrors_describe(scn, base, sizeof base);
    sim_jsonw_open(&j, "choices", '[');
    for (int k = 0; k < nchoice; k++)
        json_choice(&j, st, &ans[k], k, best, base);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

/* ---- the command ---- */

void cli_capacity_take(study_capacity *cap, const char *file, const cli_common *c)
{
    cap->file = file;
    cap->sets = c->sets;
    cap->nsets = c->nsets;
    cap->seed = c->seed;
    cap->seed_given = c->seed_given;
    cap->level = c->level;
}

/* The search's options into cap (and ca's SLO text, c); CLI_GO, or the exit status. */
static int parse(int argc, char **argv, cap_state *s, cap_args *ca)
{
    study_capacity *cap = &s->cap;
    cli_common *c = &s->c;
    cap->precision = 0.03;
    cli_option opts[9 + CLI_QUICK_NOPTS] = {
        {"--slo", "LIST", CLI_CALL, NULL,
         "service-level objectives, e.g. ttft_p99=1000ms,tpot_p99=50ms (repeatable)", NULL, 0, 0,
         add_slo, ca},
        {"--target-rate", "R", CLI_DOUBLE, &cap->target,
         "requests/s the cluster must sustain; 0: the per-replica rate only", "0", 0, 1e9, NULL,
         NULL},
        {"--compare", "SPEC", CLI_CALL, NULL,
         "KEY=V1,V2,... or 'NAME: K=V,K=V; NAME2: K=V': the choices to search (scheduler is "
         "short for scheduler.name, pd=P:D sets both pools' replicas); repeated: the cross "
         "product",
         NULL, 0, 0, add_compare, cap},
        {"--precision", "F", CLI_DOUBLE, &cap->precision,
         "relative width at which the bisection stops", "0.03", 1e-6, 0.999999, NULL, NULL},
        {"--max-rejected", "F", CLI_DOUBLE, &cap->max_rejected,
         "fraction of requests a probe may reject (or drop) and still meet the SLOs", "0", 0, 1,
         NULL, NULL},
        {"--max-gpus", "N", CLI_INT, &cap->max_gpus,
         "most GPUs a cluster may use; a target rate needing more is 'over budget' (0: no cap)",
         "1024", 0, 1e7, NULL, NULL},
        {"--seeds", "N", CLI_INT, &cap->max_seeds,
         "most seeds a probe runs while its interval holds an SLO's limit", "3", 1, 100, NULL,
         NULL},
        {"--minimise", "WHAT", CLI_CALL, NULL,
         "gpus or cost (USD per hour at each GPU's price): the choice marked, the split searched",
         "gpus", 0, 0, take_objective, s}};
    opts[cli_quick_options(&s->q, opts, 8)] = (cli_option)CLI_END;
    const char *file = NULL;
    int npos;
    cap->max_gpus = 1024;
    cap->max_seeds = 3;
    int st = cli_parse(&capacity_cmd, opts, c, argc, argv, &file, &npos);
    if (st == CLI_GO)
        st = cli_quick_apply("capacity", &s->q, c, &file, &cap->text);
    if (st == CLI_GO && cap->nslo == 0) {
        fprintf(stderr, "llmsim capacity: give the SLOs with --slo, e.g. ttft_p99=1000ms\n");
        st = 2;
    }
    cli_capacity_take(cap, file, c);
    cap->probe = on_probe;
    cap->cluster = on_cluster;
    cap->probe_arg = s;
    return st;
}

/* Loads the scenario into scn (its notes shown), checks the prices the objective needs and
 * begins the stored search (or takes up an unfinished one). 0, or -1 with err. */
static int begin(cap_state *s, const cap_args *ca, scn_scenario *scn, sim_err *err)
{
    study_capacity *cap = &s->cap;
    if (study_capacity_fit(cap, err) != 0 || study_capacity_load(cap, scn, err) != 0)
        return -1;
    cli_note(&s->c, "%s", scn->notes);
    if (study_capacity_priced(cap, err) != 0 || !(cap->db = store_open(s->c.db, err)) ||
        study_capacity_begin(cap, scn, ca->slo_text, err) != 0)
        return -1;
    if (cap->resumed)
        cli_note(&s->c,
                 "llmsim capacity: taking up search %lld, which a stopped process left "
                 "unfinished (its stored probes are read back, not run again)\n",
                 (long long)cap->search_id);
    return 0;
}

/* The prefill:decode split a target rate needs (a disaggregated scenario, no --compare),
 * printed. 0, or -1 with err. */
static int split_search(cap_state *s, const scn_scenario *scn, sim_err *err)
{
    int n, best;
    study_answer *ans = sim_xcalloc(STUDY_PD_MAX, sizeof *ans);
    int rc = study_capacity_pd_search(&s->cap, ans, STUDY_PD_MAX, &n, &best, err);
    if (rc == 0 && s->c.json)
        print_split_json(&s->cap, scn, ans, n, best);
    else if (rc == 0)
        print_split(s, scn, ans, n, best);
    free(ans);
    return rc;
}

/* Each choice's capacity (the scenario's own without --compare), printed. 0, or -1 with err. */
static int choice_search(cap_state *s, const scn_scenario *scn, sim_err *err)
{
    int nchoice = s->cap.ncmp ? s->cap.ncmp : 1, rc = 0;
    study_answer *ans = sim_xcalloc((size_t)nchoice, sizeof *ans);
    for (int k = 0; k < nchoice && rc == 0; k++)
        rc = study_capacity_find(&s->cap, k, &ans[k], err);
    if (rc == 0 && s->c.json)
        print_json(s, scn, ans, nchoice);
    else if (rc == 0)
        print_table(s, scn, ans, nchoice);
    free(ans);
    return rc;
}

int cmd_capacity(int argc, char **argv)
{
    cap_state *s = sim_xcalloc(1, sizeof *s);
    study_capacity *cap = &s->cap;
    cap_args ca = {cap, ""};
    int st = parse(argc, argv, s, &ca);
    if (st != CLI_GO) {
        study_capacity_free(cap);
        free(s);
        return st;
    }
    sim_err err = {{0}};
    scn_scenario scn;
    memset(&scn, 0, sizeof scn); /* freed below even when the search fails before loading it */
    int rc = begin(s, &ca, &scn, &err);
    if (rc == 0)
        rc = scn.engine.pd.enabled && cap->target > 0 && !cap->ncmp ? split_search(s, &scn, &err)
                                                                    : choice_search(s, &scn, &err);
    if (rc != 0)
        cli_fail(NULL, &err);
    store_close(cap->db);
    scn_free(&scn);
    study_capacity_free(cap);
    free(s);
    return rc != 0;
}
