/* test_calibration.c: the GPU and model catalogs, the config.json reader (good, OPT, malformed
 * and missing-key files written to a temporary directory) and the roofline predictor: the
 * Llama-3-8B on H100 sanity figures, fp8 refusal, monotonicity and tensor parallelism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "catalog.h"
#include "roofline.h"

#include "models_util.h"
#include "expect_text.h"
#include "test_main.h"

static char tmpdir[256];

/* Writes text to tmpdir/<sub>/config.json and returns its path (static buffer). */
static const char *write_config(const char *sub, const char *text)
{
    static char path[400];
    char dir[300];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, sub);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        fail_msg("mkdir %s failed", dir);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int near(double a, double b)
{
    return a > b * (1 - 1e-12) && a < b * (1 + 1e-12);
}

static void test_gpu_catalog(void **state)
{
    eng_gpu g;
    assert_int_equal(cal_gpu_count(), 22);
    assert_int_equal(cal_gpu_find("h100-sxm", &g), 0);
    assert_string_equal(g.name, "h100-sxm");
    assert_true(near(g.flops_bf16, 989.4e12));
    assert_true(near(g.flops_fp8, 1978.9e12));
    assert_true(near(g.mem_bw, 3.35e12));
    assert_true(g.mem_bytes == INT64_C(80) << 30);
    assert_true(near(g.link_bw, 450e9));
    assert_int_equal(cal_gpu_find("a100-80gb", &g), 0);
    assert_true(g.flops_fp8 == 0 && near(g.mem_bw, 2.039e12));
    assert_int_equal(cal_gpu_find("a100-40gb", &g), 0);
    assert_true(near(g.mem_bw, 1.555e12) && g.mem_bytes == INT64_C(40) << 30);
    const char *want[] = {"h100-sxm",     "h100-pcie", "h200",  "a100-80gb", "a100-40gb", "l40s",
                          "l4",           "rtx-4090",  "b200",  "b300",      "gb200",     "gb300",
                          "h20",          "h800",      "gh200", "mi300x",    "mi325x",    "mi355x",
                          "rtx-pro-6000", "rtx-5090",  "a10g",  "l20"};
    for (int i = 0; i < 22; i++) {
        assert_int_equal(cal_gpu_find(want[i], &g), 0);
        assert_true(g.mem_bytes > 0 && g.mem_bw > 0 && g.flops_bf16 > 0 && g.link_bw > 0 &&
                    g.pcie_bw > 0 && g.nic_bw >= 0);
        assert_true(g.flops_fp8 == 0 || g.flops_fp8 >= g.flops_bf16);
        assert_true(g.flops_fp4 == 0 || g.flops_fp4 >= g.flops_fp8);
        assert_true((g.flops_fp4 > 0) == (g.fp4_formats != 0));
        assert_non_null(cal_gpu_source(want[i]));
        eng_gpu at;
        assert_int_equal(cal_gpu_at(i, &at), 0);
        assert_string_equal(at.name, want[i]);
        assert_memory_equal(&at, &g, sizeof g);
        /* the datasheet's own figures, in its units, give the bytes and bytes/s used */
        const cal_gpu_sheet *d = cal_gpu_sheet_at(i);
        assert_non_null(d);
        assert_string_equal(d->mem_unit, "GB");
        assert_true(g.mem_bytes == (int64_t)(d->mem * 1073741824.0));
        double unit = strcmp(d->bw_unit, "TB/s") == 0 ? 1e12 : 1e9;
        assert_true(strcmp(d->bw_unit, "TB/s") == 0 || strcmp(d->bw_unit, "GB/s") == 0);
        assert_true(near(g.mem_bw, d->bw * unit));
    }
    assert_int_equal(cal_gpu_at(22, &g), -1);
    assert_null(cal_gpu_sheet_at(22));
    assert_int_equal(cal_gpu_at(-1, &g), -1);
    memset(&g, 0x5a, sizeof g);
    assert_int_equal(cal_gpu_find("h100", &g), -1);
    assert_int_equal(cal_gpu_find("", &g), -1);
    assert_int_equal(cal_gpu_find(NULL, &g), -1);
    assert_null(cal_gpu_source("v100"));
    char buf[512];
    assert_non_null(strstr(cal_gpu_names(buf, sizeof buf),
                           "h100-sxm, h100-pcie, h200, a100-80gb, a100-40gb, l40s, l4, rtx-4090"));
    char small[10];
    cal_gpu_names(small, sizeof small);
    assert_int_equal(strlen(small), 9);
    /* per-GPU figures of the rack-scale systems (datasheet totals / 72) */
    assert_int_equal(cal_gpu_find("gb300", &g), 0);
    assert_true(near(g.flops_fp4, 15000e12) && g.mem_bytes == INT64_C(288) << 30);
    assert_int_equal(cal_gpu_find("mi355x", &g), 0);
    assert_int_equal(g.fp4_formats, ENG_FP4_MX);
}

