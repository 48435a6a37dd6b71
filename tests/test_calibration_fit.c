/* test_calibration_fit.c: fitting and fitted profiles: both forms recover known functions, the
 * held-out split is seeded and 20%, the chosen form is the one with the lower held-out error,
 * the predictor costs a pass with the roofline's layer walk and refuses a mismatched model;
 * the CPU benchmark grid and pass replay on a tiny model; the Vidur import on the shared
 * tables (skipped when ../shared/data/vidur is absent) and on malformed CSVs. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "catalog.h"
#include "measure.h"
#include "profile.h"
#include "roofline.h"
#include "vidur.h"

#include "models_util.h"
#include "test_main.h"

static char tmpdir[256];

/* A GEMM-like time: flat (memory-bound) up to 256 tokens, then linear. */
static double gemm_like(double x)
{
    return 20000 + 30 * x + (x > 256 ? 400 * (x - 256) : 0);
}

static double prefill_like(double q, double c)
{
    return 3000 + 5 * q + 0.02 * (q * c + q * (q + 1) / 2) + 0.5 * (c + q);
}

static cal_profile *synthetic(void)
{
    static const int tokens[] = {1,   2,   4,   8,   16,   32,   64,   96,   128, 192,
                                 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
    cal_profile *p = cal_profile_new("synthetic");
    assert_int_equal(cal_model_find("llama-3-8b", &p->dims), 0);
    snprintf(p->kind, sizeof p->kind, "measured");
    snprintf(p->backend, sizeof p->backend, "cpu");
    snprintf(p->model, sizeof p->model, "llama-3-8b");
    snprintf(p->gpu, sizeof p->gpu, "cpu");
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        if (op == KERN_OP_ATTN_PREFILL || op == KERN_OP_ATTN_DECODE)
            continue;
        for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
            cal_point pt = {.op = op, .x = tokens[i], .t_ns = gemm_like(tokens[i]) * (1 + op)};
            cal_profile_add_point(p, &pt);
        }
    }
    static const int q[] = {16, 64, 128, 256, 512, 1024, 2048}, c[] = {0, 512, 1024, 2048};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 4; j++) {
            cal_point pt = {
                .op = KERN_OP_ATTN_PREFILL, .x = q[i], .y = c[j], .t_ns = prefill_like(q[i], c[j])};
            cal_profile_add_point(p, &pt);
        }
    static const int b[] = {1, 2, 4, 8, 16, 32, 64}, k[] = {16, 256, 512, 1024, 2048, 4096};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++) {
            cal_point pt = {.op = KERN_OP_ATTN_DECODE,
                            .x = b[i],
                            .y = k[j],
                            .t_ns = 4000 + 100 * b[i] + 0.3 * b[i] * k[j]};
            cal_profile_add_point(p, &pt);
        }
    return p;
}

