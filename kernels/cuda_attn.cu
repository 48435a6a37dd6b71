/* cuda_attn.cu: causal prefill attention and paged decode attention.
 *
 * Prefill (fa_prefill): FlashAttention-2 on tensor cores, head_dim 64 and 128. A CTA of 4 warps
 * owns 64 query rows of one query head (16 rows a warp); K and V tiles of 64 keys of the head's
 * kv head stream through shared memory with cp.async, double-buffered. Scores S = Q K^T and the
 * output O += P V are mma.sync m16n8k16 (fp16/bf16 in, fp32 accumulate); the score fragments
 * become the A operand of P V in registers, V is read transposed with ldmatrix.trans. Each row
 * keeps its online softmax (running max, running sum) in fp32. Tiles past a CTA's last row's
 * causal limit are never loaded; a warp skips tiles past its own rows' limit.
 * MODEL: Dao, "FlashAttention-2" (arXiv 2307.08691), Algorithm 1 and section 3.3 (work split
 * across warps), and its source csrc/flash_attn/src/flash_fwd_kernel.h (kBlockM 64 / kBlockN 64
 * for head_dim <= 128 on sm80, 4 warps).
 *
 * Decode (fd_decode + fd_reduce): flash-decoding. A CTA owns one kv head of one sequence, all
 * the query heads of its GQA group, and one slice of the context; each K/V row is fetched once
 * with 16-byte cp.async copies through the block table (double-buffered, 32 keys a tile) and used
 * by every group head. When batch x kv heads
 * CTAs would not fill the GPU, the context is split into slices whose partial (max, sum, output)
 * a second kernel combines.
 * MODEL: vLLM csrc/attention/paged_attention_v2.cu (partitions of 512 tokens and a reduce kernel);
 * Dao et al., "Flash-Decoding for long-context inference" (2023).
 *
 * The generic kernel below (attn_kernel) serves what those two do not: prefill with a head_dim
 * other than 64 or 128, decode with a head_dim not a multiple of 8, above 256, or a GQA group
 * wider than 4096 / head_dim heads, and any pointer not 16-byte aligned.
 * A block of 8 warps owns one kv head and up to 8 query rows
 * of that head's GQA group (prefill: (query, group head) pairs; decode: the group heads of one
 * sequence). Keys and values stream through shared memory 32 at a time, gathered contiguously
 * (prefill) or through the block table (decode); each warp keeps an online softmax (running max,
 * running sum, fp32 accumulator spread over its lanes), so no score row longer than 32 ever
 * exists. Lane j scores key j of a tile; lane c accumulates output dims c, c+32, ... */
#include <algorithm>

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

/* ---- tensor-core prefill ------------------------------------------------------------------- */

enum { FA_BM = 64, FA_BN = 64, FA_WARPS = 4 };

template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi); /* .x, the low half, is lo */
    return *reinterpret_cast<uint32_t *>(&h);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* c += a b for one m16n8k16 tile: a row-major 16x16 (4 registers), b column-major 16x8 (2). */
template <typename T>
__device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__half>(float c[4], const uint32_t a[4], uint32_t b0,
                                                 uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float c[4], const uint32_t a[4],
                                                        uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Four 8x8 16-bit matrices from shared memory, each transposed: lanes 8i..8i+7 give the row
 * addresses of matrix i, register i receives matrix i in the mma B-operand layout. */
__device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], const void *p)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

/* 16 bytes from global to shared memory, asynchronously; zero-filled when !valid. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
    unsigned addr = (unsigned)__cvta_generic_to_shared(dst);
    int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(src), "r"(n)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Starts copying keys and values k0 .. k0 + FA_BN of kv head kvh into ks/vs ([FA_BN][D + 8]);
 * rows past `total` are zero-filled. */
