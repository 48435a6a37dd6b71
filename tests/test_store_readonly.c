/*
 * test_store_readonly.c: a WAL database on a read-only medium (its folder not writable, so its
 * -shm index can be neither opened nor created) is read by store_open_readonly, which `plot`,
 * `export` and `profile list` use; it was refused with "attempt to write a readonly database"
 * (or called "not an llmsim database"). A leftover non-empty -wal file there is refused with a
 * message saying so rather than read without its commits.
 *
 * The medium is a folder with mode 0555 read by an unprivileged user: root ignores file modes,
 * so when run as root the reading happens in a child that drops to uid/gid 65534 (nobody);
 * where that is not possible the test is skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "store.h"
#include "store_query.h"
#include "run_info.h"
#include "store_run.h"
#include "test_main.h"

static char dir[64], db[128];

static void make_db(void)
{
    sim_err e = {{0}};
    store *s = store_open(db, &e);
    if (!s)
        fail_msg("%s", e.msg);
    store_run_info in = test_run_info("ro", STORE_SUMMARY);
    store_run *w = store_run_begin(s, &in, 0, &e);
    eng_metric m = {"completed", 3};
    assert_int_equal(store_run_finish(w, &m, 1, NULL, NULL, NULL, &e), 0);
    store_close(s); /* the last connection: the WAL is merged and -wal and -shm removed */
}

/* In a child that cannot write the folder: 0 when store_open_readonly gives want_runs runs,
 * 10 + n for other outcomes; the error message goes to msg (a shared pipe). */
static int read_as_nobody(int want_runs, char *msg, size_t len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        sim_err e = {{0}};
        store *s = store_open_readonly(db, &e);
        int64_t n = -1;
        if (s && store_query_int(s, "SELECT count(*) FROM runs", &n, &e) != 0)
            n = -2;
        store_close(s);
        if (write(fds[1], e.msg, strlen(e.msg)) < 0)
            _exit(12);
        _exit(n == want_runs ? 0 : 10 + (int)(n + 2));
    }
    close(fds[1]);
    ssize_t got = read(fds[0], msg, len - 1);
    msg[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void wal_database_on_a_read_only_folder(void **state)
{
    make_db();
    assert_int_equal(chmod(db, 0444), 0);
    assert_int_equal(chmod(dir, 0555), 0);
    char msg[1024];
    int rc = read_as_nobody(1, msg, sizeof msg);
    if (rc == 77)
        skip();
    if (rc != 0)
        fail_msg("exit %d: %s", rc, msg);
    /* a -wal file with commits the main file lacks: refused, saying so */
    assert_int_equal(chmod(dir, 0755), 0);
    char wal[160];
    snprintf(wal, sizeof wal, "%s-wal", db);
    FILE *f = fopen(wal, "w");
    assert_non_null(f);
    fputs("not empty", f);
    fclose(f);
    assert_int_equal(chmod(wal, 0444), 0);
    assert_int_equal(chmod(dir, 0555), 0);
    rc = read_as_nobody(1, msg, sizeof msg);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(msg, "holds commits not merged into it"));
    assert_null(strstr(msg, "not an llmsim database"));
    assert_int_equal(chmod(dir, 0755), 0);
}

LLMSIM_TESTS(tests, wal_database_on_a_read_only_folder);

int main(void)
{
    if (scratch_make(dir, sizeof dir, "/tmp/llmsim-ro-XXXXXX") != 0)
        return 1;
    snprintf(db, sizeof db, "%s/r.db", dir);
    return scratch_run_group_in(tests, dir);
}
