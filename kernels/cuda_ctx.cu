/* cuda_ctx.cu: the CUDA side of kernels.h: device discovery and description, the kern_cuda
 * context (stream, cuBLAS handle, timing events, benchmark buffers it owns and frees), linear
 * layers through cublasGemmEx (fp16/bf16 in and out, fp32 compute), the fp32 host-array wrappers
 * the tests use, and the device-side timing loop behind kern_bench_run. Every CUDA or cuBLAS
 * failure comes back as -1 with the call and the runtime's message in err. */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_int.cuh"

static int cuerr(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess)
        return 0;
    return kern_seterr(err, errlen, "cuda: %s: %s", what, cudaGetErrorString(e));
}

static int blaserr(cublasStatus_t s, const char *what, char *err, size_t errlen)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    return kern_seterr(err, errlen, "cublas: %s: status %d", what, (int)s);
}

extern "C" int kern_cuda_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error so later calls start clean */
        return 0;
    }
    return n > 0;
}

extern "C" int kern_cuda_new(kern_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!kern_cuda_available())
        return kern_seterr(err, errlen, "cuda: no device");
    kern_cuda *c = (kern_cuda *)kern_xcalloc(1, sizeof(*c));
    c->device = 0;
    if (cuerr(cudaSetDevice(0), "cudaSetDevice", err, errlen) ||
        cuerr(cudaStreamCreate(&c->stream), "cudaStreamCreate", err, errlen) ||
        cuerr(cudaEventCreate(&c->start), "cudaEventCreate", err, errlen) ||
        cuerr(cudaEventCreate(&c->stop), "cudaEventCreate", err, errlen) ||
        blaserr(cublasCreate(&c->blas), "cublasCreate", err, errlen) ||
        blaserr(cublasSetStream(c->blas, c->stream), "cublasSetStream", err, errlen))
        goto fail;
    *out = c;
    return 0;
fail:
    kern_cuda_free(c);
    return -1;
}

extern "C" void kern_cuda_free(kern_cuda *c)
{
    if (!c)
        return;
    for (int i = 0; i < KERN_CU_SLOTS; i++)
        if (c->slot[i])
            cudaFree(c->slot[i]);
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->blas_ws)
        cudaFree(c->blas_ws);
    if (c->start)
        cudaEventDestroy(c->start);
    if (c->stop)
        cudaEventDestroy(c->stop);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

