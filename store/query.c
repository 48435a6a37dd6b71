/*
 * query.c: the read side of the store: runs, their iterations and requests (cursors over one
 * prepared statement each), latencies, sweeps and curves, and generic read-only SQL.
 *
 * Columns that came with schema version 2 (runs.offered_rate, runs.num_requests) are read as
 * NULL from a version-1 database opened read-only, so old databases stay readable. Every
 * statement is finalized before its function returns, except a cursor's, which close ends.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_query.h"

/* ---------------- runs ---------------- */

/* runs columns in store_run_meta order; those of later versions as NULL before them. */
static const char *run_cols(const store *s)
{
    return s->version >= 3   ? "id, name, scheduler, version, profile, model, gpu, dtype, hardware,"
                               " store_level, created, seed, replicas, tensor_parallel,"
                               " offered_rate, num_requests, kv_blocks"
           : s->version >= 2 ? "id, name, scheduler, version, profile, model, gpu, dtype, hardware,"
                               " store_level, created, seed, replicas, tensor_parallel,"
                               " offered_rate, num_requests, NULL"
                             : "id, name, scheduler, version, profile, model, gpu, dtype, hardware,"
                               " store_level, created, seed, replicas, tensor_parallel, NULL, NULL,"
                               " NULL";
}

static void read_run(sqlite3_stmt *st, store_run_meta *m)
{
    memset(m, 0, sizeof *m);
    m->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, m->name, sizeof m->name);
    store_col_text(st, 2, m->scheduler, sizeof m->scheduler);
    store_col_text(st, 3, m->version, sizeof m->version);
    store_col_text(st, 4, m->profile, sizeof m->profile);
    store_col_text(st, 5, m->model, sizeof m->model);
    store_col_text(st, 6, m->gpu, sizeof m->gpu);
    store_col_text(st, 7, m->dtype, sizeof m->dtype);
    store_col_text(st, 8, m->hardware, sizeof m->hardware);
    store_col_text(st, 9, m->level, sizeof m->level);
    store_col_text(st, 10, m->created, sizeof m->created);
    m->seed = (uint64_t)sqlite3_column_int64(st, 11);
    m->replicas = sqlite3_column_int(st, 12);
    m->tensor_parallel = sqlite3_column_int(st, 13);
    m->offered_rate = sqlite3_column_double(st, 14);
    m->num_requests = sqlite3_column_int64(st, 15);
    m->kv_blocks = sqlite3_column_int64(st, 16);
}

/* A statement reading run_cols from the runs table, with the clause `tail` after it. */
static sqlite3_stmt *runs_stmt(store *s, const char *tail, sim_err *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s FROM runs %s", run_cols(s), tail);
    return store_prepare(s, sql, err);
}

int store_run_get(store *s, int64_t id, store_run_meta *out, sim_err *err)
{
    sqlite3_stmt *st = runs_stmt(s, "WHERE id = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    if (store_one_row(s, st, "run", id, "reading the runs table", err))
        return -1;
    read_run(st, out);
    sqlite3_finalize(st);
    return 0;
}

/* store_run_list's caller's function and argument. */
typedef struct {
    int (*fn)(void *arg, const store_run_meta *m);
    void *arg;
} run_visit;

static int visit_run(void *ctx, sqlite3_stmt *st)
{
    run_visit *v = ctx;
    store_run_meta m;
    read_run(st, &m);
    return v->fn(v->arg, &m);
}

int store_run_list(store *s, int (*fn)(void *arg, const store_run_meta *m), void *arg, sim_err *err)
{
    sqlite3_stmt *st = runs_stmt(s, "ORDER BY id", err);
    run_visit v = {fn, arg};
    return store_each_row(s, st, visit_run, &v, "reading the runs table", err);
}

/* The one integer of a query with the run id as its parameter; -1 with err. */
static int64_t count_for_run(store *s, const char *sql, int64_t run, const char *what, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(s, sql, run, err);
    if (!st)
        return -1;
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    if (v < 0)
        store_fail(s, err, what);
    sqlite3_finalize(st);
    return v;
}

int64_t store_run_count_requests(store *s, int64_t run, sim_err *err)
{
    return count_for_run(s, "SELECT count(*) FROM requests WHERE run_id = ?", run,
                         "counting requests", err);
}

int64_t store_run_count_iterations(store *s, int64_t run, sim_err *err)
{
    return count_for_run(s, "SELECT count(*) FROM iterations WHERE run_id = ?", run,
                         "counting iterations", err);
}

int store_run_metrics(store *s, int64_t run, eng_metric *out, int max, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s, "SELECT name, value FROM metrics WHERE run_id = ? ORDER BY name", run, err);
    if (!st)
        return -1;
    int n = 0, rc = SQLITE_DONE;
    while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_col_text(st, 0, out[n].name, sizeof out[n].name);
        out[n].value =
            sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
        n++;
    }
    sqlite3_finalize(st);
    if (n == max)
        return n;
    return rc == SQLITE_DONE ? n : store_fail(s, err, "reading metrics");
}

