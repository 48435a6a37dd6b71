/*
 * price.c: what a GPU of the catalog costs to run: a list price per GPU-hour and a power
 * model. One row per GPU of catalog.c, each field named, joined to the catalog by name.
 *
 * Prices change; each row says where its price comes from and when it was stated, and a
 * scenario overrides it with `price: {per_gpu_hour_usd}`. A GPU with no stated price has none
 * (CAL_NONE): a run on it reports no cost until the scenario gives one, never a guessed price.
 *
 * MODEL: power follows the linear utilisation model of Fan, Weber and Barroso ("Power
 * provisioning for a warehouse-sized computer", ISCA 2007): P = P_idle + (P_max - P_idle) x u,
 * u the fraction of time the GPU computes (a forward pass in flight). P_max is the board's
 * maximum power (TDP / TBP) from its datasheet. Idle: a GPU holding a CUDA context and a loaded
 * model sits at a fixed DVFS floor whatever its memory holds (Vadari, "The Model Parking Tax",
 * arXiv 2605.23918, 2026: H100, A100, L40S); no datasheet states that floor, so it is taken as
 * CAL_IDLE_FRACTION of P_max and said so in every run (power.idle_w overrides it). A memory-
 * bound decode step draws less than P_max: the model's energy is an upper bound at full load.
 */
#include <stdio.h>
#include <string.h>

#include "cal_int.h"
#include "catalog.h"

/* The idle floor as a fraction of the board's maximum power, where no measurement is given:
 * an approximation the run's notes state. */
#define CAL_IDLE_FRACTION 0.15

typedef struct cal_gpu_cost {
    const char *name;  /* a catalog GPU */
    double per_hour;   /* list price, USD per GPU-hour, or CAL_NONE */
    const char *price; /* where the price is stated and when */
    double max_w;      /* board power at full load (TDP / TBP), W, or CAL_NONE */
    const char *power; /* the datasheet stating it */
} cal_gpu_cost;

/* The prices: RunPod's on-demand rates per GPU as tabulated by deploybase.ai ("RunPod GPU
 * Pricing: 2026 Comprehensive Pricing Guide", data as of March 2026): one provider on one
 * date, so that rows compare with each other. GPUs it does not list have no price. */
#define RUNPOD "RunPod on-demand, deploybase.ai table, 2026-03"
static const cal_gpu_cost costs[] = {
    {.name = "h100-sxm",
     .per_hour = 4.76,
     .price = RUNPOD,
     .max_w = 700,
     .power = "NVIDIA H100 datasheet, SXM: max TDP up to 700 W"},
    {.name = "h100-pcie",
     .per_hour = 3.51,
     .price = RUNPOD,
     .max_w = 350,
     .power = "NVIDIA H100 datasheet, PCIe: max TDP 300-350 W"},
    {.name = "h200",
     .per_hour = 6.35,
     .price = RUNPOD,
     .max_w = 700,
     .power = "NVIDIA H200 datasheet, SXM: max TDP up to 700 W"},
    {.name = "a100-80gb",
     .per_hour = 2.45,
     .price = RUNPOD " (A100 SXM 80GB)",
     .max_w = 400,
     .power = "NVIDIA A100 datasheet, 80GB SXM: max TDP 400 W"},
    {.name = "a100-40gb",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 400,
     .power = "NVIDIA A100 datasheet, 40GB SXM: max TDP 400 W"},
    {.name = "l40s",
     .per_hour = 1.40,
     .price = RUNPOD,
     .max_w = 350,
     .power = "NVIDIA L40S datasheet: max power 350 W"},
    {.name = "l4",
     .per_hour = 0.78,
     .price = RUNPOD,
     .max_w = 72,
     .power = "NVIDIA L4 datasheet: max TDP 72 W"},
    {.name = "rtx-4090",
     .per_hour = 0.60,
     .price = RUNPOD,
     .max_w = 450,
     .power = "NVIDIA GeForce RTX 4090 specifications: total graphics power 450 W"},
    {.name = "b200",
     .per_hour = 10.57,
     .price = RUNPOD,
     .max_w = 1000,
     .power = "NVIDIA Blackwell technical brief, HGX B200: 1,000 W per GPU"},
    {.name = "b300",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1100,
     .power = "NVIDIA HGX B300: 1,100 W per GPU"},
    {.name = "gb200",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1200,
     .power = "NVIDIA GB200 NVL72: Blackwell GPU up to 1,200 W"},
    {.name = "gb300",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1400,
     .power = "NVIDIA GB300 NVL72: Blackwell Ultra GPU up to 1,400 W"},
    {.name = "h20",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 400,
     .power = "NVIDIA H20 specification: max TDP 400 W"},
    {.name = "h800",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 700,
     .power = "NVIDIA H800 SXM5: max TDP 700 W (as H100 SXM)"},
    {.name = "gh200",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = CAL_NONE,
     .power = "the GH200 superchip's 450-1,000 W module power includes its Grace CPU: no GPU "
              "figure"},
    {.name = "mi300x",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 750,
     .power = "AMD Instinct MI300X data sheet: TBP 750 W"},
    {.name = "mi325x",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1000,
     .power = "AMD Instinct MI325X data sheet: TBP 1,000 W"},
    {.name = "mi355x",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 1400,
     .power = "AMD Instinct MI355X data sheet: TBP 1,400 W"},
    {.name = "rtx-pro-6000",
     .per_hour = 1.57,
     .price = RUNPOD,
     .max_w = 600,
     .power = "NVIDIA RTX PRO 6000 Blackwell datasheet: max power 600 W"},
    {.name = "rtx-5090",
     .per_hour = 1.22,
     .price = RUNPOD,
     .max_w = 575,
     .power = "NVIDIA GeForce RTX 5090 specifications: total graphics power 575 W"},
    {.name = "a10g",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = CAL_NONE,
     .power = "no datasheet states the A10G's board power"},
    {.name = "l20",
     .per_hour = CAL_NONE,
     .price = "not listed",
     .max_w = 275,
     .power = "NVIDIA L20 specification: max power 275 W"},
};
#define NCOSTS ((int)(sizeof costs / sizeof costs[0]))

