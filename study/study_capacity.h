/*
 * study_capacity.h: capacity search: the highest arrival rate one replica sustains within a set
 * of SLOs, and the replicas a target rate needs, with a verdict when there is none.
 *
 * For each choice (a named set of scenario overrides from --compare, or the scenario as it is):
 *  1. the unloaded case: one request at a time (a closed loop of one client). If it misses an
 *     SLO, or rejects more than the allowed fraction, no rate can meet them: the verdict is
 *     "unreachable" and the choice stops there. Its throughput is the unloaded capacity.
 *  2. the rate search: Poisson arrivals from the unloaded capacity, doubling until a rate fails,
 *     then bisection to `precision` (relative). The bisection never goes below the unloaded
 *     capacity: when that rate already fails, the verdict is "unreachable under load".
 *  3. with a target rate: the cluster at the target rate behind the scenario's router, from
 *     ceil(target / rate) replicas up, adding one until the SLOs are met, never past max_gpus.
 * A probe fails when it is saturated, when it rejected more than max_rejected of its requests,
 * or when an SLO's percentile is above its limit. Each percentile comes with its 95% interval
 * (batch means: the percentile of each tenth of the requests by arrival, pooled over the seeds
 * run); a probe whose interval holds a limit is run again with the next seed (the same seeds at
 * every rate, so probes are paired), up to max_seeds, then decided by the mean and marked
 * uncertain. Every probe is an ordinary run; with a store they are stored, tagged with the
 * search.
 */
#ifndef STUDY_CAPACITY_H
#define STUDY_CAPACITY_H

#include <stdint.h>

#include "study.h"

#define STUDY_MAX_SLO 8
#define STUDY_MAX_CHOICES 64
#define STUDY_CAPACITY_SEEDS 3 /* most seeds per probe unless max_seeds says */
#define STUDY_CHOICE_SETS 12   /* overrides one choice may carry (a cross product's, together) */

typedef struct study_slo {
    char metric[96]; /* the metric it bounds, e.g. p99_ttft_ms */
    char label[96];  /* as the user wrote its name, e.g. ttft_p99 */
    char what[8];    /* ttft, tpot, itl or e2el */
    double pct;      /* 50, 90, 95 or 99; -1 for the mean */
    double limit_ms;
} study_slo;

/* Parses a comma-separated list "ttft_p99=1000ms,tpot_p99=50ms" (metrics ttft, tpot, itl, e2el
 * or e2e; percentiles p50, p90, p95, p99; values in ms or s) into out[max]; *n gets the count.
 * `tps_per_user=N` (output tokens per second each user sees, at least N) bounds the mean TPOT
 * at 1000 / N ms. 0, or -1 with err naming the item at fault. */
int study_slo_parse(const char *list, study_slo *out, int max, int *n, sim_err *err);

/* A choice: what the user named it and the overrides it applies after the user's --set. */
typedef struct study_choice {
    char name[96];
    int nsets;
    char set[STUDY_CHOICE_SETS][160]; /* "key=value" */
} study_choice;

/* Adds one --compare argument to the choices (*n of them in out[max]). Two forms:
 *   KEY=V1,V2,...                  one choice per value, named by it (pd=P:D sets both pools'
 *                                  replicas; scheduler is short for scheduler.name);
 *   NAME: K=V,K=V; NAME2: K=V ...  named choices, each with several keys.
 * When *n > 0 already (a second --compare), the choices become the cross product, named
 * "A/B". 0, or -1 with err naming the part at fault. */
int study_choices_add(study_choice *out, int max, int *n, const char *arg, sim_err *err);
/* The choice's overrides as "k=v, k=v" into buf (len); returns buf. */
const char *study_choice_sets(const study_choice *c, char *buf, size_t len);

typedef struct study_trial {
    int ok;        /* met every SLO, rejected within the allowance and was not saturated */
    int saturated; /* some seed's run was */
    int uncertain; /* an SLO's interval still held its limit after max_seeds: decided by mean */
    int seeds;     /* runs behind it (seeds base, base + 1, ...) */
    double value[STUDY_MAX_SLO]; /* the percentiles achieved, per SLO (mean over the seeds) */
    double half[STUDY_MAX_SLO];  /* their 95% intervals' half-widths (NAN: unknown) */
    int64_t arrived, completed, rejected; /* over the seeds */
    int64_t rejected_by[ENG_REJECT_REASON_COUNT];
    double throughput; /* completed requests/s (mean over the seeds) */
    double output_tps; /* output tokens/s (mean over the seeds) */
    double mean_tpot;  /* ms (mean over the seeds) */
    int64_t run_id;    /* the first seed's run; 0 when not stored */
} study_trial;

/* "exceeds batch token limit: 2,123" (each reason that occurred, comma-separated) into buf;
 * returns buf. */