int store_run_scenario(store *s, int64_t run, char **text, sim_err *err)
{
    *text = NULL;
    sqlite3_stmt *st = store_prepare_id(s, "SELECT scenario FROM runs WHERE id = ?", run, err);
    if (!st)
        return -1;
    if (store_one_row(s, st, "run", run, "reading the runs table", err))
        return -1;
    const unsigned char *t = sqlite3_column_text(st, 0);
    *text = sim_xstrdup(t ? (const char *)t : "");
    sqlite3_finalize(st);
    return 0;
}

/* ---------------- cursors ---------------- */

struct store_iter_cursor {
    store *s;
    sqlite3_stmt *st;
};

struct store_rq_cursor {
    store *s;
    int64_t run;
    sqlite3_stmt *st;
};

/* Steps a cursor's statement: 1 with a row, 0 at the end, or -1 with err naming what failed. */
static int cursor_step(store *s, sqlite3_stmt *st, const char *what, sim_err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, what);
}

/* Ends a cursor: its statement, then the cursor itself. */
static void cursor_free(sqlite3_stmt *st, void *cursor)
{
    sqlite3_finalize(st);
    free(cursor);
}

/* A statement with the run (?1) and a window (?2 from, ?3 to) bound. */
static sqlite3_stmt *window_stmt(store *s, const char *sql, int64_t run, int64_t from, int64_t to,
                                 sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(s, sql, run, err);
    if (st) {
        sqlite3_bind_int64(st, 2, from);
        sqlite3_bind_int64(st, 3, to);
    }
    return st;
}

store_iter_cursor *store_iterations_open(store *s, int64_t run, sim_err *err)
{
    return store_iterations_open_range(s, run, INT64_MIN, INT64_MAX, err);
}

store_iter_cursor *store_iterations_open_range(store *s, int64_t run, int64_t from_ns,
                                               int64_t to_ns, sim_err *err)
{
    sqlite3_stmt *st = window_stmt(
        s,
        "SELECT replica, iter, start_ns, duration_ns, cpu_ns, gpu_ns, num_seqs, prefill_tokens,"
        " decode_tokens, kv_blocks_used, preempted, prefill_seqs, prefill_pairs, prefill_kv,"
        " prefill_q2, decode_ctx, emit_seqs FROM iterations WHERE run_id = ?1"
        " AND start_ns <= ?3 AND start_ns + duration_ns >= ?2 ORDER BY replica, iter",
        run, from_ns, to_ns, err);
    if (!st)
        return NULL;
    store_iter_cursor *c = sim_xcalloc(1, sizeof *c);
    c->s = s;
    c->st = st;
    return c;
}

/* The shape is what the row keeps: its sums, and the counts the iteration row has. */
int store_iterations_next(store_iter_cursor *c, eng_iter_rec *out, sim_err *err)
{
    sqlite3_stmt *st = c->st;
    int rc = cursor_step(c->s, st, "reading iterations", err);
    if (rc != 1)
        return rc;
    memset(out, 0, sizeof *out);
    out->replica = sqlite3_column_int(st, 0);
    out->iter = sqlite3_column_int64(st, 1);
    out->start_ns = sqlite3_column_int64(st, 2);
    out->duration_ns = sqlite3_column_int64(st, 3);
    out->cpu_ns = sqlite3_column_int64(st, 4);
    out->gpu_ns = sqlite3_column_int64(st, 5);
    out->num_seqs = sqlite3_column_int(st, 6);
    out->prefill_tokens = sqlite3_column_int(st, 7);
    out->decode_tokens = sqlite3_column_int(st, 8);
    out->kv_blocks_used = sqlite3_column_int64(st, 9);
    out->preempted = sqlite3_column_int(st, 10);
    eng_shape *sh = &out->shape;
    sh->num_seqs = out->num_seqs;
    sh->prefill_tokens = out->prefill_tokens;
    sh->decode_seqs = out->decode_tokens;
    store_col_shape(st, 11, sh);
    return 1;
}

