/* test_cost_models.c: every config.json of ../shared/data/models runs through the chunked
 * scheduler to completion on a layout it fits (MoE, MLA, DeepSeek sparse attention, gated
 * DeltaNet, windows, gated attention output, the expert- and data-parallel layouts), priced by
 * the roofline; windows and sparse attention whose cap would bind are served with
 * memory.max_model_len at most the cap until the engine supplies the capped decode sums.
 * Exits 77 (skipped) when the shared data is absent. */
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

static char out[65536], err[8192], models[512];

/* Each directory with a GPU and the layout (and precision or length) it is served with. */
static const struct {
    const char *dir, *gpu, *extra;
} cases[] = {
    {"deepseek-r1", "h200", "tensor_parallel: 8\n"},
    {"deepseek-v2-lite", "h100-sxm", ""},
    {"deepseek-v3", "h200", "tensor_parallel: 1\nexpert_parallel: 8\ndata_parallel_attention: 8\n"},
    {"deepseek-v3.2", "h200", "tensor_parallel: 8\nmemory: {max_model_len: 2048}\n"},
    {"glm-5-nvfp4", "b200", "dtype: nvfp4\ntensor_parallel: 8\nmemory: {max_model_len: 2048}\n"},
    {"gpt-oss-120b", "h100-sxm", "memory: {max_model_len: 128}\n"},
    {"gpt-oss-20b", "h100-sxm", "memory: {max_model_len: 128}\n"},
    {"kimi-k2-instruct", "b200", "tensor_parallel: 8\n"},
    {"kimi-k2.5", "h200", "tensor_parallel: 8\n"},
    {"llama-3.1-405b", "h200", "dtype: fp8\ntensor_parallel: 8\n"},
    {"llama-3.1-70b", "h100-sxm", "tensor_parallel: 2\n"},
    {"llama-3.1-8b", "h100-sxm", ""},
    {"llama-4-maverick-17b-128e-instruct", "h200",
     "tensor_parallel: 8\nmemory: {max_model_len: 8192}\n"},
    {"llama-4-scout-17b-16e-instruct", "h100-sxm",
     "tensor_parallel: 4\nmemory: {max_model_len: 8192}\n"},
    {"minimax-m2.5", "h100-sxm", "tensor_parallel: 4\nexpert_parallel: 4\n"},
    {"mistral-7b-v0.1", "h100-sxm", "memory: {max_model_len: 4096}\n"},
    {"mixtral-8x22b-v0.1", "h100-sxm", "tensor_parallel: 4\n"},
    {"mixtral-8x7b-v0.1", "h100-sxm", "tensor_parallel: 2\n"},
    {"qwen2.5-7b-instruct", "h100-sxm", ""},
    {"qwen3-235b-a22b", "h200",
     "tensor_parallel: 8\nexpert_parallel: 8\ncost_model: {moe_skew: 1}\n"},
    {"qwen3-235b-a22b-fp8", "h100-sxm", "tensor_parallel: 4\nexpert_parallel: 4\n"},
    {"qwen3-30b-a3b", "h100-sxm", ""},
    {"qwen3-32b", "h100-sxm", ""},
    {"qwen3-8b", "h100-sxm", ""},
    {"qwen3.5-397b-a17b", "h200", "tensor_parallel: 8\n"},
};

static void test_every_model_runs(void **state)
{
    char path[300], text[2048];
    snprintf(path, sizeof path, "%s/m.yaml", e2e_dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text,
                 "name: m\nseed: 1\nmodel: %s/%s/config.json\ngpu: %s\n%s"
                 "scheduler: {name: chunked, token_budget: 512}\n"
                 "workload: {num_requests: 30, arrival: {process: poisson, rate: 20}, "
                 "prompt_tokens: {dist: uniform, min: 20, max: 90}, output_tokens: 20}\n",
                 models, cases[i].dir, cases[i].gpu, cases[i].extra);
        e2e_write(path, text);
        int rc = e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --no-db --json", LLMSIM_BINARY,
                        path);
        if (rc != 0 || !strstr(out, "\"completed\": 30"))
            fail_msg("%s on %s: exit %d\n%s\n%s", cases[i].dir, cases[i].gpu, rc, out, err);
        print_message("%-36s %-9s completed 30\n", cases[i].dir, cases[i].gpu);
    }
}

int main(void)
{
    const char *base = getenv("LLMSIM_SHARED_DIR");
    snprintf(models, sizeof models, "%s/data/models", base ? base : LLMSIM_SHARED_DIR);
    char probe[600];
    snprintf(probe, sizeof probe, "%s/deepseek-v3/config.json", models);
    if (access(probe, R_OK) != 0) {
        printf("skipped: no model configs under %s\n", models);
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_model_runs)};
    return e2e_run_group(tests);
}
