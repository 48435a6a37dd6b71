/*
 * models_util.h: model shapes the calibration and cost-model tests share: the tiny dense model
 * (tiny_model.h) and the config.json texts of
 * DeepSeek-V3.2 (MLA, MoE, sparse-attention indexer) and Qwen3.5-MoE (linear attention); the
 * catalog's models and GPUs, a config text's model and a roofline predictor, read or built or
 * the test fails.
 */
#ifndef LLMSIM_TESTS_MODELS_UTIL_H
#define LLMSIM_TESTS_MODELS_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "catalog.h"
#include "engine.h"
#include "roofline.h"
#include "tiny_model.h"

static const char dsv32[] =
    "{\"model_type\": \"deepseek_v32\", \"num_hidden_layers\": 61, \"hidden_size\": 7168, "
    "\"num_attention_heads\": 128, \"num_key_value_heads\": 128, \"intermediate_size\": 18432, "
    "\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, "
    "\"qk_rope_head_dim\": 64, \"v_head_dim\": 128, \"n_routed_experts\": 256, "
    "\"num_experts_per_tok\": 8, \"moe_intermediate_size\": 2048, \"n_shared_experts\": 1, "
    "\"first_k_dense_replace\": 3, \"index_topk\": 2048, \"index_n_heads\": 64, "
    "\"index_head_dim\": 128, \"vocab_size\": 129280, \"max_position_embeddings\": 163840, "
    "\"torch_dtype\": \"bfloat16\"}";

static const char qwen35[] =
    "{\"model_type\": \"qwen3_5_moe\", \"text_config\": {\"model_type\": \"qwen3_5_moe_text\", "
    "\"num_hidden_layers\": 60, \"hidden_size\": 4096, \"num_attention_heads\": 32, "
    "\"num_key_value_heads\": 2, \"head_dim\": 256, \"attn_output_gate\": true, "
    "\"full_attention_interval\": 4, \"linear_conv_kernel_dim\": 4, \"linear_key_head_dim\": "
    "128, \"linear_num_key_heads\": 16, \"linear_num_value_heads\": 64, "
    "\"linear_value_head_dim\": 128, \"num_experts\": 512, \"num_experts_per_tok\": 10, "
    "\"moe_intermediate_size\": 1024, \"shared_expert_intermediate_size\": 1024, "
    "\"vocab_size\": 248320, \"max_position_embeddings\": 262144, \"mamba_ssm_dtype\": "
    "\"float32\", \"dtype\": \"bfloat16\"}, \"tie_word_embeddings\": false}";

/* The catalog's model name; the test fails when there is none. */
static inline eng_model catalog_model(const char *name)
{
    eng_model m;
    if (cal_model_find(name, &m) != 0)
        fail_msg("no catalog model %s", name);
    return m;
}

/* The catalog's GPU name; the test fails when there is none. */
static inline eng_gpu catalog_gpu(const char *name)
{
    eng_gpu g;
    if (cal_gpu_find(name, &g) != 0)
        fail_msg("no catalog GPU %s", name);
    return g;
}

/* The model of a config.json text; the test fails with the reader's message when it refuses
 * it. */
static inline eng_model config_model(const char *text)
{
    eng_model m;
    char why[600];
    if (cal_model_from_config_text("test/config.json", text, &m, why, sizeof why) != 0)
        fail_msg("refused: %s", why);
    return m;
}

/* The roofline predictor of model m on catalog GPU gpu, served as *sv (the caller frees it with
 * cal_predictor_free); the test fails when the GPU is unknown or the roofline refuses. */
static inline eng_predictor roofline_of(const eng_model *m, const char *gpu, const cal_serving *sv)
{
    eng_gpu g = catalog_gpu(gpu);
    eng_predictor p;
    sim_err err = {{0}};
    if (cal_roofline_new(m, &g, sv, &p, &err) != 0)
        fail_msg("%s on %s (tp %d): %s", m->name, gpu, (int)sv->layout.tp, err.msg);
    return p;
}

#endif
