/*
 * hfconfig.c: reads a Hugging Face config.json into an eng_model.
 *
 * The text is parsed once into a JSON tree (json.c); the reader then dispatches on model_type
 * (architectures when model_type is absent) to one function per family, each reading the keys
 * its transformers / vLLM model class reads, with that class's defaults for absent keys. A
 * multimodal wrapper's text_config is read for its language model. Anything the description
 * cannot hold is refused by key: an unknown model_type or layer type, a value of a known key
 * that changes the architecture in a way llmsim does not model, an unknown quant_method or an
 * exclusion list entry it cannot place. Approximations that are accepted go to m->notes.
 * Nothing outlives a call except *out.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_int.h"
#include "catalog.h"
#include "json.h"
#include "sim.h"

typedef struct rd {
    const char *file;     /* for messages */
    const char *dir;      /* the file's folder (for hf_quant_config.json), or NULL */
    const sim_json *root; /* the document */
    const sim_json *cfg;  /* the language model's object: root or root.text_config */
    const char *pre;      /* "" or "text_config." before key names in messages */
    char *why;
    size_t len;
    eng_model *m;
} rd;

/* ---------------- messages and typed getters ---------------- */

static int fail_at(rd *r, const sim_json *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(rd *r, const sim_json *at, const char *key, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        snprintf(r->why, r->len, "%s:%d: key \"%s%s\": %s", r->file, at->line, r->pre, key, msg);
    else
        snprintf(r->why, r->len, "%s: key \"%s%s\": %s", r->file, r->pre, key, msg);
    return -1;
}

static int missing(rd *r, const char *key)
{
    snprintf(r->why, r->len, "%s: missing key \"%s%s\"", r->file, r->pre, key);
    return -1;
}

/* key of r->cfg, treating JSON null as absent */
static const sim_json *get(rd *r, const char *key)
{
    const sim_json *v = sim_json_get(r->cfg, key);
    return v && v->kind != SIM_JSON_NULL ? v : NULL;
}

/* An integer >= min into *out; absent (or null) is an error when required, else leaves *out. */
static int get_int(rd *r, const char *key, int32_t min, int required, int32_t *out)
{
    const sim_json *v = get(r, key);
    if (!v)
        return required ? missing(r, key) : 0;
    if (v->kind != SIM_JSON_NUM || v->num != floor(v->num) || v->num < min ||
        v->num > 2147483647.0) {
        if (min == 1)
            return fail_at(r, v, key, "must be a positive integer");
        return fail_at(r, v, key, "must be an integer >= %d", min);
    }
    *out = (int32_t)v->num;
    return 0;
}

static int get_bool(rd *r, const char *key, int32_t *out)
{
    const sim_json *v = get(r, key);
    if (!v)
        return 0;
    if (v->kind != SIM_JSON_BOOL)
        return fail_at(r, v, key, "must be true or false");
    *out = (int32_t)v->num;
    return 0;
}

/* A string value (NULL when absent); -1 with a message when present but not a string. */
static int get_str(rd *r, const char *key, const char **out)
{
    const sim_json *v = get(r, key);
    *out = NULL;
    if (!v)
        return 0;
    if (v->kind != SIM_JSON_STR)
        return fail_at(r, v, key, "must be a string, not %s", sim_json_kind_name(v->kind));
    *out = v->str;
    return 0;
}

/* An integer key of a family's table: the model field it fills, its minimum, whether the
 * config must give it. */
typedef struct int_key {
    const char *key;
    size_t at; /* offsetof(eng_model, the int32_t field) */
    int32_t min;
    int required;
} int_key;

#define INT_KEY(k, field, min, req)                                                                \
    {                                                                                              \
        k, offsetof(eng_model, field), min, req                                                    \
    }
#define GET_INTS(r, t) get_ints(r, t, sizeof(t) / sizeof((t)[0]))

/* Reads the keys of t in table order into r->m; -1 at the first one that fails. */
static int get_ints(rd *r, const int_key *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int32_t *field = (int32_t *)(void *)((char *)r->m + t[i].at);
        if (get_int(r, t[i].key, t[i].min, t[i].required, field))
            return -1;
    }
    return 0;
}

/* ---------------- shared parts of the families ---------------- */

/* The keys every family gives its shape by. */
static const int_key shape_keys[] = {
    INT_KEY("num_hidden_layers", layers, 1, 1),
    INT_KEY("hidden_size", hidden, 1, 1),
    INT_KEY("num_attention_heads", heads, 1, 1),
    INT_KEY("vocab_size", vocab, 1, 1),
    INT_KEY("max_position_embeddings", max_context, 1, 1),
};

/* The attention shape every GQA family shares: layers, hidden, heads, KV heads, head_dim
 * (explicit, else hidden / heads), vocabulary, context. */
static int read_gqa(rd *r)
{
    eng_model *m = r->m;
    if (GET_INTS(r, shape_keys))
        return -1;
    m->kv_heads = m->heads;
    if (get_int(r, "num_key_value_heads", 1, 0, &m->kv_heads) ||
        get_int(r, "head_dim", 1, 0, &m->head_dim) ||
        get_bool(r, "tie_word_embeddings", &m->tied_embeddings))
        return -1;
    const sim_json *h = get(r, "num_attention_heads");
    if (m->head_dim == 0 && m->hidden % m->heads != 0)
        return fail_at(r, h, "num_attention_heads",
                       "hidden_size %d is not a multiple of num_attention_heads %d and no "
                       "head_dim is given",
                       m->hidden, m->heads);
    if (m->head_dim == 0)
        m->head_dim = m->hidden / m->heads;
    if (m->heads % m->kv_heads != 0) {
        const sim_json *k = get(r, "num_key_value_heads");
        snprintf(r->why, r->len,
                 "%s:%d: num_key_value_heads %d does not divide num_attention_heads %d", r->file,
                 k ? k->line : h->line, m->kv_heads, m->heads);
        return -1;
    }
    return 0;
}

/* Layer kinds of layer_types, as a bit set of what a family allows. */
enum { LT_FULL = 1, LT_SLIDING = 2, LT_CHUNKED = 4, LT_LINEAR = 8 };

/* A layer_types entry's LT_* kind; 0 for one llmsim does not know. */
static int layer_kind(const sim_json *e)
{
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"full_attention", LT_FULL},
                 {"sliding_attention", LT_SLIDING},
                 {"chunked_attention", LT_CHUNKED},
                 {"linear_attention", LT_LINEAR}};
    for (size_t k = 0; e->kind == SIM_JSON_STR && k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp(e->str, kinds[k].name) == 0)
            return kinds[k].kind;
    return 0;
}

/* Counts the kinds in layer_types (absent: *present = 0). Each entry must be a kind in
 * `allowed`; the list must have one entry per layer. */
static int read_layer_types(rd *r, int allowed, int *present, int32_t *sliding, int32_t *chunked,
                            int32_t *linear)
{
    const sim_json *lt = get(r, "layer_types");
    *present = 0;
    *sliding = *chunked = *linear = 0;
    if (!lt)
        return 0;
    if (lt->kind != SIM_JSON_ARR)
        return fail_at(r, lt, "layer_types", "must be a list of layer kinds");
    if (lt->n != r->m->layers)
        return fail_at(r, lt, "layer_types", "has %d entries for %d layers (num_hidden_layers)",
                       lt->n, r->m->layers);
    int i = 0;
    for (const sim_json *e = lt->child; e; e = e->next, i++) {
        int kind = layer_kind(e);
        if (!(kind & allowed))
            return fail_at(r, e, "layer_types",
                           "entry %d ('%s') is a layer kind llmsim does not model for model_type "
                           "%s",
                           i, e->kind == SIM_JSON_STR ? e->str : "?", r->m->arch);
        *sliding += kind == LT_SLIDING;
        *chunked += kind == LT_CHUNKED;
        *linear += kind == LT_LINEAR;
    }
    *present = 1;
    return 0;
}

