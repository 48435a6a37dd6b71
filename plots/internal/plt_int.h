/*
 * plt_int.h: what the files of plots/ share: the read-only database handle, the gnuplot script
 * writer and the per-kind data writers. Included only by the .c files of plots/.
 */
#ifndef LLMSIM_PLT_INT_H
#define LLMSIM_PLT_INT_H

#include <stdio.h>

#include <sqlite3.h>

#include "plots.h"

/* A gnuplot script embedded at build time (embed.cmake); the table ends with {NULL, NULL}. */
typedef struct plt_script {
    const char *name;          /* file name without ".gp" */
    const unsigned char *text; /* NUL-terminated */
} plt_script;
extern const plt_script plt_scripts[];

/* db.c: a results database opened read-only. */
typedef struct plt_db {
    sqlite3 *db;
    char path[PLT_PATH_MAX];
} plt_db;

/* Opens path read-only and checks it is an llmsim database. 0, or -1 with err. */
int plt_db_open(plt_db *d, const char *path, sim_err *err);
void plt_db_close(plt_db *d);
/* Prepares sql; NULL with err naming the database. */
sqlite3_stmt *plt_db_prepare(plt_db *d, const char *sql, sim_err *err);
/* Sets err from the connection's last error, prefixed by what failed; returns -1. */
int plt_db_fail(plt_db *d, const char *what, sim_err *err);
/* Checks that run `run` exists; copies its scheduler name into sched (may be NULL) and its
 * replica count into *replicas (may be NULL). 0, or -1 with err ("no run N in DB"). */
int plt_db_run(plt_db *d, int64_t run, char *sched, size_t len, int *replicas, sim_err *err);
/* Runs a query with one integer parameter and one integer result; -1 with err on failure. */
int64_t plt_db_count(plt_db *d, const char *sql, int64_t arg, sim_err *err);

/* gnuplot.c: the script next to the image is variables, then terminal lines, then the kind's
 * embedded script. */
/* Writes `name = 'value'` (quotes doubled, newlines dropped). */
void plt_gp_str(FILE *f, const char *name, const char *value);
/* Writes `array name[n] = ["v0", ...]`. */
void plt_gp_array(FILE *f, const char *name, const char *const *v, int n);
/* Writes the terminal and output lines for res->image at res->width x res->height, then the
 * embedded script `kind`. 0, or -1 with err (unknown extension or script). */
int plt_gp_finish(FILE *f, const char *kind, const plt_result *res, sim_err *err);
/* Runs gnuplot on res->script. 0 with res->rendered = 1 when the image was written, 0 with
 * res->rendered = 0 when no gnuplot is installed, -1 with err when gnuplot failed. */
int plt_gp_run(plt_result *res, sim_err *err);

/* Per-kind writers: fill the data file `dat` and the kind's variables in the script `gp`,
 * set res->series and (when still 0) res->width and res->height. 0, or -1 with err. */
int plt_curve_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err);
int plt_cdf_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res, sim_err *err);
int plt_timeline_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err);
int plt_gantt_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                    sim_err *err);

/* Metric names in the metrics table: "ttft" -> "ttft_ms", "e2e" -> "e2el_ms"; NULL if unknown. */
const char *plt_metric_column(const char *metric);
/* Human label: "ttft" -> "TTFT". */
const char *plt_metric_label(const char *metric);

#endif
