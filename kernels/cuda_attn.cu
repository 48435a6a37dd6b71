/* cuda_attn.cu: causal prefill attention and paged decode attention, FlashAttention style.
 * One kernel template serves both. A block of 8 warps owns one kv head and up to 8 query rows
 * of that head's GQA group (prefill: (query, group head) pairs; decode: the group heads of one
 * sequence). Keys and values stream through shared memory 32 at a time, gathered contiguously
 * (prefill) or through the block table (decode); each warp keeps an online softmax (running max,
 * running sum, fp32 accumulator spread over its lanes), so no score row longer than 32 ever
 * exists. Lane j scores key j of a tile; lane c accumulates output dims c, c+32, ... */
#include "cuda_int.cuh"

enum { WARPS = 8, TILE = 32 };

struct attn_args {
    const void *q, *k, *v;
    void *o;
    const int32_t *tables; /* decode only */
    const int32_t *lens;   /* decode only */
    int max_blocks, block_size;
    int chunk, context; /* prefill only */
    int nh, nkv, d;
    float scale;
};

/* Element offset of key/value `j` of kv head kvh for sequence b. */
template <bool PAGED>
__device__ __forceinline__ size_t kv_offset(const attn_args &a, int b, int j, int kvh)
{
    if (PAGED) {
        size_t blk = (size_t)a.tables[(size_t)b * a.max_blocks + j / a.block_size];
        return ((blk * a.block_size + j % a.block_size) * a.nkv + kvh) * a.d;
    }
    return ((size_t)j * a.nkv + kvh) * a.d;
}

/* R = output dims per lane (d <= 32 R). Grid: x = row tiles, y = kv head, z = sequence. */
template <typename T, int R, bool PAGED> __global__ void attn_kernel(attn_args a)
{
    constexpr int DPAD = 32 * R + 2; /* an odd word stride keeps lane-per-row reads apart */
    __shared__ T ks[TILE][DPAD];
    __shared__ T vs[TILE][DPAD];
    __shared__ float qs[WARPS][32 * R];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, d = a.d;
    const int group = a.nh / a.nkv, kvh = blockIdx.y, b = blockIdx.z;
    const int rows = PAGED ? group : a.chunk * group;
    const int row = blockIdx.x * WARPS + warp,
              last_row = min(rows, (int)(blockIdx.x + 1) * WARPS) - 1;
    const bool active = row < rows;
    /* keys a row may see: all cached ones (decode) or up to its own position (prefill) */
    const int limit = PAGED ? a.lens[b] : a.context + (row / group) + 1;
    const int block_limit = PAGED ? a.lens[b] : a.context + (last_row / group) + 1;
    const int head = kvh * group + (PAGED ? row : row % group);
    const size_t qrow =
        PAGED ? ((size_t)b * a.nh + head) * d : ((size_t)(row / group) * a.nh + head) * d;
    const T *q = (const T *)a.q, *k = (const T *)a.k, *v = (const T *)a.v;

    if (active)
        for (int c = lane; c < d; c += 32)
            qs[warp][c] = kern_cu_tof(q[qrow + c]) * a.scale;
    float m = -INFINITY, l = 0.0f, acc[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        acc[r] = 0.0f;

    for (int j0 = 0; j0 < block_limit; j0 += TILE) {
        __syncthreads(); /* the previous tile is no longer read */
        for (int idx = threadIdx.x; idx < TILE * d; idx += blockDim.x) {
            int jj = idx / d, c = idx % d, j = j0 + jj;
            T kx = kern_cu_fromf<T>(0.0f), vx = kx;
            if (j < block_limit) {
                size_t off = kv_offset<PAGED>(a, b, j, kvh) + c;
                kx = k[off];
                vx = v[off];
            }
            ks[jj][c] = kx;
            vs[jj][c] = vx;
        }
        __syncthreads();
        if (!active || j0 >= limit)
            continue;
        const int n = min(TILE, limit - j0); /* keys of this tile the row may see */
        float s = -INFINITY;
        if (lane < n) {
            float dot = 0.0f;
            for (int c = 0; c < d; c++)
                dot += qs[warp][c] * kern_cu_tof(ks[lane][c]);
            s = dot;
        }
        float tile_max = s;
        for (int off = 16; off > 0; off >>= 1)
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
        const float m_new = fmaxf(m, tile_max); /* finite: n >= 1 */
        const float p = lane < n ? __expf(s - m_new) : 0.0f;
        const float corr = __expf(m - m_new); /* 0 on the first tile, where m = -inf */
        float psum = p;
        for (int off = 16; off > 0; off >>= 1)
            psum += __shfl_xor_sync(0xffffffffu, psum, off);
        l = l * corr + psum;
        m = m_new;
#pragma unroll
        for (int r = 0; r < R; r++)
            acc[r] *= corr;
        for (int jj = 0; jj < n; jj++) {
            const float pj = __shfl_sync(0xffffffffu, p, jj);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int c = lane + 32 * r;
                if (c < d)
                    acc[r] += pj * kern_cu_tof(vs[jj][c]);
            }
        }
    }
    if (!active)
        return;
    T *o = (T *)a.o;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int c = lane + 32 * r;
        if (c < d)
            o[qrow + c] = kern_cu_fromf<T>(acc[r] * inv);
    }
}

