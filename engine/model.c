/*
 * model.c: dtypes, parameter counts and KV bytes per token.
 */
#include <string.h>

#include "model.h"

static const char *const dtype_names[ENG_DTYPE_COUNT] = {"bf16", "fp16", "fp8"};
static const int dtype_bytes[ENG_DTYPE_COUNT] = {2, 2, 1};

const char *eng_dtype_name(eng_dtype d)
{
    return (unsigned)d < ENG_DTYPE_COUNT ? dtype_names[d] : "?";
}

int eng_dtype_bytes(eng_dtype d)
{
    return (unsigned)d < ENG_DTYPE_COUNT ? dtype_bytes[d] : 2;
}

int eng_dtype_parse(const char *s, eng_dtype *out)
{
    for (int i = 0; i < ENG_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (eng_dtype)i;
            return 0;
        }
    return -1;
}

int64_t eng_model_params(const eng_model *m)
{
    int64_t h = m->hidden, q = (int64_t)m->heads * m->head_dim;
    int64_t kv = (int64_t)m->kv_heads * m->head_dim;
    int64_t attn = h * (q + 2 * kv) + q * h + (m->qkv_bias ? q + 2 * kv : 0);
    int64_t mlp = (m->gated_mlp ? 3 : 2) * h * (int64_t)m->intermediate;
    int64_t norms = 2 * h;
    int64_t emb = (int64_t)m->vocab * h;
    int64_t head = m->tied_embeddings ? 0 : emb;
    return m->layers * (attn + mlp + norms) + emb + head + h;
}

int64_t eng_model_kv_bytes_per_token(const eng_model *m, eng_dtype d)
{
    return 2 * (int64_t)m->layers * m->kv_heads * m->head_dim * eng_dtype_bytes(d);
}
