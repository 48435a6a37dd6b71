/*
 * sweep.c: sweeps and their points.
 *
 * A sweep is identified by `key`, a digest of the scenario text, the varied keys and values,
 * the repetitions and the base seed, so running the same sweep again finds it and skips the
 * points already stored. A point's run and its sweep_points row are written in the same
 * transaction as the run, so a point is stored whole or not at all.
 */
#include "store_int.h"
#include "store_sweep.h"

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

static int done(store *s, sqlite3_stmt *st, const char *what, sim_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return (rc == SQLITE_DONE || rc == SQLITE_ROW) ? 0 : store_fail(s, err, what);
}

int store_sweep_open(store *s, const char *key, const char *file, const char *scenario,
                     const char *varied, int reps, uint64_t base_seed, int64_t *id, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare(s,
                      "INSERT OR IGNORE INTO sweeps (key, file, scenario, varied, reps, base_seed)"
                      " VALUES (?,?,?,?,?,?)",
                      err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, file, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, scenario, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, varied, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, reps);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)base_seed);
    if (done(s, st, "creating the sweep", err))
        return -1;
    st = store_prepare(s, "SELECT id FROM sweeps WHERE key = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : store_fail(s, err, "finding the sweep");
}

int store_sweep_set_params(store *s, int64_t id, int point, int n, const char *const *keys,
                           const char *const *vals, sim_err *err)
{
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st =
            store_prepare_id(s, "INSERT OR IGNORE INTO sweep_params VALUES (?,?,?,?)", id, err);
        if (!st)
            return -1;
        sqlite3_bind_int(st, 2, point);
        sqlite3_bind_text(st, 3, keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, vals[i], -1, SQLITE_STATIC);
        if (done(s, st, "recording sweep parameters", err))
            return -1;
    }
    return 0;
}

int store_sweep_has(store *s, int64_t id, int point, int rep, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s, "SELECT 1 FROM sweep_points WHERE sweep_id = ? AND point = ? AND rep = ?", id, err);
    if (!st)
        return -1;
    sqlite3_bind_int(st, 2, point);
    sqlite3_bind_int(st, 3, rep);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, "reading sweep points");
}

int store_sweep_add(store *s, int64_t id, int point, int rep, uint64_t seed, int64_t run_id,
                    const char *params, int saturated, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare_id(s, "INSERT INTO sweep_points VALUES (?,?,?,?,?,?,?)", id, err);
    if (!st)
        return -1;
    sqlite3_bind_int(st, 2, point);
    sqlite3_bind_int(st, 3, rep);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)seed);
    sqlite3_bind_int64(st, 5, run_id);
    sqlite3_bind_text(st, 6, params, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, saturated);
    return done(s, st, "recording a sweep point", err);
}

int store_sweep_values(store *s, int64_t id, const char *name,
                       void (*fn)(void *arg, int point, int rep, double value, int saturated),
                       void *arg, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(
        s,
        "SELECT p.point, p.rep, m.value, p.saturated FROM sweep_points p JOIN metrics m"
        " ON m.run_id = p.run_id AND m.name = ? WHERE p.sweep_id = ? ORDER BY p.point, p.rep",
        err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        fn(arg, sqlite3_column_int(st, 0), sqlite3_column_int(st, 1), sqlite3_column_double(st, 2),
           sqlite3_column_int(st, 3));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, "reading sweep metrics");
}

int store_sweep_list(store *s, int (*fn)(void *arg, const store_sweep_row *row), void *arg,
                     sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s,
                                     "SELECT w.id, w.key, w.file, w.varied, w.reps, (SELECT "
                                     "count(*) FROM sweep_points p WHERE p.sweep_id = w.id) FROM "
                                     "sweeps w ORDER BY w.id",
                                     err);
    if (!st)
        return -1;
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *file = sqlite3_column_text(st, 2);
        store_sweep_row row = {
            sqlite3_column_int64(st, 0),    (const char *)sqlite3_column_text(st, 1),
            file ? (const char *)file : "", (const char *)sqlite3_column_text(st, 3),
            sqlite3_column_int(st, 4),      sqlite3_column_int64(st, 5)};
        stop = fn(arg, &row);
    }
    sqlite3_finalize(st);
    if (stop)
        return 0;
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, "listing sweeps");
}
