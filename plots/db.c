/*
 * db.c: the plots' read-only view of a results database.
 *
 * Plots never write: the database is opened with SQLITE_OPEN_READONLY, so plotting beside a
 * running sweep (WAL mode) neither blocks it nor changes anything.
 */
#include <string.h>

#include "plt_int.h"

int plt_db_fail(plt_db *d, const char *what, sim_err *err)
{
    return sim_errf(err, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->db));
}

int plt_db_open(plt_db *d, const char *path, sim_err *err)
{
    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sim_errf(err, "%s: cannot open database: %s", path,
                 d->db ? sqlite3_errmsg(d->db) : "out of memory");
        plt_db_close(d);
        return -1;
    }
    sqlite3_busy_timeout(d->db, 10000);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, "SELECT version FROM schema_version", -1, &st, NULL) !=
        SQLITE_OK) {
        sim_errf(err, "%s: not an llmsim database (%s)", path, sqlite3_errmsg(d->db));
        plt_db_close(d);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

void plt_db_close(plt_db *d)
{
    sqlite3_close(d->db);
    d->db = NULL;
}

sqlite3_stmt *plt_db_prepare(plt_db *d, const char *sql, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) {
        plt_db_fail(d, "preparing a query", err);
        return NULL;
    }
    return st;
}

int plt_db_run(plt_db *d, int64_t run, char *sched, size_t len, int *replicas, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(d, "SELECT scheduler, replicas FROM runs WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *s = sqlite3_column_text(st, 0);
        if (sched)
            snprintf(sched, len, "%s", s ? (const char *)s : "?");
        if (replicas)
            *replicas = sqlite3_column_int(st, 1) > 0 ? sqlite3_column_int(st, 1) : 1;
    } else if (rc == SQLITE_DONE)
        sim_errf(err, "%s: no run %lld in this database", d->path, (long long)run);
    else
        plt_db_fail(d, "reading the runs table", err);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

int64_t plt_db_count(plt_db *d, const char *sql, int64_t arg, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(d, sql, err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, arg);
    int64_t v = -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        plt_db_fail(d, "counting rows", err);
    sqlite3_finalize(st);
    return v;
}

const char *plt_metric_column(const char *metric)
{
    static const char *const m[][2] = {
        {"ttft", "ttft_ms"}, {"tpot", "tpot_ms"}, {"itl", "itl_ms"}, {"e2e", "e2el_ms"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(metric, m[i][0]) == 0)
            return m[i][1];
    return NULL;
}

const char *plt_metric_label(const char *metric)
{
    static const char *const m[][2] = {
        {"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E latency"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(metric, m[i][0]) == 0)
            return m[i][1];
    return metric;
}