const char *study_trial_reasons(const study_trial *t, char *buf, size_t len);
/* "2,123 of 10,000 rejected (batch 2,123)" or "none rejected" into buf; returns buf. */
const char *study_trial_rejections(const study_trial *t, char *buf, size_t len);

typedef enum study_verdict {
    STUDY_FOUND = 0,        /* a rate within the SLOs (and, with a target, the replicas) */
    STUDY_UNREACHABLE,      /* the unloaded case misses an SLO or rejects too many */
    STUDY_UNREACHABLE_LOAD, /* met unloaded only: Poisson arrivals at its capacity miss */
    STUDY_OVER_BUDGET,      /* the target rate needs more GPUs than max_gpus */
    STUDY_NO_CLUSTER        /* no cluster tried met the SLOs at the target rate */
} study_verdict;

/* "found", "unreachable", "unreachable under load", "over budget", "no cluster". */
const char *study_verdict_name(study_verdict v);

typedef struct study_answer {
    study_verdict verdict;
    char why[320];        /* the verdict in words (empty when found) */
    study_trial unloaded; /* one request at a time */
    double unloaded_rate; /* its throughput: the unloaded capacity, requests/s */
    double rate;          /* highest rate per replica within the SLOs; 0 when none was */
    study_trial at_rate;
    int replicas; /* for the target rate; 0 when none up to the limit met it */
    int tp;       /* GPUs per replica (disaggregated: per copy of the pools) */
    study_trial at_target;
    /* disaggregated: a copy of the pools is `prefill` prefill replicas of prefill_gpus GPUs and
     * `decode` decode replicas of decode_gpus GPUs (0 for an aggregated scenario) */
    int prefill, decode, prefill_gpus, decode_gpus;
    /* USD per GPU-hour of the replica's GPUs (disaggregated: the prefill pool's) and of the
     * decode pool's (eng_fleet_gpu_price); 0: no price stated */
    double price, decode_price;
} study_answer;

/* What a capacity search or a recommendation minimises among the deployments that meet the
 * SLOs: GPUs (the default), or their cost per hour at each GPU's price (eng_fleet_gpu_price). */
typedef enum study_objective { STUDY_MIN_GPUS = 0, STUDY_MIN_COST } study_objective;

/* Parses "gpus" or "cost" into *out; -1 otherwise. */
int study_objective_parse(const char *s, study_objective *out);
/* USD per hour of n replicas (copies of the pools) of a's layout; NaN when a GPU of it has no
 * price. */
double study_answer_usd_h(const study_answer *a, int n);
/* a's GPUs for n replicas, or their USD per hour, as c->minimise measures cost. */
double study_answer_cost(const study_answer *a, int n, study_objective o);

typedef struct study_capacity {
    union {
        struct {
            STUDY_RUN_FIELDS /* the level: how much of each probe is stored */
        };
        study_run_settings run; /* the same fields, whole */
    };
    const char *text; /* the scenario's text when not read from file (file then names it) */
    study_slo slo[STUDY_MAX_SLO];
    int nslo;
    double target;       /* requests/s for the cluster; 0 = per-replica rate only */
    double precision;    /* relative width the bisection stops at */
    double max_rejected; /* fraction of requests a probe may reject and still pass (0) */
    int max_gpus;        /* most GPUs a cluster check may use; 0 = no cap */
    int max_seeds;       /* most seeds per probe; 0 = STUDY_CAPACITY_SEEDS */
    study_choice choice[STUDY_MAX_CHOICES];
    int ncmp;
    /* the layout a model that does not fit the scenario's is searched with (study_capacity_fit):
     * its overrides, after the user's and before a choice's (none: the scenario's fits), and
     * what it is in words */
    study_choice fit;
    char fit_note[448];
    char compare[512];    /* the --compare arguments, "; "-joined (for the store) */
    store *db;            /* profiles come from here, and probes are stored here (may be NULL) */
    int64_t search_id;    /* set by study_capacity_begin when db is given */
    int64_t probes;       /* probes run so far (their order in the search) */
    int64_t runs;         /* runs made (a probe makes one per seed) */
    uint64_t check_every; /* debug builds: the engine's walkers after every n-th event (0 = 1) */
    int resumed;          /* 1: search_id is a search a killed process left unfinished, taken up */
    study_objective minimise; /* the cheapest split (pd search) in GPUs or in USD per hour */
    /* told of each probe as it finishes (may be NULL); phase is "unloaded", "search" (one
     * replica) or "cluster" (the target rate over `replicas`) */
    void (*probe)(void *arg, const char *choice, const char *phase, double rate, int replicas,
                  const study_trial *t);
    /* told before a cluster check starts (may be NULL): its replicas, GPUs and requests */
    void (*cluster)(void *arg, const char *choice, double rate, int replicas, int gpus,
                    int64_t requests);
    void *probe_arg;
} study_capacity;

