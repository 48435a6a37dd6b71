/* test_kernels_gpu.c: the CUDA kernels (fp16 and bf16) against the C reference, and the CUDA
 * side of the benchmark driver. Without a device (or in a build without CUDA) it prints
 * "no GPU: skipped" and exits 77, which CTest reports as skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels.h"
#include "kernels_util.h"
#include "test_main.h"

/* fp16 keeps 11 significant bits, bf16 8: the tolerance follows the type. */
static double tol_of(kern_dtype dt)
{
    return dt == KERN_BF16 ? 4e-2 : 8e-3;
}

static void assert_close(const float *got, const float *want, size_t n, double tol,
                         const char *what, kern_dtype dt)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * (1.0 + fabs(want[i]))))
            fail_msg("%s (%s): element %zu is %.6g, expected %.6g", what,
                     dt == KERN_BF16 ? "bf16" : "fp16", i, got[i], want[i]);
}

static const kern_dtype dtypes[] = {KERN_F16, KERN_BF16};
static char err[512];

#define CK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != 0)                                                                           \
            fail_msg("%s: %s", #call, err);                                                        \
    } while (0)

static int setup(void **state)
{
    kern_cuda *c = NULL;
    if (kern_cuda_new(&c, err, sizeof err) != 0) {
        fprintf(stderr, "kern_cuda_new: %s\n", err);
        return -1;
    }
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    kern_cuda_free(*state);
    return 0;
}

static void test_linear(void **state)
{
    kern_cuda *c = *state;
    int m = 19, k = 256, n = 72;
    float *x = rand_vec((size_t)m * k), *w = rand_vec((size_t)n * k);
    float *want = malloc(sizeof(float) * m * n), *got = malloc(sizeof(float) * m * n);
    kern_ref_linear(x, w, want, m, k, n);
    for (int i = 0; i < 2; i++) {
        CK(kern_cuda_linear(c, dtypes[i], x, w, got, m, k, n, err, sizeof err));
        assert_close(got, want, (size_t)m * n, 4 * tol_of(dtypes[i]), "linear", dtypes[i]);
    }
    free(got);
    free(want);
    free(w);
    free(x);
}

/* RMSNorm, add and SiLU-and-mul at one size: the kernels take 128-bit chunks where hidden or inter
 * is a multiple of 8 and scalar elements otherwise; add takes chunks, then a scalar tail. */
static void check_elementwise(kern_cuda *c, int tokens, int hidden, int inter)
{
    size_t nh = (size_t)tokens * hidden, ni = (size_t)tokens * inter;
    size_t nmax = nh > ni ? nh : ni;
    float *x = rand_vec(nh), *w = rand_vec(hidden), *b = rand_vec(nh), *g = rand_vec(2 * ni);
    float *want = malloc(sizeof(float) * nmax), *got = malloc(sizeof(float) * nmax);
    for (int i = 0; i < 2; i++) {
        kern_dtype dt = dtypes[i];
        kern_ref_rmsnorm(x, w, want, tokens, hidden, 1e-6f);
        CK(kern_cuda_rmsnorm(c, dt, x, w, got, tokens, hidden, 1e-6f, err, sizeof err));
        assert_close(got, want, nh, tol_of(dt), "rmsnorm", dt);
        kern_ref_add(x, b, want, nh);
        CK(kern_cuda_add(c, dt, x, b, got, nh, err, sizeof err));
        assert_close(got, want, nh, tol_of(dt), "add", dt);
        kern_ref_silu_mul(g, want, tokens, inter);
        CK(kern_cuda_silu_mul(c, dt, g, got, tokens, inter, err, sizeof err));
        assert_close(got, want, ni, tol_of(dt), "silu_mul", dt);
    }
    free(got);
    free(want);
    free(g);
    free(b);
    free(w);
    free(x);
}

static void test_elementwise(void **state)
{
    check_elementwise(*state, 7, 896, 304);  /* 128-bit paths throughout */
    check_elementwise(*state, 7, 896, 300);  /* silu_mul scalar: inter % 8 = 4 */
    check_elementwise(*state, 3, 1001, 300); /* scalar rows; add: 375 chunks and a tail of 3 */
    check_elementwise(*state, 1, 5, 3);      /* add: no chunk, tail only */
    check_elementwise(*state, 2, 4096, 11008);
}

