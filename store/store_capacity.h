/*
 * store_capacity.h: capacity searches in the results database (tables capacity_searches,
 * capacity_probes, capacity_results; schema version 2).
 *
 * A search is the question (scenario, SLOs, target rate, the key whose values are compared and
 * the search's precision); its probes are the runs it made, in order: the per-replica rate
 * search, then the cluster check at the target rate; its results are one row per choice. A
 * probe's row is meant to be written inside its run's transaction (from the run writer's
 * commit hook, as sweep points are), so a probe and its run are stored together or not at all.
 */
#ifndef LLMSIM_STORE_CAPACITY_H
#define LLMSIM_STORE_CAPACITY_H

#include <stdint.h>

#include "store.h"

typedef struct store_capacity_info {
    const char *file;        /* the scenario file (may be NULL) */
    const char *scenario;    /* the scenario text, overrides applied */
    const char *slo;         /* the SLOs as given, e.g. "ttft_p99=1000ms,tpot_p99=50ms" */
    double target_rate;      /* requests/s the cluster must serve; 0 = none (NULL) */
    const char *compare_key; /* the scenario key whose values are compared; NULL = none */
    double precision;        /* relative precision of the rate search; 0 = not given (NULL) */
    uint64_t base_seed;
} store_capacity_info;

typedef enum store_capacity_phase {
    STORE_CAPACITY_SEARCH = 0, /* one replica, looking for the highest rate within the SLOs */
    STORE_CAPACITY_CLUSTER     /* the cluster at the target rate */
} store_capacity_phase;

typedef struct store_capacity_probe {
    int64_t seq;        /* order within the search, from 0 */
    const char *choice; /* compare_key's value tried; NULL = none (stored as '') */
    store_capacity_phase phase;
    double rate; /* requests/s offered */
    int replicas;
    int ok;         /* 1: met every SLO */
    int saturated;  /* 1: the queue was still growing at the end */
    int64_t run_id; /* the stored run; 0 = not stored (NULL) */
} store_capacity_probe;

typedef struct store_capacity_result {
    const char *choice;      /* NULL = none (stored as '') */
    double rate_per_replica; /* requests/s one replica sustains; 0 = none found (NULL) */
    int replicas;            /* replicas the target rate needs; 0 = not computed (NULL) */
    int gpus;                /* replicas x tensor parallel; 0 = not computed (NULL) */
} store_capacity_result;

/* Records a new search; *id gets its id. 0, or -1 with err. */
int store_capacity_open(store *s, const store_capacity_info *info, int64_t *id, sim_err *err);
/* Adds probe p of search `search` (no transaction of its own: inside a run's transaction it
 * lands with the run). 0, or -1 with err (also when (search, seq) is already stored). */
int store_capacity_add_probe(store *s, int64_t search, const store_capacity_probe *p, sim_err *err);
/* The latest search asked exactly as info asks (every field equal) that holds fewer than
 * `results` results (at least 1): one a killed process left unfinished. 1 with *id, 0 when
 * there is none, -1 with err. */
int store_capacity_resume(store *s, const store_capacity_info *info, int results, int64_t *id,
                          sim_err *err);
/* Probe `seq` of search `search` into *p (its choice copied into choice, len bytes; p->choice
 * points there). 1, 0 when there is no such probe, -1 with err. */
int store_capacity_probe_get(store *s, int64_t search, int64_t seq, store_capacity_probe *p,
                             char *choice, size_t len, sim_err *err);
/* Records (or replaces) the result for r->choice. 0, or -1 with err. */
int store_capacity_add_result(store *s, int64_t search, const store_capacity_result *r,
                              sim_err *err);

#endif
