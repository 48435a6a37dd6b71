/*
 * stats.c: Welford running moments; weighted exact percentiles with a sketch fallback.
 *
 * Sketch: value x > 0 goes to bucket ceil(log(x) / log(gamma)), gamma = (1 + a) / (1 - a);
 * a bucket's representative 2 gamma^i / (gamma + 1) is within a of every value in it
 * (Masson et al., "DDSketch", VLDB 2019). Values below SKETCH_MIN count as zero.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "stats.h"

#define SKETCH_MIN SIM_SKETCH_MIN

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

sim_interval sim_t_interval(double sum, double sum_sq, int64_t n, double level)
{
    sim_interval r = {n > 0 ? sum / (double)n : NAN, NAN};
    if (n < 2)
        return r;
    double var = (sum_sq - sum * sum / (double)n) / (double)(n - 1);
    double t = gsl_cdf_tdist_Pinv(0.5 + level / 2, (double)(n - 1));
    r.half = t * sqrt(var > 0 ? var : 0) / sqrt((double)n);
    return r;
}

void sim_samples_init(sim_samples *s)
{
    memset(s, 0, sizeof *s);
    s->max_pairs = SIM_SAMPLES_DEFAULT_CAP;
}

/* The pairs add_n may hold as things stand (sim_samples.room). */
static void set_room(sim_samples *s)
{
    s->room = s->sketch ? 0 : s->cap < s->max_pairs ? s->cap : s->max_pairs;
}

void sim_samples_set_cap(sim_samples *s, size_t max_pairs)
{
    s->max_pairs = max_pairs;
    set_room(s);
}

void sim_samples_no_std(sim_samples *s)
{
    SIM_CHECK(NULL, s->count == 0 && !s->sketch);
    s->no_std = 1;
}

void sim_samples_free(sim_samples *s)
{
    size_t cap = s->max_pairs;
    int no_std = s->no_std;
    free(s->p);
    free(s->bins);
    free(s->edge);
    free(s->cell);
    sim_samples_init(s);
    s->max_pairs = cap;
    s->no_std = no_std;
}

static double log_gamma(void)
{
    return log((1 + SIM_SKETCH_ALPHA) / (1 - SIM_SKETCH_ALPHA));
}

/* gamma^j, a bucket's upper bound: computed the one way every bound is. */
static double bound(int32_t j)
{
    return exp(j * log_gamma());
}

#define CELL_SHIFT (52 - 7) /* a cell: the exponent and the top 7 mantissa bits */

static inline int64_t cell_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (int64_t)(u >> CELL_SHIFT);
}

/* Widens bins (and edge) to cover bucket i, and remakes the cells' guesses. */
static void sketch_cover(sim_samples *s, int32_t i)
{
    int32_t lo = s->nbins == 0 ? i : i < s->lo ? i : s->lo;
    int32_t hi = s->nbins == 0 ? i + 1 : i >= s->lo + s->nbins ? i + 1 : s->lo + s->nbins;
    double *b = sim_xcalloc((size_t)(hi - lo), sizeof *b);
    double *e = sim_xmalloc((size_t)(hi - lo + 1) * sizeof *e);
    if (s->nbins > 0) {
        memcpy(b + (s->lo - lo), s->bins, (size_t)s->nbins * sizeof *b);
        memcpy(e + (s->lo - lo), s->edge, (size_t)(s->nbins + 1) * sizeof *e);
    }
    for (int32_t j = lo - 1; j < hi; j++)
        if (s->nbins == 0 || j < s->lo - 1 || j > s->lo + s->nbins - 1)
            e[j - (lo - 1)] = bound(j);
    free(s->bins);
    free(s->edge);
    s->bins = b;
    s->edge = e;
    s->lo = lo;
    s->nbins = hi - lo;
    int64_t c0 = cell_of(e[0]), c1 = cell_of(e[s->nbins]);
    free(s->cell);
    s->cell = sim_xmalloc((size_t)(c1 - c0 + 1) * sizeof *s->cell);
    s->cell_lo = c0;
    int32_t a = 0;
    for (int64_t c = c0; c <= c1; c++) {
        uint64_t u = (uint64_t)c << CELL_SHIFT;
        double least;
        memcpy(&least, &u, sizeof least);
        while (a + 1 < s->nbins && e[a + 1] < least)
            a++;
        s->cell[c - c0] = a;
    }
}

