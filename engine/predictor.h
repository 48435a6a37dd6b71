/*
 * predictor.h: the cost predictor interface: how long one iteration takes on one replica.
 *
 * The engine describes an iteration by aggregate sums over its sequences (eng_shape), which it
 * maintains incrementally, so predicting costs O(1) however large the batch. A predictor is an
 * ops struct plus state, like a scheduler; calibration/ provides the roofline and fitted ones.
 */
#ifndef ENG_PREDICTOR_H
#define ENG_PREDICTOR_H

#include <stdint.h>
#include "model.h"

/*
 * The shape of one forward pass. A prefill chunk of q tokens over c tokens already in the KV
 * cache attends to c + q keys (causally: query i sees c + i + 1 keys). A decode sequence adds
 * one token over a context of c.
 */
typedef struct eng_shape {
    int64_t tokens;         /* query tokens in the pass: prefill chunk tokens + decode seqs */
    int32_t num_seqs;       /* sequences in the pass */
    int32_t prefill_seqs;   /* sequences with a prefill chunk */
    int64_t prefill_tokens; /* sum of chunk lengths q */
    double prefill_pairs;   /* sum of q*c + q*(q+1)/2: query-key pairs of causal attention */
    double prefill_kv;      /* sum of c + q: keys read by prefill attention */
    double prefill_q2;      /* sum of q*q (for equivalent-chunk profiles) */
    int32_t decode_seqs;    /* sequences decoding one token */
    int64_t decode_ctx;     /* sum of the decode sequences' contexts (keys read) */
    int32_t emit_seqs;      /* sequences that sample a token (LM head and sampling) */
} eng_shape;

typedef struct eng_predictor_ops {
    const char *name;
    /* Iteration time in ns for the shape on one replica; >= 1. */
    int64_t (*iteration_ns)(const void *st, const eng_shape *s);
    /* Host <-> device copy time in ns for `bytes` (swap); optional. */
    int64_t (*transfer_ns)(const void *st, int64_t bytes);
    void (*fini)(void *st); /* optional */
} eng_predictor_ops;

typedef struct eng_predictor {
    const eng_predictor_ops *ops;
    void *st;
    char label[128]; /* what produced it, e.g. "roofline h100-sxm (not measured)" */
} eng_predictor;

/* Adds one prefill chunk of q tokens over context c to s. */
void eng_shape_add_prefill(eng_shape *s, int64_t q, int64_t c);
/* Adds n decode sequences whose contexts sum to ctx_sum. */
void eng_shape_add_decodes(eng_shape *s, int64_t n, int64_t ctx_sum);

#endif
