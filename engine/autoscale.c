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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* the evaluations run after everything else of their instant */
enum { ENG_PRIO_AUTOSCALE = 30 };

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
    {"startup_s", ENG_KEY_NUM, 0, 0, 86400, "s", "20", NULL,
     "cold start: container and engine start before the weights load",
     ENG_KEY_AT(eng_autoscale_cfg, startup_s)},
    {"load_gb_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1e4, "GB/s", "2", NULL,
     "cold start: the storage bandwidth each GPU reads its weights at",
     ENG_KEY_AT(eng_autoscale_cfg, load_gb_s)},
    {"graph_capture_s", ENG_KEY_NUM, 0, 0, 86400, "s", "10", NULL,
     "cold start: CUDA-graph capture and compilation after the weights load",
     ENG_KEY_AT(eng_autoscale_cfg, graph_capture_s)},
    {"behavior", ENG_KEY_MAP, 0, 0, 0, "", "(no rate limit)", NULL,
     "the HPA's rate policies: {scale_up: {select_policy, policies}, scale_down: {...}}",
     ENG_KEY_AT(eng_autoscale_cfg, behavior), .sub = behavior_keys},
    ENG_KEY_END};

double eng_autoscale_cold_start_s(const eng_autoscale_cfg *a, int64_t weight_bytes)
{
    return a->startup_s + (double)weight_bytes / (a->load_gb_s * 1e9) + a->graph_capture_s;
}

typedef struct as_rec {
    int64_t t;
    int32_t want;
} as_rec;

/* A replica changed state (ENG_FLEET_*) at t: the fleet timeline integrates these. */
typedef struct as_trans {
    int64_t t;
    int8_t from, to;
} as_trans;

/* What a finished or rejected request adds to the timeline's windows (window indices). */
enum { AS_ARRIVALS = 0, AS_COMPLETED, AS_GOOD, AS_REJECTED, AS_COUNTS };

typedef struct as_ttft {
    int64_t w; /* the window of its first token */
    double ms;
} as_ttft;

typedef struct eng_autoscaler {
    eng_engine *e;
    eng_pool *p;
    const eng_autoscale_cfg *cfg;
    int64_t interval, cold, up_win, down_win; /* ns */
    sim_event_id tick, *ready;                /* per replica: its cold start's end */
    int64_t last_arrived;                     /* arrivals counted at the last evaluation */
    as_rec *rec;                              /* recommendations, a ring */
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
    /* the fleet timeline: state changes in time order; per window from wbase, the requests'
     * counts; each completed request's TTFT with its window */
    as_trans *trans;
    int64_t ntrans, captrans;
    int64_t (*cnt)[AS_COUNTS];
    int64_t wbase, ncnt;
    as_ttft *tt;
    int64_t ntt, captt;
} eng_autoscaler;

/* r enters state `to` at now (logged for the timeline). */
static void set_state(eng_autoscaler *as, eng_replica *r, int to, int64_t now)
{
    if (as->ntrans == as->captrans) {
        as->captrans = as->captrans ? 2 * as->captrans : 64;
        as->trans = sim_xrealloc(as->trans, (size_t)as->captrans * sizeof *as->trans);
    }
    as->trans[as->ntrans++] = (as_trans){now, (int8_t)r->fleet, (int8_t)to};
    r->fleet = to;
}

int32_t eng_autoscale_slots(const eng_engine *e, const eng_pool *p)
{
    const eng_autoscale_cfg *a = &e->cfg.fleet.autoscale;
    return a->enabled && !e->pd ? a->max_replicas : p->cfg.replicas;
}

