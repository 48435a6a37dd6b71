/*
 * test_sim_stats.c: Welford's running mean/variance against a two-pass computation, and
 * percentiles against numpy.percentile's default (linear) interpolation on hand-checked arrays.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rng.h"
#include "stats.h"
#include "test_main.h"

static void near(double got, double want, double rel)
{
    if (fabs(got - want) > rel * fmax(1.0, fabs(want))) {
        print_message("got %.17g, want %.17g\n", got, want);
        fail();
    }
}

static double unif(uint64_t *st) /* [0, 1) */
{
    return (double)(sim_splitmix64((*st)++) >> 11) * 0x1.0p-53;
}

/* Two-pass in long double is the reference. A large offset (1e9, where a double's spacing is
 * 1.2e-7) makes the naive sum-of-squares formula lose every digit of a variance near 5, so the
 * 1e-7 relative bound also checks Welford's stability. */
static void test_welford_vs_two_pass(void **state)
{
    static const double offsets[] = {0.0, -3.5, 1e9};
    enum { N = 100000 };
    static double x[N];
    uint64_t st = 7;
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        sim_welford w = {0};
        for (size_t i = 0; i < N; i++) {
            x[i] = offsets[k] + 10.0 * unif(&st) * unif(&st);
            sim_welford_add(&w, x[i]);
        }
        long double s = 0, ss = 0;
        for (size_t i = 0; i < N; i++)
            s += x[i];
        long double m = s / N;
        for (size_t i = 0; i < N; i++)
            ss += (x[i] - m) * (x[i] - m);
        assert_int_equal(w.n, N);
        near(w.mean, (double)m, 1e-12);
        near(sim_welford_var(&w), (double)(ss / (N - 1)), 1e-7);
    }
}

static void test_welford_small(void **state)
{
    sim_welford w = {0};
    assert_true(sim_welford_var(&w) == 0.0);
    sim_welford_add(&w, 5.0);
    assert_true(w.mean == 5.0);
    assert_true(sim_welford_var(&w) == 0.0);
    sim_welford_add(&w, 7.0);
    sim_welford_add(&w, 9.0);
    near(w.mean, 7.0, 1e-15);
    near(sim_welford_var(&w), 4.0, 1e-15); /* ((-2)^2 + 0 + 2^2) / 2 */
}

static double pct_of(const double *v, size_t n, double p)
{
    sim_samples s;
    sim_samples_init(&s);
    for (size_t i = 0; i < n; i++)
        sim_samples_add(&s, v[i]);
    double r = sim_samples_percentile(&s, p);
    sim_samples_free(&s);
    return r;
}

