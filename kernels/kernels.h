/* kernels.h: the one public header of llmsim's kernels library.
 *
 * It offers, for one transformer layer of a Llama-style model:
 *   - kern_ref_*   a C reference of every operator, fp32, written to be read, not to be fast;
 *   - kern_cpu_*   a CPU backend fast enough to calibrate with (OpenBLAS sgemm for linear
 *                  layers, single-threaded blockwise online-softmax attention);
 *   - kern_cuda_*  CUDA kernels (fp16/bf16 inputs, fp32 accumulation, cuBLAS for linear layers),
 *                  reached through host-array wrappers so no CUDA type leaks out of kernels/;
 *   - kern_bench_* the microbenchmark driver the calibration layer uses to time an operator of a
 *                  given shape on a backend.
 *
 * Layouts (row-major, all dimensions in elements):
 *   activations   x[tokens][hidden]
 *   weights       w[out][in] (as PyTorch stores nn.Linear), so y = x * w^T
 *   q, o          [tokens][heads][head_dim]
 *   k, v          [tokens][kv_heads][head_dim]
 *   paged cache   k_cache[num_blocks][block_size][kv_heads][head_dim], v_cache the same;
 *                 block_tables[batch][max_blocks]; context_lens[batch] counts every cached token
 *                 of a sequence including the one being decoded (its K/V are already stored).
 * Grouped-query attention: query head h reads kv head h / (heads / kv_heads).
 *
 * Errors: functions that can fail return 0 on success and -1 on failure with a message written
 * into the caller's err buffer (err may be NULL, errlen may be 0). Out of memory aborts inside the
 * library. Nothing here keeps global state; the caller owns every buffer it passes.
 */
#ifndef KERNELS_H
#define KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shapes and operators ------------------------------------------------------------------- */

typedef enum kern_backend {
    KERN_BACKEND_CPU = 0,
    KERN_BACKEND_CUDA = 1,
} kern_backend;

typedef enum kern_dtype {
    KERN_F32 = 0, /* the CPU backend and the references always compute in fp32 */
    KERN_F16 = 1,
    KERN_BF16 = 2,
} kern_dtype;

/* The operators of one layer, in the order a forward pass runs them. */
typedef enum kern_op {
    KERN_OP_QKV_PROJ = 0, /* tokens x H -> tokens x (nh + 2 nkv) d */
    KERN_OP_ATTN_PREFILL, /* one sequence: a causal chunk of `tokens` after `context` tokens */
    KERN_OP_ATTN_DECODE,  /* `batch` sequences, one query each, `context` cached tokens each */
    KERN_OP_O_PROJ,       /* tokens x nh d -> tokens x H */
    KERN_OP_MLP_UP_GATE,  /* tokens x H -> tokens x 2I (gate then up) */
    KERN_OP_MLP_ACT,      /* silu(gate) * up: tokens x 2I -> tokens x I */
    KERN_OP_MLP_DOWN,     /* tokens x I -> tokens x H */
    KERN_OP_RMSNORM,      /* tokens x H */
    KERN_OP_ROPE,         /* q and k of `tokens` tokens, rotated in place */
    KERN_OP_LM_HEAD,      /* tokens x H -> tokens x V */
    KERN_OP_ADD,          /* residual add, tokens x H */
    KERN_OP_COUNT
} kern_op;

/* The dimensions of a Llama-style layer. */
typedef struct kern_dims {
    int hidden;       /* H */
    int heads;        /* nh, query heads */
    int kv_heads;     /* nkv, divides nh */
    int head_dim;     /* d, even */
    int intermediate; /* I, MLP width */
    int vocab;        /* V */
} kern_dims;

/* One operator at one shape. Fields an operator does not use are ignored. */
typedef struct kern_shape {
    kern_op op;
    kern_dims dims;
    int tokens;       /* rows for linear and elementwise ops; chunk length for attn_prefill */
    int context;      /* attn_prefill: tokens before the chunk (>= 0); attn_decode: cached tokens
                         per sequence including the new one (>= 1) */
    int batch;        /* attn_decode: sequences */
    int block_size;   /* attn_decode: tokens per KV block; 0 means 16 */
    kern_dtype dtype; /* CUDA: KERN_F16 (default for KERN_F32) or KERN_BF16; CPU: ignored */
} kern_shape;

/* Name of an operator ("qkv_proj", "attn_prefill", ...), or "?" for a value out of range. */
const char *kern_op_name(kern_op op);

/* The operator named `name`; returns -1 when no operator has that name. */
int kern_op_parse(const char *name);

/* Checks that a shape is runnable (positive sizes, nh divisible by nkv, even d, ...).
 * Returns 0, or -1 with the reason in err. */
