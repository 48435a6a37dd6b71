/*
 * plot.c: plt_plot: checks the options, names the files, opens the database (read-only, through
 * the store) and drives one kind's writer, then gnuplot.
 *
 * Files: the image FILE.EXT, its data FILE.dat and its script FILE.gp (FILE = the image path
 * without its extension), all in the image's directory. A failed plot removes the data and
 * script files it had started, so only a complete pair is ever left behind.
 */
#include <errno.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"

static const char *const kind_names[] = {"curve", "cdf", "timeline", "gantt", "validation"};
#define NKINDS (int)(sizeof kind_names / sizeof kind_names[0])

int plt_kind_parse(const char *s, plt_kind *out)
{
    for (int i = 0; i < NKINDS; i++)
        if (strcmp(s, kind_names[i]) == 0) {
            *out = (plt_kind)i;
            return 0;
        }
    return -1;
}

const char *plt_kind_name(plt_kind k)
{
    return (unsigned)k < (unsigned)NKINDS ? kind_names[k] : "?";
}

const char *plt_default_name(const plt_opts *o, char *buf, size_t len)
{
    size_t n = 0;
    if (o->kind == PLT_CURVE)
        n = (size_t)snprintf(buf, len, "curve-sweep%lld", (long long)o->sweep);
    else if (o->kind == PLT_VALIDATION)
        n = (size_t)snprintf(buf, len, "validation%lld", (long long)o->validation);
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

static int check_opts(const plt_opts *o, sim_err *err)
{
    if (o->kind == PLT_CURVE && o->sweep <= 0)
        return sim_errf(err, "curve plots a sweep: give --sweep ID");
    if (o->kind == PLT_VALIDATION)
        return o->validation > 0 ? 0
                                 : sim_errf(err, "validation plots a stored validation: give "
                                                 "--validation ID");
    if (o->kind != PLT_CURVE && o->nruns < 1)
        return sim_errf(err, "%s plots runs: give --run ID[,ID...]", plt_kind_name(o->kind));
    if (o->kind == PLT_GANTT && o->nruns != 1)
        return sim_errf(err, "gantt draws one run; give a single --run ID");
    if (o->metric && !plt_metric_column(o->metric))
        return sim_errf(err, "unknown metric '%s'; valid: ttft, tpot, itl, e2e", o->metric);
    if (o->width < 0 || o->height < 0 || o->width > 20000 || o->height > 20000)
        return sim_errf(err, "image size %dx%d is out of range (1..20000)", o->width, o->height);
    return 0;
}

const char *plt_metric_column(const char *metric)
{
    static const char *const m[][2] = {
        {"ttft", "ttft_ms"}, {"tpot", "tpot_ms"}, {"itl", "itl_ms"}, {"e2e", "e2el_ms"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(metric, m[i][0]) == 0)
            return m[i][1];
    return NULL;
}

const char *plt_metric_label(const char *metric)
{
    static const char *const m[][2] = {
        {"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E latency"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(metric, m[i][0]) == 0)
            return m[i][1];
    return metric;
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

static int write_kind(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                      sim_err *err)
{
    switch (o->kind) {
    case PLT_CURVE:
        return plt_curve_write(s, o, dat, gp, res, err);
    case PLT_CDF:
        return plt_cdf_write(s, o, dat, gp, res, err);
    case PLT_TIMELINE:
        return plt_timeline_write(s, o, dat, gp, res, err);
    case PLT_GANTT:
        return plt_gantt_write(s, o, dat, gp, res, err);
    case PLT_VALIDATION:
        return plt_validation_write(s, o, dat, gp, res, err);
    }
    return sim_errf(err, "unknown plot kind %d", (int)o->kind);
}

int plt_plot(const plt_opts *o, plt_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    if (check_opts(o, err) != 0)
        return -1;
    if (o->out)
        snprintf(res->image, sizeof res->image, "%s", o->out);
    else
        plt_default_name(o, res->image, sizeof res->image);
    if (name_files(res, err) != 0)
        return -1;
    res->width = o->width;
    res->height = o->height;
    store *s = store_open_readonly(o->db, err);
    if (!s)
        return -1;
    int rc = -1;
    FILE *dat = fopen(res->data, "w"), *gp = fopen(res->script, "w");
    if (!dat || !gp) {
        sim_errf(err, "%s: cannot write: %s", !dat ? res->data : res->script, strerror(errno));
        goto out;
    }
    fprintf(gp,
            "# llmsim plot %s from %s; redraw with: gnuplot %s\n"
            "# the numbers plotted are in the data file below\n",
            plt_kind_name(o->kind), o->db, res->script);
    plt_gp_str(gp, "datafile", res->data);
    if (write_kind(s, o, dat, gp, res, err) != 0 ||
        plt_gp_finish(gp, plt_kind_name(o->kind), res, err) != 0)
        goto out;
    if (ferror(dat) || ferror(gp)) {
        sim_errf(err, "%s: write error", ferror(dat) ? res->data : res->script);
        goto out;
    }
    rc = 0;
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