/* Values from numpy.percentile(a, p) (method="linear"): rank = p/100 * (n - 1). */
static void test_percentiles_like_numpy(void **state)
{
    static const double a[] = {1, 2, 3, 4}, a_shuf[] = {4, 1, 3, 2};
    near(pct_of(a, 4, 50), 2.5, 1e-15);
    near(pct_of(a, 4, 90), 3.7, 1e-15);
    near(pct_of(a, 4, 25), 1.75, 1e-15);
    near(pct_of(a, 4, 0), 1.0, 0);
    near(pct_of(a, 4, 100), 4.0, 0);
    near(pct_of(a_shuf, 4, 90), 3.7, 1e-15);

    static const double b[] = {50, 15, 40, 20, 35};
    near(pct_of(b, 5, 40), 29.0, 1e-14); /* rank 1.6: 20 + 0.6 * 15 */
    near(pct_of(b, 5, 99), 49.6, 1e-14); /* rank 3.96: 40 + 0.96 * 10 */

    static const double c[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    near(pct_of(c, 10, 95), 9.55, 1e-14);
    near(pct_of(c, 10, 99), 9.91, 1e-14);
    near(pct_of(c, 10, 50), 5.5, 1e-15);

    static const double one[] = {7};
    near(pct_of(one, 1, 0), 7, 0);
    near(pct_of(one, 1, 99), 7, 0);
    near(pct_of(one, 0, 50), 0, 0); /* empty */
}

/* The sketch's buckets as they were found before the bounds were kept: the previous value's
 * bucket when it holds the value, else ceil(log(x) / log(gamma)) and that bucket's bounds. */
typedef struct ref_sketch {
    double bins[8192];
    int32_t lo, last; /* bins[i - lo]: bucket i */
    double last_lo, last_hi, zeros;
} ref_sketch;

static void ref_add(ref_sketch *r, double x, double w)
{
    double lg = log((1 + SIM_SKETCH_ALPHA) / (1 - SIM_SKETCH_ALPHA));
    if (x <= 1e-9) {
        r->zeros += w;
        return;
    }
    int32_t i = r->last;
    if (!(x > r->last_lo && x <= r->last_hi)) {
        i = (int32_t)ceil(log(x) / lg);
        r->last = i;
        r->last_lo = exp((i - 1) * lg);
        r->last_hi = exp(i * lg);
    }
    assert_true(i - r->lo >= 0 && i - r->lo < 8192);
    r->bins[i - r->lo] += w;
}

/* A sketch-only sample and its reference, empty. */
static void sketch_and_ref(sim_samples *s, ref_sketch *ref)
{
    memset(ref, 0, sizeof *ref);
    ref->lo = -3500;
    sim_samples_init(s);
    sim_samples_set_cap(s, 0);
}

/* s counted what ref counted, bucket by bucket and in its zeros; frees s. */
static void check_as_ref(sim_samples *s, const ref_sketch *ref)
{
    assert_true(s->zeros == ref->zeros);
    for (int32_t i = 0; i < 8192; i++) {
        int32_t b = i + ref->lo;
        double got = b >= s->lo && b < s->lo + s->nbins ? s->bins[b - s->lo] : 0;
        if (got != ref->bins[i]) {
            print_message("bucket %d: %.17g, want %.17g\n", b, got, ref->bins[i]);
            fail();
        }
    }
    sim_samples_free(s);
}

/* The sketch puts every value in the bucket the logarithm gave it, to the bit: values spread
 * over twelve decades, values on every bucket bound and one ulp either side of it (where the
 * logarithm and the bounds may disagree), values that jump between far buckets, counted in the
 * same bins with the same zeros. */
static void test_sketch_buckets_as_logarithm(void **state)
{
    static ref_sketch ref;
    sim_samples s;
    sketch_and_ref(&s, &ref);
    double lg = log((1 + SIM_SKETCH_ALPHA) / (1 - SIM_SKETCH_ALPHA));
    uint64_t st = 5;
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < 200000; i++) {
            double x = pow(10.0, -6 + 12 * unif(&st)), w = 1 + floor(unif(&st) * 3);
            sim_samples_add_n(&s, x, (size_t)w);
            ref_add(&ref, x, w);
        }
        for (int32_t j = -1300; j <= 1300; j++) {
            double b = exp(j * lg);
            const double xs[] = {
                b, nextafter(b, 0), nextafter(b, INFINITY), b * (1 + 2e-9), b * (1 - 2e-9), 1e-12,
                0};
            for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
                sim_samples_add(&s, xs[k]);
                ref_add(&ref, xs[k], 1);
            }
        }
    }
    assert_false(sim_samples_exact(&s));
    check_as_ref(&s, &ref);
}

/* The bucket held before the last one (sim_samples.prev) takes a value only where the logarithm
 * would give it that bucket: values that alternate between a far bucket and one near bound j
 * (inside it, on it, one ulp either side, inside and outside the search's 1e-9 margin) are
 * counted as the logarithm counts them. */
