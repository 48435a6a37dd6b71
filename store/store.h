/*
 * store.h: the SQLite results store (runs, requests, iterations, metrics, profiles, sweeps).
 *
 * Only the store's files (sim/store*.c) include sqlite3.h. Opening a database creates or
 * upgrades its schema; schema_version records which version the tables follow. Writers use
 * prepared statements inside one transaction per run, so a failed run leaves nothing behind.
 */
#ifndef LLMSIM_STORE_H
#define LLMSIM_STORE_H

#include <stdint.h>

#include "sim.h"

#define STORE_SCHEMA_VERSION 1

typedef struct store store;

/* Opens (creating when missing) the database at path. Returns NULL with err naming the file
 * when it cannot be opened, is not a database, or has a newer schema. Free with store_close. */
store *store_open(const char *path, sim_err *err);
/* Opens an existing database without creating or changing anything. */
store *store_open_readonly(const char *path, sim_err *err);
void store_close(store *s);

/* Transactions: 0, or -1 with err. */
int store_begin(store *s, sim_err *err);
int store_commit(store *s, sim_err *err);
void store_rollback(store *s);

/* Runs SQL with no result rows; 0 or -1 with err. */
int store_exec(store *s, const char *sql, sim_err *err);

#endif
