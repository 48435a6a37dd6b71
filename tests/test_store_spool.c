/*
 * test_store_spool.c: runs spooled to a file and replayed into a database (the one-writer path
 * of sweeps): the replayed run equals the same run written directly (row for row, metric for
 * metric); a truncated or corrupted spool commits nothing; a hook that declines the run (1)
 * rolls it back quietly; spooling 300,000 rows holds no row in memory (the heap does not grow);
 * the connection's cached statements survive from one run to the next. And the iterations
 * `calibrate validate` replays: as many as asked for whatever the run's length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"
#include "store_util.h"
#include "test_main.h"

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer's allocator (its header is not always installed) */
size_t __sanitizer_get_current_allocated_bytes(void);
#define HEAP_IN_USE() ((long)__sanitizer_get_current_allocated_bytes())
#else
#include <malloc.h>
#define HEAP_IN_USE() ((long)mallinfo2().uordblks)
#endif

#include "run_info.h"
#include "store.h"
#include "store_profile.h"
#include "store_query.h"
#include "store_run.h"

static char dir[64];

static const char *path_of(const char *name)
{
    return scratch_path(dir, name);
}

/* The store's test run, with what a spool must carry besides: a scenario of two lines, a NULL
 * string, and the figures it leaves unset. */
static store_run_info info_of(store_level level)
{
    store_run_info in = test_run_info("spooled", level);
    in.scenario_text = "name: spooled\n# a second line\n";
    in.gpu = NULL; /* a NULL string travels as NULL */
    in.dtype = "bf16";
    in.seed = 77;
    in.replicas = 3;
    in.tensor_parallel = 2;
    in.offered_rate = 2.5;
    in.num_requests = 1000;
    in.kv_blocks = 4321;
    return in;
}

static eng_request request(int64_t i)
{
    eng_request rq;
    memset(&rq, 0, sizeof rq);
    rq.id = i;
    rq.prompt = (int32_t)(100 + i % 50);
    rq.output = (int32_t)(1 + i % 7);
    rq.replica = (int32_t)(i % 3);
    rq.status = i % 11 ? ENG_RQ_FINISHED : ENG_RQ_REJECTED;
    rq.reject = i % 11 ? ENG_REJECT_NONE : ENG_REJECT_KV;
    rq.t_arrival = 1000 * i;
    rq.t_first_sched = i % 11 ? 1000 * i + 5 : -1;
    rq.t_last_sched = rq.t_first_sched;
    rq.t_first_token = i % 11 ? 1000 * i + 50 : -1;
    rq.t_finish = i % 11 ? 1000 * i + 500 : -1;
    rq.preemptions = (int32_t)(i % 2);
    rq.scheduled = i % 11 ? 1 : 0;
    return rq;
}

static eng_iter_rec iteration(int64_t i)
{
    eng_iter_rec it;
    memset(&it, 0, sizeof it);
    it.replica = (int32_t)(i % 3);
    it.iter = i / 3;
    it.start_ns = 7 * i;
    it.duration_ns = 5 + i % 13;
    it.cpu_ns = 1;
    it.gpu_ns = 4 + i % 13;
    it.num_seqs = (int32_t)(1 + i % 9);
    it.prefill_tokens = (int32_t)(i % 5);
    it.decode_tokens = (int32_t)(i % 9);
    it.kv_blocks_used = i % 100;
    it.preempted = (int32_t)(i % 17 == 0);
    it.shape.prefill_seqs = (int32_t)(i % 2);
    it.shape.prefill_pairs = 0.5 * (double)i;
    it.shape.prefill_kv = 1.25 * (double)i;
    it.shape.prefill_q2 = 3.0 * (double)i;
    it.shape.decode_ctx = 10 * i;
    it.shape.emit_seqs = (int32_t)(i % 9);
    return it;
}