static void test_fit_recovers(void **state)
{
    cal_profile *p = synthetic();
    sim_err err = {{0}};
    if (cal_profile_fit(p, 7, &err))
        fail_msg("%s", err.msg);
    /* exactly-representable functions: the roofline form is (nearly) exact */
    for (int op = 0; op < KERN_OP_COUNT; op++) {
        assert_true(p->has_fit[op]);
        const cal_fit *f = &p->fits[op];
        assert_true(f->n_held >= 1);
        if (!(f->med_ape[CAL_FORM_ROOFLINE] < 0.5))
            fail_msg("%s: roofline form held-out median error %.3f%%, knee %g",
                     cal_profile_op_name(op), f->med_ape[CAL_FORM_ROOFLINE], f->knee);
        double frac = (double)f->n_held / (f->n_held + f->n_train);
        assert_true(frac > 0.15 && frac < 0.25);
    }
    const cal_fit *g = &p->fits[KERN_OP_QKV_PROJ];
    assert_true(g->knee == 256);
    assert_true(fabs(cal_profile_op_ns(p, KERN_OP_QKV_PROJ, 700, 0) - gemm_like(700)) <
                0.01 * gemm_like(700));
    /* beyond the grid: the fitted form continues it */
    assert_true(fabs(cal_profile_op_ns(p, KERN_OP_ATTN_PREFILL, 4096, 4096) -
                     prefill_like(4096, 4096)) < 0.02 * prefill_like(4096, 4096));
    assert_true(p->med_ape < 0.5 && p->p95_ape < 2);
    assert_true(cal_profile_op_ns(p, CAL_PROFILE_OP_EMBED, 1, 0) < 0); /* embed: no fit */

    /* the split is a function of the seed */
    cal_profile *q = synthetic();
    assert_int_equal(cal_profile_fit(q, 7, &err), 0);
    for (int i = 0; i < p->npts; i++)
        assert_int_equal(p->pts[i].held_out, q->pts[i].held_out);
    assert_int_equal(cal_profile_fit(q, 8, &err), 0);
    int differ = 0;
    for (int i = 0; i < p->npts; i++)
        differ += p->pts[i].held_out != q->pts[i].held_out;
    assert_true(differ > 0);
    cal_profile_free(q);
    cal_profile_report(p, stdout);
    cal_profile_free(p);
}

static void test_interp_chosen_for_curves(void **state)
{
    /* a curve no roofline form fits (a cache step): interpolation wins on held-out error */
    cal_profile *p = cal_profile_new("curve");
    for (int x = 1; x <= 4096; x = x < 8 ? x + 1 : x + x / 8) {
        double t = 1000 + 10 * x + 5000 * sin(x / 300.0) + 6000;
        cal_point pt = {.op = KERN_OP_ADD, .x = x, .t_ns = t};
        cal_profile_add_point(p, &pt);
    }
    sim_err err = {{0}};
    assert_int_equal(cal_profile_fit(p, 1, &err), 0);
    const cal_fit *f = &p->fits[KERN_OP_ADD];
    assert_int_equal(f->form, CAL_FORM_INTERP);
    assert_true(f->med_ape[CAL_FORM_INTERP] < f->med_ape[CAL_FORM_ROOFLINE]);
    /* interpolation passes through training points */
    for (int i = 0; i < p->npts; i++)
        if (!p->pts[i].held_out)
            assert_true(fabs(cal_profile_op_ns(p, KERN_OP_ADD, p->pts[i].x, 0) - p->pts[i].t_ns) <
                        1e-6 * p->pts[i].t_ns);
    /* too few points for a form is an error naming the operator */
    cal_profile *tiny = cal_profile_new("tiny");
    cal_point a = {.op = KERN_OP_ATTN_DECODE, .x = 1, .y = 16, .t_ns = 10};
    cal_profile_add_point(tiny, &a);
    assert_int_equal(cal_profile_fit(tiny, 1, &err), -1);
    assert_non_null(strstr(err.msg, "attn_decode"));
    cal_profile_free(tiny);
    cal_profile_free(p);
}

