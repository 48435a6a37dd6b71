/*
 * calibrate.c: measured and imported profiles, and the replay of a stored run's batch shapes
 * against one (see study_calibrate.h).
 */
#include <gsl/gsl_version.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "roofline.h"
#include "stats.h"
#include "store_profile.h"
#include "study_calibrate.h"
#include "vidur.h"

/* The profile's GPU: --gpu (a catalog name), else the catalog's match of the CUDA device
 * measured ("cuda" without one), or "cpu". */
static int describe_gpu(const study_calibration *c, cal_profile *p, sim_err *err)
{
    const char *gpu = c->gpu;
    eng_gpu g;
    char names[512];
    if (gpu && cal_gpu_find(gpu, &g) != 0)
        return sim_errf(err, "unknown GPU '%s'; valid: %s", gpu,
                        cal_gpu_names(names, sizeof names));
    if (!gpu)
        gpu = c->be == KERN_BACKEND_CUDA ? cal_gpu_from_device(p->device) : "cpu";
    snprintf(p->gpu, sizeof p->gpu, "%s", gpu ? gpu : "cuda");
    return 0;
}

/* Fills the profile's metadata for a measurement by driver b. */
static int describe(const study_calibration *c, const eng_model *m, kern_bench *b, cal_profile *p,
                    sim_err *err)
{
    char msg[256];
    if (kern_bench_describe(b, p->device, sizeof p->device, msg, sizeof msg) != 0)
        return sim_errf(err, "describing the %s backend: %s", c->backend_name, msg);
    snprintf(p->kind, sizeof p->kind, "measured");
    snprintf(p->backend, sizeof p->backend, "%s", c->backend_name);
    snprintf(p->model, sizeof p->model, "%s", m->name);
    snprintf(p->dtype, sizeof p->dtype, "%s", c->be == KERN_BACKEND_CUDA ? "bf16" : "fp32");
    snprintf(p->versions, sizeof p->versions, "llmsim %s, GSL %s", study_version(), GSL_VERSION);
    if (c->graph_calls > 0) /* how each point was timed is part of what the device measured */
        snprintf(p->device + strlen(p->device), sizeof p->device - strlen(p->device),
                 "; timed as CUDA-graph replays of %d calls", c->graph_calls);
    if (describe_gpu(c, p, err))
        return -1;
    snprintf(p->source, sizeof p->source, "%s", c->command ? c->command : "");
    p->dims = *m;
    p->tp = 1;
    return 0;
}

/* Fails when a profile named name exists and may not be replaced. */
static int check_name(store *s, const char *name, int replace, sim_err *err)
{
    int exists = store_profile_exists(s, name, err);
    if (exists < 0)
        return -1;
    if (exists && !replace)
        return sim_errf(err,
                        "a profile named '%s' already exists (choose another --out, or pass "
                        "--replace)",
                        name);
    return 0;
}

/* The profile's name: --out, else backend-model-grid. */
static void profile_name(const study_calibration *c, const eng_model *m, char *name, size_t len)
{
    if (c->out)
        snprintf(name, len, "%s", c->out);
    else
        snprintf(name, len, "%s-%.40s-%s", c->backend_name, m->name, cal_grid_name(c->grid));
}

/* How often each shape is timed: five calls at least (a shared CPU's medians need more than
 * the driver's three), or exactly --runs (as long as the machine takes, no timing rule). */
static kern_bench_cfg timing_of(const study_calibration *c)
{
    kern_bench_cfg cfg;
    kern_bench_cfg_default(&cfg);
    cfg.min_runs = 5;
    if (c->runs > 0)
        cfg.min_runs = cfg.max_runs = c->runs;
    cfg.graph_calls = c->graph_calls;
    return cfg;
}

