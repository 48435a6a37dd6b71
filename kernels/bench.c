/* bench.c: the microbenchmark driver. A kern_bench owns one backend's buffers (host for CPU,
 * device ones inside kern_cuda for CUDA) and grows them as shapes grow, filling new memory with
 * a fixed pseudo-random pattern in [-0.5, 0.5) so no run meets denormals or NaNs. A run calls
 * the operator warmup times untimed, then timed until the kern_bench_cfg rules stop it, and
 * summarises the samples with kern_bench_stats. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels_int.h"

enum { BUF_A, BUF_B, BUF_C, BUF_Q, BUF_K, BUF_V, BUF_COUNT };

struct kern_bench {
    kern_backend be;
    kern_cuda *cuda;       /* CUDA backend only */
    float *buf[BUF_COUNT]; /* CPU backend: host buffers */
    size_t cap[BUF_COUNT]; /* elements */
    int32_t *ints;         /* block tables, context lengths, positions */
    size_t ints_cap;       /* elements */
};

void kern_bench_cfg_default(kern_bench_cfg *cfg)
{
    cfg->warmup = 1;
    cfg->min_runs = 3;
    cfg->max_runs = 30;
    cfg->target_ns = 20 * 1000 * 1000;
    cfg->graph_calls = 0;
}

int kern_bench_new(kern_backend be, kern_bench **out, char *err, size_t errlen)
{
    *out = NULL;
    if (be != KERN_BACKEND_CPU && be != KERN_BACKEND_CUDA)
        return kern_seterr(err, errlen, "unknown backend %d", (int)be);
    kern_bench *b = kern_xcalloc(1, sizeof(*b));
    b->be = be;
    if (be == KERN_BACKEND_CUDA && kern_cuda_new(&b->cuda, err, errlen) != 0) {
        free(b);
        return -1;
    }
    *out = b;
    return 0;
}

void kern_bench_free(kern_bench *b)
{
    if (!b)
        return;
    kern_cuda_free(b->cuda);
    for (int i = 0; i < BUF_COUNT; i++)
        free(b->buf[i]);
    free(b->ints);
    free(b);
}

int kern_bench_describe(const kern_bench *b, char *buf, size_t len, char *err, size_t errlen)
{
    if (b->be == KERN_BACKEND_CUDA)
        return kern_cuda_describe(buf, len, err, errlen);
    return kern_cpu_describe(buf, len);
}

/* Buffer `id` with room for n floats; fresh memory gets the fill pattern. */
static float *buf(kern_bench *b, int id, size_t n)
{
    if (b->cap[id] < n) {
        free(b->buf[id]);
        b->buf[id] = kern_xmalloc(n * sizeof(float));
        b->cap[id] = n;
        uint32_t x = 0x9e3779b9u ^ (uint32_t)id;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            b->buf[id][i] = (float)(x >> 8) / 16777216.0f - 0.5f;
        }
    }
    return b->buf[id];
}

static int32_t *ints(kern_bench *b, size_t n)
{
    if (b->ints_cap < n) {
        free(b->ints);
        b->ints = kern_xmalloc(n * sizeof(int32_t));
        b->ints_cap = n;
    }
    return b->ints;
}

/* Arguments of one CPU call, prepared once per run. */
typedef struct cpu_call {
    const kern_shape *s;
    float *a, *b, *c, *q, *k, *v;
    int32_t *tbl, *lens, *pos;
    int m, k_dim, n, max_blocks, block_size;
    float scale;
} cpu_call;

/* Sizes the buffers for s and fills the integer inputs: decode block tables interleave the
 * sequences' blocks (block j of sequence i is block j * batch + i), as a busy cache would. */
