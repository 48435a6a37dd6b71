/*
 * store_run.h: writing one run (its row, requests and their spans, iterations, metrics) in one
 * transaction.
 */
#ifndef LLMSIM_STORE_RUN_H
#define LLMSIM_STORE_RUN_H

#include <stdint.h>
#include <stdio.h>

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
/* The run's fleet timeline (eng_fleet_timeline): n windows over the pools `pools` says,
 * written with the run's row at every level (tables fleet_windows, and fleet_pools for a run of
 * prefill and decode pools) when it finishes; win and pools are copied. A failure is reported
 * by finish. */
void store_run_fleet(store_run *w, const eng_fleet_window *win, int64_t n,
                     const eng_fleet_pools *pools);
/* The recorder ops that call the writers above (st = the store_run). */
const eng_recorder_ops *store_run_recorder(void);
/* Called inside the run's transaction just before it commits (to add rows that must land with
 * the run, such as a sweep point). Returns 0; -1 with err to roll everything back as a
 * failure; 1 to roll everything back quietly (the run is not wanted after all: another process
 * stored the same sweep point first). */
typedef int (*store_run_hook)(void *arg, store *s, int64_t run_id, sim_err *err);

/* Inserts the metrics, runs hook (may be NULL) and commits; *run_id (may be NULL) gets the
 * run's id. Returns 0; 1 when the hook asked for a quiet roll-back; -1 with err after rolling
 * back. Frees w. A spooled run (store_run_begin_spool) takes no hook: finish writes its metrics
 * and end mark to the spool and flushes it. */
int store_run_finish(store_run *w, const eng_metric *m, int n, store_run_hook hook, void *arg,
                     int64_t *run_id, sim_err *err);
/* Rolls back and frees w. */
void store_run_abort(store_run *w);

/*
 * Spooling: a run written by a process that must not touch the database (a sweep worker) goes
 * to a file as tagged binary records, and the one process that writes the database replays it.
 *
 * store_run_begin_spool starts a run whose rows (store_run_request, store_run_iteration, the
 * recorder) and metrics (store_run_finish, without a hook) are appended to f as they come:
 * nothing is kept in memory beyond f's buffer, however many rows the run has. Write errors are
 * reported by store_run_finish. info's strings must stay valid until finish. Never NULL.
 */
store_run *store_run_begin_spool(FILE *f, const store_run_info *info);

/* What store_run_replay read and wrote. */
typedef struct store_run_summary {
    int64_t run_id; /* in the database; 0 when nothing was committed */
    uint64_t seed;
    eng_metric m[ENG_MAX_METRICS];
    int n;
} store_run_summary;

/*
 * Writes one spooled run (the len bytes at f's position, as store_run_begin_spool wrote them)
 * into s through store_run_begin (streaming, one transaction), store_run_finish and hook;
 * *sum gets the seed and metrics before hook runs (so hook may read them through its arg), and
 * the run's id. Returns store_run_finish's result (0, 1 when hook declined the run), or -1 with
 * err when the spool is truncated or malformed or the database fails (nothing committed).
 */
int store_run_replay(store *s, FILE *f, int64_t len, store_run_hook hook, void *arg,
                     store_run_summary *sum, sim_err *err);

#endif