void store_col_shape(sqlite3_stmt *st, int first, eng_shape *sh)
{
    sh->tokens = sh->prefill_tokens + sh->decode_seqs;
    sh->prefill_seqs = sqlite3_column_int(st, first);
    sh->prefill_pairs = sqlite3_column_double(st, first + 1);
    sh->prefill_kv = sqlite3_column_double(st, first + 2);
    sh->prefill_q2 = sqlite3_column_double(st, first + 3);
    sh->decode_ctx = sqlite3_column_int64(st, first + 4);
    sh->emit_seqs = sqlite3_column_int(st, first + 5);
}

void store_iterations_close(store_iter_cursor *c)
{
    if (c)
        cursor_free(c->st, c);
}

store_rq_cursor *store_requests_open(store *s, int64_t run, sim_err *err)
{
    return store_requests_open_range(s, run, INT64_MIN, INT64_MAX, err);
}

store_rq_cursor *store_requests_open_range(store *s, int64_t run, int64_t from_ns, int64_t to_ns,
                                           sim_err *err)
{
    sqlite3_stmt *st = window_stmt(
        s,
        "SELECT req_id, replica, arrival_ns, first_scheduled_ns, last_scheduled_ns,"
        " first_token_ns, finish_ns, prompt_tokens, output_tokens, preemptions, scheduled,"
        " status, reject_reason FROM requests WHERE run_id = ?1 AND arrival_ns <= ?3"
        " AND (finish_ns IS NULL OR finish_ns >= ?2) ORDER BY req_id",
        run, from_ns, to_ns, err);
    if (!st)
        return NULL;
    store_rq_cursor *c = sim_xcalloc(1, sizeof *c);
    c->s = s;
    c->run = run;
    c->st = st;
    return c;
}

static int64_t col_time(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

/* The enum value whose name is the text of column i (NULL: `none`); -1 when unknown. */
static int col_enum(sqlite3_stmt *st, int i, int count, const char *(*name)(int), int none)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    if (!t)
        return none;
    for (int k = 0; k < count; k++)
        if (strcmp(t, name(k)) == 0)
            return k;
    return -1;
}

static const char *status_name(int k)
{
    return eng_rq_status_name((eng_rq_status)k);
}

static const char *reason_name(int k)
{
    return eng_reject_reason_name((eng_reject_reason)k);
}

int store_requests_next(store_rq_cursor *c, eng_request *out, sim_err *err)
{
    sqlite3_stmt *st = c->st;
    int rc = cursor_step(c->s, st, "reading requests", err);
    if (rc != 1)
        return rc;
    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    out->replica = sqlite3_column_int(st, 1);
    out->t_arrival = sqlite3_column_int64(st, 2);
    out->t_first_sched = col_time(st, 3);
    out->t_last_sched = col_time(st, 4);
    out->t_first_token = col_time(st, 5);
    out->t_finish = col_time(st, 6);
    out->prompt = sqlite3_column_int(st, 7);
    out->output = sqlite3_column_int(st, 8);
    out->preemptions = sqlite3_column_int(st, 9);
    out->scheduled = sqlite3_column_int(st, 10);
    int status = col_enum(st, 11, ENG_RQ_STATUS_COUNT, status_name, -1);
    int reason = col_enum(st, 12, ENG_REJECT_REASON_COUNT, reason_name, ENG_REJECT_NONE);
    if (status < 0 || reason < 0)
        return sim_errf(err, "%s: run %lld, request %lld: unknown %s '%s'", c->s->path,
                        (long long)c->run, (long long)out->id,
                        status < 0 ? "status" : "reject reason",
                        (const char *)sqlite3_column_text(st, status < 0 ? 11 : 12));
    out->status = (eng_rq_status)status;
    out->reject = (eng_reject_reason)reason;
    return 1;
}

