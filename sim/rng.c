/*
 * rng.c: seed derivation for the per-purpose random streams.
 */
#include "rng.h"
#ifdef SIM_MT_AVX2
#include <immintrin.h>
#endif

uint64_t sim_splitmix64(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

uint64_t sim_stream_seed(uint64_t seed, unsigned stream)
{
    return sim_splitmix64(sim_splitmix64(seed) ^ sim_splitmix64(UINT64_C(0x5EED) + stream));
}

/* The 32-bit seed of a stream's MT19937. */
static uint32_t seed32(uint64_t seed, unsigned stream)
{
    /* MT19937 takes 32 bits of seed; fold the 64-bit value so both halves count. A seed of 0
     * is replaced by GSL with its default, so avoid it. */
    uint64_t s = sim_stream_seed(seed, stream);
    uint32_t s32 = (uint32_t)((s ^ (s >> 32)) & 0xFFFFFFFFu);
    return s32 ? s32 : 0x1234567u;
}

gsl_rng *sim_rng_new_stream(uint64_t seed, unsigned stream)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        sim_assert_fail(NULL, __FILE__, __LINE__, "gsl_rng_alloc");
    gsl_rng_set(r, seed32(seed, stream));
    return r;
}

/* MODEL: MT19937 (Matsumoto and Nishimura, 1998) with the 2002 initialization, as GSL's mt.c
 * (mt_set, mt_get) implements it */
void sim_mt_stream(sim_mt *g, uint64_t seed, unsigned stream)
{
    g->mt[0] = seed32(seed, stream);
    for (uint32_t i = 1; i < SIM_MT_N; i++)
        g->mt[i] = UINT32_C(1812433253) * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + i;
    g->i = SIM_MT_N;
#ifdef SIM_MT_AVX2
    g->wide = __builtin_cpu_supports("avx2") != 0;
#else
    g->wide = 0;
#endif
}

enum { MT_M = 397 };
#define MT_MIX(a, b, m)                                                                            \
    ((m) ^ ((((a)&UINT32_C(0x80000000)) | ((b)&UINT32_C(0x7fffffff))) >> 1) ^                      \
     (((b)&1u) ? UINT32_C(0x9908b0df) : 0))

#ifdef __SSE2__
/* MT_MIX of the four words from mt + k, their next ones and m (unaligned). */
static inline __m128i mt_mix4(const uint32_t *a, const uint32_t *m)
{
    const __m128i upper = _mm_set1_epi32(INT32_MIN), one = _mm_set1_epi32(1);
    const __m128i lower = _mm_set1_epi32(INT32_MAX);
    const __m128i mat = _mm_set1_epi32((int32_t)UINT32_C(0x9908b0df));
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)a);
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(a + 1));
    __m128i v = _mm_or_si128(_mm_and_si128(x, upper), _mm_and_si128(y, lower));
    __m128i odd = _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(y, one)); /* -1 where odd */
    __m128i w = _mm_loadu_si128((const __m128i *)(const void *)m);
    return _mm_xor_si128(_mm_xor_si128(w, _mm_srli_epi32(v, 1)), _mm_and_si128(odd, mat));
}
#endif

#ifdef SIM_MT_AVX2
/* mt_mix4's eight words. */
__attribute__((target("avx2"))) static inline __m256i mt_mix8(const uint32_t *a, const uint32_t *m)
{
    const __m256i upper = _mm256_set1_epi32(INT32_MIN), one = _mm256_set1_epi32(1);
    const __m256i lower = _mm256_set1_epi32(INT32_MAX);
    const __m256i mat = _mm256_set1_epi32((int32_t)UINT32_C(0x9908b0df));
    __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)a);
    __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(a + 1));
    __m256i v = _mm256_or_si256(_mm256_and_si256(x, upper), _mm256_and_si256(y, lower));
    __m256i odd = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(y, one));
    __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)m);
    return _mm256_xor_si256(_mm256_xor_si256(w, _mm256_srli_epi32(v, 1)),
                            _mm256_and_si256(odd, mat));
}

/* The twist's words from k up to end, eight at a time while eight fit, each mixed with the word
 * off from it (as mt_mix4 mixes them): returns the first word not done. */
__attribute__((target("avx2"))) static int32_t twist8(uint32_t *mt, int32_t k, int32_t end,
                                                      int32_t off)
{
    for (; k + 8 <= end; k += 8)
        _mm256_storeu_si256((__m256i *)(void *)(mt + k), mt_mix8(mt + k, mt + k + off));
    return k;
}

__attribute__((target("avx2"))) int32_t sim_mt_below8(sim_mt *g, uint32_t thr, int32_t n,
                                                      int32_t *out)
{
    const __m256i m1 = _mm256_set1_epi32((int32_t)UINT32_C(0x9d2c5680));
    const __m256i m2 = _mm256_set1_epi32((int32_t)UINT32_C(0xefc60000));
    const __m256i sign = _mm256_set1_epi32(INT32_MIN);
    const __m256i t = _mm256_set1_epi32((int32_t)(thr ^ UINT32_C(0x80000000)));
    int32_t j = 0, i = g->i;
    for (; j + 8 <= n && i + 8 <= SIM_MT_N; j += 8, i += 8) {
        __m256i k = _mm256_loadu_si256((const __m256i *)(const void *)(g->mt + i));
        k = _mm256_xor_si256(k, _mm256_srli_epi32(k, 11));
        k = _mm256_xor_si256(k, _mm256_and_si256(_mm256_slli_epi32(k, 7), m1));
        k = _mm256_xor_si256(k, _mm256_and_si256(_mm256_slli_epi32(k, 15), m2));
        k = _mm256_xor_si256(k, _mm256_srli_epi32(k, 18));
        __m256i lt = _mm256_cmpgt_epi32(t, _mm256_xor_si256(k, sign)); /* -1 where below */
        _mm256_storeu_si256((__m256i *)(void *)(out + j),
                            _mm256_sub_epi32(_mm256_setzero_si256(), lt));
    }
    g->i = i;
    return j;
}
#endif

/* The twist's words from k up to end, each mixed with the word off from it, four at a time with
 * SSE2 (eight with AVX2) while they fit, then one by one: a word's inputs are its next word (not
 * yet twisted: it is read before the store) and one M words ahead (not yet twisted) or N - M
 * behind (twisted already, as the scalar loop reads it). */
static int32_t twist_range(const sim_mt *g, uint32_t *mt, int32_t k, int32_t end, int32_t off)
{
#ifdef SIM_MT_AVX2
    if (g->wide)
        k = twist8(mt, k, end, off);
#else
    (void)g;
#endif
#ifdef __SSE2__
    for (; k + 4 <= end; k += 4)
        _mm_storeu_si128((__m128i *)(void *)(mt + k), mt_mix4(mt + k, mt + k + off));
#endif
    for (; k < end; k++)
        mt[k] = MT_MIX(mt[k], mt[k + 1], mt[k + off]);
    return k;
}

void sim_mt_twist(sim_mt *g)
{
    uint32_t *mt = g->mt;
    int32_t k = twist_range(g, mt, 0, SIM_MT_N - MT_M, MT_M);
    twist_range(g, mt, k, SIM_MT_N - 1, MT_M - SIM_MT_N);
    mt[SIM_MT_N - 1] = MT_MIX(mt[SIM_MT_N - 1], mt[0], mt[MT_M - 1]);
    g->i = 0;
}
