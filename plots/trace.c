/*
 * trace.c: a run as a Chrome trace event file (JSON), for chrome://tracing or Perfetto.
 *
 * Layout: one process per replica ("replica N"). Its thread 0 holds one complete event ("X")
 * per iteration, named prefill, decode or mixed by the tokens it ran, with the batch shape in
 * args; a counter ("C") per iteration tracks sequences in the batch and KV blocks in use. Each
 * request is a nestable async span ("b"/"e", cat "request", id = request id) from arrival to
 * finish, with child spans: queued (arrival -> first scheduled), then per scheduled span
 * (request_spans_all) prefill (or "recompute" after a preemption) and decode, and between two
 * spans "preempted" (or "swapped out"), with an instant event ("n") where the preemption
 * happened; empty phases are left out, and a request that never finished ends at the last
 * iteration. A database older than schema 3 has no spans: each request then has one, from its
 * first scheduling to its finish. Rejected requests are instant events. Timestamps are
 * microseconds of simulated time, written exactly (ns / 1000 with three decimals).
 *
 * A window [from, to] keeps the iterations that overlap it (whole) and the requests whose life
 * overlaps it, their phases cut to its edges, so an hour-long run can be looked at a minute at
 * a time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "plt_int.h"
#include "store_query.h"

/* The window written: request times outside it are cut to its edges. */
typedef struct window {
    int64_t from, to; /* ns */
} window;

/* Microseconds from ns, exact: "1234.567". */
static void us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* Opens a trace event on process pid's thread 0 at time t: its name, category, phase and the
 * members between the phase and the process (each with its leading comma; "" for none). The
 * caller writes the rest and closes the object. */
static void open_event(FILE *f, const char *name, const char *cat, const char *ph, const char *more,
                       int64_t pid, int64_t t)
{
    fprintf(f,
            "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"%s\"%s,\"pid\":%lld,\"tid\":0,\"ts\":", name,
            cat, ph, more, (long long)pid);
    us(f, t);
}

/* The window's bounds in the header, when it has any. */
static void write_window(FILE *f, const window *w)
{
    if (w->from == INT64_MIN && w->to == INT64_MAX)
        return;
    fputs(",\"window_from_us\":", f);
    us(f, w->from > INT64_MIN ? w->from : 0);
    if (w->to < INT64_MAX) {
        fputs(",\"window_to_us\":", f);
        us(f, w->to);
    }
}

/* The "otherData" header and one process per replica. */
static void write_header(const store_run_meta *m, const window *w, FILE *f, int *replicas)
{
    const char *const keys[] = {"scheduler", "model", "gpu", "profile", "version"};
    const char *const vals[] = {m->scheduler, m->model, m->gpu, m->profile, m->version};
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":%lld", (long long)m->id);
    for (int i = 0; i < 5; i++) {
        fprintf(f, ",\"%s\":", keys[i]);
        sim_json_write_str(f, vals[i]);
    }
    fprintf(f, ",\"seed\":%lld,\"clock\":\"simulated\"", (long long)m->seed);
    write_window(f, w);
    fputs("},\n\"traceEvents\":[\n", f);
    *replicas = m->replicas > 0 ? m->replicas : 1;
    for (int r = 0; r < *replicas; r++)
        fprintf(f,
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"replica %d\"}},\n"
                "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"sort_index\":%d}},\n"
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"iterations\"}},\n",
                r, r, r, r, r);
}

static void write_iteration(FILE *f, const eng_iter_rec *it)
{
    const char *name = it->prefill_tokens == 0  ? "decode"
                       : it->decode_tokens == 0 ? "prefill"
                                                : "mixed";
    open_event(f, name, "iteration", "X", "", it->replica, it->start_ns);
    fputs(",\"dur\":", f);
    us(f, it->duration_ns);
    fprintf(f,
            ",\"args\":{\"iter\":%lld,\"num_seqs\":%lld,\"prefill_tokens\":%lld,"
            "\"decode_tokens\":%lld,\"kv_blocks_used\":%lld,\"preempted\":%lld,"
            "\"cpu_ns\":%lld,\"gpu_ns\":%lld}},\n",
            (long long)it->iter, (long long)it->num_seqs, (long long)it->prefill_tokens,
            (long long)it->decode_tokens, (long long)it->kv_blocks_used, (long long)it->preempted,
            (long long)it->cpu_ns, (long long)it->gpu_ns);
    fprintf(f, "{\"name\":\"batch\",\"ph\":\"C\",\"pid\":%lld,\"ts\":", (long long)it->replica);
    us(f, it->start_ns);
    fprintf(f, ",\"args\":{\"num_seqs\":%lld,\"kv_blocks_used\":%lld}},\n", (long long)it->num_seqs,
            (long long)it->kv_blocks_used);
}