template <typename T, int D>
__device__ __forceinline__ void fa_load(const attn_args &a, int kvh, int k0, int total, T *ks,
                                        T *vs)
{
    constexpr int LD = D + 8, CH = D / 8;
    const T *k = (const T *)a.k, *v = (const T *)a.v;
    for (int idx = threadIdx.x; idx < FA_BN * CH; idx += 32 * FA_WARPS) {
        const int r = idx / CH, c = idx % CH * 8, j = k0 + r;
        const bool ok = j < total;
        const size_t off = ((size_t)(ok ? j : 0) * a.nkv + kvh) * D + c;
        cp_async16(ks + r * LD + c, k + off, ok);
        cp_async16(vs + r * LD + c, v + off, ok);
    }
    cp_async_commit();
}

/* Per-row online-softmax state of the two rows a thread holds (g and g + 8 of its warp). */
struct fa_rows {
    float m[2], l[2]; /* running max (log2 units) and this thread's share of the running sum */
    int lim[2];       /* keys 0 .. lim - 1 are visible */
};

/* One K/V tile for one warp: s = q k^T (64 keys), mask, online softmax, o += p v. */
template <typename T, int D>
__device__ __forceinline__ void fa_tile(const uint32_t (&qf)[D / 16][4], float (&o)[D / 8][4],
                                        fa_rows &st, const T *ks, const T *vs, int k0, bool diag,
                                        float sl2)
{
    constexpr int LD = D + 8;
    const int lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    float s[FA_BN / 8][4];
#pragma unroll
    for (int nt = 0; nt < FA_BN / 8; nt++) {
        s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
        const T *kr = ks + (nt * 8 + g) * LD + t4 * 2;
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++) {
            const uint32_t b0 = *reinterpret_cast<const uint32_t *>(kr + kk * 16);
            const uint32_t b1 = *reinterpret_cast<const uint32_t *>(kr + kk * 16 + 8);
            mma16816<T>(s[nt], qf[kk], b0, b1);
        }
    }
    float mx[2] = {st.m[0], st.m[1]};
#pragma unroll
    for (int nt = 0; nt < FA_BN / 8; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int key = k0 + nt * 8 + t4 * 2 + (i & 1);
            float x = s[nt][i] * sl2;
            if (diag && key >= st.lim[i / 2])
                x = -INFINITY;
            s[nt][i] = x;
            mx[i / 2] = fmaxf(mx[i / 2], x);
        }
    float corr[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int h = 0; h < 2; h++) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        if (mx[h] == -INFINITY) /* no visible key yet: keep exp2 away from inf - inf */
            mx[h] = 0.0f;
        corr[h] = exp2f(st.m[h] - mx[h]); /* 0 on the first tile, where m is -inf */
        st.m[h] = mx[h];
    }
#pragma unroll
    for (int nt = 0; nt < FA_BN / 8; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            s[nt][i] = exp2f(s[nt][i] - mx[i / 2]);
            sum[i / 2] += s[nt][i];
        }
#pragma unroll
    for (int h = 0; h < 2; h++)
        st.l[h] = st.l[h] * corr[h] + sum[h];
#pragma unroll
    for (int nt = 0; nt < D / 8; nt++) {
        o[nt][0] *= corr[0];
        o[nt][1] *= corr[0];
        o[nt][2] *= corr[1];
        o[nt][3] *= corr[1];
    }
    /* The accumulator layout of two adjacent score tiles is the A layout of a 16x16 P block. */