void store_requests_close(store_rq_cursor *c)
{
    if (c)
        cursor_free(c->st, c);
}

struct store_span_cursor {
    store *s;
    int64_t run;
    sqlite3_stmt *st; /* NULL before version 3: no rows */
};

int store_has_spans(const store *s)
{
    return s->version >= 3;
}

int store_has_fleet(const store *s)
{
    return s->version >= 5;
}

/* One fleet_windows row (columns from start_ns on) into *x, as one pool of *gpus GPUs per
 * replica. */
static void fleet_row(sqlite3_stmt *st, eng_fleet_window *x, int64_t *gpus)
{
    memset(x, 0, sizeof *x);
    x->start_ns = sqlite3_column_int64(st, 0);
    x->end_ns = sqlite3_column_int64(st, 1);
    *gpus = sqlite3_column_int64(st, 2);
    x->serving_ns = sqlite3_column_int64(st, 3);
    x->starting_ns = sqlite3_column_int64(st, 4);
    x->draining_ns = sqlite3_column_int64(st, 5);
    x->arrivals = sqlite3_column_int64(st, 6);
    x->completed = sqlite3_column_int64(st, 7);
    x->good = sqlite3_column_int64(st, 8);
    x->rejected = sqlite3_column_int64(st, 9);
    x->ttft_count = sqlite3_column_int64(st, 10);
    x->p99_ttft_ms =
        sqlite3_column_type(st, 11) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 11);
    int64_t ns[3] = {x->serving_ns, x->starting_ns, x->draining_ns};
    memcpy(x->pool_ns[0], ns, sizeof ns);
    x->gpu_ns = sqlite3_column_type(st, 12) == SQLITE_NULL ? *gpus * (ns[0] + ns[1] + ns[2])
                                                           : sqlite3_column_int64(st, 12);
}

/* The run's fleet_pools rows into its n windows (a run of prefill and decode pools); 0, or -1
 * with err. */
static int fleet_pool_rows(store *s, int64_t run, eng_fleet_window *w, int64_t n,
                           eng_fleet_pools *pools, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(s,
                                        "SELECT win, pool, gpus, serving_ns, starting_ns,"
                                        " draining_ns FROM fleet_pools WHERE run_id = ?"
                                        " ORDER BY win, pool",
                                        run, err);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t i = sqlite3_column_int64(st, 0), k = sqlite3_column_int64(st, 1);
        if (i < 0 || i >= n || k < 0 || k >= ENG_FLEET_POOLS)
            continue;
        if (k >= pools->n)
            pools->n = (int32_t)k + 1;
        pools->gpus[k] = sqlite3_column_int64(st, 2);
        for (int c = 0; c < 3; c++)
            w[i].pool_ns[k][c] = sqlite3_column_int64(st, 3 + c);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, "reading the fleet timeline's pools");
}

int64_t store_run_fleet_windows(store *s, int64_t run, eng_fleet_window **out,
                                eng_fleet_pools *pools, sim_err *err)
{
    *out = NULL;
    memset(pools, 0, sizeof *pools);
    if (!store_has_fleet(s))
        return 0;
    int v6 = s->version >= 6;
    sqlite3_stmt *st = store_prepare_id(
        s,
        v6 ? "SELECT start_ns, end_ns, gpus, serving_ns, starting_ns, draining_ns, arrivals,"
             " completed, good, rejected, ttft_count, p99_ttft_ms, gpu_ns FROM fleet_windows"
             " WHERE run_id = ? ORDER BY win"
           : "SELECT start_ns, end_ns, gpus, serving_ns, starting_ns, draining_ns, arrivals,"
             " completed, good, rejected, ttft_count, p99_ttft_ms, NULL FROM fleet_windows"
             " WHERE run_id = ? ORDER BY win",
        run, err);
    if (!st)
        return -1;
    int64_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            *out = sim_xrealloc(*out, (size_t)cap * sizeof **out);
        }
        fleet_row(st, &(*out)[n++], &pools->gpus[0]);
    }
    sqlite3_finalize(st);
    pools->n = n > 0;
    if (rc != SQLITE_DONE || (v6 && n > 0 && fleet_pool_rows(s, run, *out, n, pools, err))) {
        free(*out);
        *out = NULL;
        return rc != SQLITE_DONE ? store_fail(s, err, "reading the fleet timeline") : -1;
    }
    return n;
}