int kern_shape_check(const kern_shape *s, char *err, size_t errlen);

/* Nominal work of an operator: floating-point operations and bytes moved to and from memory
 * at `elem_bytes` per element (4 for fp32, 2 for fp16/bf16). For rooflines and fit features. */
double kern_shape_flops(const kern_shape *s);
double kern_shape_bytes(const kern_shape *s, int elem_bytes);

/* ---- the fp32 kernels: a C reference (for clarity) and the CPU backend ------------------------
 * Both implement the same seven kernels with the same contracts, declared once below for each
 * prefix (kern_ref_* and kern_cpu_*). None of them can fail on valid arguments; sizes are
 * trusted.
 * - linear: y[m][n] = x[m][k] * w[n][k]^T
 * - rmsnorm: y = x / sqrt(mean(x^2) + eps) * w, row by row; x, y: [tokens][hidden], w: [hidden]
 * - silu_mul: y[t][i] = silu(x[t][i]) * x[t][inter + i]; x: [tokens][2 inter], y: [tokens][inter]
 * - add: y[i] = a[i] + b[i]
 * - rope: rotary embedding, rotate-half (GPT-NeoX / Llama) form, in place on x[tokens][heads][d]:
 *   for i < d/2, angle = pos[t] * theta^(-2i/d), (x_i, x_{i+d/2}) is rotated by that angle.
 * - attn_prefill: causal prefill of one sequence. q, o: [chunk][nh][d]; k, v: [context +
 *   chunk][nkv][d]. Query row i sits at position context + i and sees keys 0 .. context + i.
 * - attn_decode: decode over a paged KV cache: q, o: [batch][nh][d]; layout as described at the
 *   top. */
#define KERN_FP32_KERNELS(p)                                                                       \
    void p##_linear(const float *x, const float *w, float *y, int m, int k, int n);                \
    void p##_rmsnorm(const float *x, const float *w, float *y, int tokens, int hidden, float eps); \
    void p##_silu_mul(const float *x, float *y, int tokens, int inter);                            \
    void p##_add(const float *a, const float *b, float *y, size_t n);                              \
    void p##_rope(float *x, const int32_t *pos, int tokens, int heads, int d, float theta);        \
    void p##_attn_prefill(const float *q, const float *k, const float *v, float *o, int chunk,     \
                          int context, int nh, int nkv, int d, float scale);                       \
    void p##_attn_decode(const float *q, const float *k_cache, const float *v_cache,               \
                         const int32_t *block_tables, int max_blocks, const int32_t *context_lens, \
                         float *o, int batch, int nh, int nkv, int d, int block_size, float scale)

KERN_FP32_KERNELS(kern_ref);
KERN_FP32_KERNELS(kern_cpu);

/* Writes "cpu: <model name from /proc/cpuinfo>, <n> cores, blas: <OpenBLAS config>, blas threads
 * <n>" into buf (always NUL-terminated when len > 0). Returns 0. */
int kern_cpu_describe(char *buf, size_t len);

/* ---- CUDA backend ----------------------------------------------------------------------------
 * Built only when CMake found nvcc; otherwise every call below except kern_cuda_available and
 * kern_cuda_free fails with "built without CUDA". The wrappers take and return fp32 host arrays,
 * convert them to `dt` (KERN_F16 or KERN_BF16; KERN_F32 means KERN_F16) on the device, run the
 * kernel with fp32 accumulation and copy the result back: they exist to test the kernels against
 * kern_ref_*. Timing goes through kern_bench_*, which keeps data on the device. */

typedef struct kern_cuda kern_cuda; /* device, stream, cuBLAS handle, events */

/* 1 when built with CUDA and cudaGetDeviceCount reports a device; 0 otherwise (an error from
 * the runtime, such as no driver, counts as no device). */
int kern_cuda_available(void);

/* Opens device 0. Returns 0 and *out (free with kern_cuda_free), or -1 with err set. */
int kern_cuda_new(kern_cuda **out, char *err, size_t errlen);
/* Frees a context from kern_cuda_new; NULL is allowed. */
void kern_cuda_free(kern_cuda *c);

/* Writes "cuda: <device name>, sm_XY, <mem> MiB, driver X.Y, runtime X.Y" into buf.
 * Returns 0, or -1 with the reason in err (no device, built without CUDA). */
int kern_cuda_describe(char *buf, size_t len, char *err, size_t errlen);

int kern_cuda_linear(kern_cuda *c, kern_dtype dt, const float *x, const float *w, float *y, int m,
                     int k, int n, char *err, size_t errlen);
