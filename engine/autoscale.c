/*
 * autoscale.c: an aggregated deployment whose replicas follow the load, as Kubernetes'
 * Horizontal Pod Autoscaler scales a model server's pods (llm-d and KServe run vLLM that way,
 * KEDA feeding the HPA the server's metrics).
 *
 * MODEL: the HPA's algorithm (kubernetes.io, "Horizontal Pod Autoscaling", algorithm details;
 * pkg/controller/podautoscaler/replica_calculator.go): every sync period (15 s by default) the
 * controller reads the metric of the ready pods; with an AverageValue target the wanted count
 * is ceil(sum / target), and nothing changes while the ratio of the ready pods' average to the
 * target is within the tolerance (0.1). Pods not yet ready count as 0 when scaling up, so a
 * scale-up already under way is not asked for twice. The recommendation is then stabilised:
 * scaling down takes the highest recommendation of the last scale_down_delay_s (300 s by
 * default), scaling up the lowest of the last scale_up_delay_s (0 by default), and the result is
 * kept within [min_replicas, max_replicas], then within the rate policies of `behavior` when
 * given (rate_limit below).
 *
 * MODEL: a new replica serves only after its cold start (the steps of vLLM's startup as
 * "Breaking the Ice: Analyzing Cold Start Latency in vLLM", arXiv 2606.07362, breaks them
 * down): the container and engine start (process launch, imports, distributed init: startup_s),
 * each GPU's share of the weights read at the storage link's bandwidth (load_gb_s, GB/s per
 * GPU), and CUDA-graph capture with the compilation around it (graph_capture_s). The defaults
 * are stated figures, not measurements: 20 s, 2 GB/s (a local NVMe drive's sequential read) and
 * 10 s; a scenario gives its own. Its GPUs are held (and paid for, at idle power) from the
 * moment it is asked for.
 *
 * MODEL: scaling down picks replicas still starting first (the newest), then the ready ones the
 * router saw last; a ready replica stops being routed to at once and drains: it finishes every
 * request it holds (Kubernetes removes a terminating pod from the Service's endpoints; the
 * server's graceful shutdown finishes its in-flight requests), and its GPUs are released when
 * the last one is done.
 *
 * A disaggregated deployment's prefill and decode pools scale each on its own (prefill.autoscale,
 * decode.autoscale), as Dynamo's load-based planner scales them (planner_step below cites it);
 * a pool without an autoscale map keeps its replicas. Every replica pays the same cold start.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* the evaluations run after everything else of their instant */
enum { ENG_PRIO_AUTOSCALE = 30, ENG_PRIO_ADJUST = 31 /* after the sample of its instant */ };

static void set_max(void *obj, double v)
{
    eng_autoscale_cfg *a = obj;
    a->max_replicas = (int32_t)v;
    a->enabled = 1;
}

const eng_key eng_as_policy_keys[] = {
    {"type", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL, "pods|percent",
     "a number of replicas, or a percentage of those at the period's start",
     ENG_KEY_AT(eng_as_policy, type)},
    {"value", ENG_KEY_NUM, ENG_KEY_REQUIRED | ENG_KEY_LO_OPEN, 0, 1e6, "", NULL, NULL,
     "how many replicas (pods) or what percentage may change per period",
     ENG_KEY_AT(eng_as_policy, value)},
    {"period_s", ENG_KEY_NUM, ENG_KEY_REQUIRED | ENG_KEY_LO_OPEN, 0, 1800, "s", NULL, NULL,
     "the window the change is counted over (periodSeconds)", ENG_KEY_AT(eng_as_policy, period_s)},
    ENG_KEY_END};

static const eng_key rules_keys[] = {
    {"select_policy", ENG_KEY_ENUM, 0, 0, 0, "", "max", "max|min|disabled",
     "the policy allowing the most change, the least, or no change in this direction",
     ENG_KEY_AT(eng_as_rules, select)},
    {"policies", ENG_KEY_MAP, ENG_KEY_LIST | ENG_KEY_CODE, 0, 0, "", "(none: no limit)", NULL,
     "a list of {type: pods|percent, value, period_s}", ENG_KEY_NOWHERE, .sub = eng_as_policy_keys},
    ENG_KEY_END};

static const eng_key behavior_keys[] = {
    {"scale_up", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "how fast replicas may be added (the HPA's behavior.scaleUp)", ENG_KEY_AT(eng_as_behavior, up),
     .sub = rules_keys},
    {"scale_down", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL,
     "how fast replicas may be removed (the HPA's behavior.scaleDown)",
     ENG_KEY_AT(eng_as_behavior, down), .sub = rules_keys},
    ENG_KEY_END};

/* A new replica's cold start (the aggregated deployment's and each pool's). */
static const eng_key cold_keys[] = {
    {"startup_s", ENG_KEY_NUM, 0, 0, 86400, "s", "20", NULL,
     "cold start: container and engine start before the weights load",
     ENG_KEY_AT(eng_autoscale_cfg, startup_s)},
    {"load_gb_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1e4, "GB/s", "2", NULL,
     "cold start: the storage bandwidth each GPU reads its weights at",
     ENG_KEY_AT(eng_autoscale_cfg, load_gb_s)},
    {"graph_capture_s", ENG_KEY_NUM, 0, 0, 86400, "s", "10", NULL,
     "cold start: CUDA-graph capture and compilation after the weights load",
     ENG_KEY_AT(eng_autoscale_cfg, graph_capture_s)},
    ENG_KEY_END};

const eng_key eng_autoscale_keys[] = {
    {"metric", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL,
     "queue|concurrency|kv_utilisation|rate|ttft_p90",
     "what the autoscaler watches: requests waiting, requests running or waiting, KV usage "
     "(0..1 per replica), arrivals per second; ttft_p90 is not modelled yet",
     ENG_KEY_AT(eng_autoscale_cfg, metric)},
    {"target", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, 1e9, "", NULL, NULL,
     "the metric's value per ready replica the autoscaler holds (HPA AverageValue)",
     ENG_KEY_AT(eng_autoscale_cfg, target)},
    {"min_replicas", ENG_KEY_INT, 0, 1, 1 << 20, "", "1", NULL,
     "fewest replicas (scaling to zero is not modelled)",
     ENG_KEY_AT(eng_autoscale_cfg, min_replicas)},
    {"max_replicas", ENG_KEY_INT, ENG_KEY_REQUIRED, 1, 1 << 16, "", NULL, NULL,
     "most replicas (the deployment's replicas: how many are ready at the start)", .set = set_max},
    {"interval_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 86400, "s", "15", NULL,
     "between two evaluations (the HPA's sync period)", ENG_KEY_AT(eng_autoscale_cfg, interval_s)},
    {"scale_up_delay_s", ENG_KEY_NUM, 0, 0, 86400, "s", "0", NULL,
     "scale-up stabilisation window: the lowest recommendation over it is taken",
     ENG_KEY_AT(eng_autoscale_cfg, up_window_s)},
    {"scale_down_delay_s", ENG_KEY_NUM, 0, 0, 86400, "s", "300", NULL,
     "scale-down stabilisation window: the highest recommendation over it is taken",
     ENG_KEY_AT(eng_autoscale_cfg, down_window_s)},
    {"tolerance", ENG_KEY_NUM, 0, 0, 1, "", "0.1", NULL,
     "no change while the ready replicas' average is within this fraction of the target",
     ENG_KEY_AT(eng_autoscale_cfg, tolerance)},
    {"", ENG_KEY_INCLUDE, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_NOWHERE, .sub = cold_keys},
    {"behavior", ENG_KEY_MAP, 0, 0, 0, "", "(no rate limit)", NULL,
     "the HPA's rate policies: {scale_up: {select_policy, policies}, scale_down: {...}}",
     ENG_KEY_AT(eng_autoscale_cfg, behavior), .sub = behavior_keys},
    ENG_KEY_END};

