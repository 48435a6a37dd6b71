/*
 * cmd_sweep.c: `llmsim sweep FILE --vary KEY=V1,V2,... | KEY=START:STOP:STEP [--vary ...]
 * [--reps R] [--jobs N] [--db PATH] [--set K=V]... [--seed S] [--store LEVEL]`.
 *
 * Runs the cross product of the varied keys, each point R times with seeds S, S+1, ... (the same
 * seeds at every point: common random numbers, so comparisons between points are paired), in
 * N worker processes. Each point is an ordinary run written with its sweep_points row in one
 * transaction; a sweep started again with the same arguments skips the points already stored.
 */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_common.h"
#include "store_sweep.h"

#define MAX_KEYS 8
#define MAX_VALUES 1024

typedef struct vary {
    char key[128];
    int n;
    char *val[MAX_VALUES];
} vary;

typedef struct sweep {
    const char *file, *db;
    const char *sets[CMD_MAX_SETS];
    int nsets;
    vary v[MAX_KEYS];
    int nv;
    int reps, jobs, seed_given;
    uint64_t seed;
    store_level level;
    int npoints;
    int64_t id;
    char spec[4096]; /* the varied keys and values, as stored */
} sweep;

static int usage(void)
{
    fprintf(
        stderr,
        "usage: llmsim sweep FILE --vary KEY=V1,V2,...|KEY=START:STOP:STEP [--vary ...]\n"
        "                    [--reps R] [--jobs N] [--db PATH] [--set KEY=VALUE]... [--seed S]\n"
        "                    [--store requests|iterations|summary]\n");
    return 2;
}

/* "a:b:s" -> a, a+s, ..., <= b; else a comma list. 0, or -1 with a message. */
static int parse_vary(const char *arg, vary *v)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof v->key || !eq[1]) {
        fprintf(stderr,
                "llmsim sweep: --vary expects KEY=V1,V2,... or KEY=START:STOP:STEP, got "
                "'%s'\n",
                arg);
        return -1;
    }
    memcpy(v->key, arg, (size_t)(eq - arg));
    v->key[eq - arg] = '\0';
    const char *vals = eq + 1;
    double a, b, step;
    char tail;
    if (sscanf(vals, "%lf:%lf:%lf%c", &a, &b, &step, &tail) == 3) {
        if (!(step > 0) || b < a) {
            fprintf(stderr, "llmsim sweep: --vary %s: need START <= STOP and STEP > 0\n", v->key);
            return -1;
        }
        for (int i = 0;; i++) {
            double x = a + i * step;
            if (x > b + step * 1e-9)
                break;
            if (v->n == MAX_VALUES) {
                fprintf(stderr, "llmsim sweep: --vary %s: more than %d values\n", v->key,
                        MAX_VALUES);
                return -1;
            }
            char buf[64];
            snprintf(buf, sizeof buf, "%.10g", x);
            v->val[v->n++] = sim_xstrdup(buf);
        }
        return 0;
    }
    char *copy = sim_xstrdup(vals), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (v->n == MAX_VALUES)
            break;
        v->val[v->n++] = sim_xstrdup(t);
    }
    free(copy);
    return v->n ? 0 : -1;
}

static void free_sweep(sweep *sw)
{
    for (int k = 0; k < sw->nv; k++)
        for (int i = 0; i < sw->v[k].n; i++)
            free(sw->v[k].val[i]);
}