extern "C" int kern_cuda_describe(char *buf, size_t len, char *err, size_t errlen)
{
    int drv = 0, rt = 0, blas = 0;
    cudaDeviceProp p;
    if (buf && len > 0)
        buf[0] = '\0';
    if (!kern_cuda_available())
        return kern_seterr(err, errlen, "cuda: no device");
    if (cuerr(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties", err, errlen) ||
        cuerr(cudaDriverGetVersion(&drv), "cudaDriverGetVersion", err, errlen) ||
        cuerr(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion", err, errlen))
        return -1;
    cublasGetProperty(MAJOR_VERSION, &blas);
    if (buf && len > 0)
        snprintf(buf, len, "cuda: %s, sm_%d%d, %zu MiB, driver %d.%d, runtime %d.%d, cublas %d",
                 p.name, p.major, p.minor, (size_t)(p.totalGlobalMem >> 20), drv / 1000,
                 drv % 1000 / 10, rt / 1000, rt % 1000 / 10, blas);
    return 0;
}

static size_t dsize(kern_dtype dt)
{
    (void)dt;
    return 2; /* fp16 and bf16 */
}

/* y[m][n] = x[m][k] w[n][k]^T, all row-major on the device. cuBLAS is column-major, where the
 * same memory holds y^T = w x^T: A = w read transposed (k x n, ld k), B = x (k x m, ld k). */
static int linear_dev(kern_cuda *c, kern_dtype dt, const void *x, const void *w, void *y, int m,
                      int k, int n, char *err, size_t errlen)
{
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = kern_cu_dtype(dt) == KERN_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    return blaserr(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, t, k, x, t, k,
                                &zero, y, t, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx", err, errlen);
}

/* Device copy of n host floats converted to dt, in *dev (cudaFree it). */
static int upload(kern_cuda *c, kern_dtype dt, const float *h, size_t n, void **dev, char *err,
                  size_t errlen)
{
    float *tmp = NULL;
    *dev = NULL;
    int rc = cuerr(cudaMalloc(&tmp, n * sizeof(float)), "cudaMalloc", err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(dev, n * dsize(dt)), "cudaMalloc", err, errlen);
    rc = rc ? rc
            : cuerr(cudaMemcpyAsync(tmp, h, n * sizeof(float), cudaMemcpyHostToDevice, c->stream),
                    "cudaMemcpy", err, errlen);
    rc = rc ? rc : cuerr(kern_cu_to_dtype(dt, tmp, *dev, n, c->stream), "convert", err, errlen);
    rc = rc ? rc : cuerr(cudaStreamSynchronize(c->stream), "upload", err, errlen);
    cudaFree(tmp);
    return rc;
}

/* Copies n elements of dt at dev back into h as floats. */
static int download(kern_cuda *c, kern_dtype dt, const void *dev, float *h, size_t n, char *err,
                    size_t errlen)
{
    float *tmp = NULL;
    int rc = cuerr(cudaMalloc(&tmp, n * sizeof(float)), "cudaMalloc", err, errlen);
    rc = rc ? rc : cuerr(kern_cu_to_f32(dt, dev, tmp, n, c->stream), "convert", err, errlen);
    rc = rc ? rc
            : cuerr(cudaMemcpyAsync(h, tmp, n * sizeof(float), cudaMemcpyDeviceToHost, c->stream),
                    "cudaMemcpy", err, errlen);
    rc = rc ? rc : cuerr(cudaStreamSynchronize(c->stream), "download", err, errlen);
    cudaFree(tmp);
    return rc;
}

static int upload_ints(kern_cuda *c, const int32_t *h, size_t n, int32_t **dev, char *err,
                       size_t errlen)
{
    *dev = NULL;
    int rc = cuerr(cudaMalloc(dev, n * sizeof(int32_t)), "cudaMalloc", err, errlen);
    rc =
        rc ? rc
           : cuerr(cudaMemcpyAsync(*dev, h, n * sizeof(int32_t), cudaMemcpyHostToDevice, c->stream),
                   "cudaMemcpy", err, errlen);
    return rc ? rc : cuerr(cudaStreamSynchronize(c->stream), "upload", err, errlen);
}

/* Frees up to 8 device pointers (NULL ones skipped) and passes rc through. */
static int release(int rc, void *a, void *b, void *c3, void *d, void *e = NULL, void *f = NULL,
                   void *g = NULL, void *h = NULL)
{
    void *p[8] = {a, b, c3, d, e, f, g, h};
    for (int i = 0; i < 8; i++)
        if (p[i])
            cudaFree(p[i]);
    return rc;
}

static int no_ctx(kern_cuda *c, char *err, size_t errlen)
{
    return c ? 0 : kern_seterr(err, errlen, "cuda: no context (kern_cuda_new failed?)");
}

extern "C" int kern_cuda_linear(kern_cuda *c, kern_dtype dt, const float *x, const float *w,
                                float *y, int m, int k, int n, char *err, size_t errlen)
{
    void *dx = NULL, *dw = NULL, *dy = NULL;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : upload(c, dt, x, (size_t)m * k, &dx, err, errlen);
    rc = rc ? rc : upload(c, dt, w, (size_t)n * k, &dw, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dy, (size_t)m * n * 2), "cudaMalloc", err, errlen);
    rc = rc ? rc : linear_dev(c, dt, dx, dw, dy, m, k, n, err, errlen);
    rc = rc ? rc : download(c, dt, dy, y, (size_t)m * n, err, errlen);
    return release(rc, dx, dw, dy, NULL);
}

extern "C" int kern_cuda_rmsnorm(kern_cuda *c, kern_dtype dt, const float *x, const float *w,
                                 float *y, int tokens, int hidden, float eps, char *err,
                                 size_t errlen)
{
    void *dx = NULL, *dw = NULL, *dy = NULL;
    size_t n = (size_t)tokens * hidden;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : upload(c, dt, x, n, &dx, err, errlen);
    rc = rc ? rc : upload(c, dt, w, (size_t)hidden, &dw, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dy, n * 2), "cudaMalloc", err, errlen);
    rc = rc ? rc
            : cuerr(kern_cu_rmsnorm(dt, dx, dw, dy, tokens, hidden, eps, c->stream), "rmsnorm", err,
                    errlen);
    rc = rc ? rc : download(c, dt, dy, y, n, err, errlen);
    return release(rc, dx, dw, dy, NULL);
}

extern "C" int kern_cuda_silu_mul(kern_cuda *c, kern_dtype dt, const float *x, float *y, int tokens,
                                  int inter, char *err, size_t errlen)
{
    void *dx = NULL, *dy = NULL;
    size_t n = (size_t)tokens * inter;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : upload(c, dt, x, 2 * n, &dx, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dy, n * 2), "cudaMalloc", err, errlen);
    rc =
        rc ? rc
           : cuerr(kern_cu_silu_mul(dt, dx, dy, tokens, inter, c->stream), "silu_mul", err, errlen);
    rc = rc ? rc : download(c, dt, dy, y, n, err, errlen);
    return release(rc, dx, dy, NULL, NULL);
}

extern "C" int kern_cuda_add(kern_cuda *c, kern_dtype dt, const float *a, const float *b, float *y,
                             size_t n, char *err, size_t errlen)
{
    void *da = NULL, *db = NULL, *dy = NULL;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : upload(c, dt, a, n, &da, err, errlen);
    rc = rc ? rc : upload(c, dt, b, n, &db, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dy, n * 2), "cudaMalloc", err, errlen);
    rc = rc ? rc : cuerr(kern_cu_add(dt, da, db, dy, n, c->stream), "add", err, errlen);
    rc = rc ? rc : download(c, dt, dy, y, n, err, errlen);
    return release(rc, da, db, dy, NULL);
}

