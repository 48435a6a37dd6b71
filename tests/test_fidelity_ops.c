/* test_fidelity_ops.c: the roofline's per-operator times against the measured points of the
 * A100 tables Vidur publishes (development data, read in place from ../shared/data/vidur):
 * every operator of mlp.csv for every model and tensor-parallel degree there, attention from
 * the historical attention.csv (Llama-2-70B's shape at TP2, FlashAttention backend), and the
 * NCCL all-reduce of the DGX A100 network table. Prints, per operator, the rows, median
 * |error|, p90, worst and signed median (error = predicted / measured - 1), and checks the
 * targets of issue 13: median |error| over every point at most 6%.
 * Exits 77 (skipped) when the tables are absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <math.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "kernels.h"
#include "profile.h"
#include "roofline.h"
#include "vidur.h"

#include "models_util.h"

static char root[600];

/* Signed relative errors of one group. */
typedef struct errs {
    char name[48];
    double *v;
    int n, cap;
} errs;

#define NGROUPS 16
static errs groups[NGROUPS];
static int ngroups;

static errs *group(const char *name)
{
    for (int i = 0; i < ngroups; i++)
        if (strcmp(groups[i].name, name) == 0)
            return &groups[i];
    assert_true(ngroups < NGROUPS);
    errs *g = &groups[ngroups++];
    snprintf(g->name, sizeof g->name, "%s", name);
    return g;
}

static void add(errs *g, double e)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        g->v = realloc(g->v, (size_t)g->cap * sizeof *g->v);
        assert_non_null(g->v);
    }
    g->v[g->n++] = e;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median |e|, p90 |e|, worst |e| and signed median of n errors. */
static void stats(const double *v, int n, double out[4])
{
    double *a = malloc((size_t)n * sizeof *a), *s = malloc((size_t)n * sizeof *s);
    for (int i = 0; i < n; i++) {
        a[i] = fabs(v[i]);
        s[i] = v[i];
    }
    qsort(a, (size_t)n, sizeof *a, cmp_dbl);
    qsort(s, (size_t)n, sizeof *s, cmp_dbl);
    int k90 = (int)ceil(0.9 * n) - 1;
    out[0] = a[n / 2];
    out[1] = a[k90 < 0 ? 0 : k90];
    out[2] = a[n - 1];
    out[3] = s[n / 2];
    free(a);
    free(s);
}

/* The model of a Vidur model directory: the sizes in the first row of its mlp.csv (the
 * Llama-2 tables pad the vocabulary to 32768, so the catalog's entry would not match). */
static int model_of(const char *dir, const char *name, eng_model *m)
{
    char path[1600], line[8192], hdr[8192];
    snprintf(path, sizeof path, "%s/mlp.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(hdr, sizeof hdr, f) || !fgets(line, sizeof line, f)) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%.60s", name);
    char *hs = NULL, *ls = NULL;
    char *h = strtok_r(hdr, ",\n", &hs), *v = strtok_r(line, ",\n", &ls);
    for (; h && v; h = strtok_r(NULL, ",\n", &hs), v = strtok_r(NULL, ",\n", &ls)) {
        if (strcmp(h, "n_embd") == 0)
            m->hidden = atoi(v);
        else if (strcmp(h, "n_head") == 0)
            m->heads = atoi(v);
        else if (strcmp(h, "n_kv_head") == 0)
            m->kv_heads = atoi(v);
        else if (strcmp(h, "n_expanded_embd") == 0)
            m->intermediate = atoi(v);
        else if (strcmp(h, "vocab_size") == 0)
            m->vocab = atoi(v);
        else if (strcmp(h, "use_gated_mlp") == 0)
            m->gated_mlp = strcmp(v, "True") == 0;
    }
    m->layers = 32;
    m->head_dim = m->heads ? m->hidden / m->heads : 0;
    m->max_context = 4096;
    m->weight_dtype = m->act_dtype = m->kv_dtype = ENG_FP16;
    return m->hidden > 0 && m->heads > 0 && m->kv_heads > 0 && m->intermediate > 0 ? 0 : -1;
}

static eng_predictor predictor_on(const char *gpu, const eng_model *m, int tp)
{
    cal_serving sv = cal_serving_tp(ENG_FP16, tp);
    return roofline_of(m, gpu, &sv);
}

