/*
 * study_validate.h: `llmsim validate`: replaying measurements and reporting how far llmsim's
 * predictions are from them.
 *
 * A validation set is a YAML file (validation/<name>.yaml) that names its measurements and how
 * each becomes a prediction:
 *   - serving sets: each row becomes a run of a base scenario with overrides, mapped from the
 *     columns of a measurement table read in place (a CSV under ../shared/data, its path relative
 *     to the set file) or transcribed from a publication (each row citing its source); the run's
 *     summary metrics (mean TTFT, mean TPOT, ...) are compared with the measured ones;
 *   - operator sets: each measured point of a per-operator profiling table (Vidur's compute and
 *     network tables) is compared with the roofline's time for that one kernel at that shape.
 * Rows the mapping or the cost model cannot express are kept with the reason (status
 * STUDY_V_CANNOT) and counted, never dropped; rows whose run fails keep the error
 * (STUDY_V_FAILED). The error of a prediction is predicted / measured - 1. A serving set may
 * leave a warm-up out of the compared metrics (`warmup`: the first arrivals of each run, say
 * each client's first request of a closed loop); the stored run keeps all of its metrics.
 *
 * Ownership: a study_vset owns its rows and their strings; study_vset_free releases them.
 */
#ifndef STUDY_VALIDATE_H
#define STUDY_VALIDATE_H

#include <stdint.h>

#include "study.h"

#define STUDY_VMAX_METRICS 4

typedef enum study_vkind { STUDY_V_SERVING = 0, STUDY_V_OPERATORS } study_vkind;
/* REPEAT: the row repeats an earlier row's measurement (the set's `repeats`): listed, its
 * count 0, compared once through the earlier row. */
typedef enum study_vstatus {
    STUDY_V_OK = 0,
    STUDY_V_CANNOT,
    STUDY_V_FAILED,
    STUDY_V_REPEAT
} study_vstatus;

typedef struct study_vmetric {
    char name[48];   /* what is predicted: a summary metric (mean_ttft_ms) or time_us */
    char label[32];  /* as printed: TTFT, TPOT, time */
    char unit[8];    /* ms, us */
    char column[96]; /* table sets: the measured column */
} study_vmetric;

/* A validated group: the engine a scenario runs, its GPU generation, its kind of model, and
 * whether it is served aggregated or disaggregated. */
typedef struct study_vkey {
    char engine[32];     /* vllm, sglang, trtllm, tgi, or a scheduler policy's name */
    char generation[16]; /* ampere, ada, hopper, blackwell, blackwell-rtx, cdna, unknown */
    char kind[8];        /* dense, moe */
    char serving[8];     /* agg (one pool), pd (prefill and decode pools) */
} study_vkey;

typedef struct study_vrow {
    char *id;      /* the row's name (the table's id column, or operator and shape) */
    char *group;   /* the group its errors are summarised in */
    int line;      /* where it comes from: the table's line, or the set file's */
    int64_t count; /* measurements it stands for: 1, or a whole table that cannot be expressed */
    study_vstatus status;
    char *reason; /* CANNOT and FAILED: why; REPEAT: which row it repeats (NULL otherwise) */
    char *approx; /* the approximations it was predicted under, "; "-separated (NULL: none) */
    double measured[STUDY_VMAX_METRICS];  /* NAN: not measured */
    double predicted[STUDY_VMAX_METRICS]; /* NAN: not predicted */
    int64_t run_id;                       /* serving rows: the stored run (0: not stored) */
    int64_t run_at, run_len; /* serving rows: the spooled run's place in v->runs (run_len 0:
                                none), until study_vset_store writes it and sets run_id */
    char **sets;             /* serving rows: the scenario overrides */
    int nsets;
    int64_t warmup; /* serving rows: the first arrivals left out of the compared metrics */
    char *regime;   /* serving rows: the set's regime the row falls in (NULL: none) */
    study_vkey key; /* serving rows: its validated group (engine "" until its scenario loads) */
} study_vrow;

typedef struct study_vset {
    char path[512];
    char name[64];
    char description[1024];
    char source[1024]; /* where the measurements come from */
    study_vkind kind;
    study_vmetric metric[STUDY_VMAX_METRICS];
    int nmetrics;
    char scenario[512];   /* serving: the base scenario (a path) */
    char notes[4096];     /* set-wide approximations and remarks, one per line */
    char cost_model[256]; /* the cost model's label(s), filled as rows are predicted */
    study_vrow *rows;
    int nrows, cap;
    int64_t skipped; /* rows left out by a --match filter */
    FILE *runs;      /* the serving rows' spooled runs, until study_vset_store (NULL: none) */
} study_vset;

/* The folder of the shipped sets: $LLMSIM_VALIDATION_DIR when set, else the source tree's
 * validation/ (compiled in). */
