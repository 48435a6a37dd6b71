/* cuda_absent.c: the CUDA entry points of kernels.h for a build without nvcc. Every call fails
 * with "built without CUDA" except kern_cuda_available (0) and kern_cuda_free (no-op), so the
 * rest of llmsim links and runs the same either way. */
#include "kernels_int.h"

#define NO_CUDA(err, errlen) kern_seterr(err, errlen, "built without CUDA")

int kern_cuda_available(void)
{
    return 0;
}

int kern_cuda_new(kern_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    return NO_CUDA(err, errlen);
}

void kern_cuda_free(kern_cuda *c) {}

int kern_cuda_describe(char *buf, size_t len, char *err, size_t errlen)
{
    if (buf && len > 0)
        buf[0] = '\0';
    return NO_CUDA(err, errlen);
}

int kern_cuda_linear(kern_cuda *c, kern_dtype dt, const float *x, const float *w, float *y, int m,
                     int k, int n, char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_rmsnorm(kern_cuda *c, kern_dtype dt, const float *x, const float *w, float *y,
                      int tokens, int hidden, float eps, char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_silu_mul(kern_cuda *c, kern_dtype dt, const float *x, float *y, int tokens, int inter,
                       char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_add(kern_cuda *c, kern_dtype dt, const float *a, const float *b, float *y, size_t n,
                  char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_rope(kern_cuda *c, kern_dtype dt, float *x, const int32_t *pos, int tokens, int heads,
                   int d, float theta, char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_attn_prefill(kern_cuda *c, kern_dtype dt, const float *q, const float *k,
                           const float *v, float *o, int chunk, int context, int nh, int nkv, int d,
                           float scale, char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_attn_decode(kern_cuda *c, kern_dtype dt, const float *q, const float *k_cache,
                          const float *v_cache, int num_blocks, const int32_t *block_tables,
                          int max_blocks, const int32_t *context_lens, float *o, int batch, int nh,
                          int nkv, int d, int block_size, float scale, char *err, size_t errlen)
{
    return NO_CUDA(err, errlen);
}

int kern_cuda_bench_samples(kern_cuda *c, const kern_shape *s, const kern_bench_cfg *cfg,
                            int64_t *samples, int cap, int *n, char *err, size_t errlen)
{
    *n = 0;
    return NO_CUDA(err, errlen);
}
