/*
 * fault.c: faults injected into an aggregated deployment's replicas (`faults:`): a crash, a
 * slowdown; and the router's retry of what a crash drops (`fault_retries:`).
 *
 * MODEL: a crash kills the replica's engine: every request on it, running or queued, loses its
 * KV and its progress (the prefix cache is gone too). With retries on, each re-enters the
 * router at once, as a gateway retries a request whose upstream reset (Envoy's retry_on
 * "reset", Istio's default retry policy), up to max_attempts attempts in all (gRPC's retry
 * policy counts the original in maxAttempts); its prompt is computed again and its whole output
 * generated again, and its TTFT counts from its original arrival. Without retries, or past the
 * attempts, it is lost: a rejection with the reason "lost in a replica crash", counted wherever
 * rejections are. Every request is retried alike, streaming or not (a gateway retries only
 * before the response starts; a client that re-sends on a broken stream is what is modelled).
 *
 * MODEL: the crashed replica is replaced as Kubernetes replaces a failed model server: the
 * kubelet restarts the container in place (restartPolicy Always, kubernetes.io "Pod Lifecycle",
 * container restarts: back-off 10 s, doubling, at most 300 s), or the Deployment's ReplicaSet
 * starts a new pod once the node is found gone (KServe runs the predictor as a Deployment); the
 * replacement is routed to only after its readiness probe passes, that is after the cold start
 * autoscale.c models (engine start, weights at the storage bandwidth, CUDA-graph capture).
 * duration_s is the time before that cold start begins (the back-off, or failure detection and
 * rescheduling: 0 by default). The replica's GPUs stay paid for throughout. While no replica is
 * ready, arriving and retried requests wait at the router for the first one that is (as
 * Knative's activator holds requests for a revision with no ready pod).
 *
 * MODEL: a `slow` fault multiplies the replica's forward passes' GPU time by `factor` for
 * duration_s: a GPU that throttles (thermal or power capping lowers its clocks) or shares its
 * memory bandwidth with a noisy neighbour. Approximation: one factor for every operator (a
 * clock cut slows compute-bound work more than memory-bound work); an iteration started before
 * the fault's end keeps its slowed time.
 *
 * Not modelled (refused by eng_fault_check): link_down (a KV transfer link or an offload store
 * going down), faults in a disaggregated deployment, and a crash where the replica's state
 * outlives it elsewhere (offload tiers, a pipeline's shared stages). A router keeping state per
 * replica forgets the crashed one's when it leaves the ready replicas (router.h: on_gone).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* after the arrivals and wake-ups of their instant, before the autoscaler's evaluation */
enum { ENG_PRIO_FAULT = 25 };

const eng_key eng_fault_keys[] = {
    {"at_s", ENG_KEY_NUM, ENG_KEY_REQUIRED, 0, 1e9, "s", NULL, NULL,
     "when the fault strikes, from the start of the simulation", ENG_KEY_AT(eng_fault, at_s)},
    {"replica", ENG_KEY_INT, ENG_KEY_REQUIRED, 0, 1 << 16, "", NULL, NULL,
     "the replica it strikes: its index, from 0 (under autoscaling, of max_replicas)",
     ENG_KEY_AT(eng_fault, replica)},
    {"kind", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL, "crash|slow|link_down",
     "crash: its requests dropped, a replacement after the cold start; slow: its steps longer; "
     "link_down is not modelled yet",
     ENG_KEY_AT(eng_fault, kind)},
    {"duration_s", ENG_KEY_NUM, 0, 0, 1e9, "s", "0", NULL,
     "slow: how long it lasts; crash: the wait before the replacement's cold start begins",
     ENG_KEY_AT(eng_fault, duration_s)},
    {"factor", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 1, 1e6, "", "2", NULL,
     "slow: the replica's forward passes take this many times as long",
     ENG_KEY_AT(eng_fault, factor)},
    ENG_KEY_END};