/* Parses one --compare argument into c's choices (study_choices_add); the text is kept for the
 * store. 0, or -1 with err. */
int study_capacity_compare(study_capacity *c, const char *arg, sim_err *err);
void study_capacity_free(study_capacity *c);

/* Where the scenario's model does not fit its layout (the weights do not fit the GPUs of a
 * replica), the first of recommend's layouts past one node that fits (study_rec_pipelines:
 * pipeline stages of one node each, tensor parallel 8 in each) becomes c->fit, said in words in
 * c->fit_note; nothing when the scenario fits. 0, or -1 with err: the scenario's own error when
 * it fails for another reason or no pipeline fits either. */
int study_capacity_fit(study_capacity *c, sim_err *err);
/* The scenario the search starts from (overrides applied), for its name and settings. */
int study_capacity_load(const study_capacity *c, scn_scenario *scn, sim_err *err);
/* The same with choice i's overrides after the user's. */
int study_capacity_load_choice(const study_capacity *c, int i, scn_scenario *scn, sim_err *err);

/* With c->minimise == STUDY_MIN_COST: 0 when every choice's GPUs (each pool's) have a price,
 * else -1 with err naming the GPU and the choice (a cost is never guessed). 0 otherwise. */
int study_capacity_priced(const study_capacity *c, sim_err *err);

/* Records the search in c->db (when given): c->search_id; its SLO text is slo_text followed by
 * the settings that judge a probe (" | --max-rejected F --max-gpus N --seeds N"). A search
 * asked exactly so (same scenario text, SLO text so extended, target, compared choices,
 * precision and seed) that holds fewer results than this one will is resumed instead (c->resumed):
 * a killed search's stored probes are read back in order, not run again, and the search goes on
 * from where it stopped. 0, or -1 with err. */
int study_capacity_begin(study_capacity *c, const scn_scenario *scn, const char *slo_text,
                         sim_err *err);

/* Finds the answer for choice i (0 <= i < ncmp), or for the scenario as it is when ncmp == 0
 * (i = 0). A disaggregated scenario's "replica" is one copy of its pools (prefill.replicas and
 * decode.replicas, or P:D from --compare pd=P:D,...). An unreachable SLO or a cluster over the
 * GPU cap is an answer (a->verdict), not an error. 0, or -1 with err. */
int study_capacity_find(study_capacity *c, int i, study_answer *a, sim_err *err);

/* Most replicas per pool the prefill:decode search tries. */
#define STUDY_PD_MAX 64

/* The prefill:decode search of a disaggregated scenario at c->target: for 1, 2, ... prefill
 * replicas, the fewest decode replicas that meet the SLOs at the target rate (each a simulated
 * cluster; doubling from 1, then bisection; a prefill count whose misses doubling the decode
 * pool no longer improves by 5% gets none), stopping once more prefill replicas cannot be cheaper
 * in GPUs (in USD per hour with c->minimise == STUDY_MIN_COST), or would pass max_gpus. out[max]
 * gets one answer per prefill count that has one (*n of them; prefill, decode, tp = GPUs,
 * at_target), *best the index of the cheapest (fewest GPUs, or lowest USD per hour; -1: none
 * met the SLOs). 0, or -1 with err. */
int study_capacity_pd_search(study_capacity *c, study_answer *out, int max, int *n, int *best,
                             sim_err *err);

/* ---- probes (study/probe.c), shared with recommend ---- */

/* What a probe runs: the choice's overrides after the user's, then the load. */
typedef enum study_load_kind {
    STUDY_LOAD_UNLOADED = 0, /* a closed loop of one client: one request at a time */
    STUDY_LOAD_RATE          /* Poisson (or the scenario's process) at `rate` requests/s */
} study_load_kind;

/* Runs choice `ci` (-1: none; pool: exactly pool[0] prefill and pool[1] decode replicas of a
 * disaggregated scenario, else `replicas` copies) under the given load, seed after seed until
 * it is decided (see the top of this file), and judges it into *t. phase names it for the
 * store and the probe callback. 0, or -1 with err. */
int study_capacity_probe(study_capacity *c, int ci, const char *phase, study_load_kind load,
                         double rate, int replicas, const int *pool, study_trial *t, sim_err *err);

/* v with thousands separators and three significant digits below 100 ("1,004", "46.2",
 * "0.046"); "n/a" for NaN. Returns buf. */
const char *study_fmt_num(double v, char *buf, size_t len);
/* SLO s's statistic in words ("p99 TTFT", "mean TPOT") into buf; returns buf. */
const char *study_slo_name(const study_slo *s, char *buf, size_t len);

/* "p99 TTFT 1,004 ms" of SLO i in t into buf, with "± h" when its interval is known. */
const char *study_trial_value(const study_capacity *c, const study_trial *t, int i, char *buf,
                              size_t len);

#endif
