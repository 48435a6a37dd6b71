/*
 * rng.c: seed derivation for the per-purpose random streams.
 */
#include "rng.h"

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

gsl_rng *sim_rng_new_stream(uint64_t seed, unsigned stream)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        sim_assert_fail(NULL, __FILE__, __LINE__, "gsl_rng_alloc");
    /* MT19937 takes 32 bits of seed; fold the 64-bit value so both halves count. A seed of 0
     * is replaced by GSL with its default, so avoid it. */
    uint64_t s = sim_stream_seed(seed, stream);
    unsigned long s32 = (unsigned long)((s ^ (s >> 32)) & 0xFFFFFFFFu);
    gsl_rng_set(r, s32 ? s32 : 0x1234567u);
    return r;
}