static eng_predictor predictor(const eng_model *m, int tp)
{
    return predictor_on("a100-80gb", m, tp);
}

/* Every point of a profile against the roofline; returns the points compared. */
static int compare(const cal_profile *pr, const eng_predictor *p)
{
    int n = 0;
    for (int i = 0; i < pr->npts; i++) {
        const cal_point *pt = &pr->pts[i];
        if (pt->op >= CAL_PROFILE_OP_ALLREDUCE)
            continue; /* the network table is compared on its own, below */
        n++;
        double t = cal_roofline_point_ns(p, pt->op, pt->x, pt->y);
        assert_true(t > 0);
        add(group(cal_profile_op_name(pt->op)), t / pt->t_ns - 1);
    }
    return n;
}

static void compute_tables(void)
{
    char gdir[700];
    snprintf(gdir, sizeof gdir, "%s/data/profiling/compute/a100", root);
    DIR *d = opendir(gdir);
    assert_non_null(d);
    struct dirent *org;
    while ((org = readdir(d))) {
        if (org->d_name[0] == '.')
            continue;
        char odir[1000];
        snprintf(odir, sizeof odir, "%s/%s", gdir, org->d_name);
        DIR *od = opendir(odir);
        if (!od)
            continue;
        struct dirent *md;
        while ((md = readdir(od))) {
            if (md->d_name[0] == '.')
                continue;
            char mdir[1400];
            eng_model m;
            snprintf(mdir, sizeof mdir, "%s/%s", odir, md->d_name);
            if (model_of(mdir, md->d_name, &m) != 0)
                continue;
            for (int tp = 1; tp <= 8; tp *= 2) {
                if (m.heads % tp || m.intermediate % tp || (m.kv_heads % tp && tp % m.kv_heads))
                    continue;
                cal_profile *pr = cal_profile_new("v");
                char note[600];
                sim_err err = {{0}};
                if (cal_vidur_read(mdir, NULL, &m, tp, pr, note, sizeof note, &err) == 0) {
                    eng_predictor p = predictor(&m, tp);
                    int n = compare(pr, &p);
                    print_message("%-28s tp%d: %d points\n", md->d_name, tp, n);
                    cal_predictor_free(&p);
                }
                cal_profile_free(pr);
            }
        }
        closedir(od);
    }
    closedir(d);
}

static void attention_table(void)
{
    char mdir[800], attn[800], note[600];
    snprintf(mdir, sizeof mdir, "%s/data/profiling/compute/a100/meta-llama/Llama-2-70b-hf", root);
    snprintf(attn, sizeof attn,
             "%s/history/commit-acb95f6_2024-05-08/data/profiling/a100/attention.csv", root);
    if (access(attn, R_OK) != 0)
        return;
    eng_model m;
    assert_int_equal(model_of(mdir, "llama-2-70b", &m), 0);
    cal_profile *pr = cal_profile_new("a");
    sim_err err = {{0}};
    if (cal_vidur_read(mdir, attn, &m, 2, pr, note, sizeof note, &err) != 0)
        fail_msg("%s", err.msg);
    eng_predictor p = predictor(&m, 2);
    int n = 0;
    for (int i = 0; i < pr->npts; i++) {
        const cal_point *pt = &pr->pts[i];
        if (pt->op != KERN_OP_ATTN_PREFILL && pt->op != KERN_OP_ATTN_DECODE)
            continue;
        add(group(cal_profile_op_name(pt->op)),
            cal_roofline_point_ns(&p, pt->op, pt->x, pt->y) / pt->t_ns - 1);
        n++;
    }
    print_message("attention.csv (llama-2-70b tp2): %d points\n", n);
    cal_predictor_free(&p);
    cal_profile_free(pr);
}

/* NCCL all-reduce of the DGX A100 table, rows within one node (num_workers = devices_per_node):
 * `size` is bytes (Vidur turns it into tokens as size / hidden / 2). */