static void set_pool_max(void *obj, double v)
{
    eng_autoscale_cfg *a = obj;
    a->max_replicas = (int32_t)v;
    a->enabled = 1;
    a->planner = 1;
}

/* MODEL: Dynamo's load-based planner's options and defaults (ai-dynamo/dynamo,
 * docs/architecture/load_planner.md, examples/llm/components/planner.py): adjustment-interval
 * 30 s, metric-pulling-interval 1 s, min-endpoint 1 per pool, max-gpu-budget over both pools,
 * prefill-queue-scale-up/down-threshold 0.5 / 0.2, decode-kv-scale-up/down-threshold 0.9 / 0.5,
 * NEW_DECODE_WORKER_GRACE_PERIOD 3 and NEW_PREFILL_WORKER_QUEUE_BUFFER_PERIOD 3 intervals, 0.02
 * KV per request waiting. Later releases changed some defaults (adjustment_interval 180 s,
 * metric_pulling_interval 10 s, prefill queue threshold 5.0: planner/defaults.py); a scenario
 * sets its own. */
const eng_key eng_pool_autoscale_keys[] = {
    {"metric", ENG_KEY_ENUM, 0, 0, 0, "", "(queue for prefill, kv_utilisation for decode)",
     "queue|concurrency|kv_utilisation",
     "what the pool's planner watches: requests waiting on the pool's replicas (the prefill "
     "queue), requests on them, or each ready replica's KV usage averaged",
     ENG_KEY_AT(eng_autoscale_cfg, metric)},
    {"scale_up_threshold", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1e9, "", "(0.5 prefill, 0.9 decode)",
     NULL, "one replica more when the interval's average is above this",
     ENG_KEY_AT(eng_autoscale_cfg, up_threshold)},
    {"scale_down_threshold", ENG_KEY_NUM, 0, 0, 1e9, "", "(0.2 prefill, 0.5 decode)", NULL,
     "one replica fewer when the interval's average is below this",
     ENG_KEY_AT(eng_autoscale_cfg, down_threshold)},
    {"min_replicas", ENG_KEY_INT, 0, 1, 1 << 20, "", "1", NULL,
     "fewest replicas of the pool (the planner's min-endpoint)",
     ENG_KEY_AT(eng_autoscale_cfg, min_replicas)},
    {"max_replicas", ENG_KEY_INT, ENG_KEY_REQUIRED, 1, 1 << 16, "", NULL, NULL,
     "most replicas of the pool (its replicas: how many are ready at the start)",
     .set = set_pool_max},
    {"interval_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 86400, "s", "30", NULL,
     "between two adjustments (adjustment-interval; the same in both pools)",
     ENG_KEY_AT(eng_autoscale_cfg, interval_s)},
    {"sample_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 86400, "s", "1", NULL,
     "between two samples of the metric (metric-pulling-interval; the same in both pools)",
     ENG_KEY_AT(eng_autoscale_cfg, sample_s)},
    {"kv_per_waiting", ENG_KEY_NUM, 0, 0, 1, "", "0.02", NULL,
     "kv_utilisation: added to a replica's KV usage per request waiting there",
     ENG_KEY_AT(eng_autoscale_cfg, kv_per_waiting)},
    {"scale_down_grace", ENG_KEY_INT, 0, 0, 1 << 20, "intervals", "(3 for decode, 0 for prefill)",
     NULL, "adjustments, a scale-up's own included, in which the pool is not scaled down after it",
     ENG_KEY_AT(eng_autoscale_cfg, grace_intervals)},
    {"trend_intervals", ENG_KEY_INT, 0, 0, 1 << 20, "intervals", "(3 for prefill, 0 for decode)",
     NULL,
     "a scale-up only if the metric's last sample plus its change over the interval times this "
     "is still above scale_up_threshold",
     ENG_KEY_AT(eng_autoscale_cfg, trend_intervals)},
    {"max_gpus", ENG_KEY_INT, 0, 0, 1 << 20, "GPUs", "(no budget)", NULL,
     "the GPU budget of both pools together (max-gpu-budget): no scale-up past it",
     ENG_KEY_AT(eng_autoscale_cfg, max_gpus)},
    {"", ENG_KEY_INCLUDE, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_NOWHERE, .sub = cold_keys},
    ENG_KEY_END};
double eng_autoscale_cold_start_s(const eng_autoscale_cfg *a, int64_t weight_bytes)
{
    return a->startup_s + (double)weight_bytes / (a->load_gb_s * 1e9) + a->graph_capture_s;
}

typedef struct as_rec {
    int64_t t;
    int32_t want;
} as_rec;

/* A replica of pool `pool` (the timeline's index) changed state (ENG_FLEET_*) at t: the fleet
 * timeline integrates these. */
typedef struct as_trans {
    int64_t t;
    int8_t from, to, pool;
} as_trans;

/* What a finished or rejected request adds to the timeline's windows (window indices). */
enum { AS_ARRIVALS = 0, AS_COMPLETED, AS_GOOD, AS_REJECTED, AS_COUNTS };

typedef struct as_ttft {
    int64_t w; /* the window of its first token */
    double ms;
} as_ttft;

/* One pool's autoscaler: the aggregated deployment's (the HPA), or a prefill or decode pool's
 * (the planner), or a disaggregated pool that keeps its replicas (cfg NULL). */
