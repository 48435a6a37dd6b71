/*
 * store_run.c: the run writer: prepared statements reused for every row of one transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_run.h"

struct store_run {
    store *s;
    store_level level;
    int64_t id;
    sqlite3_stmt *rq, *it;
    int failed;
    sim_err err;
};

static const char *const level_names[] = {"summary", "iterations", "requests"};

int store_level_parse(const char *s, store_level *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (store_level)i;
            return 0;
        }
    return -1;
}

const char *store_level_name(store_level l)
{
    return (unsigned)l < 3 ? level_names[l] : "?";
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void free_run(store_run *w)
{
    sqlite3_finalize(w->rq);
    sqlite3_finalize(w->it);
    free(w);
}

store_run *store_run_begin(store *s, const store_run_info *in, sim_err *err)
{
    store_run *w = sim_xcalloc(1, sizeof *w);
    w->s = s;
    w->level = in->level;
    if (store_begin(s, err) != 0) {
        free(w);
        return NULL;
    }
    sqlite3_stmt *st = store_prepare(
        s,
        "INSERT INTO runs (name, scenario, scheduler, seed, version, profile, model, gpu, dtype,"
        " replicas, tensor_parallel, hardware, store_level) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    if (!st)
        goto fail;
    bind_text(st, 1, in->name);
    bind_text(st, 2, in->scenario_text);
    bind_text(st, 3, in->scheduler);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)in->seed);
    bind_text(st, 5, in->version);
    bind_text(st, 6, in->profile);
    bind_text(st, 7, in->model);
    bind_text(st, 8, in->gpu);
    bind_text(st, 9, in->dtype);
    sqlite3_bind_int(st, 10, in->replicas);
    sqlite3_bind_int(st, 11, in->tensor_parallel);
    bind_text(st, 12, in->hardware);
    bind_text(st, 13, store_level_name(in->level));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        store_fail(s, err, "inserting the run");
        goto fail;
    }
    w->id = sqlite3_last_insert_rowid(s->db);
    w->rq = store_prepare(s, "INSERT INTO requests VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    w->it = store_prepare(s, "INSERT INTO iterations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                          err);
    if (!w->rq || !w->it)
        goto fail;
    return w;
fail:
    store_rollback(s);
    free_run(w);
    return NULL;
}

int64_t store_run_id(const store_run *w)
{
    return w->id;
}

static void bind_time(sqlite3_stmt *st, int i, int64_t t)
{
    if (t >= 0)
        sqlite3_bind_int64(st, i, t);
    else
        sqlite3_bind_null(st, i);
}

static void step(store_run *w, sqlite3_stmt *st, const char *what)
{
    if (sqlite3_step(st) != SQLITE_DONE && !w->failed) {
        w->failed = 1;
        store_fail(w->s, &w->err, what);
    }
    sqlite3_reset(st);
}

void store_run_request(store_run *w, const eng_request *rq)
{
    if (w->level < STORE_REQUESTS || w->failed)
        return;
    sqlite3_stmt *st = w->rq;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int64(st, 2, rq->id);
    sqlite3_bind_int(st, 3, rq->replica);
    sqlite3_bind_int64(st, 4, rq->t_arrival);
    bind_time(st, 5, rq->t_first_sched);
    bind_time(st, 6, rq->t_last_sched);
    bind_time(st, 7, rq->t_first_token);
    bind_time(st, 8, rq->t_finish);
    sqlite3_bind_int(st, 9, rq->prompt);
    sqlite3_bind_int(st, 10, rq->output);
    sqlite3_bind_int(st, 11, rq->preemptions);
    sqlite3_bind_int(st, 12, rq->scheduled);
    sqlite3_bind_text(st, 13, eng_rq_status_name(rq->status), -1, SQLITE_STATIC);
    if (rq->status == ENG_RQ_REJECTED)
        sqlite3_bind_text(st, 14, eng_reject_reason_name(rq->reject), -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 14);
    step(w, st, "inserting a request");
}

void store_run_iteration(store_run *w, const eng_iter_rec *it)
{
    if (w->level < STORE_ITERATIONS || w->failed)
        return;
    sqlite3_stmt *st = w->it;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int(st, 2, it->replica);
    sqlite3_bind_int64(st, 3, it->iter);
    sqlite3_bind_int64(st, 4, it->start_ns);
    sqlite3_bind_int64(st, 5, it->duration_ns);
    sqlite3_bind_int64(st, 6, it->cpu_ns);
    sqlite3_bind_int64(st, 7, it->gpu_ns);
    sqlite3_bind_int(st, 8, it->num_seqs);
    sqlite3_bind_int(st, 9, it->prefill_tokens);
    sqlite3_bind_int(st, 10, it->decode_tokens);
    sqlite3_bind_int64(st, 11, it->kv_blocks_used);
    sqlite3_bind_int(st, 12, it->preempted);
    sqlite3_bind_int(st, 13, it->shape.prefill_seqs);
    sqlite3_bind_double(st, 14, it->shape.prefill_pairs);
    sqlite3_bind_double(st, 15, it->shape.prefill_kv);
    sqlite3_bind_double(st, 16, it->shape.prefill_q2);
    sqlite3_bind_int64(st, 17, it->shape.decode_ctx);
    sqlite3_bind_int(st, 18, it->shape.emit_seqs);
    step(w, st, "inserting an iteration");
}

static void rec_request(void *st, const eng_request *rq)
{
    store_run_request(st, rq);
}

static void rec_iteration(void *st, const eng_iter_rec *it)
{
    store_run_iteration(st, it);
}

const eng_recorder_ops *store_run_recorder(void)
{
    static const eng_recorder_ops ops = {rec_request, rec_iteration, NULL};
    return &ops;
}

int store_run_finish(store_run *w, const eng_metric *m, int n, sim_err *err)
{
    if (w->failed) {
        if (err)
            *err = w->err;
        store_run_abort(w);
        return -1;
    }
    sqlite3_stmt *st = store_prepare(w->s, "INSERT INTO metrics VALUES (?,?,?)", err);
    if (!st)
        goto fail;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, w->id);
        sqlite3_bind_text(st, 2, m[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 3, m[i].value);
        if (sqlite3_step(st) != SQLITE_DONE) {
            store_fail(w->s, err, "inserting metrics");
            sqlite3_finalize(st);
            goto fail;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (store_commit(w->s, err) != 0)
        goto fail;
    free_run(w);
    return 0;
fail:
    store_run_abort(w);
    return -1;
}

void store_run_abort(store_run *w)
{
    store_rollback(w->s);
    free_run(w);
}
