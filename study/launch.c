/*
 * launch.c: the command that starts a recommended deployment on the real engine, with the
 * flags each engine documents. A flag is emitted only through its engine's table below, which
 * names the file it comes from:
 *   vLLM:   vllm/engine/arg_utils.py, EngineArgs.add_cli_args (the parallel, cache, scheduler
 *           and VllmConfig groups): `vllm serve MODEL ...`;
 *   SGLang: python/sglang/srt/server_args.py, ServerArgs (each field's flag is its name with
 *           dashes; pp_size's is --pp-size): `python -m sglang.launch_server --model-path MODEL
 *           ...`;
 *   TensorRT-LLM: tensorrt_llm/commands/serve.py, the `serve` command's click options:
 *           `trtllm-serve serve MODEL ...`; attention data parallelism and the KV dtype are
 *           LLM API fields (tensorrt_llm/llmapi/llm_args.py: enable_attention_dp,
 *           kv_cache_config.dtype) given in the file --extra_llm_api_options names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "study_recommend.h"

static const char *const vllm_flags[] = {
    "--tensor-parallel-size",   "--pipeline-parallel-size", "--data-parallel-size",
    "--enable-expert-parallel", "--max-num-seqs",           "--max-num-batched-tokens",
    "--kv-cache-dtype",         "--kv-transfer-config",     NULL};
static const char *const sglang_flags[] = {"--model-path",
                                           "--tp-size",
                                           "--pp-size",
                                           "--dp-size",
                                           "--ep-size",
                                           "--enable-dp-attention",
                                           "--max-running-requests",
                                           "--chunked-prefill-size",
                                           "--kv-cache-dtype",
                                           "--disaggregation-mode",
                                           "--disaggregation-transfer-backend",
                                           NULL};
static const char *const trtllm_flags[] = {"--backend",
                                           "--tp_size",
                                           "--pp_size",
                                           "--ep_size",
                                           "--max_batch_size",
                                           "--max_num_tokens",
                                           "--enable_chunked_prefill",
                                           "--extra_llm_api_options",
                                           NULL};

const char *const *study_launch_flags(const char *engine)
{
    if (strcmp(engine, "vllm") == 0)
        return vllm_flags;
    if (strcmp(engine, "sglang") == 0)
        return sglang_flags;
    if (strcmp(engine, "trtllm") == 0)
        return trtllm_flags;
    return NULL;
}

/* A command being written. */
typedef struct cmd {
    char *buf;
    size_t len, used;
    const char *const *flags;
} cmd;