static void network_table(void)
{
    char path[800];
    snprintf(path, sizeof path, "%s/data/profiling/network/a100_dgx/all_reduce.csv", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    int c_med = -1, c_w = -1, c_dev = -1, c_size = -1, col = 0, n = 0;
    assert_non_null(fgets(line, sizeof line, f));
    line[strcspn(line, "\r\n")] = '\0';
    for (char *t = line; t; col++) { /* the first name (the index column) is empty */
        char *comma = strchr(t, ',');
        if (comma)
            *comma = '\0';
        c_med = strcmp(t, "time_stats.all_reduce.median") == 0 ? col : c_med;
        c_w = strcmp(t, "num_workers") == 0 ? col : c_w;
        c_dev = strcmp(t, "devices_per_node") == 0 ? col : c_dev;
        c_size = strcmp(t, "size") == 0 ? col : c_size;
        t = comma ? comma + 1 : NULL;
    }
    assert_true(c_med >= 0 && c_w >= 0 && c_dev >= 0 && c_size >= 0);
    eng_model m;
    assert_int_equal(cal_model_find("llama-2-70b", &m), 0);
    eng_predictor ps[9] = {{0}};
    while (fgets(line, sizeof line, f)) {
        double v[64] = {0};
        int k = 0;
        /* the first column (the index) may be empty: split by hand */
        for (char *p = line; k < 64; k++) {
            v[k] = strtod(p, NULL);
            char *comma = strchr(p, ',');
            if (!comma)
                break;
            p = comma + 1;
        }
        int w = (int)v[c_w];
        if (w != (int)v[c_dev] || w < 2 || w > 8)
            continue;
        if (!ps[w].ops)
            ps[w] = predictor(&m, w);
        double t = cal_roofline_allreduce_ns(&ps[w], v[c_size], 1);
        add(group("allreduce (NCCL)"), t / (v[c_med] * 1e6) - 1);
        n++;
    }
    fclose(f);
    for (int i = 0; i < 9; i++)
        cal_predictor_free(&ps[i]);
    print_message("network/a100_dgx/all_reduce.csv: %d points\n", n);
}

/* Prints the table of every group, empties the groups, checks there were at least min_points,
 * and returns the median |error| over all their points. */
static double print_groups(int min_points)
{
    double *all = NULL;
    int nall = 0;
    print_message("\n%-22s %7s %8s %8s %8s %8s\n", "operator", "points", "med|e|%", "p90|e|%",
                  "worst%", "signed%");
    for (int i = 0; i < ngroups; i++) {
        double s[4];
        stats(groups[i].v, groups[i].n, s);
        print_message("%-22s %7d %8.1f %8.1f %8.1f %+8.1f\n", groups[i].name, groups[i].n,
                      100 * s[0], 100 * s[1], 100 * s[2], 100 * s[3]);
        all = realloc(all, (size_t)(nall + groups[i].n) * sizeof *all);
        memcpy(all + nall, groups[i].v, (size_t)groups[i].n * sizeof *all);
        nall += groups[i].n;
        free(groups[i].v);
        memset(&groups[i], 0, sizeof groups[i]);
    }
    ngroups = 0;
    double s[4];
    stats(all, nall, s);
    print_message("%-22s %7d %8.1f %8.1f %8.1f %+8.1f\n", "all", nall, 100 * s[0], 100 * s[1],
                  100 * s[2], 100 * s[3]);
    free(all);
    assert_true(nall >= min_points);
    return s[0];
}

static void test_vidur_ops(void **state)
{
    compute_tables();
    attention_table();
    network_table();
    double all = print_groups(10000);
    /* issue 13's target: per-operator median |error| at most 6% */
    assert_true(all <= 0.06);
}

/* ---- H100: tests/fidelity/vidur-h100, an extract of Vidur's H100 tables (in the tree) ---- */

/* Every point of the H100 extract of one model at each tensor-parallel degree in tps. */
static void h100_table(const char *dir, const char *name, const int *tps, int ntp)
{
    char mdir[800], note[600];
    snprintf(mdir, sizeof mdir, "%s/tests/fidelity/vidur-h100/meta-llama/%s", LLMSIM_SOURCE_DIR,
             dir);
    eng_model m;
    assert_int_equal(model_of(mdir, name, &m), 0);
    for (int i = 0; i < ntp; i++) {
        cal_profile *pr = cal_profile_new("h");
        sim_err err = {{0}};
        if (cal_vidur_read(mdir, NULL, &m, tps[i], pr, note, sizeof note, &err) != 0)
            fail_msg("%s", err.msg);
        eng_predictor p = predictor_on("h100-sxm", &m, tps[i]);
        print_message("%-16s tp%d: %d points\n", name, tps[i], compare(pr, &p));
        cal_predictor_free(&p);
        cal_profile_free(pr);
    }
}

/* The roofline's per-kernel times against Vidur's H100 measurements of Llama-2-7B and -70B. No
 * roofline constant is fitted on these points: they check how the A100-fitted classes and the
 * cited Hopper figures carry over. Measured at this commit: all 927 points median |error| 11.9%
 * (qkv and up/gate 6%, o and down 11-12%; the elementwise classes 12-19%: Hopper's kernels
 * reach a larger fraction of the datasheet bandwidth than the A100 fits give them, the norm a
 * smaller one), where the same shapes of the A100 tables come out at 4.6-8.2%. */
static void test_h100_ops(void **state)
{
    const int tp7[] = {1, 2, 4, 8}, tp70[] = {1, 8};
    h100_table("Llama-2-7b-hf", "llama-2-7b", tp7, 4);
    h100_table("Llama-2-70b-hf", "llama-2-70b", tp70, 2);
    double all = print_groups(900);
    assert_true(all <= 0.12);
}

/* Batch-1 prefill of Llama-2-7B on H100 (issue 21): the roofline's layer, non-attention
 * operators, against the sum of Vidur's measured H100 kernels at the same token counts, plus the
 * layer's causal attention at FlashAttention-3's published rate (Shah et al. 2024, figure 5:
 * 521 TFLOPS at 2k tokens, 579 at 4k). Before this check the pass came out about 40% over that
 * sum (prefill attention's memory term); the GEMM classes' A100 efficiency leaves it within
 * +15%. */
static void test_h100_prefill_sum(void **state)
{
    static const struct {
        int tokens;
        double measured_us; /* the ten operators of one layer, Vidur's medians */
        double fa3_tflops;
    } rows[] = {{2016, 60 + 26 + 281 + 41 + 96 + 28 + 490.5 + 70 + 220.5 + 14, 521},
                {4096, 119 + 66.5 + 584 + 83.5 + 193 + 67 + 987 + 139 + 441 + 31, 579}};
    eng_model m;
    char mdir[800];
    snprintf(mdir, sizeof mdir, "%s/tests/fidelity/vidur-h100/meta-llama/Llama-2-7b-hf",
             LLMSIM_SOURCE_DIR);
    assert_int_equal(model_of(mdir, "llama-2-7b", &m), 0);
    eng_predictor p = predictor_on("h100-sxm", &m, 1);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double n = rows[i].tokens, ours = 0;
        static const int ops[] = {KERN_OP_QKV_PROJ, KERN_OP_O_PROJ,      KERN_OP_MLP_UP_GATE,
                                  KERN_OP_MLP_ACT,  KERN_OP_MLP_DOWN,    KERN_OP_ROPE,
                                  KERN_OP_ADD,      KERN_OP_ADD,         KERN_OP_RMSNORM,
                                  KERN_OP_RMSNORM,  CAL_PROFILE_OP_EMBED};
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            ours += cal_roofline_point_ns(&p, ops[k], n, 0);
        double attn = cal_roofline_point_ns(&p, KERN_OP_ATTN_PREFILL, n, 0);
        double fa3 = 4.0 * m.heads * m.head_dim * (n * (n + 1) / 2) / (rows[i].fa3_tflops * 1e12);
        double want = rows[i].measured_us * 1e3 + fa3 * 1e9;
        print_message("llama-2-7b h100 %5.0f tokens: roofline %.0f us (attention %.0f), measured "
                      "kernels + FlashAttention-3 %.0f us: %+.1f%%\n",
                      n, (ours + attn) / 1e3, attn / 1e3, want / 1e3,
                      100 * ((ours + attn) / want - 1));
        assert_true(ours + attn < 1.15 * want && ours + attn > 0.9 * want);
        /* the attention itself within 15% of the published rate */
        assert_true(attn < 1.15 * fa3 * 1e9 && attn > 0.85 * fa3 * 1e9);
    }
    cal_predictor_free(&p);
}

