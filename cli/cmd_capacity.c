/*
 * cmd_capacity.c: `llmsim capacity FILE --slo ttft_p99=1000ms,tpot_p99=50ms [--target-rate R]
 * [--compare KEY=V1,V2,...]`: the highest rate per replica within the SLOs and the replicas a
 * target rate needs (study/capacity.c), one row per choice.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "study_capacity.h"

static const cli_command capacity_cmd = {
    .name = "capacity",
    .args = "FILE --slo METRIC_PCT=VALUE,...",
    .summary =
        "Finds, for the scenario in FILE (or each --compare choice), the highest arrival rate one "
        "replica sustains within the SLOs, and with --target-rate the replicas (and GPUs) that "
        "rate "
        "needs, checked by simulating the whole cluster behind the scenario's router.",
    .details =
        "Search: doubling rates from 0.25 req/s until one fails, then bisection to --precision; a "
        "saturated run fails whatever its percentiles. SLO metrics: ttft, tpot, itl, e2el (or "
        "e2e) "
        "with p50, p90, p95 or p99; values in ms or s. Every probe is an ordinary run, stored "
        "with "
        "the search (tables capacity_searches, capacity_probes, capacity_results). A scenario "
        "with prefill and decode pools counts one copy of its pools as a replica; --compare "
        "pd=1:1,1:2,2:3 tries prefill:decode replica ratios, and --target-rate without "
        "--compare searches the split with the fewest GPUs (for 1, 2, ... prefill replicas, the "
        "fewest decode replicas that meet the SLOs at that rate), reporting GPUs per pool.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_SET | CLI_SEED | CLI_STORE | CLI_JSON | CLI_QUIET,
    .def_level = "summary"};

typedef struct cap_args {
    study_capacity *cap;
    char slo_text[1024];
} cap_args;

static int add_slo(void *arg, const char *v)
{
    cap_args *a = arg;
    sim_err err = {{0}};
    if (study_slo_parse(v, a->cap->slo, STUDY_MAX_SLO, &a->cap->nslo, &err) != 0) {
        fprintf(stderr, "llmsim capacity: %s\n", err.msg);
        return -1;
    }
    size_t n = strlen(a->slo_text);
    snprintf(a->slo_text + n, sizeof a->slo_text - n, "%s%s", n ? "," : "", v);
    return 0;
}

static int add_compare(void *arg, const char *v)
{
    sim_err err = {{0}};
    if (study_capacity_compare(arg, v, &err) == 0)
        return 0;
    fprintf(stderr, "llmsim capacity: %s\n", err.msg);
    return -1;
}

static void on_probe(void *arg, const char *choice, const char *phase, double rate, int replicas,
                     const study_trial *t)
{
    const cli_common *c = arg;
    const char *verdict = t->ok ? "meets the SLOs" : (t->saturated ? "saturated" : "misses");
    if (strcmp(phase, "search") == 0)
        cli_note(c, "  %s%s%.4g req/s: %s\n", choice ? choice : "", choice ? ": " : "", rate,
                 verdict);
    else
        cli_note(c, "  %s%s%d replicas at %.4g req/s: %s\n", choice ? choice : "",
                 choice ? ": " : "", replicas, rate, t->ok ? "meets the SLOs" : "misses");
}

static const study_trial *shown_trial(const study_capacity *cap, const study_answer *a)
{
    return cap->target > 0 && a->replicas ? &a->at_target : &a->at_rate;
}

static void print_head(const study_capacity *cap, const scn_scenario *scn)
{
    char where[200];
    const eng_config *e = &scn->engine;
    printf("capacity: %s | %s on %s | scheduler %s | SLO", scn->name, e->model.name,
           cli_deployment(scn, where, sizeof where),
           e->pd.enabled ? e->pd.pool[ENG_POOL_DECODE].sched.name : e->sched.name);
    for (int i = 0; i < cap->nslo; i++)
        printf(" %s<=%gms", cap->slo[i].label, cap->slo[i].limit_ms);
    if (cap->target > 0)
        printf(" | target %g req/s", cap->target);
    printf("\n");
    const char *x = cli_extrapolated(scn);
    if (x)
        printf("note: %s\n", x);
    cli_print_validated(stdout, scn);
}

/* A disaggregated answer's GPUs per pool for n copies of its pools. */
static void pool_gpus(const study_answer *a, int n, int *p, int *d)
{
    *p = n * a->prefill * a->prefill_gpus;
    *d = n * a->decode * a->decode_gpus;
}

