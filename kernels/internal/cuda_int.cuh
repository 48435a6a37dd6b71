/* cuda_int.cuh: what the .cu files of kernels/ share: the kern_cuda context, fp16/bf16
 * conversions, and the launchers that take device pointers (void * plus a kern_dtype) so the
 * host wrappers and the benchmark driver call the same code. Never included outside kernels/.
 * Launchers return the launch's cudaError_t; they do not synchronise. */
#ifndef CUDA_INT_CUH
#define CUDA_INT_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels_int.h"

enum { KERN_CU_SLOTS = 8 };

struct kern_cuda {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    cudaEvent_t start, stop;
    void *slot[KERN_CU_SLOTS];      /* benchmark buffers, grown on demand */
    size_t slot_cap[KERN_CU_SLOTS]; /* bytes */
};

/* KERN_F32 is served as fp16: the device kernels take 16-bit inputs only. */
static inline kern_dtype kern_cu_dtype(kern_dtype dt)
{
    return dt == KERN_BF16 ? KERN_BF16 : KERN_F16;
}

__device__ __forceinline__ float kern_cu_tof(__half x)
{
    return __half2float(x);
}
__device__ __forceinline__ float kern_cu_tof(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}
template <typename T> __device__ __forceinline__ T kern_cu_fromf(float x);
template <> __device__ __forceinline__ __half kern_cu_fromf<__half>(float x)
{
    return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 kern_cu_fromf<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/* Grid size for a grid-stride loop over n elements with 256 threads a block. */
static inline unsigned kern_cu_blocks(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

/* cuda_elem.cu */
cudaError_t kern_cu_to_dtype(kern_dtype dt, const float *src, void *dst, size_t n, cudaStream_t st);
cudaError_t kern_cu_to_f32(kern_dtype dt, const void *src, float *dst, size_t n, cudaStream_t st);
cudaError_t kern_cu_fill(kern_dtype dt, void *dst, size_t n, unsigned seed, cudaStream_t st);
cudaError_t kern_cu_rmsnorm(kern_dtype dt, const void *x, const void *w, void *y, int tokens,
                            int hidden, float eps, cudaStream_t st);
cudaError_t kern_cu_silu_mul(kern_dtype dt, const void *x, void *y, int tokens, int inter,
                             cudaStream_t st);
cudaError_t kern_cu_add(kern_dtype dt, const void *a, const void *b, void *y, size_t n,
                        cudaStream_t st);
cudaError_t kern_cu_rope(kern_dtype dt, void *x, const int32_t *pos, int tokens, int heads, int d,
                         float theta, cudaStream_t st);

/* cuda_attn.cu */
cudaError_t kern_cu_attn_prefill(kern_dtype dt, const void *q, const void *k, const void *v,
                                 void *o, int chunk, int context, int nh, int nkv, int d,
                                 float scale, cudaStream_t st);
cudaError_t kern_cu_attn_decode(kern_dtype dt, const void *q, const void *k_cache,
                                const void *v_cache, const int32_t *block_tables, int max_blocks,
                                const int32_t *context_lens, void *o, int batch, int nh, int nkv,
                                int d, int block_size, float scale, cudaStream_t st);

#endif /* CUDA_INT_CUH */