int study_calibrate(const study_calibration *c, store *s, cal_profile **out, sim_err *err)
{
    eng_model m;
    kern_bench *b = NULL;
    kern_shape *shapes = NULL;
    char name[64], msg[256];
    cal_profile *p = NULL;
    *out = NULL;
    if (study_model(c->model, &m, err))
        return -1;
    profile_name(c, &m, name, sizeof name);
    if (check_name(s, name, c->replace, err)) /* before spending minutes measuring */
        return -1;
    if (kern_bench_new(c->be, &b, msg, sizeof msg) != 0)
        return sim_errf(err, "backend %s: %s", c->backend_name, msg);
    p = cal_profile_new(name);
    int rc = -1;
    if (describe(c, &m, b, p, err))
        goto out;
    int n = cal_grid_shapes(&m, c->grid, c->be, &shapes);
    if (c->progress)
        fprintf(c->progress, "calibrate: %s, %d shapes of %s (%s grid) on %s\n", name, n, m.name,
                cal_grid_name(c->grid), p->device);
    kern_bench_cfg cfg = timing_of(c);
    if (cal_measure_grid(b, &m, shapes, n, &cfg, p, c->progress, err) ||
        cal_profile_fit(p, c->seed, err) || store_profile_save(s, p, c->replace, err))
        goto out;
    *out = p;
    p = NULL;
    rc = 0;
out:
    cal_profile_free(p);
    free(shapes);
    kern_bench_free(b);
    return rc;
}

/* ---- import ---- */

/* The llmsim model the import is for: --as, else the catalog's match of the Vidur name. */
static int import_model(const study_import *im, eng_model *m, sim_err *err)
{
    const char *name = im->as ? im->as : cal_vidur_model(im->model);
    if (!name)
        return sim_errf(err,
                        "model %s has no catalog match; pass --as NAME (a catalog model or a "
                        "config.json path) to say which model these tables measure",
                        im->model);
    return study_model(name, m, err);
}

static void import_meta(const study_import *im, const eng_model *m, const char *dir, cal_profile *p)
{
    const char *gpu = cal_vidur_gpu(im->gpu);
    snprintf(p->kind, sizeof p->kind, "imported");
    snprintf(p->backend, sizeof p->backend, "vidur");
    snprintf(p->model, sizeof p->model, "%s", m->name);
    snprintf(p->gpu, sizeof p->gpu, "%s", gpu ? gpu : im->gpu);
    snprintf(p->device, sizeof p->device, "Vidur profiling tables, GPU %s, model %s", im->gpu,
             im->model);
    snprintf(p->dtype, sizeof p->dtype, "fp16");
    snprintf(p->versions, sizeof p->versions, "llmsim %s, GSL %s", study_version(), GSL_VERSION);
    /* the source is a record, not an input: a very long path or command is cut short */
    snprintf(p->source, sizeof p->source, "%.250s; %.250s", dir, im->command ? im->command : "");
}

/* The imported profile's name: --out, else vidur-GPU-MODEL[-tpN]. */
static void import_name(const study_import *im, const eng_model *m, char *name, size_t len)
{
    if (im->out)
        snprintf(name, len, "%s", im->out);
    else if (im->tp > 1)
        snprintf(name, len, "vidur-%.12s-%.30s-tp%d", im->gpu, m->name, im->tp);
    else
        snprintf(name, len, "vidur-%.12s-%.40s", im->gpu, m->name);
}

int study_import_vidur(const study_import *im, const char *db, cal_profile **out, char *note,
                       size_t notelen, sim_err *err)
{
    eng_model m;
    char dir[1024], name[64];
    *out = NULL;
    if (import_model(im, &m, err) ||
        cal_vidur_find(im->dir, im->gpu, im->model, dir, sizeof dir, err))
        return -1;
    import_name(im, &m, name, sizeof name);
    cal_profile *p = cal_profile_new(name);
    import_meta(im, &m, dir, p);
    store *s = NULL;
    /* the database is opened once the tables are read and fitted: a bad table writes nothing */
    if (cal_vidur_read(dir, im->attention, &m, im->tp, p, note, notelen, err) ||
        cal_profile_fit(p, im->seed, err) || !(s = store_open(db, err)) ||
        store_profile_save(s, p, im->replace, err)) {
        store_close(s);
        cal_profile_free(p);
        return -1;
    }
    store_close(s);
    *out = p;
    return 0;
}

