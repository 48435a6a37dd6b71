/*
 * catalog.c: the built-in GPU and model tables and their lookups.
 *
 * Every GPU entry cites the datasheet its numbers come from and keeps its memory and bandwidth
 * in the unit that datasheet states them in. Every model entry is a minimal config.json text,
 * with the values of the model's published config, read by the same reader as user files
 * (hfconfig.c): the catalog cannot describe a model differently from its own config. The
 * tables are const and never change at run time.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cal_int.h"
#include "catalog.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define TB 1e12 /* TB/s and TFLOP/s: decimal, as datasheets state them */
#define GB 1e9

/* Each row names every field (a designated initialiser per field), so a row cannot shift a
 * figure into its neighbour's place, and cal_gpu_sheet_check refuses a row that leaves one out:
 * a figure the datasheet does not have is written CAL_NONE, never left to default to 0.
 * Memory: "GB" of GPU memory read as GiB (see catalog.h); bandwidth in the datasheet's unit;
 * FLOP/s in dense TFLOP/s (a datasheet figure given only "with sparsity" is halved).
 * link is per direction: NVLink's datasheet figure is the bidirectional total over all links
 * (H100 SXM: 900 GB/s = 450 GB/s each way). GPUs without NVLink talk over PCIe, so link is then
 * the PCIe figure. PCIe x16 per direction: Gen4 32 GB/s, Gen5 64 GB/s, Gen6 128 GB/s. nic: the
 * scale-out NIC per GPU of the vendor's reference system, per direction (400 Gb/s = 50 GB/s);
 * CAL_NONE where no system datasheet gives one. device: the words of a device description
 * (nvidia-smi, rocm-smi) that name the GPU, the second (or NULL) a qualifier that must also
 * appear ("H100" and "PCIe"). */
#define NV_MX (ENG_FP4_NV | ENG_FP4_MX)
/* Prices change: each row says where its price comes from and when it was stated, and a
 * scenario overrides it with `price: {per_gpu_hour_usd}`; a GPU with no stated price has none
 * (CAL_NONE), never a guessed one. The prices: RunPod's on-demand rates per GPU as tabulated by
 * deploybase.ai ("RunPod GPU Pricing: 2026 Comprehensive Pricing Guide", data as of March 2026):
 * one provider on one date, so that rows compare with each other. GPUs it does not list have
 * no price. max_w: the board's maximum power (TDP / TBP) from its datasheet (price.c's power
 * model). */
#define RUNPOD "RunPod on-demand, deploybase.ai table, 2026-03"
#define CAL_FP4_NONE 0u

