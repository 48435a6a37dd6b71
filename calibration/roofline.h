/*
 * roofline.h: the built-in roofline cost predictor, from datasheets, not measurements.
 *
 * Each operator of a forward pass costs max(FLOPs / (peak x efficiency), bytes / (bandwidth x
 * efficiency)) plus a fixed per-kernel cost; per-layer operators are summed over the layers,
 * then the LM head and sampling for the sequences that emit a token. Under tensor parallelism
 * T each layer's work is split over T GPUs and two ring all-reduces per layer are added.
 * The efficiencies are named constants in roofline.c, each with its source.
 */
#ifndef CAL_ROOFLINE_H
#define CAL_ROOFLINE_H

#include <stdint.h>

#include "model.h"
#include "predictor.h"
#include "sim.h"

/*
 * Builds a roofline predictor for model m on GPU g in dtype dt with tensor parallelism tp into
 * *out (ops, state, label "roofline <gpu>[ tp<T>] <dtype> (not measured)"). The model and GPU
 * are copied. Returns 0, or -1 with err set when: tp < 1, tp does not divide the query heads,
 * the model or GPU has a non-positive size, or dt is fp8 on a GPU without fp8 tensor cores (the
 * message names the GPU). Free with cal_predictor_free.
 */
int cal_roofline_new(const eng_model *m, const eng_gpu *g, eng_dtype dt, int tp, eng_predictor *out,
                     sim_err *err);

/* Releases a predictor's state through its ops' fini and clears *p. NULL and an empty predictor
 * are allowed. */
void cal_predictor_free(eng_predictor *p);

/* The roofline time of one operator class over a pass of shape s, for reports and tests:
 * per-layer operators summed over the layers. op is a name as in `llmsim profile show`
 * ("qkv_proj", "attn_prefill", ..., "lm_head", "sample", "allreduce"). Returns ns, or -1 when
 * p is not a roofline predictor or op is unknown. */
double cal_roofline_op_ns(const eng_predictor *p, const eng_shape *s, const char *op);

#endif