/* Every layer windowed when sliding_window is set below the context (Mistral, Mixtral, Phi-3:
 * MODEL: transformers' and vLLM's Mistral/Phi-3 apply config.sliding_window in every layer). */
static int read_uniform_window(rd *r)
{
    eng_model *m = r->m;
    int32_t w = 0;
    if (get_int(r, "sliding_window", 1, 0, &w))
        return -1;
    if (w > 0 && w < m->max_context) {
        m->window_layers = m->layers;
        m->window = w;
    }
    return 0;
}

/* Qwen2/Qwen3 carry sliding_window but apply it only with use_sliding_window true, to the
 * layers from max_window_layers on; llmsim does not model that split. */
static int refuse_qwen_window(rd *r)
{
    int32_t use = 0;
    if (get_bool(r, "use_sliding_window", &use))
        return -1;
    if (use)
        return fail_at(r, get(r, "use_sliding_window"), "use_sliding_window",
                       "true (sliding-window attention from max_window_layers on) is not "
                       "modelled; set it to false");
    return 0;
}

/* The set of layer indices in an integer list (mlp_only_layers, moe_layers); flags[i] = 1. */
static int read_index_list(rd *r, const char *key, unsigned char *flags, int *present)
{
    const sim_json *v = get(r, key);
    *present = v != NULL;
    if (!v)
        return 0;
    if (v->kind != SIM_JSON_ARR)
        return fail_at(r, v, key, "must be a list of layer indices");
    for (const sim_json *e = v->child; e; e = e->next) {
        if (e->kind != SIM_JSON_NUM || e->num != floor(e->num) || e->num < 0 ||
            e->num >= r->m->layers)
            return fail_at(r, e, key, "entries must be layer indices in [0, %d)", r->m->layers);
        flags[(int)e->num] = 1;
    }
    return 0;
}

static int note_mtp(rd *r, const char *key)
{
    int32_t n = 0;
    if (get_int(r, key, 0, 0, &n))
        return -1;
    if (n > 0)
        eng_model_note(r->m,
                       "%s: %s %d: the multi-token-prediction layers are not counted or run "
                       "(published totals leave them out)",
                       r->m->name, key, n);
    return 0;
}

/* ---------------- families ---------------- */

/* llama, mistral, qwen2, qwen3, phi3: dense decoders. */
static int read_dense(rd *r)
{
    eng_model *m = r->m;
    const char *t = m->arch;
    int32_t bias = 0;
    if (read_gqa(r) || get_int(r, "intermediate_size", 1, 1, &m->intermediate) ||
        get_bool(r, "attention_bias", &bias) || get_bool(r, "mlp_bias", &m->mlp_bias))
        return -1;
    if (strcmp(t, "qwen2") == 0) {
        m->qkv_bias = 1; /* MODEL: Qwen2Attention: q, k, v with bias=True, o without */
        return refuse_qwen_window(r);
    }
    m->qkv_bias = m->o_bias = bias; /* Llama, Qwen3: q, k, v and o use attention_bias */
    if (strcmp(t, "qwen3") == 0) {
        m->qk_norm = 1; /* MODEL: Qwen3Attention: q_norm, k_norm over head_dim */
        return refuse_qwen_window(r);
    }
    if (strcmp(t, "mistral") == 0 || strcmp(t, "phi3") == 0)
        return read_uniform_window(r);
    return 0;
}

/* MODEL: transformers' Qwen2MoE / Qwen3MoE / Qwen3.5 decoder layers: the MLP is sparse when
 * the layer is not in mlp_only_layers, num_experts > 0 and (index + 1) % decoder_sparse_step
 * == 0; the others use a dense MLP of intermediate_size. */
static int read_qwen_moe_layers(rd *r)
{
    eng_model *m = r->m;
    int32_t step = 1;
    int present;
    unsigned char *only = sim_xcalloc((size_t)m->layers, 1);
    int rc = get_int(r, "decoder_sparse_step", 1, 0, &step) ||
             read_index_list(r, "mlp_only_layers", only, &present);
    for (int32_t i = 0; rc == 0 && i < m->layers; i++)
        m->moe_layers += !only[i] && m->experts > 0 && (i + 1) % step == 0;
    free(only);
    if (rc == 0 && m->moe_layers < m->layers && m->intermediate == 0)
        rc = missing(r, "intermediate_size");
    return rc ? -1 : 0;
}

/* mixtral, qwen2_moe, qwen3_moe */
static int read_moe(rd *r)
{
    eng_model *m = r->m;
    const char *t = m->arch;
    if (read_gqa(r) || get_int(r, "num_experts_per_tok", 1, 1, &m->experts_per_tok))
        return -1;
    if (strcmp(t, "mixtral") == 0) {
        /* MODEL: MixtralSparseMoeBlock in every layer; experts of intermediate_size */
        if (get_int(r, "num_local_experts", 1, 1, &m->experts) ||
            get_int(r, "intermediate_size", 1, 1, &m->expert_inter))
            return -1;
        m->moe_layers = m->layers;
        return read_uniform_window(r);
    }
    int32_t bias = 0;
    if (get_int(r, "num_experts", 1, 1, &m->experts) ||
        get_int(r, "moe_intermediate_size", 1, 1, &m->expert_inter) ||
        get_int(r, "intermediate_size", 1, 0, &m->intermediate) ||
        get_bool(r, "attention_bias", &bias) || refuse_qwen_window(r))
        return -1;
    if (strcmp(t, "qwen2_moe") == 0) {
        m->qkv_bias = 1;
        /* MODEL: Qwen2MoeSparseMoeBlock: a shared expert of shared_expert_intermediate_size
         * scaled by a sigmoid shared_expert_gate (hidden -> 1) */
        if (get_int(r, "shared_expert_intermediate_size", 0, 0, &m->shared_inter))
            return -1;
        m->shared_gate = m->shared_inter > 0;
    } else {
        m->qkv_bias = m->o_bias = bias;
        m->qk_norm = 1;
    }
    return read_qwen_moe_layers(r);
}

/* MLA's shape beyond the common keys. */
static const int_key mla_keys[] = {
    INT_KEY("intermediate_size", intermediate, 1, 1),
    INT_KEY("q_lora_rank", q_lora_rank, 0, 0),
    INT_KEY("kv_lora_rank", kv_lora_rank, 1, 1),
    INT_KEY("qk_nope_head_dim", qk_nope_dim, 1, 1),
    INT_KEY("qk_rope_head_dim", qk_rope_dim, 1, 1),
    INT_KEY("v_head_dim", v_head_dim, 1, 1),
};

/* The MLA attention of the DeepSeek family. */
static int read_mla(rd *r)
{
    eng_model *m = r->m;
    int32_t bias = 0, qk = 0;
    m->attn = ENG_ATTN_MLA;
    if (GET_INTS(r, shape_keys) || GET_INTS(r, mla_keys) ||
        get_bool(r, "tie_word_embeddings", &m->tied_embeddings) ||
        get_bool(r, "attention_bias", &bias) || get_int(r, "qk_head_dim", 1, 0, &qk))
        return -1;
    if (bias)
        return fail_at(r, get(r, "attention_bias"), "attention_bias",
                       "true (biased MLA projections) is not modelled");
    if (qk && qk != m->qk_nope_dim + m->qk_rope_dim)
        return fail_at(r, get(r, "qk_head_dim"), "qk_head_dim",
                       "%d is not qk_nope_head_dim + qk_rope_head_dim = %d", qk,
                       m->qk_nope_dim + m->qk_rope_dim);
    m->kv_heads = m->heads;
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
    return 0;
}

