/*
 * link.c: the link between a disaggregated deployment's pools. Each KV transfer is a flow from
 * its prefill replica's port (the sending GPUs' links) to its decode replica's port (the
 * receiving GPUs' links); see engine_int.h for the structures.
 *
 * MODEL: the flows with bytes to move on a port share it equally (processor sharing), and a
 * flow moves at the smaller of its two shares and of its own cap. RDMA transfer engines
 * (NIXL over UCX, Mooncake's transfer engine) post a transfer's blocks as many RDMA writes or
 * reads on the NIC's queue pairs, which the NIC serves in turn, so concurrent transfers through
 * one NIC progress together rather than one after the other (a FIFO would make a short
 * transfer wait behind a long one, which RDMA does not do). The share is not redistributed: a
 * flow held below its share at one end (by its other end, its cap or the pace of its prefill)
 * leaves that bandwidth unused, where a max-min fair network would give it to the others; the
 * two agree whenever the flows on a port are alike. The fabric between the ports (a
 * rail-optimised fat tree) is taken as non-blocking.
 *
 * A flow's bytes are released to it all at once (after the prefill) or over production windows
 * (layer-wise: a prefill chunk's KV is released evenly while its forward pass runs, its last
 * layer's at the end); it never sends bytes before they are released. Between its events a
 * flow's rate is constant; an event (a window opening or closing, its backlog emptying, a flow
 * starting or finishing on one of its ports) advances the flows on the two ports concerned and
 * recomputes their rates: O(flows on those ports), nothing per token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_int.h"

#define FLOW_SLAB 256

/* Bytes below which a backlog counts as sent (rounding of rate x time). */
static double eps(double bytes)
{
    return 1e-3 + 1e-9 * bytes;
}

static eng_flow *flow_alloc(eng_engine *e)
{
    if (!e->free_flows) {
        eng_flow *slab = sim_xcalloc(FLOW_SLAB, sizeof *slab);
        e->flow_slabs =
            sim_xrealloc(e->flow_slabs, (size_t)(e->nflow_slabs + 1) * sizeof *e->flow_slabs);
        e->flow_slabs[e->nflow_slabs++] = slab;
        for (int i = FLOW_SLAB - 1; i >= 0; i--) {
            slab[i].next_free = e->free_flows;
            e->free_flows = &slab[i];
        }
    }
    eng_flow *f = e->free_flows;
    e->free_flows = f->next_free;
    return f;
}

void eng_link_fini(eng_engine *e)
{
    for (int32_t i = 0; i < e->nflow_slabs; i++)
        free(e->flow_slabs[i]);
    free(e->flow_slabs);
    e->flow_slabs = NULL;
    e->nflow_slabs = 0;
    e->free_flows = NULL;
}

double eng_flow_released(const eng_flow *f, int64_t t)
{
    if (f->p1 <= f->p0 || t <= f->p0)
        return f->base;
    if (t >= f->p1)
        return f->base + f->prod * (double)(f->p1 - f->p0) + f->last;
    return f->base + f->prod * (double)(t - f->p0);
}

static int producing(const eng_flow *f, int64_t t)
{
    return f->p1 > f->p0 && t >= f->p0 && t < f->p1 && f->prod > 0;
}

/* Moves f's sent bytes to now at its current rate (never past what is released). */
static void advance(eng_flow *f, int64_t now)
{
    if (now > f->t_upd) {
        double r = eng_flow_released(f, now);
        f->sent += f->rate * (double)(now - f->t_upd);
        if (f->sent > r)
            f->sent = r;
        f->t_upd = now;
    }
}

/* A window that has closed by now becomes part of the base. */
static void fold(eng_flow *f, int64_t now)
{
    if (f->p1 > f->p0 && now >= f->p1) {
        f->base = eng_flow_released(f, now);
        f->p0 = f->p1 = 0;
        f->prod = f->last = 0;
    }
}

