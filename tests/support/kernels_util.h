/*
 * kernels_util.h: what the kernel tests share: a seeded pseudo-random fill (the same sequence
 * on every machine) for inputs.
 */
#ifndef LLMSIM_TESTS_KERNELS_UTIL_H
#define LLMSIM_TESTS_KERNELS_UTIL_H

#include <stdint.h>
#include <stdlib.h>

static uint32_t rng_state = 12345u;

static inline float frand(void) /* uniform in [-1, 1) */
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

static inline float *rand_vec(size_t n)
{
    float *v = malloc(n * sizeof(float));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = frand();
    return v;
}

#endif
