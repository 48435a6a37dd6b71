/*
 * run_info.h: the run the store's tests (and the fuzzers' template database) write: llama-3-8b
 * on two h100-sxm replicas at seed 42, its figures as a test names them.
 */
#ifndef LLMSIM_TESTS_RUN_INFO_H
#define LLMSIM_TESTS_RUN_INFO_H

#include "store_run.h"

/* The run `name` (scenario text "name: t") stored at level. */
static inline store_run_info test_run_info(const char *name, store_level level)
{
    store_run_info in = {.name = name,
                         .scenario_text = "name: t",
                         .scheduler = "vllm",
                         .version = "test",
                         .profile = "roofline",
                         .model = "llama-3-8b",
                         .gpu = "h100-sxm",
                         .dtype = "fp16",
                         .hardware = "cpu",
                         .seed = 42,
                         .replicas = 2,
                         .tensor_parallel = 1,
                         .level = level};
    return in;
}

#endif
