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

extern char **environ;

#define DEMO LLMSIM_SOURCE_DIR "/scenarios/demo.yaml"

static char db[320];

/* Starts llmsim with the NULL-terminated arguments, stderr to e2e_dir/err-TAG.txt; its pid. */
static pid_t start(const char *tag, const char *arg0, ...)
{
    const char *argv[32] = {LLMSIM_BINARY, arg0};
    int n = 2;
    va_list ap;
    va_start(ap, arg0);
    while (n < 31 && (argv[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    argv[n] = NULL;
    char errpath[400];
    snprintf(errpath, sizeof errpath, "%s/err-%s.txt", e2e_dir, tag);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, LLMSIM_BINARY, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    assert_int_equal(rc, 0);
    return pid;
}

/* Waits for pid; its exit status (-1 when killed). */
static int finish(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void read_err(const char *tag, char *buf, size_t len)
{
    char path[400];
    snprintf(path, sizeof path, "%s/err-%s.txt", e2e_dir, tag);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

static int64_t q(const char *sql)
{
    return e2e_query_int(db, sql);
}

static int setup(void **state)
{
    if (e2e_mkdir() != 0)
        return -1;
    snprintf(db, sizeof db, "%s/shared.db", e2e_dir);
    return 0;
}

static int teardown(void **state)
{
    return e2e_rmdir();
}

static void test_four_writers(void **state)
{
    pid_t p[4];
    static const char *const seeds[3] = {"1", "2", "3"};
    for (int i = 0; i < 3; i++) {
        char tag[8];
        snprintf(tag, sizeof tag, "w%d", i);
        p[i] = start(tag, "run", DEMO, "--db", db, "--quiet", "--seed", seeds[i], "--set",
                     "workload.num_requests=400", NULL);
    }
    p[3] = start("w3", "sweep", DEMO, "--db", db, "--quiet", "--jobs", "1", "--vary",
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

/* CPU seconds (user + system) pid has used, or -1 once it is gone. */
static double cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    char state;
    unsigned long ut, st;
    /* after "pid (comm)": state and 10 fields, then utime and stime (proc(5)) */
    if (!p ||
        sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &state, &ut, &st) !=
            3 ||
        state == 'Z')
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void test_no_lock_while_simulating(void **state)
{
    /* the database exists (another run), so the probe below finds its schema */
    assert_int_equal(finish(start("first", "run", DEMO, "--db", db, "--quiet", "--set",
                                  "workload.num_requests=10", NULL)),
                     0);
    /* about 2 CPU seconds of simulation in a Debug build; starting up takes well under 0.3 */
    pid_t pid = start("long", "run", DEMO, "--db", db, "--quiet", "--store", "summary", "--set",
                      "workload.num_requests=3000", NULL);
    double used;
    struct timespec nap = {0, 5 * 1000 * 1000};
    while ((used = cpu_seconds(pid)) >= 0 && used < 0.3)
        nanosleep(&nap, NULL);
    if (used < 0)
        fail_msg("the run ended before it had used 0.3 s of CPU time: make it longer");
    assert_int_equal(kill(pid, SIGSTOP), 0);
    sim_err err = {{0}};
    setenv("LLMSIM_DB_TIMEOUT", "0", 1); /* no wait: the lock is free, or this fails */
    store *s = store_open(db, &err);
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
    store *s = store_open(db, &err);
    assert_non_null(s);
    assert_int_equal(store_begin(s, &err), 0);
    setenv("LLMSIM_DB_TIMEOUT", "0.2", 1);
    pid_t pid = start("blocked", "run", DEMO, "--db", db, "--quiet", "--set",
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
    pid = start("badwait", "run", DEMO, "--db", db, "--quiet", NULL);
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
    return cmocka_run_group_tests(tests, setup, teardown);
}