int kern_cuda_rmsnorm(kern_cuda *c, kern_dtype dt, const float *x, const float *w, float *y,
                      int tokens, int hidden, float eps, char *err, size_t errlen);
int kern_cuda_silu_mul(kern_cuda *c, kern_dtype dt, const float *x, float *y, int tokens, int inter,
                       char *err, size_t errlen);
int kern_cuda_add(kern_cuda *c, kern_dtype dt, const float *a, const float *b, float *y, size_t n,
                  char *err, size_t errlen);
int kern_cuda_rope(kern_cuda *c, kern_dtype dt, float *x, const int32_t *pos, int tokens, int heads,
                   int d, float theta, char *err, size_t errlen);
int kern_cuda_attn_prefill(kern_cuda *c, kern_dtype dt, const float *q, const float *k,
                           const float *v, float *o, int chunk, int context, int nh, int nkv, int d,
                           float scale, char *err, size_t errlen);
/* num_blocks: blocks in k_cache and v_cache (every entry of block_tables that is read must be
 * below it). */
int kern_cuda_attn_decode(kern_cuda *c, kern_dtype dt, const float *q, const float *k_cache,
                          const float *v_cache, int num_blocks, const int32_t *block_tables,
                          int max_blocks, const int32_t *context_lens, float *o, int batch, int nh,
                          int nkv, int d, int block_size, float scale, char *err, size_t errlen);

/* ---- microbenchmark driver -------------------------------------------------------------------
 * A run: `warmup` untimed calls, then timed calls until at least `min_runs` were made and either
 * `max_runs` were made or the timed calls add up to `target_ns`, whichever comes first. So a
 * 100 us operator runs max_runs times and a 50 ms one runs min_runs times. CPU calls are timed
 * with clock_gettime(CLOCK_MONOTONIC); CUDA calls with a pair of CUDA events around each call. */

typedef struct kern_bench_cfg {
    int warmup;        /* untimed calls first (default 1) */
    int min_runs;      /* timed calls at least (default 3) */
    int max_runs;      /* timed calls at most (default 30) */
    int64_t target_ns; /* stop once timed calls sum to this, after min_runs (default 20 ms) */
    int graph_calls;   /* CUDA only: 0 times each call alone (an eager launch, its gap included);
                          N > 0 captures N calls into one CUDA graph and times its replays, each
                          sample a replay's time / N (how engines replay decode passes) */
} kern_bench_cfg;

typedef struct kern_bench_result {
    int runs;          /* timed calls */
    int64_t median_ns; /* of the timed calls */
    int64_t min_ns;
    int64_t max_ns;
    int64_t p10_ns; /* 10th percentile, nearest rank */
    int64_t p90_ns; /* 90th percentile, nearest rank */
    double mean_ns;
    double std_ns; /* sample standard deviation (0 for one run) */
    double flops;  /* kern_shape_flops of the shape */
    double bytes;  /* kern_shape_bytes at the backend's element size */
} kern_bench_result;

/* A driver for one backend. It owns its buffers and reuses them across runs, growing them as
 * shapes grow, so a grid of shapes allocates and fills the big weights (lm_head) once. Memory
 * follows the largest shape timed: lm_head's V x H weights alone are 545 MB in fp32 for
 * Qwen2.5-0.5B (V=151936, H=896). Time the shapes of one op in increasing size for the least
 * reallocation. */
typedef struct kern_bench kern_bench;

/* Fills cfg with the defaults above. */
void kern_bench_cfg_default(kern_bench_cfg *cfg);

/* Creates a driver for `be`. Returns 0 and *out (free with kern_bench_free), or -1 with err set
 * (for KERN_BACKEND_CUDA: built without CUDA, or no device). */
int kern_bench_new(kern_backend be, kern_bench **out, char *err, size_t errlen);
/* Frees a driver and its buffers; NULL is allowed. */
void kern_bench_free(kern_bench *b);

/* Times operator s->op at shape s. cfg NULL means the defaults. Returns 0 and fills *res, or
 * -1 with err set (bad shape, bad cfg, CUDA failure); *res is then unspecified. */
int kern_bench_run(kern_bench *b, const kern_shape *s, const kern_bench_cfg *cfg,
                   kern_bench_result *res, char *err, size_t errlen);

/* Describes the machine the driver times: kern_cpu_describe or kern_cuda_describe.
 * Returns 0, or -1 with err set. */
int kern_bench_describe(const kern_bench *b, char *buf, size_t len, char *err, size_t errlen);

/* Summarises n >= 1 samples (sorted in place) into res's timing fields (flops and bytes are
 * left alone). Exposed so the CUDA path and the tests share one definition of the statistics. */
void kern_bench_stats(int64_t *samples, int n, kern_bench_result *res);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_H */
