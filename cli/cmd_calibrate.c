/*
 * cmd_calibrate.c: `llmsim calibrate`: measure one layer's operators over a grid on a benchmark
 * backend, fit them, report the held-out error and store the profile; and `llmsim calibrate
 * validate`: replay the batch shapes of a stored run on the backend and compare the measured
 * pass times with the profile's predictions.
 */
#include <gsl/gsl_version.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "cli.h"
#include "cmd_common.h"
#include "measure.h"
#include "profile.h"
#include "roofline.h"
#include "stats.h"
#include "store_profile.h"

static int usage(void)
{
    fprintf(stderr, "usage: llmsim calibrate --backend cpu|cuda --model NAME [--grid quick|full]\n"
                    "                        [--out NAME] [--db PATH] [--seed N] [--gpu NAME] "
                    "[--replace]\n"
                    "       llmsim calibrate validate --run ID --backend cpu|cuda [--max-iters N]\n"
                    "                        [--profile NAME] [--model NAME] [--db PATH]\n");
    return 2;
}

static int parse_backend(const char *v, kern_backend *be)
{
    if (v && strcmp(v, "cpu") == 0)
        *be = KERN_BACKEND_CPU;
    else if (v && strcmp(v, "cuda") == 0)
        *be = KERN_BACKEND_CUDA;
    else
        return -1;
    return 0;
}

static int parse_count(const char *v, long long lo, long long *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < lo)
        return -1;
    *out = x;
    return 0;
}