/* DeepSeekMoE: which layers route, the shared experts, the router's correction bias. */
static int read_deepseek_moe(rd *r)
{
    eng_model *m = r->m;
    int32_t first_dense = 0, freq = 1, shared = 0;
    const char *topk = NULL;
    /* MODEL: DeepseekV3DecoderLayer: the MLP is DeepseekV3MoE when n_routed_experts is set,
     * layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0; the MoE has
     * n_shared_experts x moe_intermediate_size of shared expert, and with topk_method noaux_tc
     * an e_score_correction_bias per expert. */
    if (get_int(r, "n_routed_experts", 1, 0, &m->experts) ||
        get_int(r, "first_k_dense_replace", 0, 0, &first_dense) ||
        get_int(r, "moe_layer_freq", 1, 0, &freq) || get_str(r, "topk_method", &topk))
        return -1;
    if (m->experts == 0)
        return 0;
    if (get_int(r, "num_experts_per_tok", 1, 1, &m->experts_per_tok) ||
        get_int(r, "moe_intermediate_size", 1, 1, &m->expert_inter) ||
        get_int(r, "n_shared_experts", 0, 0, &shared))
        return -1;
    for (int32_t i = 0; i < m->layers; i++)
        m->moe_layers += i >= first_dense && i % freq == 0;
    m->shared_inter = shared * m->expert_inter;
    m->router_bias = topk && strcmp(topk, "noaux_tc") == 0;
    return 0;
}

/* deepseek_v2, deepseek_v3, kimi_k2, deepseek_v32, glm_moe_dsa: MLA and DeepSeekMoE. */
static int read_deepseek(rd *r)
{
    eng_model *m = r->m;
    if (read_mla(r) || read_deepseek_moe(r))
        return -1;
    /* DeepSeek sparse attention (DeepSeek-V3.2, GLM-5) */
    if (get_int(r, "index_topk", 1, 0, &m->index_topk))
        return -1;
    if (m->index_topk && (get_int(r, "index_n_heads", 1, 1, &m->index_heads) ||
                          get_int(r, "index_head_dim", 1, 1, &m->index_dim)))
        return -1;
    return note_mtp(r, "num_nextn_predict_layers");
}

/* gpt_oss: alternating sliding/full attention with sinks, biased MoE in every layer. */
static int read_gpt_oss(rd *r)
{
    eng_model *m = r->m;
    int32_t bias = 0, chunked, linear;
    int present;
    if (read_gqa(r) || get_int(r, "num_local_experts", 1, 1, &m->experts) ||
        get_int(r, "intermediate_size", 1, 1, &m->expert_inter) ||
        get_bool(r, "attention_bias", &bias))
        return -1;
    if (get_int(r, "num_experts_per_tok", 1, 0, &m->experts_per_tok) ||
        (m->experts_per_tok == 0 && get_int(r, "experts_per_token", 1, 1, &m->experts_per_tok)))
        return -1;
    /* MODEL: transformers' GptOssAttention (q, k, v, o with attention_bias; one sink logit per
     * head), GptOssExperts (gate_up and down projections with biases), GptOssTopKRouter (a
     * linear layer with bias); layer_types mark the sliding_window layers. */
    m->qkv_bias = m->o_bias = bias;
    m->sinks = 1;
    m->moe_layers = m->layers;
    m->expert_bias = m->router_bias = 1;
    if (read_layer_types(r, LT_FULL | LT_SLIDING, &present, &m->window_layers, &chunked, &linear))
        return -1;
    if (!present) /* MODEL: GptOssConfig's default: sliding on even layers, full on odd */
        m->window_layers = (m->layers + 1) / 2;
    if (m->window_layers && get_int(r, "sliding_window", 1, 1, &m->window))
        return -1;
    return 0;
}

/* gemma2 and gemma3_text */
static int read_gemma(rd *r)
{
    eng_model *m = r->m;
    int g3 = strcmp(m->arch, "gemma3_text") == 0;
    int32_t bias = 0, chunked, linear, pattern = 6;
    int present;
    if (read_gqa(r) || get_int(r, "intermediate_size", 1, 1, &m->intermediate) ||
        get_bool(r, "attention_bias", &bias) ||
        read_layer_types(r, LT_FULL | LT_SLIDING, &present, &m->window_layers, &chunked, &linear))
        return -1;
    /* MODEL: transformers' Gemma2/Gemma3 decoder layers: four RMSNorms (input, post-attention,
     * pre- and post-feedforward), GeGLU MLP, q/k/v/o biases by attention_bias; Gemma-3 adds
     * q_norm and k_norm over head_dim. Without layer_types, Gemma-2 alternates sliding (even
     * index) and full layers; Gemma-3 makes every sliding_window_pattern-th layer full (5
     * local : 1 global by default). */
    m->norms_per_layer = 4;
    m->qkv_bias = m->o_bias = bias;
    m->qk_norm = g3;
    if (!present) {
        if (g3 && get_int(r, "sliding_window_pattern", 1, 0, &pattern))
            return -1;
        int32_t every = g3 ? pattern : 2;
        m->window_layers = 0;
        for (int32_t i = 0; i < m->layers; i++)
            m->window_layers += (i + 1) % every != 0;
    }
    if (m->window_layers) {
        if (get_int(r, "sliding_window", 1, 1, &m->window))
            return -1;
        if (m->window >= m->max_context)
            m->window_layers = m->window = 0;
    }
    return 0;
}

/* opt */
static int read_opt(rd *r)
{
    eng_model *m = r->m;
    int32_t proj = 0;
    m->gated_mlp = 0;
    m->qkv_bias = 1;
    if (read_gqa(r) || get_int(r, "ffn_dim", 1, 1, &m->intermediate) ||
        get_bool(r, "enable_bias", &m->qkv_bias) || get_int(r, "word_embed_proj_dim", 1, 0, &proj))
        return -1;
    if (proj && proj != m->hidden)
        return fail_at(r, get(r, "word_embed_proj_dim"), "word_embed_proj_dim",
                       "%d differs from hidden_size %d (project_in/project_out layers are not "
                       "modelled)",
                       proj, m->hidden);
    /* MODEL: transformers' OPTDecoderLayer: every linear layer biased by enable_bias, LayerNorms
     * with a bias, a learned position embedding of max_position_embeddings + 2 rows (the
     * offset OPTLearnedPositionalEmbedding adds); ReLU MLP of ffn_dim. */
    m->o_bias = m->mlp_bias = m->qkv_bias;
    m->norm_bias = 1;
    m->learned_pos = m->max_context + 2;
    return 0;
}

/* MiniMax-M2's experts. */
static const int_key minimax_moe_keys[] = {
    INT_KEY("num_local_experts", experts, 1, 1),
    INT_KEY("num_experts_per_tok", experts_per_tok, 1, 1),
    INT_KEY("intermediate_size", expert_inter, 1, 1),
    INT_KEY("shared_intermediate_size", shared_inter, 0, 0),
};

/* MiniMax's multi-token-prediction modules: noted, not run. */
static int note_minimax_mtp(rd *r)
{
    int32_t mtp = 0, modules = 0;
    if (get_bool(r, "use_mtp", &mtp) || get_int(r, "num_mtp_modules", 0, 0, &modules))
        return -1;
    if (mtp && modules)
        eng_model_note(r->m,
                       "%s: use_mtp with num_mtp_modules %d: the multi-token-prediction "
                       "modules are not counted or run",
                       r->m->name, modules);
    return 0;
}