/* The bucket of x > SKETCH_MIN: ceil(log(x) / log(gamma)), as computed. Within the bounds the
 * bins cover, the bucket whose bounds hold x is that number whenever x lies more than a relative
 * 1e-9 inside them: log, the division and the bounds themselves err by under 1e-12 in units of
 * buckets for any double, against the 1e-7 that margin keeps between the quotient and a whole
 * number; only nearer a bound (or outside the bins) is the logarithm taken. The bounds are
 * searched from a guess within a bucket of the right one (the cell's). */
static inline __attribute__((always_inline)) int32_t bucket_of(const sim_samples *s, double x)
{
    const double *e = s->edge;
    int32_t nb = s->nbins;
    if (nb > 0 && x > e[0] && x <= e[nb]) {
        int32_t a = s->cell[cell_of(x) - s->cell_lo]; /* the bucket, or the one below */
        while (x <= e[a])                             /* e[0] < x: stops at 0 */
            a--;
        while (x > e[a + 1]) /* x <= e[nb]: stops at nb - 1 */
            a++;
        if (x > e[a] * (1 + 1e-9) && x < e[a + 1] * (1 - 1e-9))
            return s->lo + a;
    }
    return (int32_t)ceil(log(x) / log_gamma());
}

/* Counts x of weight w in its bucket (the last value's when it holds x, else bucket_of's) or among
 * the zeros. Inline in its callers: sim_samples_put, and to_sketch's loop over every pair. */
static inline __attribute__((always_inline)) void sketch_add(sim_samples *s, double x, double w)
{
    if (x <= SKETCH_MIN) {
        s->zeros += w;
        return;
    }
    if (!(x > s->last_lo && x <= s->last_hi)) { /* else the last bucket's */
        int32_t i, was = s->last;
        double was_lo = s->last_lo, was_hi = s->last_hi; /* 0, 0 before any bucket */
        if (x > s->prev_in_lo && x < s->prev_in_hi) {
            /* bucket_of's answer: inside the bucket's bounds by more than its margin */
            i = s->prev;
            SIM_ASSERT(NULL, i == bucket_of(s, x));
        } else {
            i = bucket_of(s, x);
            if (s->nbins == 0 || i < s->lo || i >= s->lo + s->nbins)
                sketch_cover(s, i);
        }
        s->last = i;
        s->last_bin = &s->bins[i - s->lo];
        double lo = s->edge[i - s->lo];
        s->last_lo = lo > SKETCH_MIN ? lo : SKETCH_MIN; /* (sim_samples.last_lo) */
        s->last_hi = s->edge[i - s->lo + 1];
        /* the bounds bucket_of compares with, computed as it computes them (a lower bound
         * raised to SKETCH_MIN only narrows them: what is inside is inside the bucket's own) */
        s->prev = was;
        s->prev_in_lo = was_lo * (1 + 1e-9);
        s->prev_in_hi = was_hi * (1 - 1e-9);
    }
    *s->last_bin += w;
}

/* Adds the pairs not yet in sumsq to it, in the order they were added (each x * x * w, as an
 * add would have). */
static void fold_sumsq(sim_samples *s)
{
    double q = s->sumsq;
    for (size_t i = s->sq_n; i < s->n; i++)
        q += s->p[i].v * s->p[i].v * s->p[i].w;
    s->sumsq = q;
    s->sq_n = s->n;
}

static void to_sketch(sim_samples *s)
{
    s->sketch = 1;
    s->room = 0;
    size_t i = 0;
    for (; i < s->sq_n; i++)
        sketch_add(s, s->p[i].v, s->p[i].w);
    double q = s->sumsq; /* fold_sumsq's terms, in the same read of the pairs */
    for (; i < s->n; i++) {
        double v = s->p[i].v, w = s->p[i].w;
        q += v * v * w;
        sketch_add(s, v, w);
    }
    s->sumsq = q;
    s->sq_n = s->n;
    free(s->p);
    s->p = NULL;
    s->n = s->cap = s->sq_n = s->sorted_n = 0;
}