/* H100 fp8 GEMMs of prefill size (issue 21: is TensorRT-LLM's Qwen3-32B fp8 prefill priced short
 * by the GEMM class's efficiency at large M?). SGLang PR 34318 times torch._scaled_mm (fp8
 * e4m3 inputs, bf16 output, row and column scales) on an H100 80 GB, median of 10 after 5
 * warm-ups, on the dense shapes of a 5,376-wide model with a 14,336-wide MLP: QKV 8320 x 5376 x
 * 21504 in 1,351.1 us, gate/up 8320 x 5376 x 14336 (TP2) in 896.4 us, gate/up 23216 and 15760 x
 * 5376 x 28672 (TP1) in 5,295.9 and 3,570.9 us, down 8320 x 14336 x 5376 in 843.9 us: 1,351 to
 * 1,520 TFLOPS, 68-77% of the datasheet's 1,978.9. The roofline's W8A8 GEMM (the A100-fitted
 * class at 72.8% of the fp8 peak) lands within -3% to +11% of each: at prefill sizes fp8 GEMMs
 * reach the same fraction of their peak as 16-bit ones do of theirs (Vidur's H100 Llama-2-70B
 * TP1 GEMMs at 4,096 tokens: 679-727 TFLOPS, 69-73% of 989.4). */
