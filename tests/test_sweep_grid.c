/*
 * test_sweep_grid.c: a sweep's grid refused clearly when it cannot be run, never overflowed or
 * cut short: a point count past what a sweep may have (4 keys x 250 values overflowed an int
 * and then asked for 18 exabytes), more values than a key may have (once dropped in silence), a
 * ';' in a --vary key or value (it split the stored description), and a stored description
 * whose point count would overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study_sweep.h"

static void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("'%s' does not contain '%s'", text, want);
}

static void test_point_count_checked(void **state)
{
    static study_sweep sw; /* large: the value tables */
    memset(&sw, 0, sizeof sw);
    sim_err err = {{0}};
    static const char *const keys[] = {"workload.num_requests", "workload.arrival.rate", "seed",
                                       "replicas"};
    for (int k = 0; k < 4; k++) {
        char arg[128];
        snprintf(arg, sizeof arg, "%s=1:250:1", keys[k]);
        assert_int_equal(study_sweep_add_vary(&sw, arg, &err), 0);
    }
    sw.file = LLMSIM_SOURCE_DIR "/scenarios/demo.yaml";
    sw.reps = 1;
    scn_scenario base;
    assert_int_equal(study_sweep_check(&sw, &base, &err), -1);
    assert_has(err.msg, "more points than a sweep may have");
    assert_has(err.msg, "workload.num_requests (250) x workload.arrival.rate (250)");
    scn_free(&base);
    study_sweep_free(&sw);
}

static void test_values_and_separators(void **state)
{
    static study_vary v;
    sim_err err = {{0}};
    /* 1025 listed values: refused, not cut to 1024 */
    size_t cap = 16 * (STUDY_MAX_VALUES + 2), off = 0;
    char *arg = malloc(cap);
    assert_non_null(arg);
    off += (size_t)snprintf(arg, cap, "workload.num_requests=");
    for (int i = 0; i <= STUDY_MAX_VALUES; i++)
        off += (size_t)snprintf(arg + off, cap - off, "%s%d", i ? "," : "", i + 1);
    assert_int_equal(study_vary_parse(arg, &v, &err), -1);
    assert_has(err.msg, "more than 1024 values");
    for (int i = 0; i < v.n; i++)
        free(v.val[i]);
    free(arg);
    assert_int_equal(study_vary_parse("name=a;b,c", &v, &err), -1);
    assert_has(err.msg, "may not hold ';'");
    for (int i = 0; i < v.n; i++)
        free(v.val[i]);
    /* a stored description whose product overflows is no sweep of ours */
    char big[2200];
    off = 0;
    for (int k = 0; k < 12; k++) {
        off += (size_t)snprintf(big + off, sizeof big - off, "%sk%d=", k ? ";" : "", k);
        for (int i = 0; i < 40; i++)
            off += (size_t)snprintf(big + off, sizeof big - off, "%s1", i ? "," : "");
    }
    assert_int_equal(study_sweep_points_of(big), 0);
    assert_int_equal(study_sweep_points_of("a=1,2;b=3,4,5"), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_point_count_checked),
                                       cmocka_unit_test(test_values_and_separators)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
