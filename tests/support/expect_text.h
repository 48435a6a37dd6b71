/*
 * expect_text.h: what a test expects a message or an output to say: every fragment of a list,
 * the test failing with the first one missing and the whole text.
 */
#ifndef LLMSIM_TESTS_EXPECT_TEXT_H
#define LLMSIM_TESTS_EXPECT_TEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* A NULL-ended list of fragments, written in place: FRAGS("a", "b"). */
#define FRAGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* text holds every fragment of frags (NULL-ended); the test fails naming the first it lacks. */
static inline void expect_all(const char *text, const char *const *frags)
{
    for (int i = 0; frags[i]; i++)
        if (!text || !strstr(text, frags[i]))
            fail_msg("'%s' not in:\n%s", frags[i], text ? text : "(null)");
}

#endif