typedef struct as_pool {
    struct eng_autoscaler *as;
    eng_pool *p;
    const eng_autoscale_cfg *cfg;   /* NULL: not scaled */
    int32_t idx;                    /* in as->pl: the timeline's pool */
    int64_t cold, up_win, down_win; /* ns */
    sim_event_id *ready;            /* per replica: its cold start's end */
    as_rec *rec;                    /* recommendations, a ring */
    int32_t nrec, caprec, headrec;
    int64_t (*spans)[2]; /* closed [on, off) ns of replicas held */
    int64_t nspans, capspans;
    int32_t held, held_max; /* replicas holding GPUs now, and at most */
    int64_t ups, downs;
    /* scale events within the longest policy period (behavior): when, replicas added, removed */
    struct as_ev {
        int64_t t;
        int32_t added, removed;
    } * ev;
    int32_t nev, capev, headev;
    int64_t ev_keep; /* ns: the longest period */
    /* the planner's samples of the current adjustment interval: their sum and count, the first
     * and the last sample's value */
    double sum, first, last;
    int64_t nsum, nsamples;
    int32_t grace_left; /* adjustments before a scale-down may come again */
    int32_t endpoints;  /* its workers as the planner counted them at the interval's start */
} as_pool;

typedef struct eng_autoscaler {
    eng_engine *e;
    as_pool pl[ENG_FLEET_POOLS];
    int32_t npl;
    int64_t interval, sample; /* ns: evaluations (the timeline's windows), the planner's samples */
    sim_event_id tick, sample_ev;
    int64_t last_arrived; /* arrivals counted at the last evaluation */
    /* the fleet timeline: state changes in time order; per window from wbase, the requests'
     * counts; each completed request's TTFT with its window */
    as_trans *trans;
    int64_t ntrans, captrans;
    int64_t (*cnt)[AS_COUNTS];
    int64_t wbase, ncnt;
    as_ttft *tt;
    int64_t ntt, captt;
} eng_autoscaler;

/* The autoscaler of replica r's pool. */
static as_pool *pool_of(eng_autoscaler *as, const eng_replica *r)
{
    as_pool *q = &as->pl[as->npl > 1 && r->pool != as->pl[0].p];
    SIM_ASSERT(as->e->ctx, q->p == r->pool);
    return q;
}

/* r enters state `to` at now (logged for the timeline). */
static void set_state(as_pool *q, eng_replica *r, int to, int64_t now)
{
    eng_autoscaler *as = q->as;
    if (as->ntrans == as->captrans) {
        as->captrans = as->captrans ? 2 * as->captrans : 64;
        as->trans = sim_xrealloc(as->trans, (size_t)as->captrans * sizeof *as->trans);
    }
    as->trans[as->ntrans++] = (as_trans){now, (int8_t)r->fleet, (int8_t)to, (int8_t)q->idx};
    r->fleet = to;
}

/* Pool k's autoscale settings: the deployment's (aggregated), or the pool's own. */
static const eng_autoscale_cfg *cfg_of(const eng_config *c, int k)
{
    if (!c->pd.enabled)
        return &c->fleet.autoscale;
    return &c->fleet.pool_autoscale[k >= eng_config_decode_pool(c)];
}

int32_t eng_autoscale_slots(const eng_engine *e, const eng_pool *p)
{
    const eng_autoscale_cfg *a = cfg_of(&e->cfg, p->id);
    return a->enabled ? a->max_replicas : p->cfg.replicas;
}

/* A pool's planner settings against its replicas (name: "prefill" or "decode"). */
static int check_pool(const eng_autoscale_cfg *a, const char *name, int32_t replicas, sim_err *err)
{
    if (a->min_replicas > a->max_replicas)
        return sim_errf(err, "%s.autoscale: min_replicas %d above max_replicas %d", name,
                        a->min_replicas, a->max_replicas);
    if (replicas < a->min_replicas || replicas > a->max_replicas)
        return sim_errf(err,
                        "%s.autoscale: %s.replicas %d (ready at the start) outside "
                        "[min_replicas %d, max_replicas %d]",
                        name, name, replicas, a->min_replicas, a->max_replicas);
    if (a->down_threshold >= a->up_threshold)
        return sim_errf(err,
                        "%s.autoscale: scale_down_threshold %g not below scale_up_threshold %g",
                        name, a->down_threshold, a->up_threshold);
    if (a->sample_s > a->interval_s)
        return sim_errf(err, "%s.autoscale: sample_s %g longer than interval_s %g", name,
                        a->sample_s, a->interval_s);
    return 0;
}

/* The prefill and decode pools' planners: each pool's settings, and what they share. */
static int check_pools(const eng_config *c, sim_err *err)
{
    static const char *const name[2] = {"prefill", "decode"};
    const eng_autoscale_cfg *pa = c->fleet.pool_autoscale;
    int64_t gpus = 0, budget = 0;
    for (int k = 0; k < 2; k++) {
        if (!pa[k].enabled)
            continue;
        if (c->pd.ngroups[k] > 0)
            return sim_errf(err,
                            "%s.autoscale: scaling a pool of replica groups (%s.replicas as a "
                            "list) is not modelled yet",
                            name[k], name[k]);
        if (check_pool(&pa[k], name[k], c->pd.pool[k].replicas, err))
            return -1;
        if (budget && pa[k].max_gpus && pa[k].max_gpus != budget)
            return sim_errf(err,
                            "prefill.autoscale.max_gpus %d and decode.autoscale.max_gpus %d "
                            "differ: the planner has one GPU budget for both pools",
                            pa[0].max_gpus, pa[1].max_gpus);
        budget = pa[k].max_gpus ? pa[k].max_gpus : budget;
    }
    if (pa[0].enabled && pa[1].enabled &&
        (pa[0].interval_s != pa[1].interval_s || pa[0].sample_s != pa[1].sample_s))
        return sim_errf(err,
                        "prefill.autoscale and decode.autoscale: interval_s (%g, %g) and sample_s "
                        "(%g, %g) must agree: the planner samples and adjusts both pools together",
                        pa[0].interval_s, pa[1].interval_s, pa[0].sample_s, pa[1].sample_s);
    for (int k = 0; k < eng_config_pools(c); k++) {
        eng_config pc;
        eng_config_pool(c, k, &pc);
        gpus += (int64_t)pc.replicas * pc.tensor_parallel * pc.data_parallel_attention *
                pc.pipeline_parallel;
    }
    if (budget && gpus > budget)
        return sim_errf(err, "autoscale.max_gpus %lld below the %lld GPUs the pools start with",
                        (long long)budget, (long long)gpus);
    return 0;
}