static void test_sketch_prev_bucket_as_logarithm(void **state)
{
    static ref_sketch ref;
    sim_samples s;
    sketch_and_ref(&s, &ref);
    double lg = log((1 + SIM_SKETCH_ALPHA) / (1 - SIM_SKETCH_ALPHA));
    for (int32_t j = -1300; j <= 1300; j++) {
        double b = exp(j * lg), far = exp((j > 0 ? j - 700 : j + 700) * lg);
        const double xs[] = {
            b * (1 - 1e-6), nextafter(b, 0), nextafter(b, INFINITY), b,
            b * (1 - 2e-9), b * (1 + 2e-9),  b * (1 - 5e-10),        b * (1 + 5e-10),
            b * (1 + 1e-6)};
        for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
            const double ys[] = {xs[k], far, xs[0], far, xs[k], xs[k]};
            for (size_t i = 0; i < sizeof ys / sizeof ys[0]; i++) {
                sim_samples_add(&s, ys[i]);
                ref_add(&ref, ys[i], 1);
            }
        }
    }
    check_as_ref(&s, &ref);
}

/* Percentiles asked in any order of one sample (the walk going on from the last one's stop, or
 * starting over) equal, to the bit, each asked first of a fresh copy; on 20,000 weighted pairs
 * with repeated values and negatives (the radix sort's path) and on a few (qsort's). */
static void test_samples_percentile_order(void **state)
{
    static const double ps[] = {99, 50, 90, 95, 99, 0, 100, 37.5, 37.5, 1, 99.9, 50};
    static const size_t sizes[] = {20000, 7};
    for (size_t z = 0; z < 2; z++) {
        sim_samples a;
        sim_samples_init(&a);
        uint64_t st = 11 + z;
        for (size_t i = 0; i < sizes[z]; i++)
            sim_samples_add_n(&a, floor(unif(&st) * 3000) - 500, 1 + (size_t)(unif(&st) * 4));
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
            sim_samples b;
            sim_samples_init(&b);
            for (size_t i = 0; i < a.n; i++)
                sim_samples_add_n(&b, a.p[i].v, (size_t)a.p[i].w);
            double want = sim_samples_percentile(&b, ps[j]);
            assert_true(sim_samples_percentile(&a, ps[j]) == want);
            sim_samples_free(&b);
        }
        sim_samples_free(&a);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Many values added once each (sorted as their keys alone, percentiles read by index) give the
 * percentiles of the sorted array as numpy.percentile interpolates them and the standard
 * deviation summed over it in that order, to the bit; with repeats, negatives and signed zeros. */
static void test_samples_unit_weights(void **state)
{
    enum { N = 30000 };
    static double v[N];
    static const double ps[] = {0, 1, 37.5, 50, 90, 95, 99, 99.9, 100};
    sim_samples a;
    sim_samples_init(&a);
    uint64_t st = 21;
    double sum = 0;
    for (size_t i = 0; i < N; i++) {
        v[i] = i % 97 == 0 ? (i % 2 ? 0.0 : -0.0) : floor(unif(&st) * 5000) / 7 - 100;
        sim_samples_add(&a, v[i]);
        sum += v[i];
    }
    qsort(v, N, sizeof v[0], cmp_double);
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
        double rank = ps[j] / 100.0 * (N - 1), lo = floor(rank), frac = rank - lo;
        double hi = lo + 1 < N ? lo + 1 : lo;
        double want = v[(size_t)lo] + (v[(size_t)hi] - v[(size_t)lo]) * frac;
        assert_true(sim_samples_percentile(&a, ps[j]) == want);
    }
    double mean = sum / N, acc = 0;
    for (size_t i = 0; i < N; i++)
        acc += 1.0 * (v[i] - mean) * (v[i] - mean);
    assert_true(sim_samples_std(&a) == sqrt(acc / N));
    sim_samples_free(&a);
}

