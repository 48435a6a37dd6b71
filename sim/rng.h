/*
 * rng.h: independent random streams, one per purpose, all derived from the run's seed.
 *
 * Each stream is a GSL generator (MT19937) seeded with splitmix64(seed, stream), so the draws of
 * one purpose (say, arrivals) do not depend on how many draws another purpose (say, a
 * scheduler's tie-breaks) made: changing the scheduler never changes the workload it sees.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "sim.h"

typedef enum sim_stream {
    SIM_STREAM_ARRIVALS = 0, /* inter-arrival times */
    SIM_STREAM_PROMPT,       /* prompt lengths */
    SIM_STREAM_OUTPUT,       /* output lengths */
    SIM_STREAM_ROUTER,       /* replica choice */
    SIM_STREAM_SCHED,        /* scheduler-internal randomness */
    SIM_STREAM_SERVICE,      /* service times of generic queueing models */
    SIM_STREAM_TRACE,        /* trace sampling (empirical distributions) */
    SIM_STREAM_CLIENT,       /* closed-loop think times */
    SIM_STREAM_ACCEPT,       /* speculative decoding: draft tokens accepted per step */
    SIM_STREAM_SPEC_CLASS,   /* speculative decoding: a request's acceptance class */
    SIM_STREAM_WORK_CLASS,   /* workload classes: a request's class (priority, SLO) */
    SIM_STREAM_COUNT
} sim_stream;

/* The generator of one stream of ctx; owned by ctx. */
gsl_rng *sim_rng(sim_ctx *ctx, sim_stream s);

/* The 64-bit seed a stream gets from a run seed (exposed for tests and for workload builders
 * that run outside a context). */
uint64_t sim_stream_seed(uint64_t seed, unsigned stream);

/* A new generator seeded for (seed, stream); the caller frees it with gsl_rng_free. */
gsl_rng *sim_rng_new_stream(uint64_t seed, unsigned stream);

/* SplitMix64 step: a well-mixed 64-bit value from x. */
uint64_t sim_splitmix64(uint64_t x);

/* A stream's generator drawn inline, for a loop that draws once per step (speculative
 * decoding's acceptance): MT19937 exactly as GSL's gsl_rng_mt19937 runs it, so that a stream
 * gives the numbers its GSL generator (sim_rng) would, without a call through the generator's
 * type per draw. A stream is drawn through one of the two, never both. */
enum { SIM_MT_N = 624 };
typedef struct sim_mt {
    uint32_t mt[SIM_MT_N];
    int32_t i;    /* the next word; SIM_MT_N: the words are used up */
    int32_t wide; /* the CPU has AVX2 (sim_mt_stream asks): twist and compare eight words at once */
} sim_mt;

#if defined(__GNUC__) && defined(__SSE2__) && defined(__x86_64__)
#define SIM_MT_AVX2 1
/* sim_mt_below's compares eight words at a time while n and the words left allow, with AVX2
 * (only where g->wide): returns how many it made (a multiple of eight), the stream moved by as
 * many. */
int32_t sim_mt_below8(sim_mt *g, uint32_t thr, int32_t n, int32_t *out);
#endif

/* The generator of one stream of ctx, drawn inline; owned by ctx. */
sim_mt *sim_mt_of(sim_ctx *ctx, sim_stream s);
/* Seeds g as sim_rng_new_stream(seed, stream) seeds its GSL generator. */
void sim_mt_stream(sim_mt *g, uint64_t seed, unsigned stream);
/* Generates the next SIM_MT_N words (MT19937's twist); sim_mt_u32 calls it. */
void sim_mt_twist(sim_mt *g);

/* The next 32-bit draw: gsl_rng_get's of the same generator. */
static inline uint32_t sim_mt_u32(sim_mt *g)
{
    if (g->i >= SIM_MT_N)
        sim_mt_twist(g);
    uint32_t k = g->mt[g->i++];
    k ^= k >> 11;
    k ^= (k << 7) & UINT32_C(0x9d2c5680);
    k ^= (k << 15) & UINT32_C(0xefc60000);
    return k ^ (k >> 18);
}

/* The next n draws compared with thr: out[j] = (sim_mt_u32(g) < thr) for j = 0 .. n - 1, the
 * stream moved as those n calls move it. With SSE2, four words are tempered and compared at
 * once (an unsigned compare: both sides' sign bits flipped, then a signed one); eight with AVX2
 * (sim_mt_below8). */
static inline void sim_mt_below(sim_mt *g, uint64_t thr, int32_t n, int32_t *out)
{
    int32_t j = 0;
#ifdef __SSE2__
    if (thr <= UINT32_MAX) {
#ifdef SIM_MT_AVX2
        if (g->wide && n >= 8)
            j = sim_mt_below8(g, (uint32_t)thr, n, out);
#endif
        const __m128i m1 = _mm_set1_epi32((int32_t)UINT32_C(0x9d2c5680));
        const __m128i m2 = _mm_set1_epi32((int32_t)UINT32_C(0xefc60000));
        const __m128i sign = _mm_set1_epi32(INT32_MIN);
        const __m128i t = _mm_set1_epi32((int32_t)((uint32_t)thr ^ UINT32_C(0x80000000)));
        for (; j + 4 <= n && g->i + 4 <= SIM_MT_N; j += 4, g->i += 4) {
            __m128i k = _mm_loadu_si128((const __m128i *)(const void *)(g->mt + g->i));
            k = _mm_xor_si128(k, _mm_srli_epi32(k, 11));
            k = _mm_xor_si128(k, _mm_and_si128(_mm_slli_epi32(k, 7), m1));
            k = _mm_xor_si128(k, _mm_and_si128(_mm_slli_epi32(k, 15), m2));
            k = _mm_xor_si128(k, _mm_srli_epi32(k, 18));
            __m128i lt = _mm_cmplt_epi32(_mm_xor_si128(k, sign), t); /* -1 where below */
            _mm_storeu_si128((__m128i *)(void *)(out + j), _mm_sub_epi32(_mm_setzero_si128(), lt));
        }
    }
#endif
    for (; j < n; j++)
        out[j] = sim_mt_u32(g) < thr;
}

/* A uniform draw in [0, 1): gsl_rng_uniform's of the same generator (the 32 bits over 2^32). */
static inline double sim_mt_uniform(sim_mt *g)
{
    return sim_mt_u32(g) / 4294967296.0;
}

#endif
