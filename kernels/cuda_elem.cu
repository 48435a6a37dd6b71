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

/* One block of 256 threads per token: a block-wide sum of squares, then the scaled row. VEC: the
 * row moves as 128-bit chunks of 8 elements (hidden % 8 == 0, 16-byte aligned pointers). */
template <typename T, bool VEC>
__global__ void rmsnorm_kernel(const T *x, const T *w, T *y, int hidden, float eps)
{
    __shared__ float warp_sums[8];
    const T *xr = x + (size_t)blockIdx.x * hidden;
    T *yr = y + (size_t)blockIdx.x * hidden;
    float ss = 0.0f;
    if (VEC) {
        for (int i = threadIdx.x; i < hidden / 8; i += blockDim.x) {
            float f[8];
            kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(xr)[i], f);
#pragma unroll
            for (int e = 0; e < 8; e++)
                ss += f[e] * f[e];
        }
    } else {
        for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
            float v = kern_cu_tof(xr[i]);
            ss += v * v;
        }
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
    if (VEC) {
        for (int i = threadIdx.x; i < hidden / 8; i += blockDim.x) {
            float f[8], g[8];
            kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(xr)[i], f);
            kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(w)[i], g);
#pragma unroll
            for (int e = 0; e < 8; e++)
                f[e] = f[e] * inv * g[e];
            reinterpret_cast<uint4 *>(yr)[i] = kern_cu_pack8<T>(f);
        }
    } else {
        for (int i = threadIdx.x; i < hidden; i += blockDim.x)
            yr[i] = kern_cu_fromf<T>(kern_cu_tof(xr[i]) * inv * kern_cu_tof(w[i]));
    }
}

__device__ __forceinline__ float silu_times(float g, float u)
{
    return g / (1.0f + __expf(-g)) * u;
}

/* Grid: x = token, y = column blocks (a grid-stride loop over columns past 65535 blocks). A thread
 * handles 8 columns with 128-bit accesses (VEC: inter % 8 == 0, aligned) or 1. */
template <typename T, bool VEC> __global__ void silu_mul_kernel(const T *x, T *y, int inter)
{
    const T *gate = x + (size_t)blockIdx.x * 2 * inter, *up = gate + inter;
    T *yr = y + (size_t)blockIdx.x * inter;
    const int n = VEC ? inter / 8 : inter;
    for (int i = blockIdx.y * blockDim.x + threadIdx.x; i < n; i += gridDim.y * blockDim.x) {
        if (VEC) {
            float g[8], u[8];
            kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(gate)[i], g);
            kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(up)[i], u);
#pragma unroll
            for (int e = 0; e < 8; e++)
                g[e] = silu_times(g[e], u[e]);
            reinterpret_cast<uint4 *>(yr)[i] = kern_cu_pack8<T>(g);
        } else {
            yr[i] = kern_cu_fromf<T>(silu_times(kern_cu_tof(gate[i]), kern_cu_tof(up[i])));
        }
    }
}

/* 128-bit chunks over the first n / 8 * 8 elements (all pointers aligned), then the tail. */
template <typename T> __global__ void add_vec_kernel(const T *a, const T *b, T *y, size_t n)
{
    const size_t n8 = n / 8, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n8; i += stride) {
        float f[8], g[8];
        kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(a)[i], f);
        kern_cu_unpack8<T>(reinterpret_cast<const uint4 *>(b)[i], g);
#pragma unroll
        for (int e = 0; e < 8; e++)
            f[e] += g[e];
        reinterpret_cast<uint4 *>(y)[i] = kern_cu_pack8<T>(f);
    }
    for (size_t i = n8 * 8 + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = kern_cu_fromf<T>(kern_cu_tof(a[i]) + kern_cu_tof(b[i]));
}

template <typename T> __global__ void add_kernel(const T *a, const T *b, T *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = kern_cu_fromf<T>(kern_cu_tof(a[i]) + kern_cu_tof(b[i]));
}

/* One block per token, rotate-half form as in kern_ref_rope. The block first puts cos and sin of
 * pos * theta^(-2i/d) for every i < d/2 in shared memory (one exp2f and one sincosf per (token,
 * i)), then every head of the token rotates with them. VEC: 8 pairs a thread with 128-bit
 * accesses (d % 16 == 0, x aligned). log2_theta = log2(theta). */