static double backlog(const eng_flow *f, int64_t now)
{
    double b = eng_flow_released(f, now) - f->sent;
    return b > eps(f->sent) ? b : 0;
}

/* Whether f has bytes to move now: a backlog, or a window producing. */
static int wants(const eng_flow *f, int64_t now)
{
    return backlog(f, now) > 0 || producing(f, now);
}

/* Counts f in its ports' n when it has bytes to move now, and out when it has not. */
static void settle(eng_flow *f, int64_t now)
{
    int d = wants(f, now);
    if (d == f->demanding)
        return;
    int step = d ? 1 : -1;
    f->src->n += step;
    f->dst->n += step;
    f->demanding = d;
}

static int finished(const eng_flow *f, int64_t now)
{
    return f->final && !(f->p1 > f->p0 && now < f->p1) && backlog(f, now) <= 0;
}

static void on_flow(sim_ctx *ctx, void *obj, int64_t arg);

/* f's rate from now on, and its next event: a window opening or closing, or its backlog
 * emptying (its last byte, when everything has been released). */
static void reschedule(eng_flow *f, int64_t now)
{
    eng_engine *e = f->e;
    double share = 0;
    if (f->demanding) {
        share = f->cap;
        double s = f->src->cap / f->src->n, d = f->dst->cap / f->dst->n;
        share = s < share ? s : share;
        share = d < share ? d : share;
    }
    double b = backlog(f, now), prod = producing(f, now) ? f->prod : 0;
    f->rate = b > 0 ? share : (prod < share ? prod : share);
    int64_t next = INT64_MAX;
    /* a flow re-rated by another's event just as its own backlog emptied (or it was done):
     * its own event settles it now */
    if (wants(f, now) != f->demanding || finished(f, now))
        next = now;
    else if (f->p1 > f->p0 && now < f->p0)
        next = f->p0;
    else if (f->p1 > f->p0 && now < f->p1)
        next = f->p1;
    if (b > 0 && f->rate > prod) {
        double dt = ceil(b / (f->rate - prod));
        if (dt < (double)(INT64_MAX / 2) && now + (int64_t)dt < next)
            next = now + (int64_t)dt;
    }
    if (f->ev)
        sim_cancel(e->ctx, f->ev);
    f->ev = next == INT64_MAX ? 0 : sim_schedule(e->ctx, next, ENG_PRIO_XFER, on_flow, f, 0);
}

/* Adds f at the head of port p's list. */
static void link_on(eng_port *p, eng_flow *f)
{
    int s = eng_port_side(p);
    f->on[s].next = p->head;
    if (p->head)
        p->head->on[s].prev = f;
    p->head = f;
}

/* Takes f out of port p's list. */
static void unlink_on(eng_port *p, eng_flow *f)
{
    int s = eng_port_side(p);
    eng_flow *prev = f->on[s].prev, *next = f->on[s].next;
    if (prev)
        prev->on[s].next = next;
    else
        p->head = next;
    if (next)
        next->on[s].prev = prev;
}

static void unlink_flow(eng_flow *f)
{
    unlink_on(f->src, f);
    unlink_on(f->dst, f);
}

/* The next flow after g on port p's list (a sending port's or a receiving port's). */
static eng_flow *next_on(const eng_port *p, const eng_flow *g)
{
    return g->on[eng_port_side(p)].next;
}

static void advance_port(eng_port *p, int64_t now)
{
    for (eng_flow *g = p->head; g; g = next_on(p, g))
        advance(g, now);
}

static void reschedule_port(eng_port *p, int64_t now)
{
    for (eng_flow *g = p->head; g; g = next_on(p, g))
        reschedule(g, now);
}

/* Brings f's two ports to now, lets change() alter f, then settles f and re-rates every flow
 * on its ports; a flow that has sent its last byte closes and tells the engine. */
