/*
 * store_profile.h: fitted profiles in the results database (tables profiles, profile_points,
 * profile_fits), beside the runs they drive.
 *
 * A profile is saved in one transaction: its metadata row, every measured point with its
 * held-out flag, and one fit row per operator (form, coefficients, held-out errors). Loading
 * gives back a cal_profile equal to the one saved (created filled in by the database when the
 * profile had none).
 */
#ifndef LLMSIM_STORE_PROFILE_H
#define LLMSIM_STORE_PROFILE_H

#include <stdint.h>

#include "predictor.h"
#include "profile.h"
#include "store.h"

/* Saves p. When a profile of the same name exists: replace = 0 fails with err naming it;
 * replace = 1 deletes it first (points and fits too). Returns 0, or -1 with err (nothing
 * written). */
int store_profile_save(store *s, const cal_profile *p, int replace, sim_err *err);

/* Loads the profile named name. Returns it (free with cal_profile_free), or NULL with err: not
 * found (the message lists the profiles the database holds) or a database error. */
cal_profile *store_profile_load(store *s, const char *name, sim_err *err);

/* 1 when a profile named name exists, 0 when not, -1 with err on a database error. */
int store_profile_exists(store *s, const char *name, sim_err *err);

/* Calls fn(arg, meta) for each profile in name order with its metadata and fits but no points
 * (meta->npts is the number of points stored). Returns 0, or -1 with err. */
int store_profile_list(store *s, void (*fn)(void *arg, const cal_profile *meta), void *arg,
                       sim_err *err);

/* What `calibrate validate` needs of a stored run. */
typedef struct store_replay_run {
    char profile[128]; /* runs.profile: the predictor's label */
    char model[64];
    char dtype[8];
    int tensor_parallel;
    int64_t iterations; /* iterations stored for the run */
} store_replay_run;

/* Reads run `run_id`'s metadata into *info and min(max, its iterations) of its iterations'
 * shapes (max >= 1), evenly spaced over the run, into shapes (an array of max), with the stored
 * forward-pass time of each into gpu_ns (may be NULL). Sets *n to how many were read. Returns 0, or
 * -1 with err: no such run, a run stored without iterations (store level summary), or a database
 * error. */
int store_profile_replay_shapes(store *s, int64_t run_id, int max, store_replay_run *info,
                                eng_shape *shapes, int64_t *gpu_ns, int *n, sim_err *err);

#endif
