/*
 * store.h: the SQLite results store (runs, requests, iterations, metrics, profiles, sweeps,
 * capacity searches, validations).
 *
 * Only the .c files of store/ include sqlite3.h; every other folder reads and writes a database
 * through the store's headers. A database identifies itself: its SQLite application_id is
 * STORE_APPLICATION_ID and its schema_version table says which version its tables follow.
 * Opening a database for writing creates the schema, or upgrades an older llmsim schema, in one
 * transaction; a database another program created is refused before anything is written.
 * Writers use prepared statements inside one transaction per run, so a failed run leaves
 * nothing behind.
 */
#ifndef LLMSIM_STORE_H
#define LLMSIM_STORE_H

#include <stdint.h>

#include "sim.h"

/* 6: fleet_windows.gpu_ns and the fleet_pools table (the prefill and decode pools of a
 * disaggregated run's fleet timeline, whose replicas may differ in GPUs).
 * 5: the fleet_windows table (an autoscaled run's fleet timeline) and the fleet_timeline view.
 * 4: the validation tables (store_validation.h). 3: the request_spans table (each request's
 * scheduled spans and how each ended) and runs.kv_blocks. 2: runs.offered_rate and
 * runs.num_requests, the capacity tables, the run_summary and sweep_curve views. 1: the first
 * schema (no application_id). */
#define STORE_SCHEMA_VERSION 6
/* PRAGMA application_id of an llmsim database: "LLMS" in ASCII. */
#define STORE_APPLICATION_ID 0x4C4C4D53

typedef struct store store;

/* Opens (creating when missing) the database at path, creates or upgrades its schema and
 * (re)creates its views. Returns NULL with err naming the file when it cannot be opened, is not
 * an SQLite database, was created by another program (its application_id is not llmsim's and
 * it holds no llmsim schema_version table: nothing is written to it), or has a newer schema.
 * Free with store_close. */
store *store_open(const char *path, sim_err *err);
/* Opens an existing database without creating or changing anything. NULL with err naming the
 * file when it cannot be opened or is not an llmsim database (another program's, or no
 * schema_version table). A version-1 database opens as it is: reads then see offered_rate and
 * num_requests as not stored. A WAL database on a read-only medium (its -shm index can be
 * neither opened nor created) is opened immutable, unless a non-empty -wal file beside it holds
 * commits the main file lacks (then refused, saying so). */
store *store_open_readonly(const char *path, sim_err *err);
void store_close(store *s);
/* Deletes the database file at path and its -journal, -wal and -shm files (closed first by the
 * caller): what a command that created it leaves after failing. */
void store_remove_files(const char *path);

/* Names in buf (len bytes) a database file of this process's own beside path, PATH.TAG-PID-N
 * (N counts this process's names), and removes what a process of the same id that died left
 * there, so a database can be built whole where no other process looks for it. */
void store_private_path(char *buf, size_t len, const char *path, const char *tag);

/* The path the store was opened with (for messages). */
const char *store_path(const store *s);
/* The schema version the open database follows (STORE_SCHEMA_VERSION after store_open). */
int store_schema_version(const store *s);

/* Whether the last failure on s was a lock another connection held (SQLITE_BUSY): trying again
 * later may succeed. */
int store_was_busy(const store *s);
/* How long a statement waits (retrying) for another connection's lock before failing: by
 * default STORE_BUSY_TIMEOUT_S, or $LLMSIM_DB_TIMEOUT seconds when set. A failure after the wait
 * names the process holding the lock and its command line (store_fail). Writers hold the lock
 * only to write a finished run (study_simulate stages a run's rows while it simulates). */
#define STORE_BUSY_TIMEOUT_S 60
void store_set_busy_timeout(store *s, int ms);
/* The wait store_set_busy_timeout set, in ms. */
int store_busy_timeout(const store *s);

/* Transactions: 0, or -1 with err. They nest: store_begin inside an open transaction starts a
 * savepoint, which its store_commit releases into the outer transaction (committed only with
 * it) and its store_rollback undoes alone. */
int store_begin(store *s, sim_err *err);
int store_commit(store *s, sim_err *err);
void store_rollback(store *s);

/* Runs SQL with no result rows; 0 or -1 with err. */
int store_exec(store *s, const char *sql, sim_err *err);

#endif
