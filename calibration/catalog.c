/*
 * catalog.c: the built-in GPU and model tables and their lookups.
 *
 * Every GPU entry cites the datasheet its numbers come from; every model entry is its published
 * Hugging Face config.json. The tables are const and never change at run time.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define TB 1e12 /* TB/s and TFLOP/s: decimal, as datasheets state them */
#define GB 1e9

typedef struct gpu_entry {
    eng_gpu gpu;
    const char *source;
} gpu_entry;

/* link_bw is per direction: NVLink's datasheet figure is the bidirectional total over all links
 * (H100 SXM: 900 GB/s = 450 GB/s each way). GPUs without NVLink talk over PCIe, so link_bw is
 * then the PCIe figure. PCIe x16 per direction: Gen4 32 GB/s, Gen5 64 GB/s. */
static const gpu_entry gpus[] = {
    /* NVIDIA H100 Tensor Core GPU datasheet (SXM5 column): BF16 1,979 TFLOPS and FP8 3,958
     * TFLOPS "with sparsity", i.e. 989.4 and 1,978.9 dense; 80 GB HBM3 at 3.35 TB/s; NVLink
     * 900 GB/s; PCIe Gen5 128 GB/s (both directions). */
    {{"h100-sxm", (int64_t)(80 * GIB), 3.35 * TB, 989.4 * TB, 1978.9 * TB, 450 * GB, 64 * GB},
     "NVIDIA H100 datasheet, SXM5: 989.4 TF bf16 / 1978.9 TF fp8 dense, 80 GB HBM3 3.35 TB/s, "
     "NVLink 900 GB/s"},
    /* Same datasheet, PCIe column: BF16 1,513 / FP8 3,026 TFLOPS with sparsity -> 756.5 and
     * 1,513 dense; 80 GB HBM2e at 2.0 TB/s. Its NVLink bridge joins pairs only, so the fabric
     * modelled for any tensor-parallel degree is PCIe Gen5 (64 GB/s each way). */
    {{"h100-pcie", (int64_t)(80 * GIB), 2.0 * TB, 756.5 * TB, 1513.0 * TB, 64 * GB, 64 * GB},
     "NVIDIA H100 datasheet, PCIe: 756.5 TF bf16 / 1513 TF fp8 dense, 80 GB HBM2e 2.0 TB/s, "
     "PCIe Gen5"},
    /* NVIDIA H200 Tensor Core GPU datasheet (SXM): same Hopper compute as H100 SXM (989.4 /
     * 1,978.9 TFLOPS dense); 141 GB HBM3e at 4.8 TB/s; NVLink 900 GB/s; PCIe Gen5. */
    {{"h200", (int64_t)(141 * GIB), 4.8 * TB, 989.4 * TB, 1978.9 * TB, 450 * GB, 64 * GB},
     "NVIDIA H200 datasheet, SXM: 989.4 TF bf16 / 1978.9 TF fp8 dense, 141 GB HBM3e 4.8 TB/s, "
     "NVLink 900 GB/s"},
    /* NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): BF16 312 TFLOPS dense (624 sparse); no
     * fp8 tensor cores (Ampere); 80 GB HBM2e at 2,039 GB/s; NVLink 600 GB/s; PCIe Gen4 64 GB/s
     * (both directions). */
    {{"a100-80gb", (int64_t)(80 * GIB), 2.039 * TB, 312 * TB, 0, 300 * GB, 32 * GB},
     "NVIDIA A100 datasheet, 80GB SXM: 312 TF bf16 dense, no fp8, 80 GB HBM2e 2.039 TB/s, "
     "NVLink 600 GB/s"},
    /* Same datasheet (40GB SXM): 312 TFLOPS; 40 GB HBM2 at 1,555 GB/s; NVLink 600 GB/s. */
    {{"a100-40gb", (int64_t)(40 * GIB), 1.555 * TB, 312 * TB, 0, 300 * GB, 32 * GB},
     "NVIDIA A100 datasheet, 40GB SXM: 312 TF bf16 dense, no fp8, 40 GB HBM2 1.555 TB/s, "
     "NVLink 600 GB/s"},
    /* NVIDIA L40S datasheet: BF16 362.05 / FP8 733 TFLOPS dense (733 / 1,466 with sparsity);
     * 48 GB GDDR6 at 864 GB/s; no NVLink; PCIe Gen4 x16 64 GB/s (both directions). */
    {{"l40s", (int64_t)(48 * GIB), 0.864 * TB, 362.05 * TB, 733 * TB, 32 * GB, 32 * GB},
     "NVIDIA L40S datasheet: 362.05 TF bf16 / 733 TF fp8 dense, 48 GB GDDR6 864 GB/s, PCIe Gen4"},
    /* NVIDIA L4 datasheet: BF16 242 / FP8 485 TFLOPS with sparsity -> 121 and 242.5 dense;
     * 24 GB GDDR6 at 300 GB/s; PCIe Gen4 x16. */
    {{"l4", (int64_t)(24 * GIB), 0.300 * TB, 121 * TB, 242.5 * TB, 32 * GB, 32 * GB},
     "NVIDIA L4 datasheet: 121 TF bf16 / 242.5 TF fp8 dense, 24 GB GDDR6 300 GB/s, PCIe Gen4"},
    /* NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: FP16/BF16 tensor with FP32
     * accumulate 165.2 TFLOPS dense, FP8 with FP32 accumulate 330.3 dense (the accumulation
     * inference frameworks use); 24 GB GDDR6X at 1,008 GB/s; no NVLink; PCIe Gen4 x16. */
    {{"rtx-4090", (int64_t)(24 * GIB), 1.008 * TB, 165.2 * TB, 330.3 * TB, 32 * GB, 32 * GB},
     "NVIDIA Ada whitepaper, RTX 4090: 165.2 TF bf16 / 330.3 TF fp8 dense (fp32 accumulate), "
     "24 GB GDDR6X 1.008 TB/s, PCIe Gen4"},
};