/* cal_gpu_from_device names the catalog GPU of a device description, most specific first. */
static void test_gpu_from_device(void **state)
{
    static const char *const cases[][2] = {
        {"cuda: NVIDIA H100 80GB HBM3, sm_90", "h100-sxm"},
        {"cuda: NVIDIA H100 PCIe, sm_90", "h100-pcie"},
        {"cuda: NVIDIA H200, sm_90", "h200"},
        {"cuda: NVIDIA H20, sm_90", "h20"},
        {"cuda: NVIDIA H800, sm_90", "h800"},
        {"cuda: NVIDIA GH200 480GB, sm_90", "gh200"},
        {"cuda: NVIDIA B200, sm_100", "b200"},
        {"cuda: NVIDIA B300 SXM6 AC, sm_103", "b300"},
        {"cuda: NVIDIA GB200, sm_100", "gb200"},
        {"cuda: NVIDIA GB300, sm_103", "gb300"},
        {"cuda: NVIDIA A100-SXM4-80GB, sm_80", "a100-80gb"},
        {"cuda: NVIDIA A10G, sm_86", "a10g"},
        {"cuda: NVIDIA L20, sm_89", "l20"},
        {"cuda: NVIDIA L40S, sm_89", "l40s"},
        {"cuda: NVIDIA L4, sm_89", "l4"},
        {"cuda: NVIDIA GeForce RTX 5090, sm_120", "rtx-5090"},
        {"cuda: NVIDIA RTX PRO 6000 Blackwell Server Edition, sm_120", "rtx-pro-6000"},
        {"rocm: AMD Instinct MI300X", "mi300x"},
        {"rocm: AMD Instinct MI325X", "mi325x"},
        {"rocm: AMD Instinct MI355X", "mi355x"},
        {"cuda: NVIDIA A100-SXM4-40GB, sm_80", "a100-40gb"},
        {"cuda: NVIDIA A100 80GB PCIe, sm_80", "a100-80gb"},
        {"cuda: NVIDIA GeForce RTX 4090, sm_89", "rtx-4090"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = cal_gpu_from_device(cases[i][0]);
        if (!got || strcmp(got, cases[i][1]) != 0)
            fail_msg("%s: got %s, want %s", cases[i][0], got ? got : "NULL", cases[i][1]);
    }
    assert_null(cal_gpu_from_device("cpu: AMD EPYC"));
    assert_null(cal_gpu_from_device("cuda: NVIDIA L40, sm_89")); /* neither L4 nor L40S */
    assert_null(cal_gpu_from_device(NULL));
}

/* Every catalog row names every field; a row that leaves one out (a 0 or NULL where the
 * initialiser lacks it) is refused naming the row and the field, and every row's architecture is
 * known, so no GPU falls back to another's kernels. */
static void test_gpu_rows_complete(void **state)
{
    char why[256];
    assert_int_equal(cal_gpu_catalog_check(why, sizeof why), 0);
    for (int i = 0; i < cal_gpu_count(); i++) {
        const cal_gpu_sheet *s = cal_gpu_sheet_at(i);
        assert_int_equal(cal_gpu_sheet_check(s, why, sizeof why), 0);
        assert_int_not_equal(cal_gpu_arch(s->name), CAL_ARCH_UNKNOWN);
        assert_int_not_equal(cal_gpu_memory(s->name), CAL_MEM_UNKNOWN);
        /* only AMD's prices are extrapolated from NVIDIA's kernels */
        assert_true((cal_gpu_extrapolated(s->name) != NULL) == (s->arch == CAL_ARCH_CDNA));
    }
    static const char *const fields[] = {"name", "arch", "mem",  "bw",  "bf16",   "fp8",
                                         "fp4",  "link", "pcie", "nic", "device", "source"};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        cal_gpu_sheet r = *cal_gpu_sheet_at(0);
        switch (f) {
        case 0:
            r.name = NULL;
            break;
        case 1:
            r.arch = CAL_ARCH_UNKNOWN;
            break;
        case 2:
            r.mem = 0;
            break;
        case 3:
            r.bw_unit = NULL;
            break;
        case 4:
            r.bf16 = 0;
            break;
        case 5:
            r.fp8 = 0;
            break;
        case 6:
            r.fp4 = 0;
            break;
        case 7:
            r.link = 0;
            break;
        case 8:
            r.pcie = 0;
            break;
        case 9:
            r.nic = 0;
            break;
        case 10:
            r.device[0] = NULL;
            break;
        case 11:
            r.source = NULL;
            break;
        default:
            r.memory = CAL_MEM_UNKNOWN;
            break;
        }
        char want[32];
        snprintf(want, sizeof want, "field .%s ", fields[f]);
        assert_int_equal(cal_gpu_sheet_check(&r, why, sizeof why), -1);
        if (!strstr(why, want))
            fail_msg("removing .%s: %s", fields[f], why);
    }
    /* an fp4 figure needs the formats its tensor cores compute, and no fp4 none */
    cal_gpu_sheet r = *cal_gpu_sheet_at(0);
    r.fp4 = 1000;
    assert_int_equal(cal_gpu_sheet_check(&r, why, sizeof why), -1);
    assert_non_null(strstr(why, "field .fp4_formats"));
    r.fp4 = CAL_NONE;
    r.fp4_formats = ENG_FP4_MX;
    assert_int_equal(cal_gpu_sheet_check(&r, why, sizeof why), -1);
    /* the price and the board power: each a figure or CAL_NONE, with where it is stated */
    r = *cal_gpu_sheet_at(0);
    r.per_hour = 0;
    assert_int_equal(cal_gpu_sheet_check(&r, why, sizeof why), -1);
    assert_non_null(strstr(why, "field .per_hour"));
    r = *cal_gpu_sheet_at(0);
    r.power = NULL;
    assert_int_equal(cal_gpu_sheet_check(&r, why, sizeof why), -1);
    assert_non_null(strstr(why, "field .max_w"));
}

