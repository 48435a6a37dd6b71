/*
 * run.c: the run writer: prepared statements reused for every row (and kept on the connection
 * from one run to the next), streaming rows as the simulation produces them, buffering them for
 * one short transaction, or spooling them to a file that store_run_replay writes later.
 *
 * The spool is a sequence of records `u32 tag, u32 length, payload`, native-endian and private
 * to one build (it carries runs between the processes of one sweep; it is not a file format):
 *   SP_RUN        the run's row: seed, replicas, TP, level, offered rate, num_requests,
 *                 kv_blocks, then
 *                 the nine strings of store_run_info, each `u32 length` (SP_NULL for NULL) and
 *                 its bytes with their NUL; always the first record
 *   SP_REQUEST    one rq_row
 *   SP_ITERATION  one eng_iter_rec
 *   SP_SPAN       one eng_span_rec (a request's scheduled span, as store_run_span keeps it)
 *   SP_METRICS    `u32 n` and n eng_metric
 *   SP_FLEET      one eng_fleet_pools and the run's eng_fleet_window rows (its fleet timeline)
 *   SP_END        nothing: the run is whole; always the last record
 * A new kind of row is one more tag: its writer encodes the row in spool mode, and replay
 * hands it to the same row buffer the database mode fills.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_run.h"

/* The kinds of row a run holds and writes BATCH at a time, in the order flush writes them. */
enum row_kind { K_SPAN, K_REQUEST, K_ITERATION, K_COUNT };

typedef struct rq_row {
    int64_t id, arrival, first_sched, last_sched, first_token, finish;
    int32_t replica, prompt, output, preemptions, scheduled;
    int8_t status, reject;
} rq_row;

struct store_run {
    store *s;    /* NULL in spool mode */
    FILE *spool; /* spool mode: where the records go */
    store_run_info info;
    int buffered, begun;
    int64_t id;
    int failed;
    sim_err err;
    struct held { /* a kind of row (enum row_kind) held until its batch is full */
        char *rows;
        size_t n, cap;
        sqlite3_stmt *one, *many; /* one row; BATCH rows (the connection's, cached) */
    } held[K_COUNT];
    eng_fleet_window *fw; /* the fleet timeline, written at finish */
    int64_t nfw;
    eng_fleet_pools fpools;
};

/* Spool record tags. */
enum { SP_RUN = 1, SP_REQUEST, SP_ITERATION, SP_METRICS, SP_END, SP_SPAN, SP_FLEET };
#define SP_NULL UINT32_MAX

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
    for (int k = 0; k < K_COUNT; k++)
        free(w->held[k].rows);
    free(w->fw);
    free(w);
}

/* Rows go BATCH to a statement: one multi-row INSERT costs much less per row than BATCH
 * single-row ones (fewer statement steps and resets). */
#define BATCH 64
#define RQ_COLS 14
#define IT_COLS 18
#define SP_COLS 8

static void bind_request(store_run *w, sqlite3_stmt *st, int o, const void *row);
static void bind_iteration(store_run *w, sqlite3_stmt *st, int o, const void *row);
static void bind_span(store_run *w, sqlite3_stmt *st, int o, const void *row);

/* What each kind of row is: its table and columns, the connection's cached statements of one
 * row and of BATCH rows, its spool tag and size, its binder, and what failed in a message. */
typedef struct row_kind_def {
    const char *table;
    int cols, st_one, st_many;
    uint32_t tag;
    size_t size;
    void (*bind)(store_run *w, sqlite3_stmt *st, int o, const void *row);
    const char *one, *many;
} row_kind_def;

