/*
 * metrics.h: per-run summary metrics, named as vLLM's serving benchmark names them.
 *
 * The engine feeds finished requests, inter-token gaps and iteration CPU times in; the summary
 * is a fixed, ordered list of (name, value) pairs, the same for the printed table, --json and the
 * `metrics` table. Definitions: TTFT = first token - arrival; TPOT = (finish - first token) /
 * (output - 1) over requests with output > 1; ITL = gaps between consecutive tokens of one
 * request; E2EL = finish - arrival; waiting = first scheduled - arrival; sched_overhead = CPU
 * time per iteration; prefix_hit_rate = prompt tokens found in the prefix cache at their
 * request's first admission / prompt tokens (completed requests; 0 without a prefix cache).
 * Throughputs are per second of simulated time from the first arrival to the last finish.
 *
 * After those, the keys vLLM's benchmark (vllm/benchmarks/serve.py, calculate_metrics) adds:
 * failed (requests not completed: the rejected ones, as a server's refusal is a failed request
 * there), std_ttft_ms, std_tpot_ms, std_itl_ms, std_e2el_ms (numpy.std, ddof = 0),
 * max_output_tokens_per_s (the most output tokens in one 1-second bucket counted from the first
 * arrival; a token counts when the iteration that computes it ends) and max_concurrent_requests
 * (the most requests in the system at once, arrival to finish, half-open: a finish at the
 * instant of an arrival comes first).
 *
 * Then the fleet's (fleet.h): gpu_hours (every GPU of the deployment over the duration),
 * energy_kwh and joules_per_output_token (idle power throughout plus the rest of the board's
 * power while a forward pass runs), cost_usd (GPU-hours x price per GPU-hour), and
 * cost_per_mtok_usd and cost_per_output_mtok_usd (cost_usd x 10^6 / (input + output) tokens,
 * / output tokens); cost and energy are NaN (null in JSON) for a GPU without a price or a
 * power figure.
 *
 * A disaggregated run (prefill and decode pools) adds, after those: prefill_gpus, decode_gpus,
 * prefill_utilization and decode_utilization (the pool's iteration time summed over its
 * replicas / (replicas x duration)), kv_transfers, kv_transfers_held (those the decode replica
 * could not take at a step for want of blocks or a seat), kv_transfer_bytes (all of them),
 * kv_transfer_bytes_per_request, then the distributions kv_transfer_ms (prefill end, or the
 * decode-side reservation when later, to the KV's arrival) and kv_wait_ms (from asking for
 * decode-side KV to having it: the decode replica's next step, and longer when held; asked
 * after the prefill, or, layer-wise, on arrival, before the prefill may start).
 */
#ifndef ENG_METRICS_H
#define ENG_METRICS_H

#include <stdint.h>

#include "sim.h"
#include "stats.h"
#include "request.h"

/* Request classes (workload.classes): each arrival is of one class, drawn with probability
 * share; the class's priority is what its client sends the engine (vLLM serves smaller values
 * first, SGLang larger ones unless told otherwise); sheddable classes are those the router's
 * admission control may shed (fleet.c); its SLO (0: the run's) decides its goodput. */
#define ENG_MAX_CLASSES 8
#define ENG_CLASS_NAME 17
typedef struct eng_class_slo {
    double ttft_ms, tpot_ms, e2e_ms; /* 0: the run's slo */
} eng_class_slo;

typedef struct eng_class {
    char name[ENG_CLASS_NAME];
    double share;
    int32_t priority;
    int sheddable;
    eng_class_slo slo;
} eng_class;

typedef struct eng_classes {
    int32_t n; /* 0: no classes */
    eng_class c[ENG_MAX_CLASSES];
} eng_classes;

/* One class's share of the summary. */
typedef struct eng_class_metrics {
    sim_samples ttft, tpot, e2el;
    int64_t completed, rejected, good;
} eng_class_metrics;

