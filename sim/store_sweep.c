/*
 * store_sweep.c: sweeps and their points.
 *
 * A sweep is identified by `key`, a digest of the scenario text, the varied keys and values,
 * the repetitions and the base seed, so running the same sweep again finds it and skips the
 * points already stored. A point's run and its sweep_points row are written in the same
 * transaction as the run, so a point is stored whole or not at all.
 */
#include "store_int.h"

const char store_schema_sweeps[] =
    "CREATE TABLE IF NOT EXISTS sweeps ("
    " id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, file TEXT, scenario TEXT NOT NULL,"
    " varied TEXT NOT NULL, reps INTEGER NOT NULL, base_seed INTEGER NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE IF NOT EXISTS sweep_points ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL,"
    " rep INTEGER NOT NULL, seed INTEGER NOT NULL,"
    " run_id INTEGER NOT NULL UNIQUE REFERENCES runs(id), params TEXT NOT NULL,"
    " saturated INTEGER NOT NULL, PRIMARY KEY (sweep_id, point, rep)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS sweep_params ("
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL,"
    " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (sweep_id, point, key))"
    " WITHOUT ROWID;";