static void test_h100_fp8_gemm(void **state)
{
    static const char cfg[] =
        "{\"model_type\": \"llama\", \"num_hidden_layers\": 1, \"hidden_size\": 5376, "
        "\"num_attention_heads\": 112, \"num_key_value_heads\": 28, \"head_dim\": 128, "
        "\"intermediate_size\": 14336, \"vocab_size\": 32000, \"max_position_embeddings\": "
        "8192, \"torch_dtype\": \"bfloat16\"}";
    static const struct {
        int op, tp;
        double tokens, us;
    } rows[] = {{KERN_OP_QKV_PROJ, 1, 8320, 1351.1},
                {KERN_OP_MLP_UP_GATE, 2, 8320, 896.4},
                {KERN_OP_MLP_UP_GATE, 1, 23216, 5295.9},
                {KERN_OP_MLP_UP_GATE, 1, 15760, 3570.9},
                {KERN_OP_MLP_DOWN, 1, 8320, 843.9}};
    eng_model m = config_model(cfg);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cal_serving sv = cal_serving_tp(ENG_FP8, rows[i].tp);
        eng_predictor p = roofline_of(&m, "h100-sxm", &sv);
        double us = cal_roofline_point_ns(&p, rows[i].op, rows[i].tokens, 0) / 1e3;
        double e = us / rows[i].us - 1;
        print_message("h100 fp8 %-12s tp%d %6.0f tokens: roofline %7.1f us, measured %7.1f us: "
                      "%+.1f%%\n",
                      cal_profile_op_name(rows[i].op), rows[i].tp, rows[i].tokens, us, rows[i].us,
                      100 * e);
        assert_true(fabs(e) <= 0.15);
        cal_predictor_free(&p);
    }
}

/* Adds to e[] the signed error of the roofline against every GEMM point of at least `rows` rows
 * in the profile text `path` (profiles/: metadata lines, then op,x,y,t_ns,...); returns how
 * many. The model is the catalog's, priced in bf16 at TP1 on h100-sxm, as measured. */
static int profile_gemm_errors(const char *path, double rows, double *e, int cap)
{
    char line[512], model[64] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    eng_model m;
    eng_predictor p = {0};
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "# model: %63s", model) == 1) {
            assert_int_equal(cal_model_find(model, &m), 0);
            cal_serving sv = cal_serving_tp(ENG_BF16, 1);
            p = roofline_of(&m, "h100-sxm", &sv);
        }
        char op[32];
        double x, y, t;
        if (line[0] == '#' || sscanf(line, "%31[a-z_],%lf,%lf,%lf", op, &x, &y, &t) != 4)
            continue;
        int k = cal_profile_op_parse(op);
        if (x < rows || (k != KERN_OP_QKV_PROJ && k != KERN_OP_O_PROJ && k != KERN_OP_MLP_UP_GATE &&
                         k != KERN_OP_MLP_DOWN))
            continue;
        assert_true(n < cap);
        e[n++] = cal_roofline_point_ns(&p, k, x, y) / t - 1;
    }
    fclose(f);
    cal_predictor_free(&p);
    return n;
}