store_span_cursor *store_spans_open(store *s, int64_t run, int64_t from_ns, int64_t to_ns,
                                    sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (store_has_spans(s) &&
        !(st = window_stmt(s,
                           "SELECT req_id, span, replica, start_ns, decode_ns, end_ns, end_reason"
                           " FROM request_spans_all WHERE run_id = ?1 AND start_ns <= ?3"
                           " AND end_ns >= ?2 ORDER BY req_id, span",
                           run, from_ns, to_ns, err)))
        return NULL;
    store_span_cursor *c = sim_xcalloc(1, sizeof *c);
    c->s = s;
    c->run = run;
    c->st = st;
    return c;
}

static const char *span_end_name(int k)
{
    return eng_span_end_name((eng_span_end)k);
}

int store_spans_next(store_span_cursor *c, eng_span_rec *out, sim_err *err)
{
    if (!c->st)
        return 0;
    sqlite3_stmt *st = c->st;
    int rc = cursor_step(c->s, st, "reading request spans", err);
    if (rc != 1)
        return rc;
    memset(out, 0, sizeof *out);
    out->req = sqlite3_column_int64(st, 0);
    out->span = sqlite3_column_int(st, 1);
    out->replica = sqlite3_column_int(st, 2);
    out->start_ns = sqlite3_column_int64(st, 3);
    out->decode_ns = col_time(st, 4);
    out->end_ns = sqlite3_column_int64(st, 5);
    int end = col_enum(st, 6, ENG_SPAN_END_COUNT, span_end_name, -1);
    if (end < 0)
        return sim_errf(err, "%s: run %lld, request %lld: unknown span end '%s'", c->s->path,
                        (long long)c->run, (long long)out->req,
                        (const char *)sqlite3_column_text(st, 6));
    out->end = (eng_span_end)end;
    return 1;
}

void store_spans_close(store_span_cursor *c)
{
    if (c)
        cursor_free(c->st, c);
}

int64_t store_run_count_spans(store *s, int64_t run, sim_err *err)
{
    if (!store_has_spans(s))
        return 0;
    return count_for_run(s, "SELECT count(*) FROM request_spans_all WHERE run_id = ?", run,
                         "counting request spans", err);
}

/* ---------------- latencies ---------------- */

static const char *latency_sql(store_latency m)
{
    switch (m) {
    case STORE_LAT_TTFT:
        return "SELECT (first_token_ns - arrival_ns) / 1e6 FROM requests WHERE run_id = ?"
               " AND status = 'finished' AND first_token_ns IS NOT NULL ORDER BY req_id";
    case STORE_LAT_E2E:
        return "SELECT (finish_ns - arrival_ns) / 1e6 FROM requests WHERE run_id = ?"
               " AND status = 'finished' AND finish_ns IS NOT NULL ORDER BY req_id";
    case STORE_LAT_TPOT:
        break;
    }
    return "SELECT (finish_ns - first_token_ns) / 1e6 / (output_tokens - 1) FROM requests"
           " WHERE run_id = ? AND status = 'finished' AND output_tokens > 1"
           " AND first_token_ns IS NOT NULL AND finish_ns IS NOT NULL ORDER BY req_id";
}

int64_t store_request_latencies(store *s, int64_t run, store_latency m, double **values,
                                sim_err *err)
{
    *values = NULL;
    sqlite3_stmt *st = store_prepare_id(s, latency_sql(m), run, err);
    if (!st)
        return -1;
    double *v = NULL;
    int64_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap)
            v = sim_xrealloc(v, (size_t)(cap = cap ? 2 * cap : 1024) * sizeof *v);
        v[n++] = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return store_fail(s, err, "reading requests");
    }
    *values = v;
    return n;
}

/* ---------------- sweeps ---------------- */