const char *study_validation_dir(void);
/* The set file `name` names: name itself when it is a file, else <validation dir>/<name>.yaml.
 * 0, or -1 with err listing the shipped sets. */
int study_vset_path(const char *name, char *out, size_t len, sim_err *err);

/* A set's heading, read without its table: for `validate --list`. */
typedef struct study_vset_brief {
    char path[512];
    char name[64];
    char description[1024];
    char source[1024];
    study_vkind kind;
} study_vset_brief;
/* Calls fn for each *.yaml in the validation folder, in name order. Returns the number of sets,
 * or -1 with err (the folder cannot be read, or a set's heading is malformed). */
int study_vset_list(void (*fn)(void *arg, const study_vset_brief *b), void *arg, sim_err *err);

/*
 * Reads the set at path and expands its rows: every measurement of the table (or every
 * transcribed row) becomes a row, with its overrides and measured values, or with the reason it
 * cannot be expressed (a mapping that refuses it, a value with no mapping, a scenario the
 * overrides make invalid, a model or layout the cost model does not price, weights that do not
 * fit). Operator sets are predicted here too (the roofline is arithmetic). match (may be NULL)
 * keeps only the rows whose id contains it (v->skipped counts the others). Returns 0, or -1
 * with err naming the set file, the line and the key at fault (an unknown key, a missing
 * column, a malformed template, an override the base scenario refuses) or the table's file and
 * line. Free with study_vset_free (also after a failure).
 */
int study_vset_load(const char *path, const char *match, study_vset *v, sim_err *err);
void study_vset_free(study_vset *v);

/* An operator set from a stored profile's measured points (`validate --ops --profile NAME`):
 * each point against the roofline of the profile's model, GPU and tensor parallelism; match
 * as for study_vset_load. 0, or -1 with err (no such profile, a GPU the catalog does not have, a
 * model the roofline does not price). */
int study_vset_from_profile(store *s, const char *profile, const char *match, study_vset *v,
                            sim_err *err);

/*
 * Predicts the serving rows still to run, in `jobs` worker processes; with a database at db
 * (NULL: runs are not stored; it is created or upgraded here) each row's run at `level` is kept
 * in v->runs for study_vset_store, which writes it with the validation. done (may be NULL) is
 * called in this process after each row. A row whose run fails becomes STUDY_V_FAILED with the
 * error. Returns 0, or -1 with err when the workers cannot be started.
 */
int study_vset_run(study_vset *v, const char *db, int jobs, store_level level,
                   void (*done)(void *arg, int finished, int total), void *arg, sim_err *err);

/* Error statistics of one group and metric, over its rows with both values. */
typedef struct study_vstat {
    char group[160]; /* "all" for every row of the set */
    int metric;      /* index into the set's metrics */
    int n;
    double median_abs, p90_abs, worst_abs; /* of |predicted / measured - 1| */
    double signed_median;                  /* of predicted / measured - 1 */
    int worst_row;                         /* the row of the worst error */
} study_vstat;

/* The quantile p (0..1) of n sorted values, interpolated linearly between the closest ranks
 * (position (n - 1) p, as numpy's default). NAN when n == 0. */
double study_quantile(const double *sorted, int n, double p);
/* The error of row r's metric m: predicted / measured - 1, NAN when either is missing. */
double study_vrow_error(const study_vrow *r, int m);
/* The statistics per group (in order of first appearance) and metric, then "all" per metric.
 * *out is malloc'd (the caller frees); returns the count. */
int study_vset_stats(const study_vset *v, study_vstat **out);

/* What study_vset_stats_by groups the rows by. */
typedef enum study_vby {
    STUDY_VBY_GROUP = 0, /* the set's groups */
    STUDY_VBY_REGIME,    /* the set's regimes (rows in none are left out) */
    STUDY_VBY_VALIDATED  /* validated groups, "ENGINE GENERATION KIND SERVING" */
} study_vby;
/* Like study_vset_stats, grouped by `by`, without the "all" rows. Free *out with free(). */
int study_vset_stats_by(const study_vset *v, study_vby by, study_vstat **out);

/* ---- the TTFT residual in decode steps (vresid.c) ---- */

/* Prompt lengths a group's residual is broken down by (the shortest; the rest are counted). */
#define STUDY_VRESID_NPROMPT 8

/* What is left of a group's TTFT after the prediction, in the units a mechanism would leave it
 * in: a harness that counts a later token as the first adds whole decode steps (the row's
 * measured TPOT); a client that waits for another request to finish adds the closed loop's
 * time between completions (a gap: output tokens x measured TPOT / clients). */
