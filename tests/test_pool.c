/*
 * test_pool.c: the sweep worker pool: 100,000 tasks complete (a pool that wrote every task into
 * its pipe before reading a report hung past ~24,600), each task's output reaches the parent
 * whole through its worker's spool, in the worker's order, and the spools stay small (a worker
 * starts over once the parent has taken its reports); failures carry their message; a worker
 * that dies costs only its task; skipped tasks are never sent.
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

#include "study_pool.h"
#include "test_main.h"

typedef struct tally {
    int ok, failed, bad_output;
    int64_t max_off; /* furthest a task's output started in its spool */
    int8_t *seen;    /* per task: reports received */
    int die_at;      /* the task whose worker exits without reporting; -1 none */
    int fail_every;  /* tasks t % fail_every == 0 fail; 0 none */
    int skip_odd;    /* skip() declines odd tasks */
} tally;

static void *w_open(void *arg, sim_err *err)
{
    return arg;
}

static void w_close(void *w) {}

/* A line naming the task, with a tail as long as t % 200 so outputs differ in size. */
static int w_run(void *arg, void *w, int32_t t, FILE *out, sim_err *err)
{
    const tally *y = arg;
    if (t == y->die_at)
        _exit(3);
    fprintf(out, "task %d %*s\n", t, t % 200, "");
    if (y->fail_every && t % y->fail_every == 0)
        return sim_errf(err, "task %d failed on purpose", t);
    return 0;
}

static int done(void *arg, int32_t t, int ok, const char *msg, FILE *in, int64_t len)
{
    tally *y = arg;
    y->seen[t]++;
    if (!ok) {
        char want[64];
        snprintf(want, sizeof want, "task %d failed on purpose", t);
        if (strcmp(msg, want) != 0)
            y->bad_output++;
        y->failed++;
        return 0;
    }
    char line[300], want[300];
    int64_t off = ftello(in);
    if (off > y->max_off)
        y->max_off = off;
    int n = snprintf(want, sizeof want, "task %d %*s\n", t, t % 200, "");
    if (len != n || !fgets(line, sizeof line, in) || strcmp(line, want) != 0)
        y->bad_output++;
    y->ok++;
    return 0;
}

static int skip_odd(void *arg, int32_t t)
{
    return ((tally *)arg)->skip_odd && t % 2;
}

/* spools of at most 1 KiB plus one output: a worker waits for the parent past that */
static const study_pool_ops ops = {w_open, w_run, w_close, done, skip_odd, 1024};

static void run(tally *y, int jobs, int n, study_pool_stats *st)
{
    int32_t *tasks = malloc(sizeof *tasks * (size_t)n);
    for (int i = 0; i < n; i++)
        tasks[i] = i;
    y->seen = calloc((size_t)n, 1);
    sim_err err = {{0}};
    if (study_pool_run(&ops, y, jobs, tasks, n, st, &err) != 0)
        fail_msg("%s", err.msg);
    free(tasks);
}

static void hundred_thousand_tasks(void **state)
{
    tally y = {.die_at = -1};
    study_pool_stats st;
    run(&y, 2, 100000, &st);
    print_message("done %d, failed %d; outputs started at most %lld bytes into a spool\n", st.done,
                  st.failed, (long long)y.max_off);
    assert_int_equal(st.done, 100000);
    assert_int_equal(st.failed, 0);
    assert_int_equal(y.ok, 100000);
    assert_int_equal(y.bad_output, 0);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(y.seen[i], 1);
    /* the spool limit (1 KiB) plus one output of at most 212 bytes */
    assert_true(y.max_off <= 1024 + 212);
    free(y.seen);
}

static void failures_and_skips(void **state)
{
    tally y = {.die_at = -1, .fail_every = 10, .skip_odd = 1};
    study_pool_stats st;
    run(&y, 3, 1000, &st);
    assert_int_equal(st.skipped, 500);
    assert_int_equal(st.failed, 100);
    assert_int_equal(st.done, 400);
    assert_int_equal(y.failed, 100);
    assert_int_equal(y.bad_output, 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(y.seen[i], i % 2 == 0);
    free(y.seen);
}

static void a_worker_dies(void **state)
{
    tally y = {.die_at = 137};
    study_pool_stats st;
    run(&y, 2, 2000, &st);
    /* the tasks waiting in the pipe go to the other worker: only the one it ran is lost */
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.done, 1999);
    assert_int_equal(y.seen[137], 0);
    assert_int_equal(y.bad_output, 0);
    free(y.seen);
}

LLMSIM_TEST_MAIN(NULL, NULL, hundred_thousand_tasks, failures_and_skips, a_worker_dies)