static const cal_gpu_sheet gpus[] = {
    /* NVIDIA H100 Tensor Core GPU datasheet (SXM5 column): BF16 1,979 TFLOPS and FP8 3,958
     * TFLOPS "with sparsity", i.e. 989.4 and 1,978.9 dense; 80 GB HBM3 at 3.35 TB/s; NVLink
     * 900 GB/s; PCIe Gen5 128 GB/s (both directions). NVIDIA DGX H100 datasheet: 8 ConnectX-7
     * 400 Gb/s, one per GPU. */
    {.name = "h100-sxm",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 80,
     .mem_unit = "GB",
     .bw = 3.35,
     .bw_unit = "TB/s",
     .bf16 = 989.4,
     .fp8 = 1978.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 450,
     .pcie = 64,
     .nic = 50,
     .per_hour = 4.76,
     .price = RUNPOD,
     .max_w = 700,
     .power = "NVIDIA H100 datasheet, SXM: max TDP up to 700 W",
     .device = {"H100", NULL},
     .source =
         "NVIDIA H100 datasheet, SXM5: 989.4 TF bf16 / 1978.9 TF fp8 dense, 80 GB HBM3 3.35 TB/s, "
         "NVLink 900 GB/s; DGX H100: ConnectX-7 400 Gb/s per GPU"},

    /* Same datasheet, PCIe column: BF16 1,513 / FP8 3,026 TFLOPS with sparsity -> 756.5 and
     * 1,513 dense; 80 GB HBM2e at 2.0 TB/s. Its NVLink bridge joins pairs only, so the fabric
     * modelled for any tensor-parallel degree is PCIe Gen5 (64 GB/s each way). */
    {.name = "h100-pcie",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 80,
     .mem_unit = "GB",
     .bw = 2.0,
     .bw_unit = "TB/s",
     .bf16 = 756.5,
     .fp8 = 1513.0,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 64,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = 3.51,
     .price = RUNPOD,
     .max_w = 350,
     .power = "NVIDIA H100 datasheet, PCIe: max TDP 300-350 W",
     .device = {"H100", "PCIe"},
     .source =
         "NVIDIA H100 datasheet, PCIe: 756.5 TF bf16 / 1513 TF fp8 dense, 80 GB HBM2e 2.0 TB/s, "
         "PCIe Gen5"},

    /* NVIDIA H200 Tensor Core GPU datasheet (SXM): same Hopper compute as H100 SXM (989.4 /
     * 1,978.9 TFLOPS dense); 141 GB HBM3e at 4.8 TB/s; NVLink 900 GB/s; PCIe Gen5. NVIDIA DGX
     * H200: 8 ConnectX-7 400 Gb/s. */
    {.name = "h200",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 141,
     .mem_unit = "GB",
     .bw = 4.8,
     .bw_unit = "TB/s",
     .bf16 = 989.4,
     .fp8 = 1978.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 450,
     .pcie = 64,
     .nic = 50,
     .per_hour = 6.35,
     .price = RUNPOD,
     .max_w = 700,
     .power = "NVIDIA H200 datasheet, SXM: max TDP up to 700 W",
     .device = {"H200", NULL},
     .source =
         "NVIDIA H200 datasheet, SXM: 989.4 TF bf16 / 1978.9 TF fp8 dense, 141 GB HBM3e 4.8 TB/s, "
         "NVLink 900 GB/s; DGX H200: ConnectX-7 400 Gb/s per GPU"},

    /* NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): BF16 312 TFLOPS dense (624 sparse); no
     * fp8 tensor cores (Ampere); 80 GB HBM2e at 2,039 GB/s; NVLink 600 GB/s; PCIe Gen4 64 GB/s
     * (both directions). NVIDIA DGX A100: 8 ConnectX-6 200 Gb/s. */
    {.name = "a100-80gb",
     .arch = CAL_ARCH_AMPERE,
     .memory = CAL_MEM_HBM,
     .mem = 80,
     .mem_unit = "GB",
     .bw = 2039,
     .bw_unit = "GB/s",
     .bf16 = 312,
     .fp8 = CAL_NONE,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 300,
     .pcie = 32,
     .nic = 25,
     .per_hour = 2.45,
     .price = RUNPOD " (A100 SXM 80GB)",
     .max_w = 400,
     .power = "NVIDIA A100 datasheet, 80GB SXM: max TDP 400 W",
     .device = {"A100", "80GB"},
     .source =
         "NVIDIA A100 datasheet, 80GB SXM: 312 TF bf16 dense, no fp8, 80 GB HBM2e 2,039 GB/s, "
         "NVLink 600 GB/s; DGX A100: ConnectX-6 200 Gb/s per GPU"},

    /* Same datasheet (40GB SXM): 312 TFLOPS; 40 GB HBM2 at 1,555 GB/s; NVLink 600 GB/s. */
    {.name = "a100-40gb",
     .arch = CAL_ARCH_AMPERE,
     .memory = CAL_MEM_HBM,
     .mem = 40,
     .mem_unit = "GB",
     .bw = 1555,
     .bw_unit = "GB/s",
     .bf16 = 312,
     .fp8 = CAL_NONE,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 300,
     .pcie = 32,
     .nic = 25,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 400,
     .power = "NVIDIA A100 datasheet, 40GB SXM: max TDP 400 W",
     .device = {"A100", NULL},
     .source = "NVIDIA A100 datasheet, 40GB SXM: 312 TF bf16 dense, no fp8, 40 GB HBM2 1,555 GB/s, "
               "NVLink 600 GB/s; DGX A100: ConnectX-6 200 Gb/s per GPU"},

    /* NVIDIA L40S datasheet: BF16 362.05 / FP8 733 TFLOPS dense (733 / 1,466 with sparsity);
     * 48 GB GDDR6 at 864 GB/s; no NVLink; PCIe Gen4 x16 64 GB/s (both directions). */
    {.name = "l40s",
     .arch = CAL_ARCH_ADA,
     .memory = CAL_MEM_GDDR,
     .mem = 48,
     .mem_unit = "GB",
     .bw = 864,
     .bw_unit = "GB/s",
     .bf16 = 362.05,
     .fp8 = 733,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 32,
     .pcie = 32,
     .nic = CAL_NONE,
     .per_hour = 1.40,
     .price = RUNPOD,
     .max_w = 350,
     .power = "NVIDIA L40S datasheet: max power 350 W",
     .device = {"L40S", NULL},
     .source =
         "NVIDIA L40S datasheet: 362.05 TF bf16 / 733 TF fp8 dense, 48 GB GDDR6 864 GB/s, PCIe "
         "Gen4"},

    /* NVIDIA L4 datasheet: BF16 242 / FP8 485 TFLOPS with sparsity -> 121 and 242.5 dense;
     * 24 GB GDDR6 at 300 GB/s; PCIe Gen4 x16. */
    {.name = "l4",
     .arch = CAL_ARCH_ADA,
     .memory = CAL_MEM_GDDR,
     .mem = 24,
     .mem_unit = "GB",
     .bw = 300,
     .bw_unit = "GB/s",
     .bf16 = 121,
     .fp8 = 242.5,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 32,
     .pcie = 32,
     .nic = CAL_NONE,
     .per_hour = 0.78,
     .price = RUNPOD,
     .max_w = 72,
     .power = "NVIDIA L4 datasheet: max TDP 72 W",
     .device = {"L4", NULL},
     .source =
         "NVIDIA L4 datasheet: 121 TF bf16 / 242.5 TF fp8 dense, 24 GB GDDR6 300 GB/s, PCIe Gen4"},

    /* NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: FP16/BF16 tensor with FP32
     * accumulate 165.2 TFLOPS dense, FP8 with FP32 accumulate 330.3 dense (the accumulation
     * inference frameworks use); 24 GB GDDR6X at 1,008 GB/s; no NVLink; PCIe Gen4 x16. */
    {.name = "rtx-4090",
     .arch = CAL_ARCH_ADA,
     .memory = CAL_MEM_GDDR,
     .mem = 24,
     .mem_unit = "GB",
     .bw = 1008,
     .bw_unit = "GB/s",
     .bf16 = 165.2,
     .fp8 = 330.3,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 32,
     .pcie = 32,
     .nic = CAL_NONE,
     .per_hour = 0.60,
     .price = RUNPOD,
     .max_w = 450,
     .power = "NVIDIA GeForce RTX 4090 specifications: total graphics power 450 W",
     .device = {"4090", NULL},
     .source =
         "NVIDIA Ada whitepaper, RTX 4090: 165.2 TF bf16 / 330.3 TF fp8 dense (fp32 accumulate), "
         "24 GB GDDR6X 1,008 GB/s, PCIe Gen4"},

    /* NVIDIA Blackwell architecture technical brief, HGX B200 (1,000 W) per GPU: BF16 2.25 /
     * FP8 4.5 / FP4 9 PFLOPS dense (4.5 / 9 / 18 sparse), as tabulated at
     * glennklockwood.com/garden/processors/B200; NVIDIA DGX B200 datasheet: 1,440 GB HBM3e and
     * 64 TB/s over 8 GPUs (180 GB, 8 TB/s each), 8 ConnectX-7 400 Gb/s; NVLink 5 1.8 TB/s per
     * GPU; PCIe Gen5 host. FP4 tensor cores compute NVFP4 and MXFP4. */
    {.name = "b200",
     .arch = CAL_ARCH_BLACKWELL,
     .memory = CAL_MEM_HBM,
     .mem = 180,
     .mem_unit = "GB",
     .bw = 8,
     .bw_unit = "TB/s",
     .bf16 = 2250,
     .fp8 = 4500,
     .fp4 = 9000,
     .fp4_formats = NV_MX,
     .link = 900,
     .pcie = 64,
     .nic = 50,
     .per_hour = 10.57,
     .price = RUNPOD,
     .max_w = 1000,
     .power = "NVIDIA Blackwell technical brief, HGX B200: 1,000 W per GPU",
     .device = {"B200", NULL},
     .source =
         "NVIDIA Blackwell brief / DGX B200 datasheet: 2.25 PF bf16 / 4.5 PF fp8 / 9 PF fp4 dense, "
         "180 GB HBM3e 8 TB/s, NVLink 5 1.8 TB/s; ConnectX-7 400 Gb/s per GPU"},

    /* Blackwell Ultra, HGX B300 per GPU: BF16 2.25 / FP8 4.5 PFLOPS dense, FP4 13.1 PFLOPS
     * dense (glennklockwood.com/garden/processors/B300, from NVIDIA's HGX B300 figures); NVIDIA
     * DGX B300 datasheet: 2.3 TB HBM3e over 8 GPUs (288 GB each), 8 ConnectX-8 800 Gb/s;
     * 8 TB/s; NVLink 5 1.8 TB/s; PCIe Gen6 host. */
    {.name = "b300",
     .arch = CAL_ARCH_BLACKWELL,
     .memory = CAL_MEM_HBM,
     .mem = 288,
     .mem_unit = "GB",
     .bw = 8,
     .bw_unit = "TB/s",
     .bf16 = 2250,
     .fp8 = 4500,
     .fp4 = 13125,
     .fp4_formats = NV_MX,
     .link = 900,
     .pcie = 128,
     .nic = 100,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1100,
     .power = "NVIDIA HGX B300: 1,100 W per GPU",
     .device = {"B300", NULL},
     .source =
         "NVIDIA HGX/DGX B300: 2.25 PF bf16 / 4.5 PF fp8 / 13.1 PF fp4 dense, 288 GB HBM3e 8 TB/s, "
         "NVLink 5 1.8 TB/s, PCIe Gen6; ConnectX-8 800 Gb/s per GPU"},

    /* NVIDIA GB200 NVL72 datasheet, per GPU (rack / 72): FP4 1,440 / FP8 720 / BF16 360
     * PFLOPS with sparsity -> 10 / 5 / 2.5 PFLOPS dense; HBM3e 13.4 TB -> 186 GB; 576 TB/s -> 8
     * TB/s; NVLink 130 TB/s -> 1.8 TB/s; host: NVLink-C2C 900 GB/s per Grace, shared by its two
     * GPUs (225 GB/s each way per GPU); ConnectX-7 400 Gb/s per GPU. */
    {.name = "gb200",
     .arch = CAL_ARCH_BLACKWELL,
     .memory = CAL_MEM_HBM,
     .mem = 186,
     .mem_unit = "GB",
     .bw = 8,
     .bw_unit = "TB/s",
     .bf16 = 2500,
     .fp8 = 5000,
     .fp4 = 10000,
     .fp4_formats = NV_MX,
     .link = 900,
     .pcie = 225,
     .nic = 50,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1200,
     .power = "NVIDIA GB200 NVL72: Blackwell GPU up to 1,200 W",
     .device = {"GB200", NULL},
     .source = "NVIDIA GB200 NVL72 datasheet / 72: 2.5 PF bf16 / 5 PF fp8 / 10 PF fp4 dense, 186 "
               "GB HBM3e "
               "8 TB/s, NVLink 1.8 TB/s, NVLink-C2C host; ConnectX-7 400 Gb/s per GPU"},

    /* NVIDIA GB300 NVL72 datasheet, per GPU: FP4 1,080 PFLOPS dense -> 15 PF; FP8 360 and BF16
     * 180 PFLOPS dense -> 5 and 2.5 PF; 20.7 TB HBM3e -> 288 GB; 576 TB/s -> 8 TB/s; NVLink
     * 130 TB/s; NVLink-C2C host as GB200; 72 ConnectX-8 800 Gb/s. */
    {.name = "gb300",
     .arch = CAL_ARCH_BLACKWELL,
     .memory = CAL_MEM_HBM,
     .mem = 288,
     .mem_unit = "GB",
     .bw = 8,
     .bw_unit = "TB/s",
     .bf16 = 2500,
     .fp8 = 5000,
     .fp4 = 15000,
     .fp4_formats = NV_MX,
     .link = 900,
     .pcie = 225,
     .nic = 100,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1400,
     .power = "NVIDIA GB300 NVL72: Blackwell Ultra GPU up to 1,400 W",
     .device = {"GB300", NULL},
     .source =
         "NVIDIA GB300 NVL72 datasheet / 72: 2.5 PF bf16 / 5 PF fp8 / 15 PF fp4 dense, 288 GB "
         "HBM3e 8 TB/s, NVLink 1.8 TB/s; ConnectX-8 800 Gb/s per GPU"},

    /* NVIDIA H20 (Hopper for China): FP16/BF16 148 TFLOPS, FP8 296 TFLOPS, 96 GB HBM3 at
     * 4.0 TB/s, NVLink 900 GB/s, PCIe Gen5 (NVIDIA's H20 specification as republished, e.g.
     * willitrunai.com/gpus/h20-96gb). */
    {.name = "h20",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 96,
     .mem_unit = "GB",
     .bw = 4.0,
     .bw_unit = "TB/s",
     .bf16 = 148,
     .fp8 = 296,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 450,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 400,
     .power = "NVIDIA H20 specification: max TDP 400 W",
     .device = {"H20", NULL},
     .source =
         "NVIDIA H20: 148 TF bf16 / 296 TF fp8, 96 GB HBM3 4.0 TB/s, NVLink 900 GB/s, PCIe Gen5"},

    /* NVIDIA H800 SXM5 (the H100 SXM for China): H100 SXM compute and memory (989.4 / 1,978.9
     * TFLOPS dense, 80 GB HBM3 at 3.35 TB/s) with NVLink cut to 400 GB/s. */
    {.name = "h800",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 80,
     .mem_unit = "GB",
     .bw = 3.35,
     .bw_unit = "TB/s",
     .bf16 = 989.4,
     .fp8 = 1978.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 200,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 700,
     .power = "NVIDIA H800 SXM5: max TDP 700 W (as H100 SXM)",
     .device = {"H800", NULL},
     .source =
         "NVIDIA H800 SXM5: 989.4 TF bf16 / 1978.9 TF fp8 dense, 80 GB HBM3 3.35 TB/s, NVLink 400 "
         "GB/s"},

    /* NVIDIA GH200 Grace Hopper Superchip datasheet (HBM3e version): the H100 GPU's FP8 3,958
     * and BF16 1,979 TFLOPS with sparsity -> 1,978.9 / 989.4 dense; 144 GB HBM3e at 4.9 TB/s;
     * NVLink 900 GB/s; host NVLink-C2C 900 GB/s (450 GB/s each way). */
    {.name = "gh200",
     .arch = CAL_ARCH_HOPPER,
     .memory = CAL_MEM_HBM,
     .mem = 144,
     .mem_unit = "GB",
     .bw = 4.9,
     .bw_unit = "TB/s",
     .bf16 = 989.4,
     .fp8 = 1978.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 450,
     .pcie = 450,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = CAL_NONE,
     .power = "the GH200 superchip's 450-1,000 W module power includes its Grace CPU: no GPU "
              "figure",
     .device = {"GH200", NULL},
     .source =
         "NVIDIA GH200 datasheet (HBM3e): 989.4 TF bf16 / 1978.9 TF fp8 dense, 144 GB HBM3e 4.9 "
         "TB/s, NVLink 900 GB/s, NVLink-C2C 900 GB/s host"},

    /* AMD Instinct MI300X data sheet: FP16/BF16 1,307.4 TFLOPS and FP8 2,614.9 TFLOPS dense
     * (2,614.9 / 5,229.8 with sparsity); no FP4; 192 GB HBM3 at 5.3 TB/s; 7 Infinity Fabric
     * links, 896 GB/s peak aggregate (448 GB/s each way over the fully connected 8-GPU
     * platform); PCIe Gen5 x16. */
    {.name = "mi300x",
     .arch = CAL_ARCH_CDNA,
     .memory = CAL_MEM_HBM,
     .mem = 192,
     .mem_unit = "GB",
     .bw = 5.3,
     .bw_unit = "TB/s",
     .bf16 = 1307.4,
     .fp8 = 2614.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 448,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 750,
     .power = "AMD Instinct MI300X data sheet: TBP 750 W",
     .device = {"MI300X", NULL},
     .source =
         "AMD Instinct MI300X data sheet: 1307.4 TF bf16 / 2614.9 TF fp8 dense, 192 GB HBM3 5.3 "
         "TB/s, Infinity Fabric 896 GB/s aggregate, PCIe Gen5"},

    /* AMD Instinct MI325X data sheet: MI300X compute (1,307.4 / 2,614.9 TFLOPS dense); 256 GB
     * HBM3E at 6 TB/s; same 7 Infinity Fabric links; PCIe Gen5 x16. */
    {.name = "mi325x",
     .arch = CAL_ARCH_CDNA,
     .memory = CAL_MEM_HBM,
     .mem = 256,
     .mem_unit = "GB",
     .bw = 6.0,
     .bw_unit = "TB/s",
     .bf16 = 1307.4,
     .fp8 = 2614.9,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 448,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1000,
     .power = "AMD Instinct MI325X data sheet: TBP 1,000 W",
     .device = {"MI325X", NULL},
     .source =
         "AMD Instinct MI325X data sheet: 1307.4 TF bf16 / 2614.9 TF fp8 dense, 256 GB HBM3E 6 "
         "TB/s, Infinity Fabric 896 GB/s aggregate, PCIe Gen5"},

    /* AMD Instinct MI355X data sheet: FP16/BF16 2.5 PFLOPS and FP8 5.0 PFLOPS dense (5 / 10.1
     * with sparsity), MXFP4 (and MXFP6) 10 PFLOPS; 288 GB HBM3E at 8 TB/s; 7 Infinity Fabric
     * links of 153.6 GB/s (1,075 GB/s aggregate, 537.6 each way); PCIe Gen5 x16. CDNA 4
     * computes the OCP MX formats, not NVFP4. */
    {.name = "mi355x",
     .arch = CAL_ARCH_CDNA,
     .memory = CAL_MEM_HBM,
     .mem = 288,
     .mem_unit = "GB",
     .bw = 8,
     .bw_unit = "TB/s",
     .bf16 = 2500,
     .fp8 = 5000,
     .fp4 = 10000,
     .fp4_formats = ENG_FP4_MX,
     .link = 537.6,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1400,
     .power = "AMD Instinct MI355X data sheet: TBP 1,400 W",
     .device = {"MI355X", NULL},
     .source =
         "AMD Instinct MI355X data sheet: 2.5 PF bf16 / 5 PF fp8 / 10 PF mxfp4 dense, 288 GB HBM3E "
         "8 TB/s, Infinity Fabric 1,075 GB/s aggregate, PCIe Gen5"},

    /* NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet: 96 GB GDDR7 at 1,597 GB/s, FP4
     * 4 PFLOPS with sparsity -> 2 PF dense; FP8 and BF16 dense at 1/2 and 1/4 of the FP4 rate
     * (Blackwell's 5th-generation tensor cores, FP32 accumulate at full rate on the
     * professional part); no NVLink; PCIe Gen5 x16. */
    {.name = "rtx-pro-6000",
     .arch = CAL_ARCH_BLACKWELL_RTX,
     .memory = CAL_MEM_GDDR,
     .mem = 96,
     .mem_unit = "GB",
     .bw = 1597,
     .bw_unit = "GB/s",
     .bf16 = 500,
     .fp8 = 1000,
     .fp4 = 2000,
     .fp4_formats = NV_MX,
     .link = 64,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = 1.57,
     .price = RUNPOD,
     .max_w = 600,
     .power = "NVIDIA RTX PRO 6000 Blackwell datasheet: max power 600 W",
     .device = {"RTX PRO 6000", NULL},
     .source =
         "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet: 2 PF fp4 dense (4 sparse), fp8 "
         "and bf16 at 1/2 and 1/4 of it, 96 GB GDDR7 1,597 GB/s, PCIe Gen5"},

    /* NVIDIA RTX Blackwell GPU architecture whitepaper, GeForce RTX 5090 (FP32 accumulate, as
     * for the RTX 4090): FP16/BF16 209.5, FP8 419, FP4 1,676 TFLOPS dense (838 / 1,676 / 3,352
     * with FP16 accumulate or sparsity, as GeForce spec sheets quote them); 32 GB GDDR7 at
     * 1,792 GB/s; PCIe Gen5 x16; no NVLink. */
    {.name = "rtx-5090",
     .arch = CAL_ARCH_BLACKWELL_RTX,
     .memory = CAL_MEM_GDDR,
     .mem = 32,
     .mem_unit = "GB",
     .bw = 1792,
     .bw_unit = "GB/s",
     .bf16 = 209.5,
     .fp8 = 419,
     .fp4 = 1676,
     .fp4_formats = NV_MX,
     .link = 64,
     .pcie = 64,
     .nic = CAL_NONE,
     .per_hour = 1.22,
     .price = RUNPOD,
     .max_w = 575,
     .power = "NVIDIA GeForce RTX 5090 specifications: total graphics power 575 W",
     .device = {"5090", NULL},
     .source =
         "NVIDIA RTX Blackwell whitepaper, RTX 5090: 209.5 TF bf16 / 419 TF fp8 / 1676 TF fp4 "
         "dense (fp32 accumulate), 32 GB GDDR7 1,792 GB/s, PCIe Gen5"},

    /* NVIDIA A10G (AWS G5): 24 GB GDDR6 at 600 GB/s, PCIe Gen4. NVIDIA publishes no A10G
     * datasheet; its tensor rate is half the A10's (A10 datasheet: BF16 125 TFLOPS dense) at
     * 80 SMs, ~70 TFLOPS BF16 dense as Baseten's "NVIDIA A10 vs A10G" comparison tabulates it;
     * no fp8 (Ampere). */
    {.name = "a10g",
     .arch = CAL_ARCH_AMPERE,
     .memory = CAL_MEM_GDDR,
     .mem = 24,
     .mem_unit = "GB",
     .bw = 600,
     .bw_unit = "GB/s",
     .bf16 = 70,
     .fp8 = CAL_NONE,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 32,
     .pcie = 32,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = CAL_NONE,
     .power = "no datasheet states the A10G's board power",
     .device = {"A10G", NULL},
     .source =
         "NVIDIA A10G (AWS G5; no NVIDIA datasheet): ~70 TF bf16 dense, no fp8, 24 GB GDDR6 600 "
         "GB/s, PCIe Gen4"},

    /* NVIDIA L20 datasheet: FP8 239 / BF16 119.5 TFLOPS dense (478 / 239 with sparsity); 48 GB
     * GDDR6 at 864 GB/s; PCIe Gen4 x16; no NVLink. */
    {.name = "l20",
     .arch = CAL_ARCH_ADA,
     .memory = CAL_MEM_GDDR,
     .mem = 48,
     .mem_unit = "GB",
     .bw = 864,
     .bw_unit = "GB/s",
     .bf16 = 119.5,
     .fp8 = 239,
     .fp4 = CAL_NONE,
     .fp4_formats = CAL_FP4_NONE,
     .link = 32,
     .pcie = 32,
     .nic = CAL_NONE,
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 275,
     .power = "NVIDIA L20 specification: max power 275 W",
     .device = {"L20", NULL},
     .source =
         "NVIDIA L20 datasheet: 119.5 TF bf16 / 239 TF fp8 dense, 48 GB GDDR6 864 GB/s, PCIe Gen4"},
};

