/*
 * cmd_plot.c: `llmsim plot curve|cdf|timeline|gantt|validation|fleet`: draws a stored sweep, runs
 * or validation with gnuplot (plots/).
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

/* A plot kind's command: its help's usage, summary and details, each writing the same files from
 * the database (more: what its details add, after WRITES). */
#define WRITES                                                                                     \
    "Writes FILE (.png, .svg or .pdf), FILE.dat (the numbers) and FILE.gp (the gnuplot script)."
#define PLOT_CMD(kind, source, what, more)                                                         \
    {                                                                                              \
        .name = "plot " kind, .args = source, .summary = what, .details = WRITES more,             \
        .common = CLI_DB                                                                           \
    }

/* In plt_kind's order. */
static const cli_command plot_cmds[] = {
    PLOT_CMD("curve", "--sweep ID",
             "Draws a latency percentile against throughput (or offered rate) for a stored sweep: "
             "one line per scheduler or per value of --by, 95% intervals when the sweep has "
             "repetitions, saturated points circled.",
             ""),
    PLOT_CMD("cdf", "--run ID[,ID...]", "Draws the latency CDFs of up to 32 stored runs.", ""),
    PLOT_CMD("timeline", "--run ID[,ID...]",
             "Draws, per iteration, the sequences in the batch and the KV blocks in use: one panel "
             "per run on a shared time axis.",
             ""),
    PLOT_CMD("gantt", "--run ID",
             "Draws each request's queued, prefill and decode spans with a tick per iteration "
             "(runs of at most 200 requests).",
             ""),
    PLOT_CMD("probes", "--capacity ID",
             "Draws a capacity search's probes: a latency percentile of each probe of the rate "
             "search against its rate, one line per choice, filled where the probe met the SLOs, "
             "with the SLO.",
             ""),
    PLOT_CMD("validation", "--validation ID",
             "Draws predicted against measured for a stored validation (llmsim validate): "
             "log-log, the line y = x, one panel per metric and one colour per group.",
             ""),
    PLOT_CMD("fleet", "--run ID[,ID...]",
             "Draws autoscaled runs' fleets over time: the offered load, the replicas serving and "
             "held, and the p99 TTFT and the share of requests within the SLO per autoscaler "
             "interval.",
             " Only a run with autoscale: stores a fleet timeline.")};

