/*
 * cmd_plot.c: `llmsim plot KIND --db PATH (--sweep ID | --run ID[,ID...]) [-o FILE]
 * [--metric M] [--pct P] [--x X] [--by KEY] [--size WxH]`: draws a stored sweep or runs with
 * gnuplot (plots/).
 *
 * Exit status: 0 when the image was drawn; 1 on a user error (unknown run or sweep, a run stored
 * without the rows the plot needs, a database or gnuplot failure); 2 on bad usage; 3 when
 * gnuplot is not installed: the data and script files are written anyway and the message says
 * how to install gnuplot and draw the image from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plots.h"

#define PLOT_NO_GNUPLOT 3

static int usage(void)
{
    fprintf(stderr, "usage: llmsim plot curve --sweep ID [--db PATH] [-o FILE.png|.svg|.pdf]\n"
                    "                   [--metric ttft|tpot|itl|e2e] [--pct p50|p90|p95|p99|mean]\n"
                    "                   [--x throughput|requests|rate] [--by KEY] [--size WxH]\n"
                    "       llmsim plot cdf|timeline --run ID[,ID...] [--db PATH] [-o FILE]\n"
                    "                   [--metric ttft|tpot|e2e] [--size WxH]\n"
                    "       llmsim plot gantt --run ID [--db PATH] [-o FILE] [--size WxH]\n");
    return 2;
}

static int parse_id(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_runs(const char *s, plt_opts *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nruns == PLT_MAX_RUNS) {
            fprintf(stderr, "llmsim plot: at most %d runs on one chart\n", PLT_MAX_RUNS);
            return -1;
        }
        if (parse_id(t, &o->runs[o->nruns++]) != 0) {
            fprintf(stderr, "llmsim plot: --run expects run ids like 3 or 1,2,5; got '%s'\n", s);
            return -1;
        }
    }
    return 0;
}

static int parse_x(const char *v, plt_x *x)
{
    static const char *const names[] = {"throughput", "requests", "rate"};
    for (int i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0) {
            *x = (plt_x)i;
            return 0;
        }
    fprintf(stderr, "llmsim plot: --x expects throughput, requests or rate; got '%s'\n", v);
    return -1;
}

static int parse_opt(int argc, char **argv, int *i, plt_opts *o)
{
    const char *v;
    if ((v = cli_opt(argc, argv, i, "--db")))
        o->db = v;
    else if ((v = cli_opt(argc, argv, i, "--sweep"))) {
        if (parse_id(v, &o->sweep) != 0) {
            fprintf(stderr, "llmsim plot: --sweep expects a sweep id; got '%s'\n", v);
            return -1;
        }
    } else if ((v = cli_opt(argc, argv, i, "--run")))
        return parse_runs(v, o);
    else if ((v = cli_opt(argc, argv, i, "-o")) || (v = cli_opt(argc, argv, i, "--output")))
        o->out = v;
    else if ((v = cli_opt(argc, argv, i, "--metric")))
        o->metric = v;
    else if ((v = cli_opt(argc, argv, i, "--pct")))
        o->pct = v;
    else if ((v = cli_opt(argc, argv, i, "--x")))
        return parse_x(v, &o->x);
    else if ((v = cli_opt(argc, argv, i, "--by")))
        o->by = v;
    else if ((v = cli_opt(argc, argv, i, "--size"))) {
        if (sscanf(v, "%dx%d", &o->width, &o->height) != 2 || o->width <= 0 || o->height <= 0) {
            fprintf(stderr, "llmsim plot: --size expects WIDTHxHEIGHT, e.g. 1200x700\n");
            return -1;
        }
    } else
        return -1;
    return 0;
}

int cmd_plot(int argc, char **argv)
{
    plt_opts o;
    memset(&o, 0, sizeof o);
    o.db = "llmsim.db";
    if (argc < 2 || plt_kind_parse(argv[1], &o.kind) != 0) {
        if (argc >= 2)
            fprintf(stderr, "llmsim plot: unknown kind '%s'; valid: curve, cdf, timeline, gantt\n",
                    argv[1]);
        return usage();
    }
    for (int i = 2; i < argc; i++)
        if (parse_opt(argc, argv, &i, &o) != 0)
            return usage();
    if ((o.kind == PLT_CURVE) != (o.sweep > 0) || (o.kind == PLT_CURVE) == (o.nruns > 0)) {
        fprintf(stderr, "llmsim plot: %s\n",
                o.kind == PLT_CURVE ? "curve plots one sweep: give --sweep ID (and no --run)"
                                    : "this kind plots runs: give --run ID[,ID...] (no --sweep)");
        return usage();
    }
    plt_result res;
    sim_err err = {{0}};
    if (plt_plot(&o, &res, &err) != 0) {
        fprintf(stderr, "llmsim plot: %s\n", err.msg);
        return 1;
    }
    if (!res.rendered) {
        fprintf(stderr,
                "llmsim plot: gnuplot is not installed (not found on PATH), so no image was "
                "drawn.\n"
                "  Install it:  apt-get install gnuplot-nox   (Debian/Ubuntu; gnuplot elsewhere)\n"
                "  Then draw:   gnuplot %s   (writes %s)\n"
                "  The numbers it would have plotted are in %s\n",
                res.script, res.image, res.data);
        return PLOT_NO_GNUPLOT;
    }
    printf("llmsim: wrote %s (%dx%d; data %s, script %s)\n", res.image, res.width, res.height,
           res.data, res.script);
    return 0;
}