extern "C" int kern_cuda_rope(kern_cuda *c, kern_dtype dt, float *x, const int32_t *pos, int tokens,
                              int heads, int d, float theta, char *err, size_t errlen)
{
    void *dx = NULL;
    int32_t *dpos = NULL;
    size_t n = (size_t)tokens * heads * d;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : upload(c, dt, x, n, &dx, err, errlen);
    rc = rc ? rc : upload_ints(c, pos, (size_t)tokens, &dpos, err, errlen);
    rc = rc ? rc
            : cuerr(kern_cu_rope(dt, dx, dpos, tokens, heads, d, theta, c->stream), "rope", err,
                    errlen);
    rc = rc ? rc : download(c, dt, dx, x, n, err, errlen);
    return release(rc, dx, dpos, NULL, NULL);
}

static int attn_dims_ok(int nh, int nkv, int d, char *err, size_t errlen)
{
    if (nh <= 0 || nkv <= 0 || nh % nkv != 0 || d <= 0 || d > 256)
        return kern_seterr(err, errlen, "cuda attention: bad heads %d/%d or head_dim %d", nh, nkv,
                           d);
    return 0;
}

extern "C" int kern_cuda_attn_prefill(kern_cuda *c, kern_dtype dt, const float *q, const float *k,
                                      const float *v, float *o, int chunk, int context, int nh,
                                      int nkv, int d, float scale, char *err, size_t errlen)
{
    void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL;
    size_t nq = (size_t)chunk * nh * d, nk = (size_t)(chunk + context) * nkv * d;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : attn_dims_ok(nh, nkv, d, err, errlen);
    if (!rc && (chunk <= 0 || context < 0))
        rc = kern_seterr(err, errlen, "cuda prefill: chunk %d, context %d", chunk, context);
    rc = rc ? rc : upload(c, dt, q, nq, &dq, err, errlen);
    rc = rc ? rc : upload(c, dt, k, nk, &dk, err, errlen);
    rc = rc ? rc : upload(c, dt, v, nk, &dv, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dout, nq * 2), "cudaMalloc", err, errlen);
    rc = rc ? rc
            : cuerr(kern_cu_attn_prefill(dt, dq, dk, dv, dout, chunk, context, nh, nkv, d, scale,
                                         c->stream),
                    "attn_prefill", err, errlen);
    rc = rc ? rc : download(c, dt, dout, o, nq, err, errlen);
    return release(rc, dq, dk, dv, dout);
}