const eng_key eng_fault_retry_keys[] = {
    {"enabled", ENG_KEY_BOOL, 0, 0, 0, "", "true", NULL,
     "a crashed replica's requests re-enter the router (false: they are lost)",
     ENG_KEY_AT(eng_faults_cfg, retry)},
    {"max_attempts", ENG_KEY_INT, 0, 1, 1000, "", "3", NULL,
     "attempts a request gets, the first included (then it is lost)",
     ENG_KEY_AT(eng_faults_cfg, max_attempts)},
    ENG_KEY_END};

typedef struct eng_faulter {
    eng_engine *e;
    sim_event_id *restart; /* per replica: its replacement's readiness */
    eng_rq_fifo park;      /* waiting for a ready replica */
    eng_request **buf;     /* a crashed replica's requests */
    int32_t nbuf, capbuf;
    int64_t crashes, retried, lost, held; /* held: requests that waited for a ready replica */
} eng_faulter;

static int32_t slots(const eng_config *c)
{
    return c->fleet.autoscale.enabled ? c->fleet.autoscale.max_replicas : c->replicas;
}

/* What a crash cannot rebuild; NULL when nothing. */
static const char *crash_refused(const eng_config *c)
{
    if (c->offload.ntiers > 0)
        return "kv_offload tiers (what they hold for the replica)";
    return NULL;
}

/* Faults i and j strike one replica at overlapping times (a slow fault's span). */
static int overlap(const eng_fault *a, const eng_fault *b)
{
    double a1 = a->at_s + (a->kind == ENG_FAULT_SLOW ? a->duration_s : 0);
    double b1 = b->at_s + (b->kind == ENG_FAULT_SLOW ? b->duration_s : 0);
    return a->replica == b->replica && a->at_s < b1 && b->at_s < a1;
}

int eng_fault_check(const eng_config *c, sim_err *err)
{
    const eng_faults_cfg *fc = &c->fleet.faults;
    for (int32_t i = 0; i < fc->n; i++) {
        const eng_fault *f = &fc->f[i];
        const char *why = f->kind == ENG_FAULT_CRASH ? crash_refused(c) : NULL;
        if (f->kind == ENG_FAULT_LINK_DOWN)
            return sim_errf(err,
                            "faults[%d]: kind link_down is not modelled yet (a KV transfer "
                            "link or an offload store going down); use crash or slow",
                            i);
        if (c->pd.enabled || c->pipeline_parallel > 1)
            return sim_errf(err, "faults[%d]: faults in %s are not modelled yet", i,
                            c->pd.enabled ? "a disaggregated deployment (prefill and decode pools)"
                                          : "a pipelined deployment (pipeline_parallel)");
        if (why)
            return sim_errf(err, "faults[%d]: a crash with %s is not modelled yet", i, why);
        if (f->replica >= slots(c))
            return sim_errf(err, "faults[%d]: replica %d, but the deployment has %d (0 .. %d)", i,
                            f->replica, slots(c), slots(c) - 1);
        if (f->kind == ENG_FAULT_SLOW && !(f->duration_s > 0))
            return sim_errf(err, "faults[%d]: a slow fault needs duration_s > 0", i);
        for (int32_t j = 0; j < i; j++)
            if (f->kind == ENG_FAULT_SLOW && fc->f[j].kind == ENG_FAULT_SLOW &&
                overlap(f, &fc->f[j]))
                return sim_errf(err,
                                "faults[%d] and faults[%d]: two slow faults overlap on "
                                "replica %d",
                                j, i, f->replica);
    }
    return 0;
}

static void push(eng_faulter *f, eng_request *rq)
{
    if (f->nbuf == f->capbuf) {
        f->capbuf = f->capbuf ? 2 * f->capbuf : 64;
        f->buf = sim_xrealloc(f->buf, (size_t)f->capbuf * sizeof *f->buf);
    }
    f->buf[f->nbuf++] = rq;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = (*(eng_request *const *)a)->id, y = (*(eng_request *const *)b)->id;
    return (x > y) - (x < y);
}

/* Every request on r, in arrival order: those it holds (routed here, not done) and those whose
 * last token async output processing holds back. A crash is rare: one walk over the engine's
 * requests. */
