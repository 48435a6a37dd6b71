/*
 * scratch.h: a test's scratch folder: made fresh from a pattern, and removed with all it holds
 * once the test group has run.
 */
#ifndef LLMSIM_TESTS_SCRATCH_H
#define LLMSIM_TESTS_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>

/* Makes a fresh folder from pattern (a path ending in XXXXXX) and writes its name into dir
 * (len bytes): 0, or -1 when it cannot be made. */
static inline int scratch_make(char *dir, size_t len, const char *pattern)
{
    snprintf(dir, len, "%s", pattern);
    return mkdtemp(dir) ? 0 : -1;
}

/* Removes the folder dir and all it holds (what a test made read-only included): 0, or -1 when
 * that fails. */
static inline int scratch_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A new file made from path (a pattern ending in XXXXXX, rewritten to the file's name), open for
 * writing (the caller closes it); NULL when it cannot be made. */
static inline FILE *scratch_file(char *path)
{
    int fd = mkstemp(path);
    return fd >= 0 ? fdopen(fd, "w") : NULL;
}

/* scratch_file holding text: 0, or -1 when it cannot be made or written. */
static inline int scratch_write(char *path, const char *text)
{
    FILE *f = scratch_file(path);
    if (!f)
        return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* "dir/name" in one of eight rotating static buffers (a call's result lasts eight calls). */
static inline const char *scratch_path(const char *dir, const char *name)
{
    static char buf[8][320];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* Runs the cmocka group tests in the scratch folder dir (already made), then removes it: the
 * group's result, or 1 when the group passed but the folder could not be removed. */
#define scratch_run_group_in(tests, dir)                                                           \
    scratch_after_group(                                                                           \
        _cmocka_run_group_tests(#tests, tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL),    \
        dir)

/* As scratch_run_group_in, making the folder dir (a char array) from pattern first: 1 when it
 * cannot be made. */
#define scratch_run_group(tests, dir, pattern)                                                     \
    (scratch_make(dir, sizeof(dir), pattern) != 0 ? 1 : scratch_run_group_in(tests, dir))

static inline int scratch_after_group(int rc, const char *dir)
{
    if (scratch_remove(dir) != 0 && rc == 0)
        rc = 1;
    return rc;
}

#endif