/* H100 bf16 GEMMs of prefill size as cuBLAS 13 runs them, measured on an H100 80GB HBM3 with
 * `llmsim calibrate --backend cuda --grid full` (profiles/cuda-h100-*.csv, the QKV, O, gate/up
 * and down linears of four models at 1,280-8,192 rows): the A100-fitted GEMM class holds within
 * 4% at the median (+2.3% on these; tests/fidelity/fit_h100_gemm.py gives the fraction the
 * points ask for, 0.747 against 0.728, and another H100 gave 0.771). */
static void test_h100_cublas_gemm(void **state)
{
    (void)state;
    static const char *const models[] = {"llama-3.1-8b", "qwen3-8b", "qwen3-32b", "llama-3.1-70b"};
    double e[512], st[4];
    int n = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/profiles/cuda-h100-%s.csv", LLMSIM_SOURCE_DIR, models[i]);
        n += profile_gemm_errors(path, 1280, e + n, 512 - n);
    }
    stats(e, n, st);
    print_message("h100 cuBLAS GEMMs at 1,280-8,192 rows: %d points, median |e| %.1f%%, p90 "
                  "%.1f%%, signed median %+.1f%%\n",
                  n, 100 * st[0], 100 * st[1], 100 * st[3]);
    assert_int_equal(n, 4 * 4 * 8);
    assert_true(fabs(st[3]) <= 0.04);
    assert_true(st[0] <= 0.08);
}

/* The roofline of catalog model `model` on catalog GPU `gpu`, served as *sv with `engine`'s
 * kernels; the model into *m when m is not NULL. */
static eng_predictor served(const char *model, const char *gpu, cal_serving *sv, const char *engine,
                            eng_model *m)
{
    eng_model mm = catalog_model(model);
    snprintf(sv->engine, sizeof sv->engine, "%s", engine);
    eng_predictor p = roofline_of(&mm, gpu, sv);
    if (m)
        *m = mm;
    return p;
}

/* TensorRT-LLM's published batch-1 first-token latency (docs/source/performance.md, "Low
 * Latency", TensorRT-LLM v0.5: H100 and L40S in fp8 with an fp8 KV cache, A100 in fp16) against
 * the roofline's pass of the prompt with the trtllm engine's kernels. Issue 21: the L40S row at
 * 2,048 tokens went from -5% to +57% when prefill attention gained its bandwidth-bound term and
 * the elementwise classes took the A100's fractions of bandwidth; it is +12% with the
 * attention's HBM traffic and the GDDR classes fitted on Vidur's A40 tables. v0.5's Hopper
 * kernels predate FlashAttention-3, which the trtllm engine's Hopper class reproduces: the H100
 * rows come out under the figure. */
static void test_trtllm_first_token(void **state)
{
    static const struct {
        const char *model, *gpu;
        int tp, tokens;
        double ms, tol;
    } rows[] = {
        {"llama-2-7b", "h100-sxm", 1, 2048, 36, 0.20},
        {"llama-2-70b", "h100-sxm", 4, 2048, 109, 0.15},
        {"llama-2-7b", "l40s", 1, 2048, 73, 0.15},
        {"llama-2-7b", "l40s", 1, 128, 14, 0.15},
        {"llama-2-7b", "a100-80gb", 1, 2048, 133, 0.15},
        {"llama-2-7b", "a100-80gb", 1, 128, 16, 0.15},
        {"llama-2-70b", "a100-80gb", 4, 2048, 377, 0.15},
        {"llama-2-70b", "a100-80gb", 4, 128, 47, 0.15},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        eng_gpu g;
        assert_int_equal(cal_gpu_find(rows[i].gpu, &g), 0);
        eng_dtype dt = g.flops_fp8 > 0 ? ENG_FP8 : ENG_FP16;
        cal_serving sv = cal_serving_tp(dt, rows[i].tp);
        sv.kv_dtype = dt;
        eng_predictor p = served(rows[i].model, rows[i].gpu, &sv, "trtllm", NULL);
        eng_shape s;
        memset(&s, 0, sizeof s);
        eng_shape_add_prefill(&s, rows[i].tokens, 0);
        s.emit_seqs = 1;
        double ms = p.ops->iteration_ns(p.st, &s) / 1e6, e = ms / rows[i].ms - 1;
        print_message("%-12s %-10s tp%d %5d tokens: %6.1f ms, published %4.0f ms: %+.1f%%\n",
                      rows[i].model, rows[i].gpu, rows[i].tp, rows[i].tokens, ms, rows[i].ms,
                      100 * e);
        if (fabs(e) > rows[i].tol)
            fail_msg("%s on %s: %.1f ms against %.0f ms published", rows[i].model, rows[i].gpu, ms,
                     rows[i].ms);
        cal_predictor_free(&p);
    }
}

