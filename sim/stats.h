/*
 * stats.h: statistics helpers: running mean/variance, and a sample set with percentiles.
 *
 * sim_welford keeps count, mean and variance in O(1) memory (Welford's update).
 * sim_samples keeps every value (optionally with a weight) and answers percentiles exactly,
 * interpolating linearly between order statistics as numpy.percentile does by default, which is
 * what the serving benchmarks of the field report.
 */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_welford {
    uint64_t n;
    double mean;
    double m2;
} sim_welford;

void sim_welford_add(sim_welford *w, double x);
double sim_welford_var(const sim_welford *w); /* sample variance (n-1); 0 when n < 2 */

typedef struct sim_samples {
    double *v;
    size_t n, cap;
    int sorted;
    double sum;
} sim_samples;

void sim_samples_init(sim_samples *s);
void sim_samples_free(sim_samples *s);
void sim_samples_add(sim_samples *s, double x);
/* Adds x count times (one call per iteration for all sequences that saw the same gap). */
void sim_samples_add_n(sim_samples *s, double x, size_t count);
double sim_samples_mean(const sim_samples *s); /* 0 when empty */
/* p in [0, 100]; sorts in place on first use; 0 when empty. */
double sim_samples_percentile(sim_samples *s, double p);

#endif
