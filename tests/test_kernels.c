/* test_kernels.c: the CPU backend and the C reference against computations done the long way
 * (a full score matrix for attention, textbook formulas for the rest), the paged decode against
 * contiguous KV with scrambled block tables, and the microbenchmark driver on small shapes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"
#include "kernels_util.h"
#include "test_main.h"

static void assert_close(const float *got, const float *want, size_t n, double tol,
                         const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= tol * (1.0 + fabs(want[i])))) {
            fail_msg("%s: element %zu is %.7g, expected %.7g", what, i, got[i], want[i]);
        }
    }
}

/* got's n floats set to init's (NULL: zeros) before a kernel writes them. */
static void reset_out(float *got, const float *init, size_t n)
{
    if (init)
        memcpy(got, init, n * sizeof(float));
    else
        memset(got, 0, n * sizeof(float));
}

/* Kernel op in both backends on the arguments after tolerances, each writing got (n floats, reset
 * to init first): the reference's result must be want within tol_ref, the CPU backend's within
 * tol_cpu. */
#define CHECK_BOTH(op, got, init, want, n, tol_ref, tol_cpu, ...)                                  \
    do {                                                                                           \
        reset_out(got, init, n);                                                                   \
        kern_ref_##op(__VA_ARGS__);                                                                \
        assert_close(got, want, n, tol_ref, "ref " #op);                                           \
        reset_out(got, init, n);                                                                   \
        kern_cpu_##op(__VA_ARGS__);                                                                \
        assert_close(got, want, n, tol_cpu, "cpu " #op);                                           \
    } while (0)

/* Causal attention the long way: the whole [nh][chunk][total] score matrix, masked, softmaxed,
 * multiplied by V. Query i is at position context + i; head h reads kv head h / (nh / nkv). */
static void attn_long_way(const float *q, const float *k, const float *v, float *o, int chunk,
                          int context, int nh, int nkv, int d, float scale)
{
    int total = context + chunk;
    double *S = malloc(sizeof(double) * (size_t)nh * chunk * total);
    assert_non_null(S);
    for (int h = 0; h < nh; h++)
        for (int i = 0; i < chunk; i++)
            for (int j = 0; j < total; j++) {
                double *sij = &S[((size_t)h * chunk + i) * total + j];
                if (j > context + i) {
                    *sij = -INFINITY;
                    continue;
                }
                double dot = 0.0;
                for (int c = 0; c < d; c++)
                    dot += (double)q[((size_t)i * nh + h) * d + c] *
                           k[((size_t)j * nkv + h / (nh / nkv)) * d + c];
                *sij = dot * scale;
            }
    for (int h = 0; h < nh; h++)
        for (int i = 0; i < chunk; i++) {
            double *row = &S[((size_t)h * chunk + i) * total], mx = -INFINITY, sum = 0.0;
            for (int j = 0; j < total; j++)
                mx = row[j] > mx ? row[j] : mx;
            for (int j = 0; j < total; j++)
                sum += (row[j] = exp(row[j] - mx));
            for (int c = 0; c < d; c++) {
                double acc = 0.0;
                for (int j = 0; j < total; j++)
                    acc += row[j] / sum * v[((size_t)j * nkv + h / (nh / nkv)) * d + c];
                o[((size_t)i * nh + h) * d + c] = (float)acc;
            }
        }
    free(S);
}

static void check_prefill(int chunk, int context, int nh, int nkv, int d)
{
    float scale = 1.0f / sqrtf((float)d);
    kattn a;
    size_t no = kattn_prefill(&a, chunk, context, nh, nkv, d);
    attn_long_way(a.q, a.k, a.v, a.want, chunk, context, nh, nkv, d, scale);
    CHECK_BOTH(attn_prefill, a.got, NULL, a.want, no, 1e-5, 1e-4, a.q, a.k, a.v, a.got, chunk,
               context, nh, nkv, d, scale);
    kattn_free(&a);
}

static void test_prefill(void **state)
{
    check_prefill(37, 0, 4, 2, 16);   /* GQA, no prior context */
    check_prefill(70, 45, 6, 2, 32);  /* GQA, chunk after a context, tiles cross the diagonal */
    check_prefill(1, 130, 14, 2, 64); /* one token after a long context, Qwen2.5-0.5B heads */
    check_prefill(65, 64, 3, 3, 8);   /* plain multi-head, chunk one past a tile */
    check_prefill(5, 3, 8, 1, 128);   /* multi-query */
}

/* Decode over a paged cache equals the last row of a prefill over contiguous K/V. */
static void check_decode(int batch, int nh, int nkv, int d, int bs, const int *lens)
{
    float scale = 1.0f / sqrtf((float)d);
    int max_blocks = 0, used = 0;
    for (int b = 0; b < batch; b++) {
        int nb = (lens[b] + bs - 1) / bs;
        max_blocks = nb > max_blocks ? nb : max_blocks;
        used += nb;
    }
    int num_blocks = used + 3; /* a few blocks no table points at */
    size_t row = (size_t)nkv * d, qn = (size_t)batch * nh * d;
    kattn c;
    kattn_alloc(&c, qn, num_blocks * row * bs, (size_t)batch * max_blocks, batch);
    int32_t *perm = malloc(sizeof(int32_t) * num_blocks);
    for (int i = 0; i < num_blocks; i++)
        perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) { /* Fisher-Yates: scramble the block order */
        rng_state = rng_state * 1664525u + 1013904223u;
        int j = (int)((rng_state >> 8) % (uint32_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int next = 0;
    for (int b = 0; b < batch; b++) {
        int len = lens[b];
        c.lens[b] = len;
        float *k = malloc(sizeof(float) * len * row), *v = malloc(sizeof(float) * len * row);
        for (int j = 0; j < (len + bs - 1) / bs; j++)
            c.tables[(size_t)b * max_blocks + j] = perm[next++];
        for (int p = 0; p < len; p++) { /* contiguous copy of what the table points at */
            size_t src = ((size_t)c.tables[(size_t)b * max_blocks + p / bs] * bs + p % bs) * row;
            memcpy(k + p * row, c.k + src, row * sizeof(float));
            memcpy(v + p * row, c.v + src, row * sizeof(float));
        }
        attn_long_way(c.q + (size_t)b * nh * d, k, v, c.want + (size_t)b * nh * d, 1, len - 1, nh,
                      nkv, d, scale);
        free(v);
        free(k);
    }
    CHECK_BOTH(attn_decode, c.got, NULL, c.want, qn, 1e-5, 1e-4, c.q, c.k, c.v, c.tables,
               max_blocks, c.lens, c.got, batch, nh, nkv, d, bs, scale);
    free(perm);
    kattn_free(&c);
}

static void test_decode(void **state)
{
    const int lens1[] = {1, 16, 17, 200, 64};
    check_decode(5, 14, 2, 64, 16, lens1);
    const int lens2[] = {33, 5, 130};
    check_decode(3, 8, 8, 32, 8, lens2);
    const int lens3[] = {300};
    check_decode(1, 4, 1, 16, 16, lens3);
}

static void test_linear(void **state)
{
    const int shapes[][3] = {{1, 7, 5}, {13, 64, 33}, {32, 96, 130}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        float *x = rand_vec((size_t)m * k), *w = rand_vec((size_t)n * k);
        float *want = malloc(sizeof(float) * m * n), *got = malloc(sizeof(float) * m * n);
        for (int i = 0; i < m; i++) /* the triple loop */
            for (int j = 0; j < n; j++) {
                double acc = 0.0;
                for (int p = 0; p < k; p++)
                    acc += (double)x[i * k + p] * w[j * k + p];
                want[i * n + j] = (float)acc;
            }
        CHECK_BOTH(linear, got, NULL, want, (size_t)m * n, 1e-6, 1e-4, x, w, got, m, k, n);
        free(got);
        free(want);
        free(w);
        free(x);
    }
}

static void test_rmsnorm(void **state)
{
    int tokens = 5, hidden = 96;
    float eps = 1e-6f, *x = rand_vec((size_t)tokens * hidden), *w = rand_vec(hidden);
    float want[5 * 96], got[5 * 96];
    for (int t = 0; t < tokens; t++) {
        double ms = 0.0;
        for (int i = 0; i < hidden; i++)
            ms += (double)x[t * hidden + i] * x[t * hidden + i] / hidden;
        for (int i = 0; i < hidden; i++)
            want[t * hidden + i] = (float)(x[t * hidden + i] / sqrt(ms + eps) * w[i]);
    }
    CHECK_BOTH(rmsnorm, got, NULL, want, (size_t)tokens * hidden, 1e-6, 1e-5, x, w, got, tokens,
               hidden, eps);
    free(w);
    free(x);
}

static void test_silu_mul_and_add(void **state)
{
    int tokens = 3, inter = 50;
    float *x = rand_vec((size_t)tokens * 2 * inter), want[150], got[150];
    for (int t = 0; t < tokens; t++)
        for (int i = 0; i < inter; i++) {
            double g = 4.0 * x[t * 2 * inter + i], u = x[t * 2 * inter + inter + i];
            x[t * 2 * inter + i] = (float)g; /* wider range so silu's tails are exercised */
            want[t * inter + i] = (float)(g * (1.0 / (1.0 + exp(-g))) * u);
        }
    CHECK_BOTH(silu_mul, got, NULL, want, 150, 1e-6, 1e-5, x, got, tokens, inter);
    float *a = rand_vec(150), *b = rand_vec(150);
    for (int i = 0; i < 150; i++)
        want[i] = a[i] + b[i];
    CHECK_BOTH(add, got, NULL, want, 150, 0.0, 0.0, a, b, got, 150);
    free(b);
    free(a);
    free(x);
}

static void test_rope(void **state)
{
    int tokens = 4, heads = 3, d = 16;
    int32_t pos[4] = {0, 1, 7, 1000};
    float theta = 10000.0f, *x = rand_vec((size_t)tokens * heads * d);
    float want[4 * 3 * 16], got[4 * 3 * 16];
    for (int t = 0; t < tokens; t++) /* pair (i, i + d/2) as a complex number times e^{i angle} */
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < d / 2; i++) {
                const float *v = x + (t * heads + h) * d;
                double ang = pos[t] / pow(theta, (2.0 * i) / d);
                double re = v[i], im = v[i + d / 2];
                want[(t * heads + h) * d + i] = (float)(re * cos(ang) - im * sin(ang));
                want[(t * heads + h) * d + i + d / 2] = (float)(re * sin(ang) + im * cos(ang));
            }
    CHECK_BOTH(rope, got, x, want, sizeof got / sizeof got[0], 1e-5, 1e-4, got, pos, tokens, heads,
               d, theta);
    free(x);
}

static void test_op_names(void **state)
{
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        const char *name = kern_op_name((kern_op)op);
        assert_string_not_equal(name, "?");
        assert_int_equal(kern_op_parse(name), op);
    }
    assert_string_equal(kern_op_name(KERN_OP_ATTN_DECODE), "attn_decode");
    assert_string_equal(kern_op_name(KERN_OP_COUNT), "?");
    assert_int_equal(kern_op_parse("softmax"), -1);
    assert_int_equal(kern_op_parse(NULL), -1);
}

static const kern_dims small = {
    .hidden = 64, .heads = 4, .kv_heads = 2, .head_dim = 16, .intermediate = 96, .vocab = 200};

static void test_shape_check(void **state)
{
    char err[256];
    kern_shape s = {.op = KERN_OP_QKV_PROJ, .dims = small, .tokens = 4};
    assert_int_equal(kern_shape_check(&s, err, sizeof err), 0);
    s.tokens = 0;
    assert_int_equal(kern_shape_check(&s, err, sizeof err), -1);
    assert_non_null(strstr(err, "qkv_proj"));
    s.tokens = 4;
    s.dims.kv_heads = 3;
    assert_int_equal(kern_shape_check(&s, err, sizeof err), -1);
    assert_non_null(strstr(err, "kv_heads"));
    s.dims = small;
    s.op = KERN_OP_ATTN_DECODE;
    s.batch = 0;
    s.context = 10;
    assert_int_equal(kern_shape_check(&s, NULL, 0), -1);
    s.op = KERN_OP_LM_HEAD;
    s.tokens = 1 << 20;
    s.dims.vocab = 1 << 20;
    assert_int_equal(kern_shape_check(&s, err, sizeof err), -1);
    assert_non_null(strstr(err, "too large"));
    s = (kern_shape){.op = KERN_OP_ATTN_PREFILL, .dims = small, .tokens = 8, .context = 8};
    assert_true(kern_shape_flops(&s) == 4.0 * 64 * (8 * 8 + 8 * 9 / 2));
    assert_true(kern_shape_bytes(&s, 2) > 0.0);
}

static void test_bench_stats(void **state)
{
    int64_t v[10] = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    kern_bench_result r;
    kern_bench_stats(v, 10, &r);
    assert_int_equal(r.runs, 10);
    assert_int_equal(r.min_ns, 1);
    assert_int_equal(r.max_ns, 10);
    assert_int_equal(r.median_ns, 5); /* (5 + 6) / 2 in integer ns */
    assert_int_equal(r.p10_ns, 1);
    assert_int_equal(r.p90_ns, 9);
    assert_true(fabs(r.mean_ns - 5.5) < 1e-12);
    assert_true(fabs(r.std_ns - sqrt(82.5 / 9.0)) < 1e-9);
    int64_t one = 42;
    kern_bench_stats(&one, 1, &r);
    assert_int_equal(r.median_ns, 42);
    assert_true(r.std_ns == 0.0);
}

static void test_bench_cpu(void **state)
{
    char err[256], desc[512];
    kern_bench *b;
    assert_int_equal(kern_bench_new(KERN_BACKEND_CPU, &b, err, sizeof err), 0);
    assert_int_equal(kern_bench_describe(b, desc, sizeof desc, err, sizeof err), 0);
    assert_non_null(strstr(desc, "cpu: "));
    assert_non_null(strstr(desc, "blas: "));
    kern_bench_cfg cfg;
    kern_bench_cfg_default(&cfg);
    cfg.max_runs = 5;
    cfg.target_ns = 2000000;
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        kern_shape s = {.op = (kern_op)op, .dims = small, .tokens = 8, .context = 20, .batch = 3};
        kern_bench_result r;
        if (kern_bench_run(b, &s, &cfg, &r, err, sizeof err) != 0)
            fail_msg("%s: %s", kern_op_name((kern_op)op), err);
        assert_true(r.runs >= cfg.min_runs && r.runs <= cfg.max_runs);
        assert_true(r.min_ns > 0);
        assert_true(r.min_ns <= r.p10_ns && r.p10_ns <= r.median_ns);
        assert_true(r.median_ns <= r.p90_ns && r.p90_ns <= r.max_ns);
        assert_true(r.flops > 0.0 && r.bytes > 0.0);
    }
    kern_shape bad = {.op = KERN_OP_ROPE, .dims = small, .tokens = -1};
    kern_bench_result r;
    assert_int_equal(kern_bench_run(b, &bad, NULL, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "rope"));
    cfg.min_runs = 0;
    bad.tokens = 1;
    assert_int_equal(kern_bench_run(b, &bad, &cfg, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "min_runs"));
    /* graph timing is the CUDA backend's */
    kern_bench_cfg_default(&cfg);
    cfg.graph_calls = 4;
    assert_int_equal(kern_bench_run(b, &bad, &cfg, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "graph timing"));
    kern_bench_free(b);
    kern_bench_free(NULL);
}

static void test_cuda_absent_is_an_error_not_a_crash(void **state)
{
    char err[256] = "", desc[64];
    if (kern_cuda_available())
        skip();                         /* covered by test_kernels_gpu */
    kern_bench *b = (kern_bench *)&err; /* must be overwritten with NULL */
    assert_int_equal(kern_bench_new(KERN_BACKEND_CUDA, &b, err, sizeof err), -1);
    assert_null(b);
    assert_true(strlen(err) > 0);
    assert_int_equal(kern_cuda_describe(desc, sizeof desc, err, sizeof err), -1);
}

/* When the CUDA library cannot be opened (moved, or its CUDA runtime missing), the backend says
 * so: no device, and errors naming the reason. The library is opened once per process, so the
 * check runs in a fresh one: this program again, with --probe-missing-cuda. */
static int probe_missing_cuda(void)
{
    char err[512] = "";
    kern_cuda *c = (kern_cuda *)err;
    int ok = kern_cuda_available() == 0 && kern_cuda_new(&c, err, sizeof err) == -1 && c == NULL &&
             (strstr(err, "not loadable") != NULL || strstr(err, "built without CUDA") != NULL);
    if (!ok)
        fprintf(stderr, "unexpected: %s\n", err);
    kern_cuda_free(NULL);
    return ok ? 0 : 1;
}

static void test_cuda_library_missing(void **state)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("LLMSIM_CUDA_LIB", "/nonexistent/libllmsim_cuda.so", 1);
        execl("/proc/self/exe", "test_kernels", "--probe-missing-cuda", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

LLMSIM_TESTS(tests, test_prefill, test_decode, test_linear, test_rmsnorm, test_silu_mul_and_add,
             test_rope, test_op_names, test_shape_check, test_bench_stats, test_bench_cpu,
             test_cuda_absent_is_an_error_not_a_crash, test_cuda_library_missing);

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe-missing-cuda") == 0)
        return probe_missing_cuda();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
