/*
 * study_sweep.h: sweeps: the cross product of varied scenario keys, each point run `reps` times
 * with seeds S, S+1, ... (the same seeds at every point: common random numbers, so comparisons
 * between points are paired), in worker processes, each point an ordinary run written with its
 * sweep_points row in one transaction. A sweep is identified by a digest of everything that
 * determines its points, so running it again skips the points already stored.
 *
 * Point p's value index of key k: key 0 varies slowest (p is a mixed-radix number over the
 * keys' value counts). Task t is point t / reps, repetition t % reps. A task's seed depends on
 * its point and repetition only, so any split of the tasks (--jobs, --shard I/N) gives the same
 * runs.
 *
 * One writer: workers never open the database for writing. Each simulates its tasks and spools
 * the runs (store_run_begin_spool: rows streamed to a file, so a worker's memory does not grow
 * with the rows it stores); the sweep's own process replays each into the database with its
 * sweep_points row in one transaction. So no run is lost to another writer's lock, and two
 * identical sweeps started at once neither duplicate a point nor fail on one: a task another
 * process has stored is skipped before it is sent to a worker, and a run whose point was
 * stored meanwhile is rolled back quietly.
 *
 * Parse once: a worker reads the scenario file once (study_sweep_check keeps its text), keeps
 * the loaded scenario and cost model of its last point, and keeps whole-file length tables
 * (scn_cache) for all its tasks.
 */
#ifndef STUDY_SWEEP_H
#define STUDY_SWEEP_H

#include <stdint.h>

#include "store_merge.h"
#include "store_sweep.h"
#include "study.h"

#define STUDY_MAX_KEYS 8
#define STUDY_MAX_VALUES 1024
/* points x repetitions: a task is an int32 (study_pool) */
#define STUDY_MAX_TASKS ((int64_t)INT32_MAX)
/* points of one sweep: each is checked (its scenario loaded) before any runs, and the table
 * holds a cell per point and metric; a million points is weeks of simulation */
#define STUDY_MAX_POINTS ((int64_t)1 << 20)

typedef struct study_vary {
    char key[128];
    int n;
    char *val[STUDY_MAX_VALUES];
} study_vary;

typedef struct study_sweep {
    union {
        struct {
            STUDY_RUN_FIELDS /* the --set overrides go before the varied keys; without a seed,
                                each point runs with its scenario's */
        };
        study_run_settings run; /* the same fields, whole */
    };
    study_vary v[STUDY_MAX_KEYS];
    int nv;
    int reps;
    int shard, nshards; /* --shard I/N: the tasks t with t % N == I - 1; nshards 0: all tasks */
    int npoints;        /* filled by study_sweep_check */
    int64_t id;         /* the sweep's id in the database */
    char spec[4096];    /* the varied keys and values, as stored */
    char *text;         /* the scenario file, read once by study_sweep_check */
} study_sweep;

/* Parses "KEY=V1,V2,..." or "KEY=START:STOP:STEP" (START, START+STEP, ... <= STOP) into v.
 * 0, or -1 with err. Values are freed by study_sweep_free. */
int study_vary_parse(const char *arg, study_vary *v, sim_err *err);
/* Adds a parsed --vary to sw (at most STUDY_MAX_KEYS). 0, or -1 with err. */
int study_sweep_add_vary(study_sweep *sw, const char *arg, sim_err *err);
/* Parses "I/N" (1 <= I <= N) into sw's shard. 0, or -1 with err. */
int study_sweep_set_shard(study_sweep *sw, const char *arg, sim_err *err);
/* Whether task t belongs to sw's shard (always, without one). */
int study_sweep_in_shard(const study_sweep *sw, int64_t t);
void study_sweep_free(study_sweep *sw);
/* The number of points a stored `varied` text ("k1=v1,v2;k2=v3") describes; 0 when it is not
 * one. */
int64_t study_sweep_points_of(const char *varied);

/* Value index of key k at point p. */
int study_sweep_digit(const study_sweep *sw, int p, int k);
/* "k1=v1,k2=v2" of point p into buf. */
void study_sweep_params(const study_sweep *sw, int p, char *buf, size_t len);
/* Loads the scenario of point p. 0, or -1 with err. */
int study_sweep_load_point(const study_sweep *sw, int p, scn_scenario *scn, sim_err *err);

/* Sizes the grid and checks that every point's scenario loads, before anything is stored or
 * run; base (filled; the caller frees it with scn_free, also after a failure) is the scenario
 * without the varied keys. 0, or -1 with err. */