static int parse(int argc, char **argv, sweep *sw)
{
    memset(sw, 0, sizeof *sw);
    sw->db = "llmsim.db";
    sw->reps = 1;
    sw->level = STORE_REQUESTS;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    sw->jobs = ncpu > 0 ? (int)ncpu : 1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            sw->db = v;
        else if ((v = cli_opt(argc, argv, &i, "--vary"))) {
            if (sw->nv == MAX_KEYS || parse_vary(v, &sw->v[sw->nv]) != 0)
                return 2;
            sw->nv++;
        } else if ((v = cli_opt(argc, argv, &i, "--set"))) {
            if (sw->nsets == CMD_MAX_SETS)
                return usage();
            sw->sets[sw->nsets++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--reps")))
            sw->reps = atoi(v);
        else if ((v = cli_opt(argc, argv, &i, "--jobs")))
            sw->jobs = atoi(v);
        else if ((v = cli_opt(argc, argv, &i, "--seed"))) {
            sw->seed = strtoull(v, NULL, 10);
            sw->seed_given = 1;
        } else if ((v = cli_opt(argc, argv, &i, "--store"))) {
            if (store_level_parse(v, &sw->level) != 0)
                return usage();
        } else if (argv[i][0] == '-')
            return usage();
        else if (!sw->file)
            sw->file = argv[i];
        else
            return usage();
    }
    if (!sw->file || sw->nv == 0)
        return usage();
    if (sw->reps < 1 || sw->reps > 1000 || sw->jobs < 1) {
        fprintf(stderr, "llmsim sweep: --reps must be 1..1000 and --jobs >= 1\n");
        return 2;
    }
    sw->npoints = 1;
    size_t off = 0;
    for (int k = 0; k < sw->nv; k++) {
        sw->npoints *= sw->v[k].n;
        off += (size_t)snprintf(sw->spec + off, off < sizeof sw->spec ? sizeof sw->spec - off : 0,
                                "%s%s=", k ? ";" : "", sw->v[k].key);
        for (int i = 0; i < sw->v[k].n; i++)
            off +=
                (size_t)snprintf(sw->spec + off, off < sizeof sw->spec ? sizeof sw->spec - off : 0,
                                 "%s%s", i ? "," : "", sw->v[k].val[i]);
    }
    if (off >= sizeof sw->spec) {
        fprintf(stderr, "llmsim sweep: the varied values are too long\n");
        return 2;
    }
    return 0;
}

/* Value index of key k at point p (key 0 varies slowest). */
static int digit(const sweep *sw, int p, int k)
{
    for (int j = sw->nv - 1; j > k; j--)
        p /= sw->v[j].n;
    return p % sw->v[k].n;
}

/* The overrides of point p: the --set ones, then KEY=VALUE per varied key. */
static int point_sets(const sweep *sw, int p, const char **out, char bufs[][256])
{
    int n = 0;
    for (int i = 0; i < sw->nsets; i++)
        out[n++] = sw->sets[i];
    for (int k = 0; k < sw->nv; k++) {
        snprintf(bufs[k], 256, "%s=%s", sw->v[k].key, sw->v[k].val[digit(sw, p, k)]);
        out[n++] = bufs[k];
    }
    return n;
}

static void point_params(const sweep *sw, int p, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < sw->nv && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", k ? "," : "", sw->v[k].key,
                                sw->v[k].val[digit(sw, p, k)]);
}

static int load_point(const sweep *sw, int p, scn_scenario *scn, sim_err *err)
{
    const char *sets[CMD_MAX_SETS + MAX_KEYS];
    char bufs[MAX_KEYS][256];
    int n = point_sets(sw, p, sets, bufs);
    return scn_load(sw->file, sets, n, cmd_resolver(), scn, err);
}

typedef struct hook_arg {
    const sweep *sw;
    int point, rep;
    uint64_t seed;
    const char *params;
    const cmd_result *res; /* filled by cmd_simulate before its commit hook runs */
} hook_arg;

static int add_point(void *arg, store *s, int64_t run_id, sim_err *err)
{
    hook_arg *h = arg;
    return store_sweep_add(s, h->sw->id, h->point, h->rep, h->seed, run_id, h->params,
                           h->res->saturated, err);
}

