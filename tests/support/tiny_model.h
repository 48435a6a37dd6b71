/*
 * tiny_model.h: the tests' tiny dense model (2 layers, hidden 64: quick to benchmark on the
 * CPU, and what the Vidur tables of the calibration tests and fuzzer describe).
 */
#ifndef LLMSIM_TESTS_TINY_MODEL_H
#define LLMSIM_TESTS_TINY_MODEL_H

#include "engine.h"

static const eng_model tiny_model = {.name = "tiny",
                                     .layers = 2,
                                     .hidden = 64,
                                     .heads = 4,
                                     .kv_heads = 2,
                                     .head_dim = 16,
                                     .intermediate = 128,
                                     .vocab = 256,
                                     .max_context = 4096,
                                     .gated_mlp = 1};

#endif