static __attribute__((noinline)) void grow_pairs(sim_samples *s)
{
    s->cap = s->cap ? 2 * s->cap : 64;
    s->p = sim_xrealloc(s->p, s->cap * sizeof *s->p);
    set_room(s);
}

/* Room for one more pair (exact mode, below max_pairs). */
static inline void grow(sim_samples *s)
{
    if (s->n == s->cap)
        grow_pairs(s);
}

/* sim_samples_put in exact mode: x's pair, or the switch to the sketch and x's bucket. Out of
 * line, so that the sketch's path (put's usual one) saves no registers for it. */
static __attribute__((noinline)) void put_exact(sim_samples *s, double x, double w)
{
    if (s->n < s->max_pairs) {
        grow(s);
        s->p[s->n++] = (sim_pair){x, w};
        return;
    }
    to_sketch(s); /* sumsq then holds every pair, and takes x's term after them */
    s->sumsq += x * x * w;
    sketch_add(s, x, w);
}

void sim_samples_put(sim_samples *s, double x, double w)
{
    if (!s->sketch) {
        put_exact(s, x, w);
        return;
    }
    sketch_add(s, x, w);
}

void sim_samples_add(sim_samples *s, double x)
{
    sim_samples_add_n(s, x, 1);
}

void sim_samples_add_each(sim_samples *s, double x, size_t count)
{
    while (count > 0 && !s->sketch && s->n < s->max_pairs) {
        s->count += 1.0;
        s->sum += x; /* sumsq takes x * x * 1 later (sim_samples.sumsq) */
        grow(s);
        s->p[s->n++] = (sim_pair){x, 1.0};
        count--;
    }
    if (count == 0)
        return;
    if (!s->sketch)
        to_sketch(s);
    /* every one lands in x's bucket: its count grows by count, exactly (whole numbers) */
    if (x == 0 && !signbit(x) && !signbit(s->sum) && !signbit(s->sumsq) &&
        s->count + (double)count < 9007199254740992.0) {
        /* adding +0 to a sum that is not -0 leaves it, and the count's ones add exactly up to
         * 2^53: what the loop below gives, in one step (a zero CPU time each iteration) */
        s->count += (double)count;
        sketch_add(s, x, (double)count);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        s->count += 1.0;
        s->sum += x;
        s->sumsq += x * x;
    }
    sketch_add(s, x, (double)count);
}

double sim_samples_count(const sim_samples *s)
{
    return s->count;
}

double sim_samples_mean(const sim_samples *s)
{
    return s->count > 0 ? s->sum / s->count : 0.0;
}

double sim_samples_std(const sim_samples *s)
{
    SIM_CHECK(NULL, !s->no_std);
    if (s->count <= 0)
        return 0.0;
    double mean = s->sum / s->count, var;
    if (!s->sketch) {
        double acc = 0;
        if (s->unit && s->sorted_n == s->n) { /* every weight 1: w * d is d, exactly */
#pragma GCC unroll 4
            for (size_t i = 0; i < s->n; i++)
                acc += (s->p[i].v - mean) * (s->p[i].v - mean);
        } else {
            for (size_t i = 0; i < s->n; i++)
                acc += s->p[i].w * (s->p[i].v - mean) * (s->p[i].v - mean);
        }
        var = acc / s->count;
    } else {
        var = s->sumsq / s->count - mean * mean;
    }
    return var > 0 ? sqrt(var) : 0.0;
}

int sim_samples_exact(const sim_samples *s)
{
    return !s->sketch;
}

/* Order-preserving map of a double to an unsigned key: flip all bits of negatives, the sign
 * bit of the rest. */
static inline uint64_t sort_key(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    /* the sign spread over the word: all ones for a negative (every bit flips), else none (the
     * sign bit alone flips, from 0) */
    uint64_t neg = (uint64_t)0 - (u >> 63);
    return u ^ (neg | (UINT64_C(1) << 63));
}

static int cmp_pair(const void *a, const void *b)
{
    double x = ((const sim_pair *)a)->v, y = ((const sim_pair *)b)->v;
    return (x > y) - (x < y);
}

