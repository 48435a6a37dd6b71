/*
 * price.c: what a GPU of the catalog costs to run: its row's list price per GPU-hour and board
 * power (catalog.c, each with its source), and the power model.
 *
 * A GPU with no stated price has none (CAL_NONE): a run on it reports no cost until the
 * scenario gives one (`price: {per_gpu_hour_usd}`), never a guessed price.
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

#include "cal_int.h"
#include "catalog.h"

/* The idle floor as a fraction of the board's maximum power, where no measurement is given:
 * an approximation the run's notes state. */
#define CAL_IDLE_FRACTION 0.15

void cal_gpu_cost_of(const cal_gpu_sheet *s, eng_gpu *g)
{
    g->price_per_hour = s->per_hour > 0 ? s->per_hour : 0;
    g->max_w = s->max_w > 0 ? s->max_w : 0;
    g->idle_w = g->max_w * CAL_IDLE_FRACTION;
}

double cal_gpu_idle_fraction(void)
{
    return CAL_IDLE_FRACTION;
}