static void test_predictor(void **state)
{
    cal_profile *p = synthetic();
    sim_err err = {{0}};
    assert_int_equal(cal_profile_fit(p, 3, &err), 0);
    eng_model m = p->dims;
    eng_predictor pr;
    if (cal_profile_predictor_new(p, &m, ENG_BF16, 1, NULL, &pr, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(pr.label, "profile synthetic (measured cpu llama-3-8b on cpu)");
    /* one decode of 8 sequences: the layer walk of the fitted operators */
    eng_shape s = {0};
    eng_shape_add_decodes(&s, 8, 8 * 1000);
    s.emit_seqs = 8;
    double want = 0;
    int per_layer[] = {KERN_OP_RMSNORM,  KERN_OP_QKV_PROJ, KERN_OP_ROPE,        KERN_OP_O_PROJ,
                       KERN_OP_ADD,      KERN_OP_RMSNORM,  KERN_OP_MLP_UP_GATE, KERN_OP_MLP_ACT,
                       KERN_OP_MLP_DOWN, KERN_OP_ADD};
    for (int i = 0; i < 10; i++)
        want += cal_profile_op_ns(p, per_layer[i], 8, 0);
    want += cal_profile_op_ns(p, KERN_OP_ATTN_DECODE, 8, 1001);
    want = want * m.layers + cal_profile_op_ns(p, KERN_OP_RMSNORM, 8, 0) +
           cal_profile_op_ns(p, KERN_OP_LM_HEAD, 8, 0);
    double got = (double)pr.ops->iteration_ns(pr.st, &s);
    assert_true(fabs(got - want) < 2);
    /* more work never costs less */
    int64_t prev = 0;
    for (int q = 1; q <= 8192; q += 37) {
        eng_shape t = {0};
        eng_shape_add_prefill(&t, q, 100);
        t.emit_seqs = 1;
        int64_t ns = pr.ops->iteration_ns(pr.st, &t);
        assert_true(ns >= prev);
        prev = ns;
    }
    /* no GPU to roofline and no PCIe given: swaps cost nothing */
    assert_int_equal(pr.ops->transfer_ns(pr.st, 1 << 20), 0);
    cal_predictor_free(&pr);

    /* a different model or tensor parallelism is refused, naming both */
    eng_model other;
    assert_int_equal(cal_model_find("llama-2-7b", &other), 0);
    assert_int_equal(cal_profile_predictor_new(p, &other, ENG_BF16, 1, NULL, &pr, &err), -1);
    assert_non_null(strstr(err.msg, "llama-3-8b"));
    assert_non_null(strstr(err.msg, "llama-2-7b"));
    assert_int_equal(cal_profile_predictor_new(p, &m, ENG_BF16, 2, NULL, &pr, &err), -1);
    assert_non_null(strstr(err.msg, "tensor parallelism"));

    /* a profile of a catalog GPU costs what it lacks (embedding, sampling) by its roofline */
    snprintf(p->gpu, sizeof p->gpu, "a100-80gb");
    char un[128];
    assert_string_equal(cal_profile_unmeasured(p, un, sizeof un), "embed, sample");
    assert_int_equal(cal_profile_predictor_new(p, &m, ENG_FP8, 1, NULL, &pr, &err), 0);
    assert_true((double)pr.ops->iteration_ns(pr.st, &s) > got);
    assert_true(pr.ops->transfer_ns(pr.st, 1 << 20) > 0);
    cal_predictor_free(&pr);
    /* a predictor that owns its profile frees it (the sanitiser checks), on failure too */
    assert_int_equal(cal_profile_predictor_take(p, &other, ENG_BF16, 1, NULL, &pr, &err), -1);
    p = synthetic();
    assert_int_equal(cal_profile_fit(p, 3, &err), 0);
    assert_int_equal(cal_profile_predictor_take(p, &m, ENG_BF16, 1, NULL, &pr, &err), 0);
    assert_true(pr.ops->iteration_ns(pr.st, &s) > 0);
    cal_predictor_free(&pr);
}

static void test_measure_cpu(void **state)
{
    kern_bench *b;
    char msg[256];
    assert_int_equal(kern_bench_new(KERN_BACKEND_CPU, &b, msg, sizeof msg), 0);
    kern_shape *shapes;
    int n = cal_grid_shapes(&tiny_model, CAL_GRID_QUICK, KERN_BACKEND_CPU, &shapes);
    assert_true(n > 150);
    int seen[KERN_OP_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        assert_int_equal(kern_shape_check(&shapes[i], NULL, 0), 0);
        seen[shapes[i].op]++;
    }
    for (int op = 0; op < KERN_OP_COUNT; op++)
        assert_true(seen[op] >= 7);
    kern_shape *full;
    assert_true(cal_grid_shapes(&tiny_model, CAL_GRID_FULL, KERN_BACKEND_CPU, &full) > n);
    free(full);
    cal_grid_kind k;
    assert_int_equal(cal_grid_parse("full", &k), 0);
    assert_int_equal(k, CAL_GRID_FULL);
    assert_int_equal(cal_grid_parse("fast", &k), -1);

    /* the small half of the grid keeps the sanitised build quick */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (shapes[i].tokens <= 512 && shapes[i].context <= 1024)
            shapes[m++] = shapes[i];
    kern_bench_cfg cfg = {.warmup = 0, .min_runs = 1, .max_runs = 1, .target_ns = 1};
    cal_profile *p = cal_profile_new("tiny-cpu");
    p->dims = tiny_model;
    sim_err err = {{0}};
    FILE *progress = tmpfile();
    if (cal_measure_grid(b, &tiny_model, shapes, m, &cfg, p, progress, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(p->npts, m);
    rewind(progress);
    char line[256];
    assert_non_null(fgets(line, sizeof line, progress));
    assert_non_null(strstr(line, "measuring"));
    fclose(progress);
    if (cal_profile_fit(p, 1, &err))
        fail_msg("%s", err.msg);
    assert_true(isfinite(p->med_ape));

    eng_shape s = {0};
    eng_shape_add_prefill(&s, 40, 8);
    eng_shape_add_decodes(&s, 3, 300);
    s.emit_seqs = 4;
    double ns;
    if (cal_measure_pass(b, &tiny_model, &s, &cfg, &ns, &err))
        fail_msg("%s", err.msg);
    assert_true(ns > 0);
    cal_profile_free(p);
    free(shapes);
    kern_bench_free(b);
}

static const char *shared_vidur(void)
{
    static char path[512];
    const char *base = getenv("LLMSIM_SHARED_DIR");
    snprintf(path, sizeof path, "%s/data/vidur/data/profiling", base ? base : LLMSIM_SHARED_DIR);
    return access(path, R_OK) == 0 ? path : NULL;
}

/* A profile (named name, on the a100-80gb) imported from the Vidur tables in mdir for catalog
 * model model at tensor parallelism tp; its reader's note (len bytes) into note. The test fails
 * when the reader refuses. */
static cal_profile *vidur_import(const char *mdir, const eng_model *m, const char *name, int tp,
                                 char *note, size_t len)
{
    sim_err err = {{0}};
    cal_profile *p = cal_profile_new(name);
    snprintf(p->gpu, sizeof p->gpu, "a100-80gb");
    if (cal_vidur_read(mdir, NULL, m, tp, p, note, len, &err))
        fail_msg("%s", err.msg);
    print_message("%s\n", note);
    return p;
}

static void test_vidur_llama3(void **state)
{
    const char *dir = shared_vidur();
    if (!dir) {
        print_message("skipped: no Vidur tables under %s\n", LLMSIM_SHARED_DIR);
        skip();
    }
    char mdir[1024], note[2048];
    sim_err err = {{0}};
    assert_int_equal(cal_vidur_find(dir, "a100", "Meta-Llama-3-8B", mdir, sizeof mdir, &err), 0);
    assert_string_equal(cal_vidur_gpu("a100"), "a100-80gb");
    assert_string_equal(cal_vidur_model("meta-llama/Meta-Llama-3-8B"), "llama-3-8b");
    assert_null(cal_vidur_model("phi-2"));
    eng_model m = catalog_model("llama-3-8b");
    cal_profile *p = vidur_import(mdir, &m, "vidur-a100-llama-3-8b", 1, note, sizeof note);
    assert_int_equal(cal_profile_fit(p, 1, &err), 0);
    cal_profile_report(p, stdout);
    assert_true(p->has_fit[KERN_OP_MLP_UP_GATE] && p->has_fit[CAL_PROFILE_OP_EMBED]);
    assert_false(p->has_fit[KERN_OP_ATTN_PREFILL]);
    assert_true(p->med_ape < 5);
    /* A100 prefill of 2048 tokens of Llama-3-8B: between 80 and 250 ms by these tables */
    eng_predictor pr;
    assert_int_equal(cal_profile_predictor_new(p, &m, ENG_BF16, 1, NULL, &pr, &err), 0);
    eng_shape s = {0};
    eng_shape_add_prefill(&s, 2048, 0);
    s.emit_seqs = 1;
    int64_t t = pr.ops->iteration_ns(pr.st, &s);
    print_message("imported a100 llama-3-8b: prefill 2048 = %.1f ms\n", t / 1e6);
    assert_true(t > 80 * 1000000LL && t < 250 * 1000000LL);
    cal_predictor_free(&pr);

    /* the model's sizes must match the table's */
    eng_model wrong;
    assert_int_equal(cal_model_find("llama-2-7b", &wrong), 0);
    assert_int_equal(cal_vidur_read(mdir, NULL, &wrong, 1, p, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "mlp.csv:2: column"));
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 3, p, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "num_tensor_parallel_workers = 3"));
    cal_profile_free(p);
}

/* Vidur's network tables: a TP2 import reads the DGX A100 all-reduce rows of 2 GPUs and the
 * predictor prices its all-reduces from them (issue 13: the roofline's 8 us latency priced a
 * Llama-70B TP2 decode step's all-reduces at a fraction of the measured NCCL table). */
static void test_vidur_network(void **state)
{
    const char *dir = shared_vidur();
    if (!dir) {
        skip();
    }
    char mdir[1024], note[2048];
    sim_err err = {{0}};
    assert_int_equal(cal_vidur_find(dir, "a100", "Meta-Llama-3-70B", mdir, sizeof mdir, &err), 0);
    eng_model m = catalog_model("llama-3-70b");
    cal_profile *p = vidur_import(mdir, &m, "vidur-a100-llama-3-70b-tp2", 2, note, sizeof note);
    assert_non_null(strstr(note, "network/a100_dgx/all_reduce.csv: 994 rows at 2 GPUs"));
    assert_non_null(strstr(note, "send_recv.csv: 994 rows"));
    assert_int_equal(cal_profile_fit(p, 1, &err), 0);
    assert_true(p->has_fit[CAL_PROFILE_OP_ALLREDUCE] && p->has_fit[CAL_PROFILE_OP_SEND_RECV]);
    assert_string_equal(cal_profile_op_name(CAL_PROFILE_OP_ALLREDUCE), "allreduce");
    char buf[256];
    assert_null(strstr(cal_profile_unmeasured(p, buf, sizeof buf), "allreduce"));
    /* a decode step of 32 sequences: 160 all-reduces of 32 x 8192 x 2 bytes, priced by the
     * table (about 50 us each on a DGX A100 at 512 KB): the step costs at least 160 x 40 us */
    eng_predictor pr;
    assert_int_equal(cal_profile_predictor_new(p, &m, ENG_BF16, 2, NULL, &pr, &err), 0);
    eng_shape s = {0};
    eng_shape_add_decodes(&s, 32, 32 * 1000);
    s.emit_seqs = 32;
    double at = cal_profile_op_ns(p, CAL_PROFILE_OP_ALLREDUCE, 32 * 8192 * 2, 0);
    print_message("allreduce of 512 KB over 2 A100s by the table: %.1f us\n", at / 1e3);
    assert_true(at > 30000 && at < 100000);
    assert_true(pr.ops->iteration_ns(pr.st, &s) > 160 * at);
    cal_predictor_free(&pr);
    /* a single GPU needs no network table and reads none */
    cal_profile *q = cal_profile_new("one");
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 1, q, note, sizeof note, &err), 0);
    assert_null(strstr(note, "all_reduce"));
    assert_false(q->npts > 0 && q->pts[q->npts - 1].op == CAL_PROFILE_OP_ALLREDUCE);
    char buf1[256];
    cal_profile_fit(q, 1, &err);
    assert_null(strstr(cal_profile_unmeasured(q, buf1, sizeof buf1), "allreduce"));
    cal_profile_free(q);
    cal_profile_free(p);
}