/* The value a sort key stands for (sort_key's inverse, to the bit). */
static inline double key_value(uint64_t k)
{
    uint64_t neg = (k >> 63) - 1; /* all ones where the key's top bit is 0: a negative's */
    uint64_t u = k ^ (neg | (UINT64_C(1) << 63));
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* A pair's value field read as the bits it holds (a key, while the pairs are being sorted). */
static inline uint64_t bits_of(const sim_pair *p)
{
    uint64_t k;
    memcpy(&k, &p->v, sizeof k);
    return k;
}

/* The radix sorts' digit counts: key k counted under each of its four 16-bit digits, in the
 * four passes' tables of 65,536 counts. */
static inline void count_digits(size_t *count, uint64_t k)
{
    count[k & 0xFFFF]++;
    count[65536 + ((k >> 16) & 0xFFFF)]++;
    count[2 * 65536 + ((k >> 32) & 0xFFFF)]++;
    count[3 * 65536 + (k >> 48)]++;
}

/* A pass's digit counts turned into where each digit's keys start. */
static inline void digit_starts(size_t *c)
{
    size_t sum = 0;
#pragma GCC unroll 4
    for (size_t d = 0; d < 65536; d++) {
        size_t x = c[d];
        c[d] = sum;
        sum += x;
    }
}

/* Sorts the pairs by value: qsort when few, else an LSD radix sort (four stable passes of 16
 * bits, O(n)), several times faster than qsort on the million values of a large run. Each value
 * is replaced by its key once (its bits held in the value field) and restored after the passes;
 * the four passes' digit counts are taken in that same read of the pairs. */
static void sort_pairs(sim_pair *p, size_t n)
{
    if (n < 4096) {
        qsort(p, n, sizeof *p, cmp_pair);
        return;
    }
    sim_pair *tmp = sim_xmalloc(n * sizeof *tmp);
    size_t *count = sim_xcalloc(4 * 65536, sizeof *count);
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++) {
        uint64_t k = sort_key(p[i].v);
        memcpy(&p[i].v, &k, sizeof k);
        count_digits(count, k);
    }
    sim_pair *src = p, *dst = tmp;
    for (int pass = 0; pass < 4; pass++) {
        int shift = 16 * pass;
        size_t *c = count + (size_t)pass * 65536;
        if (c[(bits_of(&src[0]) >> shift) & 0xFFFF] == n)
            continue; /* every key has this digit: the pass would change nothing */
        digit_starts(c);
#pragma GCC unroll 4
        for (size_t i = 0; i < n; i++)
            dst[c[(bits_of(&src[i]) >> shift) & 0xFFFF]++] = src[i];
        sim_pair *t = src;
        src = dst;
        dst = t;
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++)
        p[i] = (sim_pair){key_value(bits_of(&src[i])), src[i].w};
    free(count);
    free(tmp);
}

/* One pass of sort_unit's over the keys src (digit at shift, a constant where it is inlined):
 * each key to where its digit's keys go next, b[digit]. */
static inline __attribute__((always_inline)) void scatter_keys(const uint64_t *src, size_t n,
                                                               uint64_t **b, int shift)
{
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++) {
        uint64_t k = src[i];
        *b[(k >> shift) & 0xFFFF]++ = k;
    }
}

/* sort_unit's last pass: each key's value to the pair where its digit's values go next. */
static inline __attribute__((always_inline)) void scatter_values(const uint64_t *src, size_t n,
                                                                 sim_pair **b, int shift)
{
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++) {
        uint64_t k = src[i];
        (b[(k >> shift) & 0xFFFF]++)->v = key_value(k);
    }
}

/* sort_pairs of n >= 4096 pairs when every weight is 1 (each value added once, so the k-th value
 * of the expanded sample is pair k's); returns 0, the pairs untouched, at the first other weight.
 * The same passes over the keys alone (8 bytes a move, not 16): each value's key is formed, its
 * weight checked and its digits counted in one read of the pairs, and the last pass that moves
 * anything writes the values back into the pairs (their weights are 1 already). Equal values are
 * alike, so the order is sort_pairs's to the bit. That read also adds the terms of the pairs from
 * `from` on to *sumsq, in their order (fold_sumsq's), where it returns 1. */