template <typename T, bool PAGED>
static cudaError_t launch_t(const attn_args &a, dim3 grid, cudaStream_t st)
{
    const dim3 block(32 * WARPS);
    if (a.d <= 32)
        attn_kernel<T, 1, PAGED><<<grid, block, 0, st>>>(a);
    else if (a.d <= 64)
        attn_kernel<T, 2, PAGED><<<grid, block, 0, st>>>(a);
    else if (a.d <= 128)
        attn_kernel<T, 4, PAGED><<<grid, block, 0, st>>>(a);
    else if (a.d <= 256)
        attn_kernel<T, 8, PAGED><<<grid, block, 0, st>>>(a);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

template <bool PAGED>
static cudaError_t launch(kern_dtype dt, const attn_args &a, dim3 grid, cudaStream_t st)
{
    if (kern_cu_dtype(dt) == KERN_BF16)
        return launch_t<__nv_bfloat16, PAGED>(a, grid, st);
    return launch_t<__half, PAGED>(a, grid, st);
}

cudaError_t kern_cu_attn_prefill(kern_dtype dt, const void *q, const void *k, const void *v,
                                 void *o, int chunk, int context, int nh, int nkv, int d,
                                 float scale, cudaStream_t st)
{
    attn_args a = {};
    a.q = q, a.k = k, a.v = v, a.o = o;
    a.chunk = chunk, a.context = context, a.nh = nh, a.nkv = nkv, a.d = d, a.scale = scale;
    int rows = chunk * (nh / nkv);
    dim3 grid((unsigned)((rows + WARPS - 1) / WARPS), (unsigned)nkv, 1);
    return launch<false>(dt, a, grid, st);
}

cudaError_t kern_cu_attn_decode(kern_dtype dt, const void *q, const void *k_cache,
                                const void *v_cache, const int32_t *block_tables, int max_blocks,
                                const int32_t *context_lens, void *o, int batch, int nh, int nkv,
                                int d, int block_size, float scale, cudaStream_t st)
{
    attn_args a = {};
    a.q = q, a.k = k_cache, a.v = v_cache, a.o = o;
    a.tables = block_tables, a.lens = context_lens;
    a.max_blocks = max_blocks, a.block_size = block_size;
    a.nh = nh, a.nkv = nkv, a.d = d, a.scale = scale;
    int group = nh / nkv;
    dim3 grid((unsigned)((group + WARPS - 1) / WARPS), (unsigned)nkv, (unsigned)batch);
    return launch<true>(dt, a, grid, st);
}