/* Simulates and stores task t = point * reps + rep. */
static int run_task(const sweep *sw, store *s, int t, sim_err *err)
{
    int p = t / sw->reps, rep = t % sw->reps;
    scn_scenario scn;
    cmd_cost cost = {.profile = NULL};
    cmd_result *res = sim_xcalloc(1, sizeof *res);
    char params[1024];
    int rc = -1;
    if (load_point(sw, p, &scn, err) != 0 || cmd_cost_new(&scn, s, &cost, err) != 0)
        goto out;
    point_params(sw, p, params, sizeof params);
    uint64_t seed = (sw->seed_given ? sw->seed : scn.seed) + (uint64_t)rep;
    hook_arg h = {sw, p, rep, seed, params, res};
    cmd_store_opts so = {
        .s = s, .level = sw->level, .buffered = 1, .hook = add_point, .hook_arg = &h};
    rc = cmd_simulate(&scn, seed, &cost, &so, res, err);
out:
    cmd_cost_free(&cost);
    scn_free(&scn);
    free(res);
    return rc;
}

/* ---- workers ---- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void progress(int done, int total, double t0, int final)
{
    static double last;
    double t = now_s();
    if (!final && t - last < 0.2)
        return;
    last = t;
    int width = 30, fill = total ? done * width / total : width;
    double el = t - t0, eta = done ? el / done * (total - done) : 0;
    fprintf(stderr, "\r[%.*s%*s] %d/%d points done, %d left, %.0fs elapsed, ~%.0fs left ", fill,
            "==============================", width - fill, "", done, total, total - done, el, eta);
    if (final)
        fputc('\n', stderr);
}

/* A worker: reads task numbers from `in`, writes back (task, status) pairs to `out`. */
static _Noreturn void worker(const sweep *sw, int in, int out)
{
    sim_err err = {{0}};
    store *s = store_open(sw->db, &err);
    int32_t t;
    while (read(in, &t, sizeof t) == (ssize_t)sizeof t) {
        int32_t msg[2] = {t, s ? 0 : 1};
        if (s && run_task(sw, s, t, &err) != 0) {
            msg[1] = 1;
            fprintf(stderr, "\nllmsim sweep: point %d rep %d: %s\n", t / sw->reps, t % sw->reps,
                    err.msg);
        } else if (!s)
            fprintf(stderr, "\nllmsim sweep: %s\n", err.msg);
        if (write(out, msg, sizeof msg) != (ssize_t)sizeof msg)
            break;
    }
    store_close(s);
    _exit(0);
}

/* Runs the tasks over sw->jobs processes; returns the number that failed. */
static int run_tasks(const sweep *sw, const int32_t *pending, int n)
{
    int jobs = sw->jobs < n ? sw->jobs : n;
    int task_pipe[2], done_pipe[2];
    if (pipe(task_pipe) || pipe(done_pipe)) {
        perror("llmsim sweep: pipe");
        return n;
    }
    fflush(NULL);
    pid_t *pids = sim_xcalloc((size_t)jobs, sizeof *pids);
    for (int j = 0; j < jobs; j++) {
        pids[j] = fork();
        if (pids[j] == 0) {
            close(task_pipe[1]);
            close(done_pipe[0]);
            worker(sw, task_pipe[0], done_pipe[1]);
        }
    }
    close(task_pipe[0]);
    close(done_pipe[1]);
    /* small records (<= PIPE_BUF) are written and read whole */
    for (int i = 0; i < n; i++)
        if (write(task_pipe[1], &pending[i], sizeof pending[i]) != (ssize_t)sizeof pending[i])
            break;
    close(task_pipe[1]);
    double t0 = now_s();
    int done = 0, failed = 0;
    int32_t msg[2];
    progress(0, n, t0, 0);
    while (done < n && read(done_pipe[0], msg, sizeof msg) == (ssize_t)sizeof msg) {
        done++;
        failed += msg[1] != 0;
        progress(done, n, t0, done == n);
    }
    close(done_pipe[0]);
    for (int j = 0; j < jobs; j++)
        waitpid(pids[j], NULL, 0);
    free(pids);
    return failed + (n - done);
}

/* ---- the summary ---- */

typedef struct cell {
    double sum, sum2;
    int n, sat;
    double *v; /* per rep, NAN when missing */
} cell;

typedef struct table {
    const sweep *sw;
    cell *c;
} table;

