/*
 * store_query.h: reading a results database: runs' metadata, a run's iterations and requests,
 * request latencies, sweeps and their curves, counts; and generic SQL reads for tests and
 * ad-hoc questions.
 *
 * Everything here only reads, so it works on a store opened with store_open_readonly (plots
 * beside a running sweep). Every function returns 0 (or a count), or -1 with err naming the
 * database and what failed ("DB: no run 7 in this database"). Walks that take a callback call
 * it once per row; the callback returns 0 to go on, and any other value stops the walk and is
 * returned as is (a callback that fails sets err itself). Strings handed to a callback are
 * valid only during the call.
 */
#ifndef LLMSIM_STORE_QUERY_H
#define LLMSIM_STORE_QUERY_H

#include <stdint.h>

#include "engine.h"
#include "store.h"

/* ---------------- runs ---------------- */

/* A run's row (strings truncated to fit; "" where not stored). */
typedef struct store_run_meta {
    int64_t id;
    char name[256];
    char scheduler[64];
    char version[64];
    char profile[256]; /* the predictor's label */
    char model[128];
    char gpu[64];
    char dtype[16];
    char hardware[512];
    char level[16];   /* store level: summary | iterations | requests */
    char created[32]; /* UTC, ISO 8601 */
    uint64_t seed;
    int replicas;         /* 0 when not stored */
    int tensor_parallel;  /* 0 when not stored */
    double offered_rate;  /* nominal requests/s; 0 = none or not stored */
    int64_t num_requests; /* 0 = not stored */
    int64_t kv_blocks;    /* KV blocks of one replica; 0 = not stored (before version 3) */
} store_run_meta;

/* Reads run id into *out. 0, or -1 with err ("no run 7 in this database"). */
int store_run_get(store *s, int64_t id, store_run_meta *out, sim_err *err);
/* Calls fn for every run, in id order. */
int store_run_list(store *s, int (*fn)(void *arg, const store_run_meta *m), void *arg,
                   sim_err *err);
/* Rows the run has in the requests / iterations table (0 for a run stored without them, or no
 * such run); -1 with err. */
int64_t store_run_count_requests(store *s, int64_t run, sim_err *err);
int64_t store_run_count_iterations(store *s, int64_t run, sim_err *err);
/* Up to max of the run's metrics, in name order, into out; returns how many, or -1 with err. */
int store_run_metrics(store *s, int64_t run, eng_metric *out, int max, sim_err *err);
/* The run's scenario text (overrides applied; malloc'd, the caller frees) into *text. 0, or -1
 * with err ("no run 7"). */
int store_run_scenario(store *s, int64_t run, char **text, sim_err *err);

/* ---------------- a run's rows, by cursor ---------------- */

/* The run's iterations in (replica, iter) order. Open returns NULL with err; next returns 1
 * with *out filled (shape fields a version-1 row lacks are 0), 0 at the end, -1 with err; close
 * frees (NULL is fine). A run without iteration rows, or no such run, gives no rows. */
typedef struct store_iter_cursor store_iter_cursor;
store_iter_cursor *store_iterations_open(store *s, int64_t run, sim_err *err);
/* Only the iterations that overlap the window [from_ns, to_ns] (start <= to, end >= from). */
store_iter_cursor *store_iterations_open_range(store *s, int64_t run, int64_t from_ns,
                                               int64_t to_ns, sim_err *err);
int store_iterations_next(store_iter_cursor *c, eng_iter_rec *out, sim_err *err);
void store_iterations_close(store_iter_cursor *c);

/* The run's requests in id order, as eng_requests with the stored fields set (id, replica,
 * prompt, output, status, reject, times, preemptions, scheduled) and every other field 0;
 * a time never reached is -1. Same contract as the iteration cursor. */
typedef struct store_rq_cursor store_rq_cursor;
store_rq_cursor *store_requests_open(store *s, int64_t run, sim_err *err);
/* Only the requests whose lifetime (arrival to finish; a request that never finished lasts to
 * the end) overlaps the window [from_ns, to_ns]. */
store_rq_cursor *store_requests_open_range(store *s, int64_t run, int64_t from_ns, int64_t to_ns,
                                           sim_err *err);
int store_requests_next(store_rq_cursor *c, eng_request *out, sim_err *err);
void store_requests_close(store_rq_cursor *c);

/* The run's scheduled spans (request_spans_all: every span of every finished request) in
 * (request, span) order, only those overlapping
 * [from_ns, to_ns] (INT64_MIN, INT64_MAX: all). Same contract as the cursors above. A database
 * older than version 3 has no spans: store_has_spans says so, and the cursor gives no rows. */
