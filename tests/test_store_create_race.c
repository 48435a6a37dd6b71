/*
 * test_store_create_race.c: two processes opening one new database at once.
 *
 * store_open once opened a missing path in place: SQLite created it empty, and when the open
 * then failed it deleted the file and its -journal, -wal and -shm, taking it for its own. When
 * another process had created the same file a moment before and was writing its first page
 * (holding SQLite's RESERVED lock, the file still 0 bytes), this open's PRAGMA journal_mode=WAL
 * failed at once with SQLITE_BUSY (SQLite does not wait for a lock a read transaction would
 * have to upgrade to), and the deletion took the other process's database and journal from
 * under it: its commit, or its next open, failed with "disk I/O error".
 *
 * The interleaving is made, not waited for: this file's stat() (which store_open calls first,
 * to learn whether the path exists) reports the path missing and then has a child create it
 * and take the RESERVED byte of SQLite's unix locks (os_unix.c: PENDING_BYTE + 1), as a
 * process in the middle of creating it does. The open must leave that file where it is.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
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

#include "e2e_util.h"

/* SQLite's RESERVED lock: a write lock on this byte of the database file (os_unix.c). */
#define RESERVED_BYTE 0x40000001

static char watched[400];
static pid_t holder = -1;
static int release_fd = -1;
static ino_t made_ino; /* the file the other process made */

/* The other process: creates path and holds its RESERVED lock until release_fd closes. */
static void start_holder(const char *path)
{
    int ready[2], release[2];
    if (pipe(ready) != 0 || pipe(release) != 0)
        abort();
    holder = fork();
    if (holder < 0)
        abort();
    if (holder == 0) {
        close(ready[0]);
        close(release[1]);
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        struct flock fl = {
            .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = RESERVED_BYTE, .l_len = 1};
        char c = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || c != 'y')
            _exit(1);
        while (read(release[0], &c, 1) > 0)
            ;
        _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    char c = 0;
    if (read(ready[0], &c, 1) != 1 || c != 'y')
        abort();
    close(ready[0]);
    release_fd = release[1];
}

/* stat as libc's, except that the first look at `watched` finds it missing and, just after,
 * another process creates it. */
int stat(const char *restrict path, struct stat *restrict st)
{
    int rc = fstatat(AT_FDCWD, path, st, 0);
    if (watched[0] && holder < 0 && strcmp(path, watched) == 0) {
        int e = errno;
        start_holder(path);
        struct stat made;
        made_ino = fstatat(AT_FDCWD, path, &made, 0) == 0 ? made.st_ino : 0;
        errno = e;
    }
    return rc;
}

/* The names in the scratch folder, each followed by a newline, into buf. */
static void listing(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    DIR *d = opendir(e2e_dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s\n", e->d_name);
    closedir(d);
}

static void test_open_keeps_a_file_another_is_creating(void **state)
{
    snprintf(watched, sizeof watched, "%s/new.db", e2e_dir);
    struct stat after;
    setenv("LLMSIM_DB_TIMEOUT", "0", 1);
    sim_err err = {{0}};
    store *s = store_open(watched, &err);
    unsetenv("LLMSIM_DB_TIMEOUT");
    assert_true(holder > 0);
    /* the other process is still writing its first page: this open may fail (the lock is
     * taken), but must not take the file */
    if (!s)
        print_message("open while another creates it: %s\n", err.msg);
    store_close(s);
    char names[1024];
    listing(names, sizeof names);
    if (strcmp(names, "new.db\n") != 0)
        fail_msg("the folder holds, after the open:\n%s(want only new.db, the other's file)",
                 names);
    /* the file at the path is the one the other process made and holds open */
    assert_int_equal(fstatat(AT_FDCWD, watched, &after, 0), 0);
    assert_true(made_ino != 0);
    assert_int_equal(after.st_ino, made_ino);
    /* the other process ends; the empty file then opens as a new llmsim database */
    close(release_fd);
    int st;
    assert_int_equal(waitpid(holder, &st, 0), holder);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    s = store_open(watched, &err);
    if (!s)
        fail_msg("%s", err.msg);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_close(s);
    assert_int_equal(fstatat(AT_FDCWD, watched, &after, 0), 0);
    assert_int_equal(after.st_ino, made_ino);
}

/* A database store_open creates appears whole at its path: no file is left beside it. */
static void test_create_leaves_only_the_database(void **state)
{
    char path[400], names[1024];
    snprintf(path, sizeof path, "%s/made.db", e2e_dir);
    sim_err err = {{0}};
    store *s = store_open(path, &err);
    if (!s)
        fail_msg("%s", err.msg);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_close(s);
    unlink(watched);
    listing(names, sizeof names);
    assert_string_equal(names, "made.db\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_open_keeps_a_file_another_is_creating),
                                       cmocka_unit_test(test_create_leaves_only_the_database)};
    return e2e_run_group(tests);
}