static const row_kind_def kinds[K_COUNT] = {
    [K_SPAN] = {"request_spans", SP_COLS, STORE_ST_SP1, STORE_ST_SPN, SP_SPAN, sizeof(eng_span_rec),
                bind_span, "inserting a request span", "inserting request spans"},
    [K_REQUEST] = {"requests", RQ_COLS, STORE_ST_RQ1, STORE_ST_RQN, SP_REQUEST, sizeof(rq_row),
                   bind_request, "inserting a request", "inserting requests"},
    [K_ITERATION] = {"iterations", IT_COLS, STORE_ST_IT1, STORE_ST_ITN, SP_ITERATION,
                     sizeof(eng_iter_rec), bind_iteration, "inserting an iteration",
                     "inserting iterations"},
};

/* The connection's cached INSERT of `rows` rows into table (prepared on first use; the store
 * finalizes it on close). Reset after every use. */
static sqlite3_stmt *insert_stmt(store *s, int which, const char *table, int cols, int rows,
                                 sim_err *err)
{
    if (s->cached[which])
        return s->cached[which];
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
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        store_fail(s, err, "preparing a statement");
    free(sql);
    return s->cached[which] = st;
}

/* A runs row: the columns before store_level, and those after it (absent figures NULL). */
#define INFO_FIELD(kind, member) STORE_FIELD(kind, store_run_info, member)
#define INFO_FIELD_POS(kind, member) STORE_FIELD_POS(kind, store_run_info, member)
static const store_field run_head[] = {
    INFO_FIELD(STORE_F_TEXT, name),           INFO_FIELD(STORE_F_TEXT, scenario_text),
    INFO_FIELD(STORE_F_TEXT, scheduler),      INFO_FIELD(STORE_F_I64, seed),
    INFO_FIELD(STORE_F_TEXT, version),        INFO_FIELD(STORE_F_TEXT, profile),
    INFO_FIELD(STORE_F_TEXT, model),          INFO_FIELD(STORE_F_TEXT, gpu),
    INFO_FIELD(STORE_F_TEXT, dtype),          INFO_FIELD(STORE_F_INT, replicas),
    INFO_FIELD(STORE_F_INT, tensor_parallel), INFO_FIELD(STORE_F_TEXT, hardware),
};
static const store_field run_tail[] = {
    INFO_FIELD_POS(STORE_F_REAL, offered_rate),
    INFO_FIELD_POS(STORE_F_I64, num_requests),
    INFO_FIELD_POS(STORE_F_I64, kv_blocks),
};

/* Binds a run's row to the INSERT INTO runs statement (absent figures stay NULL). */
static void bind_run(sqlite3_stmt *st, const store_run_info *in)
{
    sqlite3_clear_bindings(st);
    store_bind_fields(st, 1, run_head, (int)(sizeof run_head / sizeof *run_head), in);
    store_bind_text(st, 13, store_level_name(in->level));
    store_bind_fields(st, 14, run_tail, (int)(sizeof run_tail / sizeof *run_tail), in);
}

