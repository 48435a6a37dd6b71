/*
 * store_validation.h: validations in the results database (tables validations,
 * validation_rows, validation_values, validation_stats; schema version 4).
 *
 * A validation is one `llmsim validate` of a set: its heading (set name, file, kind, the cost
 * model, notes, counts), one row per measurement it replayed (ok, cannot: could not be
 * expressed, failed: its run failed; with the reason, the approximations and the run that
 * predicted it), the measured and predicted value of each metric of each row, and the error
 * statistics per group and metric. A validation is written in one transaction through a writer
 * (store_validation_begin ... store_validation_finish): it is stored whole or not at all.
 */
#ifndef LLMSIM_STORE_VALIDATION_H
#define LLMSIM_STORE_VALIDATION_H

#include <stdint.h>

#include "store.h"

typedef struct store_validation_info {
    const char *name;                 /* the set's name */
    const char *file;                 /* the set file (may be NULL) */
    const char *kind;                 /* "serving" or "operators" */
    const char *description;          /* may be NULL */
    const char *source;               /* where the measurements come from (may be NULL) */
    const char *cost_model;           /* the predictor label(s) (may be NULL) */
    const char *notes;                /* set-wide approximations, one per line (may be NULL) */
    const char *version;              /* llmsim's version */
    int64_t rows, ok, cannot, failed; /* measurements by status */
} store_validation_info;

typedef enum store_vstatus { STORE_V_OK = 0, STORE_V_CANNOT, STORE_V_FAILED } store_vstatus;

typedef struct store_vrow {
    int64_t seq;          /* the row's order in the set, from 0 */
    const char *row_id;   /* the row's name */
    const char *grp;      /* its group */
    int line;             /* its line in the table or the set file (0: none, NULL) */
    int64_t measurements; /* measurements it stands for (>= 1) */
    store_vstatus status;
    const char *reason; /* cannot / failed: why (may be NULL) */
    const char *approx; /* approximations (may be NULL) */
    int64_t run_id;     /* the run that predicted it; 0 = none (NULL) */
} store_vrow;

typedef struct store_vstat {
    const char *grp;    /* "all" for the whole set */
    const char *metric; /* e.g. mean_ttft_ms, time_us */
    int n;
    double median_abs, p90_abs, worst_abs, signed_median; /* relative errors */
    const char *worst_row;                                /* the row of the worst error */
} store_vstat;

typedef struct store_vwriter store_vwriter;

/* Begins the transaction and records the heading. NULL with err (nothing written). */
store_vwriter *store_validation_begin(store *s, const store_validation_info *info, sim_err *err);
/* Adds a row; then the values of its metrics (order: the metric's place in the set, from 0;
 * error = predicted / measured - 1, NULL when either is not a number); then, once, the
 * statistics. 0, or -1 with err (the writer is then only good for store_validation_abort). */
int store_validation_row(store_vwriter *w, const store_vrow *r, sim_err *err);
int store_validation_value(store_vwriter *w, int64_t seq, const char *metric, int order,
                           double measured, double predicted, sim_err *err);
int store_validation_stat(store_vwriter *w, const store_vstat *st, sim_err *err);
/* Commits; *id gets the validation's id. Frees w in every case. 0, or -1 with err (rolled
 * back). */
int store_validation_finish(store_vwriter *w, int64_t *id, sim_err *err);
/* Rolls back and frees w (NULL is fine). */
void store_validation_abort(store_vwriter *w);

/* ---- reading ---- */

typedef struct store_validation_meta {
    int64_t id;
    char name[64];
    char kind[16];
    char file[512];
    char cost_model[256];
    char version[32];
    char created[32];
    int64_t rows, ok, cannot, failed;
} store_validation_meta;

/* Reads validation id. 0, or -1 with err ("no validation 3 in this database"; a database older
 * than schema version 4 has none). */
int store_validation_get(store *s, int64_t id, store_validation_meta *out, sim_err *err);

/* Calls fn for each value of each row that was predicted (status ok), in (metric order, row)
 * order; strings are valid during the call. fn returns 0 to go on. 0, or -1 with err, or what
 * fn returned. */
int store_validation_points(store *s, int64_t id,
                            int (*fn)(void *arg, const char *metric, const char *grp,
                                      const char *row_id, double measured, double predicted),
                            void *arg, sim_err *err);

#endif