int eng_autoscale_check(const eng_config *c, sim_err *err)
{
    const eng_autoscale_cfg *a = &c->fleet.autoscale;
    if (c->pd.enabled && a->enabled)
        return sim_errf(err, "autoscale: a disaggregated deployment scales each pool: give "
                             "prefill.autoscale and decode.autoscale instead");
    if (c->pd.enabled)
        return check_pools(c, err);
    if (!a->enabled)
        return 0;
    if (a->metric == ENG_AS_TTFT_P90)
        return sim_errf(err, "autoscale.metric ttft_p90 is not modelled yet (use queue, "
                             "concurrency, kv_utilisation or rate)");
    if (a->min_replicas > a->max_replicas)
        return sim_errf(err, "autoscale: min_replicas %d above max_replicas %d", a->min_replicas,
                        a->max_replicas);
    if (c->replicas < a->min_replicas || c->replicas > a->max_replicas)
        return sim_errf(err,
                        "autoscale: replicas %d (the replicas ready at the start) outside "
                        "[min_replicas %d, max_replicas %d]",
                        c->replicas, a->min_replicas, a->max_replicas);
    return 0;
}

/* The metric summed over the ready replicas. */
static double observe(as_pool *q)
{
    const eng_pool *p = q->p;
    eng_autoscaler *as = q->as;
    double v = 0;
    if (q->cfg->metric == ENG_AS_RATE) {
        int64_t n = as->e->tot.arrived - as->last_arrived;
        as->last_arrived = as->e->tot.arrived;
        return (double)n / ((double)as->interval / 1e9);
    }
    for (int32_t i = 0; i < p->nact; i++) {
        const eng_replica *r = p->rep_list[i];
        if (q->cfg->metric == ENG_AS_QUEUE)
            v += (double)r->waiting;
        else if (q->cfg->metric == ENG_AS_CONCURRENCY)
            v += (double)r->outstanding;
        else
            v += eng_replica_kv_usage(r);
    }
    return v;
}

/* Replicas in state st. */
static int32_t count(const as_pool *q, int st)
{
    int32_t n = 0;
    for (int32_t i = 0; i < q->p->nrep; i++)
        n += q->p->reps[i].fleet == st;
    return n;
}

/* Replicas holding GPUs and counted by the HPA: ready and starting (not draining). */
static int32_t current(const as_pool *q)
{
    return count(q, ENG_FLEET_READY) + count(q, ENG_FLEET_STARTING);
}

/* The HPA's raw recommendation from the observed sum. */
static int32_t recommend(const as_pool *q, double sum, int32_t cur)
{
    int32_t ready = q->p->nact;
    double ratio = ready ? sum / (q->cfg->target * ready) : 0;
    if (fabs(ratio - 1) <= q->cfg->tolerance)
        return cur;
    double want = ceil(sum / q->cfg->target - 1e-9);
    if (want > cur && sum / (q->cfg->target * cur) <= 1) /* starting ones count as 0 */
        return cur;
    return (int32_t)fmin(want, (double)INT32_MAX);
}

static void remember(as_pool *q, int64_t now, int32_t want)
{
    if (q->nrec == q->caprec) { /* the oldest falls out (beyond both windows) */
        q->headrec = (q->headrec + 1) % q->caprec;
        q->nrec--;
    }
    q->rec[(q->headrec + q->nrec++) % q->caprec] = (as_rec){now, want};
}

/* Stabilised: the highest recommendation of the down window when scaling down, the lowest of
 * the up window when scaling up. */
static int32_t stabilise(const as_pool *q, int64_t now, int32_t cur)
{
    int32_t up = INT32_MAX, down = 0;
    for (int32_t k = 0; k < q->nrec; k++) {
        const as_rec *r = &q->rec[(q->headrec + k) % q->caprec];
        if (now - r->t <= q->down_win && r->want > down)
            down = r->want;
        if (now - r->t <= q->up_win && r->want < up)
            up = r->want;
    }
    int32_t want = up > cur ? up : down < cur ? down : cur;
    if (want < q->cfg->min_replicas)
        want = q->cfg->min_replicas;
    return want > q->cfg->max_replicas ? q->cfg->max_replicas : want;
}

/* MODEL: the HPA's rate policies (pkg/controller/podautoscaler/horizontal.go,
 * calculateScaleUpLimitWithScalingRules and calculateScaleDownLimitWithBehaviors): for each
 * policy the replicas at its period's start are the current ones less those added plus those
 * removed by scale events within the period (getReplicasChangePerPeriod: events after now -
 * period); a pods policy allows that start plus (minus) its value, a percent policy
 * ceil(start x (1 + value/100)) up and int(start x (1 - value/100)) down; select_policy max takes
 * the policy allowing the most change, min the least, disabled none. The kubernetes API's
 * default rules (up: 4 pods or 100% per 15 s; down: 100% per 15 s) are not applied unless given:
 * without `behavior` a change is taken at once, as before it was modelled. */
static void changes(const as_pool *q, int64_t now, double period_s, int32_t *added,
                    int32_t *removed)
{
    int64_t cutoff = now - (int64_t)llround(period_s * 1e9);
    *added = *removed = 0;
    for (int32_t k = 0; k < q->nev; k++) {
        const struct as_ev *v = &q->ev[(q->headev + k) % q->capev];
        if (v->t > cutoff) {
            *added += v->added;
            *removed += v->removed;
        }
    }
}

/* The most replicas (up) or the fewest (down) the rules allow from cur at now. */
static int32_t rate_bound(const as_pool *q, const eng_as_rules *ru, int up, int64_t now,
                          int32_t cur)
{
    int most = (ru->select == ENG_AS_SELECT_MAX) == up; /* keep the largest proposal */
    double bound = most ? -INFINITY : INFINITY;
    for (int32_t i = 0; i < ru->n; i++) {
        const eng_as_policy *p = &ru->p[i];
        int32_t added, removed;
        changes(q, now, p->period_s, &added, &removed);
        double start = (double)cur - added + removed, v;
        if (p->type == ENG_AS_PODS)
            v = up ? start + p->value : start - p->value;
        else
            v = up ? ceil(start * (1 + p->value / 100)) : trunc(start * (1 - p->value / 100));
        bound = most ? fmax(bound, v) : fmin(bound, v);
    }
    return (int32_t)fmax(fmin(bound, INT32_MAX), INT32_MIN);
}

/* want, within what the rate policies allow from cur. */
static int32_t rate_limit(const as_pool *q, int64_t now, int32_t cur, int32_t want)
{
    const eng_as_behavior *b = &q->cfg->behavior;
    const eng_as_rules *ru = want > cur ? &b->up : &b->down;
    if (want == cur || (ru->n == 0 && ru->select != ENG_AS_SELECT_DISABLED))
        return want;
    if (ru->select == ENG_AS_SELECT_DISABLED)
        return cur;
    int32_t bound = rate_bound(q, ru, want > cur, now, cur);
    if (want > cur)
        return want < bound ? want : bound > cur ? bound : cur;
    return want > bound ? want : bound < cur ? bound : cur;
}