static void check_rope(kern_cuda *c, int tokens, int heads, int d, const int32_t *pos)
{
    size_t n = (size_t)tokens * heads * d;
    float *x = rand_vec(n), *want = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    for (int i = 0; i < 2; i++) {
        memcpy(want, x, sizeof(float) * n);
        kern_ref_rope(want, pos, tokens, heads, d, 1e6f);
        memcpy(got, x, sizeof(float) * n);
        CK(kern_cuda_rope(c, dtypes[i], got, pos, tokens, heads, d, 1e6f, err, sizeof err));
        assert_close(got, want, n, tol_of(dtypes[i]), "rope", dtypes[i]);
    }
    free(got);
    free(want);
    free(x);
}

static void test_rope(void **state)
{
    int32_t pos[6] = {0, 1, 2, 31, 500, 4095};
    check_rope(*state, 6, 5, 64, pos); /* 128-bit: d % 16 == 0 */
    check_rope(*state, 6, 32, 128, pos);
    check_rope(*state, 6, 3, 24, pos); /* scalar: d % 16 = 8 */
    check_rope(*state, 6, 1, 6, pos);
}

static void check_prefill(kern_cuda *c, int chunk, int context, int nh, int nkv, int d)
{
    float scale = 1.0f / sqrtf((float)d);
    kattn a;
    size_t nq = kattn_prefill(&a, chunk, context, nh, nkv, d);
    kern_ref_attn_prefill(a.q, a.k, a.v, a.want, chunk, context, nh, nkv, d, scale);
    for (int i = 0; i < 2; i++) {
        CK(kern_cuda_attn_prefill(c, dtypes[i], a.q, a.k, a.v, a.got, chunk, context, nh, nkv, d,
                                  scale, err, sizeof err));
        assert_close(a.got, a.want, nq, tol_of(dtypes[i]), "attn_prefill", dtypes[i]);
    }
    kattn_free(&a);
}

/* head_dim 64 and 128 run on tensor cores in tiles of 64 query rows and 64 keys; the others on
 * the generic kernel. */
static void test_prefill(void **state)
{
    check_prefill(*state, 70, 45, 14, 2, 64);  /* GQA 7; a partial row tile and key tile */
    check_prefill(*state, 1, 300, 8, 8, 128);  /* one row: a warp of 16 with 15 past the chunk */
    check_prefill(*state, 64, 64, 4, 4, 64);   /* tiles exactly full */
    check_prefill(*state, 130, 77, 8, 2, 128); /* GQA 4; three row tiles, the last of 2 rows */
    check_prefill(*state, 200, 0, 8, 1, 128);  /* GQA 8, no context: masks on the diagonal */
    check_prefill(*state, 17, 1000, 4, 1, 64); /* long context, a short chunk */
    check_prefill(*state, 129, 3, 2, 2, 64);   /* a row tile holding one row */
    /* the generic kernel */
    check_prefill(*state, 37, 0, 4, 2, 16);
    check_prefill(*state, 33, 31, 4, 1, 256);
    check_prefill(*state, 9, 2, 6, 3, 24); /* head_dim not a multiple of 32 */
}

/* Sequence lengths: `len` for every one when len > 0, else spread over 1 .. maxlen. */
static void check_decode(kern_cuda *c, int batch, int nh, int nkv, int d, int bs, int maxlen,
                         int len)
{
    float scale = 1.0f / sqrtf((float)d);
    int max_blocks = (maxlen + bs - 1) / bs, num_blocks = batch * max_blocks + 5;
    size_t nq = (size_t)batch * nh * d;
    kattn k;
    kattn_alloc(&k, nq, (size_t)num_blocks * bs * nkv * d, (size_t)batch * max_blocks, batch);
    for (int b = 0; b < batch; b++) { /* lengths 1 .. maxlen, blocks scattered backwards */
        k.lens[b] = len > 0 ? len : 1 + (int)((uint32_t)(b * 7919) % (uint32_t)maxlen);
        for (int j = 0; j < max_blocks; j++)
            k.tables[b * max_blocks + j] = num_blocks - 1 - (j * batch + b);
    }
    kern_ref_attn_decode(k.q, k.k, k.v, k.tables, max_blocks, k.lens, k.want, batch, nh, nkv, d, bs,
                         scale);
    for (int i = 0; i < 2; i++) {
        CK(kern_cuda_attn_decode(c, dtypes[i], k.q, k.k, k.v, num_blocks, k.tables, max_blocks,
                                 k.lens, k.got, batch, nh, nkv, d, bs, scale, err, sizeof err));
        assert_close(k.got, k.want, nq, tol_of(dtypes[i]), "attn_decode", dtypes[i]);
    }
    kattn_free(&k);
}

