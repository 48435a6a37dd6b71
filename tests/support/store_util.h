/*
 * store_util.h: what the tests that read or write a results database share: opening one
 * (read-write or read-only), running SQL, and reading one value, each failing the test with the
 * store's message (and the SQL or path it was about). Tests link llmsim_store.
 */
#ifndef LLMSIM_TESTS_STORE_UTIL_H
#define LLMSIM_TESTS_STORE_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "store.h"
#include "store_query.h"

/* The database at path, opened read-only when readonly (the caller closes it); the test fails
 * when it cannot be opened. */
static inline store *tstore_open(const char *path, int readonly)
{
    sim_err err = {{0}};
    store *s = readonly ? store_open_readonly(path, &err) : store_open(path, &err);
    if (!s)
        fail_msg("%s %s: %s", readonly ? "store_open_readonly" : "store_open", path, err.msg);
    return s;
}

/* Runs sql on s; the test fails when it fails. */
static inline void tstore_exec(store *s, const char *sql)
{
    sim_err err = {{0}};
    if (store_exec(s, sql, &err) != 0)
        fail_msg("%s: %s", sql, err.msg);
}

/* The first column of the first row of sql on s into *i, or into *d when i is NULL; the test
 * fails when the query fails. */
static inline void tstore_query(store *s, const char *sql, int64_t *i, double *d)
{
    sim_err err = {{0}};
    if ((i ? store_query_int(s, sql, i, &err) : store_query_double(s, sql, d, &err)) != 0)
        fail_msg("%s: %s", sql, err.msg);
}

/* The first column of the first row of sql on s; the test fails when the query fails. */
static inline int64_t tstore_int(store *s, const char *sql)
{
    int64_t v = 0;
    tstore_query(s, sql, &v, NULL);
    return v;
}

/* As tstore_int, for a double (a NULL value reads as NaN). */
static inline double tstore_double(store *s, const char *sql)
{
    double v = 0;
    tstore_query(s, sql, NULL, &v);
    return v;
}

/* As tstore_int, sql a printf format. */
static inline int64_t tstore_intf(store *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int64_t tstore_intf(store *s, const char *fmt, ...)
{
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    return tstore_int(s, sql);
}

/* A query and the integer its first column must read. */
typedef struct tstore_row {
    const char *sql;
    int64_t want;
} tstore_row;

/* Runs the n queries on s; the test fails at the first that does not read its integer, quoting
 * the query and both numbers. */
static inline void tstore_expect(store *s, const tstore_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t got = tstore_int(s, rows[i].sql);
        if (got != rows[i].want)
            fail_msg("%s: %lld, expected %lld", rows[i].sql, (long long)got,
                     (long long)rows[i].want);
    }
}

/* Runs sql on the database at path (opened and closed for it); the test fails when it fails. */
static inline void tstore_exec_at(const char *path, const char *sql)
{
    store *s = tstore_open(path, 0);
    tstore_exec(s, sql);
    store_close(s);
}

/* tstore_double of sql on the database at path, opened read-only for it. */
static inline double tstore_double_at(const char *path, const char *sql)
{
    store *s = tstore_open(path, 1);
    double v = tstore_double(s, sql);
    store_close(s);
    return v;
}

#endif
