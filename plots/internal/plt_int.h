/*
 * plt_int.h: what the files of plots/ share: the gnuplot script writer and the per-kind data
 * writers. Included only by the .c files of plots/. Plots read a database only through the
 * store's read API (store_query.h), on a store opened with store_open_readonly.
 */
#ifndef LLMSIM_PLT_INT_H
#define LLMSIM_PLT_INT_H

#include <stdio.h>

#include "plots.h"

/* The store (store.h); declared here so that gnuplot.c, built without the store's include path
 * (see CMakeLists.txt), can include this header. The writers include store_query.h. */
typedef struct store store;

/* A gnuplot script embedded at build time (embed.cmake); the table ends with {NULL, NULL}. */
typedef struct plt_script {
    const char *name;          /* file name without ".gp" */
    const unsigned char *text; /* NUL-terminated */
} plt_script;
extern const plt_script plt_scripts[];

/* gnuplot.c: the script next to the image is variables, then terminal lines, then the kind's
 * embedded script. */
/* Every text from a database or the command line reaches the script as a single-quoted string
 * (no substitution inside; quotes doubled; control characters written as spaces), never as code. */
/* Writes `name = 'value'`. */
void plt_gp_str(FILE *f, const char *name, const char *value);
/* Writes `array name[n] = ['v0', ...]`. */
void plt_gp_array(FILE *f, const char *name, const char *const *v, int n);
/* Writes text with each control character as a space: for a comment line of the script or the
 * data file, which a newline would end. */
void plt_put_clean(FILE *f, const char *text);
/* 0 when path (a file the script names: `what` says which, "--db" or "-o") holds no control
 * character, else -1 with err: a newline in it would end the script's line. */
int plt_check_path(const char *path, const char *what, sim_err *err);
/* The request rows stored of run: their count, or -1 with err (none: the run was stored with
 * --store summary or iterations). */
int64_t plt_request_rows(store *s, int64_t run, sim_err *err);

/* Refuses run for having no iteration rows (stored with --store summary): returns -1 with err. */
int plt_no_iterations(store *s, int64_t run, sim_err *err);

/* The rest of f, read to its end, as a NUL-terminated string (malloc'd: the caller frees). */
char *plt_read_all(FILE *f);

/* Sets res's image size to width x height where the options left it 0. */
void plt_default_size(plt_result *res, int width, int height);

/* Writes the terminal and output lines for res->image at res->width x res->height, then the
 * embedded script `kind`. 0, or -1 with err (unknown extension or script). */
int plt_gp_finish(FILE *f, const char *kind, const plt_result *res, sim_err *err);
/* Runs gnuplot on res->script. 0 with res->rendered = 1 when the image was written, 0 with
 * res->rendered = 0 when no gnuplot is installed, -1 with err when gnuplot failed. */
int plt_gp_run(plt_result *res, sim_err *err);

/* Per-kind writers: fill the data file `dat` and the kind's variables in the script `gp`,
 * set res->series and (when still 0) res->width and res->height. 0, or -1 with err. */
int plt_curve_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err);
int plt_cdf_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err);
int plt_timeline_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err);
int plt_gantt_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err);
int plt_fleet_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err);
/* front reads no database: its points come from o->data (see front.c). */
int plt_front_write(const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err);
int plt_probes_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                     sim_err *err);
int plt_validation_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                         sim_err *err);

/* plot.c. The latency vocabulary's (metrics.h) stem of a metric users write: "ttft" ->
 * "ttft_ms", "e2e" or "e2el" -> "e2el_ms"; NULL if unknown. */
const char *plt_metric_column(const char *metric);
/* Human label: "ttft" -> "TTFT". */
const char *plt_metric_label(const char *metric);
/* Legends for several runs on one chart: "run N: " and what differs between the runs (the
 * scheduler, GPU, model, dtype, replicas, TP, offered rate, requests, seed, profile, scenario,
 * and each --set override that not every run shares); "run N (scheduler)" for a single run.
 * labels[i] gets run runs[i]'s. 0, or -1 with err (an unknown run). */
#define PLT_LABEL_MAX 200
int plt_run_labels(store *s, const int64_t *runs, int n, char (*labels)[PLT_LABEL_MAX],
                   sim_err *err);
/* Run `run`'s scheduler into sched and its replica count (at least 1) into *replicas (may be
 * NULL). 0, or -1 with err ("no run N in this database"). */
int plt_run_sched(store *s, int64_t run, char *sched, size_t len, int *replicas, sim_err *err);

#endif