static int resolve_model(const char *name, eng_model *m, sim_err *err)
{
    char why[sizeof err->msg];
    if (cmd_resolver()->model(NULL, name, NULL, m, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- calibrate ---- */

typedef struct cal_opts {
    const char *model, *out, *db, *gpu, *backend_name;
    kern_backend be;
    cal_grid_kind grid;
    long long seed;
    int replace;
} cal_opts;

static int parse_calibrate(int argc, char **argv, cal_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = "llmsim.db";
    o->seed = 1;
    o->be = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        long long x;
        if ((v = cli_opt(argc, argv, &i, "--backend"))) {
            if (parse_backend(v, &o->be))
                return fprintf(stderr, "llmsim calibrate: --backend is cpu or cuda\n"), 2;
            o->backend_name = v;
        } else if ((v = cli_opt(argc, argv, &i, "--model")))
            o->model = v;
        else if ((v = cli_opt(argc, argv, &i, "--grid"))) {
            if (cal_grid_parse(v, &o->grid))
                return fprintf(stderr, "llmsim calibrate: --grid is quick or full\n"), 2;
        } else if ((v = cli_opt(argc, argv, &i, "--out")))
            o->out = v;
        else if ((v = cli_opt(argc, argv, &i, "--db")))
            o->db = v;
        else if ((v = cli_opt(argc, argv, &i, "--gpu")))
            o->gpu = v;
        else if ((v = cli_opt(argc, argv, &i, "--seed"))) {
            if (parse_count(v, 0, &x))
                return fprintf(stderr, "llmsim calibrate: --seed expects an integer >= 0\n"), 2;
            o->seed = x;
        } else if (strcmp(argv[i], "--replace") == 0)
            o->replace = 1;
        else
            return usage();
    }
    if ((int)o->be < 0 || !o->model)
        return usage();
    return 0;
}

/* Fills the profile's metadata for a measurement by driver b. */
static int describe(const cal_opts *o, const eng_model *m, kern_bench *b, int argc, char **argv,
                    cal_profile *p, sim_err *err)
{
    char msg[256];
    if (kern_bench_describe(b, p->device, sizeof p->device, msg, sizeof msg) != 0)
        return sim_errf(err, "describing the %s backend: %s", o->backend_name, msg);
    snprintf(p->kind, sizeof p->kind, "measured");
    snprintf(p->backend, sizeof p->backend, "%s", o->backend_name);
    snprintf(p->model, sizeof p->model, "%s", m->name);
    snprintf(p->dtype, sizeof p->dtype, "%s", o->be == KERN_BACKEND_CUDA ? "bf16" : "fp32");
    snprintf(p->versions, sizeof p->versions, "llmsim %s, GSL %s", LLMSIM_VERSION, GSL_VERSION);
    const char *gpu = o->gpu;
    eng_gpu g;
    if (gpu && cal_gpu_find(gpu, &g) != 0) {
        char names[512];
        return sim_errf(err, "unknown GPU '%s'; valid: %s", gpu,
                        cal_gpu_names(names, sizeof names));
    }
    if (!gpu)
        gpu = o->be == KERN_BACKEND_CUDA ? cal_gpu_from_device(p->device) : "cpu";
    snprintf(p->gpu, sizeof p->gpu, "%s", gpu ? gpu : "cuda");
    size_t used = 0;
    p->source[0] = '\0';
    for (int i = 0; i < argc && used + 1 < sizeof p->source; i++) {
        int w = snprintf(p->source + used, sizeof p->source - used, "%s%s", i ? " " : "llmsim ",
                         argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    p->dims = *m;
    p->tp = 1;
    return 0;
}

static int calibrate(int argc, char **argv)
{
    cal_opts o;
    int st = parse_calibrate(argc, argv, &o);
    if (st)
        return st;
    sim_err err = {{0}};
    eng_model m;
    kern_bench *b = NULL;
    kern_shape *shapes = NULL;
    store *s = NULL;
    char name[64], msg[256];
    cal_profile *p = NULL;
    int rc = 1;
    double t0 = now_s();
    if (resolve_model(o.model, &m, &err))
        goto fail;
    snprintf(name, sizeof name, "%s", o.out ? o.out : "");
    if (!o.out)
        snprintf(name, sizeof name, "%s-%.40s-%s", o.backend_name, m.name,
                 o.grid == CAL_GRID_FULL ? "full" : "quick");
    if (!(s = store_open(o.db, &err)))
        goto fail;
    int exists = store_profile_exists(s, name, &err);
    if (exists < 0)
        goto fail;
    if (exists && !o.replace) { /* refuse before spending minutes measuring */
        sim_errf(&err,
                 "%s: a profile named '%s' already exists (choose another --out, or pass "
                 "--replace)",
                 o.db, name);
        goto fail;
    }
    if (kern_bench_new(o.be, &b, msg, sizeof msg) != 0) {
        sim_errf(&err, "backend %s: %s", o.backend_name, msg);
        goto fail;
    }
    p = cal_profile_new(name);
    if (describe(&o, &m, b, argc, argv, p, &err))
        goto fail;
    int n = cal_grid_shapes(&m, o.grid, o.be, &shapes);
    fprintf(stderr, "calibrate: %s, %d shapes of %s (%s grid) on %s\n", name, n, m.name,
            o.grid == CAL_GRID_FULL ? "full" : "quick", p->device);
    /* five timed calls at least: a shared CPU's medians need more than the driver's three */
    kern_bench_cfg cfg;
    kern_bench_cfg_default(&cfg);
    cfg.min_runs = 5;
    if (cal_measure_grid(b, &m, shapes, n, &cfg, p, stderr, &err) ||
        cal_profile_fit(p, (uint64_t)o.seed, &err))
        goto fail;
    cal_profile_report(p, stdout);
    if (store_profile_save(s, p, o.replace, &err))
        goto fail;
    printf("profile %s saved to %s: %d points, %s, wall time %.1f s\n", name, o.db, p->npts,
           p->device, now_s() - t0);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim calibrate: %s\n", err.msg);
out:
    cal_profile_free(p);
    free(shapes);
    kern_bench_free(b);
    store_close(s);
    return rc;
}

/* ---- calibrate validate ---- */

typedef struct val_opts {
    const char *db, *profile, *model, *backend_name;
    kern_backend be;
    long long run, max_iters;
} val_opts;

static int parse_validate(int argc, char **argv, val_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = "llmsim.db";
    o->max_iters = 50;
    o->run = -1;
    o->be = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--run"))) {
            if (parse_count(v, 1, &o->run))
                return fprintf(stderr, "llmsim calibrate validate: --run expects a run id\n"), 2;
        } else if ((v = cli_opt(argc, argv, &i, "--max-iters"))) {
            if (parse_count(v, 1, &o->max_iters) || o->max_iters > 100000)
                return fprintf(stderr, "llmsim calibrate validate: --max-iters is 1..100000\n"), 2;
        } else if ((v = cli_opt(argc, argv, &i, "--backend"))) {
            if (parse_backend(v, &o->be))
                return fprintf(stderr, "llmsim calibrate validate: --backend is cpu or cuda\n"), 2;
            o->backend_name = v;
        } else if ((v = cli_opt(argc, argv, &i, "--profile")))
            o->profile = v;
        else if ((v = cli_opt(argc, argv, &i, "--model")))
            o->model = v;
        else if ((v = cli_opt(argc, argv, &i, "--db")))
            o->db = v;
        else
            return usage();
    }
    if (o->run < 1 || (int)o->be < 0)
        return usage();
    return 0;
}

/* The profile a run used, from its label "profile NAME (...)"; 0, or -1 when it used none. */
static int profile_of_label(const char *label, char *out, size_t len)
{
    if (strncmp(label, "profile ", 8) != 0)
        return -1;
    const char *b = label + 8, *e = strchr(b, ' ');
    size_t n = e ? (size_t)(e - b) : strlen(b);
    if (n == 0 || n >= len)
        return -1;
    memcpy(out, b, n);
    out[n] = '\0';
    return 0;
}

/* The model to replay: --model, else the run's model by name, else (a config.json model, stored
 * by its directory name) the sizes the profile recorded when it names the same model. */
static int run_model(const val_opts *o, const store_replay_run *info, const cal_profile *p,
                     eng_model *m, sim_err *err)
{
    if (o->model)
        return resolve_model(o->model, m, err);
    if (resolve_model(info->model, m, err) == 0)
        return 0;
    if (strcmp(p->model, info->model) == 0) {
        *m = p->dims;
        return 0;
    }
    return sim_err_prefix(err, "run %lld's model (pass --model NAME or a config.json path)",
                          o->run);
}

static void print_replay_row(int i, const eng_shape *sh, double meas, double pred)
{
    printf("%5d %6d %7lld %6d %10lld %10.3f %10.3f %+8.1f%%\n", i, sh->num_seqs,
           (long long)sh->prefill_tokens, sh->decode_seqs, (long long)sh->decode_ctx, meas / 1e6,
           pred / 1e6, (pred - meas) / meas * 100);
}

static int validate(int argc, char **argv)
{
    val_opts o;
    int st = parse_validate(argc, argv, &o);
    if (st)
        return st;
    sim_err err = {{0}};
    store *s = NULL;
    cal_profile *p = NULL;
    kern_bench *b = NULL;
    eng_predictor pred = {0};
    eng_shape *shapes = sim_xcalloc((size_t)o.max_iters, sizeof *shapes);
    store_replay_run info;
    eng_model m;
    char pname[128], msg[256];
    int n = 0, rc = 1;
    sim_samples ape;
    sim_samples_init(&ape);
    if (!(s = store_open_readonly(o.db, &err)) ||
        store_profile_replay_shapes(s, o.run, (int)o.max_iters, &info, shapes, NULL, &n, &err))
        goto fail;
    if (o.profile)
        snprintf(pname, sizeof pname, "%s", o.profile);
    else if (profile_of_label(info.profile, pname, sizeof pname) != 0) {
        sim_errf(&err,
                 "run %lld used '%s', not a stored profile; pass --profile NAME to replay its "
                 "batches against one",
                 o.run, info.profile);
        goto fail;
    }
    if (!(p = store_profile_load(s, pname, &err)) || run_model(&o, &info, p, &m, &err))
        goto fail;
    if (cal_profile_predictor_new(p, &m, ENG_BF16, p->tp, NULL, &pred, &err))
        goto fail;
    if (kern_bench_new(o.be, &b, msg, sizeof msg) != 0) {
        sim_errf(&err, "backend %s: %s", o.backend_name, msg);
        goto fail;
    }
    kern_bench_cfg cfg;
    kern_bench_cfg_default(&cfg);
    cfg.max_runs = 10;
    printf("replaying %d of run %lld's %lld iterations on %s against profile %s (model %s)\n", n,
           o.run, (long long)info.iterations, o.backend_name, pname, m.name);
    printf("%5s %6s %7s %6s %10s %10s %10s %9s\n", "#", "seqs", "prefill", "decode", "dec.ctx",
           "meas.ms", "pred.ms", "error");
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        double meas;
        if (cal_measure_pass(b, &m, &shapes[i], &cfg, &meas, &err))
            goto fail;
        double pr = (double)pred.ops->iteration_ns(pred.st, &shapes[i]);
        sim_samples_add(&ape, fabs(pr - meas) / meas * 100);
        if (i < 10 || i == n - 1)
            print_replay_row(i, &shapes[i], meas, pr);
        fprintf(stderr, "\rvalidate: %d/%d iterations replayed (%.0f s)", i + 1, n, now_s() - t0);
    }
    fprintf(stderr, "\n");
    printf("iteration time error over %d iterations: median %.2f%%, p95 %.2f%% "
           "(absolute percentage error of predicted vs measured)\n",
           n, sim_samples_percentile(&ape, 50), sim_samples_percentile(&ape, 95));
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim calibrate validate: %s\n", err.msg);
out:
    sim_samples_free(&ape);
    cal_predictor_free(&pred);
    kern_bench_free(b);
    cal_profile_free(p);
    store_close(s);
    free(shapes);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "validate") == 0)
        return validate(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage();
        return 0;
    }
    return calibrate(argc, argv);
}