/* minimax_m2: full attention with per-layer QK norm, MoE in every layer. */
static int read_minimax(rd *r)
{
    eng_model *m = r->m;
    int32_t qk = 0, routing_bias = 0;
    const char *qk_type = NULL;
    if (read_gqa(r) || GET_INTS(r, minimax_moe_keys) || get_bool(r, "use_qk_norm", &qk) ||
        get_str(r, "qk_norm_type", &qk_type) || get_bool(r, "use_routing_bias", &routing_bias))
        return -1;
    const sim_json *at = get(r, "attn_type_list");
    if (at && at->kind == SIM_JSON_ARR)
        for (const sim_json *e = at->child; e; e = e->next)
            if (e->kind != SIM_JSON_NUM || e->num != 1)
                return fail_at(r, e, "attn_type_list",
                               "lightning (linear) attention layers of MiniMax-M1 are not "
                               "modelled");
    /* MODEL: MiniMaxM2 (vLLM minimax_m2.py): q_norm and k_norm over all heads when
     * qk_norm_type is per_layer, a sparse MoE block in every layer with an
     * e_score_correction_bias when use_routing_bias. */
    m->moe_layers = m->layers;
    m->qk_norm = qk ? (qk_type && strcmp(qk_type, "per_head") == 0 ? 1 : 2) : 0;
    m->router_bias = routing_bias;
    return note_minimax_mtp(r);
}

/* Llama-4's experts: intermediate_size is an expert's, intermediate_size_mlp the dense MLP's. */
static const int_key llama4_moe_keys[] = {
    INT_KEY("intermediate_size", expert_inter, 1, 1),
    INT_KEY("intermediate_size_mlp", intermediate, 1, 1),
    INT_KEY("num_local_experts", experts, 1, 1),
    INT_KEY("num_experts_per_tok", experts_per_tok, 1, 1),
};

/* Llama-4's layers that use RoPE (and so chunked attention) when layer_types is absent:
 * those no_rope_layers marks 1, else all but every fourth. */
static int rope_layers(rd *r, int32_t *n)
{
    const sim_json *nr = get(r, "no_rope_layers");
    *n = 0;
    if (!nr || nr->kind != SIM_JSON_ARR || nr->n == 0) {
        for (int32_t i = 0; i < r->m->layers; i++)
            *n += (i + 1) % 4 != 0;
        return 0;
    }
    if (nr->n != r->m->layers)
        return fail_at(r, nr, "no_rope_layers", "has %d entries for %d layers", nr->n,
                       r->m->layers);
    for (const sim_json *e = nr->child; e; e = e->next)
        *n += e->kind == SIM_JSON_NUM && e->num != 0;
    return 0;
}

/* llama4_text: MoE on every interleave_moe_layer_step-th layer with a shared expert, chunked
 * local attention on the layers that use RoPE. */
static int read_llama4(rd *r)
{
    eng_model *m = r->m;
    int32_t bias = 0, step = 1, chunk = 0, sliding, chunked, linear;
    int present;
    if (read_gqa(r) || GET_INTS(r, llama4_moe_keys) ||
        get_int(r, "interleave_moe_layer_step", 1, 0, &step) ||
        get_int(r, "attention_chunk_size", 1, 0, &chunk) || get_bool(r, "attention_bias", &bias))
        return -1;
    m->qkv_bias = m->o_bias = bias;
    m->shared_inter = m->expert_inter; /* MODEL: Llama4TextMoe's shared_expert is a Llama4TextMLP
                                          of intermediate_size */
    /* MODEL: Llama4TextConfig: moe_layers defaults to range(step - 1, layers, step);
     * no_rope_layers (empty = default) marks with 1 the layers using RoPE, every fourth layer
     * (no_rope_layer_interval 4) being a NoPE global layer; layer_types default to
     * chunked_attention where no_rope_layers is 1. */
    unsigned char *moe = sim_xcalloc((size_t)m->layers, 1);
    int rc = read_index_list(r, "moe_layers", moe, &present);
    for (int32_t i = 0; rc == 0 && i < m->layers; i++)
        m->moe_layers += present ? moe[i] : i >= step - 1 && (i - (step - 1)) % step == 0;
    free(moe);
    if (rc || read_layer_types(r, LT_FULL | LT_CHUNKED, &present, &sliding, &chunked, &linear))
        return -1;
    if (!present && rope_layers(r, &chunked))
        return -1;
    if (chunk > 0 && chunk < m->max_context && chunked > 0) {
        m->window_layers = chunked;
        m->window = chunk;
        m->window_chunked = 1;
    }
    return 0;
}

/* The gated DeltaNet layers' shape. */
static const int_key linear_keys[] = {
    INT_KEY("linear_num_key_heads", lin_k_heads, 1, 1),
    INT_KEY("linear_num_value_heads", lin_v_heads, 1, 1),
    INT_KEY("linear_key_head_dim", lin_k_dim, 1, 1),
    INT_KEY("linear_value_head_dim", lin_v_dim, 1, 1),
    INT_KEY("linear_conv_kernel_dim", lin_conv, 1, 1),
};

/* mamba_ssm_dtype: the linear layers' state dtype (absent: the activation dtype). */
static int read_state_dtype(rd *r)
{
    static const struct {
        const char *name;
        eng_dtype dt;
    } names[] = {{"float32", ENG_FP32}, {"bfloat16", ENG_BF16}, {"float16", ENG_FP16}};
    const char *ssm = NULL;
    if (get_str(r, "mamba_ssm_dtype", &ssm))
        return -1;
    if (!ssm)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(ssm, names[i].name) == 0) {
            r->m->state_dtype = names[i].dt;
            return 0;
        }
    return fail_at(r, get(r, "mamba_ssm_dtype"), "mamba_ssm_dtype",
                   "'%s' is not a state dtype llmsim knows (float32, bfloat16, float16)", ssm);
}

/* Qwen3.5's experts. */
static const int_key qwen35_moe_keys[] = {
    INT_KEY("num_experts", experts, 1, 1),
    INT_KEY("num_experts_per_tok", experts_per_tok, 1, 1),
    INT_KEY("moe_intermediate_size", expert_inter, 1, 1),
    INT_KEY("shared_expert_intermediate_size", shared_inter, 0, 0),
    INT_KEY("intermediate_size", intermediate, 1, 0),
};

/* qwen3_5_moe_text: gated DeltaNet linear attention mixed with gated full attention. */
static int read_qwen35(rd *r)
{
    eng_model *m = r->m;
    int32_t sliding, chunked, interval = 4, gate = 1;
    int present;
    if (read_gqa(r) || GET_INTS(r, qwen35_moe_keys) || get_bool(r, "attn_output_gate", &gate) ||
        read_layer_types(r, LT_FULL | LT_LINEAR, &present, &sliding, &chunked, &m->linear_layers))
        return -1;
    if (!present) { /* MODEL: Qwen3.5's default: every full_attention_interval-th layer full */
        if (get_int(r, "full_attention_interval", 1, 0, &interval))
            return -1;
        for (int32_t i = 0; i < m->layers; i++)
            m->linear_layers += (i + 1) % interval != 0;
    }
    m->attn_output_gate = gate;
    m->qk_norm = 1;
    m->shared_gate = m->shared_inter > 0;
    m->state_dtype = ENG_DTYPE_AUTO; /* resolved to the activation dtype by read_dtype */
    if (m->linear_layers && (GET_INTS(r, linear_keys) || read_state_dtype(r)))
        return -1;
    return read_qwen_moe_layers(r) || note_mtp(r, "mtp_num_hidden_layers") ? -1 : 0;
}

typedef struct family {
    const char *type;      /* model_type */
    int (*read)(rd *r);    /* NULL: a wrapper whose text_config holds the language model */
    const char *text_type; /* wrappers: the text model_type when text_config names none */
    int tied;              /* the config class's default tie_word_embeddings */
} family;