static int sort_unit(sim_pair *p, size_t n, size_t from, double *sumsq)
{
    uint64_t *a = sim_xmalloc(2 * n * sizeof *a), *tmp = a + n;
    size_t *count = sim_xcalloc(4 * 65536, sizeof *count);
    double q = *sumsq;
    size_t i = 0;
#pragma GCC unroll 4
    for (; i < from; i++) { /* (from <= n) */
        if (p[i].w != 1.0)
            goto other;
        uint64_t k = sort_key(p[i].v);
        a[i] = k;
        count_digits(count, k);
    }
#pragma GCC unroll 4
    for (; i < n; i++) {
        if (p[i].w != 1.0)
            goto other;
        double v = p[i].v;
        q += v * v; /* fold_sumsq's v * v * w, w being 1 */
        uint64_t k = sort_key(v);
        a[i] = k;
        count_digits(count, k);
    }
    *sumsq = q;
    int pass[4], npass = 0;
    for (int d = 0; d < 4; d++)
        if (count[(size_t)d * 65536 + ((a[0] >> (16 * d)) & 0xFFFF)] != n)
            pass[npass++] = d; /* else every key has this digit: the pass would change nothing */
    uint64_t **bk = sim_xmalloc(65536 * sizeof *bk);
    sim_pair **bp = sim_xmalloc(65536 * sizeof *bp);
    uint64_t *src = a, *dst = tmp;
    for (int j = 0; j < npass; j++) {
        int d = pass[j];
        const size_t *c = count + (size_t)d * 65536;
        size_t at = 0;
        if (j + 1 < npass) {
#pragma GCC unroll 4
            for (size_t x = 0; x < 65536; x++) {
                bk[x] = dst + at;
                at += c[x];
            }
            switch (d) { /* the digit's shift a constant in each */
            case 0:
                scatter_keys(src, n, bk, 0);
                break;
            case 1:
                scatter_keys(src, n, bk, 16);
                break;
            case 2:
                scatter_keys(src, n, bk, 32);
                break;
            default:
                scatter_keys(src, n, bk, 48);
                break;
            }
            uint64_t *t = src;
            src = dst;
            dst = t;
        } else {
#pragma GCC unroll 4
            for (size_t x = 0; x < 65536; x++) {
                bp[x] = p + at;
                at += c[x];
            }
            switch (d) {
            case 0:
                scatter_values(src, n, bp, 0);
                break;
            case 1:
                scatter_values(src, n, bp, 16);
                break;
            case 2:
                scatter_values(src, n, bp, 32);
                break;
            default:
                scatter_values(src, n, bp, 48);
                break;
            }
        }
    }
    /* with no pass, every value is the same and the pairs stand as sorted */
    free(bp);
    free(bk);
    free(count);
    free(a);
    return 1;
other:
    free(count);
    free(a);
    return 0;
}

/* The k-th (0-based) value of the expanded, sorted sample; *i walks forward with *below the
 * weight before pair *i, so successive calls with growing k are cheap. */
static double kth(const sim_samples *s, double k, size_t *i, double *below)
{
    while (*i + 1 < s->n && *below + s->p[*i].w <= k) {
        *below += s->p[*i].w;
        (*i)++;
    }
    return s->p[*i].v;
}

static double sketch_kth(const sim_samples *s, double k)
{
    double below = s->zeros;
    if (k < below)
        return 0.0;
    double g = exp(log_gamma());
    for (int32_t b = 0; b < s->nbins; b++) {
        below += s->bins[b];
        if (k < below)
            return 2.0 * pow(g, s->lo + b) / (g + 1.0);
    }
    return 2.0 * pow(g, s->lo + s->nbins - 1) / (g + 1.0);
}

/* Sorts the few keys a[0 .. n) (insertion sort). */
static void sort_few(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t k = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > k; j--)
            a[j] = a[j - 1];
        a[j] = k;
    }
}

#define SELECT_FEW 32 /* keys sorted outright rather than selected from */

static void select_keys(uint64_t *a, uint64_t *tmp, size_t n, const size_t *r, size_t m,
                        uint64_t *out);