/* The catalog's first ten entries, as they were before the catalog became config texts:
 * name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, context, gated MLP,
 * tied embeddings, QKV bias. They must describe the same models. */
static const struct {
    const char *name;
    int32_t v[11];
} old_entries[] = {
    {"llama-2-7b", {32, 4096, 32, 32, 128, 11008, 32000, 4096, 1, 0, 0}},
    {"llama-2-13b", {40, 5120, 40, 40, 128, 13824, 32000, 4096, 1, 0, 0}},
    {"llama-2-70b", {80, 8192, 64, 8, 128, 28672, 32000, 4096, 1, 0, 0}},
    {"llama-3-8b", {32, 4096, 32, 8, 128, 14336, 128256, 8192, 1, 0, 0}},
    {"llama-3-70b", {80, 8192, 64, 8, 128, 28672, 128256, 8192, 1, 0, 0}},
    {"mistral-7b", {32, 4096, 32, 8, 128, 14336, 32000, 32768, 1, 0, 0}},
    {"qwen2.5-0.5b", {24, 896, 14, 2, 64, 4864, 151936, 32768, 1, 1, 1}},
    {"qwen2.5-1.5b", {28, 1536, 12, 2, 128, 8960, 151936, 131072, 1, 1, 1}},
    {"qwen2.5-7b", {28, 3584, 28, 4, 128, 18944, 152064, 131072, 1, 0, 1}},
    {"opt-13b", {40, 5120, 40, 40, 128, 20480, 50272, 2048, 0, 1, 1}},
};