/* Each model: its name, and the values of its published config.json (Hugging Face) written as
 * the minimal config that states them. Keys left out take the config class's defaults, as the
 * reader applies them. */
typedef struct model_entry {
    const char *name;
    const char *config;
} model_entry;

#define LLAMA(l, h, a, kv, i, v, ctx, dt)                                                          \
    "{\"model_type\": \"llama\", \"num_hidden_layers\": " #l ", \"hidden_size\": " #h              \
    ", \"num_attention_heads\": " #a ", \"num_key_value_heads\": " #kv                             \
    ", \"intermediate_size\": " #i ", \"vocab_size\": " #v ", \"max_position_embeddings\": " #ctx  \
    ", \"torch_dtype\": \"" dt "\"}"

static const model_entry models[] = {
    /* meta-llama/Llama-2-7b-hf, -13b-hf, -70b-hf (torch_dtype float16) */
    {"llama-2-7b", LLAMA(32, 4096, 32, 32, 11008, 32000, 4096, "float16")},
    {"llama-2-13b", LLAMA(40, 5120, 40, 40, 13824, 32000, 4096, "float16")},
    {"llama-2-70b", LLAMA(80, 8192, 64, 8, 28672, 32000, 4096, "float16")},
    /* meta-llama/Meta-Llama-3-8B, -70B */
    {"llama-3-8b", LLAMA(32, 4096, 32, 8, 14336, 128256, 8192, "bfloat16")},
    {"llama-3-70b", LLAMA(80, 8192, 64, 8, 28672, 128256, 8192, "bfloat16")},
    /* mistralai/Mistral-7B-v0.1: every layer windowed to 4,096 tokens */
    {"mistral-7b",
     "{\"model_type\": \"mistral\", \"num_hidden_layers\": 32, \"hidden_size\": 4096, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
     "\"vocab_size\": 32000, \"max_position_embeddings\": 32768, \"sliding_window\": 4096, "
     "\"torch_dtype\": \"bfloat16\"}"},
    /* Qwen/Qwen2.5-0.5B, -1.5B, -7B */
    {"qwen2.5-0.5b",
     "{\"model_type\": \"qwen2\", \"num_hidden_layers\": 24, \"hidden_size\": 896, "
     "\"num_attention_heads\": 14, \"num_key_value_heads\": 2, \"intermediate_size\": 4864, "
     "\"vocab_size\": 151936, \"max_position_embeddings\": 32768, \"tie_word_embeddings\": true, "
     "\"torch_dtype\": \"bfloat16\"}"},
    {"qwen2.5-1.5b",
     "{\"model_type\": \"qwen2\", \"num_hidden_layers\": 28, \"hidden_size\": 1536, "
     "\"num_attention_heads\": 12, \"num_key_value_heads\": 2, \"intermediate_size\": 8960, "
     "\"vocab_size\": 151936, \"max_position_embeddings\": 131072, \"tie_word_embeddings\": "
     "true, \"torch_dtype\": \"bfloat16\"}"},
    {"qwen2.5-7b",
     "{\"model_type\": \"qwen2\", \"num_hidden_layers\": 28, \"hidden_size\": 3584, "
     "\"num_attention_heads\": 28, \"num_key_value_heads\": 4, \"intermediate_size\": 18944, "
     "\"vocab_size\": 152064, \"max_position_embeddings\": 131072, \"torch_dtype\": "
     "\"bfloat16\"}"},
    /* facebook/opt-13b: ReLU MLP of ffn_dim, biases on every linear layer, LM head tied */
    {"opt-13b",
     "{\"model_type\": \"opt\", \"num_hidden_layers\": 40, \"hidden_size\": 5120, "
     "\"num_attention_heads\": 40, \"ffn_dim\": 20480, \"vocab_size\": 50272, "
     "\"max_position_embeddings\": 2048, \"word_embed_proj_dim\": 5120, \"torch_dtype\": "
     "\"float16\"}"},
    /* meta-llama/Llama-3.1-8B, -70B, -405B */
    {"llama-3.1-8b", LLAMA(32, 4096, 32, 8, 14336, 128256, 131072, "bfloat16")},
    {"llama-3.1-70b", LLAMA(80, 8192, 64, 8, 28672, 128256, 131072, "bfloat16")},
    {"llama-3.1-405b", LLAMA(126, 16384, 128, 8, 53248, 128256, 131072, "bfloat16")},
    /* meta-llama/Llama-4-Scout-17B-16E-Instruct and -Maverick-17B-128E-Instruct (text_config):
     * MoE with a shared expert, chunked local attention (8,192) on 3 of 4 layers */
    {"llama-4-scout",
     "{\"model_type\": \"llama4_text\", \"num_hidden_layers\": 48, \"hidden_size\": 5120, "
     "\"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"head_dim\": 128, "
     "\"intermediate_size\": 8192, \"intermediate_size_mlp\": 16384, \"num_local_experts\": 16, "
     "\"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": 1, \"attention_chunk_size\": "
     "8192, \"vocab_size\": 202048, \"max_position_embeddings\": 10485760, \"torch_dtype\": "
     "\"bfloat16\"}"},
    {"llama-4-maverick",
     "{\"model_type\": \"llama4_text\", \"num_hidden_layers\": 48, \"hidden_size\": 5120, "
     "\"num_attention_heads\": 40, \"num_key_value_heads\": 8, \"head_dim\": 128, "
     "\"intermediate_size\": 8192, \"intermediate_size_mlp\": 16384, \"num_local_experts\": 128, "
     "\"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": 2, \"attention_chunk_size\": "
     "8192, \"vocab_size\": 202048, \"max_position_embeddings\": 1048576, \"torch_dtype\": "
     "\"bfloat16\"}"},
    /* mistralai/Mixtral-8x7B-v0.1, -8x22B-v0.1 */
    {"mixtral-8x7b",
     "{\"model_type\": \"mixtral\", \"num_hidden_layers\": 32, \"hidden_size\": 4096, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
     "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
     "\"max_position_embeddings\": 32768, \"torch_dtype\": \"bfloat16\"}"},
    {"mixtral-8x22b",
     "{\"model_type\": \"mixtral\", \"num_hidden_layers\": 56, \"hidden_size\": 6144, "
     "\"num_attention_heads\": 48, \"num_key_value_heads\": 8, \"intermediate_size\": 16384, "
     "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
     "\"max_position_embeddings\": 65536, \"torch_dtype\": \"bfloat16\"}"},
    /* Qwen/Qwen3-8B, -32B, -30B-A3B, -235B-A22B */
    {"qwen3-8b",
     "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 36, \"hidden_size\": 4096, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, "
     "\"intermediate_size\": 12288, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
     "\"torch_dtype\": \"bfloat16\"}"},
    {"qwen3-32b",
     "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 64, \"hidden_size\": 5120, "
     "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 128, "
     "\"intermediate_size\": 25600, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
     "\"torch_dtype\": \"bfloat16\"}"},
    {"qwen3-30b-a3b",
     "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 48, \"hidden_size\": 2048, "
     "\"num_attention_heads\": 32, \"num_key_value_heads\": 4, \"head_dim\": 128, "
     "\"intermediate_size\": 6144, \"moe_intermediate_size\": 768, \"num_experts\": 128, "
     "\"num_experts_per_tok\": 8, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
     "\"torch_dtype\": \"bfloat16\"}"},
    {"qwen3-235b-a22b",
     "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 94, \"hidden_size\": 4096, "
     "\"num_attention_heads\": 64, \"num_key_value_heads\": 4, \"head_dim\": 128, "
     "\"intermediate_size\": 12288, \"moe_intermediate_size\": 1536, \"num_experts\": 128, "
     "\"num_experts_per_tok\": 8, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
     "\"torch_dtype\": \"bfloat16\"}"},
/* deepseek-ai/DeepSeek-V3 and -R1 (one architecture), moonshotai/Kimi-K2-Instruct: MLA,
 * DeepSeekMoE, block-wise fp8 checkpoints */
#define DEEPSEEK(type, heads, experts, dense, rope_ctx)                                            \
    "{\"model_type\": \"" type "\", \"num_hidden_layers\": 61, \"hidden_size\": 7168, "            \
    "\"num_attention_heads\": " #heads ", \"num_key_value_heads\": " #heads                        \
    ", \"intermediate_size\": 18432, \"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "               \
    "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, "                   \
    "\"n_routed_experts\": " #experts ", \"num_experts_per_tok\": 8, \"moe_intermediate_size\": "  \
    "2048, \"n_shared_experts\": 1, \"first_k_dense_replace\": " #dense                            \
    ", \"moe_layer_freq\": 1, \"topk_method\": \"noaux_tc\", \"vocab_size\": 129280, "             \
    "\"max_position_embeddings\": " #rope_ctx ", \"torch_dtype\": \"bfloat16\", "                  \
    "\"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\", "                     \
    "\"activation_scheme\": \"dynamic\", \"weight_block_size\": [128, 128]}}"
    {"deepseek-v3", DEEPSEEK("deepseek_v3", 128, 256, 3, 163840)},
    {"deepseek-r1", DEEPSEEK("deepseek_v3", 128, 256, 3, 163840)},
    {"kimi-k2",
     "{\"model_type\": \"kimi_k2\", \"num_hidden_layers\": 61, \"hidden_size\": 7168, "
     "\"num_attention_heads\": 64, \"num_key_value_heads\": 64, \"intermediate_size\": 18432, "
     "\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, "
     "\"qk_rope_head_dim\": 64, \"v_head_dim\": 128, \"n_routed_experts\": 384, "
     "\"num_experts_per_tok\": 8, \"moe_intermediate_size\": 2048, \"n_shared_experts\": 1, "
     "\"first_k_dense_replace\": 1, \"moe_layer_freq\": 1, \"topk_method\": \"noaux_tc\", "
     "\"vocab_size\": 163840, \"max_position_embeddings\": 131072, \"torch_dtype\": "
     "\"bfloat16\", \"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\", "
     "\"activation_scheme\": \"dynamic\", \"weight_block_size\": [128, 128]}}"},
/* openai/gpt-oss-20b and -120b: MXFP4 experts, alternating 128-token sliding and full
 * attention (GptOssConfig's default layer_types), attention sinks */
#define GPT_OSS(layers, experts)                                                                   \
    "{\"model_type\": \"gpt_oss\", \"num_hidden_layers\": " #layers ", \"hidden_size\": 2880, "    \
    "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 64, "                  \
    "\"intermediate_size\": 2880, \"num_local_experts\": " #experts                                \
    ", \"num_experts_per_tok\": 4, \"attention_bias\": true, \"sliding_window\": 128, "            \
    "\"vocab_size\": 201088, \"max_position_embeddings\": 131072, \"torch_dtype\": "               \
    "\"bfloat16\", \"quantization_config\": {\"quant_method\": \"mxfp4\", "                        \
    "\"modules_to_not_convert\": [\"model.layers.*.self_attn\", \"model.layers.*.mlp.router\", "   \
    "\"model.embed_tokens\", \"lm_head\"]}}"
    {"gpt-oss-20b", GPT_OSS(24, 32)},
    {"gpt-oss-120b", GPT_OSS(36, 128)},
/* google/gemma-2-2b-it, -9b-it, -27b-it: alternating 4,096-token sliding and global layers,
 * tied embeddings (Gemma2Config's default) */
#define GEMMA2(l, h, a, kv, hd, i)                                                                 \
    "{\"model_type\": \"gemma2\", \"num_hidden_layers\": " #l ", \"hidden_size\": " #h             \
    ", \"num_attention_heads\": " #a ", \"num_key_value_heads\": " #kv ", \"head_dim\": " #hd      \
    ", \"intermediate_size\": " #i ", \"vocab_size\": 256000, \"max_position_embeddings\": "       \
    "8192, \"sliding_window\": 4096, \"torch_dtype\": \"bfloat16\"}"
    {"gemma-2-2b", GEMMA2(26, 2304, 8, 4, 256, 9216)},
    {"gemma-2-9b", GEMMA2(42, 3584, 16, 8, 256, 14336)},
    {"gemma-2-27b", GEMMA2(46, 4608, 32, 16, 128, 36864)},
/* google/gemma-3-1b-it and the text_config of gemma-3-4b-it, -12b-it, -27b-it: 5 local
 * (sliding_window) : 1 global layers; vocabulary and context from Gemma3TextConfig's defaults
 * except the 1B's */
#define GEMMA3(l, h, a, kv, hd, i, w, extra)                                                       \
    "{\"model_type\": \"gemma3_text\", \"num_hidden_layers\": " #l ", \"hidden_size\": " #h        \
    ", \"num_attention_heads\": " #a ", \"num_key_value_heads\": " #kv ", \"head_dim\": " #hd      \
    ", \"intermediate_size\": " #i ", \"sliding_window\": " #w ", " extra                          \
    "\"torch_dtype\": \"bfloat16\"}"
    {"gemma-3-1b", GEMMA3(26, 1152, 4, 1, 256, 6912, 512,
                          "\"vocab_size\": 262144, \"max_position_embeddings\": 32768, ")},
    {"gemma-3-4b", GEMMA3(34, 2560, 8, 4, 256, 10240, 1024, "")},
    {"gemma-3-12b", GEMMA3(48, 3840, 16, 8, 256, 15360, 1024, "")},
    {"gemma-3-27b", GEMMA3(62, 5376, 32, 16, 128, 21504, 1024, "")},
};