extern "C" int kern_cuda_attn_decode(kern_cuda *c, kern_dtype dt, const float *q,
                                     const float *k_cache, const float *v_cache, int num_blocks,
                                     const int32_t *block_tables, int max_blocks,
                                     const int32_t *context_lens, float *o, int batch, int nh,
                                     int nkv, int d, int block_size, float scale, char *err,
                                     size_t errlen)
{
    void *dq = NULL, *dk = NULL, *dv = NULL, *dout = NULL, *dwork = NULL;
    int32_t *dtab = NULL, *dlen = NULL;
    size_t nq = (size_t)batch * nh * d, nc = (size_t)num_blocks * block_size * nkv * d, nwork = 0;
    int rc = no_ctx(c, err, errlen);
    rc = rc ? rc : attn_dims_ok(nh, nkv, d, err, errlen);
    if (!rc && (batch <= 0 || max_blocks <= 0 || block_size <= 0 || num_blocks <= 0))
        rc = kern_seterr(err, errlen,
                         "cuda decode: batch %d, max_blocks %d, block_size %d, num_blocks %d",
                         batch, max_blocks, block_size, num_blocks);
    for (int b = 0; !rc && b < batch; b++) /* the kernel trusts the tables: check them here */
        if (context_lens[b] < 1 || context_lens[b] > max_blocks * block_size)
            rc = kern_seterr(err, errlen, "cuda decode: sequence %d has context %d", b,
                             context_lens[b]);
        else
            for (int j = 0; !rc && j < (context_lens[b] + block_size - 1) / block_size; j++)
                if (block_tables[(size_t)b * max_blocks + j] < 0 ||
                    block_tables[(size_t)b * max_blocks + j] >= num_blocks)
                    rc = kern_seterr(err, errlen, "cuda decode: sequence %d block %d -> %d", b, j,
                                     block_tables[(size_t)b * max_blocks + j]);
    rc = rc ? rc : upload(c, dt, q, nq, &dq, err, errlen);
    rc = rc ? rc : upload(c, dt, k_cache, nc, &dk, err, errlen);
    rc = rc ? rc : upload(c, dt, v_cache, nc, &dv, err, errlen);
    rc = rc ? rc : upload_ints(c, block_tables, (size_t)batch * max_blocks, &dtab, err, errlen);
    rc = rc ? rc : upload_ints(c, context_lens, (size_t)batch, &dlen, err, errlen);
    rc = rc ? rc : cuerr(cudaMalloc(&dout, nq * 2), "cudaMalloc", err, errlen);
    if (!rc && (nwork = kern_cu_attn_decode_work(batch, nh, nkv, d, max_blocks, block_size)) > 0)
        rc = cuerr(cudaMalloc(&dwork, nwork), "cudaMalloc", err, errlen);
    rc = rc ? rc
            : cuerr(kern_cu_attn_decode(dt, dq, dk, dv, dtab, max_blocks, dlen, dout, batch, nh,
                                        nkv, d, block_size, scale, dwork, nwork, c->stream),
                    "attn_decode", err, errlen);
    rc = rc ? rc : download(c, dt, dout, o, nq, err, errlen);
    return release(rc, dq, dk, dv, dout, dtab, dlen, dwork);
}

/* ---- benchmark ---------------------------------------------------------------------------- */

enum { S_A, S_B, S_C, S_Q, S_K, S_V, S_INT, S_WORK }; /* S_WORK: decode's split workspace */

/* Device buffer `id` of at least `bytes`; fresh memory is filled with the pattern (as dt, or
 * left to the caller for the integer slot). */
