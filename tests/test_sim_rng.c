/*
 * test_sim_rng.c: the per-purpose random streams. The same seed replays the same draws per
 * stream; streams differ from one another and across seeds; and drawing from one stream never
 * moves another (common random numbers: a scheduler's draws cannot change the workload).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rng.h"
#include "sim.h"
#include "test_main.h"

enum { DRAWS = 1000 };

static void draw(gsl_rng *r, unsigned long *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = gsl_rng_get(r);
}

/* Positions at which two draw sequences agree (about n / 2^32 for independent streams). */
static size_t agreements(const unsigned long *a, const unsigned long *b, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += a[i] == b[i];
    return k;
}

/* SplitMix64's published first output from state 0, and the stream seed derivation pinned: a
 * change here silently changes every result ever stored, so it must be deliberate. */
static void test_splitmix_reference(void **state)
{
    assert_int_equal(sim_splitmix64(0), UINT64_C(0xE220A8397B1DCDAF));
    assert_int_equal(sim_stream_seed(1, 0),
                     sim_splitmix64(sim_splitmix64(1) ^ sim_splitmix64(UINT64_C(0x5EED))));
}

static void test_same_seed_same_draws(void **state)
{
    for (uint64_t seed = 0; seed < 4; seed++) {
        sim_ctx *a = sim_new(seed), *b = sim_new(seed);
        assert_int_equal(sim_seed(a), seed);
        for (int s = 0; s < SIM_STREAM_COUNT; s++) {
            unsigned long x[DRAWS], y[DRAWS], z[DRAWS];
            draw(sim_rng(a, (sim_stream)s), x, DRAWS);
            draw(sim_rng(b, (sim_stream)s), y, DRAWS);
            gsl_rng *r = sim_rng_new_stream(seed, (unsigned)s); /* outside a context */
            draw(r, z, DRAWS);
            gsl_rng_free(r);
            assert_memory_equal(x, y, sizeof x);
            assert_memory_equal(x, z, sizeof x);
        }
        sim_free(a);
        sim_free(b);
    }
}

static void test_streams_and_seeds_differ(void **state)
{
    enum { SEEDS = 3 };
    static unsigned long d[SEEDS][SIM_STREAM_COUNT][DRAWS];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        sim_ctx *ctx = sim_new(seed);
        for (int s = 0; s < SIM_STREAM_COUNT; s++)
            draw(sim_rng(ctx, (sim_stream)s), d[seed][s], DRAWS);
        sim_free(ctx);
    }
    for (int i = 0; i < SEEDS * SIM_STREAM_COUNT; i++)
        for (int j = i + 1; j < SEEDS * SIM_STREAM_COUNT; j++) {
            const unsigned long *a = d[i / SIM_STREAM_COUNT][i % SIM_STREAM_COUNT];
            const unsigned long *b = d[j / SIM_STREAM_COUNT][j % SIM_STREAM_COUNT];
            assert_true(agreements(a, b, DRAWS) <= 1);
        }
}

/* Draws on one stream, interleaved in any amount with draws on others and whichever stream is
 * touched first, leave its sequence unchanged. */
static void test_common_random_numbers(void **state)
{
    sim_ctx *alone = sim_new(42), *busy = sim_new(42);
    unsigned long ref[DRAWS], got[DRAWS], junk[64];
    draw(sim_rng(alone, SIM_STREAM_ARRIVALS), ref, DRAWS);
    draw(sim_rng(busy, SIM_STREAM_SCHED), junk, 17); /* SCHED created first */
    for (size_t i = 0; i < DRAWS; i++) {
        got[i] = gsl_rng_get(sim_rng(busy, SIM_STREAM_ARRIVALS));
        unsigned other = (unsigned)(i % SIM_STREAM_COUNT);
        if (other == SIM_STREAM_ARRIVALS)
            other = SIM_STREAM_ROUTER;
        draw(sim_rng(busy, (sim_stream)other), junk, i % 64);
        gsl_rng_uniform(sim_rng(busy, SIM_STREAM_SERVICE));
    }
    assert_memory_equal(ref, got, sizeof ref);
    sim_free(alone);
    sim_free(busy);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Stream seeds are distinct over many (seed, stream) pairs, including neighbouring seeds, and
 * the 32-bit values the generators actually get differ across the streams of one seed. */
static void test_stream_seed_values_differ(void **state)
{
    enum { SEEDS = 2000, N = SEEDS * SIM_STREAM_COUNT };
    uint64_t *v = malloc(N * sizeof *v);
    assert_non_null(v);
    for (uint64_t seed = 0; seed < SEEDS; seed++)
        for (unsigned s = 0; s < SIM_STREAM_COUNT; s++)
            v[seed * SIM_STREAM_COUNT + s] = sim_stream_seed(seed, s);
    qsort(v, N, sizeof *v, cmp_u64);
    for (size_t i = 1; i < N; i++)
        assert_true(v[i] != v[i - 1]);
    free(v);

    uint64_t seeds[] = {0, 1, 2, 42, UINT64_MAX};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        unsigned long first[SIM_STREAM_COUNT];
        for (unsigned s = 0; s < SIM_STREAM_COUNT; s++) {
            gsl_rng *r = sim_rng_new_stream(seeds[k], s);
            first[s] = gsl_rng_get(r);
            gsl_rng_free(r);
        }
        for (unsigned i = 0; i < SIM_STREAM_COUNT; i++)
            for (unsigned j = i + 1; j < SIM_STREAM_COUNT; j++)
                assert_true(first[i] != first[j]);
    }
}

