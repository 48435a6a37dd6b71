/*
 * predictor.c: building iteration shapes.
 */
#include "predictor.h"

void eng_shape_add_prefill(eng_shape *s, int64_t q, int64_t c)
{
    double qd = (double)q, cd = (double)c;
    s->tokens += q;
    s->num_seqs++;
    s->prefill_seqs++;
    s->prefill_tokens += q;
    s->prefill_pairs += qd * cd + qd * (qd + 1) / 2;
    s->prefill_kv += cd + qd;
    s->prefill_q2 += qd * qd;
}

void eng_shape_add_decodes(eng_shape *s, int64_t n, int64_t ctx_sum)
{
    s->tokens += n;
    s->num_seqs += (int32_t)n;
    s->decode_seqs += (int32_t)n;
    s->decode_ctx += ctx_sum;
}
