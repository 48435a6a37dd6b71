/*
 * plot.c: plt_plot: checks the options, names the files, opens the database (read-only, through
 * the store) and drives one kind's writer, then gnuplot.
 *
 * Files: the image FILE.EXT, its data FILE.dat and its script FILE.gp (FILE = the image path
 * without its extension), all in the image's directory. A failed plot removes the data and
 * script files it had started, so only a complete pair is ever left behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "metrics.h"
#include "store_query.h"

/* A kind's writer: the data file and the body of the gnuplot script of plot o. */
typedef int (*kind_writer)(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                           sim_err *err);

/* The front is drawn from the points file `llmsim recommend` wrote, not from the database. */
static int front_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err)
{
    (void)s;
    return plt_front_write(o, dat, gp, res, err);
}

/* Each kind, in plt_kind's order: its name, what it draws, and its writer. */
static const struct {
    const char *name, *draws;
    kind_writer write;
} kinds[] = {
    {"curve", "latency against throughput or offered rate, from a sweep", plt_curve_write},
    {"cdf", "latency CDFs of runs", plt_cdf_write},
    {"timeline", "batch occupancy and KV blocks per iteration of runs", plt_timeline_write},
    {"gantt", "each request's spans and the iterations of one run", plt_gantt_write},
    {"probes", "a capacity search's probes: latency against rate, per choice", plt_probes_write},
    {"validation", "predicted against measured, from a validation", plt_validation_write},
    {"fleet", "an autoscaled fleet's load, replicas and p99 TTFT over time", plt_fleet_write},
    {"front", "a recommendation's Pareto front, from the points file it wrote", front_write},
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

int plt_kind_parse(const char *s, plt_kind *out)
{
    for (int i = 0; i < NKINDS; i++)
        if (strcmp(s, kinds[i].name) == 0) {
            *out = (plt_kind)i;
            return 0;
        }
    return -1;
}

const char *plt_kind_name(plt_kind k)
{
    return (unsigned)k < (unsigned)NKINDS ? kinds[k].name : "?";
}

const char *plt_kind_draws(plt_kind k)
{
    return (unsigned)k < (unsigned)NKINDS ? kinds[k].draws : "?";
}

const char *plt_default_name(const plt_opts *o, char *buf, size_t len)
{
    size_t n = 0;
    if (o->kind == PLT_CURVE)
        n = (size_t)snprintf(buf, len, "curve-sweep%lld", (long long)o->sweep);
    else if (o->kind == PLT_PROBES)
        n = (size_t)snprintf(buf, len, "probes-capacity%lld", (long long)o->sweep);
    else if (o->kind == PLT_VALIDATION)
        n = (size_t)snprintf(buf, len, "validation%lld", (long long)o->validation);
    else if (o->kind == PLT_FRONT)
        n = (size_t)snprintf(buf, len, "front");
    else {
        n = (size_t)snprintf(buf, len, "%s-run", plt_kind_name(o->kind));
        for (int i = 0; i < o->nruns && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "-" : "", (long long)o->runs[i]);
    }
    if (n < len)
        snprintf(buf + n, len - n, ".png");
    return buf;
}

/* res->data and res->script from res->image: the extension replaced by .dat and .gp. */
static int name_files(plt_result *res, sim_err *err)
{
    const char *slash = strrchr(res->image, '/'), *dot = strrchr(res->image, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - res->image) : strlen(res->image);
    if (stem + 5 >= PLT_PATH_MAX)
        return sim_errf(err, "%s: path too long", res->image);
    snprintf(res->data, sizeof res->data, "%.*s.dat", (int)stem, res->image);
    snprintf(res->script, sizeof res->script, "%.*s.gp", (int)stem, res->image);
    return 0;
}

/* Whether the options name the sweep, capacity search or runs that plot kind o->kind draws. */
static int check_source(const plt_opts *o, sim_err *err)
{
    if (o->kind == PLT_CURVE && o->sweep <= 0)
        return sim_errf(err, "curve plots a sweep: give --sweep ID");
    if (o->kind == PLT_PROBES && o->sweep <= 0)
        return sim_errf(err, "probes plots a capacity search: give --capacity ID");
    if (o->kind != PLT_CURVE && o->kind != PLT_PROBES && o->nruns < 1)
        return sim_errf(err, "%s plots runs: give --run ID[,ID...]", plt_kind_name(o->kind));
    if (o->kind == PLT_GANTT && o->nruns != 1)
        return sim_errf(err, "gantt draws one run; give a single --run ID");
    return 0;
}

/* Whether pct is a percentile the metrics rows hold (it also names a row in the probes' SQL). */
static int pct_known(const char *pct)
{
    static const char *const pcts[] = {"p50", "p90", "p95", "p99", "mean"};
    for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
        if (strcmp(pct, pcts[i]) == 0)
            return 1;
    return 0;
}

static int check_opts(const plt_opts *o, sim_err *err)
{
    if ((unsigned)o->kind >= (unsigned)NKINDS)
        return sim_errf(err, "unknown plot kind %d", (int)o->kind);
    /* a validation and a front take no other option */
    if (o->kind == PLT_VALIDATION)
        return o->validation > 0 ? 0
                                 : sim_errf(err, "validation plots a stored validation: give "
                                                 "--validation ID");
    if (o->kind == PLT_FRONT)
        return o->data ? 0 : sim_errf(err, "front plots a recommendation: give its points file");
    if (check_source(o, err) != 0)
        return -1;
    if (o->pct && !pct_known(o->pct))
        return sim_errf(err, "unknown percentile '%s'; valid: p50, p90, p95, p99, mean", o->pct);
    char names[120];
    if (o->metric && !plt_metric_column(o->metric))
        return sim_errf(err, "unknown metric '%s'; valid: %s", o->metric,
                        eng_latency_names(ENG_LAT_SLO, names, sizeof names));
    if (plt_check_path(o->db, "--db", err) != 0 ||
        (o->out && plt_check_path(o->out, "-o", err) != 0))
        return -1;
    if (o->width < 0 || o->height < 0 || o->width > 20000 || o->height > 20000)
        return sim_errf(err, "image size %dx%d is out of range (1..20000)", o->width, o->height);
    return 0;
}

const char *plt_metric_column(const char *metric)
{
    const eng_latency *l = eng_latency_find(metric, ENG_LAT_SLO);
    return l ? l->stem : NULL;
}

const char *plt_metric_label(const char *metric)
{
    const eng_latency *l = eng_latency_find(metric, ENG_LAT_SLO);
    return l ? l->label : metric;
}

int plt_run_sched(store *s, int64_t run, char *sched, size_t len, int *replicas, sim_err *err)
{
    store_run_meta m;
    if (store_run_get(s, run, &m, err) != 0)
        return -1;
    snprintf(sched, len, "%s", m.scheduler);
    if (replicas)
        *replicas = m.replicas > 0 ? m.replicas : 1;
    return 0;
}

int64_t plt_request_rows(store *s, int64_t run, sim_err *err)
{
    int64_t nrq = store_run_count_requests(s, run, err);
    if (nrq == 0)
        return sim_errf(err,
                        "%s: run %lld has no request rows (stored with --store summary or "
                        "iterations); run it again with --store requests",
                        store_path(s), (long long)run);
    return nrq;
}

int plt_no_iterations(store *s, int64_t run, sim_err *err)
{
    return sim_errf(err,
                    "%s: run %lld has no iteration rows (stored with --store summary); run it "
                    "again with --store iterations or requests",
                    store_path(s), (long long)run);
}

/* ---- legends for several runs ---- */

#define MAX_SETS 32

/* What a legend may name of one run. */
typedef struct run_facts {
    store_run_meta m;
    char sets[MAX_SETS][2][128]; /* the scenario's "# --set KEY=VALUE" lines: key, value */
    int nsets;
} run_facts;

/* Keys a field of the run row already shows. */
static int shown_by_field(const char *key)
{
    static const char *const k[] = {"scheduler.name",
                                    "model",
                                    "gpu",
                                    "dtype",
                                    "replicas",
                                    "tensor_parallel",
                                    "workload.arrival.rate",
                                    "workload.num_requests",
                                    "seed",
                                    "profile"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(key, k[i]) == 0)
            return 1;
    return 0;
}

static int read_facts(store *s, int64_t run, run_facts *f, sim_err *err)
{
    memset(f, 0, sizeof *f);
    char *text;
    if (store_run_get(s, run, &f->m, err) != 0 || store_run_scenario(s, run, &text, err) != 0)
        return -1;
    for (char *line = text; line && *line && f->nsets < MAX_SETS;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        const char *eq = strncmp(line, "# --set ", 8) == 0 ? strchr(line + 8, '=') : NULL;
        if (eq && !shown_by_field(line + 8)) {
            snprintf(f->sets[f->nsets][0], sizeof f->sets[0][0], "%.*s", (int)(eq - line - 8),
                     line + 8);
            snprintf(f->sets[f->nsets][1], sizeof f->sets[0][1], "%s", eq + 1);
            if (!shown_by_field(f->sets[f->nsets][0]))
                f->nsets++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return 0;
}

/* The value run f gives set key, or NULL. */
static const char *set_value(const run_facts *f, const char *key)
{
    for (int i = 0; i < f->nsets; i++)
        if (strcmp(f->sets[i][0], key) == 0)
            return f->sets[i][1];
    return NULL;
}

/* Appends ", text" (or "text" first) to a label. */
static void append(char *label, const char *text)
{
    size_t n = strlen(label);
    int first = label[n - 2] == ':';
    snprintf(label + n, PLT_LABEL_MAX - n, "%s%s", first ? "" : ", ", text);
}

/* The fields of a run a legend may name, each written into buf. */
static void scheduler_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s", m->scheduler);
}

static void gpu_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s", m->gpu);
}

static void model_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s", m->model);
}