typedef struct study_vresid {
    char group[160];  /* "all" for every row of the set */
    int n;            /* rows with measured and predicted TTFT and a measured TPOT */
    double median_ms; /* of measured - predicted TTFT */
    double steps_p25, steps_median, steps_p75; /* of that residual / measured TPOT */
    int few;                                   /* rows whose residual is 0.75 to 8.5 steps */
    int near_whole;      /* of those, within a quarter step of a whole number of steps */
    int ngap;            /* rows whose clients and output tokens are known */
    double gaps_median;  /* of the residual / (output tokens x measured TPOT / clients) */
    int npairs;          /* rows with a sibling that differs only in a longer output */
    double mixed_median; /* of the excess of a mixed step's time over its prediction that each
                            such pair implies, in ms (vresid.c); NAN when none */
    int ncycles;         /* of those pairs, the ones whose measured decode step is positive */
    double decode_error; /* median predicted / measured - 1 of a decode step of the closed loop's
                            cycle that each pair implies (vresid.c); NAN when none */
    double rest_error;   /* the same of the rest of the cycle: the clients' prefills and the time
                            per request outside the decode steps; NAN when none */
    int nseats;          /* pairs whose clients are known and whose measured cycle grows */
    double seats_median; /* of the seats short of the clients that each such pair implies: its
                            TTFT residual's growth / (measured cycle growth / clients), 1 where
                            one client always waits for a place (vresid.c); NAN when none */
    int nprompt;         /* prompt lengths in by_prompt, ascending */
    int prompt_more;     /* rows at prompt lengths past the STUDY_VRESID_NPROMPT shortest */
    struct {
        int tokens;            /* the rows' workload.prompt_tokens */
        int n;                 /* rows at that length */
        double median_ms;      /* of their residual */
        int nlife;             /* of those, rows with an output length and a predicted TPOT */
        double life_median_ms; /* of their request time's residual, measured - predicted TTFT +
                                  (output tokens - 1) x TPOT; NAN when none */
    } by_prompt[STUDY_VRESID_NPROMPT];
} study_vresid;

/* The residuals of a serving set whose metrics include mean_ttft_ms and mean_tpot_ms, per
 * group (in order of first appearance) with at least one row, then "all". A row's clients and
 * output tokens are its last workload.arrival.concurrency and workload.output_tokens overrides;
 * its sibling is the row of the longest output whose overrides are the same but for the output
 * tokens and memory.max_model_len; its prompt length, by which the residual is also given, its
 * last workload.prompt_tokens override (rows without one are left out of by_prompt), with the
 * residual of the request's whole time, first token and decode together.
 * *out is malloc'd (the caller frees; NULL when none); returns the count, 0 when none, or -1
 * when the set measures no TTFT or no TPOT. */
int study_vset_residuals(const study_vset *v, study_vresid **out);

/* ---- the validated error that travels with a prediction (verror.c) ---- */

typedef struct study_verror {
    char set[64];
    study_vkey key;
    char metric[32]; /* TTFT, TPOT, ... */
    int64_t n;
    double median_abs, p90_abs, signed_median;
} study_verror;

/* The validated group of scenario scn. */
void study_vkey_of(const scn_scenario *scn, study_vkey *k);
/* Writes the set's error per validated group and metric as CSV to path (set, engine,
 * generation, kind, serving, metric, n, median_abs, p90_abs, signed_median). 0, or -1 with
 * err. */
int study_verrors_write(const study_vset *v, const char *path, sim_err *err);
/* The table the project ships: <validation dir>/errors.csv, into buf. */
const char *study_verrors_path(char *buf, size_t len);
/* The entries (one per metric, at most max) of the group in the table at path nearest k: the
 * same engine, generation, kind and serving (*exact = 1), else the same engine, generation and
 * serving with the other kind. Returns
 * how many, 0 when no group is near, or -1 with err (the file cannot be read, a malformed
 * line). */
int study_verrors_nearest(const char *path, const study_vkey *k, study_verror *out, int max,
                          int *exact, sim_err *err);
/* One sentence for scenario scn from the shipped table: "TTFT validated to a median 18% ...
 * on 237 vllm hopper dense rows of aic-silicon-h100", or "not validated: ...". Returns buf. */
const char *study_verrors_describe(const scn_scenario *scn, char *buf, size_t len);
/* Counts of rows by status, each row weighted by its count. */
void study_vset_counts(const study_vset *v, int64_t *ok, int64_t *cannot, int64_t *failed);

/* Stores the set's rows (with the runs study_vset_run kept, setting each row's run_id), values
 * and statistics as one validation in s (one transaction); *id gets its id. 0, or -1 with err
 * (nothing written). */
int study_vset_store(study_vset *v, const study_vstat *st, int nst, store *s, int64_t *id,
                     sim_err *err);

#endif
