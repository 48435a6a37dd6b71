/*
 * e2e_util.h: helpers for end-to-end tests that drive the llmsim binary: run a shell command
 * capturing its output, start llmsim without a shell and wait for it, query a results database
 * (through the store's read API: tests link llmsim_store).
 */
#ifndef LLMSIM_TESTS_E2E_UTIL_H
#define LLMSIM_TESTS_E2E_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "proc_util.h"
#include "scratch.h"
#include "store.h"
#include "store_query.h"

/* A scratch folder made by e2e_mkdir; files of a test go there. */
static char e2e_dir[256];

#define E2E_DIR_PATTERN "/tmp/llmsim-test-XXXXXX"

static inline int e2e_mkdir(void)
{
    return scratch_make(e2e_dir, sizeof e2e_dir, E2E_DIR_PATTERN);
}

/* Runs the cmocka group tests in a fresh scratch folder e2e_dir, removed after (scratch.h). */
#define e2e_run_group(tests) scratch_run_group(tests, e2e_dir, E2E_DIR_PATTERN)

static inline int e2e_rmdir(void)
{
    return scratch_remove(e2e_dir);
}

/* The scratch folder as a cmocka group's fixtures: made before the group, removed after it. */
static inline int e2e_group_setup(void **state)
{
    return e2e_mkdir();
}

static inline int e2e_group_teardown(void **state)
{
    return e2e_rmdir();
}

static inline void e2e_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* Writes text to the file `name` in the scratch folder, its path into path (len bytes). */
static inline void e2e_file(char *path, size_t len, const char *name, const char *text)
{
    snprintf(path, len, "%s/%s", e2e_dir, name);
    e2e_write(path, text);
}

/* The text of the file at path (at most max - 1 bytes; malloc'd, the caller frees), or NULL
 * when it cannot be opened. */