static void dtype_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s", m->dtype);
}

static void replicas_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%d replica%s", m->replicas, m->replicas == 1 ? "" : "s");
}

static void tp_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "TP %d", m->tensor_parallel);
}

static void rate_field(const store_run_meta *m, char *buf, size_t len)
{
    if (m->offered_rate > 0)
        snprintf(buf, len, "%.4g req/s", m->offered_rate);
    else
        snprintf(buf, len, "no nominal rate");
}

static void requests_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%lld requests", (long long)m->num_requests);
}

static void seed_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "seed %llu", (unsigned long long)m->seed);
}

static void profile_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "%.60s", m->profile);
}

static void scenario_field(const store_run_meta *m, char *buf, size_t len)
{
    snprintf(buf, len, "scenario %.60s", m->name);
}

/* The fields in the order a legend names those that differ. */
static void (*const fields[])(const store_run_meta *m, char *buf, size_t len) = {
    scheduler_field, gpu_field,      model_field, dtype_field,   replicas_field, tp_field,
    rate_field,      requests_field, seed_field,  profile_field, scenario_field};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Field i of a run, as a legend names it, into buf. */
static void field(const store_run_meta *m, int i, char *buf, size_t len)
{
    SIM_ASSERT(NULL, i >= 0 && i < NFIELDS);
    fields[i](m, buf, len);
}

