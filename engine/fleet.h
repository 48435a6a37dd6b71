/*
 * fleet.h: a deployment as a fleet that costs money and energy while it serves: the settings
 * that override its GPUs' catalog price and power, and the fleet's summary (GPU-hours, cost,
 * energy), which the engine's summary carries after the latency metrics.
 *
 * GPU-hours: every GPU of every replica from the run's first arrival to its last finish (the
 * summary's duration). Cost: each pool's GPU-hours times its GPU's price per GPU-hour. Energy:
 * each GPU draws its idle power throughout and, while its replica's forward pass runs, the rest
 * of its board power up to its maximum (fleet.c cites the model).
 */
#ifndef ENG_FLEET_H
#define ENG_FLEET_H

#include "keys.h"

/* What a deployment's GPUs cost to run, where the scenario overrides the catalog (0: the
 * catalog's figure, for every pool's GPU). */
typedef struct eng_fleet_cfg {
    double price_per_hour; /* price: {per_gpu_hour_usd} */
    double idle_w, max_w;  /* power: {idle_w, max_w} */
    int idle_given;        /* idle_w was given (it may be 0) */
} eng_fleet_cfg;

/* Settings tables (keys.h) of price: and power:, relative to eng_fleet_cfg. */
extern const eng_key eng_price_keys[];
extern const eng_key eng_power_keys[];

#endif