static const cal_gpu_cost *cost_named(const char *name)
{
    for (int i = 0; i < NCOSTS; i++)
        if (strcmp(costs[i].name, name) == 0)
            return &costs[i];
    return NULL;
}

int cal_gpu_cost_check(char *why, size_t len)
{
    for (int i = 0; i < NCOSTS; i++) {
        const cal_gpu_cost *c = &costs[i];
        int known = 0;
        for (int k = 0; k < cal_gpu_count() && !known; k++)
            known = strcmp(cal_gpu_sheet_at(k)->name, c->name) == 0;
        if (!known)
            return snprintf(why, len, "price.c: row %s names no catalog GPU", c->name), -1;
        if (!(c->per_hour > 0 || c->per_hour == CAL_NONE) || !c->price || !*c->price)
            return snprintf(why, len, "price.c: row %s: per_hour or price is missing", c->name), -1;
        if (!(c->max_w > 0 || c->max_w == CAL_NONE) || !c->power || !*c->power)
            return snprintf(why, len, "price.c: row %s: max_w or power is missing", c->name), -1;
        for (int j = 0; j < i; j++)
            if (strcmp(costs[j].name, c->name) == 0)
                return snprintf(why, len, "price.c: row %s twice", c->name), -1;
    }
    for (int i = 0; i < cal_gpu_count(); i++) {
        const cal_gpu_sheet *s = cal_gpu_sheet_at(i);
        if (!cost_named(s->name))
            return snprintf(why, len, "price.c: catalog GPU %s has no row", s->name), -1;
    }
    return 0;
}

void cal_gpu_cost_of(const char *name, eng_gpu *g)
{
    const cal_gpu_cost *c = cost_named(name);
    g->price_per_hour = c && c->per_hour > 0 ? c->per_hour : 0;
    g->max_w = c && c->max_w > 0 ? c->max_w : 0;
    g->idle_w = g->max_w * CAL_IDLE_FRACTION;
}

const char *cal_gpu_price_source(const char *name)
{
    const cal_gpu_cost *c = cost_named(name);
    return c ? c->price : NULL;
}

const char *cal_gpu_power_source(const char *name)
{
    const cal_gpu_cost *c = cost_named(name);
    return c ? c->power : NULL;
}

double cal_gpu_idle_fraction(void)
{
    return CAL_IDLE_FRACTION;
}