static int64_t write_iterations(store *s, int64_t run, const window *w, FILE *f, int64_t *tend,
                                sim_err *err)
{
    store_iter_cursor *c = store_iterations_open_range(s, run, w->from, w->to, err);
    if (!c)
        return -1;
    eng_iter_rec it;
    int64_t n = 0;
    int rc;
    while ((rc = store_iterations_next(c, &it, err)) == 1) {
        write_iteration(f, &it);
        if (it.start_ns + it.duration_ns > *tend)
            *tend = it.start_ns + it.duration_ns;
        n++;
    }
    store_iterations_close(c);
    return rc < 0 ? -1 : n;
}

/* An event of phase ph on request id's track (process pid), up to its time t: the caller ends
 * the object. */
static void event(FILE *f, const char *ph, const char *name, int64_t id, int64_t pid, int64_t t)
{
    char more[32];
    snprintf(more, sizeof more, ",\"id\":%lld", (long long)id);
    open_event(f, name, "request", ph, more, pid, t);
}

static void span(FILE *f, const char *ph, const char *name, int64_t id, int64_t pid, int64_t t)
{
    event(f, ph, name, id, pid, t);
    fputs("},\n", f);
}

static int64_t clip(const window *w, int64_t t)
{
    return t < w->from ? w->from : t > w->to ? w->to : t;
}

/* A child phase [a, b) of a request, cut to the window; nothing when that leaves it empty. */
static void phase(FILE *f, const window *w, const char *name, int64_t id, int64_t pid, int64_t a,
                  int64_t b)
{
    if (a < 0 || b <= a || b < w->from || a > w->to)
        return;
    span(f, "b", name, id, pid, clip(w, a));
    span(f, "e", name, id, pid, clip(w, b));
}

/* An instant event at t on the request's track (only inside the window). */
static void mark(FILE *f, const window *w, const char *name, const eng_span_rec *sp)
{
    if (sp->end_ns < w->from || sp->end_ns > w->to)
        return;
    event(f, "n", name, sp->req, sp->replica, sp->end_ns);
    fprintf(f, ",\"args\":{\"span\":%d}},\n", sp->span);
}

/* The spans of one request: a run of the span cursor (in request order). */
typedef struct rq_spans {
    eng_span_rec *v;
    int n, cap;
} rq_spans;

/* A rejected request q (named name): an instant at its arrival, when the window holds it. */
static void write_rejected(FILE *f, const eng_request *q, const char *name, const window *w)
{
    if (q->t_arrival < w->from || q->t_arrival > w->to)
        return;
    char rejected[64];
    snprintf(rejected, sizeof rejected, "%s rejected", name);
    open_event(f, rejected, "request", "i", ",\"s\":\"p\"", q->replica, q->t_arrival);
    fputs(",\"args\":{\"reason\":", f);
    sim_json_write_str(f, eng_reject_reason_name(q->reject));
    fputs("}},\n", f);
}

/* Each scheduled span of q as prefill (a recompute after a preemption) and decode, and the
 * waits between spans, the last until end. */
static void write_phases(FILE *f, const window *w, const eng_request *q, const rq_spans *sp,
                         int64_t end)
{
    int64_t id = q->id, pid = q->replica;
    for (int k = 0; k < sp->n; k++) {
        const eng_span_rec *s = &sp->v[k];
        int64_t dec = s->decode_ns >= 0 ? s->decode_ns : s->end_ns;
        phase(f, w, s->span == 0 ? "prefill" : "recompute", id, pid, s->start_ns, dec);
        phase(f, w, "decode", id, pid, dec, s->end_ns);
        if (s->end == ENG_SPAN_FINISHED)
            continue;
        mark(f, w, s->end == ENG_SPAN_SWAPPED ? "swapped out" : "preempted", s);
        int64_t next = k + 1 < sp->n ? sp->v[k + 1].start_ns : end;
        phase(f, w, s->end == ENG_SPAN_SWAPPED ? "swapped out" : "preempted", id, pid, s->end_ns,
              next);
    }
}

/* One request: the enclosing span, its queueing, then each scheduled span as prefill (a
 * recompute after a preemption) and decode, and the waits between spans, in nesting order. */
static void write_request(FILE *f, const eng_request *q, const rq_spans *sp, int64_t tend,
                          const window *w)
{
    int64_t id = q->id, pid = q->replica;
    char name[48];
    snprintf(name, sizeof name, "request %lld", (long long)id);
    if (q->status == ENG_RQ_REJECTED) {
        write_rejected(f, q, name, w);
        return;
    }
    int64_t end = q->t_finish >= 0 ? q->t_finish : tend > q->t_arrival ? tend : q->t_arrival;
    event(f, "b", name, id, pid, clip(w, q->t_arrival));
    fprintf(f,
            ",\"args\":{\"prompt_tokens\":%lld,\"output_tokens\":%lld,\"preemptions\":%lld,"
            "\"status\":",
            (long long)q->prompt, (long long)q->output, (long long)q->preemptions);
    sim_json_write_str(f, eng_rq_status_name(q->status));
    fputs("}},\n", f);
    phase(f, w, "queued", id, pid, q->t_arrival, sp->n ? sp->v[0].start_ns : end);
    write_phases(f, w, q, sp, end);
    span(f, "e", name, id, pid, clip(w, end));
}

