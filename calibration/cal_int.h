/*
 * cal_int.h: what calibration/'s own files share: the operator list of one forward pass and the
 * walker that turns an iteration's shape into per-operator work.
 *
 * Both the roofline and the fitted profiles cost an iteration the same way: cal_layer_walk
 * visits each operator of one layer once (the caller multiplies by the layer count) and the
 * operators that run once per pass (final norm, LM head, sampling), handing the cost function
 * the operator's aggregate work. Included only by the .c files of calibration/.
 */
#ifndef CAL_INT_H
#define CAL_INT_H

#include "kernels.h"
#include "predictor.h"

/* The operators of a pass: the first KERN_OP_COUNT are kernels.h's, the rest are costed only
 * by the roofline (a measured profile has no kernel for them). */
typedef enum cal_op {
    CAL_OP_EMBED = KERN_OP_COUNT, /* token embedding gather */
    CAL_OP_SAMPLE,                /* softmax and sampling over the vocabulary */
    CAL_OP_ALLREDUCE,             /* tensor-parallel all-reduce of the activations */
    CAL_OP_TOTAL
} cal_op;

/* The aggregate work of one operator in one pass (one layer for per-layer operators). */
typedef struct cal_work {
    int op;          /* kern_op or cal_op */
    double tokens;   /* rows: query tokens of the pass, or emitting sequences for the LM head */
    double seqs;     /* attention: sequences */
    double q_tokens; /* attn_prefill: sum of chunk lengths */
    double pairs;    /* attn_prefill: query-key pairs; attn_decode: keys read (sum of ctx + 1) */
    double kv;       /* attn_prefill: sum of (context + chunk): keys read */
    int per_layer;   /* 1: runs in every layer; 0: once per pass */
} cal_work;

/* Calls fn(st, w) for every operator of a pass of shape s, skipping attention kinds with no
 * sequences and all-reduces when tp == 1; returns the sum of what fn returned, per-layer
 * operators multiplied by `layers`. fn returns ns. */
double cal_layer_walk(const eng_shape *s, int layers, int tp,
                      double (*fn)(const void *st, const cal_work *w), const void *st);

/* Name of a kern_op or cal_op ("qkv_proj", ..., "embed", "sample", "allreduce"). */
const char *cal_op_name(int op);

/* Converts a predicted time in ns to the iteration_ns contract (>= 1, rounded). */
int64_t cal_ns_round(double ns);

#endif