static void touch(eng_flow *f, int64_t now, void (*change)(eng_flow *, void *), void *arg)
{
    eng_port *src = f->src, *dst = f->dst;
    advance_port(src, now);
    advance_port(dst, now);
    if (change)
        change(f, arg);
    fold(f, now);
    settle(f, now);
    int done = finished(f, now);
    if (done) {
        if (f->demanding) {
            src->n--;
            dst->n--;
        }
        if (f->ev)
            sim_cancel(f->e->ctx, f->ev);
        unlink_flow(f);
    }
    reschedule_port(src, now);
    reschedule_port(dst, now);
    if (done) {
        eng_engine *e = f->e;
        eng_request *rq = f->rq;
        f->next_free = e->free_flows;
        e->free_flows = f;
        if (rq) {
            rq->pd_flow = NULL;
            eng_pd_flow_done(e, rq, now);
        }
    }
}

static void do_close(eng_flow *f, void *arg)
{
    f->p0 = f->p1 = 0;
    f->base = f->sent;
    f->final = 1;
}

void eng_flow_close(eng_flow *f, int64_t now)
{
    if (f->rq)
        f->rq->pd_flow = NULL;
    f->rq = NULL; /* touch tells no one */
    touch(f, now, do_close, NULL);
}

static void on_flow(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_flow *f = obj;
    f->ev = 0;
    touch(f, sim_now(ctx), NULL, NULL);
}

eng_flow *eng_flow_open(eng_engine *e, eng_request *rq, eng_port *src, eng_port *dst, double cap,
                        int64_t now)
{
    SIM_CHECK(e->ctx, cap > 0 && src->cap > 0 && dst->cap > 0 && src->send && !dst->send);
    eng_flow *f = flow_alloc(e);
    *f = (eng_flow){.e = e, .rq = rq, .src = src, .dst = dst, .cap = cap, .t_upd = now};
    link_on(src, f);
    link_on(dst, f);
    rq->pd_flow = f;
    return f;
}

typedef struct release_arg {
    double bytes;
    int final;
    int64_t t0, t1;
    double linear, last;
} release_arg;

static void do_release(eng_flow *f, void *arg)
{
    release_arg *a = arg;
    SIM_CHECK(f->e->ctx, !(f->p1 > f->p0 && f->t_upd < f->p1));
    fold(f, f->t_upd);
    f->base += a->bytes;
    f->final = a->final;
}

void eng_flow_release(eng_flow *f, double bytes, int final, int64_t now)
{
    release_arg a = {.bytes = bytes, .final = final};
    touch(f, now, do_release, &a);
}

static void do_window(eng_flow *f, void *arg)
{
    release_arg *a = arg;
    fold(f, f->t_upd);
    SIM_CHECK(f->e->ctx, f->p1 <= f->p0 && a->t0 >= f->t_upd && a->t1 > a->t0);
    f->p0 = a->t0;
    f->p1 = a->t1;
    f->prod = a->linear / (double)(a->t1 - a->t0);
    f->last = a->last;
    f->final = a->final;
}

void eng_flow_window(eng_flow *f, int64_t t0, int64_t t1, double linear, double last, int final,
                     int64_t now)
{
    release_arg a = {.final = final, .t0 = t0, .t1 = t1, .linear = linear, .last = last};
    touch(f, now, do_window, &a);
}

int eng_link_check(const eng_engine *e, char *buf, size_t len)
{
    for (int32_t i = 0; i < e->nrep; i++) {
        const eng_port *p = &e->reps[i].port;
        int32_t n = 0;
        for (const eng_flow *g = p->head; g; g = next_on(p, g)) {
            if ((p->send ? g->src : g->dst) != p || g->sent < 0 ||
                g->sent > eng_flow_released(g, g->t_upd) + eps(g->sent) ||
                (g->demanding && !g->ev)) {
                snprintf(buf, len, "replica %d: a transfer on its link is inconsistent", i);
                return -1;
            }
            n += g->demanding;
        }
        if (n != p->n) {
            snprintf(buf, len, "replica %d: link counts %d transfers moving bytes, %d do", i, p->n,
                     n);
            return -1;
        }
    }
    return 0;
}