int study_sweep_check(study_sweep *sw, scn_scenario *base, sim_err *err);
/* Finds or creates the sweep in s (sw->id), records the parameters of the points in sw's
 * shard, and lists the shard's tasks not stored yet into *pending (caller frees) and their
 * count into *npending; *stored gets the count of the shard's tasks already stored. 0, or -1
 * with err. */
int study_sweep_prepare(study_sweep *sw, store *s, const scn_scenario *base, int32_t **pending,
                        int *npending, int *stored, sim_err *err);

/* What study_sweep_run did with the pending tasks. */
typedef struct study_sweep_stats {
    int stored;  /* runs written */
    int failed;  /* runs that failed (in a worker, or when written) or were lost with a worker */
    int skipped; /* tasks another process stored first */
} study_sweep_stats;

/* Runs the pending tasks in `jobs` worker processes and writes their runs into s (this
 * process is the only writer). done (may be NULL) is called here for every task finished,
 * failed or skipped (ok 1, msg "" for finished; ok 1 with a note for skipped). Returns 0 with
 * *st filled, or -1 with err when the workers cannot start. */
int study_sweep_run(const study_sweep *sw, store *s, const char *db, int jobs,
                    const int32_t *pending, int n,
                    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished,
                                 int total),
                    void *arg, study_sweep_stats *st, sim_err *err);

/* ---- merging shards (and any llmsim databases) ---- */

typedef struct study_sweep_merge_ops {
    /* after each input is merged */
    void (*input)(void *arg, const char *in, const store_merge_stats *st);
    /* then for every sweep of the output: expected = its points x repetitions (0 when its
     * stored description cannot be read) */
    void (*sweep)(void *arg, const store_sweep_row *row, int64_t expected);
} study_sweep_merge_ops;

/* Merges the databases in[0..n-1] into out (created when missing), each input in one
 * transaction (store_merge), then reports every sweep of out. Every input is checked (exists,
 * is an llmsim database no newer than this one) before out is opened. 0, or -1 with err at the
 * first input that cannot be merged: the inputs before it stay merged into an out that existed
 * (merging is idempotent, so the same command can be run again). A missing out is built whole
 * under a private name beside it (OUT.merge-PID-N) and linked into place only when every input
 * merged, so a failure never removes a database at out, which another process may have opened
 * meanwhile; an out another process created meanwhile gets what was built merged into it. */
int study_sweep_merge(const char *out, const char *const *in, int n,
                      const study_sweep_merge_ops *ops, void *arg, sim_err *err);

/* The mean and 95% interval of one metric at one point over its stored repetitions, and the
 * paired difference against a base point (same seeds). */
typedef struct study_cell {
    sim_interval v;
    int n;         /* repetitions with a value */
    int saturated; /* repetitions flagged saturated */
    double *rep;   /* per repetition, NAN when missing */
} study_cell;

typedef struct study_sweep_table {
    int nmetrics, npoints, reps;
    const char *const *metrics;
    study_cell *c; /* c[m * npoints + p] */
} study_sweep_table;

/* The stored sweep `id` of s as a study_sweep (its varied keys and values, points,
 * repetitions, base seed and id), to summarise it as the sweep command does (a report). 0, or
 * -1 with err (no such sweep, or a description that does not match its stored points). Free
 * with study_sweep_free. */
int study_sweep_from_store(store *s, int64_t id, study_sweep *sw, sim_err *err);

/* Reads the stored values of the metrics at every point of sw. 0, or -1 with err. Free with
 * study_sweep_table_free. */
int study_sweep_table_load(const study_sweep *sw, store *s, const char *const *metrics,
                           int nmetrics, study_sweep_table *t, sim_err *err);
void study_sweep_table_free(study_sweep_table *t);
static inline study_cell *study_sweep_cell(const study_sweep_table *t, int m, int p)
{
    return &t->c[m * t->npoints + p];
}
/* The varied key whose first value is the base of paired differences (scheduler.name), or -1
 * when the sweep does not vary it over two values or more. */
int study_sweep_paired_key(const study_sweep *sw);
/* Point p's base for paired differences along key k: the point with k's first value. */
int study_sweep_base_point(const study_sweep *sw, int p, int k);
/* The paired difference (point p minus base) of metric m over the repetitions both have. */
sim_interval study_sweep_paired(const study_sweep_table *t, int m, int p, int base);
/* The repetitions both point p and base have (0: no paired difference; in a shard's database
 * the base's runs may be in another shard). */
int study_sweep_paired_reps(const study_sweep_table *t, int p, int base);

#endif
