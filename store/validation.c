/*
 * validation.c: the validation tables (schema version 4) and their writer and readers.
 *
 * validations: one row per `llmsim validate` (set name, file, kind, description, source, cost
 * model, notes, llmsim version, measurements by status, created). validation_rows:
 * (validation_id, seq) -> the row's id, group, line, measurements it stands for, status ('ok',
 * 'cannot', 'failed'), reason, approximations and run. validation_values: (validation_id, seq,
 * metric) -> the metric's place in the set (metric_order, from 0), measured, predicted, error
 * (predicted / measured - 1). validation_stats:
 * (validation_id, grp, metric) -> n, median / p90 / worst |error|, signed median, worst row.
 * Rows, values and statistics belong to their validation (foreign keys).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_validation.h"

const char store_schema_validation[] =
    "CREATE TABLE IF NOT EXISTS validations ("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT,"
    " kind TEXT NOT NULL CHECK (kind IN ('serving', 'operators')), description TEXT,"
    " source TEXT, cost_model TEXT, notes TEXT, version TEXT NOT NULL,"
    " total_rows INTEGER NOT NULL, ok INTEGER NOT NULL, cannot INTEGER NOT NULL,"
    " failed INTEGER NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE IF NOT EXISTS validation_rows ("
    " validation_id INTEGER NOT NULL REFERENCES validations(id), seq INTEGER NOT NULL,"
    " row_id TEXT NOT NULL, grp TEXT NOT NULL, line INTEGER, measurements INTEGER NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('ok', 'cannot', 'failed')), reason TEXT,"
    " approx TEXT, run_id INTEGER REFERENCES runs(id),"
    " PRIMARY KEY (validation_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS validation_values ("
    " validation_id INTEGER NOT NULL, seq INTEGER NOT NULL, metric TEXT NOT NULL,"
    " metric_order INTEGER NOT NULL, measured REAL, predicted REAL, error REAL,"
    " PRIMARY KEY (validation_id, seq, metric),"
    " FOREIGN KEY (validation_id, seq) REFERENCES validation_rows(validation_id, seq))"
    " WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS validation_stats ("
    " validation_id INTEGER NOT NULL REFERENCES validations(id), grp TEXT NOT NULL,"
    " metric TEXT NOT NULL, n INTEGER NOT NULL, median_abs REAL, p90_abs REAL, worst_abs REAL,"
    " signed_median REAL, worst_row TEXT, PRIMARY KEY (validation_id, grp, metric))"
    " WITHOUT ROWID;";

struct store_vwriter {
    store *s;
    int64_t id;
    sqlite3_stmt *row, *value, *stat;
};

static const char *const status_names[] = {"ok", "cannot", "failed"};

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void free_writer(store_vwriter *w)
{
    sqlite3_finalize(w->row);
    sqlite3_finalize(w->value);
    sqlite3_finalize(w->stat);
    free(w);
}

void store_validation_abort(store_vwriter *w)
{
    if (!w)
        return;
    store_rollback(w->s);
    free_writer(w);
}

static int insert_heading(store *s, const store_validation_info *in, int64_t *id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s,
                                     "INSERT INTO validations (name, file, kind, description,"
                                     " source, cost_model, notes, version, total_rows, ok,"
                                     " cannot, failed) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                                     err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, in->name ? in->name : "", -1, SQLITE_STATIC);
    store_bind_text(st, 2, in->file);
    sqlite3_bind_text(st, 3, in->kind ? in->kind : "serving", -1, SQLITE_STATIC);
    store_bind_text(st, 4, in->description);
    store_bind_text(st, 5, in->source);
    store_bind_text(st, 6, in->cost_model);
    store_bind_text(st, 7, in->notes && *in->notes ? in->notes : NULL);
    sqlite3_bind_text(st, 8, in->version ? in->version : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 9, in->rows);
    sqlite3_bind_int64(st, 10, in->ok);
    sqlite3_bind_int64(st, 11, in->cannot);
    sqlite3_bind_int64(st, 12, in->failed);
    if (store_step_once(s, st, "recording the validation", err))
        return -1;
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

store_vwriter *store_validation_begin(store *s, const store_validation_info *info, sim_err *err)
{
    if (store_begin(s, err))
        return NULL;
    store_vwriter *w = sim_xcalloc(1, sizeof *w);
    w->s = s;
    if (insert_heading(s, info, &w->id, err) ||
        !(w->row =
              store_prepare(s, "INSERT INTO validation_rows VALUES (?,?,?,?,?,?,?,?,?,?)", err)) ||
        !(w->value =
              store_prepare(s, "INSERT INTO validation_values VALUES (?,?,?,?,?,?,?)", err)) ||
        !(w->stat =
              store_prepare(s, "INSERT INTO validation_stats VALUES (?,?,?,?,?,?,?,?,?)", err))) {
        store_validation_abort(w);
        return NULL;
    }
    return w;
}

/* Steps a reused statement and resets it. 0, or -1 with err. */
static int step_reset(store_vwriter *w, sqlite3_stmt *st, const char *what, sim_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : store_fail(w->s, err, what);
}

