/*
 * test_store_outputs.c: a command that fails leaves no database it created behind.
 *
 * - `merge OUT missing.db` created an empty OUT before finding the input missing; every input
 *   is now checked first, and an OUT the merge created is removed when the merge fails later.
 *   An OUT that existed before keeps what it had.
 * - A new database on a full disk was left as a 0-byte file. The disk is made full for the
 *   child alone with RLIMIT_FSIZE = 0 (every write to a file fails; SIGXFSZ ignored).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

static char out[8192], err[8192];

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", e2e_dir, name);
}

/* Whether path or any of its -wal, -shm, -journal files exists. */
static int any_file(const char *path)
{
    static const char *const side[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, side[i]);
        if (access(p, F_OK) == 0)
            return 1;
    }
    return 0;
}

static void test_merge_creates_nothing_on_failure(void **state)
{
    char good[400], bad[400], missing[400], outdb[400];
    path_of(good, sizeof good, "good.db");
    path_of(bad, sizeof bad, "bad.db");
    path_of(missing, sizeof missing, "missing.db");
    path_of(outdb, sizeof outdb, "out.db");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s run %s/scenarios/demo.yaml --db %s --quiet --set "
                            "workload.num_requests=10",
                            LLMSIM_BINARY, LLMSIM_SOURCE_DIR, good),
                     0);
    e2e_write(bad, "not a database, though its name says so\n");
    /* a missing input, first or after a good one: no OUT */
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s", LLMSIM_BINARY, outdb, missing),
        1);
    assert_non_null(strstr(err, "missing.db: cannot open: no such file"));
    assert_false(any_file(outdb));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s %s", LLMSIM_BINARY,
                            outdb, good, bad),
                     1);
    assert_non_null(strstr(err, "bad.db"));
    assert_false(any_file(outdb));
    /* an OUT that existed keeps its runs when a merge into it fails */
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s", LLMSIM_BINARY, outdb, good), 0);
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s merge %s %s", LLMSIM_BINARY, outdb, missing),
        1);
    assert_int_equal(e2e_query_int(outdb, "SELECT count(*) FROM runs"), 1);
}

static void test_full_disk_leaves_no_file(void **state)
{
    char db[400];
    path_of(db, sizeof db, "full.db");
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* the disk is full for this process: every write to a file fails with EFBIG */
        struct rlimit rl = {0, 0};
        signal(SIGXFSZ, SIG_IGN);
        dup2(fd[1], 2);
        close(fd[0]);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(99);
        execl(LLMSIM_BINARY, LLMSIM_BINARY, "run", LLMSIM_SOURCE_DIR "/scenarios/demo.yaml", "--db",
              db, "--quiet", (char *)NULL);
        _exit(98);
    }
    close(fd[1]);
    ssize_t n, got = 0;
    while ((n = read(fd[0], err + got, sizeof err - 1 - (size_t)got)) > 0)
        got += n;
    err[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 1)
        fail_msg("llmsim run on a full disk: exit status %d: %s", WEXITSTATUS(st), err);
    assert_non_null(strstr(err, "full.db"));
    if (any_file(db))
        fail_msg("a failed open left %s (or its side files) behind: %s", db, err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_merge_creates_nothing_on_failure),
                                       cmocka_unit_test(test_full_disk_leaves_no_file)};
    return cmocka_run_group_tests(tests, e2e_group_setup, e2e_group_teardown);
}