static void test_model_catalog(void **state)
{
    eng_model m;
    assert_int_equal(cal_model_count(), 33);
    for (size_t i = 0; i < sizeof old_entries / sizeof old_entries[0]; i++) {
        assert_int_equal(cal_model_at((int)i, &m), 0);
        assert_string_equal(m.name, old_entries[i].name);
        int32_t got[11] = {m.layers,    m.hidden,          m.heads,   m.kv_heads,
                           m.head_dim,  m.intermediate,    m.vocab,   m.max_context,
                           m.gated_mlp, m.tied_embeddings, m.qkv_bias};
        assert_memory_equal(got, old_entries[i].v, sizeof got);
    }
    assert_int_equal(cal_model_find("llama-3-8b", &m), 0);
    /* Llama-3-8B has 8.03 billion parameters */
    assert_int_equal(eng_model_params(&m), INT64_C(8030261248));
    assert_int_equal(eng_model_kv_bytes_per_token(&m, ENG_BF16), 131072);
    assert_int_equal(cal_model_find("qwen2.5-0.5b", &m), 0);
    /* Qwen2.5-0.5B: 0.49 billion parameters */
    int64_t p = eng_model_params(&m);
    assert_true(p > 480000000LL && p < 500000000LL);
    assert_int_equal(cal_model_find("llama-2-70b", &m), 0);
    p = eng_model_params(&m);
    assert_true(p > 68900000000LL && p < 69100000000LL);
    assert_int_equal(cal_model_find("mistral-7b", &m), 0);
    assert_true(m.window_layers == 32 && m.window == 4096);
    for (int i = 0; i < cal_model_count(); i++) {
        eng_model e;
        eng_layout one = {1, 1, 1, {0, 0, 0}};
        char why[256];
        assert_int_equal(cal_model_at(i, &e), 0);
        assert_int_equal(e.heads % e.kv_heads, 0);
        assert_int_equal(eng_layout_check(&e, &one, why, sizeof why), 0);
        assert_true(eng_model_params_active(&e) > 0);
        assert_true(eng_model_params_active(&e) <= eng_model_params(&e));
        assert_string_equal(e.notes, "");
        assert_int_equal(cal_model_find(e.name, &m), 0);
        assert_memory_equal(&e, &m, sizeof m);
    }
    assert_int_equal(cal_model_at(cal_model_count(), &m), -1);
    assert_int_equal(cal_model_at(-1, &m), -1);
    assert_int_equal(cal_model_find("llama-3-8B", &m), -1);
    assert_int_equal(cal_model_find("gpt-4", &m), -1);
    char buf[1024];
    cal_model_names(buf, sizeof buf);
    expect_all(buf, FRAGS("llama-2-7b, llama-2-13b", "qwen2.5-7b, opt-13b", "deepseek-v3",
                          "gpt-oss-120b"));
}

/* The config.json at path reads as the catalog's model `catalog` does, named `name` (not
 * checked when NULL). */
static void expect_reads_as(const char *path, const char *catalog, const char *name)
{
    eng_model m, want;
    char why[512] = "";
    if (cal_model_from_config_json(path, &m, why, sizeof why) != 0)
        fail_msg("%s", why);
    assert_int_equal(cal_model_find(catalog, &want), 0);
    if (name)
        assert_string_equal(m.name, name);
    memcpy(m.name, want.name, sizeof m.name);
    assert_memory_equal(&m, &want, sizeof m);
}

static void test_config_llama(void **state)
{
    const char *path = write_config(
        "Meta-Llama-3-8B",
        "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"attention_bias\": false,\n"
        "  \"bos_token_id\": 128000,\n  \"eos_token_id\": [128001, 128009],\n"
        "  \"hidden_act\": \"silu\",\n  \"hidden_size\": 4096,\n"
        "  \"intermediate_size\": 14336,\n  \"max_position_embeddings\": 8192,\n"
        "  \"model_type\": \"llama\",\n  \"num_attention_heads\": 32,\n"
        "  \"num_hidden_layers\": 32,\n  \"num_key_value_heads\": 8,\n"
        "  \"rms_norm_eps\": 1e-05,\n  \"rope_scaling\": {\"factor\": 8.0, \"type\": \"llama3\"},\n"
        "  \"rope_theta\": 500000.0,\n  \"tie_word_embeddings\": false,\n"
        "  \"torch_dtype\": \"bfloat16\",\n  \"note\": \"esc \\\" \\u00e9\",\n"
        "  \"vocab_size\": 128256\n}\n");
    expect_reads_as(path, "llama-3-8b", "Meta-Llama-3-8B");
}