static int parse_id(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

/* An option that takes one stored id: its flag, what the id names, and where it goes. */
typedef struct id_option {
    const char *flag, *what;
    int64_t *out;
} id_option;

static int take_id(void *arg, const char *v)
{
    const id_option *o = arg;
    if (parse_id(v, o->out) == 0)
        return 0;
    fprintf(stderr, "llmsim plot: %s expects %s id; got '%s'\n", o->flag, o->what, v);
    return -1;
}

static int take_runs(void *arg, const char *s)
{
    plt_opts *o = arg;
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

static int take_x(void *arg, const char *v)
{
    static const char *const names[] = {"throughput", "requests", "rate"};
    for (int i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0) {
            *(plt_x *)arg = (plt_x)i;
            return 0;
        }
    fprintf(stderr, "llmsim plot: --x expects throughput, requests or rate; got '%s'\n", v);
    return -1;
}

static int take_size(void *arg, const char *v)
{
    plt_opts *o = arg;
    if (sscanf(v, "%dx%d", &o->width, &o->height) == 2 && o->width > 0 && o->height > 0)
        return 0;
    fprintf(stderr, "llmsim plot: --size expects WIDTHxHEIGHT, e.g. 1200x700\n");
    return -1;
}

static int draw(plt_opts *o)
{
    plt_result res;
    sim_err err = {{0}};
    if (plt_plot(o, &res, &err) != 0)
        return cli_fail("plot", &err);
    if (res.note[0])
        fprintf(stderr, "llmsim plot: note: %s\n", res.note);
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

/* Whether o names what its kind draws, and nothing else: a validation, a sweep, a capacity search
 * or runs. 0, or -1 after a message. */
static int check_source(const plt_opts *o)
{
    if (o->kind == PLT_VALIDATION) {
        if (o->validation > 0 && !o->sweep && !o->nruns)
            return 0;
        fprintf(stderr, "llmsim plot: validation draws one stored validation: give --validation "
                        "ID (no --sweep, no --run)\n");
        return -1;
    }
    if (o->validation > 0) {
        fprintf(stderr, "llmsim plot: --validation goes with `plot validation`\n");
        return -1;
    }
    int curve = o->kind == PLT_CURVE, probes = o->kind == PLT_PROBES, one = curve || probes;
    if (one == (o->sweep > 0) && one != (o->nruns > 0))
        return 0;
    fprintf(stderr, "llmsim plot: %s\n",
            curve    ? "curve plots one sweep: give --sweep ID (and no --run)"
            : probes ? "probes plots one capacity search: give --capacity ID (and no --run)"
                     : "this kind plots runs: give --run ID[,ID...] (no --sweep)");
    return -1;
}

static int plot(plt_kind kind, int argc, char **argv)
{
    plt_opts o = {.kind = kind};
    int curve = kind == PLT_CURVE;
    char names[120], metrics[200];
    eng_latency_names(ENG_LAT_SLO, names, sizeof names);
    snprintf(metrics, sizeof metrics, "%s%s", names, curve ? "" : " (cdf: not itl)");
    id_option sweep = {"--sweep", "a sweep", &o.sweep},
              capacity = {"--capacity", "a capacity search", &o.sweep},
              validation = {"--validation", "a validation", &o.validation};
    cli_option opts[] = {
        {"--sweep", "ID", CLI_CALL, NULL, "the sweep to draw", NULL, 0, 0, take_id, &sweep},
        {"--run", "IDS", CLI_CALL, NULL, "the runs to draw, e.g. 3 or 1,2,5", NULL, 0, 0, take_runs,
         &o},
        {"--capacity", "ID", CLI_CALL, NULL, "the capacity search to draw (probes)", NULL, 0, 0,
         take_id, &capacity},
        {"--validation", "ID", CLI_CALL, NULL, "the validation to draw (llmsim validate)", NULL, 0,
         0, take_id, &validation},
        CLI_OUTPUT(&o.out, "the image (.png, .svg or .pdf)",
                   "<kind>-run<ID>.png, <kind>-sweep<ID>.png or validation<ID>.png"),
        {"--metric", "M", CLI_STRING, &o.metric, metrics, "ttft", 0, 0, NULL, NULL},
        {"--pct", "P", CLI_STRING, &o.pct, "p50, p90, p95, p99 or mean (curve)", "p99", 0, 0, NULL,
         NULL},
        {"--x", "X", CLI_CALL, NULL, "throughput (output tokens/s), requests or rate (curve)",
         "throughput", 0, 0, take_x, &o.x},
        {"--by", "KEY", CLI_STRING, &o.by, "a varied key naming the lines (curve)",
         "scheduler.name", 0, 0, NULL, NULL},
        {"--size", "WxH", CLI_CALL, NULL, "the image size in pixels", "the kind's own", 0, 0,
         take_size, &o},
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&plot_cmds[kind], opts, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    o.db = c.db;
    return check_source(&o) != 0 ? 2 : draw(&o);
}

/* `llmsim plot KIND`: argv[0] names the kind (cli_dispatch matched it). */
static int plot_kind(int argc, char **argv)
{
    plt_kind kind = PLT_CURVE;
    int known = plt_kind_parse(argv[0], &kind) == 0;
    SIM_CHECK(NULL, known);
    return plot(kind, argc, argv);
}

int cmd_plot(int argc, char **argv)
{
    /* a subcommand per kind but the front, which `llmsim recommend` draws */
    cli_sub subs[PLT_FRONT];
    char valid[160];
    size_t used = 0;
    for (int k = 0; k < PLT_FRONT; k++) {
        subs[k] = (cli_sub){plt_kind_name((plt_kind)k), plot_kind, plt_kind_draws((plt_kind)k)};
        used += (size_t)snprintf(valid + used, sizeof valid - used, "%s%s", k ? ", " : "",
                                 subs[k].name);
    }
    if (argc >= 2 && argv[1][0] != '-' && plt_kind_parse(argv[1], &(plt_kind){0}) != 0) {
        fprintf(stderr, "llmsim plot: unknown kind '%s'; valid: %s\n", argv[1], valid);
        return 2;
    }
    return cli_dispatch("plot", subs, PLT_FRONT, argc, argv);
}