/* One level of selection: the keys a[0 .. n), counted in c[] by their digit at shift (nb values),
 * of the buckets that hold a wanted rank r[] are moved to tmp, each bucket in its place in the
 * keys' order; each such bucket's ranks are then selected within it (select_keys), with a (free
 * now) as its scratch. */
static void select_buckets(uint64_t *a, uint64_t *tmp, size_t n, int shift, size_t *c, size_t nb,
                           const size_t *r, size_t m, uint64_t *out)
{
    /* c[d] becomes the start of bucket d; a wanted one is marked in want[] by its first rank */
    size_t *start = sim_xmalloc((nb + 1) * sizeof *start);
    size_t at = 0;
    for (size_t d = 0; d < nb; d++) {
        start[d] = at;
        at += c[d];
    }
    start[nb] = at;
    /* the keys of each bucket holding a wanted rank go to tmp from its start (c[d] then counts
     * them); the rest, SIZE_MAX, stay */
    size_t j = 0;
    for (size_t d = 0; d < nb; d++) {
        int wanted = j < m && r[j] < start[d + 1];
        while (j < m && r[j] < start[d + 1])
            j++;
        c[d] = wanted ? start[d] : SIZE_MAX;
    }
    size_t mask = nb - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = a[i];
        size_t *to = &c[(k >> shift) & mask];
        if (*to != SIZE_MAX)
            tmp[(*to)++] = k;
    }
    size_t *rr = sim_xmalloc(m * sizeof *rr);
    for (j = 0; j < m;) {
        size_t lo = 0, hi = nb; /* the bucket of rank r[j]: start[d] <= r[j] < start[d + 1] */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (start[mid] <= r[j])
                lo = mid;
            else
                hi = mid;
        }
        size_t b = start[lo], e = start[lo + 1], k = 0;
        for (; j + k < m && r[j + k] < e; k++)
            rr[k] = r[j + k] - b;
        select_keys(tmp + b, a + b, e - b, rr, k, out + j);
        j += k;
    }
    free(rr);
    free(start);
}

/* The keys at ranks r[0 .. m) (ascending, each < n; repeats allowed) of the n keys a[] into
 * out[0 .. m), by radix selection on 8-bit digits: the highest digit on which the keys differ is
 * counted, and the selection goes on only within the buckets that hold a wanted rank; keys all
 * alike are each the answer. a is reordered; tmp has room for n. */
static void select_keys(uint64_t *a, uint64_t *tmp, size_t n, const size_t *r, size_t m,
                        uint64_t *out)
{
    if (n <= SELECT_FEW) {
        sort_few(a, n);
        for (size_t j = 0; j < m; j++)
            out[j] = a[r[j]];
        return;
    }
    uint64_t diff = 0, k0 = a[0];
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++)
        diff |= a[i] ^ k0;
    if (diff == 0) {
        for (size_t j = 0; j < m; j++)
            out[j] = k0;
        return;
    }
    /* the digit of the highest bit that differs */
    int shift = (63 - __builtin_clzll(diff)) / 8 * 8;
    size_t c[256];
    memset(c, 0, sizeof c);
    for (size_t i = 0; i < n; i++)
        c[(a[i] >> shift) & 255]++;
    select_buckets(a, tmp, n, shift, c, 256, r, m, out);
}

/* Where the unit path of a percentile reads: the pair of rank lo or hi, clamped to the pairs (a p
 * outside [0, 100] reads the first or the last). */
static size_t unit_index(double rank, size_t last)
{
    return rank <= 0 ? 0 : rank >= (double)last ? last : (size_t)rank;
}

/* sim_samples_percentiles by selection, for n >= 4096 pairs of weight 1 unsorted: the order
 * statistics the unit path reads from the sorted pairs, found among their keys by radix selection
 * (16 bits at the top, then 8) and interpolated as it does; the pairs stay as they are. Returns 0,
 * nothing done, at a weight other than 1. */