static void collect(void *arg, int point, int rep, double value, int saturated)
{
    table *t = arg;
    cell *c = &t->c[point];
    c->sum += value;
    c->sum2 += value * value;
    c->n++;
    c->sat |= saturated;
    c->v[rep] = value;
}

/* Mean and 95% half-width (Student t) of n values with these sums. */
static double ci95(double sum, double sum2, int n, double *mean)
{
    *mean = n ? sum / n : NAN;
    if (n < 2)
        return NAN;
    double var = (sum2 - sum * sum / n) / (n - 1);
    return gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(var > 0 ? var : 0) / sqrt((double)n);
}

static const char *const shown[] = {"output_throughput", "median_ttft_ms", "p99_ttft_ms",
                                    "median_tpot_ms",    "p99_tpot_ms",    "p99_itl_ms"};
#define NSHOWN (int)(sizeof shown / sizeof shown[0])

static int load_table(const sweep *sw, store *s, const char *metric, table *t, sim_err *err)
{
    t->sw = sw;
    t->c = sim_xcalloc((size_t)sw->npoints, sizeof *t->c);
    for (int p = 0; p < sw->npoints; p++) {
        t->c[p].v = sim_xmalloc((size_t)sw->reps * sizeof(double));
        for (int r = 0; r < sw->reps; r++)
            t->c[p].v[r] = NAN;
    }
    return store_sweep_values(s, sw->id, metric, collect, t, err);
}

static void free_table(const sweep *sw, table *t)
{
    for (int p = 0; t->c && p < sw->npoints; p++)
        free(t->c[p].v);
    free(t->c);
}

static void print_value(double mean, double hw)
{
    char buf[48];
    if (isnan(hw))
        snprintf(buf, sizeof buf, "%.2f", mean);
    else
        snprintf(buf, sizeof buf, "%.2f±%.2f", mean, hw);
    printf(" %18s", buf);
}

/* Paired differences against the first scheduler, point by point and seed by seed. */
static void print_paired(const sweep *sw, table *tabs)
{
    int k = -1;
    for (int j = 0; j < sw->nv; j++)
        if (strcmp(sw->v[j].key, "scheduler.name") == 0)
            k = j;
    if (k < 0 || sw->v[k].n < 2)
        return;
    printf("\npaired differences (same seeds) against scheduler %s, mean ± 95%% CI:\n",
           sw->v[k].val[0]);
    int stride = 1;
    for (int j = sw->nv - 1; j > k; j--)
        stride *= sw->v[j].n;
    for (int p = 0; p < sw->npoints; p++) {
        int d = digit(sw, p, k);
        if (d == 0)
            continue;
        int base = p - d * stride;
        char params[1024];
        point_params(sw, p, params, sizeof params);
        printf("%-48s", params);
        for (int m = 0; m < NSHOWN; m++) {
            double sum = 0, sum2 = 0;
            int n = 0;
            for (int r = 0; r < sw->reps; r++) {
                double a = tabs[m].c[p].v[r], b = tabs[m].c[base].v[r];
                if (isnan(a) || isnan(b))
                    continue;
                sum += a - b;
                sum2 += (a - b) * (a - b);
                n++;
            }
            double mean, hw = ci95(sum, sum2, n, &mean);
            print_value(mean, hw);
        }
        printf("\n");
    }
}

static int print_summary(const sweep *sw, store *s, sim_err *err)
{
    table tabs[NSHOWN];
    memset(tabs, 0, sizeof tabs);
    int rc = 0;
    for (int m = 0; m < NSHOWN && rc == 0; m++)
        rc = load_table(sw, s, shown[m], &tabs[m], err);
    if (rc == 0) {
        printf("sweep %lld: %d points x %d reps%s\n", (long long)sw->id, sw->npoints, sw->reps,
               sw->reps > 1 ? " (mean ± 95% CI)" : "");
        printf("%-48s", "point");
        for (int m = 0; m < NSHOWN; m++)
            printf(" %18s", shown[m]);
        printf("  saturated\n");
        for (int p = 0; p < sw->npoints; p++) {
            char params[1024];
            point_params(sw, p, params, sizeof params);
            printf("%-48s", params);
            for (int m = 0; m < NSHOWN; m++) {
                double mean, hw = ci95(tabs[m].c[p].sum, tabs[m].c[p].sum2, tabs[m].c[p].n, &mean);
                print_value(mean, hw);
            }
            printf("  %s\n", tabs[0].c[p].sat ? "yes" : "no");
        }
        print_paired(sw, tabs);
    }
    for (int m = 0; m < NSHOWN; m++)
        free_table(sw, &tabs[m]);
    return rc;
}

