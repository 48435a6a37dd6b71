/*
 * store.c: opening the results database, its schema and version, and the run writer.
 *
 * Schema version 1. A run is written inside one transaction with prepared statements: the run
 * row first (to get its id), rows as the simulation produces them, the metrics last; any
 * failure rolls everything back, so the database never holds half a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_run.h"

const char store_schema_runs[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY, name TEXT, scenario TEXT NOT NULL, scheduler TEXT NOT NULL,"
    " seed INTEGER NOT NULL, version TEXT NOT NULL, profile TEXT NOT NULL, model TEXT, gpu TEXT,"
    " dtype TEXT, replicas INTEGER, tensor_parallel INTEGER, hardware TEXT, store_level TEXT,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE IF NOT EXISTS requests ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), req_id INTEGER NOT NULL, replica INTEGER,"
    " arrival_ns INTEGER NOT NULL, first_scheduled_ns INTEGER, last_scheduled_ns INTEGER,"
    " first_token_ns INTEGER, finish_ns INTEGER, prompt_tokens INTEGER NOT NULL,"
    " output_tokens INTEGER NOT NULL, preemptions INTEGER NOT NULL, scheduled INTEGER NOT NULL,"
    " status TEXT NOT NULL, reject_reason TEXT, PRIMARY KEY (run_id, req_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS iterations ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), replica INTEGER NOT NULL,"
    " iter INTEGER NOT NULL, start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " cpu_ns INTEGER NOT NULL, gpu_ns INTEGER NOT NULL, num_seqs INTEGER NOT NULL,"
    " prefill_tokens INTEGER NOT NULL, decode_tokens INTEGER NOT NULL,"
    " kv_blocks_used INTEGER NOT NULL, preempted INTEGER NOT NULL, prefill_seqs INTEGER,"
    " prefill_pairs REAL, prefill_kv REAL, prefill_q2 REAL, decode_ctx INTEGER,"
    " emit_seqs INTEGER, PRIMARY KEY (run_id, replica, iter)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS metrics ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL,"
    " PRIMARY KEY (run_id, name)) WITHOUT ROWID;";

int store_fail(store *s, sim_err *err, const char *what)
{
    return sim_errf(err, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

sqlite3_stmt *store_prepare(store *s, const char *sql, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        store_fail(s, err, "preparing a statement");
        return NULL;
    }
    return st;
}

int store_exec(store *s, const char *sql, sim_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sim_errf(err, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int schema_version(store *s, int *v, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT version FROM schema_version", err);
    if (!st)
        return -1;
    *v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return 0;
}

static int create_schema(store *s, sim_err *err)
{
    int v = 0;
    if (store_exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                   err) ||
        schema_version(s, &v, err))
        return -1;
    if (v > STORE_SCHEMA_VERSION)
        return sim_errf(err, "%s: schema version %d is newer than this llmsim's (%d)", s->path, v,
                        STORE_SCHEMA_VERSION);
    if (store_begin(s, err))
        return -1;
    if (store_exec(s, store_schema_runs, err) || store_exec(s, store_schema_profiles, err) ||
        store_exec(s, store_schema_sweeps, err))
        goto fail;
    if (v == 0) {
        char sql[96];
        snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES (%d)", STORE_SCHEMA_VERSION);
        if (store_exec(s, sql, err))
            goto fail;
    }
    return store_commit(s, err);
fail:
    store_rollback(s);
    return -1;
}

/* Each connection is used by one thread only, so SQLite's per-connection mutex (taken on every
 * bind and step in its default serialized mode) is only cost: open without it. */
static store *open_with(const char *path, int flags, sim_err *err)
{
    store *s = sim_xcalloc(1, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        sim_errf(err, "%s: cannot open database: %s", path,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 10000);
    if (store_exec(s, "PRAGMA foreign_keys=ON", err) != 0) {
        store_close(s);
        return NULL;
    }
    return s;
}

store *store_open(const char *path, sim_err *err)
{
    store *s =
        open_with(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, err);
    if (!s)
        return NULL;
    /* WAL lets readers (plots) run beside a writer (a sweep); synchronous=NORMAL is durable at
     * transaction boundaries in WAL mode, which is what one-transaction-per-run needs. */
    if (store_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", err) != 0 ||
        create_schema(s, err) != 0) {
        store_close(s);
        return NULL;
    }
    return s;
}

store *store_open_readonly(const char *path, sim_err *err)
{
    store *s = open_with(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, err);
    if (!s)
        return NULL;
    int v = 0;
    if (schema_version(s, &v, err) != 0) {
        sim_errf(err, "%s: not an llmsim database", path);
        store_close(s);
        return NULL;
    }
    return s;
}

void store_close(store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s);
}

int store_begin(store *s, sim_err *err)
{
    return store_exec(s, "BEGIN IMMEDIATE", err);
}

int store_commit(store *s, sim_err *err)
{
    return store_exec(s, "COMMIT", err);
}

void store_rollback(store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}