template <typename T, bool VEC>
__global__ void rope_kernel(T *x, const int32_t *pos, int heads, int d, float log2_theta)
{
    extern __shared__ float rope_cs[]; /* cos [d/2], then sin [d/2] */
    const int half = d / 2, t = blockIdx.x;
    float *cs = rope_cs, *sn = rope_cs + half;
    const float p = (float)pos[t];
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        const float inv_freq = exp2f(-(float)(2 * i) / (float)d * log2_theta);
        sincosf(p * inv_freq, &sn[i], &cs[i]);
    }
    __syncthreads();
    T *xt = x + (size_t)t * heads * d;
    const int per_head = VEC ? half / 8 : half;
    for (int idx = threadIdx.x; idx < heads * per_head; idx += blockDim.x) {
        const int h = idx / per_head, i = idx % per_head;
        T *v = xt + (size_t)h * d;
        if (VEC) {
            uint4 *lo = reinterpret_cast<uint4 *>(v) + i,
                  *hi = reinterpret_cast<uint4 *>(v + half) + i;
            float a[8], b[8], ra[8], rb[8];
            kern_cu_unpack8<T>(*lo, a);
            kern_cu_unpack8<T>(*hi, b);
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const float c = cs[i * 8 + e], s = sn[i * 8 + e];
                ra[e] = a[e] * c - b[e] * s;
                rb[e] = b[e] * c + a[e] * s;
            }
            *lo = kern_cu_pack8<T>(ra);
            *hi = kern_cu_pack8<T>(rb);
        } else {
            const float a = kern_cu_tof(v[i]), b = kern_cu_tof(v[i + half]);
            v[i] = kern_cu_fromf<T>(a * cs[i] - b * sn[i]);
            v[i + half] = kern_cu_fromf<T>(b * cs[i] + a * sn[i]);
        }
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
    if (hidden % 8 == 0 && kern_cu_aligned16(x, w, y))
        BY_DTYPE(dt, (rmsnorm_kernel<T, true>
                      <<<tokens, 256, 0, st>>>((const T *)x, (const T *)w, (T *)y, hidden, eps)));
    else
        BY_DTYPE(dt, (rmsnorm_kernel<T, false>
                      <<<tokens, 256, 0, st>>>((const T *)x, (const T *)w, (T *)y, hidden, eps)));
    return cudaGetLastError();
}

cudaError_t kern_cu_silu_mul(kern_dtype dt, const void *x, void *y, int tokens, int inter,
                             cudaStream_t st)
{
    const bool vec = inter % 8 == 0 && kern_cu_aligned16(x, y);
    const int n = vec ? inter / 8 : inter, cols = (n + 255) / 256;
    const dim3 grid((unsigned)tokens, (unsigned)(cols > 65535 ? 65535 : cols));
    if (vec)
        BY_DTYPE(dt, (silu_mul_kernel<T, true><<<grid, 256, 0, st>>>((const T *)x, (T *)y, inter)));
    else
        BY_DTYPE(dt,
                 (silu_mul_kernel<T, false><<<grid, 256, 0, st>>>((const T *)x, (T *)y, inter)));
    return cudaGetLastError();
}

cudaError_t kern_cu_add(kern_dtype dt, const void *a, const void *b, void *y, size_t n,
                        cudaStream_t st)
{
    if (kern_cu_aligned16(a, b, y))
        BY_DTYPE(dt, (add_vec_kernel<T><<<kern_cu_blocks((n + 7) / 8), 256, 0, st>>>(
                         (const T *)a, (const T *)b, (T *)y, n)));
    else
        BY_DTYPE(dt, (add_kernel<T>
                      <<<kern_cu_blocks(n), 256, 0, st>>>((const T *)a, (const T *)b, (T *)y, n)));
    return cudaGetLastError();
}

cudaError_t kern_cu_rope(kern_dtype dt, void *x, const int32_t *pos, int tokens, int heads, int d,
                         float theta, cudaStream_t st)
{
    const float l2 = (float)log2((double)theta);
    const size_t smem = sizeof(float) * (size_t)d; /* d/2 cosines, d/2 sines */
    if (d % 16 == 0 && kern_cu_aligned16(x))
        BY_DTYPE(dt, (rope_kernel<T, true><<<tokens, 128, smem, st>>>((T *)x, pos, heads, d, l2)));
    else
        BY_DTYPE(dt, (rope_kernel<T, false><<<tokens, 128, smem, st>>>((T *)x, pos, heads, d, l2)));
    return cudaGetLastError();
}