/* The sweep's identity: a digest of everything that determines its points. */
static void sweep_key(const sweep *sw, const char *text, uint64_t seed, char *buf, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    const char *parts[3] = {text, sw->spec, sw->file};
    for (int i = 0; i < 3; i++)
        for (const char *c = parts[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    snprintf(buf, len, "%016llx-r%d-s%llu-%s", (unsigned long long)h, sw->reps,
             (unsigned long long)seed, store_level_name(sw->level));
}

int cmd_sweep(int argc, char **argv)
{
    sweep sw;
    int st = parse(argc, argv, &sw);
    if (st) {
        free_sweep(&sw);
        return st;
    }
    sim_err err = {{0}};
    scn_scenario base;
    store *s = NULL;
    int32_t *pending = NULL;
    int rc = 1;
    /* every point must load before anything runs */
    if (scn_load(sw.file, sw.sets, sw.nsets, cmd_resolver(), &base, &err) != 0)
        goto fail;
    fputs(base.notes, stderr);
    for (int p = 0; p < sw.npoints; p++) {
        scn_scenario one;
        int bad = load_point(&sw, p, &one, &err);
        scn_free(&one);
        if (bad)
            goto fail;
    }
    uint64_t seed = sw.seed_given ? sw.seed : base.seed;
    if (!(s = store_open(sw.db, &err)))
        goto fail;
    char key[128];
    sweep_key(&sw, base.text, seed, key, sizeof key);
    if (store_sweep_open(s, key, sw.file, base.text, sw.spec, sw.reps, seed, &sw.id, &err) != 0)
        goto fail;
    pending = sim_xmalloc((size_t)sw.npoints * (size_t)sw.reps * sizeof *pending);
    int n = 0, stored = 0;
    for (int p = 0; p < sw.npoints; p++) {
        const char *keys[MAX_KEYS], *vals[MAX_KEYS];
        for (int k = 0; k < sw.nv; k++) {
            keys[k] = sw.v[k].key;
            vals[k] = sw.v[k].val[digit(&sw, p, k)];
        }
        if (store_sweep_set_params(s, sw.id, p, sw.nv, keys, vals, &err) != 0)
            goto fail;
        for (int r = 0; r < sw.reps; r++) {
            int has = store_sweep_has(s, sw.id, p, r, &err);
            if (has < 0)
                goto fail;
            if (has)
                stored++;
            else
                pending[n++] = p * sw.reps + r;
        }
    }
    fprintf(stderr, "llmsim sweep %lld: %d points x %d reps; %d stored, %d to run on %d jobs\n",
            (long long)sw.id, sw.npoints, sw.reps, stored, n, sw.jobs < n ? sw.jobs : n);
    double t0 = now_s();
    int failed = n ? run_tasks(&sw, pending, n) : 0;
    if (n)
        fprintf(stderr, "llmsim sweep %lld: %d runs in %.2f s\n", (long long)sw.id, n - failed,
                now_s() - t0);
    if (print_summary(&sw, s, &err) != 0)
        goto fail;
    rc = failed ? 1 : 0;
    if (failed)
        fprintf(stderr, "llmsim sweep: %d runs failed; run the same command again to retry them\n",
                failed);
    goto out;
fail:
    fprintf(stderr, "llmsim: %s\n", err.msg);
out:
    free(pending);
    store_close(s);
    scn_free(&base);
    free_sweep(&sw);
    return rc;
}