int store_validation_row(store_vwriter *w, const store_vrow *r, sim_err *err)
{
    sqlite3_stmt *st = w->row;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int64(st, 2, r->seq);
    sqlite3_bind_text(st, 3, r->row_id ? r->row_id : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->grp ? r->grp : "", -1, SQLITE_STATIC);
    if (r->line > 0)
        sqlite3_bind_int(st, 5, r->line);
    sqlite3_bind_int64(st, 6, r->measurements > 0 ? r->measurements : 1);
    sqlite3_bind_text(st, 7, status_names[(unsigned)r->status < 3 ? r->status : 2], -1,
                      SQLITE_STATIC);
    store_bind_text(st, 8, r->reason);
    store_bind_text(st, 9, r->approx);
    if (r->run_id > 0)
        sqlite3_bind_int64(st, 10, r->run_id);
    return step_reset(w, st, "recording a validation row", err);
}

int store_validation_value(store_vwriter *w, int64_t seq, const char *metric, int order,
                           double measured, double predicted, sim_err *err)
{
    sqlite3_stmt *st = w->value;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_text(st, 3, metric, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, order);
    bind_num(st, 5, measured);
    bind_num(st, 6, predicted);
    bind_num(st, 7, predicted / measured - 1);
    return step_reset(w, st, "recording a validation value", err);
}

int store_validation_stat(store_vwriter *w, const store_vstat *v, sim_err *err)
{
    sqlite3_stmt *st = w->stat;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_text(st, 2, v->grp, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, v->metric, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, v->n);
    bind_num(st, 5, v->median_abs);
    bind_num(st, 6, v->p90_abs);
    bind_num(st, 7, v->worst_abs);
    bind_num(st, 8, v->signed_median);
    store_bind_text(st, 9, v->worst_row);
    return step_reset(w, st, "recording validation statistics", err);
}

int store_validation_finish(store_vwriter *w, int64_t *id, sim_err *err)
{
    int64_t vid = w->id;
    store *s = w->s;
    sqlite3_finalize(w->row);
    sqlite3_finalize(w->value);
    sqlite3_finalize(w->stat);
    w->row = w->value = w->stat = NULL;
    if (store_commit(s, err)) {
        store_validation_abort(w);
        return -1;
    }
    free_writer(w);
    *id = vid;
    return 0;
}

/* ---- reading ---- */

static int has_tables(store *s, int64_t id, sim_err *err)
{
    if (s->version >= 4)
        return 0;
    return sim_errf(err,
                    "%s: no validation %lld in this database (schema version %d keeps no "
                    "validations; they came with version 4)",
                    s->path, (long long)id, s->version);
}

int store_validation_get(store *s, int64_t id, store_validation_meta *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (has_tables(s, id, err))
        return -1;
    sqlite3_stmt *st = store_prepare_id(s,
                                        "SELECT id, name, kind, file, cost_model, version, created,"
                                        " total_rows, ok, cannot, failed FROM validations"
                                        " WHERE id = ?",
                                        id, err);
    if (!st)
        return -1;
    if (store_one_row(s, st, "validation", id, "reading the validation", err))
        return -1;
    out->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, out->name, sizeof out->name);
    store_col_text(st, 2, out->kind, sizeof out->kind);
    store_col_text(st, 3, out->file, sizeof out->file);
    store_col_text(st, 4, out->cost_model, sizeof out->cost_model);
    store_col_text(st, 5, out->version, sizeof out->version);
    store_col_text(st, 6, out->created, sizeof out->created);
    out->rows = sqlite3_column_int64(st, 7);
    out->ok = sqlite3_column_int64(st, 8);
    out->cannot = sqlite3_column_int64(st, 9);
    out->failed = sqlite3_column_int64(st, 10);
    sqlite3_finalize(st);
    return 0;
}

/* store_validation_points' caller's function and argument. */
typedef struct {
    int (*fn)(void *arg, const char *metric, const char *grp, const char *row_id, double measured,
              double predicted);
    void *arg;
} point_visit;

static const char *col_str(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}

static int visit_point(void *ctx, sqlite3_stmt *st)
{
    point_visit *v = ctx;
    return v->fn(v->arg, col_str(st, 0), col_str(st, 1), col_str(st, 2),
                 sqlite3_column_double(st, 3), sqlite3_column_double(st, 4));
}

int store_validation_points(store *s, int64_t id,
                            int (*fn)(void *arg, const char *metric, const char *grp,
                                      const char *row_id, double measured, double predicted),
                            void *arg, sim_err *err)
{
    if (has_tables(s, id, err))
        return -1;
    sqlite3_stmt *st = store_prepare_id(s,
                                        "SELECT v.metric, r.grp, r.row_id, v.measured, v.predicted"
                                        " FROM validation_values v JOIN validation_rows r"
                                        " ON r.validation_id = v.validation_id AND r.seq = v.seq"
                                        " WHERE v.validation_id = ? AND r.status = 'ok'"
                                        " AND v.measured IS NOT NULL AND v.predicted IS NOT NULL"
                                        " ORDER BY v.metric_order, v.seq",
                                        id, err);
    point_visit v = {fn, arg};
    return store_each_row(s, st, visit_point, &v, "reading the validation's values", err);
}
