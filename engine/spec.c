/*
 * spec.c: speculative decoding's descriptions: the drafter each method runs, and how a mean
 * acceptance length and a per-position acceptance rate determine each other.
 *
 * The engine's side (the draws, the verification, the blocks of the lookahead) is in cohort.c
 * and engine.c; the drafter's cost is priced by the same cost model as the target, through the
 * `draft` predictor of eng_costs, on the description built here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

/* The width of a dense MLP standing in for the target's: its dense MLP, or the experts a token
 * goes through (routed and shared) for an MoE model whose every layer is MoE. */
static int32_t active_mlp_width(const eng_model *t)
{
    if (t->intermediate > 0 && t->moe_layers < t->layers)
        return t->intermediate;
    int64_t w = (int64_t)t->experts_per_tok * t->expert_inter + t->shared_inter;
    return w > 0 ? (int32_t)w : t->intermediate;
}

/* MODEL: an EAGLE head (Li et al., EAGLE, 2024; vLLM models/llama_eagle.py and
 * llama_eagle3.py) is one Llama decoder layer of the target's width fed the target's hidden
 * state; EAGLE-1 reuses the target's embedding and LM head, EAGLE-3 the embedding only, with an
 * LM head over its own draft vocabulary (32,000 tokens for the published heads,
 * draft_vocab_size). Its MLP is taken as the target's dense MLP, or the active experts' width
 * for an all-MoE target; for an MLA target its attention as 8 KV heads of 128 (the published
 * heads are Llama layers). The fc layer that mixes the hidden states in (2 or 3 x hidden ->
 * hidden) is left out. */
static void eagle_head(const eng_model *t, int three, eng_model *out, uint32_t *shared)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%.48s-%s", t->name, three ? "eagle3" : "eagle");
    snprintf(out->arch, sizeof out->arch, "llama");
    out->layers = 1;
    out->hidden = t->hidden;
    out->heads = t->heads;
    out->kv_heads = t->attn == ENG_ATTN_MLA ? 8 : t->kv_heads;
    out->head_dim = t->attn == ENG_ATTN_MLA ? 128 : t->head_dim;
    out->intermediate = active_mlp_width(t);
    out->vocab = three ? 32000 : t->vocab;
    out->max_context = t->max_context;
    out->gated_mlp = 1;
    out->act_dtype = t->act_dtype;
    out->weight_dtype = t->act_dtype; /* the heads ship unquantized */
    out->kv_dtype = t->kv_dtype;
    *shared = three ? ENG_PART_EMBED : ENG_PART_EMBED | ENG_PART_LM_HEAD;
}

/* MODEL: multi-token prediction (DeepSeek-V3 technical report, section 2.2; vLLM
 * deepseek_mtp.py, qwen3_next_mtp.py): each MTP module is one decoder layer of the target's
 * kind (its attention, MoE when the target's layers are) with full attention, sharing the
 * embedding and the output head with the main model; vLLM runs the same module for each draft
 * token. Its input projection (2 x hidden -> hidden) and two norms are left out. */
static void mtp_layers(const eng_model *t, int32_t n, eng_model *out, uint32_t *shared)
{
    *out = *t;
    snprintf(out->name, sizeof out->name, "%.56s-mtp", t->name);
    out->layers = n;
    out->window_layers = 0;
    out->window = 0;
    out->window_chunked = 0;
    out->linear_layers = 0;
    out->moe_layers = t->moe_layers > 0 ? n : 0;
    out->notes[0] = '\0';
    *shared = ENG_PART_EMBED | ENG_PART_LM_HEAD;
}

int eng_spec_drafter(eng_spec *sp, const eng_model *target, int32_t mtp_n, char *why, size_t len)
{
    switch (sp->method) {
    case ENG_SPEC_EAGLE:
    case ENG_SPEC_EAGLE3:
        if (!sp->has_draft) {
            eagle_head(target, sp->method == ENG_SPEC_EAGLE3, &sp->draft, &sp->draft_shared);
            sp->has_draft = 1;
        } else {
            sp->draft_shared =
                sp->method == ENG_SPEC_EAGLE3 ? ENG_PART_EMBED : ENG_PART_EMBED | ENG_PART_LM_HEAD;
        }
        return 0;
    case ENG_SPEC_MTP:
        if (mtp_n < 1) {
            snprintf(why, len, "mtp_layers %d: expected at least 1", mtp_n);
            return -1;
        }
        mtp_layers(target, mtp_n, &sp->draft, &sp->draft_shared);
        sp->has_draft = 1;
        return 0;
    case ENG_SPEC_DRAFT:
        if (!sp->has_draft) {
            snprintf(why, len, "method draft needs draft_model (a catalog name or a config.json)");
            return -1;
        }
        if (sp->draft.vocab != target->vocab) {
            /* MODEL: vLLM verify_equal_vocab_size_if_draft_model: "Target and draft model
             * should have the same vocabulary size" */
            snprintf(why, len,
                     "draft model %s has a vocabulary of %d tokens, the target %s %d: vLLM "
                     "refuses a draft model of another vocabulary",
                     sp->draft.name, sp->draft.vocab, target->name, target->vocab);
            return -1;
        }
        sp->draft_shared = 0;
        return 0;
    case ENG_SPEC_NGRAM:
        /* MODEL: vLLM's NgramProposer matches the context's last n-gram on the CPU: no forward
         * pass (its CPU time is not modelled) */
        sp->has_draft = 0;
        return 0;
    case ENG_SPEC_NONE:
        snprintf(why, len, "no speculative decoding method");
        return -1;
    default:
        SIM_CHECK(NULL, !"a speculative decoding method without a drafter rule");
        return -1;
    }
}

double eng_spec_length_of_rate(double r, int32_t k)
{
    /* accepted drafts: sum over j = 1..k of r^j (draft j needs all before it) */
    double al = 1, p = 1;
    for (int32_t j = 1; j <= k; j++) {
        p *= r;
        al += p;
    }
    return al;
}

double eng_spec_rate_of_length(double al, int32_t k)
{
    if (al <= 1)
        return 0;
    if (al >= k + 1)
        return 1;
    double lo = 0, hi = 1;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (eng_spec_length_of_rate(mid, k) < al)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}