static void test_config_qwen_and_opt(void **state)
{
    const char *path = write_config(
        "qwen", "{\"hidden_size\": 896, \"intermediate_size\": 4864, \"max_position_embeddings\": "
                "32768, \"model_type\": \"qwen2\", \"num_attention_heads\": 14, "
                "\"num_hidden_layers\": 24, \"num_key_value_heads\": 2, \"rope_scaling\": null, "
                "\"tie_word_embeddings\": true, \"vocab_size\": 151936, \"sliding_window\": "
                "32768, \"use_sliding_window\": false, \"torch_dtype\": \"bfloat16\"}");
    expect_reads_as(path, "qwen2.5-0.5b", NULL);

    path = write_config(
        "opt-13b", "{\"_name_or_path\": \"facebook/opt-13b\", \"activation_function\": \"relu\", "
                   "\"do_layer_norm_before\": true, \"ffn_dim\": 20480, \"hidden_size\": 5120, "
                   "\"max_position_embeddings\": 2048, \"model_type\": \"opt\", "
                   "\"num_attention_heads\": 40, \"num_hidden_layers\": 40, "
                   "\"vocab_size\": 50272, \"word_embed_proj_dim\": 5120, "
                   "\"torch_dtype\": \"float16\"}");
    expect_reads_as(path, "opt-13b", NULL);
}

/* A config.json refused (written to tmpdir/sub), and what the refusal says after naming it. */
typedef struct bad_config {
    const char *sub, *text, *says;
} bad_config;

static const bad_config bad_configs[] = {
    {"bad", "{\n  \"hidden_size\": 4096\n  \"num_hidden_layers\": 32\n}",
     ":3:3: expected ',' or '}'"},
    {"trunc", "{\"hidden_size\": 4096, \"vocab_size\": [1, 2", "expected ',' or ']'"},
    /* no model_type (and no architectures llmsim maps): never read as a Llama */
    {"notype",
     "{\"hidden_size\": 4096, \"num_hidden_layers\": 32, "
     "\"num_attention_heads\": 32, \"vocab_size\": 32000, "
     "\"intermediate_size\": 11008, "
     "\"max_position_embeddings\": 4096}",
     "missing key \"model_type\""},
    {"missing",
     "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
     "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
     "\"vocab_size\": 32000, \"max_position_embeddings\": 4096}",
     "missing key \"intermediate_size\""},
    {"opt-missing",
     "{\"model_type\": \"opt\", \"hidden_size\": 4096, "
     "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
     "\"intermediate_size\": 11008, \"vocab_size\": 32000, "
     "\"max_position_embeddings\": 4096}",
     "missing key \"ffn_dim\""},
    {"wrongtype",
     "{\"model_type\": \"llama\", \"hidden_size\": \"4096\", "
     "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
     "\"intermediate_size\": 11008, \"vocab_size\": 32000, "
     "\"max_position_embeddings\": 4096}",
     ":1: key \"hidden_size\": must be a positive integer"},
    {"gqa",
     "{\"model_type\": \"llama\", \"hidden_size\": 4096, "
     "\"num_hidden_layers\": 32,\n"
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 5,\n"
     "\"intermediate_size\": 11008, \"vocab_size\": 32000, "
     "\"max_position_embeddings\": 4096}",
     ":2: num_key_value_heads 5 does not divide"},
    {"notobject", "[1, 2, 3]", ":1:1: expected '{'"},
    {"trailing", "{\"a\": 1} x", "text after the end of the document"},
};

static void test_config_errors(void **state)
{
    eng_model m;
    char why[512];
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        const char *path = write_config(bad_configs[i].sub, bad_configs[i].text);
        assert_int_equal(cal_model_from_config_json(path, &m, why, sizeof why), -1);
        if (strncmp(why, path, strlen(path)) != 0 || !strstr(why, bad_configs[i].says))
            fail_msg("%s: '%s' does not name the file or lacks '%s'", bad_configs[i].sub, why,
                     bad_configs[i].says);
    }

    char nowhere[400];
    snprintf(nowhere, sizeof nowhere, "%s/none/config.json", tmpdir);
    assert_int_equal(cal_model_from_config_json(nowhere, &m, why, sizeof why), -1);
    assert_non_null(strstr(why, nowhere));
    assert_non_null(strstr(why, "cannot open"));
}

/* The roofline predictor for (model, gpu, dtype, tp), which must build. */
static eng_predictor make(const char *model, const char *gpu, eng_dtype dt, int tp)
{
    eng_model m = catalog_model(model);
    cal_serving sv = cal_serving_tp(dt, tp);
    return roofline_of(&m, gpu, &sv);
}

static int64_t prefill_ns(const eng_predictor *p, int64_t q, int64_t c, int emit)
{
    eng_shape s = {0};
    eng_shape_add_prefill(&s, q, c);
    s.emit_seqs = emit;
    return p->ops->iteration_ns(p->st, &s);
}