static void print_table(const study_capacity *cap, const scn_scenario *scn, const study_answer *ans,
                        int nchoice)
{
    int pd = scn->engine.pd.enabled;
    print_head(cap, scn);
    printf("%-16s %14s", cap->ncmp ? cap->cmp_key : "choice", pd ? "rate/copy" : "rate/replica");
    if (cap->target > 0)
        printf(" %9s %6s", pd ? "copies" : "replicas", "GPUs");
    if (pd)
        printf(" %10s %10s", "prefill", "decode");
    for (int i = 0; i < cap->nslo; i++)
        printf(" %16s", cap->slo[i].label);
    printf("\n");
    for (int k = 0; k < nchoice; k++) {
        const study_answer *a = &ans[k];
        printf("%-16s %14.3f", cap->ncmp ? cap->cmp_val[k] : "-", a->rate);
        if (cap->target > 0 && a->replicas)
            printf(" %9d %6d", a->replicas, a->replicas * a->tp);
        else if (cap->target > 0)
            printf(" %9s %6s", "n/a", "n/a");
        if (pd) {
            int gp, gd;
            pool_gpus(a, cap->target > 0 && a->replicas ? a->replicas : 1, &gp, &gd);
            printf(" %5dx%-4d %5dx%-4d", gp / a->prefill_gpus, a->prefill_gpus, gd / a->decode_gpus,
                   a->decode_gpus);
        }
        for (int i = 0; i < cap->nslo; i++)
            printf(" %16.2f", shown_trial(cap, a)->value[i]);
        printf("\n");
    }
    printf("(SLO columns: the percentiles achieved %s)\n",
           cap->target > 0 ? "by the cluster at the target rate" : "at the highest rate found");
    if (pd)
        printf("(a copy is the scenario's pools, or the ratio's replicas; prefill and decode: "
               "replicas x GPUs each%s)\n",
               cap->target > 0 ? ", for the copies the target rate needs" : " in one copy");
}

/* The prefill:decode search's splits, the cheapest marked. */
static void print_split(const study_capacity *cap, const scn_scenario *scn, const study_answer *ans,
                        int n, int best)
{
    print_head(cap, scn);
    printf("%-14s %12s %12s %6s", "prefill:decode", "prefill GPUs", "decode GPUs", "GPUs");
    for (int i = 0; i < cap->nslo; i++)
        printf(" %16s", cap->slo[i].label);
    printf("\n");
    for (int k = 0; k < n; k++) {
        const study_answer *a = &ans[k];
        int gp, gd;
        char ratio[32];
        pool_gpus(a, 1, &gp, &gd);
        snprintf(ratio, sizeof ratio, "%d:%d", a->prefill, a->decode);
        printf("%-14s %12d %12d %6d", ratio, gp, gd, gp + gd);
        for (int i = 0; i < cap->nslo; i++)
            printf(" %16.2f", a->at_target.value[i]);
        printf("%s\n", k == best ? "  <- fewest GPUs" : "");
    }
    if (best < 0)
        printf("(no split of up to %d replicas per pool met the SLOs at %g req/s)\n", STUDY_PD_MAX,
               cap->target);
    printf("(for each prefill count, the fewest decode replicas meeting the SLOs at the target "
           "rate; SLO columns: the percentiles achieved)\n");
}

