/*
 * fuzz_config.c: libFuzzer harness for the config.json reader (cal_model_from_config_text),
 * and for the roofline cost model over the model it accepts (weights, KV bytes per token and a
 * few iteration times on a catalog GPU at TP 1 and 8), where odd sizes would surface as
 * overflows or division by zero.
 *
 * Input: the file's text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "roofline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void price(const eng_model *m)
{
    eng_gpu g;
    if (cal_gpu_find("h100-sxm", &g) != 0)
        return;
    const int tps[] = {1, 8};
    for (int i = 0; i < 2; i++) {
        eng_predictor pred;
        sim_err err = {{0}};
        cal_serving sv = cal_serving_tp(ENG_BF16, tps[i]);
        if (cal_roofline_new(m, &g, &sv, &pred, &err) != 0)
            continue;
        eng_shape s = {.emit_seqs = 1}, d = {.emit_seqs = 64}; /* a prefill; 64 decodes */
        eng_shape_add_prefill(&s, 512, 0);
        (void)pred.ops->iteration_ns(pred.st, &s);
        eng_shape_add_decodes(&d, 64, 64 * 2048);
        (void)pred.ops->iteration_ns(pred.st, &d);
        cal_predictor_free(&pred);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    eng_model m;
    char why[512];
    if (cal_model_from_config_text("fuzz/config.json", text, &m, why, sizeof why) == 0)
        price(&m);
    free(text);
    return 0;
}