static void text(cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text(cmd *c, const char *fmt, ...)
{
    if (c->used + 1 >= c->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(c->buf + c->used, c->len - c->used, fmt, ap);
    va_end(ap);
    if (w > 0)
        c->used = c->used + (size_t)w < c->len ? c->used + (size_t)w : c->len - 1;
}

/* " FLAG" or " FLAG VALUE"; FLAG must be in the engine's table. */
static void flag(cmd *c, const char *f, const char *value)
{
    int known = 0;
    for (int i = 0; c->flags[i]; i++)
        known |= strcmp(c->flags[i], f) == 0;
    SIM_CHECK(NULL, known || !"a launch flag outside its engine's documented table");
    text(c, " %s%s%s", f, value ? " " : "", value ? value : "");
}

static void flag_int(cmd *c, const char *f, int v)
{
    char b[32];
    snprintf(b, sizeof b, "%d", v);
    flag(c, f, b);
}

/* The candidate's batch limits under the engine's flags (its seats, its token budget) and, where
 * kv_dtype names the value, an fp8 KV cache as --kv-cache-dtype. */
static void batch_flags(cmd *c, const study_rec_cand *k, const char *seats, const char *tokens,
                        const char *kv_dtype)
{
    if (k->seats)
        flag_int(c, seats, k->seats);
    if (k->tokens)
        flag_int(c, tokens, k->tokens);
    if (k->kv_fp8 && kv_dtype)
        flag(c, "--kv-cache-dtype", kv_dtype);
}

/* vLLM: TP, then DP ranks with expert parallelism (vLLM's attention DP + EP for MoE). */
static void vllm_layout(cmd *c, const study_rec_layout *l, const study_rec_cand *k)
{
    flag_int(c, "--tensor-parallel-size", l->tp);
    if (l->pp > 1)
        flag_int(c, "--pipeline-parallel-size", l->pp);
    if (l->dp > 1)
        flag_int(c, "--data-parallel-size", l->dp);
    if (l->ep > 1)
        flag(c, "--enable-expert-parallel", NULL);
    batch_flags(c, k, "--max-num-seqs", "--max-num-batched-tokens", "fp8");
}

/* SGLang: --tp-size counts every GPU; DP attention splits them into --dp-size ranks. */
static void sglang_layout(cmd *c, const study_rec_layout *l, const study_rec_cand *k)
{
    flag_int(c, "--tp-size", l->tp * l->dp);
    if (l->pp > 1)
        flag_int(c, "--pp-size", l->pp);
    if (l->dp > 1) {
        flag_int(c, "--dp-size", l->dp);
        flag(c, "--enable-dp-attention", NULL);
    }
    if (l->ep > 1)
        flag_int(c, "--ep-size", l->ep);
    batch_flags(c, k, "--max-running-requests", "--chunked-prefill-size", "fp8_e4m3");
}

/* TensorRT-LLM: --tp_size counts every GPU; attention DP and the KV dtype go in the extra
 * options file, whose content follows the command. */
static void trtllm_layout(cmd *c, const study_rec_layout *l, const study_rec_cand *k)
{
    flag(c, "--backend", "pytorch");
    flag_int(c, "--tp_size", l->tp * l->dp);
    if (l->pp > 1)
        flag_int(c, "--pp_size", l->pp);
    if (l->ep > 1)
        flag_int(c, "--ep_size", l->ep);
    batch_flags(c, k, "--max_batch_size", "--max_num_tokens", NULL); /* KV dtype: extra.yaml */
    if (k->chunked)
        flag(c, "--enable_chunked_prefill", NULL);
    if (l->dp > 1 || k->kv_fp8) {
        flag(c, "--extra_llm_api_options", "extra.yaml");
        text(c, "   # extra.yaml:%s%s", l->dp > 1 ? " enable_attention_dp: true;" : "",
             k->kv_fp8 ? " kv_cache_config: {dtype: fp8}" : "");
    }
}

/* vllm serve, with the NIXL connector for a disaggregated role. */
static void vllm_cmd(cmd *c, const study_rec_cand *k, const study_rec_layout *l, const char *model,
                     const char *role)
{
    text(c, "vllm serve %s", model);
    vllm_layout(c, l, k);
    if (role)
        flag(c, "--kv-transfer-config",
             "'{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'");
}

/* SGLang's launch_server, with its disaggregation mode and Mooncake's transfer for a role. */
static void sglang_cmd(cmd *c, const study_rec_cand *k, const study_rec_layout *l,
                       const char *model, const char *role)
{
    text(c, "python -m sglang.launch_server");
    flag(c, "--model-path", model);
    sglang_layout(c, l, k);
    if (role) {
        flag(c, "--disaggregation-mode", role);
        flag(c, "--disaggregation-transfer-backend", "mooncake");
    }
}

/* One server's command for candidate k with layout l; role: its disaggregated role, or NULL. */
static void one(cmd *c, const study_rec_cand *k, const study_rec_layout *l, const char *model,
                const char *role)
{
    if (strcmp(k->engine, "vllm") == 0) {
        vllm_cmd(c, k, l, model, role);
    } else if (strcmp(k->engine, "sglang") == 0) {
        sglang_cmd(c, k, l, model, role);
    } else {
        text(c, "trtllm-serve serve %s", model);
        trtllm_layout(c, l, k);
    }
}

/* A disaggregated candidate's two commands: its prefill servers', then its decode servers'. */
static void both_pools(cmd *c, const study_rec_cand *k, const char *model)
{
    text(c, "prefill x%d: ", k->nprefill);
    one(c, k, &k->lay, model, "prefill");
    text(c, "\ndecode x%d: ", k->ndecode);
    one(c, k, &k->dec, model, "decode");
}

const char *study_launch(const study_rec_cand *k, const char *model, char *buf, size_t len)
{
    cmd c = {buf, len, 0, study_launch_flags(k->engine)};
    if (len)
        buf[0] = '\0';
    if (!c.flags)
        text(&c, "(no launch command for engine %s)", k->engine);
    else if (!k->disagg)
        one(&c, k, &k->lay, model, NULL);
    else
        both_pools(&c, k, model);
    return buf;
}