#pragma unroll
    for (int kc = 0; kc < FA_BN / 16; kc++) {
        const uint32_t pa[4] = {pack2<T>(s[2 * kc][0], s[2 * kc][1]),
                                pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                                pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                                pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
        const T *vr = vs + (kc * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LD + (lane >> 4) * 8;
#pragma unroll
        for (int np = 0; np < D / 16; np++) {
            uint32_t b[4];
            ldsm_x4_trans(b, vr + np * 16);
            mma16816<T>(o[2 * np], pa, b[0], b[1]);
            mma16816<T>(o[2 * np + 1], pa, b[2], b[3]);
        }
    }
}

/* Grid: x = 64-row tiles of the chunk, y = query head. Dynamic shared memory: K and V, two
 * buffers each, [FA_BN][D + 8] (the pad keeps rows 16-byte aligned and off each other's banks). */
template <typename T, int D>
__global__ void __launch_bounds__(32 * FA_WARPS) fa_prefill(attn_args a)
{
    constexpr int LD = D + 8, TILE_ELEMS = FA_BN * LD;
    extern __shared__ __align__(16) unsigned char fa_smem[];
    T *ks = reinterpret_cast<T *>(fa_smem), *vs = ks + 2 * TILE_ELEMS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
    const int h = blockIdx.y, kvh = h / (a.nh / a.nkv), total = a.context + a.chunk;
    const int q0 = blockIdx.x * FA_BM, wr0 = q0 + warp * 16, row[2] = {wr0 + g, wr0 + g + 8};
    /* keys the CTA's last row sees, and those the warp's last row sees (0 for a warp wholly
     * past the chunk, which then computes nothing) */
    const int cta_keys = a.context + min(q0 + FA_BM, a.chunk);
    const int warp_keys = wr0 < a.chunk ? a.context + min(wr0 + 16, a.chunk) : 0;
    const int ntiles = (cta_keys + FA_BN - 1) / FA_BN;
    const float sl2 = a.scale * 1.4426950408889634f; /* scores in log2 units, for exp2f */
    const T *q = (const T *)a.q;

    fa_rows st;
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        st.m[i] = -INFINITY;
        st.l[i] = 0.0f;
        st.lim[i] = a.context + min(row[i], a.chunk - 1) + 1; /* rows past the chunk: unused */
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = row[i & 1], c = kk * 16 + t4 * 2 + (i / 2) * 8;
            qf[kk][i] =
                r < a.chunk
                    ? *reinterpret_cast<const uint32_t *>(q + ((size_t)r * a.nh + h) * D + c)
                    : 0u;
        }
    float o[D / 8][4];
#pragma unroll
    for (int nt = 0; nt < D / 8; nt++)
        o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0.0f;

    fa_load<T, D>(a, kvh, 0, total, ks, vs);
    for (int tile = 0; tile < ntiles; tile++) {
        const int buf = tile & 1, k0 = tile * FA_BN;
        if (tile + 1 < ntiles) { /* the other buffer was released by the last barrier */
            fa_load<T, D>(a, kvh, k0 + FA_BN, total, ks + (buf ^ 1) * TILE_ELEMS,
                          vs + (buf ^ 1) * TILE_ELEMS);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        if (k0 < warp_keys) /* diag: some key of the tile is past the warp's first row */
            fa_tile<T, D>(qf, o, st, ks + buf * TILE_ELEMS, vs + buf * TILE_ELEMS, k0,
                          k0 + FA_BN > a.context + wr0 + 1, sl2);
        __syncthreads();
    }

    T *out = (T *)a.o;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        float l = st.l[i];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        if (row[i] >= a.chunk)
            continue;
        const float inv = 1.0f / l; /* l >= 1: the row's max contributes exp2(0) */
        T *orow = out + ((size_t)row[i] * a.nh + h) * D + t4 * 2;
#pragma unroll
        for (int nt = 0; nt < D / 8; nt++)
            *reinterpret_cast<uint32_t *>(orow + nt * 8) =
                pack2<T>(o[nt][2 * i] * inv, o[nt][2 * i + 1] * inv);
    }
}