static int nmetrics(eng_metric *m)
{
    const char *names[] = {"completed", "p99_ttft_ms", "saturated"};
    for (int i = 0; i < 3; i++) {
        snprintf(m[i].name, sizeof m[i].name, "%s", names[i]);
        m[i].value = 10.5 * (i + 1);
    }
    return 3;
}

/* Span k of request i (every third request is preempted once: two spans; the others have
 * one, which ends by finishing). */
static eng_span_rec span_of(int64_t i, int k)
{
    int last = k == 1 || i % 3 != 0;
    eng_span_rec sp = {.req = i,
                       .replica = (int32_t)(i % 3),
                       .span = k,
                       .start_ns = 1000 * i + 5 + 200 * k,
                       .decode_ns = i % 2 ? 1000 * i + 40 + 200 * k : -1,
                       .end_ns = 1000 * i + 150 + 350 * k,
                       .end = last    ? ENG_SPAN_FINISHED
                              : i % 2 ? ENG_SPAN_SWAPPED
                                      : ENG_SPAN_PREEMPTED};
    return sp;
}

/* Writes the run's rows through w and finishes it; returns finish's result. */
static int write_rows(store_run *w, int nrq, int nit, store_run_hook hook, void *arg, int64_t *id)
{
    for (int64_t i = 0; i < nrq; i++)
        for (int k = 0; k < (i % 3 ? 1 : 2); k++) { /* a single finished span is not stored */
            eng_span_rec sp = span_of(i, k);
            store_run_span(w, &sp);
        }
    for (int64_t i = 0; i < nit; i++) {
        eng_iter_rec it = iteration(i);
        store_run_iteration(w, &it);
    }
    for (int64_t i = 0; i < nrq; i++) {
        eng_request rq = request(i);
        store_run_request(w, &rq);
    }
    eng_metric m[ENG_MAX_METRICS];
    sim_err err = {{0}};
    int rc = store_run_finish(w, m, nmetrics(m), hook, arg, id, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
    return rc;
}

/* A run spooled to a temporary file; *len gets its length, the file is at its start. */
static FILE *spooled(int nrq, int nit, int64_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    store_run_info in = info_of(STORE_REQUESTS);
    store_run *w = store_run_begin_spool(f, &in);
    write_rows(w, nrq, nit, NULL, NULL, NULL);
    *len = ftello(f);
    rewind(f);
    return f;
}

/* The replayed run has the same row, rows and metrics as the run written directly. */
static void replay_equals_direct(void **state)
{
    store *s = tstore_open(path_of("a.db"), 0);
    sim_err err = {{0}};
    store_run_info in = info_of(STORE_REQUESTS);
    int64_t direct = 0;
    store_run *w = store_run_begin(s, &in, 0, &err);
    assert_non_null(w);
    assert_int_equal(write_rows(w, 1000, 2500, NULL, NULL, &direct), 0);
    int64_t len;
    FILE *f = spooled(1000, 2500, &len);
    store_run_summary sum;
    assert_int_equal(store_run_replay(s, f, len, NULL, NULL, &sum, &err), 0);
    fclose(f);
    assert_int_equal(sum.run_id, direct + 1);
    assert_int_equal(sum.seed, 77);
    assert_int_equal(sum.n, 3);
    assert_string_equal(sum.m[1].name, "p99_ttft_ms");
    /* the same run row, NULL gpu included, except the id */
    assert_int_equal(tstore_int(s,
                                "SELECT count(*) FROM (SELECT name, scenario, scheduler, seed, "
                                "version, profile, model, gpu, dtype, replicas, tensor_parallel, "
                                "hardware, store_level, offered_rate, num_requests, kv_blocks FROM "
                                "runs GROUP BY 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)"),
                     1);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM runs WHERE kv_blocks = 4321"), 2);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM runs WHERE gpu IS NULL"), 2);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM requests"), 2000);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM iterations"), 5000);
    /* row for row: every column but run_id */
    assert_int_equal(
        tstore_int(s, "SELECT count(*) FROM requests a JOIN requests b ON b.run_id = 2 AND "
                      "a.req_id = b.req_id WHERE a.run_id = 1 AND a.replica IS b.replica "
                      "AND a.arrival_ns IS b.arrival_ns AND a.first_scheduled_ns IS "
                      "b.first_scheduled_ns AND a.last_scheduled_ns IS b.last_scheduled_ns "
                      "AND a.first_token_ns IS b.first_token_ns AND a.finish_ns IS "
                      "b.finish_ns AND a.prompt_tokens IS b.prompt_tokens AND "
                      "a.output_tokens IS b.output_tokens AND a.preemptions IS "
                      "b.preemptions AND a.scheduled IS b.scheduled AND a.status IS "
                      "b.status AND a.reject_reason IS b.reject_reason"),
        1000);
    assert_int_equal(
        tstore_int(s, "SELECT count(*) FROM iterations a JOIN iterations b ON b.run_id = 2 "
                      "AND a.replica = b.replica AND a.iter = b.iter WHERE a.run_id = 1 AND "
                      "a.start_ns IS b.start_ns AND a.duration_ns IS b.duration_ns AND "
                      "a.cpu_ns IS b.cpu_ns AND a.gpu_ns IS b.gpu_ns AND a.num_seqs IS "
                      "b.num_seqs AND a.prefill_tokens IS b.prefill_tokens AND "
                      "a.decode_tokens IS b.decode_tokens AND a.kv_blocks_used IS "
                      "b.kv_blocks_used AND a.preempted IS b.preempted AND a.prefill_seqs "
                      "IS b.prefill_seqs AND a.prefill_pairs IS b.prefill_pairs AND "
                      "a.prefill_kv IS b.prefill_kv AND a.prefill_q2 IS b.prefill_q2 AND "
                      "a.decode_ctx IS b.decode_ctx AND a.emit_seqs IS b.emit_seqs"),
        2500);
    assert_int_equal(tstore_int(s,
                                "SELECT count(*) FROM metrics a JOIN metrics b ON b.run_id = 2 AND "
                                "a.name = b.name AND a.value = b.value WHERE a.run_id = 1"),
                     3);
    /* the scheduled spans (a later row kind: one more spool tag), row for row */
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM request_spans WHERE run_id = 1"), 2 * 334);
    assert_int_equal(
        tstore_int(s, "SELECT count(*) FROM request_spans a JOIN request_spans b ON "
                      "b.run_id = 2 AND a.req_id = b.req_id AND a.span = b.span WHERE "
                      "a.run_id = 1 AND a.replica IS b.replica AND a.start_ns IS "
                      "b.start_ns AND a.decode_ns IS b.decode_ns AND a.end_ns IS b.end_ns "
                      "AND a.end_reason IS b.end_reason"),
        2 * 334);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM request_spans WHERE decode_ns IS NULL"),
                     2 * 2 * 167);
    store_close(s);
}

