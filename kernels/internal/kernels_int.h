/* kernels_int.h: declarations shared by the files of kernels/ and by nothing outside it.
 * Allocation aborts here and only here; error messages go through kern_seterr. */
#ifndef KERNELS_INT_H
#define KERNELS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* malloc/calloc that abort with a message on out of memory; never return NULL. */
void *kern_xmalloc(size_t n);
void *kern_xcalloc(size_t count, size_t size);

/* printf into err (when err != NULL and errlen > 0); returns -1 so callers can
 * `return kern_seterr(...)`. */
int kern_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* For a linear-layer operator, its GEMM y[m][n] = x[m][k] w[n][k]^T: sets m, k, n and returns 1;
 * returns 0 for any other operator. */
int kern_shape_gemm(const kern_shape *s, int *m, int *k, int *n);

/* The shape's block size with 0 replaced by the default 16. */
int kern_shape_block_size(const kern_shape *s);

/* Times s->op on the device: cfg->warmup untimed calls, then timed calls (CUDA events) under
 * the rules of kern_bench_cfg, at most `cap` samples into samples[], their count into *n.
 * Device buffers live in c and are reused. Returns 0, or -1 with err set. */
int kern_cuda_bench_samples(kern_cuda *c, const kern_shape *s, const kern_bench_cfg *cfg,
                            int64_t *samples, int cap, int *n, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_INT_H */
