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
    void *blas_ws;                  /* cuBLAS's workspace under graph capture (NULL: its own) */
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

/* 8 consecutive 16-bit elements moved as one 128-bit access, unpacked to or packed from fp32. */
template <typename T> __device__ __forceinline__ void kern_cu_unpack8(const uint4 &u, float f[8])
{
    const T *e = reinterpret_cast<const T *>(&u);
#pragma unroll
    for (int i = 0; i < 8; i++)
        f[i] = kern_cu_tof(e[i]);
}
template <typename T> __device__ __forceinline__ uint4 kern_cu_pack8(const float f[8])
{
    uint4 u;
    T *e = reinterpret_cast<T *>(&u);
#pragma unroll
    for (int i = 0; i < 8; i++)
        e[i] = kern_cu_fromf<T>(f[i]);
    return u;
}

/* 1 when every pointer given is 16-byte aligned, so 128-bit accesses from it are legal. */
static inline bool kern_cu_aligned16(const void *a, const void *b = NULL, const void *c = NULL)
{
    return (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) & 15u) == 0;
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
/* Decode splits each sequence's context across CTAs when batch x kv heads alone would leave the
 * GPU idle; the partial results go to a caller-owned fp32 workspace of
 * kern_cu_attn_decode_work() bytes (0: no split wanted, work may be NULL). A smaller workspace
 * than asked for is not an error: the launch then runs unsplit. */
size_t kern_cu_attn_decode_work(int batch, int nh, int nkv, int d, int max_blocks, int block_size);
cudaError_t kern_cu_attn_decode(kern_dtype dt, const void *q, const void *k_cache,
                                const void *v_cache, const int32_t *block_tables, int max_blocks,
                                const int32_t *context_lens, void *o, int batch, int nh, int nkv,
                                int d, int block_size, float scale, void *work, size_t work_bytes,
                                cudaStream_t st);

#endif /* CUDA_INT_CUH */