#define NGPUS ((int)(sizeof gpus / sizeof gpus[0]))
#define NMODELS ((int)(sizeof models / sizeof models[0]))

/* Writes "row NAME: FIELD ..." into why and returns -1 (0 when the row is complete). */
static int row_fail(char *why, size_t len, const cal_gpu_sheet *s, const char *field,
                    const char *expected)
{
    if (len)
        snprintf(why, len, "GPU catalog row %s: field .%s %s", s->name ? s->name : "(unnamed)",
                 field, expected);
    return -1;
}

/* A figure the datasheet may lack: present (> 0) or stated absent (CAL_NONE), never 0. */
static int stated(double v)
{
    return v > 0 || v == CAL_NONE;
}

int cal_gpu_sheet_check(const cal_gpu_sheet *s, char *why, size_t len)
{
    if (!s->name || !*s->name)
        return row_fail(why, len, s, "name", "is missing");
    if (s->arch <= CAL_ARCH_UNKNOWN || s->arch > CAL_ARCH_CDNA)
        return row_fail(why, len, s, "arch", "is missing (a CAL_ARCH_* other than UNKNOWN)");
    if (s->memory <= CAL_MEM_UNKNOWN || s->memory > CAL_MEM_GDDR)
        return row_fail(why, len, s, "memory", "is missing (CAL_MEM_HBM or CAL_MEM_GDDR)");
    if (!(s->mem > 0) || !s->mem_unit || strcmp(s->mem_unit, "GB") != 0)
        return row_fail(why, len, s, "mem", "is missing (a positive size with .mem_unit \"GB\")");
    if (!(s->bw > 0) || !s->bw_unit ||
        (strcmp(s->bw_unit, "TB/s") != 0 && strcmp(s->bw_unit, "GB/s") != 0))
        return row_fail(why, len, s, "bw",
                        "is missing (a positive bandwidth with .bw_unit \"TB/s\" or \"GB/s\")");
    if (!(s->bf16 > 0))
        return row_fail(why, len, s, "bf16", "is missing (dense TFLOP/s)");
    if (!stated(s->fp8))
        return row_fail(why, len, s, "fp8", "is missing (dense TFLOP/s, or CAL_NONE)");
    if (!stated(s->fp4))
        return row_fail(why, len, s, "fp4", "is missing (dense TFLOP/s, or CAL_NONE)");
    if ((s->fp4 > 0) != (s->fp4_formats != 0))
        return row_fail(why, len, s, "fp4_formats",
                        "does not match .fp4 (ENG_FP4_* with an fp4 figure, none with CAL_NONE)");
    if (!(s->link > 0))
        return row_fail(why, len, s, "link", "is missing (GB/s per direction)");
    if (!(s->pcie > 0))
        return row_fail(why, len, s, "pcie", "is missing (GB/s per direction)");
    if (!stated(s->nic))
        return row_fail(why, len, s, "nic", "is missing (GB/s per direction, or CAL_NONE)");
    if (!(s->per_hour > 0 || s->per_hour == CAL_NONE) || !s->price || !*s->price)
        return row_fail(why, len, s, "per_hour",
                        "or .price is missing (USD per GPU-hour, or CAL_NONE; where it is stated)");
    if (!(s->max_w > 0 || s->max_w == CAL_NONE) || !s->power || !*s->power)
        return row_fail(why, len, s, "max_w",
                        "or .power is missing (W at full load, or CAL_NONE; the datasheet)");
    if (!s->device[0] || !*s->device[0])
        return row_fail(why, len, s, "device", "is missing (the word a device description has)");
    if (!s->source || !*s->source)
        return row_fail(why, len, s, "source", "is missing (the datasheets, one line)");
    return 0;
}