static void collect(eng_faulter *f, const eng_replica *r)
{
    f->nbuf = 0;
    for (const eng_slab *s = f->e->slabs; s; s = s->next)
        for (int i = 0; i < ENG_SLAB; i++) {
            eng_request *rq = (eng_request *)&s->rq[i];
            if (rq->attempts > 0 && rq->replica == r->id &&
                (rq->status == ENG_RQ_WAITING || rq->status == ENG_RQ_PREFILL ||
                 rq->status == ENG_RQ_DECODE || rq->status == ENG_RQ_SWAPPED))
                push(f, rq);
        }
    for (int32_t i = 0; i < r->nunseen; i++)
        if (r->unseen[i]->status == ENG_RQ_FINISHED)
            push(f, r->unseen[i]);
    if (f->nbuf > 1) /* (none: a replica started and crashed before its first request) */
        qsort(f->buf, (size_t)f->nbuf, sizeof *f->buf, by_id);
}

/* r's engine as a fresh start leaves it: no iteration in flight, an empty KV cache and cohort,
 * its policy's state anew. Counters kept for the summary (speculative decoding's) survive. */
static void reset_replica(eng_replica *r)
{
    eng_engine *e = r->e;
    eng_pool *p = r->pool;
    if (r->iter_ev) { /* its steps are recorded: the replacement's are numbered after them */
        sim_cancel(e->ctx, r->iter_ev);
        r->iter += r->nsteps;
    }
    if (r->wake_ev)
        sim_cancel(e->ctx, r->wake_ev);
    r->iter_ev = r->wake_ev = 0;
    r->wake_at = -1;
    if (r->ops->fini)
        r->ops->fini(r->st);
    memset(r->st, 0, p->ops->state_size ? p->ops->state_size : 1);
    int64_t steps = r->co.spec_steps, drafts = r->co.spec_drafts, acc = r->co.spec_accepted;
    eng_cohort_free(&r->co);
    eng_cohort_init(&r->co, e, &p->cfg);
    r->co.spec_steps = steps;
    r->co.spec_drafts = drafts;
    r->co.spec_accepted = acc;
    eng_kv_drop(&r->kv);
    eng_kv_init(&r->kv, &p->plan, p->cfg.block_size,
                1 + (p->cfg.spec.method != ENG_SPEC_NONE ? p->cfg.spec.k : 0));
    r->kv.table_all = e->cfg.prefix_table_all;
    int rc = eng_sched_start(p->ops, r->st, &p->cfg.sched, r);
    SIM_CHECK(e->ctx, rc == 0); /* the settings it started with */
    r->busy = 0;
    r->batch.nchunks = 0;
    r->batch.decode = 0;
    r->pending_xfer_bytes = 0;
    r->nsteps = 1;
    r->preempted_now = r->run_left = r->run_pad_seqs = r->async_pad_seqs = 0;
    r->run_pad_ctx = r->async_pad_ctx = r->async_pad_capped = 0;
    r->nunseen = 0;
    r->nfetch = 0; /* collect took them: their status is waiting */
    r->gpu_free_at = r->gpu_start = sim_now(e->ctx);
}

static void on_restarted(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_replica *r = obj;
    r->e->fault->restart[r->id] = 0;
    eng_replica_ready(r);
}

/* r serves again at `at` (under autoscaling, as a replica starting). */
static void restart(eng_faulter *f, eng_replica *r, int64_t at)
{
    int32_t i = r->id; /* (every group's replicas, in a mixed pool) */
    if (eng_autoscale_restart(r, at))
        return;
    if (f->restart[i])
        sim_cancel(f->e->ctx, f->restart[i]);
    r->fleet = ENG_FLEET_STARTING;
    f->restart[i] = sim_schedule(f->e->ctx, at, ENG_PRIO_FAULT, on_restarted, r, 0);
}

