/*
 * capacity.c: the capacity search tables and their writers.
 *
 * capacity_searches: one row per search (file, scenario text, SLO text, target rate, compare
 * key, precision, base seed, created). capacity_probes: (search_id, seq) -> the choice, phase
 * ('search' or 'cluster'), rate, replicas, ok and saturated flags and the run (NULL when the
 * probe's run was not stored). capacity_results: (search_id, choice) -> rate per replica,
 * replicas, GPUs. A choice is '' when the search compares nothing. Probes and results belong to
 * their search (foreign keys).
 */
#include <string.h>

#include "store_capacity.h"
#include "store_int.h"

const char store_schema_capacity[] =
    "CREATE TABLE IF NOT EXISTS capacity_searches ("
    " id INTEGER PRIMARY KEY, file TEXT, scenario TEXT NOT NULL, slo TEXT NOT NULL,"
    " target_rate REAL, compare_key TEXT, precision REAL, base_seed INTEGER NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE IF NOT EXISTS capacity_probes ("
    " search_id INTEGER NOT NULL REFERENCES capacity_searches(id), seq INTEGER NOT NULL,"
    " choice TEXT NOT NULL, phase TEXT NOT NULL CHECK (phase IN ('search', 'cluster')),"
    " rate REAL NOT NULL, replicas INTEGER NOT NULL, ok INTEGER NOT NULL,"
    " saturated INTEGER NOT NULL, run_id INTEGER REFERENCES runs(id),"
    " PRIMARY KEY (search_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS capacity_results ("
    " search_id INTEGER NOT NULL REFERENCES capacity_searches(id), choice TEXT NOT NULL,"
    " rate_per_replica REAL, replicas INTEGER, gpus INTEGER,"
    " PRIMARY KEY (search_id, choice)) WITHOUT ROWID;";

static void bind_pos_real(sqlite3_stmt *st, int i, double v)
{
    if (v > 0)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_pos_int(sqlite3_stmt *st, int i, int64_t v)
{
    if (v > 0)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* The search's question as parameters 1..7 of st (file, scenario, slo, target_rate,
 * compare_key, precision, base_seed: the columns that say what a search asked). */
static void bind_question(sqlite3_stmt *st, const store_capacity_info *info)
{
    store_bind_text(st, 1, info->file);
    sqlite3_bind_text(st, 2, info->scenario ? info->scenario : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, info->slo ? info->slo : "", -1, SQLITE_STATIC);
    bind_pos_real(st, 4, info->target_rate);
    store_bind_text(st, 5, info->compare_key);
    bind_pos_real(st, 6, info->precision);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)info->base_seed);
}

int store_capacity_open(store *s, const store_capacity_info *info, int64_t *id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s,
                                     "INSERT INTO capacity_searches (file, scenario, slo,"
                                     " target_rate, compare_key, precision, base_seed)"
                                     " VALUES (?,?,?,?,?,?,?)",
                                     err);
    if (!st)
        return -1;
    bind_question(st, info);
    if (store_step_once(s, st, "recording the capacity search", err))
        return -1;
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_capacity_add_probe(store *s, int64_t search, const store_capacity_probe *p, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare_id(s, "INSERT INTO capacity_probes VALUES (?,?,?,?,?,?,?,?,?)", search, err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 2, p->seq);
    sqlite3_bind_text(st, 3, p->choice ? p->choice : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, p->phase == STORE_CAPACITY_CLUSTER ? "cluster" : "search", -1,
                      SQLITE_STATIC);
    sqlite3_bind_double(st, 5, p->rate);
    sqlite3_bind_int(st, 6, p->replicas);
    sqlite3_bind_int(st, 7, p->ok != 0);
    sqlite3_bind_int(st, 8, p->saturated != 0);
    bind_pos_int(st, 9, p->run_id);
    return store_step_once(s, st, "recording a capacity probe", err);
}

int store_capacity_add_result(store *s, int64_t search, const store_capacity_result *r,
                              sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s, "INSERT OR REPLACE INTO capacity_results VALUES (?,?,?,?,?)", search, err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 2, r->choice ? r->choice : "", -1, SQLITE_STATIC);
    bind_pos_real(st, 3, r->rate_per_replica);
    bind_pos_int(st, 4, r->replicas);
    bind_pos_int(st, 5, r->gpus);
    return store_step_once(s, st, "recording a capacity result", err);
}

int store_capacity_resume(store *s, const store_capacity_info *info, int results, int64_t *id,
                          sim_err *err)
{
    *id = 0;
    sqlite3_stmt *st = store_prepare(
        s,
        "SELECT c.id FROM capacity_searches c WHERE c.file IS ? AND c.scenario = ? AND c.slo = ?"
        " AND c.target_rate IS ? AND c.compare_key IS ? AND c.precision IS ? AND c.base_seed = ?"
        " AND (SELECT count(*) FROM capacity_results r WHERE r.search_id = c.id) < ?"
        " ORDER BY c.id DESC LIMIT 1",
        err);
    if (!st)
        return -1;
    bind_question(st, info);
    sqlite3_bind_int(st, 8, results > 0 ? results : 1);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_fail(s, err, "looking for an unfinished capacity search");
    return *id > 0;
}

int store_capacity_probe_get(store *s, int64_t search, int64_t seq, store_capacity_probe *p,
                             char *choice, size_t len, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare_id(s,
                         "SELECT choice, phase, rate, replicas, ok, saturated, run_id"
                         " FROM capacity_probes WHERE search_id = ? AND seq = ?",
                         search, err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 2, seq);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        store_col_text(st, 0, choice, len);
        const unsigned char *ph = sqlite3_column_text(st, 1);
        *p = (store_capacity_probe){.seq = seq,
                                    .choice = choice,
                                    .phase = ph && strcmp((const char *)ph, "cluster") == 0
                                                 ? STORE_CAPACITY_CLUSTER
                                                 : STORE_CAPACITY_SEARCH,
                                    .rate = sqlite3_column_double(st, 2),
                                    .replicas = sqlite3_column_int(st, 3),
                                    .ok = sqlite3_column_int(st, 4),
                                    .saturated = sqlite3_column_int(st, 5),
                                    .run_id = sqlite3_column_int64(st, 6)};
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_fail(s, err, "reading a capacity probe");
    return rc == SQLITE_ROW;
}