/* Appends to each label the fields (scheduler, GPU, ...) that are not the same in every run. */
static void label_fields(const run_facts *f, int n, char (*labels)[PLT_LABEL_MAX])
{
    char a[128], b[128];
    for (int k = 0; k < NFIELDS; k++) {
        int differs = 0;
        field(&f[0].m, k, a, sizeof a);
        for (int i = 1; i < n && !differs; i++) {
            field(&f[i].m, k, b, sizeof b);
            differs = strcmp(a, b) != 0;
        }
        for (int i = 0; differs && i < n; i++) {
            field(&f[i].m, k, b, sizeof b);
            append(labels[i], b);
        }
    }
}

/* Whether set key k of run i is first named by run i and differs in some run. */
static int set_differs(const run_facts *f, int n, int i, int k)
{
    const char *key = f[i].sets[k][0];
    for (int j = 0; j < i; j++)
        if (set_value(&f[j], key))
            return 0; /* an earlier run named it */
    for (int j = 0; j < n; j++) {
        const char *v = set_value(&f[j], key);
        if (!v || strcmp(v, f[i].sets[k][1]) != 0)
            return 1;
    }
    return 0;
}

/* Appends to each label each --set key whose value is not the same in every run. */
static void label_sets(const run_facts *f, int n, char (*labels)[PLT_LABEL_MAX])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < f[i].nsets; k++) {
            if (!set_differs(f, n, i, k))
                continue;
            const char *key = f[i].sets[k][0], *dot = strrchr(key, '.');
            for (int j = 0; j < n; j++) {
                const char *v = set_value(&f[j], key);
                char part[160];
                snprintf(part, sizeof part, "%s=%s", dot ? dot + 1 : key, v ? v : "(scenario's)");
                append(labels[j], part);
            }
        }
}