/* Published single-stream decode on 8 x B200 (issue 21: SGLang 0.5.8, 1K/1K, concurrency 1:
 * gpt-oss-120b in MXFP4 2.41 ms per token, Qwen3-235B-A22B in BF16 6.70 ms) against the
 * roofline's batch-1 decode step at the run's mean context (1.5K), with SGLang's kernels. At
 * TP8 every kernel of such a step sits at its floor: with the A100's floors and the unfused
 * all-reduce, add and norm the step came out 1.68x and 1.65x the figures; Blackwell's floors
 * scaled by its clock and SGLang's fused all-reduce left +21% and +20%; the MoE layer's
 * finalize (both) and routing sort (Qwen3's Triton fused_moe) make it +23% and +25% (the decode
 * attention's floor, fitted on the A100's 2024 FlashAttention decode, and kernel floors fitted
 * on event-timed kernels where a graph replays them back to back are what remains). */
static void test_b200_decode(void **state)
{
    static const struct {
        const char *model;
        eng_dtype dt;
        double ms;
    } rows[] = {{"gpt-oss-120b", ENG_DTYPE_AUTO, 2.41}, {"qwen3-235b-a22b", ENG_BF16, 6.70}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        eng_model m;
        cal_serving sv = cal_serving_tp(rows[i].dt, 8);
        sv.capped_sums = 1;
        eng_predictor p = served(rows[i].model, "b200", &sv, "sglang", &m);
        int32_t chunked, cap = eng_shape_cap(&m, &chunked);
        int64_t ctx = 1536;
        eng_shape s;
        memset(&s, 0, sizeof s);
        eng_shape_set_cap(&s, cap, chunked);
        eng_shape_add_decodes_capped(&s, 1, ctx, cap > 0 && cap < ctx ? cap : ctx);
        s.emit_seqs = 1;
        double ms = p.ops->iteration_ns(p.st, &s) / 1e6, e = ms / rows[i].ms - 1;
        print_message("%-16s b200 tp8 sglang decode: %.2f ms, published %.2f ms: %+.1f%%\n",
                      rows[i].model, ms, rows[i].ms, 100 * e);
        assert_true(fabs(e) <= 0.25);
        /* the fused all-reduce takes the residual add; a pass over FUSED_AR_MAX_TOKENS (2,048)
         * takes the unfused path */
        assert_true(cal_roofline_op_ns(&p, &s, "add") == 0);
        eng_shape big;
        memset(&big, 0, sizeof big);
        eng_shape_set_cap(&big, cap, chunked);
        eng_shape_add_prefill_capped(&big, 4096, 0);
        assert_true(cal_roofline_op_ns(&p, &big, "add") > 0);
        cal_predictor_free(&p);
        /* vLLM's kernels: no fusion there */
        p = served(rows[i].model, "b200", &sv, "vllm", NULL);
        assert_true(cal_roofline_op_ns(&p, &s, "add") > 0);
        cal_predictor_free(&p);
    }
}

int main(void)
{
    const char *base = getenv("LLMSIM_SHARED_DIR");
    snprintf(root, sizeof root, "%s/data/vidur", base ? base : LLMSIM_SHARED_DIR);
    char probe[800];
    snprintf(probe, sizeof probe, "%s/data/profiling/compute/a100", root);
    const struct CMUnitTest h100[] = {
        cmocka_unit_test(test_h100_ops),      cmocka_unit_test(test_h100_prefill_sum),
        cmocka_unit_test(test_h100_fp8_gemm), cmocka_unit_test(test_trtllm_first_token),
        cmocka_unit_test(test_b200_decode),   cmocka_unit_test(test_h100_cublas_gemm)};
    int rc = cmocka_run_group_tests(h100, NULL, NULL);
    if (access(probe, R_OK) != 0) {
        printf("skipped: the A100 tables (no Vidur tables under %s)\n", root);
        return rc;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_vidur_ops)};
    return rc | cmocka_run_group_tests(tests, NULL, NULL);
}