/* BEGIN, the run row, the row statements. */
static int open_run(store_run *w, sim_err *err)
{
    store *s = w->s;
    const store_run_info *in = &w->info;
    if (store_begin(s, err) != 0)
        return -1;
    w->begun = 1;
    sqlite3_stmt *st = s->cached[STORE_ST_RUN];
    if (!st && sqlite3_prepare_v3(
                   s->db,
                   "INSERT INTO runs (name, scenario, scheduler, seed, version, profile, model, "
                   "gpu, dtype, replicas, tensor_parallel, hardware, store_level, offered_rate, "
                   "num_requests, kv_blocks) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return store_fail(s, err, "preparing a statement");
    s->cached[STORE_ST_RUN] = st;
    bind_run(st, in);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return store_fail(s, err, "inserting the run");
    w->id = sqlite3_last_insert_rowid(s->db);
    if (in->level < STORE_ITERATIONS)
        return 0; /* no rows: no row statements */
    int ok = 1;
    for (int k = 0; k < K_COUNT; k++) {
        const row_kind_def *d = &kinds[k];
        struct held *h = &w->held[k];
        h->one = insert_stmt(s, d->st_one, d->table, d->cols, 1, err);
        h->many = insert_stmt(s, d->st_many, d->table, d->cols, BATCH, err);
        ok = ok && h->one && h->many;
    }
    return ok ? 0 : -1;
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

static void bind_request(store_run *w, sqlite3_stmt *st, int o, const void *row)
{
    const rq_row *r = row;
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

static void bind_iteration(store_run *w, sqlite3_stmt *st, int o, const void *row)
{
    const eng_iter_rec *it = row;
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

static void bind_span(store_run *w, sqlite3_stmt *st, int o, const void *row)
{
    const eng_span_rec *sp = row;
    sqlite3_bind_int64(st, o + 1, w->id);
    sqlite3_bind_int64(st, o + 2, sp->req);
    sqlite3_bind_int(st, o + 3, sp->span);
    sqlite3_bind_int(st, o + 4, sp->replica);
    sqlite3_bind_int64(st, o + 5, sp->start_ns);
    bind_time(st, o + 6, sp->decode_ns);
    sqlite3_bind_int64(st, o + 7, sp->end_ns);
    sqlite3_bind_text(st, o + 8, eng_span_end_name(sp->end), -1, SQLITE_STATIC);
}

/* Writes the held rows of kind k: full batches through the multi-row statement, the rest (only
 * when `all`) one by one. */
static void flush_kind(store_run *w, int k, int all)
{
    const row_kind_def *d = &kinds[k];
    struct held *h = &w->held[k];
    size_t i = 0;
    for (; i + BATCH <= h->n; i += BATCH) {
        for (int r = 0; r < BATCH; r++)
            d->bind(w, h->many, r * d->cols, h->rows + (i + (size_t)r) * d->size);
        step(w, h->many, d->many);
    }
    for (; all && i < h->n; i++) {
        d->bind(w, h->one, 0, h->rows + i * d->size);
        step(w, h->one, d->one);
    }
    if (i > 0 && i < h->n)
        memmove(h->rows, h->rows + i * d->size, (h->n - i) * d->size);
    h->n -= i;
}

/* Writes the held rows of every kind (flush_kind). */
static void flush(store_run *w, int all)
{
    for (int k = 0; k < K_COUNT; k++)
        flush_kind(w, k, all);
}

/* ---- the spool ---- */

/* Appends one record; a write failure is remembered and reported by finish. */
static void sp_put(store_run *w, uint32_t tag, const void *a, size_t na, const void *b, size_t nb)
{
    uint32_t head[2] = {tag, (uint32_t)(na + nb)};
    if (w->failed)
        return;
    if (fwrite(head, sizeof head, 1, w->spool) != 1 || (na && fwrite(a, na, 1, w->spool) != 1) ||
        (nb && fwrite(b, nb, 1, w->spool) != 1)) {
        w->failed = 1;
        sim_errf(&w->err, "writing a run to the spool file: %s", strerror(errno));
    }
}

/* Fixed-size fields of SP_RUN, before its strings. */
typedef struct sp_run_head {
    uint64_t seed;
    int32_t replicas, tensor_parallel, level;
    double offered_rate;
    int64_t num_requests, kv_blocks;
} sp_run_head;

/* The nine strings of store_run_info, in SP_RUN's order. */
static const char **info_str(store_run_info *in, int i)
{
    const char **all[9] = {&in->name,    &in->scenario_text, &in->scheduler,
                           &in->version, &in->profile,       &in->model,
                           &in->gpu,     &in->dtype,         &in->hardware};
    return all[i];
}

static void sp_put_run(store_run *w)
{
    const store_run_info *in = &w->info;
    sp_run_head h;
    memset(&h, 0, sizeof h);
    h.seed = in->seed;
    h.replicas = in->replicas;
    h.tensor_parallel = in->tensor_parallel;
    h.level = (int32_t)in->level;
    h.offered_rate = in->offered_rate;
    h.num_requests = in->num_requests;
    h.kv_blocks = in->kv_blocks;
    size_t len = sizeof h;
    for (int i = 0; i < 9; i++) {
        const char *str = *info_str(&w->info, i);
        len += sizeof(uint32_t) + (str ? strlen(str) + 1 : 0);
    }
    char *buf = sim_xmalloc(len), *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (int i = 0; i < 9; i++) {
        const char *str = *info_str(&w->info, i);
        uint32_t n = str ? (uint32_t)strlen(str) + 1 : SP_NULL; /* with its NUL */
        memcpy(p, &n, sizeof n);
        p += sizeof n;
        if (str) {
            memcpy(p, str, n);
            p += n;
        }
    }
    sp_put(w, SP_RUN, buf, len, NULL, 0);
    free(buf);
}

store_run *store_run_begin_spool(FILE *f, const store_run_info *info)
{
    store_run *w = sim_xcalloc(1, sizeof *w);
    w->spool = f;
    w->info = *info;
    sp_put_run(w);
    return w;
}

/* ---- rows ---- */

/* A buffer of n rows of elem bytes (capacity *cap) with room for one more: grown by doubling. */
static void *room_for_one(void *rows, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return rows;
    *cap = *cap ? 2 * *cap : 1024;
    return sim_xrealloc(rows, *cap * elem);
}

/* Holds a row of kind k (or spools it); a full batch of spans is written alone, a full batch of
 * requests or iterations with every held row. */
static void add_row(store_run *w, int k, const void *row)
{
    const row_kind_def *d = &kinds[k];
    if (w->spool) {
        sp_put(w, d->tag, row, d->size, NULL, 0);
        return;
    }
    struct held *h = &w->held[k];
    h->rows = room_for_one(h->rows, h->n, &h->cap, d->size);
    memcpy(h->rows + h->n++ * d->size, row, d->size);
    if (!w->buffered && h->n == BATCH) {
        if (k == K_SPAN)
            flush_kind(w, k, 0);
        else
            flush(w, 0);
    }
}

void store_run_request(store_run *w, const eng_request *rq)
{
    if (w->info.level < STORE_REQUESTS || w->failed)
        return;
    rq_row r;
    memset(&r, 0, sizeof r); /* the padding too: spooled rows are written whole */
    r.id = rq->id;
    r.arrival = rq->t_arrival;
    r.first_sched = rq->t_first_sched;
    r.last_sched = rq->t_last_sched;
    r.first_token = rq->t_first_token;
    r.finish = rq->t_finish;
    r.replica = rq->replica;
    r.prompt = rq->prompt;
    r.output = rq->output;
    r.preemptions = rq->preemptions;
    r.scheduled = rq->scheduled;
    r.status = (int8_t)rq->status;
    r.reject = (int8_t)rq->reject;
    add_row(w, K_REQUEST, &r);
}

void store_run_iteration(store_run *w, const eng_iter_rec *it)
{
    if (w->info.level < STORE_ITERATIONS || w->failed)
        return;
    add_row(w, K_ITERATION, it);
}

void store_run_span(store_run *w, const eng_span_rec *sp)
{
    /* a request's only span (never preempted) is its request row's first_scheduled_ns ..
     * finish_ns: not written again (request_spans_all puts it back) */
    if (w->info.level < STORE_REQUESTS || w->failed ||
        (sp->span == 0 && sp->end == ENG_SPAN_FINISHED))
        return;
    eng_span_rec r;
    memset(&r, 0, sizeof r); /* the padding too: spooled rows are written whole */
    r.req = sp->req;
    r.replica = sp->replica;
    r.span = sp->span;
    r.start_ns = sp->start_ns;
    r.decode_ns = sp->decode_ns;
    r.end_ns = sp->end_ns;
    r.end = sp->end;
    add_row(w, K_SPAN, &r);
}

void store_run_fleet(store_run *w, const eng_fleet_window *win, int64_t n,
                     const eng_fleet_pools *pools)
{
    if (w->failed || n <= 0)
        return;
    if (w->spool) {
        sp_put(w, SP_FLEET, pools, sizeof *pools, win, (size_t)n * sizeof *win);
        return;
    }
    w->fw = sim_xrealloc(w->fw, (size_t)(w->nfw + n) * sizeof *w->fw);
    memcpy(w->fw + w->nfw, win, (size_t)n * sizeof *win);
    w->nfw += n;
    w->fpools = *pools;
}

/* fleet_windows.gpus: a replica's GPUs, when every pool's replicas have as many; else 0. */
static int64_t window_gpus(const eng_fleet_pools *p)
{
    for (int32_t k = 1; k < p->n; k++)
        if (p->gpus[k] != p->gpus[0])
            return 0;
    return p->gpus[0];
}

/* Each pool's share of the windows (fleet_pools): a run of prefill and decode pools only. */
static int insert_fleet_pools(store_run *w, sim_err *err)
{
    static const char *const role[ENG_FLEET_POOLS] = {"prefill", "decode"};
    if (w->fpools.n < 2)
        return 0;
    sqlite3_stmt *st = store_prepare(w->s, "INSERT INTO fleet_pools VALUES (?,?,?,?,?,?,?,?)", err);
    if (!st)
        return -1;
    int rc = SQLITE_DONE;
    for (int64_t i = 0; i < w->nfw && rc == SQLITE_DONE; i++)
        for (int32_t k = 0; k < w->fpools.n && rc == SQLITE_DONE; k++) {
            const int64_t *ns = w->fw[i].pool_ns[k];
            int64_t v[] = {w->id, i, k, 0, w->fpools.gpus[k], ns[0], ns[1], ns[2]};
            for (int c = 0; c < 8; c++)
                sqlite3_bind_int64(st, c + 1, v[c]);
            sqlite3_bind_text(st, 4, role[k], -1, SQLITE_STATIC);
            rc = sqlite3_step(st);
            sqlite3_reset(st);
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(w->s, err, "inserting the fleet timeline's pools");
}

/* The fleet timeline's rows (fleet_windows, fleet_pools), inside the run's transaction. */
static int insert_fleet(store_run *w, sim_err *err)
{
    if (w->nfw == 0)
        return 0;
    sqlite3_stmt *st = store_prepare(w->s,
                                     "INSERT INTO fleet_windows VALUES "
                                     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                     err);
    if (!st)
        return -1;
    int rc = SQLITE_DONE;
    for (int64_t i = 0; i < w->nfw && rc == SQLITE_DONE; i++) {
        const eng_fleet_window *x = &w->fw[i];
        int64_t v[] = {w->id,
                       i,
                       x->start_ns,
                       x->end_ns,
                       window_gpus(&w->fpools),
                       x->serving_ns,
                       x->starting_ns,
                       x->draining_ns,
                       x->arrivals,
                       x->completed,
                       x->good,
                       x->rejected,
                       x->ttft_count};
        for (int c = 0; c < 13; c++)
            sqlite3_bind_int64(st, c + 1, v[c]);
        if (x->ttft_count > 0)
            sqlite3_bind_double(st, 14, x->p99_ttft_ms);
        else
            sqlite3_bind_null(st, 14);
        sqlite3_bind_int64(st, 15, x->gpu_ns);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_fail(w->s, err, "inserting the fleet timeline");
    return insert_fleet_pools(w, err);
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

/* Spool mode: the metrics and the end mark, flushed. */
static int finish_spool(store_run *w, const eng_metric *m, int n, sim_err *err)
{
    uint32_t count = (uint32_t)n;
    sp_put(w, SP_METRICS, &count, sizeof count, m, (size_t)n * sizeof *m);
    sp_put(w, SP_END, NULL, 0, NULL, 0);
    if (!w->failed && fflush(w->spool) != 0) {
        w->failed = 1;
        sim_errf(&w->err, "writing a run to the spool file: %s", strerror(errno));
    }
    int rc = w->failed ? -1 : 0;
    if (rc && err)
        *err = w->err;
    free_run(w);
    return rc;
}

static int insert_metrics(store_run *w, const eng_metric *m, int n, sim_err *err)
{
    sqlite3_stmt *st = w->s->cached[STORE_ST_METRIC];
    if (!st && sqlite3_prepare_v3(w->s->db, "INSERT INTO metrics VALUES (?,?,?)", -1,
                                  SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        return store_fail(w->s, err, "preparing a statement");
    w->s->cached[STORE_ST_METRIC] = st;
    for (int i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, w->id);
        sqlite3_bind_text(st, 2, m[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 3, m[i].value);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return store_fail(w->s, err, "inserting metrics");
    }
    return 0;
}

int store_run_finish(store_run *w, const eng_metric *m, int n, store_run_hook hook, void *arg,
                     int64_t *run_id, sim_err *err)
{
    int rc = -1;
    if (w->spool) {
        SIM_ASSERT(NULL, hook == NULL); /* the hook runs where the run is replayed */
        return finish_spool(w, m, n, err);
    }
    if (w->buffered && open_run(w, err) != 0)
        goto fail;
    flush(w, 1);
    if (w->failed) {
        if (err)
            *err = w->err;
        goto fail;
    }
    if (insert_metrics(w, m, n, err) != 0 || insert_fleet(w, err) != 0)
        goto fail;
    if (hook && (rc = hook(arg, w->s, w->id, err)) != 0)
        goto fail; /* rc 1: the hook asks for a quiet roll-back */
    if ((rc = store_commit(w->s, err)) != 0)
        goto fail;
    if (run_id)
        *run_id = w->id;
    free_run(w);
    return 0;
fail:
    store_run_abort(w);
    return rc > 0 ? rc : -1;
}

void store_run_abort(store_run *w)
{
    if (w->begun)
        store_rollback(w->s);
    free_run(w);
}

/* ---- replay ---- */

typedef struct reader {
    FILE *f;
    int64_t left; /* bytes of the run not read yet */
    char *buf;    /* the current record's payload */
    size_t cap;
    uint32_t tag, len;
} reader;

/* Reads the next record into r; 0, or -1 with err (truncated, beyond the run, too long). */
static int next_record(reader *r, sim_err *err)
{
    uint32_t head[2];
    if (r->left < (int64_t)sizeof head || fread(head, sizeof head, 1, r->f) != 1)
        return sim_errf(err, "spool: the run ends without its end mark");
    r->left -= (int64_t)sizeof head;
    r->tag = head[0];
    r->len = head[1];
    if ((int64_t)r->len > r->left)
        return sim_errf(err, "spool: a record of %u bytes runs past the run", (unsigned)r->len);
    if (r->len > r->cap) {
        r->cap = r->len;
        r->buf = sim_xrealloc(r->buf, r->cap);
    }
    if (r->len && fread(r->buf, r->len, 1, r->f) != 1)
        return sim_errf(err, "spool: reading: %s", feof(r->f) ? "end of file" : strerror(errno));
    r->left -= r->len;
    return 0;
}

/* SP_RUN's payload into *in, its strings pointing into r->buf (valid until the next record):
 * 0, or -1 with err. */
static int parse_run(const reader *r, store_run_info *in, sim_err *err)
{
    sp_run_head h;
    const char *p = r->buf, *end = r->buf + r->len;
    if (r->tag != SP_RUN || r->len < sizeof h)
        return sim_errf(err, "spool: a run must start with its run record");
    memcpy(&h, p, sizeof h);
    p += sizeof h;
    memset(in, 0, sizeof *in);
    in->seed = h.seed;
    in->replicas = h.replicas;
    in->tensor_parallel = h.tensor_parallel;
    in->level = (store_level)h.level;
    in->offered_rate = h.offered_rate;
    in->num_requests = h.num_requests;
    in->kv_blocks = h.kv_blocks;
    for (int i = 0; i < 9; i++) {
        uint32_t n;
        if (end - p < (ptrdiff_t)sizeof n)
            return sim_errf(err, "spool: a truncated run record");
        memcpy(&n, p, sizeof n);
        p += sizeof n;
        if (n == SP_NULL)
            continue;
        if (n == 0 || (size_t)(end - p) < n || p[n - 1] != '\0')
            return sim_errf(err, "spool: a truncated run record");
        *info_str(in, i) = p;
        p += n;
    }
    return 0;
}

/* Reads the spool's next record into w (rows) or sum (metrics): 1 to go on, 0 at its end
 * record, -1 with err. */
static int replay_record(reader *r, store_run *w, store_run_summary *sum, sim_err *err)
{
    if (next_record(r, err))
        return -1;
    if (r->tag == SP_REQUEST && r->len == sizeof(rq_row)) {
        rq_row row;
        memcpy(&row, r->buf, sizeof row);
        add_row(w, K_REQUEST, &row);
    } else if (r->tag == SP_ITERATION && r->len == sizeof(eng_iter_rec)) {
        eng_iter_rec it;
        memcpy(&it, r->buf, sizeof it);
        add_row(w, K_ITERATION, &it);
    } else if (r->tag == SP_SPAN && r->len == sizeof(eng_span_rec)) {
        eng_span_rec sp;
        memcpy(&sp, r->buf, sizeof sp);
        add_row(w, K_SPAN, &sp);
    } else if (r->tag == SP_METRICS && r->len >= sizeof(uint32_t)) {
        uint32_t n;
        memcpy(&n, r->buf, sizeof n);
        if (n > ENG_MAX_METRICS || r->len != sizeof n + n * sizeof(eng_metric))
            return sim_errf(err, "spool: a malformed metrics record");
        memcpy(sum->m, r->buf + sizeof n, n * sizeof(eng_metric));
        sum->n = (int)n;
    } else if (r->tag == SP_FLEET && r->len >= sizeof(eng_fleet_pools) &&
               (r->len - sizeof(eng_fleet_pools)) % sizeof(eng_fleet_window) == 0) {
        eng_fleet_pools pools;
        int64_t n = (int64_t)((r->len - sizeof pools) / sizeof(eng_fleet_window));
        memcpy(&pools, r->buf, sizeof pools);
        eng_fleet_window *win = sim_xmalloc((size_t)(n ? n : 1) * sizeof *win);
        memcpy(win, r->buf + sizeof pools, (size_t)n * sizeof *win);
        store_run_fleet(w, win, n, &pools);
        free(win);
    } else if (r->tag == SP_END && r->len == 0 && r->left == 0) {
        return 0;
    } else {
        return sim_errf(err, "spool: unexpected record (tag %u, %u bytes)", (unsigned)r->tag,
                        (unsigned)r->len);
    }
    return 1;
}

int store_run_replay(store *s, FILE *f, int64_t len, store_run_hook hook, void *arg,
                     store_run_summary *sum, sim_err *err)
{
    reader r = {.f = f, .left = len};
    store_run_info info;
    store_run *w = NULL;
    char *strs = NULL;
    int rc = -1;
    memset(sum, 0, sizeof *sum);
    if (next_record(&r, err) || parse_run(&r, &info, err))
        goto out;
    strs = r.buf; /* the info's strings live in this payload: keep it for the run */
    r.buf = NULL;
    r.cap = 0;
    sum->seed = info.seed;
    if (!(w = store_run_begin(s, &info, 0, err)))
        goto out;
    int more;
    while ((more = replay_record(&r, w, sum, err)) > 0)
        ;
    if (more < 0)
        goto out;
    store_run *done = w;
    w = NULL;
    rc = store_run_finish(done, sum->m, sum->n, hook, arg, &sum->run_id, err);
out:
    if (w)
        store_run_abort(w);
    free(strs);
    free(r.buf);
    return rc;
}