static void cpu_prepare(kern_bench *b, const kern_shape *s, cpu_call *c)
{
    const kern_dims *d = &s->dims;
    size_t t = (size_t)s->tokens, hd = (size_t)d->heads * d->head_dim;
    size_t kv = (size_t)d->kv_heads * d->head_dim;
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->scale = 1.0f / sqrtf((float)d->head_dim);
    if (kern_shape_gemm(s, &c->m, &c->k_dim, &c->n)) {
        c->a = buf(b, BUF_A, (size_t)c->m * c->k_dim);
        c->b = buf(b, BUF_B, (size_t)c->n * c->k_dim);
        c->c = buf(b, BUF_C, (size_t)c->m * c->n);
        return;
    }
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        c->q = buf(b, BUF_Q, t * hd);
        c->k = buf(b, BUF_K, (t + s->context) * kv);
        c->v = buf(b, BUF_V, (t + s->context) * kv);
        c->c = buf(b, BUF_C, t * hd);
        break;
    case KERN_OP_ATTN_DECODE: {
        int bs = kern_shape_block_size(s), batch = s->batch;
        c->block_size = bs;
        c->max_blocks = (s->context + bs - 1) / bs;
        size_t blocks = (size_t)batch * c->max_blocks;
        c->q = buf(b, BUF_Q, (size_t)batch * hd);
        c->k = buf(b, BUF_K, blocks * bs * kv);
        c->v = buf(b, BUF_V, blocks * bs * kv);
        c->c = buf(b, BUF_C, (size_t)batch * hd);
        c->tbl = ints(b, blocks + (size_t)batch);
        c->lens = c->tbl + blocks;
        for (int i = 0; i < batch; i++) {
            c->lens[i] = s->context;
            for (int j = 0; j < c->max_blocks; j++)
                c->tbl[(size_t)i * c->max_blocks + j] = j * batch + i;
        }
        break;
    }
    case KERN_OP_ROPE:
        c->q = buf(b, BUF_Q, t * hd);
        c->k = buf(b, BUF_K, t * kv);
        c->pos = ints(b, t);
        for (size_t i = 0; i < t; i++)
            c->pos[i] = (int32_t)i;
        break;
    case KERN_OP_MLP_ACT:
        c->a = buf(b, BUF_A, t * 2 * d->intermediate);
        c->c = buf(b, BUF_C, t * d->intermediate);
        break;
    case KERN_OP_RMSNORM:
    case KERN_OP_ADD:
        c->a = buf(b, BUF_A, t * d->hidden);
        c->b = buf(b, BUF_B, t * d->hidden);
        c->c = buf(b, BUF_C, t * d->hidden);
        break;
    default: /* the GEMMs are sized above */
        assert(!"an operator the CPU driver does not size");
    }
}