typedef struct eng_metrics {
    sim_samples ttft, tpot, itl, e2el, waiting, sched;
    int64_t completed, rejected, prompt_tokens, output_tokens;
    int64_t t_first_arrival, t_last_finish;
    double slo_ttft_ms, slo_tpot_ms, slo_e2e_ms; /* 0 = none; goodput counts requests meeting all */
    int64_t good;
    /* output tokens per 1-second bucket of simulated time since the first arrival, for the
     * buckets from tok_base on (earlier ones are final and folded into tok_peak): a window as
     * long as the furthest iteration end ahead of the clock, not the run */
    int64_t *tok_win;
    int64_t tok_cap, tok_base, tok_peak;
    int64_t max_concurrent; /* most requests in the system at once (not counting rejected) */
    /* prefix caching: prompt tokens of completed requests, and those found cached at their
     * first admission; cached blocks evicted (set by the engine before the summary) */
    int64_t prefix_hit_tokens, prefix_evictions;
    /* disaggregated prefill/decode (pd = 1: the summary gains its metrics): per transfer, the
     * time the KV took after the prefill and the time it waited for decode-side KV; per pool
     * (set by the engine before the summary) its GPUs and its replicas' iteration time summed */
    int pd;
    sim_samples xfer, xfer_wait;
    int64_t transfers, transfers_held;
    double xfer_bytes;
    int64_t pool_busy_ns[2];                /* prefill, decode: summed over their groups */
    int32_t pool_gpus[2], pool_replicas[2]; /* GPUs (every replica's) and replicas */
    /* the fleet (set by the engine before the summary, fleet.c): GPU-seconds, cost in USD
     * (NaN when a GPU has no price), energy in J (NaN when a GPU has no power figure) */
    double fleet_gpu_s, fleet_cost_usd, fleet_energy_j;
    /* request classes (eng_metrics_classes): their settings and their metrics */
    const eng_classes *classes;
    eng_class_metrics *cls;
} eng_metrics;

void eng_metrics_init(eng_metrics *m);
/* The summary's duration: seconds from the first arrival to the last finish (0 before any
 * request completed). */
double eng_metrics_duration(const eng_metrics *m);
void eng_metrics_free(eng_metrics *m);
/* Keeps metrics per class of cl (borrowed: it must outlive m) from now on. */
void eng_metrics_classes(eng_metrics *m, const eng_classes *cl);
void eng_metrics_request(eng_metrics *m, const eng_request *rq);
/* 1 when rq (finished) met every SLO of m (goodput counts it), 0 otherwise (rejected too). */
int eng_metrics_good(const eng_metrics *m, const eng_request *rq);
/* count inter-token gaps of gap_ns. Inline: every decode step adds its members' gap. */
static inline void eng_metrics_itl(eng_metrics *m, int64_t gap_ns, int64_t count)
{
    sim_samples_add_n(&m->itl, (double)gap_ns / 1e6, (size_t)count);
}
/* count iterations, each with cpu_ns of CPU time */
void eng_metrics_iteration_cpu(eng_metrics *m, int64_t cpu_ns, int64_t count);
/* The same, the count iterations recorded one by one (to the bit as count calls with 1). */
void eng_metrics_iterations_cpu_each(eng_metrics *m, int64_t cpu_ns, int64_t count);
/* count output tokens come out at end_ns after the first arrival (max_output_tokens_per_s),
 * recorded at now_ns (<= end_ns) after it: no later record ends before now_ns. */
void eng_metrics_tokens_put(eng_metrics *m, int64_t now_ns, int64_t end_ns, int64_t count);
/* Inline: a count whose bucket the window holds, recorded while the window starts at now_ns's
 * bucket, is added here; anything else by eng_metrics_tokens_put (which moves the window). */
