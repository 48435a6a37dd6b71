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
#include <stdint.h>

#include "model.h"

/* GPU architectures: which kernels the engines run there (FlashAttention-3 and its kin need
 * Hopper or data-center Blackwell). */
typedef enum cal_arch {
    CAL_ARCH_UNKNOWN = 0,
    CAL_ARCH_AMPERE,
    CAL_ARCH_ADA,
    CAL_ARCH_HOPPER,
    CAL_ARCH_BLACKWELL,     /* data-center: B200, B300, GB200, GB300 */
    CAL_ARCH_BLACKWELL_RTX, /* workstation and consumer: RTX PRO 6000, RTX 5090 */
    CAL_ARCH_CDNA           /* AMD Instinct MI300X, MI325X, MI355X */
} cal_arch;

/* The memory a GPU's datasheet states: HBM stacks beside the die, or GDDR chips on the board.
 * Memory-bound kernels reach a different fraction of the datasheet bandwidth on each (the
 * roofline's classes, calibration/roofline.c). */
typedef enum cal_memory {
    CAL_MEM_UNKNOWN = 0,
    CAL_MEM_HBM, /* HBM2e, HBM3, HBM3e */
    CAL_MEM_GDDR /* GDDR6, GDDR6X, GDDR7 */
} cal_memory;

/* A figure a datasheet does not have (no fp8 or fp4 tensor cores, no reference NIC). */
#define CAL_NONE (-1.0)

/* One GPU of the catalog as its datasheets state it, in their own units: one row per GPU, each
 * field named. Memory as `mem` `mem_unit` ("80 GB": eng_gpu.mem_bytes is mem x 2^30 for "GB"),
 * bandwidth as `bw` `bw_unit` ("3.35 TB/s", "864 GB/s"), tensor rates in dense TFLOP/s, links
 * in GB/s per direction; fp8, fp4 and nic are CAL_NONE where the GPU or its system has none. */
typedef struct cal_gpu_sheet {
    const char *name;      /* catalog name, lower case */
    cal_arch arch;         /* architecture (never CAL_ARCH_UNKNOWN in a row) */
    cal_memory memory;     /* the memory's kind (never CAL_MEM_UNKNOWN in a row) */
    double mem;            /* memory, in mem_unit */
    const char *mem_unit;  /* "GB" */
    double bw;             /* memory bandwidth, in bw_unit */
    const char *bw_unit;   /* "TB/s" or "GB/s" */
    double bf16;           /* dense bf16/fp16 TFLOP/s */
    double fp8;            /* dense fp8 TFLOP/s, or CAL_NONE */
    double fp4;            /* dense fp4 TFLOP/s, or CAL_NONE */
    uint32_t fp4_formats;  /* ENG_FP4_* the fp4 tensor cores compute (0 without fp4) */
    double link;           /* GB/s per direction between GPUs (NVLink, Infinity Fabric, PCIe) */
    double pcie;           /* GB/s per direction host <-> device */
    double nic;            /* scale-out GB/s per GPU per direction, or CAL_NONE */
    double per_hour;       /* list price, USD per GPU-hour, or CAL_NONE */
    const char *price;     /* where the price is stated and when */
    double max_w;          /* board power at full load (TDP / TBP), W, or CAL_NONE */
    const char *power;     /* the datasheet stating it */
    const char *device[2]; /* a device description names this GPU when it has device[0] as a word
                              and device[1] (NULL: no qualifier) anywhere */
    const char *source;    /* the datasheets, one line */
} cal_gpu_sheet;

/* 0 when every field of row s is given; -1 with a message in why naming the row and the first
 * missing or inconsistent field. A figure the datasheet lacks must be CAL_NONE: a 0 (a field
 * left out of the initialiser) is refused. */
int cal_gpu_sheet_check(const cal_gpu_sheet *s, char *why, size_t len);

/* cal_gpu_sheet_check over every catalog row, and no name twice: 0, or -1 with why. Every
 * lookup below runs it first and stops the program (a bug in catalog.c) when it fails, so no GPU
 * is priced from an incomplete row. */
int cal_gpu_catalog_check(char *why, size_t len);

/* Number of GPUs in the catalog; the i-th entry into *out (0 <= i < cal_gpu_count(); returns 0,
 * or -1 with *out untouched when i is out of range). */
