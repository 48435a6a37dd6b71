/*
 * store_int.h: what the store's own files share: the sqlite3 handle and helpers.
 * Included only by sim/store*.c.
 */
#ifndef LLMSIM_STORE_INT_H
#define LLMSIM_STORE_INT_H

#include <sqlite3.h>

#include "store.h"

struct store {
    sqlite3 *db;
    char path[512];
};

/* Prepares sql; returns NULL with err set. */
sqlite3_stmt *store_prepare(store *s, const char *sql, sim_err *err);
/* Sets err from the connection's last error, prefixed with what failed; returns -1. */
int store_fail(store *s, sim_err *err, const char *what);

/* Each store file contributes CREATE TABLE IF NOT EXISTS statements to the schema. */
extern const char store_schema_runs[];     /* store.c: runs, requests, iterations, metrics */
extern const char store_schema_profiles[]; /* store_profile.c */
extern const char store_schema_sweeps[];   /* store_sweep.c */

#endif
