/*
 * store_sweep.h: sweeps in the results database.
 */
#ifndef LLMSIM_STORE_SWEEP_H
#define LLMSIM_STORE_SWEEP_H

#include <stdint.h>

#include "store.h"

/* Finds the sweep with this key or creates it; *id gets its id. 0, or -1 with err. */
int store_sweep_open(store *s, const char *key, const char *file, const char *scenario,
                     const char *varied, int reps, uint64_t base_seed, int64_t *id, sim_err *err);
/* Records the parameter values of a point (idempotent). 0, or -1 with err. */
int store_sweep_set_params(store *s, int64_t id, int point, int n, const char *const *keys,
                           const char *const *vals, sim_err *err);
/* 1 when (point, rep) is stored, 0 when not, -1 with err. */
int store_sweep_has(store *s, int64_t id, int point, int rep, sim_err *err);
/* Adds a point's row (inside the run's transaction). 0, or -1 with err. */
int store_sweep_add(store *s, int64_t id, int point, int rep, uint64_t seed, int64_t run_id,
                    const char *params, int saturated, sim_err *err);
/* Calls fn for each stored (point, rep) of the sweep with the value of metric name and the
 * point's saturation flag. 0, or -1 with err. */
int store_sweep_values(store *s, int64_t id, const char *name,
                       void (*fn)(void *arg, int point, int rep, double value, int saturated),
                       void *arg, sim_err *err);

/* A stored sweep as store_sweep_list reports it (strings valid during the call). */
typedef struct store_sweep_row {
    int64_t id;
    const char *key, *file, *varied;
    int reps;
    int64_t stored; /* its sweep_points rows */
} store_sweep_row;

/* Calls fn for every sweep in id order (fn returns 0 to go on). 0, or -1 with err. */
int store_sweep_list(store *s, int (*fn)(void *arg, const store_sweep_row *row), void *arg,
                     sim_err *err);

#endif