static void crash(eng_faulter *f, eng_replica *r, double wait_s)
{
    eng_engine *e = f->e;
    const eng_faults_cfg *fc = &e->cfg.fleet.faults;
    int64_t now = sim_now(e->ctx);
    if (r->fleet == ENG_FLEET_OFF)
        return; /* an autoscaled slot holding no replica: nothing to crash */
    f->crashes++;
    if (r->fleet == ENG_FLEET_READY)
        eng_pool_unlist(r->pool->route, r); /* (a mixed pool's: the first group's list) */
    collect(f, r);
    reset_replica(r);
    int32_t n = 0;
    for (int32_t i = 0; i < f->nbuf; i++) {
        eng_request *rq = f->buf[i];
        int lost = !fc->retry || rq->attempts >= fc->max_attempts;
        eng_drop_request(r, rq, lost);
        f->lost += lost;
        if (!lost)
            f->buf[n++] = rq;
    }
    SIM_ASSERT(e->ctx, r->outstanding == 0 && r->waiting == 0 && r->outstanding_tokens == 0);
    if (r->fleet == ENG_FLEET_DRAINING)
        eng_autoscale_drained(r); /* it was leaving: it is gone */
    else if (r->fleet != ENG_FLEET_OFF) {
        double cold =
            eng_autoscale_cold_start_s(&e->cfg.fleet.autoscale, r->pool->plan.weight_bytes);
        restart(f, r, now + (int64_t)llround((wait_s + cold) * 1e9));
    }
    f->retried += n;
    for (int32_t i = 0; i < n; i++)
        eng_dispatch(e, f->buf[i], now);
}

static void on_slow_end(sim_ctx *ctx, void *obj, int64_t arg)
{
    ((eng_replica *)obj)->slow = 0;
}

static void on_fault(sim_ctx *ctx, void *obj, int64_t i)
{
    eng_faulter *f = obj;
    eng_engine *e = f->e;
    const eng_fault *ft = &e->cfg.fleet.faults.f[i];
    eng_replica *r = &e->reps[ft->replica]; /* (a mixed pool's groups follow each other) */
    if (e->failed)
        return;
    if (ft->kind == ENG_FAULT_CRASH) {
        crash(f, r, ft->duration_s);
        return;
    }
    r->slow = ft->factor;
    sim_schedule(ctx, sim_now(ctx) + (int64_t)llround(ft->duration_s * 1e9), ENG_PRIO_FAULT,
                 on_slow_end, r, 0);
}

void eng_fault_init(eng_engine *e)
{
    const eng_faults_cfg *fc = &e->cfg.fleet.faults;
    if (fc->n == 0)
        return;
    eng_faulter *f = sim_xcalloc(1, sizeof *f);
    f->e = e;
    f->restart = sim_xcalloc((size_t)e->nrep, sizeof *f->restart);
    e->fault = f;
    for (int32_t i = 0; i < fc->n; i++)
        sim_schedule(e->ctx, (int64_t)llround(fc->f[i].at_s * 1e9), ENG_PRIO_FAULT, on_fault, f, i);
}

void eng_fault_free(eng_engine *e)
{
    if (!e->fault)
        return;
    SIM_FREE_ALL(e->fault->restart, e->fault->buf, e->fault);
    e->fault = NULL;
}

void eng_fault_park(eng_engine *e, eng_request *rq)
{
    eng_faulter *f = e->fault;
    SIM_CHECK(e->ctx, f != NULL); /* only a crash leaves no replica ready */
    rq->replica = -1;
    rq->status = ENG_RQ_WAITING;
    eng_fifo_push(&f->park, rq);
    f->held++;
    e->in_system++;
}

void eng_fault_ready(eng_engine *e)
{
    eng_faulter *f = e->fault;
    if (!f)
        return;
    int64_t now = sim_now(e->ctx);
    while (f->park.head && e->pools[0].nact > 0) {
        eng_request *rq = eng_fifo_pop(&f->park);
        e->in_system--;
        eng_dispatch(e, rq, now);
    }
}

int eng_fault_summary(const eng_engine *e, eng_metric *out, int n)
{
    const eng_faulter *f = e->fault;
    static const char *const names[] = {"fault_crashes", "fault_retried", "fault_lost",
                                        "fault_held"};
    double v[] = {(double)f->crashes, (double)f->retried, (double)f->lost, (double)f->held};
    for (int i = 0; i < 4 && n < ENG_MAX_METRICS; i++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", names[i]);
        out[n++].value = v[i];
    }
    return n;
}