static int slot(kern_cuda *c, int id, size_t bytes, kern_dtype dt, void **out, char *err,
                size_t errlen)
{
    if (c->slot_cap[id] < bytes) {
        if (c->slot[id])
            cudaFree(c->slot[id]);
        c->slot[id] = NULL;
        c->slot_cap[id] = 0;
        if (cuerr(cudaMalloc(&c->slot[id], bytes), "cudaMalloc (benchmark)", err, errlen))
            return -1;
        c->slot_cap[id] = bytes;
        if (id != S_INT &&
            cuerr(kern_cu_fill(dt, c->slot[id], bytes / 2, 0x9e3779b9u + (unsigned)id, c->stream),
                  "fill", err, errlen))
            return -1;
    }
    *out = c->slot[id];
    return 0;
}

/* Device arguments of one timed call. */
typedef struct cu_call {
    const kern_shape *s;
    kern_dtype dt;
    void *a, *b, *c, *q, *k, *v, *work;
    size_t work_bytes;
    int32_t *tbl, *lens, *pos;
    int m, k_dim, n, max_blocks, block_size;
    float scale;
} cu_call;

/* Integer inputs, built on the host and copied into the integer slot: decode block tables
 * interleave sequences as in the CPU driver, rope positions count from 0. */
static int prepare_ints(kern_cuda *c, cu_call *a, char *err, size_t errlen)
{
    const kern_shape *s = a->s;
    size_t n = s->op == KERN_OP_ROPE ? (size_t)s->tokens
                                     : (size_t)s->batch * a->max_blocks + (size_t)s->batch;
    int32_t *h = (int32_t *)kern_xmalloc(n * sizeof(int32_t));
    void *dev = NULL;
    if (s->op == KERN_OP_ROPE) {
        for (size_t i = 0; i < n; i++)
            h[i] = (int32_t)i;
    } else {
        for (int i = 0; i < s->batch; i++) {
            for (int j = 0; j < a->max_blocks; j++)
                h[(size_t)i * a->max_blocks + j] = j * s->batch + i;
            h[(size_t)s->batch * a->max_blocks + i] = s->context;
        }
    }
    int rc = slot(c, S_INT, n * sizeof(int32_t), a->dt, &dev, err, errlen);
    rc = rc ? rc
            : cuerr(cudaMemcpy(dev, h, n * sizeof(int32_t), cudaMemcpyHostToDevice), "cudaMemcpy",
                    err, errlen);
    free(h);
    if (rc)
        return rc;
    if (s->op == KERN_OP_ROPE) {
        a->pos = (int32_t *)dev;
    } else {
        a->tbl = (int32_t *)dev;
        a->lens = a->tbl + (size_t)s->batch * a->max_blocks;
    }
    return 0;
}