static void print_split_json(const study_capacity *cap, const scn_scenario *scn,
                             const study_answer *ans, int n, int best)
{
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    if (cap->search_id)
        sim_jsonw_int(&j, "search_id", cap->search_id);
    sim_jsonw_str(&j, "scenario", scn->name);
    sim_jsonw_str(&j, "model", scn->engine.model.name);
    sim_jsonw_num(&j, "target_rate", cap->target);
    sim_jsonw_open(&j, "slo_ms", '{');
    for (int i = 0; i < cap->nslo; i++)
        sim_jsonw_num(&j, cap->slo[i].label, cap->slo[i].limit_ms);
    sim_jsonw_close(&j, '}');
    sim_jsonw_open(&j, "splits", '[');
    for (int k = 0; k < n; k++) {
        const study_answer *a = &ans[k];
        int gp, gd;
        pool_gpus(a, 1, &gp, &gd);
        sim_jsonw_open(&j, NULL, '{');
        sim_jsonw_int(&j, "prefill_replicas", a->prefill);
        sim_jsonw_int(&j, "decode_replicas", a->decode);
        sim_jsonw_int(&j, "prefill_gpus", gp);
        sim_jsonw_int(&j, "decode_gpus", gd);
        sim_jsonw_int(&j, "gpus", gp + gd);
        sim_jsonw_bool(&j, "fewest_gpus", k == best);
        sim_jsonw_open(&j, "at_target", '{');
        for (int i = 0; i < cap->nslo; i++)
            sim_jsonw_num(&j, cap->slo[i].label, a->at_target.value[i]);
        sim_jsonw_close(&j, '}');
        sim_jsonw_close(&j, '}');
    }
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

static void print_json(const study_capacity *cap, const scn_scenario *scn, const study_answer *ans,
                       int nchoice)
{
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    if (cap->search_id)
        sim_jsonw_int(&j, "search_id", cap->search_id);
    sim_jsonw_str(&j, "scenario", scn->name);
    sim_jsonw_str(&j, "model", scn->engine.model.name);
    sim_jsonw_str(&j, "gpu", scn->engine.gpu.name);
    sim_jsonw_str(&j, "scheduler", scn->engine.sched.name);
    const char *x = cli_extrapolated(scn);
    if (x)
        sim_jsonw_str(&j, "extrapolated", x);
    sim_jsonw_open(&j, "slo_ms", '{');
    for (int i = 0; i < cap->nslo; i++)
        sim_jsonw_num(&j, cap->slo[i].label, cap->slo[i].limit_ms);
    sim_jsonw_close(&j, '}');
    if (cap->target > 0)
        sim_jsonw_num(&j, "target_rate", cap->target);
    if (cap->ncmp)
        sim_jsonw_str(&j, "compare", cap->cmp_key);
    sim_jsonw_open(&j, "choices", '[');
    for (int k = 0; k < nchoice; k++) {
        const study_answer *a = &ans[k];
        sim_jsonw_open(&j, NULL, '{');
        if (cap->ncmp)
            sim_jsonw_str(&j, "choice", cap->cmp_val[k]);
        sim_jsonw_num(&j, "rate_per_replica", a->rate);
        if (cap->target > 0) {
            sim_jsonw_int(&j, "replicas", a->replicas);
            sim_jsonw_int(&j, "gpus", (int64_t)a->replicas * a->tp);
        }
        if (a->prefill) {
            int gp, gd;
            pool_gpus(a, cap->target > 0 && a->replicas ? a->replicas : 1, &gp, &gd);
            sim_jsonw_int(&j, "prefill_gpus", gp);
            sim_jsonw_int(&j, "decode_gpus", gd);
        }
        sim_jsonw_open(&j, cap->target > 0 && a->replicas ? "at_target" : "at_rate", '{');
        for (int i = 0; i < cap->nslo; i++)
            sim_jsonw_num(&j, cap->slo[i].label, shown_trial(cap, a)->value[i]);
        sim_jsonw_close(&j, '}');
        sim_jsonw_close(&j, '}');
    }
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

/* The search's options into cap (and ca's SLO text, c); CLI_GO, or the exit status. */
static int parse(int argc, char **argv, study_capacity *cap, cap_args *ca, cli_common *c)
{
    cap->precision = 0.03;
    const cli_option opts[] = {
        {"--slo", "LIST", CLI_CALL, NULL,
         "service-level objectives, e.g. ttft_p99=1000ms,tpot_p99=50ms (repeatable)", NULL, 0, 0,
         add_slo, ca},
        {"--target-rate", "R", CLI_DOUBLE, &cap->target,
         "requests/s the cluster must sustain; 0: the per-replica rate only", "0", 0, 1e9, NULL,
         NULL},
        {"--compare", "KEY=V1,V2", CLI_CALL, NULL,
         "search each value of a scenario key (scheduler is short for scheduler.name)", NULL, 0, 0,
         add_compare, cap},
        {"--precision", "F", CLI_DOUBLE, &cap->precision,
         "relative width at which the bisection stops", "0.03", 1e-6, 0.999999, NULL, NULL},
        CLI_END};
    const char *file;
    int npos, st = cli_parse(&capacity_cmd, opts, c, argc, argv, &file, &npos);
    if (st == CLI_GO && cap->nslo == 0) {
        fprintf(stderr, "llmsim capacity: give the SLOs with --slo, e.g. ttft_p99=1000ms\n");
        st = 2;
    }
    cap->file = file;
    cap->sets = c->sets;
    cap->nsets = c->nsets;
    cap->seed = c->seed;
    cap->seed_given = c->seed_given;
    cap->level = c->level;
    cap->probe = on_probe;
    cap->probe_arg = c;
    return st;
}

int cmd_capacity(int argc, char **argv)
{
    study_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap_args ca = {&cap, ""};
    cli_common c;
    int st = parse(argc, argv, &cap, &ca, &c);
    if (st != CLI_GO) {
        study_capacity_free(&cap);
        return st;
    }
    sim_err err = {{0}};
    scn_scenario scn;
    int nchoice = cap.ncmp ? cap.ncmp : 1, rc = 1;
    study_answer *ans = sim_xcalloc((size_t)nchoice, sizeof *ans);
    if (study_capacity_load(&cap, &scn, &err) != 0)
        goto fail;
    cli_note(&c, "%s", scn.notes);
    if (!(cap.db = store_open(c.db, &err)) ||
        study_capacity_begin(&cap, &scn, ca.slo_text, &err) != 0)
        goto fail;
    if (cap.resumed)
        cli_note(&c,
                 "llmsim capacity: taking up search %lld, which a stopped process left "
                 "unfinished (its stored probes are read back, not run again)\n",
                 (long long)cap.search_id);
    if (scn.engine.pd.enabled && cap.target > 0 && !cap.ncmp) {
        int n, best;
        free(ans);
        ans = sim_xcalloc(STUDY_PD_MAX, sizeof *ans);
        if (study_capacity_pd_search(&cap, ans, STUDY_PD_MAX, &n, &best, &err) != 0)
            goto fail;
        if (c.json)
            print_split_json(&cap, &scn, ans, n, best);
        else
            print_split(&cap, &scn, ans, n, best);
        rc = 0;
        goto out;
    }
    for (int k = 0; k < nchoice; k++)
        if (study_capacity_find(&cap, k, &ans[k], &err) != 0)
            goto fail;
    if (c.json)
        print_json(&cap, &scn, ans, nchoice);
    else
        print_table(&cap, &scn, ans, nchoice);
    rc = 0;
    goto out;
fail:
    cli_fail(NULL, &err);
out:
    free(ans);
    store_close(cap.db);
    scn_free(&scn);
    study_capacity_free(&cap);
    return rc;
}