static void cpu_run(const cpu_call *c)
{
    const kern_shape *s = c->s;
    const kern_dims *d = &s->dims;
    switch (s->op) {
    case KERN_OP_ATTN_PREFILL:
        kern_cpu_attn_prefill(c->q, c->k, c->v, c->c, s->tokens, s->context, d->heads, d->kv_heads,
                              d->head_dim, c->scale);
        break;
    case KERN_OP_ATTN_DECODE:
        kern_cpu_attn_decode(c->q, c->k, c->v, c->tbl, c->max_blocks, c->lens, c->c, s->batch,
                             d->heads, d->kv_heads, d->head_dim, c->block_size, c->scale);
        break;
    case KERN_OP_ROPE: /* positions stay fixed, so repeated rotation keeps values bounded */
        kern_cpu_rope(c->q, c->pos, s->tokens, d->heads, d->head_dim, 1e6f);
        kern_cpu_rope(c->k, c->pos, s->tokens, d->kv_heads, d->head_dim, 1e6f);
        break;
    case KERN_OP_MLP_ACT:
        kern_cpu_silu_mul(c->a, c->c, s->tokens, d->intermediate);
        break;
    case KERN_OP_RMSNORM:
        kern_cpu_rmsnorm(c->a, c->b, c->c, s->tokens, d->hidden, 1e-6f);
        break;
    case KERN_OP_ADD:
        kern_cpu_add(c->a, c->b, c->c, (size_t)s->tokens * d->hidden);
        break;
    case KERN_OP_QKV_PROJ:
    case KERN_OP_O_PROJ:
    case KERN_OP_MLP_UP_GATE:
    case KERN_OP_MLP_DOWN:
    case KERN_OP_LM_HEAD:
        kern_cpu_linear(c->a, c->b, c->c, c->m, c->k_dim, c->n);
        break;
    default:
        assert(!"an operator the CPU driver does not run");
    }
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cpu_samples(kern_bench *b, const kern_shape *s, const kern_bench_cfg *cfg,
                       int64_t *samples, int *n)
{
    cpu_call c;
    cpu_prepare(b, s, &c);
    for (int i = 0; i < cfg->warmup; i++)
        cpu_run(&c);
    int64_t total = 0;
    *n = 0;
    while (*n < cfg->max_runs && (*n < cfg->min_runs || total < cfg->target_ns)) {
        int64_t t0 = now_ns();
        cpu_run(&c);
        int64_t dt = now_ns() - t0;
        samples[(*n)++] = dt > 0 ? dt : 1; /* a clock tick coarser than the call still counts */
        total += dt;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted samples. */
static int64_t pct(const int64_t *v, int n, double p)
{
    int r = (int)ceil(p * n) - 1;
    return v[r < 0 ? 0 : (r >= n ? n - 1 : r)];
}

void kern_bench_stats(int64_t *samples, int n, kern_bench_result *res)
{
    qsort(samples, (size_t)n, sizeof(*samples), cmp_i64);
    double sum = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++)
        sum += (double)samples[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += ((double)samples[i] - mean) * ((double)samples[i] - mean);
    res->runs = n;
    res->min_ns = samples[0];
    res->max_ns = samples[n - 1];
    res->median_ns = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    res->p10_ns = pct(samples, n, 0.10);
    res->p90_ns = pct(samples, n, 0.90);
    res->mean_ns = mean;
    res->std_ns = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

int kern_bench_run(kern_bench *b, const kern_shape *s, const kern_bench_cfg *cfg,
                   kern_bench_result *res, char *err, size_t errlen)
{
    kern_bench_cfg def;
    if (!cfg) {
        kern_bench_cfg_default(&def);
        cfg = &def;
    }
    if (cfg->warmup < 0 || cfg->min_runs < 1 || cfg->max_runs < cfg->min_runs ||
        cfg->max_runs > 1000000 || cfg->target_ns < 0 || cfg->graph_calls < 0 ||
        cfg->graph_calls > 1000)
        return kern_seterr(err, errlen,
                           "bad benchmark settings: warmup %d, min_runs %d, max_runs %d, "
                           "target_ns %lld, graph_calls %d",
                           cfg->warmup, cfg->min_runs, cfg->max_runs, (long long)cfg->target_ns,
                           cfg->graph_calls);
    if (cfg->graph_calls > 0 && b->be != KERN_BACKEND_CUDA)
        return kern_seterr(err, errlen, "graph timing (graph_calls %d) is the CUDA backend's",
                           cfg->graph_calls);
    if (kern_shape_check(s, err, errlen) != 0)
        return -1;
    int64_t *samples = kern_xmalloc(sizeof(int64_t) * (size_t)cfg->max_runs);
    int n = 0, rc;
    if (b->be == KERN_BACKEND_CUDA)
        rc = kern_cuda_bench_samples(b->cuda, s, cfg, samples, cfg->max_runs, &n, err, errlen);
    else
        rc = cpu_samples(b, s, cfg, samples, &n);
    if (rc == 0 && n < 1)
        rc = kern_seterr(err, errlen, "%s: no timed runs", kern_op_name(s->op));
    if (rc == 0) {
        memset(res, 0, sizeof(*res));
        kern_bench_stats(samples, n, res);
        res->flops = kern_shape_flops(s);
        res->bytes = kern_shape_bytes(s, b->be == KERN_BACKEND_CUDA ? 2 : 4);
    }
    free(samples);
    return rc;
}