static int select_percentiles(const sim_samples *s, const double *ps, size_t k, double *out)
{
    size_t n = s->n;
    uint64_t *a = sim_xmalloc(2 * n * sizeof *a);
    size_t *c = sim_xcalloc(65536, sizeof *c);
#pragma GCC unroll 4
    for (size_t i = 0; i < n; i++) {
        if (s->p[i].w != 1.0) {
            free(c);
            free(a);
            return 0;
        }
        uint64_t key = sort_key(s->p[i].v);
        a[i] = key;
        c[key >> 48]++;
    }
    /* the ranks read, ascending and each once */
    size_t *r = sim_xmalloc(2 * k * sizeof *r), m = 0;
    uint64_t *got = sim_xmalloc(2 * k * sizeof *got);
    for (size_t i = 0; i < k; i++) {
        double rank = ps[i] / 100.0 * (s->count - 1);
        double lo = floor(rank);
        double hi = lo + 1 < s->count ? lo + 1 : lo;
        r[m++] = unit_index(lo, n - 1);
        r[m++] = unit_index(hi, n - 1);
    }
    for (size_t i = 1; i < m; i++) { /* insertion sort of the few ranks */
        size_t x = r[i], j = i;
        for (; j > 0 && r[j - 1] > x; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || r[u - 1] != r[i])
            r[u++] = r[i];
    if (c[a[0] >> 48] == n)
        select_keys(a, a + n, n, r, u, got);
    else
        select_buckets(a, a + n, n, 48, c, 65536, r, u, got);
    for (size_t i = 0; i < k; i++) {
        double rank = ps[i] / 100.0 * (s->count - 1);
        double lo = floor(rank), frac = rank - lo;
        double hi = lo + 1 < s->count ? lo + 1 : lo;
        size_t ri = unit_index(lo, n - 1), rj = unit_index(hi, n - 1), x = 0, y = 0;
        while (r[x] != ri)
            x++;
        while (r[y] != rj)
            y++;
        double va = key_value(got[x]), vb = key_value(got[y]);
        out[i] = va + (vb - va) * frac;
    }
    free(got);
    free(r);
    free(c);
    free(a);
    return 1;
}

/* One percentile from the sorted pairs (sorting them first) or the sketch. */
static double percentile(sim_samples *s, double p)
{
    if (s->count <= 0)
        return 0.0;
    double rank = p / 100.0 * (s->count - 1);
    double lo = floor(rank), frac = rank - lo;
    double hi = lo + 1 < s->count ? lo + 1 : lo;
    if (s->sketch)
        return sketch_kth(s, lo) + (sketch_kth(s, hi) - sketch_kth(s, lo)) * frac;
    if (s->sorted_n != s->n) {
        /* sumsq takes the pairs' terms first: the order they came in is lost to the sort */
        s->unit = s->n >= 4096 && sort_unit(s->p, s->n, s->sq_n, &s->sumsq);
        if (s->unit) {
            s->sq_n = s->n;
        } else {
            fold_sumsq(s);
            sort_pairs(s->p, s->n);
        }
        s->sorted_n = s->n;
        s->walk_i = 0;
        s->walk_below = 0;
    }
    if (s->unit) { /* pair k is the k-th value: what the walk below stops at, without it */
        size_t last = s->n - 1;
        size_t i = unit_index(lo, last), j = unit_index(hi, last);
        double a = s->p[i].v, b = s->p[j].v;
        return a + (b - a) * frac;
    }
    /* every pair before the last walk's stop ends at or below lo: the walk goes on from there
     * (the same additions in the same order as from the first pair) */
    size_t i = 0;
    double below = 0;
    if (s->walk_below <= lo) {
        i = s->walk_i;
        below = s->walk_below;
    }
    double a = kth(s, lo, &i, &below);
    s->walk_i = i;
    s->walk_below = below;
    double b = kth(s, hi, &i, &below);
    return a + (b - a) * frac;
}

void sim_samples_percentiles(sim_samples *s, const double *ps, size_t k, double *out)
{
    if (s->no_std && !s->sketch && s->count > 0 && s->sorted_n != s->n && s->n >= 4096 &&
        select_percentiles(s, ps, k, out))
        return;
    for (size_t i = 0; i < k; i++)
        out[i] = percentile(s, ps[i]);
}

double sim_samples_percentile(sim_samples *s, double p)
{
    double v;
    sim_samples_percentiles(s, &p, 1, &v);
    return v;
}
