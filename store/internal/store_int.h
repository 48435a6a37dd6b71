/*
 * store_int.h: what the store's own files share: the sqlite3 handle and helpers.
 * Included only by the .c files of store/: the one place in llmsim that includes sqlite3.h.
 */
#ifndef LLMSIM_STORE_INT_H
#define LLMSIM_STORE_INT_H

#include <sqlite3.h>

#include "predictor.h"
#include "store.h"

/* Statements kept prepared on a connection for its life (the run writer's; store_close
 * finalizes them). */
enum {
    STORE_ST_RUN = 0, /* INSERT INTO runs */
    STORE_ST_RQ1,     /* one request row */
    STORE_ST_IT1,     /* one iteration row */
    STORE_ST_RQN,     /* a batch of request rows */
    STORE_ST_ITN,     /* a batch of iteration rows */
    STORE_ST_SP1,     /* one request span row */
    STORE_ST_SPN,     /* a batch of request span rows */
    STORE_ST_METRIC,  /* one metric */
    STORE_ST_COUNT
};

struct store {
    sqlite3 *db;
    int version; /* the schema version the database follows */
    char path[512];
    sqlite3_stmt *cached[STORE_ST_COUNT]; /* NULL until first used */
    int busy;                             /* the last failure was a lock another connection held */
    int timeout_ms;                       /* how long a statement waits for another's lock */
    int depth;                            /* transactions open (store_begin nests) */
};

/* Prepares sql; returns NULL with err set. */
sqlite3_stmt *store_prepare(store *s, const char *sql, sim_err *err);
/* Prepares sql and binds id to its first parameter (the id the statement is about: a run, sweep
 * or search looked up, or the parent of the rows it inserts); returns NULL with err set. */
sqlite3_stmt *store_prepare_id(store *s, const char *sql, int64_t id, sim_err *err);
/* Sets err from the connection's last error, prefixed with what failed; returns -1. */
int store_fail(store *s, sim_err *err, const char *what);
/* Steps st once and finalizes it; 0 when it ran (SQLITE_DONE or a row), else -1 with err
 * naming what failed. */
int store_step_once(store *s, sqlite3_stmt *st, const char *what, sim_err *err);
/* One row of a statement, for store_each_row: 0 to go on, non-zero (returned) to stop. */
typedef int (*store_stmt_row_fn)(void *ctx, sqlite3_stmt *st);
/* Steps st to its end, calling row per row until one returns non-zero, and finalizes it.
 * Returns that non-zero value, 0 at the end, or -1 with err naming what failed. A NULL st (a
 * preparation that failed, err set) returns -1 at once, so a caller can pass store_prepare's
 * result unchecked. */
int store_each_row(store *s, sqlite3_stmt *st, store_stmt_row_fn row, void *ctx, const char *what,
                   sim_err *err);
/* Steps st, looked up by id, to its one row: 0 with the row current; -1 with err and st
 * finalized when there is none ("no NOUN ID in this database") or reading failed (WHAT). */
int store_one_row(store *s, sqlite3_stmt *st, const char *noun, int64_t id, const char *what,
                  sim_err *err);
/* A growing SQL text: p (NUL-terminated, NULL while empty) is the caller's to free. */
typedef struct store_sql {
    char *p;
    size_t n, cap;
} store_sql;
/* Appends the formatted text to b, growing it as needed. */
void store_sql_add(store_sql *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Binds text, or NULL when v is NULL. */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Copies column i's text into out (cap bytes, truncated; "" for NULL). */
void store_col_text(sqlite3_stmt *st, int i, char *out, size_t cap);
/* Reads an iteration's shape details from six columns from first on (prefill_seqs,
 * prefill_pairs, prefill_kv, prefill_q2, decode_ctx, emit_seqs), and its tokens from the
 * prefill tokens and decode sequences already in sh (query.c). */
void store_col_shape(sqlite3_stmt *st, int first, eng_shape *sh);

/* Each store file contributes CREATE TABLE IF NOT EXISTS statements to the schema. */
extern const char store_schema_runs[];     /* store.c: runs, requests, iterations, metrics */
extern const char store_schema_profiles[]; /* profile.c */
extern const char store_schema_sweeps[];   /* sweep.c */
extern const char store_schema_capacity[]; /* capacity.c (version 2) */

/* validation.c (version 4) */
extern const char store_schema_validation[];

#endif