static int prepare(kern_cuda *c, const kern_shape *s, cu_call *a, char *err, size_t errlen)
{
    const kern_dims *d = &s->dims;
    size_t t = (size_t)s->tokens, hd = (size_t)d->heads * d->head_dim, e = 2;
    size_t kv = (size_t)d->kv_heads * d->head_dim;
    kern_dtype dt = kern_cu_dtype(s->dtype);
    *a = cu_call{};
    a->s = s;
    a->dt = dt;
    a->scale = 1.0f / sqrtf((float)d->head_dim);
    if (kern_shape_gemm(s, &a->m, &a->k_dim, &a->n))
        return slot(c, S_A, e * a->m * a->k_dim, dt, &a->a, err, errlen) ||
               slot(c, S_B, e * a->n * a->k_dim, dt, &a->b, err, errlen) ||
               slot(c, S_C, e * a->m * a->n, dt, &a->c, err, errlen);
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        return slot(c, S_Q, e * t * hd, dt, &a->q, err, errlen) ||
               slot(c, S_K, e * (t + s->context) * kv, dt, &a->k, err, errlen) ||
               slot(c, S_V, e * (t + s->context) * kv, dt, &a->v, err, errlen) ||
               slot(c, S_C, e * t * hd, dt, &a->c, err, errlen);
    case KERN_OP_ATTN_DECODE: {
        a->block_size = kern_shape_block_size(s);
        a->max_blocks = (s->context + a->block_size - 1) / a->block_size;
        size_t cache = e * (size_t)s->batch * a->max_blocks * a->block_size * kv;
        a->work_bytes = kern_cu_attn_decode_work(s->batch, d->heads, d->kv_heads, d->head_dim,
                                                 a->max_blocks, a->block_size);
        if (a->work_bytes && slot(c, S_WORK, a->work_bytes, dt, &a->work, err, errlen))
            return -1;
        return slot(c, S_Q, e * s->batch * hd, dt, &a->q, err, errlen) ||
               slot(c, S_K, cache, dt, &a->k, err, errlen) ||
               slot(c, S_V, cache, dt, &a->v, err, errlen) ||
               slot(c, S_C, e * s->batch * hd, dt, &a->c, err, errlen) ||
               prepare_ints(c, a, err, errlen);
    }
    case KERN_OP_ROPE:
        return slot(c, S_Q, e * t * hd, dt, &a->q, err, errlen) ||
               slot(c, S_K, e * t * kv, dt, &a->k, err, errlen) || prepare_ints(c, a, err, errlen);
    case KERN_OP_MLP_ACT:
        return slot(c, S_A, e * t * 2 * d->intermediate, dt, &a->a, err, errlen) ||
               slot(c, S_C, e * t * d->intermediate, dt, &a->c, err, errlen);
    default: /* rmsnorm, add */
        return slot(c, S_A, e * t * d->hidden, dt, &a->a, err, errlen) ||
               slot(c, S_B, e * t * d->hidden, dt, &a->b, err, errlen) ||
               slot(c, S_C, e * t * d->hidden, dt, &a->c, err, errlen);
    }
}

static int run_once(kern_cuda *c, const cu_call *a, char *err, size_t errlen)
{
    const kern_shape *s = a->s;
    const kern_dims *d = &s->dims;
    cudaError_t e;
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        e = kern_cu_attn_prefill(a->dt, a->q, a->k, a->v, a->c, s->tokens, s->context, d->heads,
                                 d->kv_heads, d->head_dim, a->scale, c->stream);
        break;
    case KERN_OP_ATTN_DECODE:
        e = kern_cu_attn_decode(a->dt, a->q, a->k, a->v, a->tbl, a->max_blocks, a->lens, a->c,
                                s->batch, d->heads, d->kv_heads, d->head_dim, a->block_size,
                                a->scale, a->work, a->work_bytes, c->stream);
        break;
    case KERN_OP_ROPE:
        e = kern_cu_rope(a->dt, a->q, a->pos, s->tokens, d->heads, d->head_dim, 1e6f, c->stream);
        if (e == cudaSuccess)
            e = kern_cu_rope(a->dt, a->k, a->pos, s->tokens, d->kv_heads, d->head_dim, 1e6f,
                             c->stream);
        break;
    case KERN_OP_MLP_ACT:
        e = kern_cu_silu_mul(a->dt, a->a, a->c, s->tokens, d->intermediate, c->stream);
        break;
    case KERN_OP_RMSNORM:
        e = kern_cu_rmsnorm(a->dt, a->a, a->b, a->c, s->tokens, d->hidden, 1e-6f, c->stream);
        break;
    case KERN_OP_ADD:
        e = kern_cu_add(a->dt, a->a, a->b, a->c, (size_t)s->tokens * d->hidden, c->stream);
        break;
    default:
        return linear_dev(c, a->dt, a->a, a->b, a->c, a->m, a->k_dim, a->n, err, errlen);
    }
    return cuerr(e, kern_op_name(s->op), err, errlen);
}

/* The calls one sample times: one eager call, or one replay of the captured graph. */
static int run_timed(kern_cuda *c, const cu_call *a, cudaGraphExec_t exec, char *err, size_t errlen)
{
    if (exec)
        return cuerr(cudaGraphLaunch(exec, c->stream), "cudaGraphLaunch", err, errlen);
    return run_once(c, a, err, errlen);
}

/* cuBLAS under stream capture gets a workspace of its own (cuBLAS documentation, "CUDA Graphs
 * support": set one so the captured GEMMs allocate nothing), 32 MiB, its Hopper default. */