typedef struct store_span_cursor store_span_cursor;
int store_has_spans(const store *s);
store_span_cursor *store_spans_open(store *s, int64_t run, int64_t from_ns, int64_t to_ns,
                                    sim_err *err);
int store_spans_next(store_span_cursor *c, eng_span_rec *out, sim_err *err);
void store_spans_close(store_span_cursor *c);
/* Spans the run has in request_spans_all (0 before version 3); -1 with err. */
int64_t store_run_count_spans(store *s, int64_t run, sim_err *err);

/* The run's fleet timeline (fleet_windows and fleet_pools: an autoscaled run's, engine/fleet.h)
 * in window order into *out (malloc'd, the caller frees; NULL when none), each window's GPU
 * time and its pools' replica times filled (a row from before schema 6: gpus times its replica
 * time, one pool), and its pools with a replica's GPUs each into *pools. Returns the windows:
 * 0 when the run has none (not autoscaled, or stored before schema version 5:
 * store_has_fleet says which), or -1 with err. */
int store_has_fleet(const store *s);
int64_t store_run_fleet_windows(store *s, int64_t run, eng_fleet_window **out,
                                eng_fleet_pools *pools, sim_err *err);

/* Per-request latencies of finished requests, in ms: TTFT = first token - arrival; TPOT =
 * (finish - first token) / (output - 1), requests with more than one output token; E2E =
 * finish - arrival. */
typedef enum store_latency { STORE_LAT_TTFT = 0, STORE_LAT_TPOT, STORE_LAT_E2E } store_latency;

/* The run's values of m, in request id order, into *values (malloc'd, the caller frees; NULL
 * when there are none). Returns the count, or -1 with err. */
int64_t store_request_latencies(store *s, int64_t run, store_latency m, double **values,
                                sim_err *err);

/* ---------------- sweeps ---------------- */

typedef struct store_sweep_meta {
    int64_t id;
    char key[80];
    char file[512];
    char varied[1024]; /* the varied keys and values as given */
    char created[32];
    int reps;
    uint64_t base_seed;
} store_sweep_meta;

/* Reads sweep id into *out. 0, or -1 with err ("no sweep 9 in this database"). */
int store_sweep_get(store *s, int64_t id, store_sweep_meta *out, sim_err *err);
/* Calls fn for each distinct key the sweep varies, in key order. */
int store_sweep_keys(store *s, int64_t id, int (*fn)(void *arg, const char *key), void *arg,
                     sim_err *err);

/* Calls fn for each (point, key, value) the sweep records, in (point, key) order. */
int store_sweep_params(store *s, int64_t id,
                       int (*fn)(void *arg, int64_t point, const char *key, const char *value),
                       void *arg, sim_err *err);

/* What a latency curve reads of each stored (point, rep) of a sweep. */
typedef struct store_curve_query {
    int64_t sweep;
    const char *y_metric; /* metrics-table name of y, e.g. "p99_ttft_ms" */
    const char *x_metric; /* metrics-table name of x, e.g. "output_throughput"; "offered_rate"
                             falls back to the run's offered_rate column */
    const char *x_param;  /* a varied key whose value (as a number) is x when the point has it,
                             before x_metric; NULL: none */
    const char *by;       /* a varied key whose value names the series; NULL: the scheduler */
} store_curve_query;

typedef struct store_curve_row {
    int64_t point, rep, run_id;
    int saturated;
    int has_y, has_x; /* 0: the run has no such value */
    double y, x;
    const char *series; /* NULL when the point lacks the key `by` */
    double rejected;    /* requests the run rejected (0 when none or not stored) */
} store_curve_row;

/* Calls fn for each stored (point, rep) of q->sweep in (point, rep) order. */
int store_sweep_curve(store *s, const store_curve_query *q,
                      int (*fn)(void *arg, const store_curve_row *r), void *arg, sim_err *err);

/* ---------------- generic reads ---------------- */

/* Called once per result row with the column names and values as text (a NULL value is a NULL
 * pointer), like sqlite3_exec's callback; returns 0 to go on. */
typedef int (*store_row_fn)(void *arg, int ncols, const char *const *names,
                            const char *const *vals);

/* Runs the read-only statements in sql (a statement that would write is refused: use
 * store_exec), calling fn (may be NULL) for each row. 0, fn's non-zero value, or -1 with err. */
int store_query(store *s, const char *sql, store_row_fn fn, void *arg, sim_err *err);
/* The first column of the first row of the read-only statement sql into *out (a NULL value
 * reads as 0, or NaN for a double). 0, or -1 with err (also when there is no row). */
int store_query_int(store *s, const char *sql, int64_t *out, sim_err *err);
int store_query_double(store *s, const char *sql, double *out, sim_err *err);

#endif