static const family families[] = {
    {"llama", read_dense, NULL, 0},
    {"mistral", read_dense, NULL, 0},
    {"qwen2", read_dense, NULL, 0},
    {"qwen3", read_dense, NULL, 0},
    {"phi3", read_dense, NULL, 0},
    {"mixtral", read_moe, NULL, 0},
    {"qwen2_moe", read_moe, NULL, 0},
    {"qwen3_moe", read_moe, NULL, 0},
    {"deepseek_v2", read_deepseek, NULL, 0},
    {"deepseek_v3", read_deepseek, NULL, 0},
    {"kimi_k2", read_deepseek, NULL, 0},
    {"deepseek_v32", read_deepseek, NULL, 0},
    {"glm_moe_dsa", read_deepseek, NULL, 0},
    {"gpt_oss", read_gpt_oss, NULL, 0},
    {"gemma2", read_gemma, NULL, 1},
    {"gemma3_text", read_gemma, NULL, 1},
    {"opt", read_opt, NULL, 1},
    {"minimax_m2", read_minimax, NULL, 0},
    {"llama4_text", read_llama4, NULL, 0},
    {"qwen3_5_moe_text", read_qwen35, NULL, 0},
    {"kimi_k25", NULL, "kimi_k2", 0},
    {"llama4", NULL, "llama4_text", 0},
    {"gemma3", NULL, "gemma3_text", 1},
    {"qwen3_5_moe", NULL, "qwen3_5_moe_text", 0},
};

/* Class defaults a serialized config may leave out (transformers writes only the keys that
 * differ from its config class). MODEL: Gemma3TextConfig's defaults. */
static const char gemma3_text_defaults[] =
    "{\"vocab_size\": 262208, \"max_position_embeddings\": 131072, \"head_dim\": 256, "
    "\"sliding_window\": 4096, \"sliding_window_pattern\": 6}";

/* The model_type of an architectures entry, for configs without model_type. */
static const char *type_of_architecture(const char *a)
{
    static const char *const map[][2] = {
        {"LlamaForCausalLM", "llama"},
        {"MistralForCausalLM", "mistral"},
        {"MixtralForCausalLM", "mixtral"},
        {"Qwen2ForCausalLM", "qwen2"},
        {"Qwen2MoeForCausalLM", "qwen2_moe"},
        {"Qwen3ForCausalLM", "qwen3"},
        {"Qwen3MoeForCausalLM", "qwen3_moe"},
        {"DeepseekV2ForCausalLM", "deepseek_v2"},
        {"DeepseekV3ForCausalLM", "deepseek_v3"},
        {"GptOssForCausalLM", "gpt_oss"},
        {"Gemma2ForCausalLM", "gemma2"},
        {"Gemma3ForCausalLM", "gemma3_text"},
        {"Phi3ForCausalLM", "phi3"},
        {"OPTForCausalLM", "opt"},
    };
    for (size_t i = 0; a && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], a) == 0)
            return map[i][1];
    return NULL;
}

static const family *find_family(const char *type)
{
    for (size_t i = 0; type && i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].type, type) == 0)
            return &families[i];
    return NULL;
}

static int unknown_type(rd *r, const sim_json *at, const char *type)
{
    char list[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof families / sizeof families[0] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 families[i].type);
    return fail_at(r, at, "model_type",
                   "'%s' is not a model family llmsim reads (it never prices an unknown "
                   "architecture as another); known: %s",
                   type, list);
}

/* The model_type of object o: model_type, else the first architectures entry llmsim maps. */
static const char *model_type_of(const sim_json *o)
{
    const sim_json *t = sim_json_get(o, "model_type");
    if (t && t->kind == SIM_JSON_STR)
        return t->str;
    const sim_json *a = sim_json_get(o, "architectures");
    if (a && a->kind == SIM_JSON_ARR && a->child && a->child->kind == SIM_JSON_STR)
        return type_of_architecture(a->child->str);
    return NULL;
}

/* ---------------- precision ---------------- */

/* torch_dtype, else dtype: the language model's, else the document's; NULL when none. */
static const sim_json *dtype_value(const rd *r)
{
    static const char *const keys[] = {"torch_dtype", "dtype"};
    for (int i = 0; i < 2; i++) {
        const sim_json *c = sim_json_get(r->cfg, keys[i]);
        if (!c || c->kind == SIM_JSON_NULL)
            c = sim_json_get(r->root, keys[i]);
        if (c && c->kind != SIM_JSON_NULL)
            return c;
    }
    return NULL;
}

/* The activation dtype (torch_dtype or dtype of the language model, else of the wrapper). */
static int read_dtype(rd *r)
{
    eng_model *m = r->m;
    const sim_json *v = dtype_value(r);
    m->act_dtype = ENG_BF16;
    if (!v) {
        eng_model_note(m, "%s: no torch_dtype in the config: bfloat16 assumed", m->name);
    } else if (v->kind == SIM_JSON_STR && strcmp(v->str, "bfloat16") == 0) {
        m->act_dtype = ENG_BF16;
    } else if (v->kind == SIM_JSON_STR &&
               (strcmp(v->str, "float16") == 0 || strcmp(v->str, "half") == 0)) {
        m->act_dtype = ENG_FP16;
    } else if (v->kind == SIM_JSON_STR &&
               (strcmp(v->str, "float32") == 0 || strcmp(v->str, "float") == 0)) {
        /* MODEL: vLLM's --dtype auto serves float32 checkpoints in float16 */
        m->act_dtype = ENG_FP16;
        eng_model_note(m, "%s: a float32 checkpoint, served in float16 as vLLM's --dtype auto does",
                       m->name);
    } else {
        return fail_at(r, v, "torch_dtype",
                       "'%s' is not a model dtype llmsim knows (bfloat16, "
                       "float16, float32)",
                       v->kind == SIM_JSON_STR ? v->str : "?");
    }
    if (m->state_dtype == ENG_DTYPE_AUTO)
        m->state_dtype = m->act_dtype;
    m->weight_dtype = m->kv_dtype = m->act_dtype;
    return 0;
}

/* The parts an exclusion pattern (modules_to_not_convert, ignore, exclude_modules) names, as
 * ENG_PART_* bits; 0 for modules outside the language model or never quantized; -1 when it
 * cannot be placed. */
static int pattern_parts(const char *p)
{
    if (strstr(p, "vision") || strstr(p, "visual") || strstr(p, "mm_projector") ||
        strstr(p, "multi_modal") || strstr(p, "mtp"))
        return 0;
    if (strstr(p, "norm")) /* layernorm, q_norm, k_norm: before "attention" and "mlp" */
        return ENG_PART_NORM;
    if (strstr(p, "lm_head"))
        return ENG_PART_LM_HEAD;
    if (strstr(p, "embed"))
        return ENG_PART_EMBED;
    if (strstr(p, "indexer"))
        return ENG_PART_INDEXER;
    if (strstr(p, "linear_attn"))
        return ENG_PART_LINEAR;
    if (strstr(p, "shared_expert"))
        return ENG_PART_SHARED;
    if (strstr(p, "experts"))
        return ENG_PART_EXPERTS;
    if (strstr(p, "self_attn") || strstr(p, "attention"))
        return ENG_PART_ATTN;
    if (strstr(p, "mlp") && strstr(p, "_proj"))
        return ENG_PART_MLP;
    size_t n = strlen(p);
    if (strstr(p, "router") || strstr(p, "e_score_correction_bias") ||
        (n >= 4 && strcmp(p + n - 4, "gate") == 0) || strstr(p, "gate$") || strstr(p, "mlp.gate"))
        return ENG_PART_ROUTER;
    if (strstr(p, "mlp"))
        return ENG_PART_MLP | ENG_PART_EXPERTS | ENG_PART_SHARED | ENG_PART_ROUTER;
    return -1;
}

/* 1 when the pattern names one layer by its number ("model.layers.3.") */
static int names_one_layer(const char *p)
{
    const char *s = strstr(p, "layers.");
    return s && isdigit((unsigned char)s[7]);
}