/* ---- replay ---- */

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

/* The model to replay: r->model, else the run's model by name, else (a config.json model, stored
 * by its directory name) the sizes the profile recorded when it names the same model. */
static int run_model(const study_replay_spec *r, const store_replay_run *info, const cal_profile *p,
                     eng_model *m, sim_err *err)
{
    if (r->model)
        return study_model(r->model, m, err);
    if (study_model(info->model, m, err) == 0)
        return 0;
    if (strcmp(p->model, info->model) == 0) {
        *m = p->dims;
        return 0;
    }
    return sim_err_prefix(err, "run %lld's model (pass --model NAME or a config.json path)",
                          (long long)r->run);
}

/* Measures every shape and compares it with the predictor. */
static int replay_shapes(const study_replay_spec *r, kern_bench *b, const eng_model *m,
                         const eng_predictor *pred, const eng_shape *shapes, study_replay_out *out,
                         sim_err *err)
{
    kern_bench_cfg cfg;
    kern_bench_cfg_default(&cfg);
    cfg.max_runs = 10;
    sim_samples ape;
    sim_samples_init(&ape);
    int rc = 0;
    for (int i = 0; i < out->n && rc == 0; i++) {
        double meas;
        rc = cal_measure_pass(b, m, &shapes[i], &cfg, &meas, err);
        if (rc)
            break;
        double pr = (double)pred->ops->iteration_ns(pred->st, &shapes[i]);
        sim_samples_add(&ape, fabs(pr - meas) / meas * 100);
        if (r->row)
            r->row(r->row_arg, out, i, &shapes[i], meas, pr);
    }
    out->med_ape = sim_samples_percentile(&ape, 50);
    out->p95_ape = sim_samples_percentile(&ape, 95);
    sim_samples_free(&ape);
    return rc;
}

/* The profile the batches are replayed against into out->profile: --profile, else the one the
 * run used; -1 with err when the run's was not a stored profile. */
static int replay_profile(const study_replay_spec *r, const store_replay_run *info,
                          study_replay_out *out, sim_err *err)
{
    if (r->profile) {
        snprintf(out->profile, sizeof out->profile, "%s", r->profile);
        return 0;
    }
    if (profile_of_label(info->profile, out->profile, sizeof out->profile) == 0)
        return 0;
    return sim_errf(err,
                    "run %lld used '%s', not a stored profile; pass --profile NAME to replay its "
                    "batches against one",
                    (long long)r->run, info->profile);
}

int study_replay(const study_replay_spec *r, store *s, study_replay_out *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    cal_profile *p = NULL;
    kern_bench *b = NULL;
    eng_predictor pred = {0};
    eng_shape *shapes = sim_xcalloc((size_t)r->max_iters, sizeof *shapes);
    store_replay_run info;
    eng_model m;
    char msg[256];
    int rc = -1;
    if (store_profile_replay_shapes(s, r->run, r->max_iters, &info, shapes, NULL, &out->n, err))
        goto out;
    out->iterations = info.iterations;
    if (replay_profile(r, &info, out, err))
        goto out;
    if (!(p = store_profile_load(s, out->profile, err)) || run_model(r, &info, p, &m, err) ||
        cal_profile_predictor_new(p, &m, ENG_BF16, p->tp, NULL, &pred, err))
        goto out;
    snprintf(out->model, sizeof out->model, "%s", m.name);
    if (kern_bench_new(r->be, &b, msg, sizeof msg) != 0) {
        sim_errf(err, "backend %s: %s", r->backend_name, msg);
        goto out;
    }
    rc = replay_shapes(r, b, &m, &pred, shapes, out, err);
out:
    cal_predictor_free(&pred);
    kern_bench_free(b);
    cal_profile_free(p);
    free(shapes);
    return rc;
}