static int decline(void *arg, store *s, int64_t run_id, sim_err *err)
{
    ++*(int *)arg;
    return 1;
}

/* A spool cut short anywhere, or with a record that is not one, commits nothing. */
static void damaged_spool(void **state)
{
    store *s = tstore_open(path_of("b.db"), 0);
    sim_err err = {{0}};
    store_run_summary sum;
    int64_t len;
    FILE *f = spooled(100, 100, &len);
    const int64_t cuts[] = {0, 4, 12, len / 2, len - 9, len - 1};
    for (int i = 0; i < 6; i++) {
        rewind(f);
        memset(&err, 0, sizeof err);
        assert_int_equal(store_run_replay(s, f, cuts[i], NULL, NULL, &sum, &err), -1);
        assert_non_null(strstr(err.msg, "spool"));
    }
    /* a corrupted tag in the middle of the rows */
    char *bytes = malloc((size_t)len);
    rewind(f);
    assert_int_equal(fread(bytes, (size_t)len, 1, f), 1);
    fclose(f);
    /* the first record header past the middle, found by walking the records */
    int64_t at = 0;
    while (at < len / 2) {
        uint32_t head[2];
        memcpy(head, bytes + at, sizeof head);
        at += (int64_t)sizeof head + head[1];
    }
    assert_true(at < len);
    uint32_t bad = 99;
    memcpy(bytes + at, &bad, sizeof bad);
    f = tmpfile();
    fwrite(bytes, (size_t)len, 1, f);
    rewind(f);
    assert_int_equal(store_run_replay(s, f, len, NULL, NULL, &sum, &err), -1);
    fclose(f);
    free(bytes);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM runs"), 0);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM requests"), 0);
    /* a hook that declines the run: a quiet roll-back */
    f = spooled(10, 10, &len);
    int calls = 0;
    assert_int_equal(store_run_replay(s, f, len, decline, &calls, &sum, &err), 1);
    assert_int_equal(calls, 1);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM runs"), 0);
    /* the statements the connection keeps still work after the roll-backs */
    rewind(f);
    assert_int_equal(store_run_replay(s, f, len, NULL, NULL, &sum, &err), 0);
    fclose(f);
    assert_int_equal(tstore_int(s, "SELECT count(*) FROM requests"), 10);
    store_close(s);
}