/* Removes from *parts what the exclusion list `key` of object q names. */
static int apply_exclusions(rd *r, const sim_json *q, const char *key, uint32_t *parts)
{
    const sim_json *list = sim_json_get(q, key);
    if (!list || list->kind == SIM_JSON_NULL)
        return 0;
    if (list->kind != SIM_JSON_ARR)
        return fail_at(r, list, key, "must be a list of module names or patterns");
    int i = 0;
    for (const sim_json *e = list->child; e; e = e->next, i++) {
        int bits = e->kind == SIM_JSON_STR ? pattern_parts(e->str) : -1;
        if (bits < 0)
            return fail_at(r, e, key,
                           "entry %d ('%s') names no part llmsim can place (attention, MLP, "
                           "experts, shared experts, router, embeddings, LM head, norms)",
                           i, e->kind == SIM_JSON_STR ? e->str : "?");
        if ((*parts & (uint32_t)bits) && names_one_layer(e->str))
            return fail_at(r, e, key,
                           "entry %d ('%s') keeps one layer's %s out of the quantization; "
                           "per-layer exclusions are not modelled",
                           i, e->str, (bits & ENG_PART_ATTN) ? "attention" : "MLP");
        *parts &= ~(uint32_t)bits;
    }
    return 0;
}

/* compressed-tensors' config_groups: one scheme for every group, each targeting Linear layers;
 * *w0 and *a0 are the weights' and input activations' objects (*a0 NULL when unquantized). */
static int read_config_groups(rd *r, const sim_json *q, const sim_json **w0, const sim_json **a0)
{
    const sim_json *groups = sim_json_get(q, "config_groups");
    if (!groups || groups->kind != SIM_JSON_OBJ || groups->n == 0)
        return fail_at(r, groups, "quantization_config.config_groups", "missing or empty");
    for (const sim_json *g = groups->child; g; g = g->next) {
        const sim_json *w = sim_json_get(g, "weights"), *a = sim_json_get(g, "input_activations");
        const sim_json *tg = sim_json_get(g, "targets");
        if (!tg || tg->kind != SIM_JSON_ARR || !tg->child || tg->child->kind != SIM_JSON_STR ||
            strcmp(tg->child->str, "Linear") != 0 || tg->n != 1)
            return fail_at(r, tg ? tg : g, "quantization_config.config_groups",
                           "group '%s' targets something other than [\"Linear\"]; not modelled",
                           g->key);
        if (!w || w->kind != SIM_JSON_OBJ)
            return fail_at(r, g, "quantization_config.config_groups", "group '%s' has no weights",
                           g->key);
        if (*w0 && (w->n != (*w0)->n || (a && a->kind) != (*a0 && (*a0)->kind)))
            return fail_at(r, g, "quantization_config.config_groups",
                           "groups with different schemes are not modelled");
        *w0 = w;
        *a0 = a;
    }
    return 0;
}

/* compressed-tensors' kv_cache_scheme: only an 8-bit float cache. */
static int read_kv_scheme(rd *r, const sim_json *q, eng_model *m)
{
    const sim_json *kv = sim_json_get(q, "kv_cache_scheme");
    if (!kv || kv->kind != SIM_JSON_OBJ)
        return 0;
    const sim_json *kb = sim_json_get(kv, "num_bits"), *kt = sim_json_get(kv, "type");
    if (!kb || kb->kind != SIM_JSON_NUM || kb->num != 8 || !kt || kt->kind != SIM_JSON_STR ||
        strcmp(kt->str, "float") != 0)
        return fail_at(r, kv, "quantization_config.kv_cache_scheme",
                       "only an 8-bit float KV cache is modelled");
    m->kv_dtype = ENG_FP8;
    return 0;
}

/* MODEL: compressed-tensors' fp8 block scheme (weights strategy "block") quantizes its input
 * activations per token group ("strategy": "group", "group_size": 128), as Fp8Config's
 * weight_block_size does (vllm compressed_tensors_w8a8_fp8.py: per_token_group_quant_fp8). */
static int act_group_of(const sim_json *a)
{
    const sim_json *st = sim_json_get(a, "strategy"), *gs = sim_json_get(a, "group_size");
    if (!st || st->kind != SIM_JSON_STR || strcmp(st->str, "group") != 0 || !gs ||
        gs->kind != SIM_JSON_NUM || gs->num < 1 || gs->num != (int32_t)gs->num)
        return 0;
    return (int32_t)gs->num;
}

/* compressed-tensors: every config group must share one weights scheme. */
static int read_compressed(rd *r, const sim_json *q, eng_model *m)
{
    const sim_json *w0 = NULL, *a0 = NULL;
    if (read_config_groups(r, q, &w0, &a0))
        return -1;
    const sim_json *bits = sim_json_get(w0, "num_bits"), *type = sim_json_get(w0, "type");
    const sim_json *gs = sim_json_get(w0, "group_size"), *sym = sim_json_get(w0, "symmetric");
    int nb = bits && bits->kind == SIM_JSON_NUM ? (int)bits->num : 0;
    const char *ty = type && type->kind == SIM_JSON_STR ? type->str : "";
    int group = gs && gs->kind == SIM_JSON_NUM && gs->num > 0 ? (int)gs->num : 0;
    int acts = a0 && a0->kind == SIM_JSON_OBJ;
    if (nb == 4 && strcmp(ty, "int") == 0 && !acts) {
        /* MODEL: compressed-tensors pack-quantized W4A16: int4 values packed eight per int32,
         * one 16-bit scale per group (and a zero point when asymmetric) */
        m->weight_dtype = ENG_INT4;
        int zero = sym && sym->kind == SIM_JSON_BOOL && sym->num == 0;
        m->quant_bytes = group ? 0.5 + (2.0 + (zero ? 0.5 : 0)) / group : 0.5;
    } else if (nb == 8 && strcmp(ty, "float") == 0 && acts) {
        m->weight_dtype = ENG_FP8;
        m->act_group = act_group_of(a0);
    } else if (nb == 4 && strcmp(ty, "float") == 0 && group == 16) {
        m->weight_dtype = ENG_NVFP4;
    } else {
        return fail_at(r, w0, "quantization_config.config_groups",
                       "weights of %d-bit %s%s are not a scheme llmsim models (int4 W4A16, fp8 "
                       "W8A8, nvfp4)",
                       nb, ty, acts ? "" : " without quantized activations");
    }
    return read_kv_scheme(r, q, m) || apply_exclusions(r, q, "ignore", &m->quant_parts) ? -1 : 0;
}

/* ModelOpt, as quantization_config (quant_method modelopt) or hf_quant_config.json's
 * "quantization" object. */
static int read_modelopt(rd *r, const sim_json *q, eng_model *m)
{
    const sim_json *algo = sim_json_get(q, "quant_algo"),
                   *kv = sim_json_get(q, "kv_cache_quant_algo");
    const char *a = algo && algo->kind == SIM_JSON_STR ? algo->str : "";
    if (strcmp(a, "FP8") == 0)
        m->weight_dtype = ENG_FP8;
    else if (strcmp(a, "NVFP4") == 0)
        m->weight_dtype = ENG_NVFP4;
    else
        return fail_at(r, algo, "quantization_config.quant_algo",
                       "'%s' is not modelled (FP8, NVFP4)", a);
    if (kv && kv->kind == SIM_JSON_STR) {
        if (strcmp(kv->str, "FP8") != 0)
            return fail_at(r, kv, "quantization_config.kv_cache_quant_algo",
                           "'%s' is not modelled (FP8)", kv->str);
        m->kv_dtype = ENG_FP8;
    }
    return apply_exclusions(r, q, "exclude_modules", &m->quant_parts) ||
                   apply_exclusions(r, q, "ignore", &m->quant_parts)
               ? -1
               : 0;
}

