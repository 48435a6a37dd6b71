/*
 * store_run.h: writing one run (its row, requests and their spans, iterations, metrics) in one
 * transaction.
 */
#ifndef LLMSIM_STORE_RUN_H
#define LLMSIM_STORE_RUN_H

#include <stdint.h>

#include "engine.h"
#include "store.h"

/* How much of a run is stored: summary (runs + metrics), iterations (+ one row per iteration),
 * requests (+ one row per request: everything; the default). */
typedef enum store_level { STORE_SUMMARY = 0, STORE_ITERATIONS, STORE_REQUESTS } store_level;

/* Parses "summary", "iterations" or "requests"; -1 otherwise. */
int store_level_parse(const char *s, store_level *out);
const char *store_level_name(store_level l);

typedef struct store_run_info {
    const char *name, *scenario_text, *scheduler, *version, *profile, *model, *gpu, *dtype;
    const char *hardware;
    uint64_t seed;
    int replicas, tensor_parallel;
    store_level level;
    double offered_rate;  /* nominal requests/s of the workload; 0 = none (stored as NULL) */
    int64_t num_requests; /* requests the workload offers; 0 = not known (stored as NULL) */
    int64_t kv_blocks;    /* KV cache blocks of one replica; 0 = not known (stored as NULL) */
} store_run_info;

typedef struct store_run store_run;

/* Starts writing a run. Streaming (buffered = 0): begins the transaction and inserts the run
 * row now, rows go to SQLite as they come. Buffered: rows are kept in memory and everything is
 * written in one short transaction by store_run_finish, so parallel writers (sweep workers)
 * hold the database only briefly. info's strings must stay valid until finish. NULL with err
 * on failure (nothing written). */
store_run *store_run_begin(store *s, const store_run_info *info, int buffered, sim_err *err);
/* Row writers for the engine's recorder; a failure is remembered and reported by finish.
 * Requests and their scheduled spans (request_spans) are kept at the requests level,
 * iterations from the iterations level up. */
void store_run_request(store_run *w, const eng_request *rq);
void store_run_iteration(store_run *w, const eng_iter_rec *it);
void store_run_span(store_run *w, const eng_span_rec *sp);
/* The recorder ops that call the writers above (st = the store_run). */
const eng_recorder_ops *store_run_recorder(void);
/* Called inside the run's transaction just before it commits (to add rows that must land with
 * the run, such as a sweep point). Returns 0, or -1 with err to roll everything back. */
typedef int (*store_run_hook)(void *arg, store *s, int64_t run_id, sim_err *err);

/* Inserts the metrics, runs hook (may be NULL) and commits; *run_id (may be NULL) gets the
 * run's id. Returns 0, or -1 with err after rolling back. Frees w. */
int store_run_finish(store_run *w, const eng_metric *m, int n, store_run_hook hook, void *arg,
                     int64_t *run_id, sim_err *err);
/* Rolls back and frees w. */
void store_run_abort(store_run *w);

#endif
