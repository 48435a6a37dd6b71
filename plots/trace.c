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

static const char *col_text(sqlite3_stmt *st, int c)
{
    const unsigned char *t = sqlite3_column_text(st, c);
    return t ? (const char *)t : "";
}

/* The "otherData" header and one process per replica. */
static int write_header(plt_db *d, int64_t run, FILE *f, int *replicas, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(d,
                                      "SELECT scheduler, model, gpu, profile, version, seed,"
                                      " coalesce(replicas, 1) FROM runs WHERE id = ?",
                                      err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return sim_errf(err, "%s: no run %lld in this database", d->path, (long long)run);
    }
    static const char *const keys[] = {"scheduler", "model", "gpu", "profile", "version"};
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":%lld", (long long)run);
    for (int i = 0; i < 5; i++) {
        fprintf(f, ",\"%s\":", keys[i]);
        json_str(f, col_text(st, i));
    }
    fprintf(f, ",\"seed\":%lld,\"clock\":\"simulated\"},\n\"traceEvents\":[\n",
            (long long)sqlite3_column_int64(st, 5));
    *replicas = sqlite3_column_int(st, 6) > 0 ? sqlite3_column_int(st, 6) : 1;
    sqlite3_finalize(st);
    for (int r = 0; r < *replicas; r++)
        fprintf(f,
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"replica %d\"}},\n"
                "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"sort_index\":%d}},\n"
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"iterations\"}},\n",
                r, r, r, r, r);
    return 0;
}

static int64_t write_iterations(plt_db *d, int64_t run, FILE *f, int64_t *tend, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(
        d,
        "SELECT replica, iter, start_ns, duration_ns, cpu_ns, gpu_ns, num_seqs, prefill_tokens,"
        " decode_tokens, kv_blocks_used, preempted FROM iterations WHERE run_id = ?"
        " ORDER BY replica, iter",
        err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int64_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t v[11];
        for (int c = 0; c < 11; c++)
            v[c] = sqlite3_column_int64(st, c);
        const char *name = v[7] == 0 ? "decode" : v[8] == 0 ? "prefill" : "mixed";
        fprintf(f,
                "{\"name\":\"%s\",\"cat\":\"iteration\",\"ph\":\"X\",\"pid\":%lld,\"tid\":0,"
                "\"ts\":",
                name, (long long)v[0]);
        us(f, v[2]);
        fputs(",\"dur\":", f);
        us(f, v[3]);
        fprintf(f,
                ",\"args\":{\"iter\":%lld,\"num_seqs\":%lld,\"prefill_tokens\":%lld,"
                "\"decode_tokens\":%lld,\"kv_blocks_used\":%lld,\"preempted\":%lld,"
                "\"cpu_ns\":%lld,\"gpu_ns\":%lld}},\n",
                (long long)v[1], (long long)v[6], (long long)v[7], (long long)v[8], (long long)v[9],
                (long long)v[10], (long long)v[4], (long long)v[5]);
        fprintf(f, "{\"name\":\"batch\",\"ph\":\"C\",\"pid\":%lld,\"ts\":", (long long)v[0]);
        us(f, v[2]);
        fprintf(f, ",\"args\":{\"num_seqs\":%lld,\"kv_blocks_used\":%lld}},\n", (long long)v[6],
                (long long)v[9]);
        if (v[2] + v[3] > *tend)
            *tend = v[2] + v[3];
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return plt_db_fail(d, "reading iterations", err);
    return n;
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
static void write_request(FILE *f, sqlite3_stmt *st, int64_t tend)
{
    int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
    int64_t t[4]; /* arrival, first scheduled, first token, finish (-1: never) */
    for (int c = 0; c < 4; c++)
        t[c] = sqlite3_column_type(st, 2 + c) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2 + c);
    char name[48];
    snprintf(name, sizeof name, "request %lld", (long long)id);
    if (strcmp(col_text(st, 9), "rejected") == 0) {
        fprintf(f,
                "{\"name\":\"%s rejected\",\"cat\":\"request\",\"ph\":\"i\",\"s\":\"p\","
                "\"pid\":%lld,\"tid\":0,\"ts\":",
                name, (long long)pid);
        us(f, t[0]);
        fputs(",\"args\":{\"reason\":", f);
        json_str(f, col_text(st, 10));
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
            (long long)sqlite3_column_int64(st, 6), (long long)sqlite3_column_int64(st, 7),
            (long long)sqlite3_column_int64(st, 8));
    json_str(f, col_text(st, 9));
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

static int64_t write_requests(plt_db *d, int64_t run, FILE *f, int64_t tend, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(
        d,
        "SELECT req_id, coalesce(replica, 0), arrival_ns, first_scheduled_ns, first_token_ns,"
        " finish_ns, prompt_tokens, output_tokens, preemptions, status, reject_reason"
        " FROM requests WHERE run_id = ? ORDER BY req_id",
        err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int64_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        write_request(f, st, tend);
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return plt_db_fail(d, "reading requests", err);
    return n;
}

static int64_t write_trace(plt_db *d, int64_t run, FILE *f, sim_err *err)
{
    int replicas;
    if (write_header(d, run, f, &replicas, err) != 0)
        return -1;
    int64_t tend = 0, nit = write_iterations(d, run, f, &tend, err);
    if (nit < 0)
        return -1;
    if (nit == 0)
        return sim_errf(err,
                        "%s: run %lld has no iteration rows (stored with --store summary); run "
                        "it again with --store iterations or requests",
                        d->path, (long long)run);
    int64_t nrq = write_requests(d, run, f, tend, err);
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
    plt_db d;
    if (plt_db_open(&d, db, err) != 0)
        return -1;
    if (plt_db_run(&d, run, NULL, 0, NULL, err) != 0) {
        plt_db_close(&d);
        return -1;
    }
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        sim_errf(err, "%s: cannot write: %s", path, strerror(errno));
        plt_db_close(&d);
        return -1;
    }
    int64_t n = write_trace(&d, run, f, err);
    plt_db_close(&d);
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