/* AWQ and GPTQ: 4-bit integer weights with a group size. */
static int read_awq_gptq(rd *r, const sim_json *q, eng_model *m, int awq)
{
    const sim_json *bits = sim_json_get(q, awq && !sim_json_get(q, "bits") ? "w_bit" : "bits");
    const sim_json *gs =
        sim_json_get(q, awq && !sim_json_get(q, "group_size") ? "q_group_size" : "group_size");
    if (!bits || bits->kind != SIM_JSON_NUM || bits->num != 4)
        return fail_at(r, bits, "quantization_config.bits", "only 4-bit weights are modelled");
    int group = gs && gs->kind == SIM_JSON_NUM && gs->num > 0 ? (int)gs->num : 0;
    /* MODEL: AutoAWQ / AutoGPTQ: per group an fp16 scale and a 4-bit zero point */
    m->weight_dtype = ENG_INT4;
    m->quant_bytes = group ? 0.5 + 2.5 / group : 0.5;
    return apply_exclusions(r, q, "modules_to_not_convert", &m->quant_parts);
}

/* MODEL: vLLM's Fp8Config: with weight_block_size [block_n, block_k] the weights are scaled per
 * block and the activations per group of block_k input elements of a token (DeepSeek-style 1x128
 * groups, quantized at run time: vllm fp8_utils.py per_token_group_quant_fp8); without it, one
 * scale per tensor. */
static int read_block_size(rd *r, const sim_json *q, eng_model *m)
{
    const sim_json *b = sim_json_get(q, "weight_block_size");
    if (!b || b->kind == SIM_JSON_NULL)
        return 0;
    int ok = b->kind == SIM_JSON_ARR && b->n == 2;
    for (const sim_json *e = ok ? b->child : NULL; e; e = e->next)
        ok &= e->kind == SIM_JSON_NUM && e->num >= 1 && e->num == (int32_t)e->num;
    if (!ok)
        return fail_at(r, b, "quantization_config.weight_block_size",
                       "expected two positive integers [block_n, block_k]");
    m->act_group = (int32_t)b->child->next->num;
    return 0;
}

static int read_quant_object(rd *r, const sim_json *q, eng_model *m)
{
    const sim_json *meth = sim_json_get(q, "quant_method");
    const char *s = meth && meth->kind == SIM_JSON_STR ? meth->str : "";
    m->quant_parts = ENG_PARTS_LINEAR_LAYERS;
    if (strcmp(s, "fp8") == 0) {
        /* MODEL: DeepSeek-style block-wise fp8 checkpoints (vLLM Fp8Config): every linear layer
         * but the embeddings, the LM head and the router is stored in fp8 */
        m->weight_dtype = ENG_FP8;
        if (read_block_size(r, q, m))
            return -1;
        return apply_exclusions(r, q, "modules_to_not_convert", &m->quant_parts) ||
                       apply_exclusions(r, q, "ignored_layers", &m->quant_parts)
                   ? -1
                   : 0;
    }
    if (strcmp(s, "mxfp4") == 0) {
        /* MODEL: vLLM's Mxfp4Config gives the Mxfp4MoEMethod to FusedMoE layers only (linear
         * layers stay unquantized): gpt-oss ships its experts in MXFP4 and attention, router,
         * embeddings and LM head in bf16 (its modules_to_not_convert) */
        m->weight_dtype = ENG_MXFP4;
        m->quant_parts = ENG_PART_EXPERTS;
        return apply_exclusions(r, q, "modules_to_not_convert", &m->quant_parts);
    }
    if (strcmp(s, "compressed-tensors") == 0)
        return read_compressed(r, q, m);
    if (strcmp(s, "modelopt") == 0)
        return read_modelopt(r, q, m);
    if (strcmp(s, "awq") == 0 || strcmp(s, "gptq") == 0)
        return read_awq_gptq(r, q, m, s[0] == 'a');
    return fail_at(r, meth, "quantization_config.quant_method",
                   "'%s' is not modelled (fp8, mxfp4, compressed-tensors, modelopt, awq, gptq)", s);
}

static char *read_file(const char *path, size_t *n_out, char *why, size_t len);

