/*
 * validation.c: predicted against measured for a stored validation (store_validation_points).
 *
 * Data file: one block per (metric, group) that has points, metrics in the set's order, groups in
 * order of first appearance, each block headed "# metric M, group G" with rows "measured
 * predicted"; the script gets each metric's first block and block count, and each block's
 * group (its colour). Each panel spans the metric's smallest to largest value (measured or
 * predicted) with a margin, on both axes, so y = x is the diagonal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"
#include "store_validation.h"

#define MAX_METRICS 8
#define MAX_GROUPS 64

typedef struct vpoint {
    int metric, group;
    double x, y;
} vpoint;

typedef struct vcollect {
    char metrics[MAX_METRICS][48];
    int nm;
    char groups[MAX_GROUPS][128];
    int ng;
    vpoint *p;
    size_t n, cap;
    int dropped; /* groups beyond MAX_GROUPS */
} vcollect;

static int index_of(char (*names)[128], int *n, int max, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    if (*n == max)
        return -1;
    snprintf(names[*n], 128, "%s", s);
    return (*n)++;
}

static int collect(void *arg, const char *metric, const char *grp, const char *row_id,
                   double measured, double predicted)
{
    vcollect *c = arg;
    if (!(measured > 0) || !(predicted > 0))
        return 0; /* log axes */
    int m = -1;
    for (int i = 0; i < c->nm; i++)
        if (strcmp(c->metrics[i], metric) == 0)
            m = i;
    if (m < 0 && c->nm < MAX_METRICS) {
        snprintf(c->metrics[c->nm], sizeof c->metrics[0], "%s", metric);
        m = c->nm++;
    }
    int g = index_of(c->groups, &c->ng, MAX_GROUPS, grp);
    if (m < 0 || g < 0) {
        c->dropped++;
        return 0;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->p = sim_xrealloc(c->p, c->cap * sizeof *c->p);
    }
    c->p[c->n++] = (vpoint){m, g, measured, predicted};
    return 0;
}

/* "mean_ttft_ms" -> "mean TTFT (ms)"; "time_us" -> "kernel time (us)". */
static void metric_title(const char *m, char *out, size_t len)
{
    if (strcmp(m, "time_us") == 0) {
        snprintf(out, len, "kernel time (us)");
        return;
    }
    char stat[16] = "", what[32] = "", unit[8] = "";
    if (sscanf(m, "%15[^_]_%31[^_]_%7s", stat, what, unit) != 3) {
        snprintf(out, len, "%s", m);
        return;
    }
    for (char *c = what; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 32);
    snprintf(out, len, "%s %s (%s)", stat, what, unit);
}

/* Where each metric's blocks are in the data file, the group of each block, each metric's range. */
typedef struct vblocks {
    int mfirst[MAX_METRICS], mcount[MAX_METRICS]; /* a metric's first block, its count */
    int *bgroup, nb;                              /* each block's group (1-based); blocks */
    double lo[MAX_METRICS], hi[MAX_METRICS];
} vblocks;

/* Writes the block of metric m and group g (the rows of c that are theirs) into dat, block
 * number b; widens b's range of m to them. Returns 1, or 0 when no row is theirs. */
static int write_block(FILE *dat, const vcollect *c, int m, int g, vblocks *b)
{
    int any = 0;
    for (size_t i = 0; i < c->n; i++) {
        const vpoint *p = &c->p[i];
        if (p->metric != m || p->group != g)
            continue;
        if (!any) {
            fputs(b->nb ? "\n\n# metric " : "# metric ", dat);
            plt_put_clean(dat, c->metrics[m]);
            fputs(", group ", dat);
            plt_put_clean(dat, c->groups[g]);
            fputs("\n# measured predicted\n", dat);
        }
        any = 1;
        fprintf(dat, "%.10g %.10g\n", p->x, p->y);
        b->lo[m] = fmin(b->lo[m], fmin(p->x, p->y));
        b->hi[m] = fmax(b->hi[m], fmax(p->x, p->y));
    }
    return any;
}