int eng_autoscale_check(const eng_config *c, sim_err *err)
{
    const eng_autoscale_cfg *a = &c->fleet.autoscale;
    if (!a->enabled)
        return 0;
    if (c->pd.enabled)
        return sim_errf(err, "autoscale: scaling a disaggregated deployment's prefill and decode "
                             "pools is not modelled yet");
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
static double observe(eng_autoscaler *as)
{
    const eng_pool *p = as->p;
    double v = 0;
    if (as->cfg->metric == ENG_AS_RATE) {
        int64_t n = as->e->tot.arrived - as->last_arrived;
        as->last_arrived = as->e->tot.arrived;
        return (double)n / ((double)as->interval / 1e9);
    }
    for (int32_t i = 0; i < p->nact; i++) {
        const eng_replica *r = p->rep_list[i];
        if (as->cfg->metric == ENG_AS_QUEUE)
            v += (double)r->waiting;
        else if (as->cfg->metric == ENG_AS_CONCURRENCY)
            v += (double)r->outstanding;
        else
            v += eng_replica_kv_usage(r);
    }
    return v;
}

/* Replicas holding GPUs and counted by the HPA: ready and starting (not draining). */
static int32_t current(const eng_autoscaler *as)
{
    int32_t n = 0;
    for (int32_t i = 0; i < as->p->nrep; i++)
        n += as->p->reps[i].fleet == ENG_FLEET_READY || as->p->reps[i].fleet == ENG_FLEET_STARTING;
    return n;
}

/* The HPA's raw recommendation from the observed sum. */
static int32_t recommend(const eng_autoscaler *as, double sum, int32_t cur)
{
    int32_t ready = as->p->nact;
    double ratio = ready ? sum / (as->cfg->target * ready) : 0;
    if (fabs(ratio - 1) <= as->cfg->tolerance)
        return cur;
    double want = ceil(sum / as->cfg->target - 1e-9);
    if (want > cur && sum / (as->cfg->target * cur) <= 1) /* starting ones count as 0 */
        return cur;
    return (int32_t)fmin(want, (double)INT32_MAX);
}

static void remember(eng_autoscaler *as, int64_t now, int32_t want)
{
    if (as->nrec == as->caprec) { /* the oldest falls out (beyond both windows) */
        as->headrec = (as->headrec + 1) % as->caprec;
        as->nrec--;
    }
    as->rec[(as->headrec + as->nrec++) % as->caprec] = (as_rec){now, want};
}

/* Stabilised: the highest recommendation of the down window when scaling down, the lowest of
 * the up window when scaling up. */
static int32_t stabilise(const eng_autoscaler *as, int64_t now, int32_t cur)
{
    int32_t up = INT32_MAX, down = 0;
    for (int32_t k = 0; k < as->nrec; k++) {
        const as_rec *r = &as->rec[(as->headrec + k) % as->caprec];
        if (now - r->t <= as->down_win && r->want > down)
            down = r->want;
        if (now - r->t <= as->up_win && r->want < up)
            up = r->want;
    }
    int32_t want = up > cur ? up : down < cur ? down : cur;
    if (want < as->cfg->min_replicas)
        want = as->cfg->min_replicas;
    return want > as->cfg->max_replicas ? as->cfg->max_replicas : want;
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
static void changes(const eng_autoscaler *as, int64_t now, double period_s, int32_t *added,
                    int32_t *removed)
{
    int64_t cutoff = now - (int64_t)llround(period_s * 1e9);
    *added = *removed = 0;
    for (int32_t k = 0; k < as->nev; k++) {
        const struct as_ev *v = &as->ev[(as->headev + k) % as->capev];
        if (v->t > cutoff) {
            *added += v->added;
            *removed += v->removed;
        }
    }
}

/* The most replicas (up) or the fewest (down) the rules allow from cur at now. */
static int32_t rate_bound(const eng_autoscaler *as, const eng_as_rules *ru, int up, int64_t now,
                          int32_t cur)
{
    int most = (ru->select == ENG_AS_SELECT_MAX) == up; /* keep the largest proposal */
    double bound = most ? -INFINITY : INFINITY;
    for (int32_t i = 0; i < ru->n; i++) {
        const eng_as_policy *p = &ru->p[i];
        int32_t added, removed;
        changes(as, now, p->period_s, &added, &removed);
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
static int32_t rate_limit(const eng_autoscaler *as, int64_t now, int32_t cur, int32_t want)
{
    const eng_as_behavior *b = &as->cfg->behavior;
    const eng_as_rules *ru = want > cur ? &b->up : &b->down;
    if (want == cur || (ru->n == 0 && ru->select != ENG_AS_SELECT_DISABLED))
        return want;
    if (ru->select == ENG_AS_SELECT_DISABLED)
        return cur;
    int32_t bound = rate_bound(as, ru, want > cur, now, cur);
    if (want > cur)
        return want < bound ? want : bound > cur ? bound : cur;
    return want > bound ? want : bound < cur ? bound : cur;
}

/* Remembers a scale event for the rate policies (nothing without them). */
static void scaled(eng_autoscaler *as, int64_t now, int32_t added, int32_t removed)
{
    if (as->ev_keep == 0 || (added == 0 && removed == 0))
        return;
    while (as->nev > 0 && as->ev[as->headev].t <= now - as->ev_keep) {
        as->headev = (as->headev + 1) % as->capev;
        as->nev--;
    }
    if (as->nev == as->capev) {
        int32_t cap = as->capev ? 2 * as->capev : 16;
        struct as_ev *ev = sim_xmalloc((size_t)cap * sizeof *ev);
        for (int32_t k = 0; k < as->nev; k++)
            ev[k] = as->ev[(as->headev + k) % as->capev];
        free(as->ev);
        as->ev = ev;
        as->capev = cap;
        as->headev = 0;
    }
    as->ev[(as->headev + as->nev++) % as->capev] = (struct as_ev){now, added, removed};
}

static void hold(eng_autoscaler *as, eng_replica *r, int64_t now)
{
    r->fleet_since = now;
    if (++as->held > as->held_max)
        as->held_max = as->held;
}

static void release(eng_autoscaler *as, eng_replica *r, int64_t now)
{
    if (as->nspans == as->capspans) {
        as->capspans = as->capspans ? 2 * as->capspans : 64;
        as->spans = sim_xrealloc(as->spans, (size_t)as->capspans * sizeof *as->spans);
    }
    as->spans[as->nspans][0] = r->fleet_since;
    as->spans[as->nspans++][1] = now;
    set_state(as, r, ENG_FLEET_OFF, now);
    as->held--;
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
    r->e->as->ready[r - r->pool->reps] = 0;
    set_state(r->e->as, r, ENG_FLEET_READY, sim_now(ctx));
    eng_replica_ready(r);
}

int eng_autoscale_restart(eng_replica *r, int64_t ready_at)
{
    eng_autoscaler *as = r->e->as;
    if (!as)
        return 0;
    int32_t i = (int32_t)(r - as->p->reps);
    if (as->ready[i])
        sim_cancel(as->e->ctx, as->ready[i]);
    set_state(as, r, ENG_FLEET_STARTING, sim_now(as->e->ctx));
    as->ready[i] = sim_schedule(as->e->ctx, ready_at, ENG_PRIO_AUTOSCALE, on_ready, r, 0);
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

static void scale_up(eng_autoscaler *as, int32_t n, int64_t now)
{
    eng_pool *p = as->p;
    for (int32_t i = 0; i < p->nrep && n > 0; i++) {
        eng_replica *r = &p->reps[i];
        if (r->fleet != ENG_FLEET_OFF)
            continue; /* a draining replica's slot is not free until it is off */
        set_state(as, r, ENG_FLEET_STARTING, now);
        hold(as, r, now);
        as->ready[i] = sim_schedule(as->e->ctx, now + as->cold, ENG_PRIO_AUTOSCALE, on_ready, r, 0);
        as->ups++;
        n--;
    }
}

static void scale_down(eng_autoscaler *as, int32_t n, int64_t now)
{
    eng_pool *p = as->p;
    for (int32_t i = p->nrep - 1; i >= 0 && n > 0; i--) { /* the newest starting ones */
        eng_replica *r = &p->reps[i];
        if (r->fleet != ENG_FLEET_STARTING)
            continue;
        sim_cancel(as->e->ctx, as->ready[i]);
        as->ready[i] = 0;
        release(as, r, now);
        as->downs++;
        n--;
    }
    while (n > 0 && p->nact > 1) { /* then the ready ones the router saw last */
        eng_replica *r = (eng_replica *)p->rep_list[p->nact - 1];
        eng_pool_unlist(p, r);
        set_state(as, r, ENG_FLEET_DRAINING, now);
        as->downs++;
        n--;
        if (r->outstanding == 0)
            release(as, r, now);
    }
}

void eng_autoscale_drained(eng_replica *r)
{
    release(r->e->as, r, sim_now(r->e->ctx));
}

static void on_tick(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_autoscaler *as = obj;
    eng_engine *e = as->e;
    int64_t now = sim_now(ctx);
    as->tick = 0;
    if (e->failed)
        return;
    int32_t cur = current(as);
    remember(as, now, recommend(as, observe(as), cur));
    int32_t want = rate_limit(as, now, cur, stabilise(as, now, cur));
    int64_t ups = as->ups, downs = as->downs;
    if (want > cur)
        scale_up(as, want - cur, now);
    else if (want < cur)
        scale_down(as, cur - want, now);
    scaled(as, now, (int32_t)(as->ups - ups), (int32_t)(as->downs - downs));
    /* MODEL: the controller runs as long as anything is left to serve */
    if (e->src_state != ENG_SRC_END || e->in_system > 0)
        as->tick = sim_schedule(ctx, now + as->interval, ENG_PRIO_AUTOSCALE, on_tick, as, 0);
}

void eng_autoscale_init(eng_engine *e)
{
    const eng_autoscale_cfg *a = &e->cfg.fleet.autoscale;
    if (!a->enabled || e->pd)
        return;
    eng_autoscaler *as = sim_xcalloc(1, sizeof *as);
    eng_pool *p = &e->pools[0];
    as->e = e;
    as->p = p;
    as->cfg = a;
    as->interval = (int64_t)llround(a->interval_s * 1e9);
    as->up_win = (int64_t)llround(a->up_window_s * 1e9);
    as->down_win = (int64_t)llround(a->down_window_s * 1e9);
    as->cold = (int64_t)llround(eng_autoscale_cold_start_s(a, p->plan.weight_bytes) * 1e9);
    double win = fmax(a->up_window_s, a->down_window_s);
    as->caprec = (int32_t)fmin(ceil(win / a->interval_s) + 2, 1 << 20);
    as->rec = sim_xcalloc((size_t)as->caprec, sizeof *as->rec);
    for (int d = 0; d < 2; d++) {
        const eng_as_rules *ru = d ? &a->behavior.down : &a->behavior.up;
        for (int32_t i = 0; i < ru->n; i++)
            as->ev_keep = (int64_t)fmax((double)as->ev_keep, llround(ru->p[i].period_s * 1e9));
    }
    as->ready = sim_xcalloc((size_t)p->nrep, sizeof *as->ready);
    e->as = as;
    p->nact = 0;
    for (int32_t i = 0; i < p->nrep; i++) {
        eng_replica *r = &p->reps[i];
        r->fleet = ENG_FLEET_OFF;
        if (i < e->cfg.replicas) {
            set_state(as, r, ENG_FLEET_READY, 0);
            hold(as, r, 0);
            p->rep_list[p->nact++] = r;
        } else {
            eng_router_gone(r); /* its router started with every slot ready */
        }
    }
    as->tick = sim_schedule(e->ctx, as->interval, ENG_PRIO_AUTOSCALE, on_tick, as, 0);
}

void eng_autoscale_free(eng_engine *e)
{
    if (!e->as)
        return;
    free(e->as->rec);
    free(e->as->ev);
    free(e->as->ready);
    free(e->as->spans);
    free(e->as->trans);
    free(e->as->cnt);
    free(e->as->tt);
    free(e->as);
    e->as = NULL;
}

/* The length of [a, b) within [t0, t1), ns. */
static int64_t within(int64_t a, int64_t b, int64_t t0, int64_t t1)
{
    a = a > t0 ? a : t0;
    b = b < t1 ? b : t1;
    return b > a ? b - a : 0;
}

double eng_autoscale_gpu_s(const eng_engine *e, const eng_pool *p, int64_t t0, int64_t t1)
{
    const eng_autoscaler *as = e->as;
    int64_t ns = 0;
    for (int64_t k = 0; k < as->nspans; k++)
        ns += within(as->spans[k][0], as->spans[k][1], t0, t1);
    for (int32_t i = 0; i < p->nrep; i++)
        if (p->reps[i].fleet != ENG_FLEET_OFF)
            ns += within(p->reps[i].fleet_since, t1, t0, t1);
    return (double)p->plan.gpus * (double)ns / 1e9;
}

int eng_autoscale_summary(const eng_engine *e, eng_metric *out, int n, double dur)
{
    const eng_autoscaler *as = e->as;
    const eng_pool *p = &e->pools[0];
    double gpu_s = e->m.fleet_gpu_s;
    double v[] = {dur > 0 ? gpu_s / p->plan.gpus / dur : 0, (double)as->held_max, (double)as->ups,
                  (double)as->downs, (double)as->cold / 1e9};
    static const char *const names[] = {"replicas_mean", "replicas_max", "scale_ups", "scale_downs",
                                        "cold_start_s"};
    for (int i = 0; i < 5 && n < ENG_MAX_METRICS; i++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", names[i]);
        out[n++].value = v[i];
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

/* Adds the replicas in each state (n[ENG_FLEET_*]) over [a, b) to the windows it crosses. */
static void integrate(eng_fleet_window *win, int64_t w0, int64_t iv, const int32_t *n, int64_t a,
                      int64_t b)
{
    while (a < b) {
        int64_t end = (a / iv + 1) * iv;
        end = end < b ? end : b;
        eng_fleet_window *x = &win[a / iv - w0];
        x->serving_ns += n[ENG_FLEET_READY] * (end - a);
        x->starting_ns += n[ENG_FLEET_STARTING] * (end - a);
        x->draining_ns += n[ENG_FLEET_DRAINING] * (end - a);
        a = end;
    }
}

/* The replica time of each window from the state changes, within [t0, t1). */
static void replica_time(const eng_autoscaler *as, eng_fleet_window *win, int64_t w0, int64_t t0,
                         int64_t t1)
{
    int32_t n[4] = {0};
    int64_t prev = t0;
    for (int64_t k = 0; k < as->ntrans; k++) {
        const as_trans *c = &as->trans[k];
        int64_t t = c->t < t0 ? t0 : c->t > t1 ? t1 : c->t;
        integrate(win, w0, as->interval, n, prev, t);
        prev = t;
        n[c->from]--;
        n[c->to]++;
    }
    integrate(win, w0, as->interval, n, prev, t1);
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

int64_t eng_fleet_timeline(const eng_engine *e, eng_fleet_window **out)
{
    const eng_autoscaler *as = e->as;
    *out = NULL;
    if (!as || !e->m.completed || e->m.t_last_finish <= e->m.t_first_arrival)
        return 0;
    int64_t iv = as->interval, t0 = e->m.t_first_arrival, t1 = e->m.t_last_finish;
    int64_t w0 = t0 / iv, nw = (t1 - 1) / iv - w0 + 1;
    eng_fleet_window *win = sim_xcalloc((size_t)nw, sizeof *win);
    for (int64_t i = 0; i < nw; i++) {
        win[i].start_ns = i ? (w0 + i) * iv : t0;
        win[i].end_ns = i < nw - 1 ? (w0 + i + 1) * iv : t1;
    }
    replica_time(as, win, w0, t0, t1);
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