/* Allows a kernel more than the default 48 KiB of dynamic shared memory when it needs it. */
template <typename K> static cudaError_t allow_smem(K kernel, size_t bytes)
{
    if (bytes <= 48 * 1024)
        return cudaSuccess;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

template <typename T, int D> static cudaError_t fa_launch(const attn_args &a, cudaStream_t st)
{
    const size_t smem = (size_t)4 * FA_BN * (D + 8) * sizeof(T);
    cudaError_t e = allow_smem(fa_prefill<T, D>, smem);
    if (e != cudaSuccess)
        return e;
    dim3 grid((unsigned)((a.chunk + FA_BM - 1) / FA_BM), (unsigned)a.nh);
    fa_prefill<T, D><<<grid, 32 * FA_WARPS, smem, st>>>(a);
    return cudaGetLastError();
}

/* ---- split-context decode ------------------------------------------------------------------ */

enum { FD_THREADS = 128, FD_TK = 32, FD_MAX_SPLITS = 128, FD_MIN_SPLIT = 256 };

/* Shared memory of fd_decode: K and V tiles, two buffers each, [FD_TK][d + 8] (16-bit), the
 * group's queries [G][d], the tile's scores [G][FD_TK], and per head the running max, sum and
 * last correction (fp32). */
static size_t fd_smem(int G, int d, int esize)
{
    return (size_t)4 * FD_TK * (d + 8) * esize +
           sizeof(float) * ((size_t)G * d + G * FD_TK + 3 * G);
}

/* fd_decode's shared memory, carved from the dynamic allocation (see fd_smem). */
template <typename T> struct fd_shared {
    T *ks, *vs;          /* [2][FD_TK][d + 8]: two buffers */
    float *qs, *ps;      /* [G][d] queries (scaled to log2 units), [G][FD_TK] scores/probs */
    float *ms, *ls, *cs; /* [G] running max, running sum, last tile's correction */
    __device__ fd_shared(unsigned char *mem, int G, int d)
    {
        ks = reinterpret_cast<T *>(mem);
        vs = ks + 2 * FD_TK * (d + 8);
        qs = reinterpret_cast<float *>(vs + 2 * FD_TK * (d + 8));
        ps = qs + G * d;
        ms = ps + G * FD_TK;
        ls = ms + G;
        cs = ls + G;
    }
};

/* Starts copying keys j0 .. j0 + FD_TK of sequence b, kv head kvh, into buffer buf with 16-byte
 * cp.async through the block table; rows at or past j_end are zero-filled. */
template <typename T>
__device__ __forceinline__ void fd_load(const attn_args &a, const fd_shared<T> &sh, int buf, int b,
                                        int kvh, int j0, int j_end)
{
    const int LD = a.d + 8, CH = a.d / 8;
    const T *k = (const T *)a.k, *v = (const T *)a.v;
    T *ks = sh.ks + buf * FD_TK * LD, *vs = sh.vs + buf * FD_TK * LD;
    for (int i = threadIdx.x; i < FD_TK * CH; i += FD_THREADS) {
        const int r = i / CH, c = i % CH * 8, j = j0 + r;
        const bool ok = j < j_end;
        const size_t off = ok ? kv_offset<true>(a, b, j, kvh) + c : 0;
        cp_async16(ks + r * LD + c, k + off, ok);
        cp_async16(vs + r * LD + c, v + off, ok);
    }
    cp_async_commit();
}

/* Scores of the tile's keys for every group head (-inf past n valid keys), then each head's
 * online-softmax step: probabilities in ps, the correction of earlier tiles in cs. */
template <typename T>
__device__ __forceinline__ void fd_softmax(const fd_shared<T> &sh, int buf, int G, int d, int n)
{
    const int LD = d + 8, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const T *ks = sh.ks + buf * FD_TK * LD;
    for (int i = threadIdx.x; i < G * FD_TK; i += FD_THREADS) { /* a warp: one head, 32 keys */
        const int hh = i / FD_TK, r = i % FD_TK;
        float s = -INFINITY;
        if (r < n) {
            s = 0.0f;
            const float *qh = sh.qs + hh * d;
            for (int c = 0; c < d; c += 8) {
                float kf[8];
                kern_cu_unpack8<T>(*reinterpret_cast<const uint4 *>(ks + r * LD + c), kf);
#pragma unroll
                for (int e = 0; e < 8; e++)
                    s += qh[c + e] * kf[e];
            }
        }
        sh.ps[i] = s;
    }
    __syncthreads();
    for (int hh = warp; hh < G; hh += FD_THREADS / 32) { /* FD_TK == 32: a score a lane */
        const float s = sh.ps[hh * FD_TK + lane], m_old = sh.ms[hh];
        float mx = s;
        for (int off = 16; off > 0; off >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        const float m_new = fmaxf(m_old, mx); /* finite: n >= 1 */
        const float p = exp2f(s - m_new);
        float sum = p;
        for (int off = 16; off > 0; off >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, off);
        sh.ps[hh * FD_TK + lane] = p;
        __syncwarp();
        if (lane == 0) {
            const float corr = exp2f(m_old - m_new);
            sh.cs[hh] = corr;
            sh.ls[hh] = sh.ls[hh] * corr + sum;
            sh.ms[hh] = m_new;
        }
    }
}

/* Grid: x = context slice, y = kv head, z = sequence; R = 8-wide output chunks a thread owns
 * (G d <= 1024 R): chunk tid + 128 r is head (tid + 128 r) / (d / 8), dims 8 ((tid + 128 r) %
 * (d / 8)) onwards. splits == 1 writes o; otherwise the unnormalised partial output, max and sum
 * of each (sequence, head, slice) go to wo, wm, wl for fd_reduce. */
template <typename T, int R>
__global__ void __launch_bounds__(FD_THREADS)
    fd_decode(attn_args a, int split_len, int splits, float *wo, float *wm, float *wl)
{
    extern __shared__ __align__(16) unsigned char fd_mem[];
    const int d = a.d, CH = d / 8, G = a.nh / a.nkv, tid = threadIdx.x;
    const fd_shared<T> sh(fd_mem, G, d);
    const int kvh = blockIdx.y, b = blockIdx.z, split = blockIdx.x;
    const int j_begin = split * split_len, j_end = min(a.lens[b], j_begin + split_len);
    const size_t head0 = (size_t)b * a.nh + (size_t)kvh * G; /* the group's first query head */
    const float sl2 = a.scale * 1.4426950408889634f;

    for (int i = tid; i < G * d; i += FD_THREADS)
        sh.qs[i] = kern_cu_tof(((const T *)a.q)[head0 * d + i]) * sl2;
    for (int i = tid; i < G; i += FD_THREADS) {
        sh.ms[i] = -INFINITY;
        sh.ls[i] = 0.0f;
    }
    float acc[R][8] = {};
    __syncthreads();
    const int ntiles = j_end > j_begin ? (j_end - j_begin + FD_TK - 1) / FD_TK : 0;
    if (ntiles > 0)
        fd_load<T>(a, sh, 0, b, kvh, j_begin, j_end);
    for (int tile = 0; tile < ntiles; tile++) {
        const int buf = tile & 1, j0 = j_begin + tile * FD_TK;
        const T *vs = sh.vs + buf * FD_TK * (d + 8);
        if (tile + 1 < ntiles) { /* the other buffer was released by the last barrier */
            fd_load<T>(a, sh, buf ^ 1, b, kvh, j0 + FD_TK, j_end);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        fd_softmax<T>(sh, buf, G, d, j_end - j0);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R && tid + r * FD_THREADS < G * CH; r++) {
            const int hh = (tid + r * FD_THREADS) / CH, c = (tid + r * FD_THREADS) % CH * 8;
            const float corr = sh.cs[hh];
#pragma unroll
            for (int e = 0; e < 8; e++)
                acc[r][e] *= corr;
            for (int jj = 0; jj < FD_TK; jj++) {
                const float p = sh.ps[hh * FD_TK + jj];
                float vf[8];
                kern_cu_unpack8<T>(*reinterpret_cast<const uint4 *>(vs + jj * (d + 8) + c), vf);
#pragma unroll
                for (int e = 0; e < 8; e++)
                    acc[r][e] += p * vf[e];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < R && tid + r * FD_THREADS < G * CH; r++) {
        const int hh = (tid + r * FD_THREADS) / CH, c = (tid + r * FD_THREADS) % CH * 8;
        if (splits > 1) {
            float *dst = wo + ((head0 + hh) * splits + split) * d + c;
#pragma unroll
            for (int e = 0; e < 8; e++)
                dst[e] = acc[r][e];
        } else {
            const float inv = 1.0f / sh.ls[hh];
#pragma unroll
            for (int e = 0; e < 8; e++)
                acc[r][e] *= inv;
            *reinterpret_cast<uint4 *>((T *)a.o + (head0 + hh) * d + c) = kern_cu_pack8<T>(acc[r]);
        }
    }
    if (splits > 1)
        for (int i = tid; i < G; i += FD_THREADS) { /* an empty slice leaves max -inf, sum 0 */
            wm[(head0 + i) * splits + split] = sh.ms[i];
            wl[(head0 + i) * splits + split] = sh.ls[i];
        }
}

/* Grid: x = query head, y = sequence. Combines the slices: o = sum_s 2^(m_s - M) o_s / L. */
template <typename T>
__global__ void fd_reduce(attn_args a, int splits, const float *wo, const float *wm,
                          const float *wl)
{
    const size_t hb = (size_t)blockIdx.y * a.nh + blockIdx.x, base = hb * splits;
    float mx = -INFINITY, sum = 0.0f;
    for (int s = 0; s < splits; s++)
        if (wl[base + s] > 0.0f)
            mx = fmaxf(mx, wm[base + s]);
    for (int s = 0; s < splits; s++)
        if (wl[base + s] > 0.0f)
            sum += wl[base + s] * exp2f(wm[base + s] - mx);
    const float inv = 1.0f / sum; /* slice 0 always holds key 0 */
    for (int c = threadIdx.x; c < a.d; c += blockDim.x) {
        float acc = 0.0f;
        for (int s = 0; s < splits; s++)
            if (wl[base + s] > 0.0f)
                acc += exp2f(wm[base + s] - mx) * wo[(base + s) * a.d + c];
        ((T *)a.o)[hb * a.d + c] = kern_cu_fromf<T>(acc * inv);
    }
}

/* Context slices per sequence: enough CTAs for about four per SM, each slice at
 * least FD_MIN_SPLIT keys, and at most FD_MAX_SPLITS. */
static int fd_splits(int batch, int nkv, int max_len, int *split_len)
{
    int dev = 0, nsm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || nsm < 1)
        nsm = 1;
    const long ctas = (long)batch * nkv, by_len = (max_len + FD_MIN_SPLIT - 1) / FD_MIN_SPLIT;
    long n = (4L * nsm + ctas - 1) / ctas;
    n = std::min(n, std::min(by_len, (long)FD_MAX_SPLITS));
    n = std::max(n, 1L);
    int len = (int)((max_len + n - 1) / n);
    len = (len + FD_TK - 1) / FD_TK * FD_TK;
    *split_len = len;
    return (max_len + len - 1) / len;
}

/* R, the 8-wide output chunks per thread fd_decode needs, or 0 where it does not apply. */
static int fd_chunks(int nh, int nkv, int d)
{
    if (d % 8 != 0 || d > 256)
        return 0;
    int chunks = nh / nkv * (d / 8), r = (chunks + FD_THREADS - 1) / FD_THREADS;
    return r <= 1 ? 1 : (r <= 2 ? 2 : (r <= 4 ? 4 : 0));
}

static size_t fd_work(int batch, int nh, int d, int splits)
{
    return splits <= 1 ? 0 : sizeof(float) * (size_t)batch * nh * splits * ((size_t)d + 2);
}

template <typename T, int R>
static cudaError_t fd_launch_r(const attn_args &a, int batch, int splits, int split_len,
                               float *work, cudaStream_t st)
{
    const int G = a.nh / a.nkv;
    const size_t smem = fd_smem(G, a.d, (int)sizeof(T));
    cudaError_t e = allow_smem(fd_decode<T, R>, smem);
    if (e != cudaSuccess)
        return e;
    const size_t rows = (size_t)batch * a.nh * splits;
    float *wo = work, *wm = work ? work + rows * a.d : NULL, *wl = work ? wm + rows : NULL;
    dim3 grid((unsigned)splits, (unsigned)a.nkv, (unsigned)batch);
    fd_decode<T, R><<<grid, FD_THREADS, smem, st>>>(a, split_len, splits, wo, wm, wl);
    if (splits > 1 && (e = cudaGetLastError()) == cudaSuccess)
        fd_reduce<T><<<dim3((unsigned)a.nh, (unsigned)batch), 128, 0, st>>>(a, splits, wo, wm, wl);
    return cudaGetLastError();
}

template <typename T>
static cudaError_t fd_launch(const attn_args &a, int batch, int R, void *work, size_t work_bytes,
                             cudaStream_t st)
{
    int split_len = 0, splits = fd_splits(batch, a.nkv, a.max_blocks * a.block_size, &split_len);
    if (work == NULL || work_bytes < fd_work(batch, a.nh, a.d, splits)) {
        splits = 1;
        split_len = a.max_blocks * a.block_size;
    }
    float *w = splits > 1 ? (float *)work : NULL;
    if (R == 1)
        return fd_launch_r<T, 1>(a, batch, splits, split_len, w, st);
    if (R == 2)
        return fd_launch_r<T, 2>(a, batch, splits, split_len, w, st);
    return fd_launch_r<T, 4>(a, batch, splits, split_len, w, st);
}

/* ---- generic kernel launch and the entry points ---------------------------------------------- */

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
    const bool bf = kern_cu_dtype(dt) == KERN_BF16;
    if ((d == 64 || d == 128) && kern_cu_aligned16(q, k, v) && kern_cu_aligned16(o)) {
        if (d == 64)
            return bf ? fa_launch<__nv_bfloat16, 64>(a, st) : fa_launch<__half, 64>(a, st);
        return bf ? fa_launch<__nv_bfloat16, 128>(a, st) : fa_launch<__half, 128>(a, st);
    }
    int rows = chunk * (nh / nkv);
    dim3 grid((unsigned)((rows + WARPS - 1) / WARPS), (unsigned)nkv, 1);
    return launch<false>(dt, a, grid, st);
}

size_t kern_cu_attn_decode_work(int batch, int nh, int nkv, int d, int max_blocks, int block_size)
{
    int split_len = 0;
    if (fd_chunks(nh, nkv, d) == 0)
        return 0;
    return fd_work(batch, nh, d, fd_splits(batch, nkv, max_blocks * block_size, &split_len));
}

cudaError_t kern_cu_attn_decode(kern_dtype dt, const void *q, const void *k_cache,
                                const void *v_cache, const int32_t *block_tables, int max_blocks,
                                const int32_t *context_lens, void *o, int batch, int nh, int nkv,
                                int d, int block_size, float scale, void *work, size_t work_bytes,
                                cudaStream_t st)
{
    attn_args a = {};
    a.q = q, a.k = k_cache, a.v = v_cache, a.o = o;
    a.tables = block_tables, a.lens = context_lens;
    a.max_blocks = max_blocks, a.block_size = block_size;
    a.nh = nh, a.nkv = nkv, a.d = d, a.scale = scale;
    const int R = fd_chunks(nh, nkv, d);
    if (R > 0 && kern_cu_aligned16(k_cache, v_cache, o)) {
        if (kern_cu_dtype(dt) == KERN_BF16)
            return fd_launch<__nv_bfloat16>(a, batch, R, work, work_bytes, st);
        return fd_launch<__half>(a, batch, R, work, work_bytes, st);
    }
    int group = nh / nkv;
    dim3 grid((unsigned)((group + WARPS - 1) / WARPS), (unsigned)nkv, (unsigned)batch);
    return launch<true>(dt, a, grid, st);
}