/* For a database without spans: one span derived from q's row, when it was scheduled and
 * finished. */
static void row_span(const eng_request *q, rq_spans *sp)
{
    if (q->t_first_sched < 0 || q->t_finish < 0)
        return;
    sp->v[0] = (eng_span_rec){q->id,       q->replica,       0, q->t_first_sched, q->t_first_token,
                              q->t_finish, ENG_SPAN_FINISHED};
    sp->n = 1;
}

/* Moves the span cursor to request q and collects its spans into sp; for a database without
 * spans, one span derived from q's row. 0, or -1 with err. */
static int spans_for(store *s, store_span_cursor *c, eng_span_rec *ahead, int *have_ahead,
                     const eng_request *q, rq_spans *sp, sim_err *err)
{
    sp->n = 0;
    if (!store_has_spans(s)) {
        row_span(q, sp);
        return 0;
    }
    for (;;) {
        if (!*have_ahead) {
            int rc = store_spans_next(c, ahead, err);
            if (rc < 0)
                return -1;
            if (rc == 0)
                return 0;
            *have_ahead = 1;
        }
        if (ahead->req > q->id)
            return 0;
        *have_ahead = 0;
        if (ahead->req < q->id)
            continue;
        if (sp->n == sp->cap)
            sp->v = sim_xrealloc(sp->v, (size_t)(sp->cap *= 2) * sizeof *sp->v);
        sp->v[sp->n++] = *ahead;
    }
}

static int64_t write_requests(store *s, int64_t run, FILE *f, int64_t tend, const window *w,
                              sim_err *err)
{
    store_rq_cursor *c = store_requests_open_range(s, run, w->from, w->to, err);
    store_span_cursor *sc = c ? store_spans_open(s, run, w->from, w->to, err) : NULL;
    rq_spans sp = {sim_xmalloc(8 * sizeof *sp.v), 0, 8};
    eng_request q;
    eng_span_rec ahead;
    int64_t n = 0;
    int rc = -1, have_ahead = 0;
    while (sc && (rc = store_requests_next(c, &q, err)) == 1) {
        if (spans_for(s, sc, &ahead, &have_ahead, &q, &sp, err) != 0) {
            rc = -1;
            break;
        }
        write_request(f, &q, &sp, tend, w);
        n++;
    }
    free(sp.v);
    store_spans_close(sc);
    store_requests_close(c);
    return rc < 0 ? -1 : n;
}

static int64_t write_trace(store *s, const store_run_meta *m, const window *w, FILE *f,
                           sim_err *err)
{
    int replicas;
    int64_t run = m->id;
    write_header(m, w, f, &replicas);
    int64_t tend = 0, nit = write_iterations(s, run, w, f, &tend, err);
    if (nit < 0)
        return -1;
    if (nit == 0 && store_run_count_iterations(s, run, err) == 0)
        return plt_no_iterations(s, run, err);
    if (nit == 0)
        return sim_errf(err, "%s: run %lld has no iteration between %.9g s and %.9g s",
                        store_path(s), (long long)run, (double)w->from / 1e9, (double)w->to / 1e9);
    int64_t nrq = write_requests(s, run, f, tend, w, err);
    if (nrq < 0)
        return -1;
    /* a last metadata event, so every event above can end with a comma */
    fputs("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
          "\"args\":{\"name\":\"iterations\"}}\n]}\n",
          f);
    return nit;
}

/* Writes run m's trace in window w to path ("-": stdout); a file half-written is removed. The
 * iterations written, or -1 with err. */
static int64_t write_file(store *s, const store_run_meta *m, const window *w, const char *path,
                          sim_err *err)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f)
        return sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
    int64_t n = write_trace(s, m, w, f, err);
    if (ferror(f) && n >= 0)
        n = sim_errf(err, "%s: write error", path);
    if (to_stdout)
        fflush(f);
    else if (fclose(f) != 0 && n >= 0)
        n = sim_errf(err, "%s: write error: %s", path, strerror(errno));
    if (n < 0 && !to_stdout)
        remove(path);
    return n;
}

int64_t plt_trace_export(const char *db, int64_t run, int64_t from_ns, int64_t to_ns,
                         const char *path, sim_err *err)
{
    if (from_ns > to_ns)
        return sim_errf(err, "the window ends (%.9g s) before it starts (%.9g s)",
                        (double)to_ns / 1e9, (double)from_ns / 1e9);
    window w = {from_ns, to_ns};
    store *s = store_open_readonly(db, err);
    if (!s)
        return -1;
    store_run_meta m;
    if (store_run_get(s, run, &m, err) != 0) {
        store_close(s);
        return -1;
    }
    int64_t n = write_file(s, &m, &w, path, err);
    store_close(s);
    return n;
}
