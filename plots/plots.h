/*
 * plots.h: plots of stored runs and sweeps (gnuplot), and the Chrome trace export.
 *
 * plt_plot reads a results database (read-only), writes the numbers it plots to a data file and
 * a self-contained gnuplot script next to the output image, then runs `gnuplot` (found on PATH,
 * or the program named by the environment variable LLMSIM_GNUPLOT) on that script. When gnuplot
 * is missing the data and script files are still written, so the image can be drawn later with
 * `gnuplot FILE.gp`. Nothing here aborts on bad input: unknown runs or sweeps, runs stored
 * without the rows a plot needs, and database errors come back as -1 with a message.
 */
#ifndef LLMSIM_PLOTS_H
#define LLMSIM_PLOTS_H

#include <stdint.h>

#include "sim.h"

#define PLT_PATH_MAX 1024
#define PLT_MAX_RUNS 32       /* runs on one cdf or timeline chart */
#define PLT_GANTT_MAX_REQ 200 /* gantt refuses larger runs: one bar per request stops reading */

typedef enum plt_kind {
    PLT_CURVE,    /* latency percentile against throughput or offered rate, from a sweep */
    PLT_CDF,      /* latency CDFs of runs, from the requests table */
    PLT_TIMELINE, /* batch occupancy and KV blocks in use per iteration, over time */
    PLT_GANTT,    /* each request's queued, prefill and decode spans and its iterations */
    PLT_PROBES,   /* a capacity search's probes: latency against rate, per choice */
    /* predicted against measured, from a stored validation */
    PLT_VALIDATION,
    PLT_FLEET, /* an autoscaled run's load, replicas and p99 TTFT over time (fleet_windows) */
    PLT_FRONT  /* a recommendation's Pareto front, from the points file it wrote (data) */
} plt_kind;

typedef enum plt_x {
    PLT_X_THROUGHPUT, /* output_throughput, tokens/s */
    PLT_X_REQUESTS,   /* request_throughput, requests/s */
    PLT_X_RATE        /* offered rate, requests/s */
} plt_x;

typedef struct plt_opts {
    plt_kind kind;
    const char *db;             /* database path */
    int64_t sweep;              /* curve: the sweep id; probes: the capacity search's id */
    int64_t validation;         /* validation: the validation id */
    int64_t runs[PLT_MAX_RUNS]; /* cdf, timeline, gantt, fleet: run ids */
    int nruns;                  /* gantt takes exactly one */
    const char *out;            /* image path (.png, .svg or .pdf); NULL: <kind>-run<ID>.png */
    const char *metric;         /* ttft | tpot | itl | e2e (itl: curve only) */
    const char *pct;            /* curve: p50 | p90 | p95 | p99 | mean */
    plt_x x;                    /* curve: the horizontal axis */
    const char *by;             /* curve: a varied key naming the lines; NULL: the scheduler */
    int width, height;          /* image size in pixels (pdf: 1/100 inch); 0: the kind's own */
    const char *data;           /* front: the points file `llmsim recommend` wrote */
} plt_opts;

typedef struct plt_result {
    char image[PLT_PATH_MAX];  /* the image path (written only when rendered) */
    char data[PLT_PATH_MAX];   /* the data file: <image without extension>.dat */
    char script[PLT_PATH_MAX]; /* the gnuplot script: <image without extension>.gp */
    int rendered;              /* 1: gnuplot drew the image; 0: gnuplot is not installed */
    int width, height;         /* the image size used */
    int series;                /* lines (curve, cdf) or panels (timeline) drawn */
    char note[512];            /* what the reader should know the image does not show ("" none) */
} plt_result;

/* Parses "curve", "cdf", "timeline", "gantt", "probes", "validation", "fleet" or "front". 0, or -1
 * for an unknown name. */
int plt_kind_parse(const char *s, plt_kind *out);
/* The kind's name ("curve"); "?" for a value outside plt_kind. */
const char *plt_kind_name(plt_kind k);
/* What the kind draws, in one line (its subcommand's summary); "?" outside plt_kind. */
const char *plt_kind_draws(plt_kind k);

/* Writes the data and script files for o and runs gnuplot on them; fills res. Returns 0 (also
 * when gnuplot is missing: res->rendered = 0), or -1 with err naming the database, run or file
 * at fault; gnuplot's own failure is -1 too, with its exit status. */
int plt_plot(const plt_opts *o, plt_result *res, sim_err *err);

/* The default image name for o when o->out is NULL: "<kind>-run<ID>[-<ID>...].png",
 * "<kind>-sweep<ID>.png" or "validation<ID>.png", into buf. Returns buf. */
const char *plt_default_name(const plt_opts *o, char *buf, size_t len);

/* Writes run `run` of database db to path ("-" for stdout) in the Chrome trace event format:
 * one complete ("X") event per iteration on one track per replica, counter events for the
 * batch size and KV blocks, and nestable async events per request (queued, then per scheduled
 * span prefill or recompute and decode, and the waits after preemptions, which are marked).
 * Only what overlaps [from_ns, to_ns] of simulated time is written (INT64_MIN, INT64_MAX: the
 * whole run). Timestamps are microseconds of simulated time. Returns the number of iteration
 * events, or -1 with err (nothing left at path): no such run, no iteration rows, or none in the
 * window. */
int64_t plt_trace_export(const char *db, int64_t run, int64_t from_ns, int64_t to_ns,
                         const char *path, sim_err *err);

/* ---- the HTML report ---- */

/* A table of the report: a header row, then nrows rows of ncols cells (cells holds (nrows + 1)
 * x ncols strings, the header first; the caller owns them). */
typedef struct plt_table {
    char title[128];
    int ncols, nrows;
    char **cells;
    char note[256]; /* shown under the table ("" none) */
} plt_table;

/* Building a table: plt_table_start sets t's title and its header row (copies of names[0..ncols
 * - 1]) and no rows; plt_table_row appends a row of t->ncols cells (copied); plt_table_free
 * frees the cells. */
void plt_table_start(plt_table *t, const char *title, int ncols, const char *const *names);
void plt_table_row(plt_table *t, const char *const *cells);
void plt_table_free(plt_table *t);

/* A figure: a plot (db and out are set by the report) and its caption. */
typedef struct plt_figure {
    plt_opts plot;
    char caption[256];
} plt_figure;

#define PLT_REPORT_NOTES 8

typedef struct plt_report {
    const char *db;       /* the database the figures are drawn from */
    const char *out;      /* the HTML file */
    char title[256];      /* "Run 3: demo", the page's heading */
    char setting[512];    /* one line under it: model, GPU, scheduler ... */
    const char *scenario; /* the scenario text (NULL: none) */
    const plt_table *tables;
    int ntables;
    const plt_figure *figs;
    int nfigs;
    char notes[PLT_REPORT_NOTES][512];
    int nnotes;
    char footer[256]; /* who made it, from what */
} plt_report;

typedef struct plt_report_result {
    int drawn;   /* figures drawn and inlined */
    int failed;  /* figures replaced by the reason they could not be drawn */
    int missing; /* figures not drawn because gnuplot is not installed */
} plt_report_result;

/* Writes r as one self-contained HTML file at r->out (scripts, styles and figures inline;
 * nothing fetched), drawing each figure with gnuplot's svg terminal. A figure that cannot be
 * drawn is replaced by the reason; res counts them. The file appears whole or not at all.
 * Returns 0, or -1 with err (the file cannot be written). */
int plt_report_write(const plt_report *r, plt_report_result *res, sim_err *err);

#endif