/* The inline generator draws what the stream's GSL generator draws, 32 bits and uniforms alike,
 * across several refills of its 624 words, for every stream of a few seeds; and a context's
 * inline stream is the one its sim_rng would give. */
static void test_inline_mt_matches_gsl(void **state)
{
    enum { MANY = 3 * SIM_MT_N + 7 };
    uint64_t seeds[] = {0, 1, 42, UINT64_MAX};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        for (unsigned s = 0; s < 2 * SIM_STREAM_COUNT; s++) {
            /* each stream twisted four words at a time, then eight where the CPU has AVX2 */
            sim_mt g;
            sim_mt_stream(&g, seeds[k], s % SIM_STREAM_COUNT);
            int wide = s >= SIM_STREAM_COUNT;
            if (wide && !g.wide)
                continue;
            g.wide = wide;
            gsl_rng *r = sim_rng_new_stream(seeds[k], s % SIM_STREAM_COUNT);
            for (int i = 0; i < MANY; i++) {
                if (i % 2) {
                    double want = gsl_rng_uniform(r), got = sim_mt_uniform(&g);
                    assert_memory_equal(&want, &got, sizeof want); /* to the bit */
                } else {
                    assert_int_equal(gsl_rng_get(r), sim_mt_u32(&g));
                }
            }
            gsl_rng_free(r);
        }
        sim_ctx *a = sim_new(seeds[k]), *b = sim_new(seeds[k]);
        sim_mt *m = sim_mt_of(a, SIM_STREAM_ACCEPT);
        assert_ptr_equal(m, sim_mt_of(a, SIM_STREAM_ACCEPT)); /* one generator per stream */
        for (int i = 0; i < MANY; i++)
            assert_int_equal(gsl_rng_get(sim_rng(b, SIM_STREAM_ACCEPT)), sim_mt_u32(m));
        sim_free(a);
        sim_free(b);
    }
}

/* sim_mt_below gives the compares of as many sim_mt_u32 calls and moves the stream as they do,
 * across the twist, for thresholds at the ends of the range and between; four words at a time,
 * and eight where the CPU has AVX2 (the draws it is checked against four at a time). */
static void test_mt_below_matches_draws(void **state)
{
    (void)state;
    uint64_t thr[] = {0,
                      1,
                      UINT64_C(0x80000000),
                      UINT64_C(0x80000001),
                      UINT64_C(2147483648) + 7,
                      UINT32_MAX,
                      UINT64_C(4294967296),
                      UINT64_C(1234567891)};
    for (size_t t = 0; t < sizeof thr / sizeof thr[0]; t++) {
        for (int32_t v = 1; v <= 2 * 13; v++) {
            sim_mt a, b;
            sim_mt_stream(&a, 7, SIM_STREAM_ACCEPT);
            sim_mt_stream(&b, 7, SIM_STREAM_ACCEPT);
            if (v > 13 && !a.wide) /* eight at a time: only with AVX2 */
                break;
            a.wide = v > 13;
            b.wide = 0;
            int32_t n = v > 13 ? v - 13 : v;
            int32_t out[13];
            for (int step = 0; step < 3 * SIM_MT_N / n + 5; step++) {
                sim_mt_below(&a, thr[t], n, out);
                for (int32_t j = 0; j < n; j++)
                    assert_int_equal(out[j], sim_mt_u32(&b) < thr[t]);
                assert_int_equal(a.i, b.i);
            }
        }
    }
}

LLMSIM_TEST_MAIN(NULL, NULL, test_splitmix_reference, test_same_seed_same_draws,
                 test_streams_and_seeds_differ, test_common_random_numbers,
                 test_stream_seed_values_differ, test_inline_mt_matches_gsl,
                 test_mt_below_matches_draws)
