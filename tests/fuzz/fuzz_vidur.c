/*
 * fuzz_vidur.c: libFuzzer harness for the profile importer (Vidur's mlp.csv and attention.csv)
 * and what follows an import: the fit of every operator, and the predictor built from the
 * fitted profile pricing a few iterations.
 *
 * Input: one byte (the tensor-parallel degree, 1 + byte % 4), then mlp.csv's text, then
 * optionally a NUL byte and attention.csv's text. The tables describe the tests' tiny model
 * (n_embd 64, 4 heads, 2 KV heads, n_expanded_embd 128, vocab 256).
 *
 * Speed: the two files are rewritten in place in a folder in memory (fuzz_mem.h): a file
 * truncated and rewritten on ext4 is flushed to the disk when closed, and that wait was most of
 * an execution's time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_mem.h"

#include "catalog.h"
#include "profile.h"
#include "roofline.h"
#include "vidur.h"

#include "../support/tiny_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[128];

/* The file `name` of the folder holds b[0..n). */
static void put(const char *name, const uint8_t *b, size_t n)
{
    char p[192];
    fuzz_rewrite(fuzz_file(p, sizeof p, name), b, n);
}

static void price(const cal_profile *p, int tp)
{
    eng_gpu g;
    eng_predictor pred;
    sim_err err = {{0}};
    if (cal_gpu_find("a100-80gb", &g) != 0 ||
        cal_profile_predictor_new(p, &tiny_model, ENG_FP16, tp, &g, &pred, &err) != 0)
        return;
    eng_shape s = {.emit_seqs = 3}; /* a prefill of 97 tokens and two decodes */
    eng_shape_add_prefill(&s, 97, 0);
    eng_shape_add_decodes(&s, 2, 300);
    (void)pred.ops->iteration_ns(pred.st, &s);
    cal_predictor_free(&pred);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!dir[0])
        snprintf(dir, sizeof dir, "%s", fuzz_dir("vidur"));
    int tp = 1 + data[0] % 4;
    const uint8_t *mlp = data + 1, *nul = memchr(mlp, 0, size - 1);
    size_t nmlp = nul ? (size_t)(nul - mlp) : size - 1;
    put("mlp.csv", mlp, nmlp);
    char attn[192];
    fuzz_file(attn, sizeof attn, "attention.csv");
    if (nul)
        put("attention.csv", nul + 1, size - 1 - nmlp - 1);
    else
        unlink(attn);
    cal_profile *p = cal_profile_new("fuzz");
    char note[512];
    sim_err err = {{0}};
    if (cal_vidur_read(dir, NULL, &tiny_model, tp, p, note, sizeof note, &err) == 0 &&
        cal_profile_fit(p, 1, &err) == 0)
        price(p, tp);
    cal_profile_free(p);
    return 0;
}