static int64_t decode_ns(const eng_predictor *p, int64_t n, int64_t ctx_each)
{
    eng_shape s = {0};
    eng_shape_add_decodes(&s, n, n * ctx_each);
    s.emit_seqs = (int32_t)n;
    return p->ops->iteration_ns(p->st, &s);
}

static void test_roofline_sanity(void **state)
{
    eng_predictor p = make("llama-3-8b", "h100-sxm", ENG_BF16, 1);
    assert_string_equal(p.label, "roofline h100-sxm bf16 (not measured)");
    int64_t ttft = prefill_ns(&p, 2048, 0, 1);
    print_message("llama-3-8b bf16 h100-sxm: TTFT(2048) %.2f ms", ttft / 1e6);
    assert_true(ttft >= 30 * SIM_NS_PER_MS && ttft <= 100 * SIM_NS_PER_MS);
    for (int64_t ctx = 2048; ctx <= 2548; ctx += 100) {
        int64_t tpot = decode_ns(&p, 1, ctx);
        if (ctx == 2048 || ctx == 2548)
            print_message(", TPOT(ctx %lld) %.3f ms", (long long)ctx, tpot / 1e6);
        assert_true(tpot >= 5 * SIM_NS_PER_MS && tpot <= 10 * SIM_NS_PER_MS);
    }
    print_message("\n");
    /* a swap of 1 GiB over PCIe Gen5 (64 GB/s, 80%) takes about 21 ms */
    int64_t sw = p.ops->transfer_ns(p.st, INT64_C(1) << 30);
    assert_true(sw > 15 * SIM_NS_PER_MS && sw < 30 * SIM_NS_PER_MS);
    assert_int_equal(p.ops->transfer_ns(p.st, 0), 0);
    /* per-operator breakdown adds up to the whole */
    eng_shape s = {0};
    eng_shape_add_prefill(&s, 512, 100);
    eng_shape_add_decodes(&s, 10, 10000);
    s.emit_seqs = 11;
    const char *ops[] = {"qkv_proj", "attn_prefill", "attn_decode", "o_proj",   "mlp_up_gate",
                         "mlp_act",  "mlp_down",     "rmsnorm",     "rope",     "lm_head",
                         "add",      "embed",        "sample",      "allreduce"};
    double sum = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        double t = cal_roofline_op_ns(&p, &s, ops[i]);
        assert_true(t >= 0);
        sum += t;
    }
    double whole = (double)p.ops->iteration_ns(p.st, &s);
    assert_true(sum > whole - 1 && sum < whole + 1);
    assert_true(cal_roofline_op_ns(&p, &s, "nope") < 0);
    assert_true(cal_roofline_op_ns(&p, &s, "allreduce") == 0);
    cal_predictor_free(&p);
    assert_null(p.ops);
    cal_predictor_free(&p);
}

static void test_roofline_fp8(void **state)
{
    eng_model m = catalog_model("llama-3-8b");
    eng_gpu g = catalog_gpu("a100-80gb");
    eng_predictor p;
    sim_err err = {{0}};
    cal_serving sv = cal_serving_tp(ENG_FP8, 1);
    assert_int_equal(cal_roofline_new(&m, &g, &sv, &p, &err), -1);
    assert_non_null(strstr(err.msg, "a100-80gb"));
    assert_non_null(strstr(err.msg, "fp8"));
    sv = cal_serving_tp(ENG_FP16, 1);
    assert_int_equal(cal_roofline_new(&m, &g, &sv, &p, &err), 0);
    cal_predictor_free(&p);
    sv = cal_serving_tp(ENG_BF16, 3);
    assert_int_equal(cal_roofline_new(&m, &g, &sv, &p, &err), -1);
    assert_non_null(strstr(err.msg, "does not divide"));
    sv = cal_serving_tp(ENG_BF16, 0);
    assert_int_equal(cal_roofline_new(&m, &g, &sv, &p, &err), -1);

    eng_predictor bf = make("llama-3-8b", "h100-sxm", ENG_BF16, 1);
    eng_predictor f8 = make("llama-3-8b", "h100-sxm", ENG_FP8, 1);
    assert_string_equal(f8.label, "roofline h100-sxm fp8 (not measured)");
    /* fp8: faster prefill (twice the peak) and faster decode (half the weight bytes) */
    assert_true(prefill_ns(&f8, 4096, 0, 1) < 0.7 * prefill_ns(&bf, 4096, 0, 1));
    assert_true(decode_ns(&f8, 1, 1000) < 0.7 * decode_ns(&bf, 1, 1000));
    cal_predictor_free(&bf);
    cal_predictor_free(&f8);
}

