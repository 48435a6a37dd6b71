/* cuda_elem.cu: the elementwise and per-row CUDA kernels (RMSNorm, SiLU-and-multiply, residual
 * add, rotary embedding) and the fp32 <-> fp16/bf16 conversions the host wrappers use. Inputs
 * are fp16 or bf16; every sum and product is done in fp32. All memory belongs to the caller. */
#include "cuda_int.cuh"

template <typename T> __global__ void to_dtype_kernel(const float *src, T *dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = kern_cu_fromf<T>(src[i]);
}

template <typename T> __global__ void to_f32_kernel(const T *src, float *dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = kern_cu_tof(src[i]);
}

/* A fixed pseudo-random pattern in [-0.5, 0.5): a hash of the index, so any size fills alike. */
template <typename T> __global__ void fill_kernel(T *dst, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 15;
        x *= 2246822519u;
        x ^= x >> 13;
        dst[i] = kern_cu_fromf<T>((float)(x >> 8) / 16777216.0f - 0.5f);
    }
}

/* One block of 256 threads per token: a block-wide sum of squares, then the scaled row. */
template <typename T>
__global__ void rmsnorm_kernel(const T *x, const T *w, T *y, int hidden, float eps)
{
    __shared__ float warp_sums[8];
    const T *xr = x + (size_t)blockIdx.x * hidden;
    T *yr = y + (size_t)blockIdx.x * hidden;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
        float v = kern_cu_tof(xr[i]);
        ss += v * v;
    }
    for (int off = 16; off > 0; off >>= 1)
        ss += __shfl_xor_sync(0xffffffffu, ss, off);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = ss;
    __syncthreads();
    float total = 0.0f;
    for (int i = 0; i < (int)(blockDim.x / 32); i++)
        total += warp_sums[i];
    float inv = rsqrtf(total / (float)hidden + eps);
    for (int i = threadIdx.x; i < hidden; i += blockDim.x)
        yr[i] = kern_cu_fromf<T>(kern_cu_tof(xr[i]) * inv * kern_cu_tof(w[i]));
}

template <typename T> __global__ void silu_mul_kernel(const T *x, T *y, int tokens, int inter)
{
    size_t n = (size_t)tokens * inter;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t t = i / inter, j = i % inter;
        float g = kern_cu_tof(x[t * 2 * inter + j]), u = kern_cu_tof(x[t * 2 * inter + inter + j]);
        y[i] = kern_cu_fromf<T>(g / (1.0f + __expf(-g)) * u);
    }
}

template <typename T> __global__ void add_kernel(const T *a, const T *b, T *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = kern_cu_fromf<T>(kern_cu_tof(a[i]) + kern_cu_tof(b[i]));
}

/* One thread per rotated pair (token, head, i < d/2), rotate-half form as in kern_ref_rope. */
template <typename T>
__global__ void rope_kernel(T *x, const int32_t *pos, int tokens, int heads, int d, float theta)
{
    int half = d / 2;
    size_t n = (size_t)tokens * heads * half;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < n;
         idx += (size_t)gridDim.x * blockDim.x) {
        int i = (int)(idx % half);
        size_t th = idx / half; /* token * heads + head */
        int t = (int)(th / heads);
        float inv_freq = powf(theta, -2.0f * (float)i / (float)d), s, c;
        sincosf((float)pos[t] * inv_freq, &s, &c);
        T *v = x + th * d;
        float a = kern_cu_tof(v[i]), b = kern_cu_tof(v[i + half]);
        v[i] = kern_cu_fromf<T>(a * c - b * s);
        v[i + half] = kern_cu_fromf<T>(b * c + a * s);
    }
}

/* Calls F with the element type of dt: __half or __nv_bfloat16. */
#define BY_DTYPE(dt, F)                                                                            \
    do {                                                                                           \
        if (kern_cu_dtype(dt) == KERN_BF16) {                                                      \
            typedef __nv_bfloat16 T;                                                               \
            F;                                                                                     \
        } else {                                                                                   \
            typedef __half T;                                                                      \
            F;                                                                                     \
        }                                                                                          \
    } while (0)

cudaError_t kern_cu_to_dtype(kern_dtype dt, const float *src, void *dst, size_t n, cudaStream_t st)
{
    BY_DTYPE(dt, (to_dtype_kernel<T><<<kern_cu_blocks(n), 256, 0, st>>>(src, (T *)dst, n)));
    return cudaGetLastError();
}

cudaError_t kern_cu_to_f32(kern_dtype dt, const void *src, float *dst, size_t n, cudaStream_t st)
{
    BY_DTYPE(dt, (to_f32_kernel<T><<<kern_cu_blocks(n), 256, 0, st>>>((const T *)src, dst, n)));
    return cudaGetLastError();
}

cudaError_t kern_cu_fill(kern_dtype dt, void *dst, size_t n, unsigned seed, cudaStream_t st)
{
    BY_DTYPE(dt, (fill_kernel<T><<<kern_cu_blocks(n), 256, 0, st>>>((T *)dst, n, seed)));
    return cudaGetLastError();
}

cudaError_t kern_cu_rmsnorm(kern_dtype dt, const void *x, const void *w, void *y, int tokens,
                            int hidden, float eps, cudaStream_t st)
{
    BY_DTYPE(dt, (rmsnorm_kernel<T>
                  <<<tokens, 256, 0, st>>>((const T *)x, (const T *)w, (T *)y, hidden, eps)));
    return cudaGetLastError();
}

cudaError_t kern_cu_silu_mul(kern_dtype dt, const void *x, void *y, int tokens, int inter,
                             cudaStream_t st)
{
    size_t n = (size_t)tokens * inter;
    BY_DTYPE(dt, (silu_mul_kernel<T>
                  <<<kern_cu_blocks(n), 256, 0, st>>>((const T *)x, (T *)y, tokens, inter)));
    return cudaGetLastError();
}

cudaError_t kern_cu_add(kern_dtype dt, const void *a, const void *b, void *y, size_t n,
                        cudaStream_t st)
{
    BY_DTYPE(dt, (add_kernel<T>
                  <<<kern_cu_blocks(n), 256, 0, st>>>((const T *)a, (const T *)b, (T *)y, n)));
    return cudaGetLastError();
}

cudaError_t kern_cu_rope(kern_dtype dt, void *x, const int32_t *pos, int tokens, int heads, int d,
                         float theta, cudaStream_t st)
{
    size_t n = (size_t)tokens * heads * (d / 2);
    BY_DTYPE(dt, (rope_kernel<T>
                  <<<kern_cu_blocks(n), 256, 0, st>>>((T *)x, pos, tokens, heads, d, theta)));
    return cudaGetLastError();
}