/* Remembers a scale event for the rate policies (nothing without them). */
static void scaled(as_pool *q, int64_t now, int32_t added, int32_t removed)
{
    if (q->ev_keep == 0 || (added == 0 && removed == 0))
        return;
    while (q->nev > 0 && q->ev[q->headev].t <= now - q->ev_keep) {
        q->headev = (q->headev + 1) % q->capev;
        q->nev--;
    }
    if (q->nev == q->capev) {
        int32_t cap = q->capev ? 2 * q->capev : 16;
        struct as_ev *ev = sim_xmalloc((size_t)cap * sizeof *ev);
        for (int32_t k = 0; k < q->nev; k++)
            ev[k] = q->ev[(q->headev + k) % q->capev];
        free(q->ev);
        q->ev = ev;
        q->capev = cap;
        q->headev = 0;
    }
    q->ev[(q->headev + q->nev++) % q->capev] = (struct as_ev){now, added, removed};
}

static void hold(as_pool *q, eng_replica *r, int64_t now)
{
    r->fleet_since = now;
    if (++q->held > q->held_max)
        q->held_max = q->held;
}

static void release(as_pool *q, eng_replica *r, int64_t now)
{
    if (q->nspans == q->capspans) {
        q->capspans = q->capspans ? 2 * q->capspans : 64;
        q->spans = sim_xrealloc(q->spans, (size_t)q->capspans * sizeof *q->spans);
    }
    q->spans[q->nspans][0] = r->fleet_since;
    q->spans[q->nspans++][1] = now;
    set_state(q, r, ENG_FLEET_OFF, now);
    q->held--;
}

void eng_replica_ready(eng_replica *r)
{
    eng_pool *p = r->pool->route; /* a mixed pool's router lists every group's replicas */
    r->fleet = ENG_FLEET_READY;
    p->rep_list[p->nact++] = r;
    eng_router_joined(r);
    eng_fault_ready(r->e);
}

static void on_ready(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_replica *r = obj;
    as_pool *q = pool_of(r->e->as, r);
    q->ready[r - q->p->reps] = 0;
    set_state(q, r, ENG_FLEET_READY, sim_now(ctx));
    eng_replica_ready(r);
}

int eng_autoscale_restart(eng_replica *r, int64_t ready_at)
{
    if (!r->e->as)
        return 0;
    as_pool *q = pool_of(r->e->as, r);
    int32_t i = (int32_t)(r - q->p->reps);
    if (q->ready[i])
        sim_cancel(r->e->ctx, q->ready[i]);
    set_state(q, r, ENG_FLEET_STARTING, sim_now(r->e->ctx));
    q->ready[i] = sim_schedule(r->e->ctx, ready_at, ENG_PRIO_AUTOSCALE, on_ready, r, 0);
    return 1;
}

void eng_pool_unlist(eng_pool *p, const eng_replica *r)
{
    int32_t i = 0;
    while (i < p->nact && p->rep_list[i] != r)
        i++;
    SIM_ASSERT(r->e->ctx, i < p->nact);
    memmove(&p->rep_list[i], &p->rep_list[i + 1], (size_t)(p->nact - i - 1) * sizeof *p->rep_list);
    p->nact--;
    eng_router_gone(r);
}

static void scale_up(as_pool *q, int32_t n, int64_t now)
{
    eng_pool *p = q->p;
    for (int32_t i = 0; i < p->nrep && n > 0; i++) {
        eng_replica *r = &p->reps[i];
        if (r->fleet != ENG_FLEET_OFF)
            continue; /* a draining replica's slot is not free until it is off */
        set_state(q, r, ENG_FLEET_STARTING, now);
        hold(q, r, now);
        q->ready[i] =
            sim_schedule(q->as->e->ctx, now + q->cold, ENG_PRIO_AUTOSCALE, on_ready, r, 0);
        q->ups++;
        n--;
    }
}

static void scale_down(as_pool *q, int32_t n, int64_t now)
{
    eng_pool *p = q->p;
    for (int32_t i = p->nrep - 1; i >= 0 && n > 0; i--) { /* the newest starting ones */
        eng_replica *r = &p->reps[i];
        if (r->fleet != ENG_FLEET_STARTING)
            continue;
        sim_cancel(q->as->e->ctx, q->ready[i]);
        q->ready[i] = 0;
        release(q, r, now);
        q->downs++;
        n--;
    }
    while (n > 0 && p->nact > 1) { /* then the ready ones the router saw last */
        eng_replica *r = (eng_replica *)p->rep_list[p->nact - 1];
        eng_pool_unlist(p, r);
        set_state(q, r, ENG_FLEET_DRAINING, now);
        q->downs++;
        n--;
        if (eng_replica_drained(r))
            release(q, r, now);
    }
}

void eng_autoscale_drained(eng_replica *r)
{
    release(pool_of(r->e->as, r), r, sim_now(r->e->ctx));
}

/* Whether the autoscaler keeps evaluating: as long as anything is left to serve. */
static int running(const eng_engine *e)
{
    /* MODEL: the controller runs as long as anything is left to serve */
    return e->src_state != ENG_SRC_END || e->in_system > 0;
}

static void on_tick(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_autoscaler *as = obj;
    as_pool *q = &as->pl[0];
    eng_engine *e = as->e;
    int64_t now = sim_now(ctx);
    as->tick = 0;
    if (e->failed)
        return;
    int32_t cur = current(q);
    remember(q, now, recommend(q, observe(q), cur));
    int32_t want = rate_limit(q, now, cur, stabilise(q, now, cur));
    int64_t ups = q->ups, downs = q->downs;
    if (want > cur)
        scale_up(q, want - cur, now);
    else if (want < cur)
        scale_down(q, cur - want, now);
    scaled(q, now, (int32_t)(q->ups - ups), (int32_t)(q->downs - downs));
    if (running(e))
        as->tick = sim_schedule(ctx, now + as->interval, ENG_PRIO_AUTOSCALE, on_tick, as, 0);
}

/* ---- the planner of a disaggregated deployment's pools ---- */

/* MODEL: Dynamo's load-based planner (ai-dynamo/dynamo examples/llm/components/planner.py,
 * collect_metrics; docs/architecture/load_planner.md). Every metric-pulling-interval it reads
 * the prefill queue's size (the requests no prefill worker has taken yet: here the requests
 * waiting on the prefill pool's replicas, draining ones included, as llmsim routes each request
 * to a prefill replica when it arrives) and each decode worker's gpu_cache_usage_perc, plus 0.02
 * per request waiting on a worker that has requests running (num_requests_waiting, "we assume
 * each request uses 0.02 kv cache"). A sample adds one value for the queue, one per ready
 * replica for the KV usage (the workers registered: a decode worker being scaled down has left
 * the registry). */
