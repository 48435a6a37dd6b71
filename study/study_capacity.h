/*
 * study_capacity.h: capacity search: the highest arrival rate one replica sustains within a set
 * of SLOs, and the replicas a target rate needs.
 *
 * For each choice (a value of the compared key, or the scenario as it is), runs at doubling
 * rates from 0.25 req/s until one fails, then bisects to `precision` (relative); a saturated run
 * fails whatever its percentiles. With a target rate, it then simulates the whole cluster at the
 * target rate behind the scenario's router, from ceil(target / rate) replicas up, adding one
 * until the SLOs are met. Every probe is an ordinary run; with a store they are stored, tagged
 * with the search.
 */
#ifndef STUDY_CAPACITY_H
#define STUDY_CAPACITY_H

#include <stdint.h>

#include "study.h"

#define STUDY_MAX_SLO 8
#define STUDY_MAX_CHOICES 16

typedef struct study_slo {
    char metric[96]; /* the metric it bounds, e.g. p99_ttft_ms */
    char label[96];  /* as the user wrote its name, e.g. ttft_p99 */
    double limit_ms;
} study_slo;

/* Parses a comma-separated list "ttft_p99=1000ms,tpot_p99=50ms" (metrics ttft, tpot, itl, e2el
 * or e2e; percentiles p50, p90, p95, p99; values in ms or s) into out[max]; *n gets the count.
 * 0, or -1 with err naming the item at fault. */
int study_slo_parse(const char *list, study_slo *out, int max, int *n, sim_err *err);

typedef struct study_trial {
    int ok; /* met every SLO and was not saturated */
    int saturated;
    double value[STUDY_MAX_SLO]; /* the percentiles achieved, per SLO */
    int64_t run_id;              /* 0 when not stored */
} study_trial;

typedef struct study_answer {
    double rate; /* highest rate per replica within the SLOs; 0 when none was */
    study_trial at_rate;
    int replicas; /* for the target rate; 0 when none up to the limit met it */
    int tp;       /* GPUs per replica (disaggregated: per copy of the pools) */
    study_trial at_target;
    /* disaggregated: a copy of the pools is `prefill` prefill replicas of prefill_gpus GPUs and
     * `decode` decode replicas of decode_gpus GPUs (0 for an aggregated scenario) */
    int prefill, decode, prefill_gpus, decode_gpus;
} study_answer;

typedef struct study_capacity {
    const char *file;
    const char *const *sets;
    int nsets;
    study_slo slo[STUDY_MAX_SLO];
    int nslo;
    double target;    /* requests/s for the cluster; 0 = per-replica rate only */
    double precision; /* relative width the bisection stops at */
    char cmp_key[128];
    char *cmp_val[STUDY_MAX_CHOICES];
    int ncmp;
    int seed_given;
    uint64_t seed;
    store *db;         /* profiles come from here, and probes are stored here (may be NULL) */
    store_level level; /* how much of each probe is stored */
    int64_t search_id; /* set by study_capacity_begin when db is given */
    int64_t probes;    /* probes run so far (their order in the search) */
    int resumed;       /* 1: search_id is a search a killed process left unfinished, taken up */
    /* told of each probe as it finishes (may be NULL); phase is "search" (one replica) or
     * "cluster" (the target rate over `replicas`) */
    void (*probe)(void *arg, const char *choice, const char *phase, double rate, int replicas,
                  const study_trial *t);
    void *probe_arg;
} study_capacity;

/* Parses "--compare KEY=V1,V2,...". "scheduler" is short for scheduler.name. 0, or -1 with
 * err. Values are freed by study_capacity_free. */
int study_capacity_compare(study_capacity *c, const char *arg, sim_err *err);
void study_capacity_free(study_capacity *c);

/* The scenario the search starts from (overrides applied), for its name and settings. */
int study_capacity_load(const study_capacity *c, scn_scenario *scn, sim_err *err);

/* Records the search in c->db (when given): c->search_id. A search asked exactly so (same
 * scenario text, SLOs, target, compared values' key, precision and seed) that holds fewer
 * results than this one will is resumed instead (c->resumed): a killed search's stored probes
 * are read back in order, not run again, and the search goes on from where it stopped. 0, or -1
 * with err. */
int study_capacity_begin(study_capacity *c, const scn_scenario *scn, const char *slo_text,
                         sim_err *err);

/* Finds the answer for choice i (0 <= i < ncmp), or for the scenario as it is when ncmp == 0
 * (i = 0). A disaggregated scenario's "replica" is one copy of its pools (prefill.replicas and
 * decode.replicas, or P:D from --compare pd=P:D,...). 0, or -1 with err. */
int study_capacity_find(study_capacity *c, int i, study_answer *a, sim_err *err);

/* Most replicas per pool the prefill:decode search tries. */
#define STUDY_PD_MAX 64

/* The prefill:decode search of a disaggregated scenario at c->target: for 1, 2, ... prefill
 * replicas, the fewest decode replicas that meet the SLOs at the target rate (each a simulated
 * cluster; doubling from 1, then bisection; a prefill count whose misses doubling the decode
 * pool no longer improves by 5% gets none), stopping once more prefill replicas cannot be cheaper
 * in GPUs. out[max] gets one answer per prefill count that has one (*n of them; prefill, decode, tp
 * = GPUs, at_target), *best the index of the one with the fewest GPUs (-1: none met the SLOs). 0,
 * or -1 with err. */
int study_capacity_pd_search(study_capacity *c, study_answer *out, int max, int *n, int *best,
                             sim_err *err);

#endif
