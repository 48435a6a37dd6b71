/*
 * vexpr.c: the arithmetic of validation-set templates (see validate_int.h): a template whose
 * text begins with '=' is, once its placeholders are expanded, an expression over numbers:
 *   + - * /, parentheses, unary minus, ceil(x), floor(x), min(a, b, ...), max(a, b, ...),
 *   comparisons < <= > >= == != (1 or 0), 'text' == 'text' and != (a column's value against
 *   a name), and && || (lowest precedence, 1 or 0).
 * So an engine limit a harness derives from a row's columns is written as its rule reads:
 * "=ceil(({batch_size} + {isl} + 1500) / 32) * 32". Recursive descent over the text; no
 * allocation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

typedef struct parser {
    const char *s, *p;
    char *why;
    size_t wlen;
    int failed;
} parser;

static double fail(parser *ps, const char *what)
{
    if (!ps->failed)
        snprintf(ps->why, ps->wlen, "'%s': %s at '%.20s'", ps->s, what, ps->p);
    ps->failed = 1;
    return NAN;
}

static void skip(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static int eat(parser *ps, const char *tok)
{
    skip(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0)
        return 0;
    ps->p += n;
    return 1;
}

static double expr(parser *ps);

/* A call's arguments to its ')' into v (16 at most): their count, or -1 after fail. */
static int arguments(parser *ps, double v[16])
{
    int n = 0;
    do {
        if (n == 16)
            return fail(ps, "more than 16 arguments"), -1;
        v[n++] = expr(ps);
    } while (!ps->failed && eat(ps, ","));
    if (!eat(ps, ")"))
        return fail(ps, "expected ')'"), -1;
    return n;
}

/* Function name (len bytes) of the n values v: ceil, floor (one argument), min, max (one or
 * more). */
static double apply(parser *ps, const char *name, size_t len, const double *v, int n)
{
    int one = n == 1;
    if (len == 4 && strncmp(name, "ceil", 4) == 0 && one)
        return ceil(v[0]);
    if (len == 5 && strncmp(name, "floor", 5) == 0 && one)
        return floor(v[0]);
    int is_min = len == 3 && strncmp(name, "min", 3) == 0;
    if (!is_min && !(len == 3 && strncmp(name, "max", 3) == 0))
        return fail(ps, "unknown function or wrong argument count (ceil(x), floor(x), min, max)");
    double r = v[0];
    for (int i = 1; i < n; i++)
        r = is_min ? fmin(r, v[i]) : fmax(r, v[i]);
    return r;
}

/* name(args), after its '('. */
static double call(parser *ps, const char *name, size_t len)
{
    double v[16];
    int n = arguments(ps, v);
    return n < 0 ? NAN : apply(ps, name, len, v, n);
}

/* A function's name (lower-case letters and '_') and its call; NAN after fail when the name
 * is not followed by '('. */
static double function(parser *ps)
{
    const char *start = ps->p;
    while ((*ps->p >= 'a' && *ps->p <= 'z') || *ps->p == '_')
        ps->p++;
    size_t len = (size_t)(ps->p - start);
    return eat(ps, "(") ? call(ps, start, len) : fail(ps, "expected '(' after a function");
}

/* A finite number. */
static double number(parser *ps)
{
    char *end;
    double v = strtod(ps->p, &end);
    if (end == ps->p || !isfinite(v))
        return fail(ps, "expected a number");
    ps->p = end;
    return v;
}

static double primary(parser *ps)
{
    skip(ps);
    if (eat(ps, "(")) {
        double v = expr(ps);
        return eat(ps, ")") ? v : fail(ps, "expected ')'");
    }
    if (eat(ps, "-"))
        return -primary(ps);
    if ((*ps->p >= 'a' && *ps->p <= 'z') || *ps->p == '_')
        return function(ps);
    return number(ps);
}

static double product(parser *ps)
{
    double v = primary(ps);
    for (;;) {
        if (eat(ps, "*")) {
            v *= primary(ps);
        } else if (eat(ps, "/")) {
            double d = primary(ps);
            if (d == 0)
                return fail(ps, "division by zero");
            v /= d;
        } else {
            return v;
        }
    }
}

static double sum(parser *ps)
{
    double v = product(ps);
    for (;;) {
        if (eat(ps, "+"))
            v += product(ps);
        else if (eat(ps, "-"))
            v -= product(ps);
        else
            return v;
    }
}

/* 'text' (single quotes, no escapes) into out; 0, or -1 when there is none at ps->p. */
static int quoted(parser *ps, char *out, size_t len)
{
    skip(ps);
    if (*ps->p != '\'')
        return -1;
    const char *end = strchr(ps->p + 1, '\'');
    if (!end)
        return fail(ps, "unterminated quote"), -1;
    snprintf(out, len, "%.*s", (int)(end - ps->p - 1), ps->p + 1);
    ps->p = end + 1;
    return 0;
}

/* 'a' == 'b' or 'a' != 'b': texts compare equal or not (a row's column against a value). */
static double text_compare(parser *ps)
{
    char a[256], b[256];
    quoted(ps, a, sizeof a);
    int eq = eat(ps, "==");
    if (!eq && !eat(ps, "!="))
        return fail(ps, "expected == or != after a quoted text");
    if (quoted(ps, b, sizeof b) != 0)
        return fail(ps, "expected a quoted text");
    return (strcmp(a, b) == 0) == eq;
}

static double compare(parser *ps)
{
    skip(ps);
    if (*ps->p == '\'')
        return text_compare(ps);
    double a = sum(ps);
    /* two-character operators first */
    if (eat(ps, "<="))
        return a <= sum(ps);
    if (eat(ps, ">="))
        return a >= sum(ps);
    if (eat(ps, "=="))
        return a == sum(ps);
    if (eat(ps, "!="))
        return a != sum(ps);
    if (eat(ps, "<"))
        return a < sum(ps);
    if (eat(ps, ">"))
        return a > sum(ps);
    return a;
}

static double conjunction(parser *ps)
{
    double v = compare(ps);
    while (eat(ps, "&&")) {
        double w = compare(ps);
        v = v != 0 && w != 0;
    }
    return v;
}

static double expr(parser *ps)
{
    double v = conjunction(ps);
    while (eat(ps, "||")) {
        double w = conjunction(ps);
        v = v != 0 || w != 0;
    }
    return v;
}

int validate_expr(const char *text, double *out, char *why, size_t wlen)
{
    parser ps = {text, text, why, wlen, 0};
    double v = expr(&ps);
    skip(&ps);
    if (!ps.failed && *ps.p)
        fail(&ps, "unexpected text");
    if (!ps.failed && !isfinite(v))
        fail(&ps, "not a finite number");
    if (ps.failed)
        return -1;
    *out = v;
    return 0;
}