int plt_run_labels(store *s, const int64_t *runs, int n, char (*labels)[PLT_LABEL_MAX],
                   sim_err *err)
{
    run_facts *f = sim_xcalloc((size_t)n, sizeof *f);
    int rc = -1;
    for (int i = 0; i < n; i++)
        if (read_facts(s, runs[i], &f[i], err) != 0)
            goto out;
    for (int i = 0; i < n; i++)
        snprintf(labels[i], PLT_LABEL_MAX,
                 n == 1 ? "run %lld (%s)" : "run %lld: ", (long long)runs[i], f[i].m.scheduler);
    if (n == 1) {
        rc = 0;
        goto out;
    }
    label_fields(f, n, labels);
    label_sets(f, n, labels);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(labels[i]);
        if (labels[i][len - 2] == ':')
            labels[i][len - 2] = '\0'; /* nothing differs */
    }
    rc = 0;
out:
    free(f);
    return rc;
}

/* Writes the data file and the gnuplot script of plot o into the open dat and gp. */
static int write_files(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err)
{
    /* the paths hold no control character (check_opts): this comment ends where it should */
    fprintf(gp,
            "# llmsim plot %s from %s; redraw with: gnuplot %s\n"
            "# the numbers plotted are in the data file below\n",
            plt_kind_name(o->kind), o->kind == PLT_FRONT ? o->data : o->db, res->script);
    plt_gp_str(gp, "datafile", res->data);
    if (kinds[o->kind].write(s, o, dat, gp, res, err) != 0 ||
        plt_gp_finish(gp, plt_kind_name(o->kind), res, err) != 0)
        return -1;
    if (ferror(dat) || ferror(gp))
        return sim_errf(err, "%s: write error", ferror(dat) ? res->data : res->script);
    return 0;
}

/* Names the image (o->out or the kind's default) and the data and script files beside it. */
static int name_outputs(const plt_opts *o, plt_result *res, sim_err *err)
{
    if (o->out)
        snprintf(res->image, sizeof res->image, "%s", o->out);
    else
        plt_default_name(o, res->image, sizeof res->image);
    if (name_files(res, err) != 0)
        return -1;
    res->width = o->width;
    res->height = o->height;
    return 0;
}

int plt_plot(const plt_opts *o, plt_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    if (check_opts(o, err) != 0 || name_outputs(o, res, err) != 0)
        return -1;
    store *s = o->kind == PLT_FRONT ? NULL : store_open_readonly(o->db, err);
    if (!s && o->kind != PLT_FRONT)
        return -1;
    int rc = -1;
    FILE *dat = fopen(res->data, "w"), *gp = fopen(res->script, "w");
    if (!dat || !gp) {
        sim_errf(err, "%s: cannot write: %s", !dat ? res->data : res->script, strerror(errno));
        goto out;
    }
    rc = write_files(s, o, dat, gp, res, err);
out:
    if (dat && fclose(dat) != 0 && rc == 0)
        rc = sim_errf(err, "%s: write error: %s", res->data, strerror(errno));
    if (gp && fclose(gp) != 0 && rc == 0)
        rc = sim_errf(err, "%s: write error: %s", res->script, strerror(errno));
    store_close(s);
    if (rc != 0) {
        remove(res->data);
        remove(res->script);
        return -1;
    }
    return plt_gp_run(res, err);
}
