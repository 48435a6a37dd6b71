/*
 * cmd_capacity.c: `llmsim capacity FILE --slo ttft_p99=1000ms,tpot_p99=50ms [--target-rate R]
 * [--compare KEY=V1,V2,...] [--set K=V]... [--seed S] [--precision F] [--db PATH]`.
 *
 * For each choice, finds the highest arrival rate one replica sustains within the SLOs (runs
 * at doubling rates until one fails, then bisection; a saturated run fails whatever its
 * percentiles), then the replicas a target rate needs, checked by simulating the cluster at the
 * target rate (adding replicas until it meets the SLOs), and prints one row per choice.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_common.h"

#define MAX_SLO 8
#define MAX_CHOICES 16

typedef struct slo {
    char metric[96]; /* e.g. p99_ttft_ms */
    char label[96];  /* e.g. ttft_p99 */
    double limit_ms;
} slo;

typedef struct cap_opts {
    const char *file, *db;
    const char *sets[CMD_MAX_SETS];
    int nsets;
    slo slos[MAX_SLO];
    int nslo;
    double target, precision;
    char cmp_key[128];
    char *cmp_val[MAX_CHOICES];
    int ncmp, seed_given;
    uint64_t seed;
} cap_opts;

static int usage(void)
{
    fprintf(
        stderr,
        "usage: llmsim capacity FILE --slo ttft_p99=1000ms,tpot_p99=50ms [--target-rate R]\n"
        "                       [--compare KEY=V1,V2,...] [--set KEY=VALUE]... [--seed S]\n"
        "                       [--precision F] [--db PATH]\n"
        "SLO metrics: ttft, tpot, itl, e2el (or e2e) with p50, p90, p95 or p99; values in ms or "
        "s\n");
    return 2;
}

/* "ttft_p99=1000ms" -> metric p99_ttft_ms, limit 1000. */
static int parse_slo(const char *item, slo *out)
{
    char name[64];
    double v;
    char unit[8] = "ms";
    if (sscanf(item, "%63[^=]=%lf%7s", name, &v, unit) < 2 || !(v > 0))
        return -1;
    char *us = strrchr(name, '_');
    if (!us)
        return -1;
    *us = '\0';
    const char *what = name, *pct = us + 1;
    if (strcmp(what, "e2e") == 0)
        what = "e2el";
    if (strcmp(what, "ttft") && strcmp(what, "tpot") && strcmp(what, "itl") && strcmp(what, "e2el"))
        return -1;
    if (strcmp(pct, "p50") && strcmp(pct, "p90") && strcmp(pct, "p95") && strcmp(pct, "p99"))
        return -1;
    if (strcmp(unit, "ms") == 0)
        out->limit_ms = v;
    else if (strcmp(unit, "s") == 0)
        out->limit_ms = v * 1000;
    else
        return -1;
    snprintf(out->metric, sizeof out->metric, "%s_%s_ms", strcmp(pct, "p50") ? pct : "median",
             what);
    snprintf(out->label, sizeof out->label, "%s_%s", what, pct);
    return 0;
}

static int parse(int argc, char **argv, cap_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = "llmsim.db";
    o->precision = 0.03;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            o->db = v;
        else if ((v = cli_opt(argc, argv, &i, "--slo"))) {
            char *copy = sim_xstrdup(v), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->nslo == MAX_SLO || parse_slo(t, &o->slos[o->nslo]) != 0) {
                    fprintf(stderr, "llmsim capacity: bad SLO '%s'\n", t);
                    free(copy);
                    return usage();
                }
                o->nslo++;
            }
            free(copy);
        } else if ((v = cli_opt(argc, argv, &i, "--target-rate")))
            o->target = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--precision")))
            o->precision = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--seed"))) {
            o->seed = strtoull(v, NULL, 10);
            o->seed_given = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--set"))) {
            if (o->nsets == CMD_MAX_SETS - 4)
                return usage();
            o->sets[o->nsets++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--compare"))) {
            const char *eq = strchr(v, '=');
            if (!eq || (size_t)(eq - v) >= sizeof o->cmp_key)
                return usage();
            memcpy(o->cmp_key, v, (size_t)(eq - v));
            o->cmp_key[eq - v] = '\0';
            if (strcmp(o->cmp_key, "scheduler") == 0)
                snprintf(o->cmp_key, sizeof o->cmp_key, "scheduler.name");
            char *copy = sim_xstrdup(eq + 1), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t && o->ncmp < MAX_CHOICES;
                 t = strtok_r(NULL, ",", &save))
                o->cmp_val[o->ncmp++] = sim_xstrdup(t);
            free(copy);
        } else if (argv[i][0] == '-')
            return usage();
        else if (!o->file)
            o->file = argv[i];
        else
            return usage();
    }
    if (!o->file || o->nslo == 0 || o->target < 0 || !(o->precision > 0 && o->precision < 1))
        return usage();
    return 0;
}