/* The percentiles of n values added once each, checked against the sorted copy v (sorted here). */
static void check_unit_percentiles(sim_samples *a, double *v, size_t n)
{
    static const double ps[] = {0, 1, 37.5, 50, 90, 95, 99, 99.9, 100};
    qsort(v, n, sizeof v[0], cmp_double);
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
        double rank = ps[j] / 100.0 * (double)(n - 1), lo = floor(rank), frac = rank - lo;
        double hi = lo + 1 < (double)n ? lo + 1 : lo;
        double want = v[(size_t)lo] + (v[(size_t)hi] - v[(size_t)lo]) * frac;
        assert_true(sim_samples_percentile(a, ps[j]) == want);
    }
}

/* The unit-weight sort where its passes are skipped (a digit every key shares: the last, the
 * first, or all four, so the values are written back by another pass or by none) and where a
 * weight other than 1 comes last (the pairs then sort with their weights, as before). */
static void test_samples_unit_sort_passes(void **state)
{
    enum { N = 9000 };
    static double v[N + 2];
    uint64_t st = 5;
    for (int kind = 0; kind < 4; kind++) {
        sim_samples a;
        sim_samples_init(&a);
        for (size_t i = 0; i < N; i++) {
            double u = unif(&st);
            /* 0: every top digit alike (values in [1, 1.0625)); 1: every low digit 0 (sixteenths);
             * 2: one value throughout; 3: random, with a weight of 2 last */
            v[i] = kind == 0 ? 1 + u / 16 : kind == 1 ? floor(u * 4000) / 16 : kind == 2 ? 2.5 : u;
            sim_samples_add(&a, v[i]);
        }
        size_t n = N;
        if (kind == 3) {
            sim_samples_add_n(&a, 0.375, 2);
            v[n++] = 0.375;
            v[n++] = 0.375;
        }
        check_unit_percentiles(&a, v, n);
        if (kind == 2)
            assert_true(sim_samples_std(&a) == 0);
        sim_samples_free(&a);
    }
    (void)state;
}

static int cmp_bits_w(const void *a, const void *b)
{
    const sim_pair *x = a, *y = b;
    uint64_t u, v;
    memcpy(&u, &x->v, sizeof u);
    memcpy(&v, &y->v, sizeof v);
    if (u != v)
        return u < v ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

/* The radix sort (many pairs) leaves the pairs in order of value, each value restored to the bit
 * from the key it was sorted by (signed zeros, negatives, tiny and huge magnitudes among them),
 * each with its own weight. */
static void test_samples_sort_restores_pairs(void **state)
{
    enum { N = 50000 };
    static const double odd[] = {0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, 4.9e-324, 1.0};
    sim_samples a;
    sim_samples_init(&a);
    uint64_t st = 5;
    for (size_t i = 0; i < N; i++) {
        double u = unif(&st);
        double x = i % 7 == 0 ? odd[i % 8] : (u - 0.3) * pow(10, floor(unif(&st) * 12) - 6);
        sim_samples_add_n(&a, x, 1 + i % 5);
    }
    sim_pair *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    memcpy(want, a.p, N * sizeof *want);
    sim_samples_percentile(&a, 50);
    memcpy(got, a.p, N * sizeof *got);
    for (size_t i = 1; i < N; i++)
        assert_true(got[i - 1].v <= got[i].v);
    qsort(want, N, sizeof *want, cmp_bits_w);
    qsort(got, N, sizeof *got, cmp_bits_w);
    assert_memory_equal(want, got, N * sizeof *want);
    free(want);
    free(got);
    sim_samples_free(&a);
}

/* Adding after a percentile query re-sorts; the mean tracks every add. */
static void test_samples_add_after_query(void **state)
{
    sim_samples s;
    sim_samples_init(&s);
    assert_true(sim_samples_mean(&s) == 0.0);
    sim_samples_add(&s, 3);
    sim_samples_add(&s, 1);
    near(sim_samples_percentile(&s, 50), 2.0, 1e-15);
    sim_samples_add(&s, 0);
    sim_samples_add(&s, 10);
    near(sim_samples_percentile(&s, 50), 2.0, 1e-15); /* {0, 1, 3, 10} */
    near(sim_samples_percentile(&s, 100), 10.0, 0);
    near(sim_samples_mean(&s), 3.5, 1e-15);
    sim_samples_free(&s);
    assert_int_equal(s.n, 0);
}

/* add_n(x, k) is k calls of add(x); count 0 adds nothing. */
static void test_samples_add_n(void **state)
{
    sim_samples a, b;
    sim_samples_init(&a);
    sim_samples_init(&b);
    static const struct {
        double x;
        size_t k;
    } in[] = {{2.5, 3}, {-1, 0}, {7, 1}, {0.25, 200}, {100, 5}};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        sim_samples_add_n(&a, in[i].x, in[i].k);
        for (size_t j = 0; j < in[i].k; j++)
            sim_samples_add(&b, in[i].x);
    }
    assert_true(sim_samples_count(&a) == 209);
    assert_true(sim_samples_count(&a) == sim_samples_count(&b));
    assert_int_equal(a.n, 4); /* one pair per add_n with a nonzero count */
    near(sim_samples_mean(&a), sim_samples_mean(&b), 1e-14);
    near(sim_samples_mean(&a), (7.5 + 7 + 50 + 500) / 209.0, 1e-14);
    for (double p = 0; p <= 100; p += 0.5)
        assert_true(sim_samples_percentile(&a, p) == sim_samples_percentile(&b, p));
    near(sim_samples_percentile(&a, 99), 100.0, 0); /* rank 205.92, among the five 100s */
    near(sim_samples_percentile(&a, 1), 0.25, 0);
    sim_samples_free(&a);
    sim_samples_free(&b);
}

