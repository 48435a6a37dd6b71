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

/* What an autoscaler watches: requests waiting on the ready replicas (vLLM's
 * vllm:num_requests_waiting), requests on them running or waiting, their KV usage summed (each
 * replica 0..1, vllm:gpu_cache_usage_perc), or the arrival rate over the last interval. */
typedef enum eng_as_metric {
    ENG_AS_QUEUE = 0,
    ENG_AS_CONCURRENCY,
    ENG_AS_KV,
    ENG_AS_RATE,
    ENG_AS_TTFT_P90, /* named by the users; refused: not modelled yet */
    ENG_AS_METRIC_COUNT
} eng_as_metric;

/* One of the HPA's scaling policies (behavior.scaleUp.policies): at most `value` pods, or
 * `value` percent of the replicas at the period's start, added (or removed) per period_s. */
enum { ENG_AS_PODS = 0, ENG_AS_PERCENT };
/* Which of the policies limits: the one allowing the most change, the least, or none at all. */
enum { ENG_AS_SELECT_MAX = 0, ENG_AS_SELECT_MIN, ENG_AS_SELECT_DISABLED };
#define ENG_AS_MAX_POLICIES 8
typedef struct eng_as_policy {
    int type;        /* ENG_AS_PODS or ENG_AS_PERCENT */
    double value;    /* pods, or percent */
    double period_s; /* the window the change is counted over */
} eng_as_policy;

/* The rate rules of one direction (behavior.scale_up or scale_down); no policy: no limit. */
typedef struct eng_as_rules {
    eng_as_policy p[ENG_AS_MAX_POLICIES];
    int32_t n;
    int select; /* ENG_AS_SELECT_* */
} eng_as_rules;

typedef struct eng_as_behavior {
    eng_as_rules up, down;
} eng_as_behavior;

/* Horizontal autoscaling of an aggregated deployment's replicas, as Kubernetes' HPA (and KEDA
 * feeding it) scales a model server's pods (autoscale.c). enabled: the autoscale: map is
 * present. */
typedef struct eng_autoscale_cfg {
    int enabled;
    int metric;                         /* eng_as_metric */
    double target;                      /* the metric's value per ready replica */
    int32_t min_replicas, max_replicas; /* bounds (the deployment's replicas: the start) */
    double interval_s;                  /* between two evaluations (HPA's sync period) */
    double up_window_s, down_window_s;  /* stabilisation windows */
    double tolerance;                   /* no change while |value / target - 1| <= this */
    /* a new replica's cold start: engine start, its GPUs' weights at the storage bandwidth,
     * CUDA-graph capture */
    double startup_s, load_gb_s, graph_capture_s;
    eng_as_behavior behavior; /* the HPA's rate policies (none: a change is taken at once) */
    /* a prefill or decode pool's (prefill.autoscale, decode.autoscale), scaled as Dynamo's
     * load-based planner scales it (autoscale.c): the metric's average over the adjustment
     * interval (interval_s) from samples every sample_s against two thresholds */
    int planner; /* a pool's (the thresholds below); 0: the HPA's (target) */
    double up_threshold, down_threshold;
    double sample_s;
    double kv_per_waiting;   /* kv_utilisation: added per request waiting on a replica */
    int32_t grace_intervals; /* adjustments after a scale-up with no scale-down */
    int32_t trend_intervals; /* a scale-up only if the trend stays above the threshold so long */
    int32_t max_gpus;        /* the GPU budget of both pools together (0: none) */
} eng_autoscale_cfg;

/* A fault injected into one replica (fault.c): a crash (its requests dropped, a replacement
 * after the cold start), a slowdown of its steps by `factor` for duration_s, or its link down
 * (refused: not modelled yet). */
typedef enum eng_fault_kind {
    ENG_FAULT_CRASH = 0,
    ENG_FAULT_SLOW,
    ENG_FAULT_LINK_DOWN
} eng_fault_kind;

#define ENG_MAX_FAULTS 32
typedef struct eng_fault {
    double at_s;       /* when, from the simulation's start */
    int32_t replica;   /* which: its index in the deployment, 0 .. replicas - 1 (or max_replicas) */
    int kind;          /* eng_fault_kind */
    double duration_s; /* slow: how long; crash: before the replacement's cold start begins */
    double factor;     /* slow: step times multiplied by this */
} eng_fault;

/* The faults of a run and what a crash does to the requests it drops. */
typedef struct eng_faults_cfg {
    eng_fault f[ENG_MAX_FAULTS];
    int32_t n;
    int retry;            /* fault_retries.enabled: dropped requests re-enter the router */
    int32_t max_attempts; /* attempts a request gets, the first included */
} eng_faults_cfg;

