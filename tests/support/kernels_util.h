/*
 * kernels_util.h: what the kernel tests share: a seeded pseudo-random fill (the same sequence
 * on every machine) for inputs, and the buffers of an attention case.
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

/* The buffers of one attention case: nq query elements, nkv elements each of K and V (all three
 * random, drawn in that order), ntables block-table entries and nlens sequence lengths (zeroed;
 * none for a prefill), and the expected and computed outputs (nq elements each). */
typedef struct kattn {
    float *q, *k, *v, *want, *got;
    int32_t *tables, *lens;
} kattn;

/* Allocates and fills the buffers of a case (the caller frees them with kattn_free). */
static inline void kattn_alloc(kattn *a, size_t nq, size_t nkv, size_t ntables, size_t nlens)
{
    a->q = rand_vec(nq);
    a->k = rand_vec(nkv);
    a->v = rand_vec(nkv);
    a->want = malloc(nq * sizeof(float));
    a->got = malloc(nq * sizeof(float));
    a->tables = calloc(ntables + 1, sizeof(int32_t));
    a->lens = calloc(nlens + 1, sizeof(int32_t));
    assert_true(a->want && a->got && a->tables && a->lens);
}

/* kattn_alloc for a prefill of chunk queries after context tokens, nh query and nkv KV heads of
 * d: the number of output elements. */
static inline size_t kattn_prefill(kattn *a, int chunk, int context, int nh, int nkv, int d)
{
    size_t nq = (size_t)chunk * nh * d;
    kattn_alloc(a, nq, (size_t)(chunk + context) * nkv * d, 0, 0);
    return nq;
}

static inline void kattn_free(kattn *a)
{
    free(a->lens);
    free(a->tables);
    free(a->got);
    free(a->want);
    free(a->v);
    free(a->k);
    free(a->q);
}

#endif