static void planner_sample(as_pool *q)
{
    const eng_autoscale_cfg *a = q->cfg;
    const eng_pool *p = q->p;
    double v = 0, n = 1;
    if (a->metric == ENG_AS_KV) {
        n = p->nact;
        for (int32_t i = 0; i < p->nact; i++) {
            const eng_replica *r = p->rep_list[i];
            v += eng_replica_kv_usage(r);
            if (r->outstanding > r->waiting)
                v += a->kv_per_waiting * (double)r->waiting;
        }
    } else {
        for (int32_t i = 0; i < p->nrep; i++)
            v += (double)(a->metric == ENG_AS_QUEUE ? p->reps[i].waiting : p->reps[i].outstanding);
    }
    double value = n > 0 ? v / n : 0;
    q->first = q->nsamples ? q->first : value;
    q->last = value;
    q->nsamples++;
    q->sum += v;
    q->nsum += (int64_t)n;
}

/* The workers the planner sees registered: ready ones, and draining prefill workers (a prefill
 * worker told to stop stays until its last request is done; a decode worker's lease is revoked
 * at once). */
static int32_t endpoints(const as_pool *q)
{
    int32_t n = count(q, ENG_FLEET_READY);
    return q->p->role == ENG_ROLE_PREFILL ? n + count(q, ENG_FLEET_DRAINING) : n;
}

/* GPUs the planner counts against its budget: the replicas it has asked for (ready and
 * starting: a starting one holds its GPUs already), both pools. */
static int64_t gpus_used(const eng_autoscaler *as)
{
    int64_t g = 0;
    for (int32_t k = 0; k < as->npl; k++)
        g += (int64_t)current(&as->pl[k]) * as->pl[k].p->plan.gpus;
    return g;
}

/* Whether pool q may take one replica more: a slot free, the budget not exceeded. */
static int may_add(const eng_autoscaler *as, const as_pool *q)
{
    int32_t budget = q->cfg->max_gpus;
    if (current(q) >= q->cfg->max_replicas || count(q, ENG_FLEET_OFF) == 0)
        return 0;
    return !budget || gpus_used(as) + q->p->plan.gpus <= budget;
}

/* MODEL: the planner's make_adjustments (planner.py): nothing when either pool's worker count
 * changed during the interval (a scale-up or scale-down under way); else, with each pool's
 * interval average, first the scale-downs (prefill below its down threshold, decode below its
 * own unless a decode worker was added within the last NEW_DECODE_WORKER_GRACE_PERIOD
 * adjustments), then the scale-ups (prefill above its up threshold when the queue's trend,
 * last + (last - first) x NEW_PREFILL_WORKER_QUEUE_BUFFER_PERIOD, is above it too; decode above
 * its own), one worker at most per pool, within min-endpoint and the GPU budget
 * (max-gpu-budget, over both pools). The grace and trend apply here to either pool as its
 * settings say (the planner's: grace to decode, trend to prefill). */
static void planner_adjust(eng_autoscaler *as, int64_t now)
{
    for (int32_t k = 0; k < as->npl; k++)
        if (as->pl[k].cfg && endpoints(&as->pl[k]) != as->pl[k].endpoints)
            return;
    double avg[ENG_FLEET_POOLS];
    for (int32_t k = 0; k < as->npl; k++) {
        as_pool *q = &as->pl[k];
        avg[k] = q->nsum ? q->sum / (double)q->nsum : 0;
        if (q->cfg && avg[k] < q->cfg->down_threshold && current(q) > q->cfg->min_replicas &&
            q->grace_left == 0)
            scale_down(q, 1, now);
    }
    for (int32_t k = 0; k < as->npl; k++) {
        as_pool *q = &as->pl[k];
        if (!q->cfg || avg[k] <= q->cfg->up_threshold || !may_add(as, q))
            continue;
        double trend = q->last + (q->last - q->first) * q->cfg->trend_intervals;
        if (q->cfg->trend_intervals > 0 && trend <= q->cfg->up_threshold)
            continue;
        scale_up(q, 1, now);
        q->grace_left = q->cfg->grace_intervals; /* this adjustment counts as one */
    }
    for (int32_t k = 0; k < as->npl; k++)
        if (as->pl[k].grace_left > 0)
            as->pl[k].grace_left--;
}

/* A new adjustment interval: the samples start again, the workers are counted. */
static void planner_reset(eng_autoscaler *as)
{
    for (int32_t k = 0; k < as->npl; k++) {
        as_pool *q = &as->pl[k];
        q->sum = q->first = q->last = 0;
        q->nsum = q->nsamples = 0;
        q->endpoints = endpoints(q);
    }
}

static void on_sample(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_autoscaler *as = obj;
    int64_t now = sim_now(ctx);
    as->sample_ev = 0;
    if (as->e->failed)
        return;
    for (int32_t k = 0; k < as->npl; k++)
        if (as->pl[k].cfg)
            planner_sample(&as->pl[k]);
    if (running(as->e))
        as->sample_ev = sim_schedule(ctx, now + as->sample, ENG_PRIO_AUTOSCALE, on_sample, as, 0);
}

/* After the sample of its instant (scheduled later at the same priority). */
static void on_adjust(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_autoscaler *as = obj;
    int64_t now = sim_now(ctx);
    as->tick = 0;
    if (as->e->failed)
        return;
    planner_adjust(as, now);
    planner_reset(as);
    if (running(as->e))
        as->tick = sim_schedule(ctx, now + as->interval, ENG_PRIO_ADJUST, on_adjust, as, 0);
}

/* ---- set-up ---- */

/* Pool p's autoscaler as timeline pool idx: its first `start` replicas ready, the others off. */
static void pool_init(eng_autoscaler *as, int32_t idx, eng_pool *p, const eng_autoscale_cfg *a,
                      int32_t start)
{
    as_pool *q = &as->pl[idx];
    q->as = as;
    q->idx = idx;
    q->p = p;
    q->cfg = a->enabled ? a : NULL;
    q->up_win = (int64_t)llround(a->up_window_s * 1e9);
    q->down_win = (int64_t)llround(a->down_window_s * 1e9);
    q->cold = (int64_t)llround(eng_autoscale_cold_start_s(a, p->plan.weight_bytes) * 1e9);
    if (q->cfg && !a->planner) {
        double win = fmax(a->up_window_s, a->down_window_s);
        q->caprec = (int32_t)fmin(ceil(win / a->interval_s) + 2, 1 << 20);
        q->rec = sim_xcalloc((size_t)q->caprec, sizeof *q->rec);
    }
    for (int d = 0; d < 2; d++) {
        const eng_as_rules *ru = d ? &a->behavior.down : &a->behavior.up;
        for (int32_t i = 0; i < ru->n; i++)
            q->ev_keep = (int64_t)fmax((double)q->ev_keep, llround(ru->p[i].period_s * 1e9));
    }
    q->ready = sim_xcalloc((size_t)p->nrep, sizeof *q->ready);
    p->nact = 0;
    for (int32_t i = 0; i < p->nrep; i++) {
        eng_replica *r = &p->reps[i];
        r->fleet = ENG_FLEET_OFF;
        if (i < start) {
            set_state(q, r, ENG_FLEET_READY, 0);
            hold(q, r, 0);
            p->rep_list[p->nact++] = r;
        } else {
            eng_router_gone(r); /* its router started with every slot ready */
        }
    }
}