static inline void eng_metrics_tokens(eng_metrics *m, int64_t now_ns, int64_t end_ns, int64_t count)
{
    if (count <= 0 || end_ns < 0)
        return;
    int64_t b = end_ns / 1000000000 - m->tok_base;
    if (now_ns / 1000000000 <= m->tok_base && b < m->tok_cap) {
        m->tok_win[b] += count;
        return;
    }
    eng_metrics_tokens_put(m, now_ns, end_ns, count);
}
/* n requests are in the system now, a request having just joined (max_concurrent_requests) */
void eng_metrics_concurrency(eng_metrics *m, int64_t n);
/* A KV transfer of `bytes` arrived xfer_ns after its prefill ended (or after decode-side KV was
 * reserved, when that came later), having waited wait_ns for that KV (held: because its decode
 * replica had no seat or blocks for it at a step, not only for that replica's next step). */
void eng_metrics_transfer(eng_metrics *m, int64_t xfer_ns, int64_t wait_ns, double bytes, int held);

typedef struct eng_metric {
    char name[40];
    double value;
} eng_metric;

/* The latency distributions of a run's summary: the one vocabulary that run, sweep, plot,
 * capacity, JSON and the store's views read. Each has the name users write (`plot --metric`,
 * `capacity --slo ttft_p99=...`) and an older spelling still accepted, the stem of its summary
 * metrics (mean_<stem>, median_, p90_, p95_, p99_, std_), a label for tables and titles. */
typedef enum eng_lat_id {
    ENG_LAT_TTFT = 0,
    ENG_LAT_TPOT,
    ENG_LAT_ITL,
    ENG_LAT_E2EL,
    ENG_LAT_WAITING,
    ENG_LAT_SCHED,
    ENG_LAT_KV_TRANSFER,
    ENG_LAT_KV_WAIT,
    ENG_LAT_COUNT
} eng_lat_id;

enum {
    ENG_LAT_SLO = 1 << 0,    /* a metric users bound and plot: ttft, tpot, itl, e2el */
    ENG_LAT_CLIENT = 1 << 1, /* what a client sees of each request */
    ENG_LAT_PD = 1 << 2      /* only a disaggregated run has it */
};

typedef struct eng_latency {
    eng_lat_id id;
    const char *name;  /* "ttft", "e2el" */
    const char *alias; /* also accepted for name ("e2e"), or NULL */
    const char *stem;  /* "ttft_ms" */
    const char *label; /* "TTFT", "E2E latency" */
    unsigned flags;    /* ENG_LAT_* */
} eng_latency;

/* Every latency, in the summary's order (indexed by eng_lat_id); *n gets ENG_LAT_COUNT. */
const eng_latency *eng_latency_all(int *n);
/* The latency named name (or its alias) having every flag in `flags`, or NULL. */
const eng_latency *eng_latency_find(const char *name, unsigned flags);
/* The names of the latencies having every flag in `flags`, "ttft, tpot, itl, e2el (or e2e)",
 * into buf; returns buf. */
const char *eng_latency_names(unsigned flags, char *buf, size_t len);

#define ENG_MAX_METRICS 200
/* Computes the summary into out[] (at most ENG_MAX_METRICS); returns the count. */
int eng_metrics_summary(eng_metrics *m, eng_metric *out);
/* Appends each class's metrics to out[n..] (at most ENG_MAX_METRICS in all) as
 * class.<name>.<metric>: completed, rejected, slo_attainment (requests meeting the class's SLO
 * over those that arrived, rejected ones included), request_goodput, mean_, median_, p90_ and
 * p99_ttft_ms, mean_ and p99_tpot_ms, p99_e2el_ms; returns the new count. None without
 * classes. */
int eng_metrics_class_summary(eng_metrics *m, eng_metric *out, int n);
/* The names eng_metrics_summary produces, in its order, without computing anything (for the
 * store's views); *n gets the count. The array is static: do not free it. */
const char *const *eng_metric_names(int *n);
/* The names a disaggregated run's summary adds after those, in its order (static). */
const char *const *eng_pd_metric_names(int *n);
/* The KV offload tiers' metric names (offload.c), every tier kind's in eng_tier_kind order and
 * then the loads' (kv_offload_cpu_hit_tokens, ..., kv_offload_load_ttft_share): what a run with
 * kv_offload may report; *n gets the count. The table is static. */
const char *const *eng_offload_metric_names(int *n);

#endif
