/*
 * verror.c: the validated error that travels with a prediction. `llmsim validate SET --errors
 * FILE` writes, per validated group (engine, GPU generation, dense or MoE, aggregated or
 * disaggregated), the median, 90th
 * percentile and signed median of each metric's error; the project ships the table of its
 * development set as validation/errors.csv, and `run`, `capacity` and `report` state the figure
 * of the group nearest a scenario: the same engine, GPU generation, kind of model and serving,
 * else the same but the other kind of model (said so), else "not validated".
 *
 * The table is CSV with a header: set,engine,generation,kind,serving,metric,n,median_abs,
 * p90_abs,signed_median (errors as fractions, predicted / measured - 1).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "validate_int.h"

#define HEADER "set,engine,generation,kind,serving,metric,n,median_abs,p90_abs,signed_median"

static const char *generation_name(cal_arch a)
{
    switch (a) {
    case CAL_ARCH_AMPERE:
        return "ampere";
    case CAL_ARCH_ADA:
        return "ada";
    case CAL_ARCH_HOPPER:
        return "hopper";
    case CAL_ARCH_BLACKWELL:
        return "blackwell";
    case CAL_ARCH_BLACKWELL_RTX:
        return "blackwell-rtx";
    case CAL_ARCH_CDNA:
        return "cdna";
    case CAL_ARCH_UNKNOWN:
        return "unknown";
    default:
        SIM_CHECK(NULL, !"an architecture without a name");
        return "unknown";
    }
}

/* The engine a scenario runs: its preset's (the cost model's kernels follow it), else the
 * engine its scheduler policy follows, else the policy's own name. */
static const char *engine_of(const scn_scenario *scn)
{
    const eng_config *c = &scn->engine;
    const char *policy = c->pd.enabled ? c->pd.pool[ENG_POOL_DECODE].sched.name : c->sched.name;
    if (scn->cost.engine[0])
        return scn->cost.engine;
    if (strcmp(policy, "vllm-v0") == 0)
        return "vllm";
    return policy;
}

void study_vkey_of(const scn_scenario *scn, study_vkey *k)
{
    const eng_config *c = &scn->engine;
    const char *gpu = c->pd.enabled ? c->pd.pool[ENG_POOL_DECODE].gpu.name : c->gpu.name;
    snprintf(k->engine, sizeof k->engine, "%s", engine_of(scn));
    snprintf(k->generation, sizeof k->generation, "%s", generation_name(cal_gpu_arch(gpu)));
    snprintf(k->kind, sizeof k->kind, "%s", c->model.moe_layers > 0 ? "moe" : "dense");
    snprintf(k->serving, sizeof k->serving, "%s", c->pd.enabled ? "pd" : "agg");
}

/* The header, then a row per validated group's metric of the n statistics st of set v. */
static void write_rows(FILE *f, const study_vset *v, const study_vstat *st, int n)
{
    fprintf(f, "%s\n", HEADER);
    for (int i = 0; i < n; i++) {
        char e[32], g[32], k[16], sv[16];
        if (sscanf(st[i].group, "%31s %31s %15s %15s", e, g, k, sv) != 4)
            continue;
        fprintf(f, "%s,%s,%s,%s,%s,%s,%d,%.4f,%.4f,%.4f\n", v->name, e, g, k, sv,
                v->metric[st[i].metric].label, st[i].n, st[i].median_abs, st[i].p90_abs,
                st[i].signed_median);
    }
}

int study_verrors_write(const study_vset *v, const char *path, sim_err *err)
{
    study_vstat *st = NULL;
    int n = study_vset_stats_by(v, STUDY_VBY_VALIDATED, &st);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(st);
        return sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
    }
    write_rows(f, v, st, n);
    free(st);
    if (fclose(f) != 0)
        return sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
    return 0;
}

const char *study_verrors_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/errors.csv", study_validation_dir());
    return buf;
}

/* The line's comma-separated fields into f (at most 10, in place): their count. */
static int split_row(char *line, char *f[10])
{
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, ",\n", &save); t && n < 10; t = strtok_r(NULL, ",\n", &save))
        f[n++] = t;
    return n;
}