static void test_roofline_monotone(void **state)
{
    const char *models[] = {"llama-3-8b", "qwen2.5-0.5b", "opt-13b", "llama-2-70b"};
    const char *gpus[] = {"h100-sxm", "l4", "a100-40gb", "rtx-4090"};
    for (int k = 0; k < 4; k++) {
        eng_predictor p = make(models[k], gpus[k], ENG_BF16, k == 3 ? 4 : 1);
        int64_t prev = 0;
        for (int64_t q = 1; q <= 16384; q += q < 64 ? 1 : q / 16) {
            int64_t t = prefill_ns(&p, q, 0, 1);
            assert_true(t >= prev);
            prev = t;
        }
        prev = 0;
        for (int64_t c = 0; c <= 32768; c += 257) {
            int64_t t = prefill_ns(&p, 256, c, 1);
            assert_true(t >= prev);
            prev = t;
        }
        prev = 0;
        for (int64_t n = 1; n <= 1024; n++) {
            int64_t t = decode_ns(&p, n, 1000);
            assert_true(t >= prev);
            prev = t;
        }
        prev = 0;
        for (int64_t c = 1; c <= 65536; c *= 2) {
            int64_t t = decode_ns(&p, 16, c);
            assert_true(t >= prev);
            prev = t;
        }
        /* a mixed batch costs at least each of its parts */
        eng_shape s = {0};
        eng_shape_add_prefill(&s, 300, 0);
        eng_shape_add_decodes(&s, 20, 20 * 500);
        s.emit_seqs = 21;
        int64_t mixed = p.ops->iteration_ns(p.st, &s);
        assert_true(mixed >= prefill_ns(&p, 300, 0, 1) && mixed >= decode_ns(&p, 20, 500));
        eng_shape empty = {0};
        assert_true(p.ops->iteration_ns(p.st, &empty) >= 1);
        cal_predictor_free(&p);
    }
}

static void test_roofline_tp(void **state)
{
    eng_predictor p1 = make("llama-3-8b", "h100-sxm", ENG_BF16, 1);
    eng_predictor p2 = make("llama-3-8b", "h100-sxm", ENG_BF16, 2);
    assert_string_equal(p2.label, "roofline h100-sxm tp2 bf16 (not measured)");
    int64_t t1 = prefill_ns(&p1, 8192, 0, 1), t2 = prefill_ns(&p2, 8192, 0, 1);
    print_message("llama-3-8b prefill 8192 h100-sxm: tp1 %.1f ms, tp2 %.1f ms\n", t1 / 1e6,
                  t2 / 1e6);
    assert_true(t2 < t1);
    assert_true(2 * t2 > t1);
    /* over PCIe the all-reduces cost more of the gain */
    eng_predictor l1 = make("llama-3-8b", "l40s", ENG_BF16, 1);
    eng_predictor l2 = make("llama-3-8b", "l40s", ENG_BF16, 2);
    double nv = (double)t1 / t2;
    double pcie = (double)prefill_ns(&l1, 8192, 0, 1) / prefill_ns(&l2, 8192, 0, 1);
    assert_true(pcie < nv);
    /* 8 GPUs for a model with 8 KV heads; 16 replicate them */
    eng_predictor p8 = make("llama-3-70b", "h100-sxm", ENG_BF16, 8);
    eng_predictor p16 = make("llama-3-70b", "h100-sxm", ENG_BF16, 16);
    assert_true(decode_ns(&p8, 64, 2000) > 0 && decode_ns(&p16, 64, 2000) > 0);
    cal_predictor_free(&p1);
    cal_predictor_free(&p2);
    cal_predictor_free(&l1);
    cal_predictor_free(&l2);
    cal_predictor_free(&p8);
    cal_predictor_free(&p16);
}

LLMSIM_TESTS(tests, test_gpu_catalog, test_gpu_from_device, test_gpu_rows_complete,
             test_model_catalog, test_config_llama, test_config_qwen_and_opt, test_config_errors,
             test_roofline_sanity, test_roofline_fp8, test_roofline_monotone, test_roofline_tp);

int main(void)
{
    return scratch_run_group(tests, tmpdir, "/tmp/llmsim-cal-XXXXXX");
}
