/*
 * trace.c: a run as a Chrome trace event file (JSON), for chrome://tracing or Perfetto.
 *
 * Layout: one process per replica ("replica N"). Its thread 0 holds one complete event ("X")
 * per iteration, named prefill, decode or mixed by the tokens it ran, with the batch shape in
 * args; a counter ("C") per iteration tracks sequences in the batch and KV blocks in use. Each
 * request is a nestable async span ("b"/"e", cat "request", id = request id) from arrival to
 * finish, with child spans queued (arrival -> first scheduled), prefill (first scheduled ->
 * first token) and decode (first token -> finish); empty phases are left out, and a request
 * that never finished ends at the last iteration. Rejected requests are instant events.
 * Timestamps are microseconds of simulated time, written exactly (ns / 1000 with three
 * decimals).
 */
#include <errno.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Microseconds from ns, exact: "1234.567". */
static void us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* The "otherData" header and one process per replica. */
static void write_header(const store_run_meta *m, FILE *f, int *replicas)
{
    const char *const keys[] = {"scheduler", "model", "gpu", "profile", "version"};
    const char *const vals[] = {m->scheduler, m->model, m->gpu, m->profile, m->version};
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":%lld", (long long)m->id);
    for (int i = 0; i < 5; i++) {
        fprintf(f, ",\"%s\":", keys[i]);
        json_str(f, vals[i]);
    }
    fprintf(f, ",\"seed\":%lld,\"clock\":\"simulated\"},\n\"traceEvents\":[\n", (long long)m->seed);
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
    fprintf(f,
            "{\"name\":\"%s\",\"cat\":\"iteration\",\"ph\":\"X\",\"pid\":%lld,\"tid\":0,"
            "\"ts\":",
            name, (long long)it->replica);
    us(f, it->start_ns);
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

static int64_t write_iterations(store *s, int64_t run, FILE *f, int64_t *tend, sim_err *err)
{
    store_iter_cursor *c = store_iterations_open(s, run, err);
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

static void span(FILE *f, const char *ph, const char *name, int64_t id, int64_t pid, int64_t t)
{
    fprintf(f,
            "{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"%s\",\"id\":%lld,\"pid\":%lld,"
            "\"tid\":0,\"ts\":",
            name, ph, (long long)id, (long long)pid);
    us(f, t);
    fputs("},\n", f);
}

/* One request: the enclosing span and its non-empty phases, in nesting order. */
static void write_request(FILE *f, const eng_request *q, int64_t tend)
{
    int64_t id = q->id, pid = q->replica;
    /* arrival, first scheduled, first token, finish (-1: never) */
    int64_t t[4] = {q->t_arrival, q->t_first_sched, q->t_first_token, q->t_finish};
    char name[48];
    snprintf(name, sizeof name, "request %lld", (long long)id);
    if (q->status == ENG_RQ_REJECTED) {
        fprintf(f,
                "{\"name\":\"%s rejected\",\"cat\":\"request\",\"ph\":\"i\",\"s\":\"p\","
                "\"pid\":%lld,\"tid\":0,\"ts\":",
                name, (long long)pid);
        us(f, t[0]);
        fputs(",\"args\":{\"reason\":", f);
        json_str(f, eng_reject_reason_name(q->reject));
        fputs("}},\n", f);
        return;
    }
    int64_t end = t[3] >= 0 ? t[3] : tend > t[0] ? tend : t[0];
    fprintf(f,
            "{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"b\",\"id\":%lld,\"pid\":%lld,"
            "\"tid\":0,\"ts\":",
            name, (long long)id, (long long)pid);
    us(f, t[0]);
    fprintf(f,
            ",\"args\":{\"prompt_tokens\":%lld,\"output_tokens\":%lld,\"preemptions\":%lld,"
            "\"status\":",
            (long long)q->prompt, (long long)q->output, (long long)q->preemptions);
    json_str(f, eng_rq_status_name(q->status));
    fputs("}},\n", f);
    static const char *const phase[3] = {"queued", "prefill", "decode"};
    for (int p = 0; p < 3; p++) {
        if (t[p] < 0)
            break;
        int64_t to = t[p + 1] >= 0 ? t[p + 1] : end;
        if (to <= t[p])
            continue;
        span(f, "b", phase[p], id, pid, t[p]);
        span(f, "e", phase[p], id, pid, to);
    }
    span(f, "e", name, id, pid, end);
}

static int64_t write_requests(store *s, int64_t run, FILE *f, int64_t tend, sim_err *err)
{
    store_rq_cursor *c = store_requests_open(s, run, err);
    if (!c)
        return -1;
    eng_request q;
    int64_t n = 0;
    int rc;
    while ((rc = store_requests_next(c, &q, err)) == 1) {
        write_request(f, &q, tend);
        n++;
    }
    store_requests_close(c);
    return rc < 0 ? -1 : n;
}

static int64_t write_trace(store *s, const store_run_meta *m, FILE *f, sim_err *err)
{
    int replicas;
    int64_t run = m->id;
    write_header(m, f, &replicas);
    int64_t tend = 0, nit = write_iterations(s, run, f, &tend, err);
    if (nit < 0)
        return -1;
    if (nit == 0)
        return sim_errf(err,
                        "%s: run %lld has no iteration rows (stored with --store summary); run "
                        "it again with --store iterations or requests",
                        store_path(s), (long long)run);
    int64_t nrq = write_requests(s, run, f, tend, err);
    if (nrq < 0)
        return -1;
    /* a last metadata event, so every event above can end with a comma */
    fputs("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
          "\"args\":{\"name\":\"iterations\"}}\n]}\n",
          f);
    return nit;
}

int64_t plt_trace_export(const char *db, int64_t run, const char *path, sim_err *err)
{
    store *s = store_open_readonly(db, err);
    if (!s)
        return -1;
    store_run_meta m;
    if (store_run_get(s, run, &m, err) != 0) {
        store_close(s);
        return -1;
    }
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
        store_close(s);
        return -1;
    }
    int64_t n = write_trace(s, &m, f, err);
    store_close(s);
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