/* A row's ten fields into e: set, group, metric, count and the three errors. */
static void row_of(char *const f[10], study_verror *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->set, sizeof e->set, "%s", f[0]);
    snprintf(e->key.engine, sizeof e->key.engine, "%s", f[1]);
    snprintf(e->key.generation, sizeof e->key.generation, "%s", f[2]);
    snprintf(e->key.kind, sizeof e->key.kind, "%s", f[3]);
    snprintf(e->key.serving, sizeof e->key.serving, "%s", f[4]);
    snprintf(e->metric, sizeof e->metric, "%s", f[5]);
    e->n = strtol(f[6], NULL, 10);
    e->median_abs = strtod(f[7], NULL);
    e->p90_abs = strtod(f[8], NULL);
    e->signed_median = strtod(f[9], NULL);
}

/* One line of the table into e; 0, or -1 when it is not a row of the table's form. */
static int parse_line(char *line, study_verror *e)
{
    char *f[10];
    if (split_row(line, f) != 10)
        return -1;
    row_of(f, e);
    return e->n > 0 ? 0 : -1;
}

/* Whether group g has k's engine, GPU generation and serving (of any kind of model). */
static int near_group(const study_vkey *g, const study_vkey *k)
{
    return !strcmp(g->engine, k->engine) && !strcmp(g->generation, k->generation) &&
           !strcmp(g->serving, k->serving);
}

/* Adds row e (of k's kind of model when same) to the n rows out keeps (at most max): the
 * first row of k's kind replaces the other kind's, which then stop being kept. The new n. */
static int keep_nearest(study_verror *out, int n, int max, const study_verror *e, int same,
                        int *got_exact)
{
    if (same && !*got_exact)
        n = 0;
    *got_exact |= same;
    if ((same || !*got_exact) && n < max)
        out[n++] = *e;
    return n;
}

int study_verrors_nearest(const char *path, const study_vkey *k, study_verror *out, int max,
                          int *exact, sim_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
    char line[512];
    int n = 0, lineno = 0, got_exact = 0;
    while (fgets(line, sizeof line, f)) {
        study_verror e;
        if (++lineno == 1 && strncmp(line, HEADER, strlen(HEADER)) == 0)
            continue;
        if (parse_line(line, &e) != 0) {
            fclose(f);
            return sim_errf(err, "%s:%d: expected %s", path, lineno, HEADER);
        }
        if (near_group(&e.key, k))
            n = keep_nearest(out, n, max, &e, !strcmp(e.key.kind, k->kind), &got_exact);
    }
    fclose(f);
    *exact = got_exact;
    return n;
}

/* "not validated: no validated ... rows on ... GPUs", with why the table could not be read
 * (NULL: it was). */
static const char *not_validated(const study_vkey *k, const char *why, char *buf, size_t len)
{
    snprintf(buf, len, "not validated: no validated %s%s rows on %s GPUs%s%s", k->engine,
             strcmp(k->serving, "pd") == 0 ? " disaggregated" : "", k->generation, why ? " (" : "",
             why ? why : "");
    if (why && strlen(buf) + 2 < len)
        strcat(buf, ")");
    return buf;
}

/* The n metrics' validated errors of one group (e[0]'s), said to be of the other kind of model
 * unless exact. */
static const char *validated(const study_verror *e, int n, int exact, char *buf, size_t len)
{
    size_t off = 0;
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off,
                                "%s%s validated to a median %.0f%% (p90 %.0f%%, signed %+.0f%%)",
                                i ? "; " : "", e[i].metric, 100 * e[i].median_abs,
                                100 * e[i].p90_abs, 100 * e[i].signed_median);
    if (off < len)
        snprintf(buf + off, len - off, " on %lld %s %s %s%s rows of %s%s", (long long)e[0].n,
                 e[0].key.engine, e[0].key.generation, e[0].key.kind,
                 strcmp(e[0].key.serving, "pd") == 0 ? " disaggregated" : "", e[0].set,
                 exact ? "" : " (the nearest group: not this kind of model)");
    return buf;
}

const char *study_verrors_describe(const scn_scenario *scn, char *buf, size_t len)
{
    char path[1024];
    study_vkey k;
    study_verror e[4];
    int exact = 0;
    sim_err err = {{0}};
    study_vkey_of(scn, &k);
    int n = study_verrors_nearest(study_verrors_path(path, sizeof path), &k, e, 4, &exact, &err);
    if (n <= 0)
        return not_validated(&k, n < 0 ? err.msg : NULL, buf, len);
    return validated(e, n, exact, buf, len);
}