static void write_blocks(FILE *dat, const vcollect *c, vblocks *b)
{
    b->nb = 0;
    for (int m = 0; m < c->nm; m++) {
        b->mfirst[m] = b->nb;
        b->mcount[m] = 0;
        b->lo[m] = INFINITY;
        b->hi[m] = 0;
        for (int g = 0; g < c->ng; g++)
            if (write_block(dat, c, m, g, b)) {
                b->bgroup[b->nb++] = g + 1;
                b->mcount[m]++;
            }
    }
}

static void gp_numbers(FILE *gp, const char *name, const double *v, int n)
{
    fprintf(gp, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++)
        fprintf(gp, "%s%.10g", i ? ", " : "", v[i]);
    fputs("]\n", gp);
}

static void gp_ints(FILE *gp, const char *name, const int *v, int n)
{
    fprintf(gp, "array %s[%d] = [", name, n);
    for (int i = 0; i < n; i++)
        fprintf(gp, "%s%d", i ? ", " : "", v[i]);
    fputs("]\n", gp);
}

/* Validation o->validation's meta and its points (calloc'd: the caller frees c->p and c), or
 * NULL with err (no such validation, no point to draw). */
static vcollect *read_points(store *s, const plt_opts *o, store_validation_meta *meta, sim_err *err)
{
    if (store_validation_get(s, o->validation, meta, err) != 0)
        return NULL;
    vcollect *c = sim_xcalloc(1, sizeof *c);
    int rc = store_validation_points(s, o->validation, collect, c, err);
    if (rc == 0 && c->n == 0)
        rc = sim_errf(err, "%s: validation %lld (%s) has no predicted row to draw", store_path(s),
                      (long long)o->validation, meta->name);
    if (rc == 0)
        return c;
    free(c->p);
    free(c);
    return NULL;
}

/* The script's variables: the panels' titles and ranges (widened by 1.5 each way), the blocks. */
static void write_vars(FILE *gp, const store_validation_meta *meta, const vcollect *c, vblocks *b)
{
    char title[512], mt[MAX_METRICS][64];
    const char *mtp[MAX_METRICS], *gtp[MAX_GROUPS];
    for (int m = 0; m < c->nm; m++) {
        metric_title(c->metrics[m], mt[m], sizeof mt[m]);
        mtp[m] = mt[m];
        b->lo[m] /= 1.5;
        b->hi[m] *= 1.5;
    }
    for (int g = 0; g < c->ng; g++)
        gtp[g] = c->groups[g];
    snprintf(title, sizeof title, "%s (validation %lld): %lld of %lld measurements predicted",
             meta->name, (long long)meta->id, (long long)meta->ok, (long long)meta->rows);
    plt_gp_str(gp, "plot_title", title);
    fprintf(gp, "nmetrics = %d\nngroups = %d\n", c->nm, c->ng);
    plt_gp_array(gp, "mtitles", mtp, c->nm);
    gp_ints(gp, "mfirst", b->mfirst, c->nm);
    gp_ints(gp, "mcount", b->mcount, c->nm);
    gp_numbers(gp, "lo", b->lo, c->nm);
    gp_numbers(gp, "hi", b->hi, c->nm);
    plt_gp_array(gp, "gtitles", gtp, c->ng);
    gp_ints(gp, "bgroup", b->bgroup, b->nb);
}

int plt_validation_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                         sim_err *err)
{
    store_validation_meta meta;
    vcollect *c = read_points(s, o, &meta, err);
    if (!c)
        return -1;
    vblocks b = {0};
    b.bgroup = sim_xcalloc((size_t)(c->nm * c->ng) + 1, sizeof *b.bgroup);
    fprintf(dat, "# llmsim validation %lld (", (long long)meta.id);
    plt_put_clean(dat, meta.name);
    fputs("): predicted against measured\n", dat);
    write_blocks(dat, c, &b);
    write_vars(gp, &meta, c, &b);
    res->series = c->ng;
    plt_default_size(res, c->nm > 1 ? 560 * c->nm + 40 : 700, 600);
    free(b.bgroup);
    free(c->p);
    free(c);
    return 0;
}
