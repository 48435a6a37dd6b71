/*
 * stats.h: statistics helpers: running mean/variance, and a sample set with percentiles.
 *
 * sim_welford keeps count, mean and variance in O(1) memory (Welford's update).
 *
 * sim_samples answers percentiles the way numpy.percentile does by default (linear
 * interpolation between order statistics), which is what the serving benchmarks of the field
 * report. It keeps (value, count) pairs, so adding one value many times (the same inter-token
 * gap for every sequence of a decode step) costs one pair. It is exact while it holds at most
 * `cap` pairs; past that it folds everything into a relative-error sketch (DDSketch-style
 * logarithmic buckets) whose percentiles are within SIM_SKETCH_ALPHA (0.5%) of the true order
 * statistic, in memory that depends on the range of the values, not their number. The mean is
 * always exact.
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

/* The mean of n values given by their sum and sum of squares, and the half-width of its
 * two-sided confidence interval at `level` (0.95 for 95%) from Student's t with n - 1 degrees of
 * freedom. half is NAN when n < 2; mean is NAN when n == 0. */
typedef struct sim_interval {
    double mean, half;
} sim_interval;
sim_interval sim_t_interval(double sum, double sum_sq, int64_t n, double level);

#define SIM_SKETCH_ALPHA 0.005
#define SIM_SAMPLES_DEFAULT_CAP ((size_t)1 << 20)

typedef struct sim_pair {
    double v;
    double w; /* count, as a double so weights sum without overflow */
} sim_pair;

typedef struct sim_samples {
    sim_pair *p;      /* exact mode: the pairs */
    size_t n, cap;    /* pairs held, allocated */
    size_t max_pairs; /* beyond this, switch to the sketch */
    /* exact mode: the pairs add_n may hold without growing them or switching to the sketch,
     * min(cap, max_pairs); 0 once sketched */
    size_t room;
    size_t sorted_n; /* exact mode: the pairs are sorted while n == sorted_n */
    int no_std;      /* sim_samples_no_std: its standard deviation is never asked */
    /* exact mode, sorted: where the last percentile's walk stopped (pair walk_i, with walk_below
     * the weight before it), so increasing percentiles walk the pairs once */
    size_t walk_i;
    double walk_below;
    int unit; /* sorted with every weight 1 (and at least 4,096 pairs): pair k is the k-th value */
    double count; /* total weight */
    double sum;   /* sum of value x weight */
    /* sum of value^2 x weight (the standard deviation once sketched): in exact mode it holds the
     * first sq_n pairs, in the order they were added; the rest are added (in that order) when the
     * sketch takes over or before the pairs are sorted, so it has the bits of adding each value's
     * term as it came */
    double sumsq;
    size_t sq_n;
    /* sketch mode (p == NULL, sketch != 0) */
    int sketch;
    double *bins; /* counts of bucket index lo .. lo + nbins - 1 */
    int32_t lo, nbins;
    double zeros; /* values <= the smallest tracked magnitude */
    /* the previous value's bucket and its bounds (lo, hi]: consecutive values mostly share a
     * bucket, which then costs no logarithm; lo is SIM_SKETCH_MIN where the bucket's bound is
     * below it (values at or below it are zeros), so that one test excludes them */
    int32_t last;
    double last_lo, last_hi;
    double *last_bin; /* bins[last - lo] (set with last, after any widening of bins) */
    /* the bucket last held before it, and its bounds drawn in by bucket_of's relative 1e-9
     * margin: a value strictly inside them is in that bucket as bucket_of finds it (values that
     * alternate between two buckets, such as a step's gap and a longer one after a prefill, then
     * cost no search); both 0 (no value inside) until there is one */
    int32_t prev;
    double prev_in_lo, prev_in_hi;
    /* the bounds of the buckets bins counts: edge[k] = gamma^(lo - 1 + k), k = 0 .. nbins (each
     * computed as the bucket's bound always was), so a value that leaves the last bucket finds
     * its own by comparisons */
    double *edge;
    /* a guess at the bucket of a value, by its exponent and top 7 mantissa bits (128 cells an
     * octave, against about 69 buckets): cell[c - cell_lo] is the bins index of the bucket that
     * holds the cell's smallest double, for the cells from edge[0]'s to edge[nbins]'s */
    int32_t *cell;
    int64_t cell_lo;
} sim_samples;

void sim_samples_init(sim_samples *s);
/* Sets the most pairs kept exactly (default SIM_SAMPLES_DEFAULT_CAP); 0 = always sketch. */
void sim_samples_set_cap(sim_samples *s, size_t max_pairs);
void sim_samples_free(sim_samples *s);
void sim_samples_add(sim_samples *s, double x);

/* Values at or below this count as zero once sketched. */
#define SIM_SKETCH_MIN 1e-9
/* sim_samples_add_n's weight w (count > 0) once the count and the sum hold it (and sumsq, when
 * sketched): its pair, or its bucket. */
void sim_samples_put(sim_samples *s, double x, double w);
/* Adds x count times in O(1). Inline: a value that lands in the exact pairs' spare room, in the
 * sketch's last bucket or among its zeros is added here, anything else by sim_samples_put. */
static inline void sim_samples_add_n(sim_samples *s, double x, size_t count)
{
    if (count == 0)
        return;
    double w = (double)count;
    s->count += w;
    s->sum += x * w;
    if (s->n < s->room) { /* exact, with room: sumsq takes its term later (sim_samples.sumsq) */
        s->p[s->n++] = (sim_pair){x, w};
        return;
    }
    if (s->sketch) {
        s->sumsq += x * x * w;
        if (x > s->last_lo && x <= s->last_hi) { /* (last_lo >= SIM_SKETCH_MIN) */
            *s->last_bin += w;
            return;
        }
        if (x <= SIM_SKETCH_MIN) {
            s->zeros += w;
            return;
        }
    }
    sim_samples_put(s, x, w);
}
/* Adds x as count separate samples: exactly what count calls of sim_samples_add(s, x) do (the
 * same sums, to the bit, and the same pairs), in one call. */
void sim_samples_add_each(sim_samples *s, double x, size_t count);
double sim_samples_count(const sim_samples *s);
double sim_samples_mean(const sim_samples *s); /* 0 when empty */
/* The population standard deviation (numpy.std's default, ddof = 0); 0 when empty. Exact (two
 * passes over the pairs) in exact mode, from the sums once sketched. */
double sim_samples_std(const sim_samples *s);
/* p in [0, 100]; 0 when empty. Exact in exact mode (sorts in place on first use, or selects:
 * sim_samples_no_std). */
double sim_samples_percentile(sim_samples *s, double p);
/* The percentiles ps[0 .. k) into out[0 .. k): to the bit what k calls of sim_samples_percentile
 * give, in one selection where s may be selected from (sim_samples_no_std). */
void sim_samples_percentiles(sim_samples *s, const double *ps, size_t k, double *out);
/* Declares that s's standard deviation is never asked (sim_samples_std then fails an always-on
 * check). Its exact percentiles may then be found by selecting the wanted order statistics, with
 * the pairs left as they are, in place of sorting them: the standard deviation of exact mode sums
 * over the pairs in their order, which a sort decides, so only a sample whose deviation is never
 * asked may skip it. Call it on an empty s, before any add. */
void sim_samples_no_std(sim_samples *s);
/* 1 while percentiles are exact, 0 once the sketch took over. */
int sim_samples_exact(const sim_samples *s);

#endif