enum { BLAS_WS_BYTES = 32 << 20 };
static int graph_workspace(kern_cuda *c, char *err, size_t errlen)
{
    if (c->blas_ws)
        return 0;
    return cuerr(cudaMalloc(&c->blas_ws, BLAS_WS_BYTES), "cudaMalloc", err, errlen) ||
           blaserr(cublasSetWorkspace(c->blas, c->blas_ws, BLAS_WS_BYTES), "cublasSetWorkspace",
                   err, errlen);
}

/* Captures `calls` calls of a into one CUDA graph on the context's stream and instantiates it. */
static int capture(kern_cuda *c, const cu_call *a, int calls, cudaGraphExec_t *exec, char *err,
                   size_t errlen)
{
    cudaGraph_t g = NULL;
    *exec = NULL;
    if (graph_workspace(c, err, errlen))
        return -1;
    if (cuerr(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture", err, errlen))
        return -1;
    int rc = 0;
    for (int i = 0; i < calls && rc == 0; i++)
        rc = run_once(c, a, err, errlen);
    cudaError_t e = cudaStreamEndCapture(c->stream, &g);
    if (rc == 0)
        rc = cuerr(e, "cudaStreamEndCapture", err, errlen);
    if (rc == 0)
        rc = cuerr(cudaGraphInstantiate(exec, g, 0), "cudaGraphInstantiate", err, errlen);
    if (g)
        cudaGraphDestroy(g);
    return rc;
}

/* Times the samples: each one eager call, or (graph_calls > 0) one replay of graph_calls
 * captured calls, divided by their count. */
static int time_samples(kern_cuda *c, const cu_call *a, const kern_bench_cfg *cfg,
                        cudaGraphExec_t exec, int64_t *samples, int cap, int *n, char *err,
                        size_t errlen)
{
    int64_t total = 0;
    const int per = exec ? cfg->graph_calls : 1;
    while (*n < cap && *n < cfg->max_runs && (*n < cfg->min_runs || total < cfg->target_ns)) {
        float ms = 0.0f;
        if (cuerr(cudaEventRecord(c->start, c->stream), "cudaEventRecord", err, errlen) ||
            run_timed(c, a, exec, err, errlen) ||
            cuerr(cudaEventRecord(c->stop, c->stream), "cudaEventRecord", err, errlen) ||
            cuerr(cudaEventSynchronize(c->stop), "cudaEventSynchronize", err, errlen) ||
            cuerr(cudaEventElapsedTime(&ms, c->start, c->stop), "cudaEventElapsedTime", err,
                  errlen))
            return -1;
        int64_t ns = (int64_t)((double)ms * 1e6 / per);
        samples[(*n)++] = ns > 0 ? ns : 1;
        total += (int64_t)((double)ms * 1e6);
    }
    return 0;
}

extern "C" int kern_cuda_bench_samples(kern_cuda *c, const kern_shape *s, const kern_bench_cfg *cfg,
                                       int64_t *samples, int cap, int *n, char *err, size_t errlen)
{
    cu_call a;
    cudaGraphExec_t exec = NULL;
    *n = 0;
    if (no_ctx(c, err, errlen) || prepare(c, s, &a, err, errlen))
        return -1;
    for (int i = 0; i < cfg->warmup; i++)
        if (run_once(c, &a, err, errlen))
            return -1;
    if (cuerr(cudaStreamSynchronize(c->stream), "warm-up", err, errlen))
        return -1;
    int rc = 0;
    if (cfg->graph_calls > 0) /* one untimed replay: the graph's upload */
        rc = capture(c, &a, cfg->graph_calls, &exec, err, errlen) ||
             run_timed(c, &a, exec, err, errlen) ||
             cuerr(cudaStreamSynchronize(c->stream), "graph warm-up", err, errlen);
    if (rc == 0)
        rc = time_samples(c, &a, cfg, exec, samples, cap, n, err, errlen);
    if (exec)
        cudaGraphExecDestroy(exec);
    return rc ? -1 : 0;
}