/* What a deployment's GPUs cost to run, where the scenario overrides the catalog (0: the
 * catalog's figure, for every pool's GPU), and how its replicas follow the load. */
typedef struct eng_fleet_cfg {
    double price_per_hour; /* price: {per_gpu_hour_usd} */
    double idle_w, max_w;  /* power: {idle_w, max_w} */
    int idle_given;        /* idle_w was given (it may be 0) */
    eng_autoscale_cfg autoscale;
    /* a disaggregated deployment's: each pool's own (ENG_POOL_PREFILL, ENG_POOL_DECODE) */
    eng_autoscale_cfg pool_autoscale[2];
    /* admission: {queue_depth, kv_utilisation}: the router sheds an arriving request when every
     * ready replica has at least queue_depth requests waiting or that KV usage (fleet.c) */
    double shed_queue, shed_kv; /* 0: not given */
    eng_faults_cfg faults;      /* faults: and fault_retries: (fault.c) */
} eng_fleet_cfg;

/* Whether the admission: map is given. */
static inline int eng_admission_on(const eng_fleet_cfg *f)
{
    return f->shed_queue > 0 || f->shed_kv > 0;
}

/* Settings tables (keys.h) of price: and power:, relative to eng_fleet_cfg. */
extern const eng_key eng_price_keys[];
extern const eng_key eng_power_keys[];
/* admission:, relative to eng_fleet_cfg. */
extern const eng_key eng_admission_keys[];
/* autoscale:, relative to eng_autoscale_cfg; a scaling policy of autoscale.behavior.scale_up
 * or scale_down's policies list, relative to eng_as_policy. */
extern const eng_key eng_autoscale_keys[];
extern const eng_key eng_as_policy_keys[];
/* prefill.autoscale and decode.autoscale, relative to eng_autoscale_cfg; the defaults that
 * differ by pool (metric, thresholds, grace and trend) are eng_fleet_defaults'. */
extern const eng_key eng_pool_autoscale_keys[];

/* A fault of faults: (relative to eng_fault) and fault_retries: (relative to eng_faults_cfg). */
extern const eng_key eng_fault_keys[];
extern const eng_key eng_fault_retry_keys[];

/* The defaults of the tables above; autoscaling off (each pool's too, with the planner's
 * defaults of its pool). */
void eng_fleet_defaults(eng_fleet_cfg *f);

/* Pools a fleet timeline tells apart: an aggregated deployment's one, or a disaggregated one's
 * prefill and decode pools. */
#define ENG_FLEET_POOLS 2

/* One window of an autoscaled run's fleet timeline: the autoscaler's evaluation intervals
 * ([k x interval_s, (k + 1) x interval_s)), clipped to the summary's duration (first arrival to
 * last finish), so that the GPU time of every window summed (gpu_ns: each pool's replica time
 * times the GPUs of its replicas) is the run's GPU-seconds to the bit (gpu_hours x 3600).
 * Requests are counted in the window of their own event: an arrival when it arrives, a TTFT
 * when its first token comes out (as vLLM's time_to_first_token histogram observes it), a
 * finish or a rejection when it happens; an event after the last finish (a late rejection)
 * counts in the last window. */
typedef struct eng_fleet_window {
    int64_t start_ns, end_ns;                     /* the window */
    int64_t serving_ns, starting_ns, draining_ns; /* replica time in each state, every pool */
    int64_t gpu_ns;                               /* GPU time, every pool */
    /* each pool's replica time in each state (ENG_FLEET_READY, _STARTING, _DRAINING order:
     * serving, starting, draining): pool 0 alone when aggregated */
    int64_t pool_ns[ENG_FLEET_POOLS][3];
    int64_t arrivals, completed, good, rejected; /* good: completed within every SLO */
    int64_t ttft_count;                          /* first tokens in the window */
    double p99_ttft_ms;                          /* of those; NaN when none */
} eng_fleet_window;

/* What the pools of a timeline are: how many (1, or 2 for prefill and decode), and the GPUs of
 * one replica of each. */
typedef struct eng_fleet_pools {
    int32_t n;
    int64_t gpus[ENG_FLEET_POOLS];
} eng_fleet_pools;

/* The cold start of a replica whose GPUs each hold weight_bytes: seconds (autoscale.c). */
double eng_autoscale_cold_start_s(const eng_autoscale_cfg *a, int64_t weight_bytes);

#endif