int cal_gpu_catalog_check(char *why, size_t len)
{
    for (int i = 0; i < NGPUS; i++) {
        if (cal_gpu_sheet_check(&gpus[i], why, len) != 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (strcmp(gpus[j].name, gpus[i].name) == 0)
                return row_fail(why, len, &gpus[i], "name", "is the name of an earlier row");
    }
    return 0;
}

/* The catalog's rows, checked: a row with a missing field is a bug in this file, and stops the
 * program (naming the row and the field) before any GPU is priced from it. */
static const cal_gpu_sheet *rows(void)
{
    char why[256];
    if (cal_gpu_catalog_check(why, sizeof why) != 0) {
        fprintf(stderr, "%s\n", why);
        sim_assert_fail(NULL, __FILE__, __LINE__, "every GPU catalog row names every field");
    }
    return gpus;
}

int cal_gpu_count(void)
{
    return NGPUS;
}

/* The eng_gpu of a row: the datasheet's units turned into bytes, bytes/s and FLOP/s. A GB/s
 * bandwidth is divided by 1000 before the TB/s scale, so 2039 GB/s is the same double as the
 * 2.039 TB/s it states. */
static void gpu_of(const cal_gpu_sheet *s, eng_gpu *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", s->name);
    g->mem_bytes = (int64_t)(s->mem * GIB);
    g->mem_bw = (strcmp(s->bw_unit, "GB/s") == 0 ? s->bw / 1000 : s->bw) * TB;
    g->flops_bf16 = s->bf16 * TB;
    g->flops_fp8 = s->fp8 > 0 ? s->fp8 * TB : 0;
    g->flops_fp4 = s->fp4 > 0 ? s->fp4 * TB : 0;
    g->fp4_formats = s->fp4_formats;
    g->link_bw = s->link * GB;
    g->pcie_bw = s->pcie * GB;
    g->nic_bw = s->nic > 0 ? s->nic * GB : 0;
    cal_gpu_cost_of(s, g); /* price and power (price.c's power model) */
}

int cal_gpu_at(int i, eng_gpu *out)
{
    if (i < 0 || i >= NGPUS)
        return -1;
    gpu_of(&rows()[i], out);
    return 0;
}

const cal_gpu_sheet *cal_gpu_sheet_at(int i)
{
    return i >= 0 && i < NGPUS ? &rows()[i] : NULL;
}

/* The row named `name`, or NULL. */
static const cal_gpu_sheet *row_named(const char *name)
{
    const cal_gpu_sheet *all = rows();
    for (int i = 0; name && i < NGPUS; i++)
        if (strcmp(all[i].name, name) == 0)
            return &all[i];
    return NULL;
}

int cal_gpu_find(const char *name, eng_gpu *out)
{
    const cal_gpu_sheet *s = row_named(name);
    if (!s)
        return -1;
    gpu_of(s, out);
    return 0;
}

const char *cal_gpu_source(const char *name)
{
    const cal_gpu_sheet *s = row_named(name);
    return s ? s->source : NULL;
}

const char *cal_gpu_price_source(const char *name)
{
    const cal_gpu_sheet *s = row_named(name);
    return s ? s->price : NULL;
}

const char *cal_gpu_power_source(const char *name)
{
    const cal_gpu_sheet *s = row_named(name);
    return s ? s->power : NULL;
}

cal_arch cal_gpu_arch(const char *name)
{
    const cal_gpu_sheet *s = row_named(name);
    return s ? s->arch : CAL_ARCH_UNKNOWN;
}

cal_memory cal_gpu_memory(const char *name)
{
    const cal_gpu_sheet *s = row_named(name);
    return s ? s->memory : CAL_MEM_UNKNOWN;
}

/* MODEL: every efficiency of the roofline's kernel classes was measured on NVIDIA GPUs (Vidur's
 * A100 and A40 tables, FlashAttention's H100 figures, NVIDIA's collective latencies); none on
 * AMD's, whose kernels (hipBLASLt, CK and aiter attention, RCCL) differ. An AMD GPU is priced
 * from its datasheet with NVIDIA's efficiencies, and every output says so. */
const char *cal_gpu_extrapolated(const char *name)
{
    if (cal_gpu_arch(name) != CAL_ARCH_CDNA)
        return NULL;
    return "extrapolated: AMD Instinct is priced from its datasheet with kernel efficiencies "
           "measured on NVIDIA GPUs; no AMD operator measurement backs them";
}

/* desc contains `word` as a word: neither preceded nor followed by a letter or digit ("H20" is
 * not in "H200", "H200" not in "GH200"), so no row's word can match another GPU's name. */
static int has_word(const char *desc, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(desc, word); p; p = strstr(p + 1, word))
        if ((p == desc || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
            return 1;
    return 0;
}

const char *cal_gpu_from_device(const char *desc)
{
    /* a row with a qualifier ("H100" and "PCIe") before the rows without one ("H100") */
    const cal_gpu_sheet *all = rows();
    for (int qualified = 1; desc && qualified >= 0; qualified--)
        for (int i = 0; i < NGPUS; i++)
            if ((all[i].device[1] != NULL) == qualified && has_word(desc, all[i].device[0]) &&
                (!qualified || strstr(desc, all[i].device[1])))
                return all[i].name;
    return NULL;
}

int cal_model_count(void)
{
    return NMODELS;
}

int cal_model_at(int i, eng_model *out)
{
    char why[512];
    if (i < 0 || i >= NMODELS)
        return -1;
    /* the catalog's texts are checked by the tests: a failure here is a bug in this file */
    if (cal_model_named_from_text(models[i].name, models[i].config, out, why, sizeof why) != 0) {
        fprintf(stderr, "catalog model %s: %s\n", models[i].name, why);
        sim_assert_fail(NULL, __FILE__, __LINE__, "the catalog's config text reads");
    }
    return 0;
}

int cal_model_find(const char *name, eng_model *out)
{
    for (int i = 0; name && i < NMODELS; i++)
        if (strcmp(models[i].name, name) == 0)
            return cal_model_at(i, out);
    return -1;
}

const char *cal_model_config_text(int i)
{
    return i >= 0 && i < NMODELS ? models[i].config : NULL;
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
        used = append_name(buf, len, used, rows()[i].name);
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