/* Weighted pairs give exactly what the expanded array gives; past the cap the sketch stays
 * within its stated relative error. */
/* The population standard deviation (numpy.std): 1..1000 has sqrt((n^2 - 1) / 12), whether
 * added one by one, with counts, or after the sketch took over; a constant has none. */
static void test_samples_std(void **state)
{
    sim_samples a, b, c;
    sim_samples_init(&a);
    sim_samples_init(&b);
    sim_samples_init(&c);
    sim_samples_set_cap(&c, 16);
    for (int i = 1; i <= 1000; i++) {
        sim_samples_add(&a, i);
        sim_samples_add(&c, i);
    }
    for (int i = 1; i <= 500; i++)
        sim_samples_add_n(&b, i, 2); /* 1,1,2,2,...: the variance of 1..500 */
    double want = sqrt((1000.0 * 1000.0 - 1) / 12);
    assert_true(fabs(sim_samples_std(&a) - want) < 1e-9 * want);
    assert_true(!sim_samples_exact(&c));
    assert_true(fabs(sim_samples_std(&c) - want) < 1e-9 * want);
    double wb = sqrt((500.0 * 500.0 - 1) / 12);
    assert_true(fabs(sim_samples_std(&b) - wb) < 1e-9 * wb);
    sim_samples_free(&a);
    sim_samples_init(&a);
    assert_true(sim_samples_std(&a) == 0);
    sim_samples_add_n(&a, 10.7, 1000);
    assert_true(sim_samples_std(&a) == 0);
    sim_samples_free(&a);
    sim_samples_free(&b);
    sim_samples_free(&c);
}

/* sim_samples_add_each is, to the bit, that many single adds: the sums, the pairs, the switch to
 * the sketch (crossed in the middle of one call) and the percentiles after it. */
