/*
 * run.c: the run writer: prepared statements reused for every row of one transaction,
 * streaming rows as the simulation produces them or buffering them for one short transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_run.h"

typedef struct rq_row {
    int64_t id, arrival, first_sched, last_sched, first_token, finish;
    int32_t replica, prompt, output, preemptions, scheduled;
    int8_t status, reject;
} rq_row;

struct store_run {
    store *s;
    store_run_info info;
    int buffered, begun;
    int64_t id;
    sqlite3_stmt *rq, *it, *sp;    /* one row */
    sqlite3_stmt *rqn, *itn, *spn; /* BATCH rows */
    int failed;
    sim_err err;
    rq_row *rqs;
    size_t nrq, caprq;
    eng_iter_rec *its;
    size_t nit, capit;
    eng_span_rec *sps;
    size_t nsp, capsp;
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

static void free_run(store_run *w)
{
    sqlite3_finalize(w->rq);
    sqlite3_finalize(w->it);
    sqlite3_finalize(w->sp);
    sqlite3_finalize(w->rqn);
    sqlite3_finalize(w->itn);
    sqlite3_finalize(w->spn);
    free(w->rqs);
    free(w->its);
    free(w->sps);
    free(w);
}

/* Rows go BATCH to a statement: one multi-row INSERT costs much less per row than BATCH
 * single-row ones (fewer statement steps and resets). */
#define BATCH 64
#define RQ_COLS 14
#define IT_COLS 18
#define SP_COLS 8

static sqlite3_stmt *insert_stmt(store *s, const char *table, int cols, int rows, sim_err *err)
{
    size_t len = 32 + strlen(table) + (size_t)rows * (size_t)(2 * cols + 3);
    char *sql = sim_xmalloc(len), *p = sql;
    p += sprintf(p, "INSERT INTO %s VALUES ", table);
    for (int r = 0; r < rows; r++) {
        *p++ = r ? ',' : ' ';
        *p++ = '(';
        for (int c = 0; c < cols; c++) {
            *p++ = c ? ',' : '?';
            if (c)
                *p++ = '?';
        }
        *p++ = ')';
    }
    *p = '\0';
    sqlite3_stmt *st = store_prepare(s, sql, err);
    free(sql);
    return st;
}

/* BEGIN, the run row, the row statements. */
static int open_run(store_run *w, sim_err *err)
{
    store *s = w->s;
    const store_run_info *in = &w->info;
    if (store_begin(s, err) != 0)
        return -1;
    w->begun = 1;
    sqlite3_stmt *st = store_prepare(
        s,
        "INSERT INTO runs (name, scenario, scheduler, seed, version, profile, model, gpu, dtype,"
        " replicas, tensor_parallel, hardware, store_level, offered_rate, num_requests,"
        " kv_blocks) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    if (!st)
        return -1;
    store_bind_text(st, 1, in->name);
    store_bind_text(st, 2, in->scenario_text);
    store_bind_text(st, 3, in->scheduler);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)in->seed);
    store_bind_text(st, 5, in->version);
    store_bind_text(st, 6, in->profile);
    store_bind_text(st, 7, in->model);
    store_bind_text(st, 8, in->gpu);
    store_bind_text(st, 9, in->dtype);
    sqlite3_bind_int(st, 10, in->replicas);
    sqlite3_bind_int(st, 11, in->tensor_parallel);
    store_bind_text(st, 12, in->hardware);
    store_bind_text(st, 13, store_level_name(in->level));
    if (in->offered_rate > 0)
        sqlite3_bind_double(st, 14, in->offered_rate);
    if (in->num_requests > 0)
        sqlite3_bind_int64(st, 15, in->num_requests);
    if (in->kv_blocks > 0)
        sqlite3_bind_int64(st, 16, in->kv_blocks);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_fail(s, err, "inserting the run");
    w->id = sqlite3_last_insert_rowid(s->db);
    w->rq = insert_stmt(s, "requests", RQ_COLS, 1, err);
    w->it = insert_stmt(s, "iterations", IT_COLS, 1, err);
    w->sp = insert_stmt(s, "request_spans", SP_COLS, 1, err);
    w->rqn = insert_stmt(s, "requests", RQ_COLS, BATCH, err);
    w->itn = insert_stmt(s, "iterations", IT_COLS, BATCH, err);
    w->spn = insert_stmt(s, "request_spans", SP_COLS, BATCH, err);
    return (w->rq && w->it && w->sp && w->rqn && w->itn && w->spn) ? 0 : -1;
}