/* Spooling keeps no row in memory: the heap does not grow with the rows written. */
static void spool_memory_is_flat(void **state)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    store_run_info in = info_of(STORE_REQUESTS);
    store_run *w = store_run_begin_spool(f, &in);
    long before = HEAP_IN_USE(), most = before;
    for (int64_t i = 0; i < 300000; i++) {
        eng_request rq = request(i);
        eng_iter_rec it = iteration(i);
        store_run_request(w, &rq);
        store_run_iteration(w, &it);
        if (i % 1000 == 0 && HEAP_IN_USE() > most)
            most = HEAP_IN_USE();
    }
    print_message("heap: %ld bytes before, at most %ld while spooling 600,000 rows\n", before,
                  most);
    /* a buffered writer would hold all 600,000 rows: over 60 MB */
    assert_true(most - before < 64 * 1024);
    eng_metric m[ENG_MAX_METRICS];
    sim_err err = {{0}};
    assert_int_equal(store_run_finish(w, m, nmetrics(m), NULL, NULL, NULL, &err), 0);
    assert_true(ftello(f) > 300000 * (off_t)(sizeof(eng_iter_rec) + 48));
    fclose(f);
}

/* `calibrate validate --max-iters N` replays N iterations of a run that has N or more: a
 * rounded-up stride gave fewer for some lengths (8 of 33 gave 7), so the count test_calibration_cli
 * saw depended on how many iterations the profile's timings had made. */
static void replay_shapes_count(void **state)
{
    store *s = tstore_open(path_of("c.db"), 0);
    sim_err err = {{0}};
    const int lengths[] = {8, 9, 33, 57, 125, 1000};
    for (int i = 0; i < 6; i++) {
        store_run_info in = info_of(STORE_ITERATIONS);
        store_run *w = store_run_begin(s, &in, 0, &err);
        int64_t id = 0;
        write_rows(w, 0, lengths[i], NULL, NULL, &id);
        for (int max = 1; max <= 8; max++) {
            store_replay_run info;
            eng_shape shapes[8];
            int n = -1;
            assert_int_equal(store_profile_replay_shapes(s, id, max, &info, shapes, NULL, &n, &err),
                             0);
            assert_int_equal(info.iterations, lengths[i]);
            assert_int_equal(n, max);
        }
    }
    store_close(s);
}

LLMSIM_TESTS(tests, replay_equals_direct, damaged_spool, spool_memory_is_flat, replay_shapes_count);

int main(void)
{
    return scratch_run_group(tests, dir, "/tmp/llmsim-spool-test-XXXXXX");
}