/* Fields: name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, max_context,
 * gated_mlp, tied_embeddings, qkv_bias; each from the model's config.json on Hugging Face. */
static const eng_model models[] = {
    /* meta-llama/Llama-2-7b-hf */
    {"llama-2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 4096, 1, 0, 0},
    /* meta-llama/Llama-2-13b-hf */
    {"llama-2-13b", 40, 5120, 40, 40, 128, 13824, 32000, 4096, 1, 0, 0},
    /* meta-llama/Llama-2-70b-hf */
    {"llama-2-70b", 80, 8192, 64, 8, 128, 28672, 32000, 4096, 1, 0, 0},
    /* meta-llama/Meta-Llama-3-8B */
    {"llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8192, 1, 0, 0},
    /* meta-llama/Meta-Llama-3-70B */
    {"llama-3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 8192, 1, 0, 0},
    /* mistralai/Mistral-7B-v0.1 (sliding window 4096 not modelled) */
    {"mistral-7b", 32, 4096, 32, 8, 128, 14336, 32000, 32768, 1, 0, 0},
    /* Qwen/Qwen2.5-0.5B */
    {"qwen2.5-0.5b", 24, 896, 14, 2, 64, 4864, 151936, 32768, 1, 1, 1},
    /* Qwen/Qwen2.5-1.5B */
    {"qwen2.5-1.5b", 28, 1536, 12, 2, 128, 8960, 151936, 131072, 1, 1, 1},
    /* Qwen/Qwen2.5-7B */
    {"qwen2.5-7b", 28, 3584, 28, 4, 128, 18944, 152064, 131072, 1, 0, 1},
    /* facebook/opt-13b: ReLU MLP of ffn_dim, biases on every linear layer, LM head tied to the
     * token embedding */
    {"opt-13b", 40, 5120, 40, 40, 128, 20480, 50272, 2048, 0, 1, 1},
};

#define NGPUS ((int)(sizeof gpus / sizeof gpus[0]))
#define NMODELS ((int)(sizeof models / sizeof models[0]))

int cal_gpu_count(void)
{
    return NGPUS;
}

const eng_gpu *cal_gpu_at(int i)
{
    return i >= 0 && i < NGPUS ? &gpus[i].gpu : NULL;
}

int cal_gpu_find(const char *name, eng_gpu *out)
{
    for (int i = 0; name && i < NGPUS; i++)
        if (strcmp(gpus[i].gpu.name, name) == 0) {
            *out = gpus[i].gpu;
            return 0;
        }
    return -1;
}

const char *cal_gpu_source(const char *name)
{
    for (int i = 0; name && i < NGPUS; i++)
        if (strcmp(gpus[i].gpu.name, name) == 0)
            return gpus[i].source;
    return NULL;
}

const char *cal_gpu_from_device(const char *desc)
{
    /* most specific first: "H100 PCIe" before "H100", "L40S" before "L4" */
    static const struct {
        const char *a, *b, *gpu;
    } rules[] = {
        {"H100", "PCIe", "h100-pcie"},
        {"H100", NULL, "h100-sxm"},
        {"H200", NULL, "h200"},
        {"A100", "80GB", "a100-80gb"},
        {"A100", NULL, "a100-40gb"},
        {"L40S", NULL, "l40s"},
        {"L4", NULL, "l4"},
        {"4090", NULL, "rtx-4090"},
    };
    for (size_t i = 0; desc && i < sizeof rules / sizeof rules[0]; i++)
        if (strstr(desc, rules[i].a) && (!rules[i].b || strstr(desc, rules[i].b)))
            return rules[i].gpu;
    return NULL;
}

int cal_model_count(void)
{
    return NMODELS;
}

const eng_model *cal_model_at(int i)
{
    return i >= 0 && i < NMODELS ? &models[i] : NULL;
}

int cal_model_find(const char *name, eng_model *out)
{
    for (int i = 0; name && i < NMODELS; i++)
        if (strcmp(models[i].name, name) == 0) {
            *out = models[i];
            return 0;
        }
    return -1;
}

/* Appends ", name" (or "name" first) to buf, which holds `used` characters; returns the new
 * length, clamped to len - 1 when buf is full. */
static size_t append_name(char *buf, size_t len, size_t used, const char *name)
{
    if (used + 1 >= len)
        return used;
    int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
    if (w < 0)
        return used;
    return used + (size_t)w < len ? used + (size_t)w : len - 1;
}

const char *cal_gpu_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < NGPUS; i++)
        used = append_name(buf, len, used, gpus[i].gpu.name);
    return buf;
}

const char *cal_model_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < NMODELS; i++)
        used = append_name(buf, len, used, models[i].name);
    return buf;
}