static void test_vidur_attention_history(void **state)
{
    const char *dir = shared_vidur();
    if (!dir) {
        skip();
    }
    char mdir[1024], attn[1024], note[2048];
    sim_err err = {{0}};
    snprintf(attn, sizeof attn,
             "%s/../../history/commit-acb95f6_2024-05-08/data/profiling/a100/attention.csv", dir);
    assert_int_equal(cal_vidur_find(dir, "a100", "Meta-Llama-3-70B", mdir, sizeof mdir, &err), 0);
    eng_model m;
    assert_int_equal(cal_model_find("llama-3-70b", &m), 0);
    cal_profile *p = cal_profile_new("vidur-a100-llama-3-70b-tp2");
    if (cal_vidur_read(mdir, attn, &m, 2, p, note, sizeof note, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(cal_profile_fit(p, 1, &err), 0);
    assert_true(p->has_fit[KERN_OP_ATTN_PREFILL] && p->has_fit[KERN_OP_ATTN_DECODE]);
    cal_profile_report(p, stdout);
    assert_true(p->fits[KERN_OP_ATTN_DECODE].med_ape[p->fits[KERN_OP_ATTN_DECODE].form] < 10);
    cal_profile_free(p);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_vidur_bad_csv(void **state)
{
    char dir[400], path[500], mdir[1024], note[256];
    snprintf(dir, sizeof dir, "%s/compute/a100/org/Tiny", tmpdir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/mlp.csv", dir);
    sim_err err = {{0}};
    eng_model m = tiny_model;
    /* missing shape column */
    write_file(path, "time_stats.add.median,n_head,n_kv_head,n_embd,vocab_size,num_tokens,"
                     "num_tensor_parallel_workers\n0.01,4,2,64,256,1,1\n");
    assert_int_equal(cal_vidur_find(tmpdir, "a100", "Tiny", mdir, sizeof mdir, &err), 0);
    cal_profile *p = cal_profile_new("t");
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 1, p, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "mlp.csv:1: missing column n_expanded_embd"));
    /* a malformed number names line and column */
    write_file(path, "time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,"
                     "num_tokens,num_tensor_parallel_workers\n0.01,4,2,64,128,256,1,1\n"
                     "0.02,4,2,64,128,256,x2,1\n");
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 1, p, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "mlp.csv:3: column num_tokens: 'x2' is not a number"));
    /* a short row */
    write_file(path, "time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,"
                     "num_tokens,num_tensor_parallel_workers\n0.01,4,2\n");
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 1, p, note, sizeof note, &err), -1);
    assert_non_null(strstr(err.msg, "mlp.csv:2: 3 fields"));
    /* duplicates are averaged */
    write_file(path, "time_stats.add.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,"
                     "num_tokens,num_tensor_parallel_workers\n0.01,4,2,64,128,256,1,1\n"
                     "0.03,4,2,64,128,256,1,1\n0.05,4,2,64,128,256,2,1\n");
    assert_int_equal(cal_vidur_read(mdir, NULL, &m, 1, p, note, sizeof note, &err), 0);
    assert_int_equal(p->npts, 2);
    assert_true(fabs(p->pts[0].t_ns - 20000) < 1e-6);
    cal_profile_free(p);
    assert_int_equal(cal_vidur_find(tmpdir, "a40", "Tiny", mdir, sizeof mdir, &err), -1);
    assert_non_null(strstr(err.msg, "compute/a40/Tiny/mlp.csv"));
}

LLMSIM_TESTS(tests, test_fit_recovers, test_interp_chosen_for_curves, test_predictor,
             test_measure_cpu, test_vidur_llama3, test_vidur_network, test_vidur_attention_history,
             test_vidur_bad_csv);

int main(void)
{
    return scratch_run_group(tests, tmpdir, "/tmp/llmsim-calfit-XXXXXX");
}
