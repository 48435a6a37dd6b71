/*
 * test_main.h: a test file names its cmocka tests once, as a list of functions:
 *   LLMSIM_TEST_MAIN(setup, teardown, test_a, test_b, ...)
 * is the whole main() of a file whose group needs nothing before it runs, and
 *   LLMSIM_TESTS(tests, test_a, test_b, ...);
 * declares the group `tests` (a CMUnitTest array, as cmocka_unit_test would write it) for a
 * main() that does more (skips without data, makes a scratch folder) before running it.
 */
#ifndef LLMSIM_TESTS_TEST_MAIN_H
#define LLMSIM_TESTS_TEST_MAIN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* LT_EACH(f, x...): f(x1), f(x2), ... for up to 40 arguments. */
#define LT_NTH(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18,    \
               _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34,     \
               _35, _36, _37, _38, _39, _40, n, ...)                                               \
    n
#define LT_COUNT(...)                                                                              \
    LT_NTH(__VA_ARGS__, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23,    \
           22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define LT_CAT_(a, b) a##b
#define LT_CAT(a, b) LT_CAT_(a, b)
#define LT_EACH(f, ...) LT_CAT(LT_E, LT_COUNT(__VA_ARGS__))(f, __VA_ARGS__)
#define LT_E1(f, x) f(x)
#define LT_E2(f, x, ...) f(x), LT_E1(f, __VA_ARGS__)
#define LT_E3(f, x, ...) f(x), LT_E2(f, __VA_ARGS__)
#define LT_E4(f, x, ...) f(x), LT_E3(f, __VA_ARGS__)
#define LT_E5(f, x, ...) f(x), LT_E4(f, __VA_ARGS__)
#define LT_E6(f, x, ...) f(x), LT_E5(f, __VA_ARGS__)
#define LT_E7(f, x, ...) f(x), LT_E6(f, __VA_ARGS__)
#define LT_E8(f, x, ...) f(x), LT_E7(f, __VA_ARGS__)
#define LT_E9(f, x, ...) f(x), LT_E8(f, __VA_ARGS__)
#define LT_E10(f, x, ...) f(x), LT_E9(f, __VA_ARGS__)
#define LT_E11(f, x, ...) f(x), LT_E10(f, __VA_ARGS__)
#define LT_E12(f, x, ...) f(x), LT_E11(f, __VA_ARGS__)
#define LT_E13(f, x, ...) f(x), LT_E12(f, __VA_ARGS__)
#define LT_E14(f, x, ...) f(x), LT_E13(f, __VA_ARGS__)
#define LT_E15(f, x, ...) f(x), LT_E14(f, __VA_ARGS__)
#define LT_E16(f, x, ...) f(x), LT_E15(f, __VA_ARGS__)
#define LT_E17(f, x, ...) f(x), LT_E16(f, __VA_ARGS__)
#define LT_E18(f, x, ...) f(x), LT_E17(f, __VA_ARGS__)
#define LT_E19(f, x, ...) f(x), LT_E18(f, __VA_ARGS__)
#define LT_E20(f, x, ...) f(x), LT_E19(f, __VA_ARGS__)
#define LT_E21(f, x, ...) f(x), LT_E20(f, __VA_ARGS__)
#define LT_E22(f, x, ...) f(x), LT_E21(f, __VA_ARGS__)
#define LT_E23(f, x, ...) f(x), LT_E22(f, __VA_ARGS__)
#define LT_E24(f, x, ...) f(x), LT_E23(f, __VA_ARGS__)
#define LT_E25(f, x, ...) f(x), LT_E24(f, __VA_ARGS__)
#define LT_E26(f, x, ...) f(x), LT_E25(f, __VA_ARGS__)
#define LT_E27(f, x, ...) f(x), LT_E26(f, __VA_ARGS__)
#define LT_E28(f, x, ...) f(x), LT_E27(f, __VA_ARGS__)
#define LT_E29(f, x, ...) f(x), LT_E28(f, __VA_ARGS__)
#define LT_E30(f, x, ...) f(x), LT_E29(f, __VA_ARGS__)
#define LT_E31(f, x, ...) f(x), LT_E30(f, __VA_ARGS__)
#define LT_E32(f, x, ...) f(x), LT_E31(f, __VA_ARGS__)
#define LT_E33(f, x, ...) f(x), LT_E32(f, __VA_ARGS__)
#define LT_E34(f, x, ...) f(x), LT_E33(f, __VA_ARGS__)
#define LT_E35(f, x, ...) f(x), LT_E34(f, __VA_ARGS__)
#define LT_E36(f, x, ...) f(x), LT_E35(f, __VA_ARGS__)
#define LT_E37(f, x, ...) f(x), LT_E36(f, __VA_ARGS__)
#define LT_E38(f, x, ...) f(x), LT_E37(f, __VA_ARGS__)
#define LT_E39(f, x, ...) f(x), LT_E38(f, __VA_ARGS__)
#define LT_E40(f, x, ...) f(x), LT_E39(f, __VA_ARGS__)

/* The cmocka group `group` of the test functions named after it (at most 40). */
#define LLMSIM_TESTS(group, ...)                                                                   \
    static const struct CMUnitTest group[] = {LT_EACH(cmocka_unit_test, __VA_ARGS__)}

/* main(): runs the tests named after setup and teardown (the group's fixtures, or NULL) as one
 * group; its status is the number of tests that failed. */
#define LLMSIM_TEST_MAIN(setup, teardown, ...)                                                     \
    LLMSIM_TESTS(tests, __VA_ARGS__);                                                              \
    int main(void)                                                                                 \
    {                                                                                              \
        return cmocka_run_group_tests(tests, setup, teardown);                                     \
    }

#endif
