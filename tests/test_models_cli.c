/* test_models_cli.c: the llmsim program on models, precisions and layouts: `list models` shows
 * total and active parameters, `list gpus` the datasheets' units, `scenario check --json` the
 * parameters, bytes per GPU, KV tokens per replica and the layout (and exits 1, sizes printed,
 * when the cost model refuses the model), MoE models and layouts priced and run, weights that do
 * not fit are refused with the sizes, a run says when 4-bit weights run weight-only, and every
 * output of an AMD run says its prices are extrapolated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "expect_text.h"
#include "test_main.h"

static char out[65536], err[8192];

static void must(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("'%s' not in:\n%s", needle, hay);
}

static const char *scenario(const char *model, const char *gpu, const char *extra)
{
    static char path[300];
    char text[1024];
    snprintf(path, sizeof path, "%s/s.yaml", e2e_dir);
    snprintf(text, sizeof text,
             "name: m\nseed: 1\nmodel: %s\ngpu: %s\n%sscheduler: {name: vllm}\n"
             "workload: {num_requests: 20, arrival: {process: poisson, rate: 2}, "
             "prompt_tokens: 500, output_tokens: 50}\n",
             model, gpu, extra);
    e2e_write(path, text);
    return path;
}

/* `llmsim VERB S OPTS`: its status, its output in out and err. */
static int llmsim_on(const char *verb, const char *s, const char *opts)
{
    return e2e_sh(out, sizeof out, err, sizeof err, "%s %s %s %s", LLMSIM_BINARY, verb, s, opts);
}