void eng_autoscale_init(eng_engine *e)
{
    const eng_config *c = &e->cfg;
    const eng_autoscale_cfg *pa = c->fleet.pool_autoscale;
    if (!(c->pd.enabled ? pa[0].enabled || pa[1].enabled : c->fleet.autoscale.enabled))
        return;
    eng_autoscaler *as = sim_xcalloc(1, sizeof *as);
    as->e = e;
    e->as = as;
    if (!e->pd) {
        as->npl = 1;
        pool_init(as, 0, &e->pools[0], &c->fleet.autoscale, c->replicas);
        as->interval = (int64_t)llround(c->fleet.autoscale.interval_s * 1e9);
        as->tick = sim_schedule(e->ctx, as->interval, ENG_PRIO_AUTOSCALE, on_tick, as, 0);
        return;
    }
    as->npl = 2;
    for (int k = 0; k < 2; k++)
        pool_init(as, k, &e->pools[k ? e->dpool : ENG_POOL_PREFILL], &pa[k],
                  c->pd.pool[k].replicas);
    const eng_autoscale_cfg *a = pa[0].enabled ? &pa[0] : &pa[1]; /* (their clocks agree) */
    as->interval = (int64_t)llround(a->interval_s * 1e9);
    as->sample = (int64_t)llround(a->sample_s * 1e9);
    planner_reset(as);
    /* MODEL: the planner samples at once when it starts, then every metric-pulling-interval */
    as->sample_ev = sim_schedule(e->ctx, 0, ENG_PRIO_AUTOSCALE, on_sample, as, 0);
    as->tick = sim_schedule(e->ctx, as->interval, ENG_PRIO_ADJUST, on_adjust, as, 0);
}

void eng_autoscale_free(eng_engine *e)
{
    eng_autoscaler *as = e->as;
    if (!as)
        return;
    for (int32_t k = 0; k < as->npl; k++)
        SIM_FREE_ALL(as->pl[k].rec, as->pl[k].ev, as->pl[k].ready, as->pl[k].spans);
    SIM_FREE_ALL(as->trans, as->cnt, as->tt, as);
    e->as = NULL;
}

int eng_autoscale_walk(const eng_engine *e, char *buf, size_t len)
{
    const eng_autoscaler *as = e->as;
    for (int32_t k = 0; k < as->npl; k++) {
        const as_pool *q = &as->pl[k];
        int32_t ready = count(q, ENG_FLEET_READY), off = count(q, ENG_FLEET_OFF);
        if (q->p->route == q->p && q->p->nact != ready)
            return snprintf(buf, len, "%sautoscaler: %d replicas routed to, %d ready", q->p->name,
                            q->p->nact, ready),
                   -1;
        if (q->held != q->p->nrep - off)
            return snprintf(buf, len, "%sautoscaler: %d replicas held, %d not off", q->p->name,
                            q->held, q->p->nrep - off),
                   -1;
        for (int32_t i = 0; i < q->p->nrep; i++) {
            const eng_replica *r = &q->p->reps[i];
            if (r->fleet == ENG_FLEET_OFF && (r->outstanding || r->pd_sending))
                return snprintf(
                           buf, len, "%sreplica %d is off holding %lld requests, %lld KV transfers",
                           q->p->name, r->id, (long long)r->outstanding, (long long)r->pd_sending),
                       -1;
        }
    }
    return 0;
}

/* The length of [a, b) within [t0, t1), ns. */
static int64_t within(int64_t a, int64_t b, int64_t t0, int64_t t1)
{
    a = a > t0 ? a : t0;
    b = b < t1 ? b : t1;
    return b > a ? b - a : 0;
}

int64_t eng_autoscale_held_ns(const eng_engine *e, const eng_pool *p, int64_t t0, int64_t t1)
{
    const as_pool *q = &e->as->pl[e->as->npl > 1 && p != e->as->pl[0].p];
    int64_t ns = 0;
    SIM_ASSERT(e->ctx, q->p == p);
    for (int64_t k = 0; k < q->nspans; k++)
        ns += within(q->spans[k][0], q->spans[k][1], t0, t1);
    for (int32_t i = 0; i < p->nrep; i++)
        if (p->reps[i].fleet != ENG_FLEET_OFF)
            ns += within(p->reps[i].fleet_since, t1, t0, t1);
    return ns;
}

/* Appends name (with prefix pre) = v to out[n]; returns the new count. */
static int put(eng_metric *out, int n, const char *pre, const char *name, double v)
{
    if (n >= ENG_MAX_METRICS)
        return n;
    snprintf(out[n].name, sizeof out[n].name, "%s%s", pre, name);
    out[n].value = v;
    return n + 1;
}

int eng_autoscale_summary(const eng_engine *e, eng_metric *out, int n, double dur)
{
    static const char *const pre[2][2] = {{""}, {"prefill_", "decode_"}};
    const eng_autoscaler *as = e->as;
    int64_t t0 = e->m.t_first_arrival, t1 = e->m.completed ? e->m.t_last_finish : t0;
    for (int32_t k = 0; k < as->npl; k++) {
        const as_pool *q = &as->pl[k];
        const char *p = pre[as->npl > 1][k];
        int64_t gpus = q->p->plan.gpus;
        double gpu_s = (double)(gpus * eng_autoscale_held_ns(e, q->p, t0, t1)) / 1e9;
        n = put(out, n, p, "replicas_mean", dur > 0 ? gpu_s / (double)gpus / dur : 0);
        n = put(out, n, p, "replicas_max", (double)q->held_max);
        n = put(out, n, p, "scale_ups", (double)q->ups);
        n = put(out, n, p, "scale_downs", (double)q->downs);
        if (q->cfg) /* (a disaggregated pool that keeps its replicas starts none) */
            n = put(out, n, p, "cold_start_s", (double)q->cold / 1e9);
    }
    return n;
}

/* ---- the fleet timeline (fleet.h: eng_fleet_window) ---- */

/* The counts of window w (grown on demand; no event comes before the first arrival's window). */
static int64_t *counts_of(eng_autoscaler *as, int64_t w)
{
    if (as->ncnt == 0)
        as->wbase = w;
    SIM_ASSERT(as->e->ctx, w >= as->wbase);
    int64_t i = w - as->wbase;
    if (i >= as->ncnt) {
        int64_t n = as->ncnt ? as->ncnt : 64;
        while (n <= i)
            n *= 2;
        as->cnt = sim_xrealloc(as->cnt, (size_t)n * sizeof *as->cnt);
        memset(as->cnt + as->ncnt, 0, (size_t)(n - as->ncnt) * sizeof *as->cnt);
        as->ncnt = n;
    }
    return as->cnt[i];
}

