/*
 * tiny_model.h: the tests' dense models written by their dimensions, and the tiny one (2 layers,
 * hidden 64: quick to benchmark on the CPU, and what the Vidur tables of the calibration tests
 * and fuzzer describe).
 */
#ifndef LLMSIM_TESTS_TINY_MODEL_H
#define LLMSIM_TESTS_TINY_MODEL_H

#include "engine.h"

/* The initializer of a dense model (gated MLP, untied embeddings, no biases): name, layers,
 * hidden size, query heads, KV heads, head size, MLP inner size, vocabulary, context. */
#define TEST_DENSE_MODEL(nm, l, h, nh, nkv, hd, inter, voc, ctx)                                   \
    {                                                                                              \
        .name = nm, .layers = l, .hidden = h, .heads = nh, .kv_heads = nkv, .head_dim = hd,        \
        .intermediate = inter, .vocab = voc, .max_context = ctx, .gated_mlp = 1                    \
    }

static const eng_model tiny_model = TEST_DENSE_MODEL("tiny", 2, 64, 4, 2, 16, 128, 256, 4096);

#endif