int store_sweep_get(store *s, int64_t id, store_sweep_meta *out, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s, "SELECT id, key, file, varied, reps, base_seed, created FROM sweeps WHERE id = ?", id,
        err);
    if (!st)
        return -1;
    if (store_one_row(s, st, "sweep", id, "reading the sweeps table", err))
        return -1;
    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, out->key, sizeof out->key);
    store_col_text(st, 2, out->file, sizeof out->file);
    store_col_text(st, 3, out->varied, sizeof out->varied);
    out->reps = sqlite3_column_int(st, 4);
    out->base_seed = (uint64_t)sqlite3_column_int64(st, 5);
    store_col_text(st, 6, out->created, sizeof out->created);
    sqlite3_finalize(st);
    return 0;
}

/* store_sweep_keys' caller's function and argument. */
typedef struct {
    int (*fn)(void *arg, const char *key);
    void *arg;
} key_visit;

static int visit_key(void *ctx, sqlite3_stmt *st)
{
    key_visit *v = ctx;
    return v->fn(v->arg, (const char *)sqlite3_column_text(st, 0));
}

int store_sweep_keys(store *s, int64_t id, int (*fn)(void *arg, const char *key), void *arg,
                     sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s, "SELECT DISTINCT key FROM sweep_params WHERE sweep_id = ? ORDER BY key", id, err);
    key_visit v = {fn, arg};
    return store_each_row(s, st, visit_key, &v, "reading the sweep's parameters", err);
}

/* store_sweep_params' caller's function and argument. */
typedef struct {
    int (*fn)(void *arg, int64_t point, const char *key, const char *value);
    void *arg;
} param_visit;

static int visit_param(void *ctx, sqlite3_stmt *st)
{
    param_visit *v = ctx;
    const char *val = (const char *)sqlite3_column_text(st, 2);
    return v->fn(v->arg, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                 val ? val : "");
}

int store_sweep_params(store *s, int64_t id,
                       int (*fn)(void *arg, int64_t point, const char *key, const char *value),
                       void *arg, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare_id(s,
                         "SELECT point, key, value FROM sweep_params WHERE sweep_id = ?"
                         " ORDER BY point, key",
                         id, err);
    param_visit v = {fn, arg};
    return store_each_row(s, st, visit_param, &v, "reading the sweep's parameters", err);
}

/* ?1 y metric, ?2 x metric, ?3 x parameter, ?4 series key, ?5 sweep; %s: the run's
 * offered_rate as the last x fallback (NULL before schema version 2). */
static const char curve_sql[] =
    "SELECT p.point, p.rep, p.run_id, p.saturated,"
    " (SELECT value FROM metrics m WHERE m.run_id = p.run_id AND m.name = ?1),"
    " COALESCE((SELECT CAST(value AS REAL) FROM sweep_params q WHERE q.sweep_id = p.sweep_id"
    "           AND q.point = p.point AND q.key = ?3),"
    "          (SELECT value FROM metrics m WHERE m.run_id = p.run_id AND m.name = ?2), %s),"
    " CASE WHEN ?4 IS NULL THEN r.scheduler ELSE (SELECT value FROM sweep_params q"
    "  WHERE q.sweep_id = p.sweep_id AND q.point = p.point AND q.key = ?4) END,"
    " (SELECT value FROM metrics m WHERE m.run_id = p.run_id AND m.name = 'rejected')"
    " FROM sweep_points p JOIN runs r ON r.id = p.run_id WHERE p.sweep_id = ?5"
    " ORDER BY p.point, p.rep";

static void read_curve_row(sqlite3_stmt *st, store_curve_row *r)
{
    r->point = sqlite3_column_int64(st, 0);
    r->rep = sqlite3_column_int64(st, 1);
    r->run_id = sqlite3_column_int64(st, 2);
    r->saturated = sqlite3_column_int(st, 3) != 0;
    r->has_y = sqlite3_column_type(st, 4) != SQLITE_NULL;
    r->y = sqlite3_column_double(st, 4);
    r->has_x = sqlite3_column_type(st, 5) != SQLITE_NULL;
    r->x = sqlite3_column_double(st, 5);
    r->series = (const char *)sqlite3_column_text(st, 6);
    r->rejected = sqlite3_column_double(st, 7); /* NULL reads as 0 */
}

/* store_sweep_curve's caller's function and argument. */
typedef struct {
    int (*fn)(void *arg, const store_curve_row *r);
    void *arg;
} curve_visit;

