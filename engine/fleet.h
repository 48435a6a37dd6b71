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
} eng_autoscale_cfg;

/* What a deployment's GPUs cost to run, where the scenario overrides the catalog (0: the
 * catalog's figure, for every pool's GPU), and how its replicas follow the load. */
typedef struct eng_fleet_cfg {
    double price_per_hour; /* price: {per_gpu_hour_usd} */
    double idle_w, max_w;  /* power: {idle_w, max_w} */
    int idle_given;        /* idle_w was given (it may be 0) */
    eng_autoscale_cfg autoscale;
    /* admission: {queue_depth, kv_utilisation}: the router sheds an arriving request when every
     * ready replica has at least queue_depth requests waiting or that KV usage (fleet.c) */
    double shed_queue, shed_kv; /* 0: not given */
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
/* autoscale:, relative to eng_autoscale_cfg. */
extern const eng_key eng_autoscale_keys[];

/* The defaults of the tables above; autoscaling off. */
void eng_fleet_defaults(eng_fleet_cfg *f);

/* One window of an autoscaled run's fleet timeline: the autoscaler's evaluation intervals
 * ([k x interval_s, (k + 1) x interval_s)), clipped to the summary's duration (first arrival to
 * last finish), so that the replica time of every window summed, times the GPUs of a replica,
 * is the run's GPU-seconds to the bit (gpu_hours x 3600). Requests are counted in the window of
 * their own event: an arrival when it arrives, a TTFT when its first token comes out (as vLLM's
 * time_to_first_token histogram observes it), a finish or a rejection when it happens; an event
 * after the last finish (a late rejection) counts in the last window. */
typedef struct eng_fleet_window {
    int64_t start_ns, end_ns;                     /* the window */
    int64_t serving_ns, starting_ns, draining_ns; /* replica time in each state */
    int64_t arrivals, completed, good, rejected;  /* good: completed within every SLO */
    int64_t ttft_count;                           /* first tokens in the window */
    double p99_ttft_ms;                           /* of those; NaN when none */
} eng_fleet_window;

/* The cold start of a replica whose GPUs each hold weight_bytes: seconds (autoscale.c). */
double eng_autoscale_cold_start_s(const eng_autoscale_cfg *a, int64_t weight_bytes);

#endif