typedef struct trial {
    int ok;
    double value[MAX_SLO];
    int saturated;
} trial;

/* Runs the choice at `rate` requests/s over `replicas` replicas. 0, or -1 with err. */
static int try_rate(const cap_opts *o, const char *choice, double rate, int replicas, store *db,
                    trial *t, sim_err *err)
{
    const char *sets[CMD_MAX_SETS];
    char b_rate[64], b_rep[64], b_choice[256], b_n[64];
    int n = 0;
    for (int i = 0; i < o->nsets; i++)
        sets[n++] = o->sets[i];
    if (choice) {
        snprintf(b_choice, sizeof b_choice, "%s=%s", o->cmp_key, choice);
        sets[n++] = b_choice;
    }
    scn_scenario scn;
    /* a first load finds the request count to scale with the replicas */
    if (scn_load(o->file, sets, n, cmd_resolver(), &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    int64_t nreq = scn.workload.num_requests;
    int has_trace = scn.workload.trace.present;
    scn_free(&scn);
    snprintf(b_rate, sizeof b_rate, "%s=%.6g",
             has_trace ? "workload.trace.rate" : "workload.arrival.rate", rate);
    snprintf(b_rep, sizeof b_rep, "replicas=%d", replicas);
    sets[n++] = b_rate;
    sets[n++] = b_rep;
    if (nreq > 0 && replicas > 1) {
        snprintf(b_n, sizeof b_n, "workload.num_requests=%lld", (long long)nreq * replicas);
        sets[n++] = b_n;
    }
    if (scn_load(o->file, sets, n, cmd_resolver(), &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    cmd_cost cost = {.profile = NULL};
    cmd_result *res = sim_xcalloc(1, sizeof *res);
    int rc = -1;
    if (cmd_cost_new(&scn, db, &cost, err) == 0 &&
        cmd_simulate(&scn, o->seed_given ? o->seed : scn.seed, &cost, NULL, res, err) == 0) {
        t->saturated = res->saturated;
        t->ok = !res->saturated;
        for (int i = 0; i < o->nslo; i++) {
            t->value[i] = cmd_metric(res, o->slos[i].metric);
            if (!(t->value[i] <= o->slos[i].limit_ms))
                t->ok = 0;
        }
        rc = 0;
    }
    cmd_cost_free(&cost);
    scn_free(&scn);
    free(res);
    return rc;
}

typedef struct answer {
    double rate; /* per replica */
    trial at_rate;
    int replicas, gpus, tp;
    trial at_target;
} answer;

static int search(const cap_opts *o, const char *choice, store *db, answer *a, sim_err *err)
{
    memset(a, 0, sizeof *a);
    double lo = 0, hi = 0.25;
    trial t, best = {0};
    /* doubling until a rate fails */
    for (;;) {
        if (try_rate(o, choice, hi, 1, db, &t, err) != 0)
            return -1;
        fprintf(stderr, "  %s%s%.4g req/s: %s\n", choice ? choice : "", choice ? ": " : "", hi,
                t.ok ? "meets the SLOs" : (t.saturated ? "saturated" : "misses"));
        if (!t.ok)
            break;
        lo = hi;
        best = t;
        if (hi > 1e5)
            break;
        hi *= 2;
    }
    while (hi - lo > o->precision * hi && lo < 1e5) {
        double mid = (lo + hi) / 2;
        if (try_rate(o, choice, mid, 1, db, &t, err) != 0)
            return -1;
        fprintf(stderr, "  %s%s%.4g req/s: %s\n", choice ? choice : "", choice ? ": " : "", mid,
                t.ok ? "meets the SLOs" : (t.saturated ? "saturated" : "misses"));
        if (t.ok) {
            lo = mid;
            best = t;
        } else
            hi = mid;
    }
    a->rate = lo;
    a->at_rate = best;
    return 0;
}

static int size_cluster(const cap_opts *o, const char *choice, store *db, answer *a, sim_err *err)
{
    if (a->rate <= 0)
        return 0;
    int n = (int)ceil(o->target / a->rate - 1e-9);
    if (n < 1)
        n = 1;
    for (int tries = 0; tries < 64; tries++, n++) {
        if (try_rate(o, choice, o->target, n, db, &a->at_target, err) != 0)
            return -1;
        fprintf(stderr, "  %s%s%d replicas at %.4g req/s: %s\n", choice ? choice : "",
                choice ? ": " : "", n, o->target, a->at_target.ok ? "meets the SLOs" : "misses");
        if (a->at_target.ok) {
            a->replicas = n;
            return 0;
        }
    }
    return 0;
}

static void print_row(const cap_opts *o, const char *choice, const answer *a)
{
    printf("%-16s %14.3f", choice ? choice : "-", a->rate);
    if (o->target > 0) {
        if (a->replicas)
            printf(" %9d %6d", a->replicas, a->replicas * a->tp);
        else
            printf(" %9s %6s", "n/a", "n/a");
    }
    const trial *t = o->target > 0 && a->replicas ? &a->at_target : &a->at_rate;
    for (int i = 0; i < o->nslo; i++)
        printf(" %16.2f", t->value[i]);
    printf("\n");
}

int cmd_capacity(int argc, char **argv)
{
    cap_opts o;
    int st = parse(argc, argv, &o);
    if (st)
        return st;
    sim_err err = {{0}};
    scn_scenario scn;
    store *db = NULL;
    answer *ans = sim_xcalloc(MAX_CHOICES, sizeof *ans);
    int rc = 1, nchoice = o.ncmp ? o.ncmp : 1;
    if (scn_load(o.file, o.sets, o.nsets, cmd_resolver(), &scn, &err) != 0)
        goto fail;
    fputs(scn.notes, stderr);
    if (scn.profile[0] && !(db = store_open(o.db, &err)))
        goto fail;
    for (int c = 0; c < nchoice; c++) {
        const char *choice = o.ncmp ? o.cmp_val[c] : NULL;
        if (search(&o, choice, db, &ans[c], &err) != 0)
            goto fail;
        ans[c].tp = scn.engine.tensor_parallel;
        if (choice && strcmp(o.cmp_key, "tensor_parallel") == 0)
            ans[c].tp = atoi(choice);
        if (o.target > 0 && size_cluster(&o, choice, db, &ans[c], &err) != 0)
            goto fail;
    }
    printf("capacity: %s | %s on %s | scheduler %s | SLO", scn.name, scn.engine.model.name,
           scn.engine.gpu.name, scn.engine.sched.name);
    for (int i = 0; i < o.nslo; i++)
        printf(" %s<=%gms", o.slos[i].label, o.slos[i].limit_ms);
    if (o.target > 0)
        printf(" | target %g req/s", o.target);
    printf("\n%-16s %14s", o.ncmp ? o.cmp_key : "choice", "rate/replica");
    if (o.target > 0)
        printf(" %9s %6s", "replicas", "GPUs");
    for (int i = 0; i < o.nslo; i++)
        printf(" %16s", o.slos[i].label);
    printf("\n");
    for (int c = 0; c < nchoice; c++)
        print_row(&o, o.ncmp ? o.cmp_val[c] : NULL, &ans[c]);
    printf("(SLO columns: the percentiles achieved %s)\n",
           o.target > 0 ? "by the cluster at the target rate" : "at the highest rate found");
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim: %s\n", err.msg);
out:
    for (int c = 0; c < o.ncmp; c++)
        free(o.cmp_val[c]);
    free(ans);
    store_close(db);
    scn_free(&scn);
    return rc;
}