static int visit_curve_row(void *ctx, sqlite3_stmt *st)
{
    curve_visit *v = ctx;
    store_curve_row r;
    read_curve_row(st, &r);
    return v->fn(v->arg, &r);
}

int store_sweep_curve(store *s, const store_curve_query *q,
                      int (*fn)(void *arg, const store_curve_row *r), void *arg, sim_err *err)
{
    char sql[sizeof curve_sql + 64];
    snprintf(sql, sizeof sql, curve_sql,
             s->version >= 2 ? "CASE WHEN ?2 = 'offered_rate' THEN r.offered_rate END" : "NULL");
    sqlite3_stmt *st = store_prepare(s, sql, err);
    if (!st)
        return -1;
    store_bind_text(st, 1, q->y_metric);
    store_bind_text(st, 2, q->x_metric);
    store_bind_text(st, 3, q->x_param);
    store_bind_text(st, 4, q->by);
    sqlite3_bind_int64(st, 5, q->sweep);
    curve_visit v = {fn, arg};
    return store_each_row(s, st, visit_curve_row, &v, "reading the sweep's points", err);
}

/* ---------------- generic reads ---------------- */

/* Prepares the next statement of *sql (advancing it) into *st (NULL when only blanks or
 * comments were left); refuses one that writes. 0, or -1 with err. */
static int prepare_read(store *s, const char **sql, sqlite3_stmt **st, sim_err *err)
{
    if (sqlite3_prepare_v2(s->db, *sql, -1, st, sql) != SQLITE_OK)
        return store_fail(s, err, "preparing a query");
    if (*st && !sqlite3_stmt_readonly(*st)) {
        sim_errf(err, "%s: a query must only read; this one writes (use store_exec): %.80s",
                 s->path, sqlite3_sql(*st));
        sqlite3_finalize(*st);
        *st = NULL;
        return -1;
    }
    return 0;
}

/* Steps one prepared statement, calling fn per row; finalizes it. */
static int rows(store *s, sqlite3_stmt *st, store_row_fn fn, void *arg, sim_err *err)
{
    int n = sqlite3_column_count(st), rc = SQLITE_DONE, stop = 0;
    const char **names = sim_xcalloc((size_t)n + 1, sizeof *names);
    const char **vals = sim_xcalloc((size_t)n + 1, sizeof *vals);
    for (int i = 0; i < n; i++)
        names[i] = sqlite3_column_name(st, i);
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++)
            vals[i] = (const char *)sqlite3_column_text(st, i);
        stop = fn ? fn(arg, n, names, vals) : 0;
    }
    if (!stop && rc != SQLITE_DONE)
        stop = store_fail(s, err, "running a query");
    sqlite3_finalize(st);
    free(names);
    free(vals);
    return stop;
}

int store_query(store *s, const char *sql, store_row_fn fn, void *arg, sim_err *err)
{
    while (sql && *sql) {
        sqlite3_stmt *st;
        if (prepare_read(s, &sql, &st, err) != 0)
            return -1;
        if (!st)
            continue;
        int rc = rows(s, st, fn, arg, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Steps the single read-only statement sql to its first row, left in *st. */
static int first_row(store *s, const char *sql, sqlite3_stmt **st, sim_err *err)
{
    const char *tail = sql;
    if (prepare_read(s, &tail, st, err) != 0)
        return -1;
    if (!*st)
        return sim_errf(err, "%s: an empty query", s->path);
    int rc = sqlite3_step(*st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc == SQLITE_DONE)
        sim_errf(err, "%s: the query returned no row: %.80s", s->path, sql);
    else
        store_fail(s, err, "running a query");
    sqlite3_finalize(*st);
    *st = NULL;
    return -1;
}

int store_query_int(store *s, const char *sql, int64_t *out, sim_err *err)
{
    sqlite3_stmt *st;
    if (first_row(s, sql, &st, err) != 0)
        return -1;
    *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

int store_query_double(store *s, const char *sql, double *out, sim_err *err)
{
    sqlite3_stmt *st;
    if (first_row(s, sql, &st, err) != 0)
        return -1;
    *out = sqlite3_column_type(st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return 0;
}