store_run *store_run_begin(store *s, const store_run_info *info, int buffered, sim_err *err)
{
    store_run *w = sim_xcalloc(1, sizeof *w);
    w->s = s;
    w->info = *info;
    w->buffered = buffered;
    if (!buffered && open_run(w, err) != 0) {
        store_run_abort(w);
        return NULL;
    }
    return w;
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

static void bind_request(store_run *w, sqlite3_stmt *st, int o, const rq_row *r)
{
    sqlite3_bind_int64(st, o + 1, w->id);
    sqlite3_bind_int64(st, o + 2, r->id);
    sqlite3_bind_int(st, o + 3, r->replica);
    sqlite3_bind_int64(st, o + 4, r->arrival);
    bind_time(st, o + 5, r->first_sched);
    bind_time(st, o + 6, r->last_sched);
    bind_time(st, o + 7, r->first_token);
    bind_time(st, o + 8, r->finish);
    sqlite3_bind_int(st, o + 9, r->prompt);
    sqlite3_bind_int(st, o + 10, r->output);
    sqlite3_bind_int(st, o + 11, r->preemptions);
    sqlite3_bind_int(st, o + 12, r->scheduled);
    sqlite3_bind_text(st, o + 13, eng_rq_status_name((eng_rq_status)r->status), -1, SQLITE_STATIC);
    if (r->status == ENG_RQ_REJECTED)
        sqlite3_bind_text(st, o + 14, eng_reject_reason_name((eng_reject_reason)r->reject), -1,
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(st, o + 14);
}

static void bind_iteration(store_run *w, sqlite3_stmt *st, int o, const eng_iter_rec *it)
{
    sqlite3_bind_int64(st, o + 1, w->id);
    sqlite3_bind_int(st, o + 2, it->replica);
    sqlite3_bind_int64(st, o + 3, it->iter);
    sqlite3_bind_int64(st, o + 4, it->start_ns);
    sqlite3_bind_int64(st, o + 5, it->duration_ns);
    sqlite3_bind_int64(st, o + 6, it->cpu_ns);
    sqlite3_bind_int64(st, o + 7, it->gpu_ns);
    sqlite3_bind_int(st, o + 8, it->num_seqs);
    sqlite3_bind_int(st, o + 9, it->prefill_tokens);
    sqlite3_bind_int(st, o + 10, it->decode_tokens);
    sqlite3_bind_int64(st, o + 11, it->kv_blocks_used);
    sqlite3_bind_int(st, o + 12, it->preempted);
    sqlite3_bind_int(st, o + 13, it->shape.prefill_seqs);
    sqlite3_bind_double(st, o + 14, it->shape.prefill_pairs);
    sqlite3_bind_double(st, o + 15, it->shape.prefill_kv);
    sqlite3_bind_double(st, o + 16, it->shape.prefill_q2);
    sqlite3_bind_int64(st, o + 17, it->shape.decode_ctx);
    sqlite3_bind_int(st, o + 18, it->shape.emit_seqs);
}

static void bind_span(store_run *w, sqlite3_stmt *st, int o, const eng_span_rec *sp)
{
    sqlite3_bind_int64(st, o + 1, w->id);
    sqlite3_bind_int64(st, o + 2, sp->req);
    sqlite3_bind_int(st, o + 3, sp->span);
    sqlite3_bind_int(st, o + 4, sp->replica);
    sqlite3_bind_int64(st, o + 5, sp->start_ns);
    bind_time(st, o + 6, sp->decode_ns);
    sqlite3_bind_int64(st, o + 7, sp->end_ns);
    sqlite3_bind_text(st, o + 8, eng_span_end_name(sp->end), -1, SQLITE_STATIC);
}

/* The held spans, as flush() writes the other rows. */
static void flush_spans(store_run *w, int all)
{
    size_t i = 0;
    for (; i + BATCH <= w->nsp; i += BATCH) {
        for (int r = 0; r < BATCH; r++)
            bind_span(w, w->spn, r * SP_COLS, &w->sps[i + (size_t)r]);
        step(w, w->spn, "inserting request spans");
    }
    for (; all && i < w->nsp; i++) {
        bind_span(w, w->sp, 0, &w->sps[i]);
        step(w, w->sp, "inserting a request span");
    }
    if (i > 0 && i < w->nsp)
        memmove(w->sps, w->sps + i, (w->nsp - i) * sizeof *w->sps);
    w->nsp -= i;
}

/* Writes the held rows: full batches through the multi-row statements, the rest (only when
 * `all`) one by one. */
static void flush(store_run *w, int all)
{
    flush_spans(w, all);
    size_t i = 0;
    for (; i + BATCH <= w->nrq; i += BATCH) {
        for (int r = 0; r < BATCH; r++)
            bind_request(w, w->rqn, r * RQ_COLS, &w->rqs[i + (size_t)r]);
        step(w, w->rqn, "inserting requests");
    }
    for (; all && i < w->nrq; i++) {
        bind_request(w, w->rq, 0, &w->rqs[i]);
        step(w, w->rq, "inserting a request");
    }
    if (i > 0 && i < w->nrq)
        memmove(w->rqs, w->rqs + i, (w->nrq - i) * sizeof *w->rqs);
    w->nrq -= i;
    for (i = 0; i + BATCH <= w->nit; i += BATCH) {
        for (int r = 0; r < BATCH; r++)
            bind_iteration(w, w->itn, r * IT_COLS, &w->its[i + (size_t)r]);
        step(w, w->itn, "inserting iterations");
    }
    for (; all && i < w->nit; i++) {
        bind_iteration(w, w->it, 0, &w->its[i]);
        step(w, w->it, "inserting an iteration");
    }
    if (i > 0 && i < w->nit)
        memmove(w->its, w->its + i, (w->nit - i) * sizeof *w->its);
    w->nit -= i;
}

void store_run_request(store_run *w, const eng_request *rq)
{
    if (w->info.level < STORE_REQUESTS || w->failed)
        return;
    if (w->nrq == w->caprq) {
        w->caprq = w->caprq ? 2 * w->caprq : 1024;
        w->rqs = sim_xrealloc(w->rqs, w->caprq * sizeof *w->rqs);
    }
    w->rqs[w->nrq++] = (rq_row){
        rq->id,        rq->t_arrival,      rq->t_first_sched, rq->t_last_sched, rq->t_first_token,
        rq->t_finish,  rq->replica,        rq->prompt,        rq->output,       rq->preemptions,
        rq->scheduled, (int8_t)rq->status, (int8_t)rq->reject};
    if (!w->buffered && w->nrq == BATCH)
        flush(w, 0);
}

void store_run_iteration(store_run *w, const eng_iter_rec *it)
{
    if (w->info.level < STORE_ITERATIONS || w->failed)
        return;
    if (w->nit == w->capit) {
        w->capit = w->capit ? 2 * w->capit : 1024;
        w->its = sim_xrealloc(w->its, w->capit * sizeof *w->its);
    }
    w->its[w->nit++] = *it;
    if (!w->buffered && w->nit == BATCH)
        flush(w, 0);
}

void store_run_span(store_run *w, const eng_span_rec *sp)
{
    /* a request's only span (never preempted) is its request row's first_scheduled_ns ..
     * finish_ns: not written again (request_spans_all puts it back) */
    if (w->info.level < STORE_REQUESTS || w->failed ||
        (sp->span == 0 && sp->end == ENG_SPAN_FINISHED))
        return;
    if (w->nsp == w->capsp) {
        w->capsp = w->capsp ? 2 * w->capsp : 1024;
        w->sps = sim_xrealloc(w->sps, w->capsp * sizeof *w->sps);
    }
    w->sps[w->nsp++] = *sp;
    if (!w->buffered && w->nsp == BATCH)
        flush_spans(w, 0);
}

static void rec_request(void *st, const eng_request *rq)
{
    store_run_request(st, rq);
}

static void rec_iteration(void *st, const eng_iter_rec *it)
{
    store_run_iteration(st, it);
}

static void rec_span(void *st, const eng_span_rec *sp)
{
    store_run_span(st, sp);
}

const eng_recorder_ops *store_run_recorder(void)
{
    static const eng_recorder_ops ops = {rec_request, rec_iteration, NULL, rec_span};
    return &ops;
}

int store_run_finish(store_run *w, const eng_metric *m, int n, store_run_hook hook, void *arg,
                     int64_t *run_id, sim_err *err)
{
    if (w->buffered && open_run(w, err) != 0)
        goto fail;
    flush(w, 1);
    if (w->failed) {
        if (err)
            *err = w->err;
        goto fail;
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
    if (hook && hook(arg, w->s, w->id, err) != 0)
        goto fail;
    if (store_commit(w->s, err) != 0)
        goto fail;
    if (run_id)
        *run_id = w->id;
    free_run(w);
    return 0;
fail:
    store_run_abort(w);
    return -1;
}

void store_run_abort(store_run *w)
{
    if (w->begun)
        store_rollback(w->s);
    free_run(w);
}