static void test_list(void **state)
{
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list models", LLMSIM_BINARY), 0);
    expect_all(out, FRAGS("active", "deepseek-v3       deepseek_v3     671.03B    36.63B",
                          "gpt-oss-120b      gpt_oss         116.83B     5.13B",
                          "llama-3-8b        llama             8.03B     7.50B"));
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s list models --json", LLMSIM_BINARY), 0);
    must(out, "\"params_active\": 36625618432");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list gpus", LLMSIM_BINARY), 0);
    expect_all(out,
               FRAGS("h100-sxm         80 GB   3.35 TB/s", "a100-80gb        80 GB   2039 GB/s",
                     "mi355x          288 GB      8 TB/s", "gb300"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list gpus --json", LLMSIM_BINARY),
                     0);
    must(out, "\"memory\": 192, \"memory_unit\": \"GB\"");
    must(out, "\"bandwidth\": 864, \"bandwidth_unit\": \"GB/s\"");
}

static void test_check_dense(void **state)
{
    const char *s = scenario("llama-3-70b", "h200", "tensor_parallel: 16\n");
    assert_int_equal(llmsim_on("scenario check", s, "--json"), 0);
    expect_all(
        out,
        FRAGS("\"ok\": true", "\"params_total\": 70553706496",
              "\"tensor_parallel\": 16, \"expert_parallel\": 1, \"data_parallel_attention\": 1",
              "\"gpus_per_replica\": 16"));
    must(out, "\"kv_bytes_per_token\": 40960"); /* KV heads replicated past 8 */
    must(out, "\"kv_heads_per_gpu\": 1");
    assert_int_equal(llmsim_on("scenario check", s, ""), 0);
    expect_all(out, FRAGS(": ok (llama-3-70b on h200 bf16", "70.55 B parameters, 69.50 B active",
                          "16 GPUs per replica"));
}

static void test_check_moe(void **state)
{
    /* DeepSeek-V3 in its fp8 on 8 x H200 fits and is priced as TP8 and as DP8 + EP8 */
    const char *s = scenario("deepseek-v3", "h200", "tensor_parallel: 8\n");
    assert_int_equal(llmsim_on("scenario check", s, "--json"), 0);
    expect_all(out, FRAGS("\"ok\": true", "\"dtype\": \"fp8\", \"kv_dtype\": \"bf16\"",
                          "\"params_total\": 671026419200", "\"kv_bytes_per_token\": 70272",
                          "\"gpus_per_replica\": 8"));
    s = scenario("deepseek-v3", "h200",
                 "tensor_parallel: 1\nexpert_parallel: 8\ndata_parallel_attention: 8\n");
    assert_int_equal(llmsim_on("scenario check", s, "--json"), 0);
    must(out, "\"tensor_parallel\": 1, \"expert_parallel\": 8, \"data_parallel_attention\": 8");
    must(out, "\"kv_tokens\": ");
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    must(out, "\"completed\": 20");
    /* gpt-oss: MXFP4 experts by default, weight-only on an H100, said; its 128-token windows
     * bind, and the engine's capped sums price them: check and a run succeed */
    s = scenario("gpt-oss-20b", "h100-sxm", "");
    assert_int_equal(llmsim_on("scenario check", s, "--json"), 0);
    expect_all(out,
               FRAGS("\"ok\": true", "\"dtype\": \"mxfp4\"", "weight-only", "\"window\": 128"));
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    must(out, "\"completed\": 20");
}

/* Weights that do not fit, and a layout the model has no use for: `scenario check` exits 1 with
 * the sizes or the key at fault. */
static void test_does_not_fit(void **state)
{
    static const struct {
        const char *model, *gpu, *extra, *says[2];
    } cases[] = {
        {"deepseek-v3",
         "h100-sxm",
         "",
         {"deepseek-v3 does not fit", "GB of weights per GPU (fp8, 1 GPU of h100-sxm"}},
        {"mixtral-8x7b",
         "a100-40gb",
         "",
         {"mixtral-8x7b does not fit: 93.4 GB of weights per GPU"}},
        {"llama-3-8b",
         "h100-sxm",
         "expert_parallel: 2\n",
         {"s.yaml:5: expert_parallel: expert_parallel 2: model llama-3-8b has no routed"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *s = scenario(cases[i].model, cases[i].gpu, cases[i].extra);
        assert_int_equal(llmsim_on("scenario check", s, ""), 1);
        for (int k = 0; k < 2 && cases[i].says[k]; k++)
            must(err, cases[i].says[k]);
    }
}

static void test_run_weight_only(void **state)
{
    const char *s = scenario("llama-3-8b", "h100-sxm", "dtype: nvfp4\n");
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    must(err, "dtype nvfp4 on h100-sxm: no NVFP4 tensor cores");
    must(out, "\"completed\": 20");
    /* on a B200 it runs on the FP4 tensor cores: no note */
    s = scenario("llama-3-8b", "b200", "dtype: nvfp4\n");
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    assert_null(strstr(err, "weight-only"));
}

/* AMD predictions say they are extrapolated in every output: the run's heading and JSON, the
 * capacity answer and its JSON, and the report; an NVIDIA run says nothing of it. */
static void test_amd_extrapolated(void **state)
{
    const char *s = scenario("llama-3-8b", "mi300x", "");
    char db[400], html[400];
    snprintf(db, sizeof db, "%s/amd.db", e2e_dir);
    snprintf(html, sizeof html, "%s/amd.html", e2e_dir);
    assert_int_equal(
        e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --db %s --quiet", LLMSIM_BINARY, s, db),
        0);
    must(out, "extrapolated from NVIDIA kernels");
    must(out, "note: extrapolated: AMD Instinct is priced from its datasheet");
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    must(out, "\"extrapolated\": \"extrapolated: AMD Instinct");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s report --run 1 --db %s -o %s",
                            LLMSIM_BINARY, db, html),
                     0);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "cat %s", html), 0);
    must(out, "mi300x: extrapolated: AMD Instinct");
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s capacity %s --slo ttft_p99=2000 --db %s --quiet --json",
                            LLMSIM_BINARY, s, db),
                     0);
    must(out, "\"extrapolated\": \"extrapolated: AMD Instinct");
    /* an NVIDIA GPU's outputs say nothing of it */
    s = scenario("llama-3-8b", "h100-sxm", "");
    assert_int_equal(llmsim_on("run", s, "--no-db --json"), 0);
    assert_null(strstr(out, "extrapolated"));
}

LLMSIM_TESTS(tests, test_list, test_check_dense, test_check_moe, test_does_not_fit,
             test_run_weight_only, test_amd_extrapolated);

int main(void)
{
    return e2e_run_group(tests);
}