int cal_gpu_count(void);
int cal_gpu_at(int i, eng_gpu *out);

/* The i-th row as its datasheet states it (NULL when i is out of range); static storage. */
const cal_gpu_sheet *cal_gpu_sheet_at(int i);
/* Copies the GPU named `name` into *out and returns 0; returns -1 (out untouched) when no GPU has
 * that name. */
int cal_gpu_find(const char *name, eng_gpu *out);

/* Models: each entry is a minimal config.json text read by cal_model_from_config_text, so the
 * catalog describes a model exactly as its config does. cal_model_at fills *out with the i-th
 * entry and returns 0 (-1 when i is out of range); cal_model_find does the same by name (-1,
 * out untouched, when no model has that name). cal_model_config_text is the i-th entry's text
 * (NULL when out of range). */
int cal_model_count(void);
int cal_model_at(int i, eng_model *out);
int cal_model_find(const char *name, eng_model *out);
const char *cal_model_config_text(int i);

/* Writes the catalog's names as "a, b, c" into buf (always NUL-terminated when len > 0; cut short
 * when buf is too small). Returns buf, so it can be used inside a message. */
const char *cal_gpu_names(char *buf, size_t len);
const char *cal_model_names(char *buf, size_t len);

/* The catalog GPU a device description names ("cuda: NVIDIA H100 80GB HBM3, sm_90, ..." ->
 * "h100-sxm"), or NULL when none matches. */
const char *cal_gpu_from_device(const char *desc);

/* The architecture of catalog GPU `name`; CAL_ARCH_UNKNOWN for a name not in the catalog. */
cal_arch cal_gpu_arch(const char *name);
/* The memory kind of catalog GPU `name`; CAL_MEM_UNKNOWN for a name not in the catalog. */
cal_memory cal_gpu_memory(const char *name);

/* A sentence saying that the built-in roofline's prices for catalog GPU `name` are an
 * extrapolation, for every output that shows them, or NULL when operator measurements on its
 * kind of GPU back them. Its kernel efficiencies were all measured on NVIDIA GPUs, so AMD
 * Instinct (CDNA) GPUs are extrapolated. Static storage. */
const char *cal_gpu_extrapolated(const char *name);

/* Price and power. Every catalog row gives its GPU's list price per GPU-hour (or none) with
 * where and when it is stated, and its board power at full load (or none) with the datasheet;
 * eng_gpu.price_per_hour, max_w and idle_w come from it (idle_w by price.c's power model). */
/* Where GPU `name`'s price and its power figure come from (static), or NULL for a name not in
 * the catalog. */
const char *cal_gpu_price_source(const char *name);
const char *cal_gpu_power_source(const char *name);
/* The idle floor taken as a fraction of the board's power where none is measured. */
double cal_gpu_idle_fraction(void);

/* A one-line description of the datasheet source of GPU `name`, or NULL when unknown. */
const char *cal_gpu_source(const char *name);

/*
 * Reads a Hugging Face config.json into *out, by its model_type (or architectures): llama (3.x
 * and 4's text part), mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2/v3,
 * kimi_k2, kimi_k25, deepseek_v32, glm_moe_dsa, minimax_m2, gpt_oss, gemma2, gemma3 (text
 * part), phi3, opt and qwen3_5_moe; a multimodal wrapper's text_config is read for its language
 * model. MoE layers, shared experts, MLA, DeepSeek sparse attention, windowed and linear
 * attention layers, biases, sinks and tied embeddings are read as each family's model code
 * uses them; quantization_config (fp8, mxfp4, compressed-tensors, modelopt, awq, gptq; or a
 * ModelOpt hf_quant_config.json beside the file) sets weight_dtype, quant_parts and kv_dtype.
 * out->name becomes the file's parent directory name, or the file name when it has none;
 * approximations the reader accepts are lines in out->notes. Returns 0, or -1 with a message
 * in why naming the file, the key (and its line) and what is not modelled, or the line and
 * column of a syntax error; *out is then unspecified. The read is linear in the file's size.
 */
int cal_model_from_config_json(const char *path, eng_model *out, char *why, size_t len);

/* The same from text in memory; `name` stands for the file in messages and names the model. */
int cal_model_from_config_text(const char *name, const char *text, eng_model *out, char *why,
                               size_t len);

#endif
