/*
 * test_scenarios_cache.c: whole-file length tables kept between runs (scn_cache, what a sweep
 * worker uses so that each point does not re-read a 30,000-row table): sources made with the
 * cache draw exactly what uncached sources draw; the table is read once (a file changed under
 * the same size and modification time is not read again), and read again when the file
 * changes; several sources share one table and outlive each other in any order.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "scenario.h"
#include "test_main.h"

extern const scn_resolver test_resolver;

static char dir[64], table[128];

/* A vidur length table: rows (p, o) = (base + i, 1 + i % 7). */
static void write_table(int base)
{
    FILE *f = fopen(table, "w");
    assert_non_null(f);
    fprintf(f, "num_prefill_tokens,num_decode_tokens\n");
    for (int i = 0; i < 500; i++)
        fprintf(f, "%d,%d\n", base + i, 1 + i % 7);
    fclose(f);
}

static void load(const char *workload, scn_scenario *s)
{
    char text[1024];
    snprintf(text, sizeof text,
             "model: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: orca}\n"
             "workload:\n  num_requests: 300\n  arrival: {process: burst}\n%s",
             workload);
    sim_err e = {{0}};
    if (scn_load_text("c.yaml", text, NULL, 0, &test_resolver, s, &e))
        fail_msg("%s", e.msg);
}

/* The prompt lengths of 300 arrivals, summed with their positions (a fingerprint). */
static int64_t draws(const scn_scenario *s, scn_cache *cache, scn_source **keep)
{
    sim_err e = {{0}};
    scn_source *src = scn_source_new_cached(s, 5, cache, &e);
    if (!src)
        fail_msg("%s", e.msg);
    eng_arrival a;
    int64_t sum = 0;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        sum += (int64_t)(i + 1) * a.prompt + a.output;
    }
    if (keep)
        *keep = src;
    else
        scn_source_free(src);
    return sum;
}

/* The file rewritten with other lengths but its size and modification time put back. */
static void rewrite_same_stat(int base)
{
    struct stat st;
    assert_int_equal(stat(table, &st), 0);
    write_table(base);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, table, t, 0), 0);
}

static void bump_mtime(void)
{
    struct stat st;
    assert_int_equal(stat(table, &st), 0);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    t[1].tv_sec += 10;
    assert_int_equal(utimensat(AT_FDCWD, table, t, 0), 0);
}

static void kept_and_reread(const char *workload)
{
    write_table(1000);
    scn_scenario s;
    load(workload, &s);
    int64_t plain = draws(&s, NULL, NULL);
    scn_cache *cache = scn_cache_new();
    scn_source *first = NULL, *second = NULL;
    assert_int_equal(draws(&s, cache, &first), plain);
    assert_int_equal(draws(&s, cache, &second), plain);
    /* the same size and time: the cache does not read it again */
    rewrite_same_stat(2000);
    assert_int_equal(draws(&s, cache, NULL), plain);
    assert_true(draws(&s, NULL, NULL) != plain); /* what a fresh read sees */
    /* a changed file is read again */
    bump_mtime();
    int64_t fresh = draws(&s, NULL, NULL);
    assert_int_equal(draws(&s, cache, NULL), fresh);
    /* sources freed in any order, before the cache */
    scn_source_free(first);
    assert_int_equal(draws(&s, cache, NULL), fresh);
    scn_source_free(second);
    scn_cache_free(cache);
    scn_free(&s);
}

static void joint_pairs(void **state)
{
    char w[256];
    snprintf(w, sizeof w, "  lengths: {path: %s, format: vidur}\n", table);
    kept_and_reread(w);
}

static void empirical_columns(void **state)
{
    char w[512];
    snprintf(w, sizeof w,
             "  prompt_tokens: {dist: empirical, path: %s, format: vidur}\n"
             "  output_tokens: {dist: empirical, path: %s, format: vidur}\n",
             table, table);
    kept_and_reread(w);
}

LLMSIM_TESTS(tests, joint_pairs, empirical_columns);

int main(void)
{
    if (scratch_make(dir, sizeof dir, "/tmp/llmsim-cache-XXXXXX") != 0)
        return 1;
    snprintf(table, sizeof table, "%s/lengths.csv", dir);
    return scratch_run_group_in(tests, dir);
}