static inline char *e2e_slurp(const char *path, size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(max);
    size_t n = fread(buf, 1, max - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The whole text of the file at path (malloc'd, the caller frees); the test fails when the file
 * cannot be opened or read. */
static inline char *e2e_read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The width and height of the PNG image at path (from the IHDR chunk right after the signature)
 * into *w and *h; the test fails unless the file starts as a PNG does. */
static inline void e2e_png_size(const char *path, uint32_t *w, uint32_t *h)
{
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(b, 1, sizeof b, f), sizeof b);
    fclose(f);
    assert_memory_equal(b, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(b + 12, "IHDR", 4);
    *w = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    *h = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
}

/* Runs a shell command (fmt with ap); returns its exit status and captures stdout and stderr
 * (either buffer may be NULL). */
static inline int e2e_shv(char *out, size_t outlen, char *err, size_t errlen, const char *fmt,
                          va_list ap)
{
    char cmd[2048], full[2800], path_out[300], path_err[300];
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    snprintf(path_out, sizeof path_out, "%s/out.txt", e2e_dir);
    snprintf(path_err, sizeof path_err, "%s/err.txt", e2e_dir);
    snprintf(full, sizeof full, "%s >%s 2>%s", cmd, path_out, path_err);
    int st = system(full);
    const char *paths[2] = {path_out, path_err};
    char *bufs[2] = {out, err};
    size_t lens[2] = {outlen, errlen};
    for (int i = 0; i < 2; i++) {
        if (!bufs[i])
            continue;
        FILE *f = fopen(paths[i], "r");
        size_t n = f ? fread(bufs[i], 1, lens[i] - 1, f) : 0;
        bufs[i][n] = '\0';
        if (f)
            fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* e2e_shv with the arguments after fmt. */
static inline int e2e_sh(char *out, size_t outlen, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline int e2e_sh(char *out, size_t outlen, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = e2e_shv(out, outlen, err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

/* Runs `llmsim ARGS` through the shell, ARGS fmt with the arguments ap, written into args (alen
 * bytes) for the caller's messages: as e2e_shv. */
static inline int e2e_llmsimv(char *args, size_t alen, char *out, size_t outlen, char *err,
                              size_t errlen, const char *fmt, va_list ap)
{
    vsnprintf(args, alen, fmt, ap);
    return e2e_sh(out, outlen, err, errlen, "%s %s", LLMSIM_BINARY, args);
}

/* Runs `llmsim ARGS` through the shell, ARGS fmt with the arguments after it: as e2e_sh. */
static inline int e2e_llmsim(char *out, size_t outlen, char *err, size_t errlen, const char *fmt,
                             ...) __attribute__((format(printf, 5, 6)));
static inline int e2e_llmsim(char *out, size_t outlen, char *err, size_t errlen, const char *fmt,
                             ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    int st = e2e_llmsimv(args, sizeof args, out, outlen, err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

/* Runs `llmsim ARGS` (ARGS fmt with the arguments after it), which must exit with status and
 * say `says` on its standard error (left in err, errlen bytes): a refusal, or a note; the test
 * fails naming the command, the status and the text. */
static inline void e2e_llmsim_says(char *err, size_t errlen, int status, const char *says,
                                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline void e2e_llmsim_says(char *err, size_t errlen, int status, const char *says,
                                   const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    int st = e2e_llmsimv(args, sizeof args, NULL, 0, err, errlen, fmt, ap);
    va_end(ap);
    if (st != status || !strstr(err, says))
        fail_msg("llmsim %s: status %d (expected %d), expected '%s' in:\n%s", args, st, status,
                 says, err);
}

/* e2e_dir/test.db: the database of a group whose fixtures are e2e_group_setup_db and
 * e2e_group_teardown. */
static char e2e_db[320];

/* e2e_group_setup, naming e2e_db in the scratch folder. */
static inline int e2e_group_setup_db(void **state)
{
    if (e2e_mkdir() != 0)
        return -1;
    snprintf(e2e_db, sizeof e2e_db, "%s/test.db", e2e_dir);
    return 0;
}

/* The first column of the first row of sql on db (opened read-only through the store) into *i,
 * or into *d when i is NULL: 0, or -1 when the database cannot be opened or the query fails. */
static inline int e2e_query(const char *db, const char *sql, int64_t *i, double *d)
{
    sim_err err = {{0}};
    store *s = store_open_readonly(db, &err);
    int rc = -1;
    if (s)
        rc = i ? store_query_int(s, sql, i, &err) : store_query_double(s, sql, d, &err);
    store_close(s);
    return rc == 0 ? 0 : -1;
}

/* The first column of the first row of sql on db, or -1 when the database cannot be opened or
 * the query fails. */
static inline int64_t e2e_query_int(const char *db, const char *sql)
{
    int64_t v;
    return e2e_query(db, sql, &v, NULL) == 0 ? v : -1;
}

/* As e2e_query_int, for a double (a NULL value reads as NaN). */
static inline double e2e_query_double(const char *db, const char *sql)
{
    double v;
    return e2e_query(db, sql, NULL, &v) == 0 ? v : -1;
}

/* e2e_dir/err-TAG.txt into buf (len bytes), e2e_dir/err.txt for a NULL tag: where e2e_start
 * sends a process's stderr. Returns buf. */
static inline const char *e2e_err_path(char *buf, size_t len, const char *tag)
{
    if (tag)
        snprintf(buf, len, "%s/err-%s.txt", e2e_dir, tag);
    else
        snprintf(buf, len, "%s/err.txt", e2e_dir);
    return buf;
}

/* Starts the llmsim binary with arg0 and ap's arguments up to a NULL (no shell: they pass
 * untouched), stdout to /dev/null, stderr to e2e_err_path(tag), in a process group of its own
 * when own_group (proc_start). Its pid; the test fails when it cannot start. */
static inline pid_t e2e_startv(const char *tag, int own_group, const char *arg0, va_list ap)
{
    char errpath[400];
    pid_t pid =
        proc_startv(LLMSIM_BINARY, e2e_err_path(errpath, sizeof errpath, tag), own_group, arg0, ap);
    assert_true(pid > 0);
    return pid;
}

/* e2e_startv with the arguments after arg0 up to a NULL. */
static inline pid_t e2e_start(const char *tag, int own_group, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    pid_t pid = e2e_startv(tag, own_group, arg0, ap);
    va_end(ap);
    return pid;
}

/* Waits for pid, started by e2e_start with tag: its exit status (-1 when a signal ended it); its
 * stderr into errbuf (len bytes) when errbuf is not NULL. */
static inline int e2e_finish(pid_t pid, const char *tag, char *errbuf, size_t len)
{
    int rc = proc_finish(pid);
    char path[400];
    if (errbuf)
        proc_read_text(e2e_err_path(path, sizeof path, tag), errbuf, len);
    return rc;
}

#endif
