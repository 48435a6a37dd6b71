/*
 * catalog.h: the built-in GPU and model catalogs, and the Hugging Face config.json reader.
 *
 * The catalogs are static tables filled from datasheets (GPUs) and from each model's published
 * config.json (models). Lookups copy an entry into the caller's struct, so callers own what they
 * get and may adjust it. Names are matched exactly (lower case, as listed).
 *
 * Units: memory sizes in bytes, with the datasheet's "GB" of GPU memory read as GiB (2^30 bytes),
 * which is within 1-2% of the total the driver reports (an "80 GB" H100 shows 81559 MiB in
 * nvidia-smi); bandwidths in bytes/s with decimal prefixes, as datasheets state them
 * (3.35 TB/s = 3.35e12 B/s); FLOP/s dense, without structured sparsity.
 */
#ifndef CAL_CATALOG_H
#define CAL_CATALOG_H

#include <stddef.h>

#include "model.h"

/* Number of GPUs in the catalog, and the i-th entry (0 <= i < cal_gpu_count(); NULL otherwise).
 * The returned pointer is to static storage, valid for the whole program. */
int cal_gpu_count(void);
const eng_gpu *cal_gpu_at(int i);
/* Copies the GPU named `name` into *out and returns 0; returns -1 (out untouched) when no GPU has
 * that name. */
int cal_gpu_find(const char *name, eng_gpu *out);

/* The same for models. */
int cal_model_count(void);
const eng_model *cal_model_at(int i);
int cal_model_find(const char *name, eng_model *out);

/* Writes the catalog's names as "a, b, c" into buf (always NUL-terminated when len > 0; cut short
 * when buf is too small). Returns buf, so it can be used inside a message. */
const char *cal_gpu_names(char *buf, size_t len);
const char *cal_model_names(char *buf, size_t len);

/* The catalog GPU a device description names ("cuda: NVIDIA H100 80GB HBM3, sm_90, ..." ->
 * "h100-sxm"), or NULL when none matches. */
const char *cal_gpu_from_device(const char *desc);

/* A one-line description of the datasheet source of GPU `name`, or NULL when unknown. */
const char *cal_gpu_source(const char *name);

/*
 * Reads a Hugging Face config.json into *out. Llama, Mistral and Qwen2-style keys
 * (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim
 * (optional: hidden_size / heads), intermediate_size, vocab_size, max_position_embeddings,
 * tie_word_embeddings) and OPT's (model_type "opt", ffn_dim instead of intermediate_size) are
 * understood. out->name becomes the file's parent directory name, or the file name when it has
 * none. Returns 0, or -1 with a message in why naming the file and the key (or the line and
 * column of a syntax error); *out is then unspecified.
 */
int cal_model_from_config_json(const char *path, eng_model *out, char *why, size_t len);

/* The same from text in memory; `name` stands for the file in messages and names the model. */
int cal_model_from_config_text(const char *name, const char *text, eng_model *out, char *why,
                               size_t len);

#endif