/* hf_quant_config.json beside the config (ModelOpt checkpoints keep their scheme there). */
static int read_hf_quant(rd *r, eng_model *m, int *found)
{
    char path[1100];
    *found = 0;
    if (!r->dir)
        return 0;
    snprintf(path, sizeof path, "%s/hf_quant_config.json", r->dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fclose(f);
    size_t n;
    char *text = read_file(path, &n, r->why, r->len);
    if (!text)
        return -1;
    sim_json_doc *d = sim_json_parse(path, text, r->why, r->len);
    free(text);
    if (!d)
        return -1;
    rd qr = *r;
    qr.file = path;
    qr.pre = "";
    const sim_json *q = sim_json_get(sim_json_root(d), "quantization");
    int rc = q && q->kind == SIM_JSON_OBJ
                 ? (m->quant_parts = ENG_PARTS_LINEAR_LAYERS, read_modelopt(&qr, q, m))
                 : fail_at(&qr, NULL, "quantization", "missing (a ModelOpt hf_quant_config.json)");
    sim_json_free(d);
    *found = rc == 0;
    return rc;
}

/* A note when the model's name says it is quantized but no quantization config says how. */
static void note_quantized_name(eng_model *m)
{
    static const char *const hints[] = {"fp8", "fp4", "int4", "awq", "gptq", "w4a16", "w8a8"};
    char lower[64];
    size_t i = 0;
    for (; m->name[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)m->name[i]);
    lower[i] = '\0';
    for (size_t k = 0; k < sizeof hints / sizeof hints[0]; k++)
        if (strstr(lower, hints[k])) {
            eng_model_note(m,
                           "%s: the name says '%s' but config.json has no quantization_config "
                           "and no hf_quant_config.json sits beside it: weights taken as %s "
                           "(set dtype in the scenario)",
                           m->name, hints[k], eng_dtype_name(m->weight_dtype));
            return;
        }
}

static int read_quant(rd *r)
{
    eng_model *m = r->m;
    const sim_json *q = sim_json_get(r->cfg, "quantization_config");
    rd qr = *r;
    if (!q || q->kind == SIM_JSON_NULL) {
        q = sim_json_get(r->root, "quantization_config");
        qr.pre = "";
    }
    int found = 0;
    if (q && q->kind == SIM_JSON_OBJ) {
        found = 1;
        if (read_quant_object(&qr, q, m))
            return -1;
    } else if (q && q->kind != SIM_JSON_NULL) {
        return fail_at(&qr, q, "quantization_config", "must be an object");
    } else if (read_hf_quant(r, m, &found)) {
        return -1;
    }
    if (!found)
        note_quantized_name(m);
    return 0;
}

/* ---------------- the document ---------------- */

/* The model's name: the directory holding the file, else the file name itself. */
static void model_name(const char *path, char *out, size_t cap)
{
    const char *end = path + strlen(path), *slash = strrchr(path, '/');
    const char *b = path, *e = end;
    if (slash) {
        e = slash;
        while (e > path && e[-1] == '/') /* "dir//config.json" */
            e--;
        b = e;
        while (b > path && b[-1] != '/')
            b--;
        if (b == e) { /* "/config.json" or "config.json" at a root */
            b = slash + 1;
            e = end;
        }
    }
    size_t n = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

/* The largest value of each count llmsim can size without overflow. */
static const struct size_limit {
    const char *what;
    size_t off;
    int32_t most;
} size_limits[] = {
    {"num_hidden_layers", offsetof(eng_model, layers), 1024},
    {"hidden_size", offsetof(eng_model, hidden), 65536},
    {"num_attention_heads", offsetof(eng_model, heads), 1024},
    {"num_key_value_heads", offsetof(eng_model, kv_heads), 1024},
    {"head_dim", offsetof(eng_model, head_dim), 1024},
    {"intermediate_size", offsetof(eng_model, intermediate), 1 << 20},
    {"vocab_size", offsetof(eng_model, vocab), 1 << 22},
    {"q_lora_rank", offsetof(eng_model, q_lora_rank), 65536},
    {"kv_lora_rank", offsetof(eng_model, kv_lora_rank), 65536},
    {"qk_nope_head_dim", offsetof(eng_model, qk_nope_dim), 1024},
    {"qk_rope_head_dim", offsetof(eng_model, qk_rope_dim), 1024},
    {"v_head_dim", offsetof(eng_model, v_head_dim), 1024},
    {"linear_num_key_heads", offsetof(eng_model, lin_k_heads), 1024},
    {"linear_num_value_heads", offsetof(eng_model, lin_v_heads), 1024},
    {"linear_key_head_dim", offsetof(eng_model, lin_k_dim), 1024},
    {"linear_value_head_dim", offsetof(eng_model, lin_v_dim), 1024},
    {"index_n_heads", offsetof(eng_model, index_heads), 1024},
    {"index_head_dim", offsetof(eng_model, index_dim), 1024},
    {"routed experts", offsetof(eng_model, experts), 4096},
    {"moe_intermediate_size", offsetof(eng_model, expert_inter), 1 << 20},
    {"shared experts' intermediate size", offsetof(eng_model, shared_inter), 1 << 20},
};

/* Dimensions beyond any model's, by a wide margin: within them every parameter, byte and FLOP
 * count of the model description and the cost model stays far inside 64-bit integers (the
 * largest product, layers x experts x 3 x hidden x expert size, is under 2^60). */
static int check_sizes(const char *file, const eng_model *m, char *why, size_t len)
{
    for (size_t i = 0; i < sizeof size_limits / sizeof size_limits[0]; i++) {
        const struct size_limit *lim = &size_limits[i];
        int32_t v;
        memcpy(&v, (const char *)m + lim->off, sizeof v);
        if (v > lim->most) {
            snprintf(why, len,
                     "%s: %s %d is over %d, beyond any model llmsim can size (its counts would "
                     "overflow)",
                     file, lim->what, v, lim->most);
            return -1;
        }
    }
    return 0;
}

/* Reads the family's keys with `defaults` behind the config (a class's serialized defaults). */
static int read_family(rd *r, const family *f)
{
    r->m->tied_embeddings = f->tied;
    r->m->gated_mlp = 1;
    if (strcmp(f->type, "gemma3_text") != 0)
        return f->read(r);
    /* overlay: a merged object whose members are the defaults, then the config's */
    char why[256];
    sim_json_doc *d =
        sim_json_parse("Gemma3TextConfig defaults", gemma3_text_defaults, why, sizeof why);
    if (!d)
        return fail_at(r, NULL, "model_type", "internal error: %s", why);
    sim_json merged = *r->cfg;
    sim_json *defs = (sim_json *)sim_json_root(d);
    sim_json *last = defs->child;
    while (last->next)
        last = last->next;
    last->next = (sim_json *)r->cfg->child; /* later members win in sim_json_get */
    merged.child = defs->child;
    const sim_json *saved = r->cfg;
    r->cfg = &merged;
    int rc = f->read(r);
    r->cfg = saved;
    last->next = NULL;
    sim_json_free(d);
    return rc;
}

/* A multimodal wrapper f: its text_config's language model. */
static int read_wrapped(rd *r, const family *f)
{
    eng_model *m = r->m;
    const sim_json *root = r->root, *tc = sim_json_get(root, "text_config");
    if (!tc || tc->kind != SIM_JSON_OBJ)
        return missing(r, "text_config");
    r->cfg = tc;
    r->pre = "text_config.";
    const char *tt = model_type_of(tc);
    const family *tf = find_family(tt ? tt : f->text_type);
    if (!tf || !tf->read)
        return unknown_type(r, sim_json_get(tc, "model_type"), tt ? tt : "?");
    if (sim_json_get(root, "vision_config"))
        eng_model_note(m,
                       "%s: the vision tower (vision_config) is not counted; llmsim "
                       "models the language model",
                       m->name);
    snprintf(m->arch, sizeof m->arch, "%s", tf->type);
    int32_t tied = -1; /* the wrapper's tie_word_embeddings when text_config has none */
    const sim_json *tw = sim_json_get(root, "tie_word_embeddings");
    if (tw && tw->kind == SIM_JSON_BOOL && !sim_json_get(tc, "tie_word_embeddings"))
        tied = (int32_t)tw->num;
    if (read_family(r, tf))
        return -1;
    if (tied >= 0)
        m->tied_embeddings = tied;
    return 0;
}

static int read_document(rd *r, const char *name)
{
    eng_model *m = r->m;
    const sim_json *root = r->root;
    if (root->kind != SIM_JSON_OBJ) {
        snprintf(r->why, r->len, "%s:%d:1: expected '{' (a config.json is one JSON object)",
                 r->file, root->line);
        return -1;
    }
    model_name(name, m->name, sizeof m->name);
    const char *type = model_type_of(root);
    const sim_json *tat = sim_json_get(root, "model_type");
    if (!type)
        return tat ? fail_at(r, tat, "model_type", "must be a string") : missing(r, "model_type");
    const family *f = find_family(type);
    if (!f)
        return unknown_type(r, tat, type);
    snprintf(m->arch, sizeof m->arch, "%s", type);
    r->cfg = root;
    r->pre = "";
    if (f->read ? read_family(r, f) : read_wrapped(r, f))
        return -1;
    if (read_dtype(r) || read_quant(r) || check_sizes(r->file, m, r->why, r->len))
        return -1;
    for (int i = 0; i < ENG_PART_COUNT; i++) /* name only the parts this model has */
        if (eng_model_part_params(m, 1u << i) == 0)
            m->quant_parts &= ~(1u << i);
    return 0;
}

static int read_text(const char *file, const char *dir, const char *name, const char *text,
                     eng_model *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    sim_json_doc *d = sim_json_parse(file, text, why, len);
    if (!d)
        return -1;
    rd r = {.file = file,
            .dir = dir,
            .root = sim_json_root(d),
            .why = why,
            .len = len,
            .m = out,
            .pre = ""};
    int rc = read_document(&r, name);
    sim_json_free(d);
    return rc;
}

int cal_model_from_config_text(const char *name, const char *text, eng_model *out, char *why,
                               size_t len)
{
    return read_text(name, NULL, name, text, out, why, len);
}

int cal_model_named_from_text(const char *name, const char *text, eng_model *out, char *why,
                              size_t len)
{
    char file[96];
    snprintf(file, sizeof file, "catalog:%s", name);
    int rc = read_text(file, NULL, name, text, out, why, len);
    if (rc == 0)
        snprintf(out->name, sizeof out->name, "%s", name);
    return rc;
}

/* The whole file as a NUL-terminated string (free it), or NULL with a message. */
static char *read_file(const char *path, size_t *n_out, char *why, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, len, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *text = sim_xmalloc(cap);
    for (;;) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        cap *= 2;
        text = sim_xrealloc(text, cap);
    }
    int bad = ferror(f);
    fclose(f);
    text[n] = '\0';
    if (bad || strlen(text) != n) {
        snprintf(why, len, bad ? "%s: read error" : "%s: contains a NUL byte; not a JSON text file",
                 path);
        free(text);
        return NULL;
    }
    *n_out = n;
    return text;
}

int cal_model_from_config_json(const char *path, eng_model *out, char *why, size_t len)
{
    size_t n;
    char *text = read_file(path, &n, why, len);
    if (!text)
        return -1;
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    int rc = read_text(path, dir, path, text, out, why, len);
    free(text);
    return rc;
}