void eng_autoscale_request(eng_engine *e, const eng_request *rq)
{
    eng_autoscaler *as = e->as;
    int64_t iv = as->interval;
    counts_of(as, e->tot.first_arrival_ns / iv); /* the base: the first arrival's window */
    counts_of(as, rq->t_arrival / iv)[AS_ARRIVALS]++;
    int64_t *at_end = counts_of(as, rq->t_finish / iv);
    if (rq->status == ENG_RQ_REJECTED) {
        at_end[AS_REJECTED]++;
        return;
    }
    at_end[AS_COMPLETED]++;
    at_end[AS_GOOD] += eng_metrics_good(&e->m, rq);
    if (as->ntt == as->captt) {
        as->captt = as->captt ? 2 * as->captt : 1024;
        as->tt = sim_xrealloc(as->tt, (size_t)as->captt * sizeof *as->tt);
    }
    as->tt[as->ntt++] =
        (as_ttft){rq->t_first_token / iv, (double)(rq->t_first_token - rq->t_arrival) / 1e6};
}

/* The timeline's column of state st (serving, starting, draining), or -1 for off. */
static int column(int st)
{
    return st == ENG_FLEET_READY      ? 0
           : st == ENG_FLEET_STARTING ? 1
           : st == ENG_FLEET_DRAINING ? 2
                                      : -1;
}

/* Adds the replicas of each pool in each state (n[pool][column]) over [a, b) to the windows it
 * crosses. */
static void integrate(eng_fleet_window *win, int64_t w0, int64_t iv, int32_t npl, int32_t (*n)[3],
                      int64_t a, int64_t b)
{
    while (a < b) {
        int64_t end = (a / iv + 1) * iv;
        end = end < b ? end : b;
        eng_fleet_window *x = &win[a / iv - w0];
        for (int32_t k = 0; k < npl; k++)
            for (int c = 0; c < 3; c++)
                x->pool_ns[k][c] += n[k][c] * (end - a);
        a = end;
    }
}

/* The replica time of each window from the state changes, within [t0, t1): each pool's, and
 * the totals and GPU time. */
static void replica_time(const eng_autoscaler *as, eng_fleet_window *win, int64_t nw, int64_t w0,
                         int64_t t0, int64_t t1)
{
    int32_t n[ENG_FLEET_POOLS][3] = {{0}};
    int64_t prev = t0;
    for (int64_t k = 0; k < as->ntrans; k++) {
        const as_trans *c = &as->trans[k];
        int64_t t = c->t < t0 ? t0 : c->t > t1 ? t1 : c->t;
        integrate(win, w0, as->interval, as->npl, n, prev, t);
        prev = t;
        if (column(c->from) >= 0)
            n[c->pool][column(c->from)]--;
        if (column(c->to) >= 0)
            n[c->pool][column(c->to)]++;
    }
    integrate(win, w0, as->interval, as->npl, n, prev, t1);
    for (int64_t i = 0; i < nw; i++) {
        eng_fleet_window *x = &win[i];
        for (int32_t k = 0; k < as->npl; k++) {
            const int64_t *ns = x->pool_ns[k];
            x->serving_ns += ns[0];
            x->starting_ns += ns[1];
            x->draining_ns += ns[2];
            x->gpu_ns += as->pl[k].p->plan.gpus * (ns[0] + ns[1] + ns[2]);
        }
    }
}

/* Each window's p99 TTFT (numpy's linear interpolation, as the summary's) from the samples. */
static void window_ttft(const eng_autoscaler *as, eng_fleet_window *win, int64_t w0, int64_t nw)
{
    int64_t *first = sim_xcalloc((size_t)nw + 1, sizeof *first);
    double *v = sim_xmalloc((size_t)(as->ntt ? as->ntt : 1) * sizeof *v);
    for (int64_t k = 0; k < as->ntt; k++) /* a counting sort by window */
        first[as->tt[k].w - w0 < nw ? as->tt[k].w - w0 + 1 : nw]++;
    for (int64_t i = 0; i < nw; i++)
        first[i + 1] += first[i];
    int64_t *fill = sim_xmalloc((size_t)nw * sizeof *fill);
    memcpy(fill, first, (size_t)nw * sizeof *fill);
    for (int64_t k = 0; k < as->ntt; k++) {
        int64_t i = as->tt[k].w - w0 < nw ? as->tt[k].w - w0 : nw - 1;
        v[fill[i]++] = as->tt[k].ms;
    }
    for (int64_t i = 0; i < nw; i++) {
        sim_samples s;
        sim_samples_init(&s);
        for (int64_t k = first[i]; k < first[i + 1]; k++)
            sim_samples_add(&s, v[k]);
        win[i].ttft_count = first[i + 1] - first[i];
        win[i].p99_ttft_ms = win[i].ttft_count ? sim_samples_percentile(&s, 99) : NAN;
        sim_samples_free(&s);
    }
    free(fill);
    free(v);
    free(first);
}

int64_t eng_fleet_timeline(const eng_engine *e, eng_fleet_window **out, eng_fleet_pools *pools)
{
    const eng_autoscaler *as = e->as;
    *out = NULL;
    memset(pools, 0, sizeof *pools);
    if (!as || !e->m.completed || e->m.t_last_finish <= e->m.t_first_arrival)
        return 0;
    pools->n = as->npl;
    for (int32_t k = 0; k < as->npl; k++)
        pools->gpus[k] = as->pl[k].p->plan.gpus;
    int64_t iv = as->interval, t0 = e->m.t_first_arrival, t1 = e->m.t_last_finish;
    int64_t w0 = t0 / iv, nw = (t1 - 1) / iv - w0 + 1;
    eng_fleet_window *win = sim_xcalloc((size_t)nw, sizeof *win);
    for (int64_t i = 0; i < nw; i++) {
        win[i].start_ns = i ? (w0 + i) * iv : t0;
        win[i].end_ns = i < nw - 1 ? (w0 + i + 1) * iv : t1;
    }
    replica_time(as, win, nw, w0, t0, t1);
    for (int64_t i = 0; i < as->ncnt; i++) { /* late events count in the last window */
        int64_t w = as->wbase + i - w0;
        eng_fleet_window *x = &win[w < 0 ? 0 : w < nw ? w : nw - 1];
        x->arrivals += as->cnt[i][AS_ARRIVALS];
        x->completed += as->cnt[i][AS_COMPLETED];
        x->good += as->cnt[i][AS_GOOD];
        x->rejected += as->cnt[i][AS_REJECTED];
    }
    window_ttft(as, win, w0, nw);
    *out = win;
    return nw;
}