/* Few sequences and kv heads with a long context: the context is split across CTAs (slices of at
 * least 256 keys) and a second kernel combines them; mixed lengths leave some slices empty. */
static void test_decode(void **state)
{
    check_decode(*state, 9, 14, 2, 64, 16, 300, 0);
    check_decode(*state, 3, 32, 8, 128, 16, 1000, 0);
    check_decode(*state, 4, 16, 1, 32, 8, 65, 0);       /* GQA 16 */
    check_decode(*state, 1, 8, 2, 128, 16, 5000, 5000); /* split */
    check_decode(*state, 1, 8, 1, 64, 16, 200, 200);    /* short: one slice */
    check_decode(*state, 2, 28, 4, 64, 32, 3001, 3001); /* GQA 7, split, a partial last tile */
    check_decode(*state, 1, 4, 4, 128, 16, 777, 777);   /* GQA 1 */
    check_decode(*state, 2, 64, 2, 128, 16, 2500, 0);   /* GQA 32: 4 output chunks a thread */
    check_decode(*state, 1, 2, 1, 20, 16, 40, 40);      /* head_dim % 8 != 0: generic kernel */
}

static void test_decode_rejects_bad_table(void **state)
{
    float q[64] = {0}, kc[16 * 64] = {0}, o[64];
    int32_t table[1] = {3}, lens[1] = {4};
    assert_int_equal(kern_cuda_attn_decode(*state, KERN_F16, q, kc, kc, 1, table, 1, lens, o, 1, 1,
                                           1, 64, 16, 0.125f, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "block"));
}

static void test_bench_cuda(void **state)
{
    const kern_dims qwen = {.hidden = 896,
                            .heads = 14,
                            .kv_heads = 2,
                            .head_dim = 64,
                            .intermediate = 4864,
                            .vocab = 151936};
    char desc[512];
    kern_bench *b;
    CK(kern_bench_new(KERN_BACKEND_CUDA, &b, err, sizeof err));
    CK(kern_bench_describe(b, desc, sizeof desc, err, sizeof err));
    assert_non_null(strstr(desc, "cuda: "));
    printf("%s\n", desc);
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        kern_shape s = {.op = (kern_op)op,
                        .dims = qwen,
                        .tokens = 64,
                        .context = 256,
                        .batch = 8,
                        .dtype = op % 2 ? KERN_BF16 : KERN_F16};
        kern_bench_result r;
        CK(kern_bench_run(b, &s, NULL, &r, err, sizeof err));
        assert_true(r.min_ns > 0 && r.min_ns <= r.median_ns && r.median_ns <= r.max_ns);
        printf("  %-12s median %8lld ns\n", kern_op_name((kern_op)op), (long long)r.median_ns);
    }
    kern_bench_free(b);
}

/* Every operator timed as CUDA-graph replays of 10 captured calls: each point a replay / 10,
 * never above the eager call's time by more than noise (a graph saves the launch gaps). */
static void test_bench_cuda_graph(void **state)
{
    const kern_dims d = {.hidden = 1024,
                         .heads = 16,
                         .kv_heads = 4,
                         .head_dim = 64,
                         .intermediate = 2816,
                         .vocab = 32000};
    kern_bench *b;
    CK(kern_bench_new(KERN_BACKEND_CUDA, &b, err, sizeof err));
    kern_bench_cfg eager, graph;
    kern_bench_cfg_default(&eager);
    eager.min_runs = 10;
    graph = eager;
    graph.graph_calls = 10;
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        kern_shape s = {.op = (kern_op)op,
                        .dims = d,
                        .tokens = 16,
                        .context = 512,
                        .batch = 4,
                        .dtype = KERN_BF16};
        kern_bench_result e, g;
        CK(kern_bench_run(b, &s, &eager, &e, err, sizeof err));
        CK(kern_bench_run(b, &s, &graph, &g, err, sizeof err));
        printf("  %-12s eager %8lld ns, graph %8lld ns\n", kern_op_name((kern_op)op),
               (long long)e.median_ns, (long long)g.median_ns);
        assert_true(g.median_ns > 0 && g.median_ns <= e.median_ns * 1.5);
    }
    kern_bench_free(b);
}

LLMSIM_TESTS(tests, test_linear, test_elementwise, test_rope, test_prefill, test_decode,
             test_decode_rejects_bad_table, test_bench_cuda, test_bench_cuda_graph);

int main(void)
{
    if (!kern_cuda_available()) {
        printf("no GPU: skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