static void test_samples_add_each(void **state)
{
    sim_samples a, b;
    sim_samples_init(&a);
    sim_samples_init(&b);
    sim_samples_set_cap(&a, 100);
    sim_samples_set_cap(&b, 100);
    const double xs[] = {0.3, 1e-12, 7.25, 0.3, 19.0 / 7};
    const size_t ns[] = {17, 3, 60, 45, 1000};
    for (int i = 0; i < 5; i++) {
        for (size_t j = 0; j < ns[i]; j++)
            sim_samples_add(&a, xs[i]);
        sim_samples_add_each(&b, xs[i], ns[i]);
        assert_true(sim_samples_count(&a) == sim_samples_count(&b));
        assert_memory_equal(&a.sum, &b.sum, sizeof a.sum);
        assert_int_equal(sim_samples_exact(&a), sim_samples_exact(&b));
        if (!sim_samples_exact(&a)) /* (exact mode takes sumsq's terms when the sketch does) */
            assert_memory_equal(&a.sumsq, &b.sumsq, sizeof a.sumsq);
    }
    assert_false(sim_samples_exact(&b)); /* the sketch took over inside the fourth call */
    for (double p = 0; p <= 100; p += 12.5) {
        double pa = sim_samples_percentile(&a, p), pb = sim_samples_percentile(&b, p);
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
    double sa = sim_samples_std(&a), sb = sim_samples_std(&b);
    assert_memory_equal(&sa, &sb, sizeof sa);
    sim_samples_free(&a);
    sim_samples_free(&b);
}

/* A set whose standard deviation is never asked (sim_samples_no_std) answers its percentiles by
 * selection, to the bit what sorting gives, its pairs left as added: over random values spread
 * over decades, repeats of a few values (buckets of one key many times), one value throughout,
 * negatives and signed zeros, values sharing their top digits, the fewest pairs selected from, p
 * outside [0, 100], and a weight other than 1 (then sorted). */
static void test_samples_select_as_sort(void **state)
{
    enum { N = 70000 };
    static const double ps[] = {50, 90, 95, 99, 0, 100, 37.5, 99.9, 1, -5, 105, 50};
    enum { K = sizeof ps / sizeof ps[0] };
    static const double odd[] = {0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, 4.9e-324, -7.5};
    static sim_pair before[N + 1];
    uint64_t st = 17;
    for (int kind = 0; kind < 7; kind++) {
        size_t n = kind == 5 ? 4096 : N;
        sim_samples a, b;
        sim_samples_init(&a);
        sim_samples_init(&b);
        sim_samples_no_std(&a);
        for (size_t i = 0; i < n; i++) {
            double u = unif(&st), x;
            switch (kind) {
            case 0: /* spread over decades */
                x = pow(10, -3 + 8 * u);
                break;
            case 1: /* a few values, each many times */
                x = floor(u * 5) * 0.1;
                break;
            case 2: /* one value */
                x = 12.25;
                break;
            case 3: /* negatives, signed zeros, extremes */
                x = i % 5 == 0 ? odd[i % 8] : (u - 0.6) * 1e3;
                break;
            case 4: /* every top digit alike, low digits close */
                x = 1 + floor(u * 300) * 0x1p-40;
                break;
            default: /* 5: the fewest pairs; 6: a weight of 3 last */
                x = u * 40;
                break;
            }
            sim_samples_add(&a, x);
            sim_samples_add(&b, x);
        }
        if (kind == 6) {
            sim_samples_add_n(&a, 2.5, 3);
            sim_samples_add_n(&b, 2.5, 3);
        }
        memcpy(before, a.p, a.n * sizeof *before);
        double got[K], want[K];
        sim_samples_percentiles(&a, ps, K, got);
        for (size_t j = 0; j < K; j++)
            want[j] = sim_samples_percentile(&b, ps[j]);
        assert_memory_equal(got, want, sizeof got);
        if (kind != 6) { /* selected: the pairs stay as added, and again give the same */
            assert_memory_equal(before, a.p, a.n * sizeof *before);
            for (size_t j = 0; j < K; j++) {
                double one = sim_samples_percentile(&a, ps[j]);
                assert_memory_equal(&one, &want[j], sizeof one);
            }
        }
        sim_samples_free(&a);
        sim_samples_free(&b);
    }
    (void)state;
}

/* sumsq is taken from the pairs when the sketch takes over (and before they are sorted), in the
 * order they came: the bits of adding each term as it was added, through add, add_n and
 * add_each, a percentile query (which sorts) in the middle, and the switch inside add_n's put
 * and inside add_each. */
static void test_samples_sumsq_as_added(void **state)
{
    for (int way = 0; way < 3; way++) {
        /* 0: add and add_n; 1: add_each too; 2: weights of 1 alone (sorted by keys), queried
         * twice, the second time with sorted pairs before the new ones */
        size_t n = way == 2 ? 25000 : 9000;
        sim_samples s;
        sim_samples_init(&s);
        sim_samples_set_cap(&s, way == 2 ? 20000 : 5000);
        uint64_t st = 3;
        double q = 0;
        for (size_t i = 0; i < n; i++) {
            double x = (unif(&st) - 0.2) * 37.0;
            size_t k = 1 + i % 4;
            if (i % 3 == 0 && way < 2) {
                sim_samples_add_n(&s, x, k);
                q += x * x * (double)k;
            } else if (i % 3 == 1 || way != 1) {
                sim_samples_add(&s, x);
                q += x * x * 1.0;
            } else {
                sim_samples_add_each(&s, x, k);
                for (size_t j = 0; j < k; j++)
                    q += x * x;
            }
            if (i == 2000 || i == 5000 || i == 9000)
                sim_samples_percentile(&s, 50); /* sorts the pairs so far */
        }
        assert_false(sim_samples_exact(&s));
        assert_memory_equal(&s.sumsq, &q, sizeof q);
        sim_samples_free(&s);
    }
    (void)state;
}

static void test_samples_weighted_and_sketch(void **state)
{
    sim_samples a, b;
    sim_samples_init(&a);
    sim_samples_init(&b);
    uint64_t x = 99;
    for (int i = 0; i < 2000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = (double)(x >> 40) / 1000.0;
        size_t n = 1 + (x >> 20) % 7;
        sim_samples_add_n(&a, v, n);
        for (size_t j = 0; j < n; j++)
            sim_samples_add(&b, v);
    }
    const double ps[] = {0, 1, 10, 33.3, 50, 90, 95, 99, 99.9, 100};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        near(sim_samples_percentile(&a, ps[i]), sim_samples_percentile(&b, ps[i]), 1e-12);
    near(sim_samples_mean(&a), sim_samples_mean(&b), 1e-9);
    assert_true(sim_samples_exact(&a));

    sim_samples sk;
    sim_samples_init(&sk);
    sim_samples_set_cap(&sk, 1000);
    for (size_t i = 0; i < b.n; i++)
        sim_samples_add(&sk, b.p[i].v);
    assert_false(sim_samples_exact(&sk));
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        double exact = sim_samples_percentile(&b, ps[i]);
        double got = sim_samples_percentile(&sk, ps[i]);
        assert_true(fabs(got - exact) <= 2 * SIM_SKETCH_ALPHA * exact + 1e-9);
    }
    near(sim_samples_mean(&sk), sim_samples_mean(&b), 1e-9);
    sim_samples_free(&a);
    sim_samples_free(&b);
    sim_samples_free(&sk);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_samples_weighted_and_sketch, test_samples_add_each,
                 test_samples_std, test_welford_vs_two_pass, test_welford_small,
                 test_percentiles_like_numpy, test_samples_percentile_order,
                 test_samples_sort_restores_pairs, test_sketch_buckets_as_logarithm,
                 test_sketch_prev_bucket_as_logarithm, test_samples_add_after_query,
                 test_samples_add_n, test_samples_unit_weights, test_samples_unit_sort_passes,
                 test_samples_select_as_sort, test_samples_sumsq_as_added)
