/*
 * test_store_concurrent.c: one database shared by several processes at once.
 *
 * - Four writers at once (three `llmsim run` storing every request, one `llmsim sweep`) all
 *   land: every run is stored whole.
 * - A run does not hold the database's write lock while it simulates: a long run is stopped
 *   (SIGSTOP) once it has used more CPU time than starting up takes, and this process must then
 *   get the write lock at once. CPU time, not wall time, decides when to look, so a loaded
 *   machine changes nothing.
 * - A writer that still finds the lock taken after its wait ($LLMSIM_DB_TIMEOUT) fails naming
 *   the process that holds it and that process's command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "proc_util.h"

#define DEMO LLMSIM_SOURCE_DIR "/scenarios/demo.yaml"

/* Starts llmsim with the NULL-terminated arguments, stderr to e2e_dir/err-TAG.txt; its pid. */
#define start(tag, ...) e2e_start(tag, 0, __VA_ARGS__)

static int finish(pid_t pid)
{
    return proc_finish(pid);
}

static void read_err(const char *tag, char *buf, size_t len)
{
    char path[400];
    proc_read_text(e2e_err_path(path, sizeof path, tag), buf, len);
}

static int64_t q(const char *sql)
{
    return e2e_query_int(e2e_db, sql);
}

static void test_four_writers(void **state)
{
    pid_t p[4];
    static const char *const seeds[3] = {"1", "2", "3"};
    for (int i = 0; i < 3; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "w%d", i);
        p[i] = start(tag, "run", DEMO, "--db", e2e_db, "--quiet", "--seed", seeds[i], "--set",
                     "workload.num_requests=400", NULL);
    }
    p[3] = start("w3", "sweep", DEMO, "--db", e2e_db, "--quiet", "--jobs", "1", "--vary",
                 "workload.arrival.rate=2,6", "--set", "workload.num_requests=400", NULL);
    for (int i = 0; i < 4; i++) {
        int rc = finish(p[i]);
        if (rc != 0) {
            char err[4096], tag[8];
            snprintf(tag, sizeof tag, "w%d", i);
            read_err(tag, err, sizeof err);
            fail_msg("writer %d exited %d: %s", i, rc, err);
        }
    }
    assert_int_equal(q("SELECT count(*) FROM runs"), 5);
    assert_int_equal(q("SELECT count(*) FROM sweep_points"), 2);
    /* every run whole: its 400 request rows and its metrics */
    assert_int_equal(q("SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM requests q WHERE"
                       " q.run_id = r.id) = 400 AND (SELECT count(*) FROM metrics m WHERE"
                       " m.run_id = r.id) > 10"),
                     5);
}

static void test_no_lock_while_simulating(void **state)
{
    /* the database exists (another run), so the probe below finds its schema */
    assert_int_equal(finish(start("first", "run", DEMO, "--db", e2e_db, "--quiet", "--set",
                                  "workload.num_requests=10", NULL)),
                     0);
    /* about 1.7 CPU seconds of simulation in a Debug build (3,000 requests took 0.27 s, too near
     * the 0.3 s below); starting up takes well under 0.3 */
    pid_t pid = start("long", "run", DEMO, "--db", e2e_db, "--quiet", "--store", "summary", "--set",
                      "workload.num_requests=20000", NULL);
    double used;
    struct timespec nap = {0, 5 * 1000 * 1000};
    while ((used = proc_tree_cpu(pid)) >= 0 && used < 0.3)
        nanosleep(&nap, NULL);
    if (used < 0)
        fail_msg("the run ended before it had used 0.3 s of CPU time: make it longer");
    assert_int_equal(kill(pid, SIGSTOP), 0);
    sim_err err = {{0}};
    setenv("LLMSIM_DB_TIMEOUT", "0", 1); /* no wait: the lock is free, or this fails */
    store *s = store_open(e2e_db, &err);
    unsetenv("LLMSIM_DB_TIMEOUT");
    int got = -1;
    if (s) {
        got = store_begin(s, &err);
        if (got == 0)
            store_rollback(s);
        store_close(s);
    }
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(finish(pid), 0);
    if (got != 0)
        fail_msg("a simulating run holds the database's write lock: %s", err.msg);
}

static void test_lock_holder_named(void **state)
{
    sim_err err = {{0}};
    store *s = store_open(e2e_db, &err);
    assert_non_null(s);
    assert_int_equal(store_begin(s, &err), 0);
    setenv("LLMSIM_DB_TIMEOUT", "0.2", 1);
    pid_t pid = start("blocked", "run", DEMO, "--db", e2e_db, "--quiet", "--set",
                      "workload.num_requests=10", NULL);
    unsetenv("LLMSIM_DB_TIMEOUT");
    int rc = finish(pid);
    store_rollback(s);
    store_close(s);
    char msg[4096], want[64];
    read_err("blocked", msg, sizeof msg);
    assert_int_equal(rc, 1);
    snprintf(want, sizeof want, "held by process %ld: ", (long)getpid());
    if (!strstr(msg, "database is locked after waiting 0.2 s") || !strstr(msg, want) ||
        !strstr(msg, "test_store_concurrent"))
        fail_msg("the error does not name the lock's holder (%s): %s", want, msg);
    /* a wait that is not a number of seconds is refused */
    setenv("LLMSIM_DB_TIMEOUT", "soon", 1);
    pid = start("badwait", "run", DEMO, "--db", e2e_db, "--quiet", NULL);
    unsetenv("LLMSIM_DB_TIMEOUT");
    assert_int_equal(finish(pid), 1);
    read_err("badwait", msg, sizeof msg);
    assert_non_null(strstr(msg, "LLMSIM_DB_TIMEOUT='soon'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_four_writers),
                                       cmocka_unit_test(test_no_lock_while_simulating),
                                       cmocka_unit_test(test_lock_holder_named)};
    return cmocka_run_group_tests(tests, e2e_group_setup_db, e2e_group_teardown);
}
