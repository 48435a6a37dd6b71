/*
 * front.c: a recommendation's Pareto front: output tokens/s per GPU against output tokens/s per
 * user (the axes AIConfigurator and InferenceX draw), one point set per simulated candidate,
 * the confirmed front joined by a line.
 *
 * Fed by a points file that `llmsim recommend` writes beside its image (o->data; every number
 * in it comes from the recommendation's simulated runs, which the store holds as a capacity
 * search): an optional "# title: TEXT" line, then blocks "# series: NAME" then rows "x y front" (x
 * tokens/s per user, y tokens/s per GPU, front 1 or 0), blocks separated by two blank lines. The
 * data file is those blocks, then one block "x y" of the front points sorted by x.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"

#define MAX_SERIES 256
#define MAX_FRONT 256

typedef struct fpt {
    double x, y;
} fpt;

static int by_x(const void *a, const void *b)
{
    const fpt *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x;
}

/* The chart's title and y axis, from the points file's comment lines. */
typedef struct labels {
    char title[512], ylabel[128];
} labels;

/* A comment line of the points file (its newline cut): "# title: T" and "# ylabel: Y" into lb,
 * "# series: S" into names; others are passed over. 0, or -1 when there are already MAX_SERIES
 * series. */
static int header_line(const char *line, char **names, int *nseries, labels *lb)
{
    if (strncmp(line, "# title: ", 9) == 0)
        snprintf(lb->title, sizeof lb->title, "%s", line + 9);
    else if (strncmp(line, "# ylabel: ", 10) == 0)
        snprintf(lb->ylabel, sizeof lb->ylabel, "%.127s", line + 10);
    else if (strncmp(line, "# series: ", 10) == 0 && *nseries == MAX_SERIES)
        return -1;
    else if (strncmp(line, "# series: ", 10) == 0)
        names[(*nseries)++] = sim_xstrdup(line + 10);
    return 0;
}

/* Copies the points file into dat, collecting series names and the front. */
static int copy_points(FILE *in, FILE *dat, char **names, int *nseries, fpt *front, int *nfront,
                       labels *lb, sim_err *err, const char *path)
{
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, in)) {
        lineno++;
        fputs(line, dat);
        if (line[0] == '#' || line[0] == '\n') {
            line[strcspn(line, "\n")] = '\0';
            if (header_line(line, names, nseries, lb) != 0)
                return sim_errf(err, "%s:%d: more than %d series", path, lineno, MAX_SERIES);
            continue;
        }
        double x, y;
        int f;
        if (sscanf(line, "%lf %lf %d", &x, &y, &f) != 3 || *nseries == 0)
            return sim_errf(err, "%s:%d: expected 'x y front' after a '# series:' line", path,
                            lineno);
        if (f && *nfront < MAX_FRONT)
            front[(*nfront)++] = (fpt){x, y};
    }
    return 0;
}

/* The front's points, sorted by tokens/s per user, as the data file's last block. */
static void write_front(FILE *dat, fpt *front, int nfront)
{
    qsort(front, (size_t)nfront, sizeof *front, by_x);
    fprintf(dat, "\n\n# the front, by tokens/s per user\n");
    for (int i = 0; i < nfront; i++)
        fprintf(dat, "%.10g %.10g\n", front[i].x, front[i].y);
}

int plt_front_write(const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err)
{
    FILE *in = fopen(o->data, "r");
    if (!in)
        return sim_errf(err, "%s: cannot read: %s", o->data, strerror(errno));
    char *names[MAX_SERIES];
    fpt front[MAX_FRONT];
    int nseries = 0, nfront = 0;
    labels lb = {"output tokens/s per GPU vs tokens/s per user", "output tokens/s per GPU"};
    int rc = copy_points(in, dat, names, &nseries, front, &nfront, &lb, err, o->data);
    fclose(in);
    if (rc == 0 && nseries == 0)
        rc = sim_errf(err, "%s: no series of points", o->data);
    if (rc == 0) {
        write_front(dat, front, nfront);
        plt_gp_str(gp, "plot_title", lb.title);
        plt_gp_str(gp, "xlabel", "output tokens/s per user (1000 / mean TPOT)");
        plt_gp_str(gp, "ylabel", lb.ylabel);
        fprintf(gp, "nseries = %d\nnfront = %d\n", nseries, nfront);
        plt_gp_array(gp, "titles", (const char *const *)names, nseries);
        res->series = nseries;
        plt_default_size(res, 1100, 650);
    }
    for (int i = 0; i < nseries; i++)
        free(names[i]);
    return rc;
}
