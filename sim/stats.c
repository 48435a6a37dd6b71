/*
 * stats.c: Welford running moments and exact sample percentiles.
 */
#include <math.h>
#include <stdlib.h>

#include "sim.h"
#include "stats.h"

void sim_welford_add(sim_welford *w, double x)
{
    w->n++;
    double d = x - w->mean;
    w->mean += d / (double)w->n;
    w->m2 += d * (x - w->mean);
}

double sim_welford_var(const sim_welford *w)
{
    return w->n < 2 ? 0.0 : w->m2 / (double)(w->n - 1);
}

void sim_samples_init(sim_samples *s)
{
    s->v = NULL;
    s->n = s->cap = 0;
    s->sorted = 1;
    s->sum = 0;
}

void sim_samples_free(sim_samples *s)
{
    free(s->v);
    sim_samples_init(s);
}

void sim_samples_add_n(sim_samples *s, double x, size_t count)
{
    if (count == 0)
        return;
    if (s->n + count > s->cap) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap < s->n + count)
            cap *= 2;
        s->v = sim_xrealloc(s->v, cap * sizeof *s->v);
        s->cap = cap;
    }
    for (size_t i = 0; i < count; i++)
        s->v[s->n++] = x;
    s->sum += x * (double)count;
    s->sorted = 0;
}

void sim_samples_add(sim_samples *s, double x)
{
    sim_samples_add_n(s, x, 1);
}

double sim_samples_mean(const sim_samples *s)
{
    return s->n ? s->sum / (double)s->n : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sim_samples_percentile(sim_samples *s, double p)
{
    if (s->n == 0)
        return 0.0;
    if (!s->sorted) {
        qsort(s->v, s->n, sizeof *s->v, cmp_double);
        s->sorted = 1;
    }
    double rank = p / 100.0 * (double)(s->n - 1);
    size_t lo = (size_t)floor(rank);
    size_t hi = lo + 1 < s->n ? lo + 1 : lo;
    double frac = rank - (double)lo;
    return s->v[lo] + (s->v[hi] - s->v[lo]) * frac;
}
