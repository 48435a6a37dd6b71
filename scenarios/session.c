/*
 * session.c: multi-turn sessions (chat or tool-calling agents) as a workload source's arrivals.
 *
 * A session's turn k is sent a think time after turn k - 1's answer came back; its prompt is the
 * session's context so far (the system prompt, every earlier prompt and answer) plus the turn's
 * new tokens, as content segments, so a prefix cache can reuse what the session computed before.
 * Sessions start by the arrival process: `closed` keeps `concurrency` sessions going (a client
 * starts its next session arrival.think_time_ms after its last one ended; client i of N starts
 * its first at i x ramp_up_s / N), the rate processes start new sessions at their rate.
 *
 * Pending turns wait in a min-heap by (time, session number), so arrivals come out in time order
 * whatever order answers return in. Every draw (turns, lengths, think times) comes from the
 * session stream in the order turns are sent, which the engine's event order fixes: runs repeat.
 * Memory: one slot per session in flight (its segments grow two per turn); slots are reused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "heap.h"
#include "rng.h"
#include "scn_int.h"

typedef struct sess {
    eng_segment *seg; /* its context: system prompt, prompts' new parts and answers */
    int32_t nseg, capseg;
    int64_t ctx;     /* tokens in seg */
    int32_t turn;    /* turns sent */
    int32_t turns;   /* turns it will have */
    int64_t number;  /* sessions started before it (its identity) */
    int64_t ready;   /* ns: when its next turn (or, for a client's next session, its start) */
    int32_t client;  /* closed loop: the client running it; -1 otherwise */
    int starting;    /* 1: the slot waits to start a new session at `ready` */
    uint64_t out_id; /* the answer in flight */
    int32_t out_len;
    int32_t heap_idx;  /* -1 when not in the heap */
    int32_t next_free; /* free-list link */
} sess;

struct scn_sessions_src {
    scn_workload w;
    int32_t ctx_limit;
    gsl_rng *g, *g_arr;
    scn_sampler *turns, *user, *tool, *think, *out;
    sess *s;
    int32_t ns, caps, free_slot;
    int32_t *heap; /* slot indices */
    int32_t nheap, capheap;
    int64_t started;    /* sessions started */
    double next_open_s; /* rate processes: the next session's start, s (-1: not drawn) */
    int64_t clipped;
};

/* ---- the heap of pending turns ---- */

static int before(const scn_sessions_src *q, int32_t a, int32_t b)
{
    const sess *x = &q->s[a], *y = &q->s[b];
    return x->ready < y->ready || (x->ready == y->ready && x->number < y->number);
}

static void heap_set(scn_sessions_src *q, int32_t i, int32_t slot)
{
    q->heap[i] = slot;
    q->s[slot].heap_idx = i;
}

/* Moves slot up from heap position i to its place. */
static void sift_up(scn_sessions_src *q, int32_t i, int32_t slot)
{
    ENG_HEAP_SIFT_UP(q, q->heap, i, slot, before, heap_set);
}

/* Moves slot down from heap position i to its place. */
static void sift_down(scn_sessions_src *q, int32_t i, int32_t slot)
{
    ENG_HEAP_SIFT_DOWN(q, q->heap, q->nheap, i, slot, before, heap_set);
}

static void heap_push(scn_sessions_src *q, int32_t slot)
{
    if (q->nheap == q->capheap) {
        q->capheap = q->capheap ? 2 * q->capheap : 64;
        q->heap = sim_xrealloc(q->heap, (size_t)q->capheap * sizeof *q->heap);
    }
    sift_up(q, q->nheap++, slot);
}

static int32_t heap_pop(scn_sessions_src *q)
{
    int32_t top = q->heap[0], last = q->heap[--q->nheap];
    q->s[top].heap_idx = -1;
    if (q->nheap > 0)
        sift_down(q, 0, last);
    return top;
}

/* ---- slots ---- */

/* A slot's index: a freed one, or a new one (its context empty) at the end of the array. */
static int32_t slot_alloc(scn_sessions_src *q)
{
    if (q->free_slot >= 0) {
        int32_t i = q->free_slot;
        q->free_slot = q->s[i].next_free;
        return i;
    }
    if (q->ns == q->caps) {
        q->caps = q->caps ? 2 * q->caps : 64;
        q->s = sim_xrealloc(q->s, (size_t)q->caps * sizeof *q->s);
    }
    q->s[q->ns].seg = NULL;
    q->s[q->ns].capseg = 0;
    return q->ns++;
}

/* A slot for a session not yet started, out of the heap, run by no client. */
static int32_t slot_new(scn_sessions_src *q)
{
    int32_t i = slot_alloc(q);
    sess *x = &q->s[i];
    x->nseg = 0;
    x->ctx = 0;
    x->turn = x->turns = 0;
    x->client = -1;
    x->starting = 0;
    x->heap_idx = -1;
    return i;
}

static void slot_free(scn_sessions_src *q, int32_t i)
{
    q->s[i].next_free = q->free_slot;
    q->free_slot = i;
}

static void add_seg(sess *x, uint64_t id, int32_t len)
{
    if (x->nseg == x->capseg) {
        x->capseg = x->capseg ? 2 * x->capseg : 8;
        x->seg = sim_xrealloc(x->seg, (size_t)x->capseg * sizeof *x->seg);
    }
    x->seg[x->nseg++] = (eng_segment){id, len};
    x->ctx += len;
}

/* Content ids: a session's parts, the shared system prompt. */
static uint64_t content_id(uint64_t a, uint64_t b)
{
    uint64_t x = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0x7365737369306e));
    x ^= x >> 29;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    return x ^ (x >> 32);
}

/* Starts a new session in slot i at time t (ns). */
static void start_session(scn_sessions_src *q, int32_t i, int64_t t)
{
    sess *x = &q->s[i];
    int clipped = 0;
    x->nseg = 0;
    x->ctx = 0;
    x->turn = 0;
    x->turns = (int32_t)scn_sampler_draw(q->turns, q->g, &clipped);
    x->number = q->started++;
    x->starting = 0;
    x->ready = t;
    if (q->w.sessions.system_tokens > 0)
        add_seg(x, content_id(UINT64_C(0x73797374656d), 0), q->w.sessions.system_tokens);
}

/* The next session's start of an open (rate) process, ns. */
static int64_t open_start(scn_sessions_src *q)
{
    const scn_arrival *a = &q->w.arrival;
    if (q->next_open_s < 0) {
        q->next_open_s = 0;
    } else if (a->kind == SCN_ARR_CONSTANT) {
        q->next_open_s += 1.0 / a->rate;
    } else if (a->kind == SCN_ARR_GAMMA) {
        double k = 1.0 / (a->cv * a->cv);
        q->next_open_s += gsl_ran_gamma(q->g_arr, k, 1.0 / (a->rate * k));
    } else {
        q->next_open_s += gsl_ran_exponential(q->g_arr, 1.0 / a->rate);
    }
    return (int64_t)llround(q->next_open_s * 1e9);
}

/* ---- creation ---- */

/* The samplers of w's turns, new tokens, tool output, think times and answers. 0, or -1 with
 * err. */
static int new_samplers(scn_sessions_src *q, const scn_workload *w, scn_cache *cache, sim_err *err)
{
    const scn_sessions *ss = &w->sessions;
    if (!(q->turns = scn_sampler_new(&ss->turns, "workload.sessions.turns", 0, cache, err)) ||
        !(q->user = scn_sampler_new(&ss->user, "workload.sessions.user_tokens", 0, cache, err)) ||
        (ss->agent &&
         !(q->tool = scn_sampler_new(&ss->tool, "workload.sessions.tool_tokens", 0, cache, err))) ||
        (ss->think_fixed_ms < 0 &&
         !(q->think =
               scn_sampler_new(&ss->think, "workload.sessions.think_time_ms", 0, cache, err))) ||
        !(q->out = scn_sampler_new(&w->output, "workload.output_tokens", 1, cache, err)))
        return -1;
    return 0;
}

/* A closed loop's clients, each waiting in the heap to start its first session. */
static void start_clients(scn_sessions_src *q, const scn_arrival *a)
{
    /* MODEL: client i of N starts at i x ramp / N (aiperf's --concurrency-ramp-duration
     * ramps concurrency over the ramp; vLLM bench serve --ramp-up-strategy linear) */
    int32_t n = a->concurrency;
    for (int32_t c = 0; c < n; c++) {
        int32_t i = slot_new(q);
        q->s[i].client = c;
        q->s[i].starting = 1;
        q->s[i].number = -n + c; /* orders simultaneous starts by client */
        q->s[i].ready = (int64_t)llround(a->ramp_up_s * 1e9 * c / n);
        heap_push(q, i);
    }
}

scn_sessions_src *scn_sessions_new(const scn_workload *w, int32_t ctx_limit, uint64_t seed,
                                   scn_cache *cache, sim_err *err)
{
    scn_sessions_src *q = sim_xcalloc(1, sizeof *q);
    q->w = *w;
    q->ctx_limit = ctx_limit;
    q->free_slot = -1;
    q->next_open_s = -1;
    q->g = sim_rng_new_stream(seed, SIM_STREAM_CLIENT);
    q->g_arr = sim_rng_new_stream(seed, SIM_STREAM_ARRIVALS);
    if (new_samplers(q, w, cache, err) != 0) {
        scn_sessions_free(q);
        return NULL;
    }
    if (w->arrival.kind == SCN_ARR_CLOSED)
        start_clients(q, &w->arrival);
    return q;
}

void scn_sessions_free(scn_sessions_src *q)
{
    if (!q)
        return;
    for (int32_t i = 0; i < q->ns; i++)
        free(q->s[i].seg);
    free(q->s);
    free(q->heap);
    scn_sampler_free(q->turns);
    scn_sampler_free(q->user);
    scn_sampler_free(q->tool);
    scn_sampler_free(q->think);
    scn_sampler_free(q->out);
    gsl_rng_free(q->g);
    gsl_rng_free(q->g_arr);
    free(q);
}

int64_t scn_sessions_clipped(const scn_sessions_src *q)
{
    return q->clipped;
}

/* ---- turns ---- */

/* Ends session i at now: a closed-loop client starts its next session after its think time. */
static void end_session(scn_sessions_src *q, int32_t i, int64_t now)
{
    sess *x = &q->s[i];
    if (x->client < 0) {
        slot_free(q, i);
        return;
    }
    x->starting = 1;
    x->ready = now + (int64_t)llround(q->w.arrival.think_time_ms * 1e6);
    heap_push(q, i);
}

/* The arrival of session x's (slot i's) turn just drawn, at time t: its whole context as the
 * prompt, tagged with its slot and session number. */
static void put_turn(const sess *x, int32_t i, int64_t t, eng_arrival *out)
{
    out->t = t;
    out->prompt = (int32_t)x->ctx;
    out->output = x->out_len;
    out->seg = x->seg;
    out->nseg = x->nseg;
    out->out_id = x->out_id;
    out->tag = (uint64_t)i + 1;
    out->session = (uint64_t)x->number + 1;
}

/* Fills out with session i's next turn at time t; 0 when the session cannot go on (its context
 * is full). A session's first turn is always sent, however long: the engine turns away a prompt
 * longer than its context (as a server answers such a request with an error), and every session
 * then makes progress (a closed loop whose first turns never fit would otherwise start sessions
 * forever at one instant). */
static int emit_turn(scn_sessions_src *q, int32_t i, int64_t t, eng_arrival *out)
{
    sess *x = &q->s[i];
    int clipped = 0;
    scn_sampler *fresh = x->turn > 0 && q->tool ? q->tool : q->user;
    int64_t add = scn_sampler_draw(fresh, q->g, &clipped);
    int64_t o = scn_sampler_draw(q->out, q->g, &clipped);
    q->clipped += clipped;
    if (q->ctx_limit > 0 && x->turn > 0 && x->ctx + add + o > q->ctx_limit)
        return 0;
    add_seg(x, content_id((uint64_t)x->number, (uint64_t)x->turn * 2), (int32_t)add);
    x->out_id = content_id((uint64_t)x->number, (uint64_t)x->turn * 2 + 1);
    x->out_len = (int32_t)o;
    x->turn++;
    put_turn(x, i, t, out);
    return 1;
}

/* The open process's next session start, ns (drawn the first time); INT64_MAX when the
 * sessions are not open. */
static int64_t open_due(scn_sessions_src *q, int open)
{
    if (!open)
        return INT64_MAX;
    if (q->next_open_s < 0)
        open_start(q);
    return (int64_t)llround(q->next_open_s * 1e9);
}

/* The slot whose turn comes first, the heap's top (at its time) or a new session of the open
 * process (at t_open), started when it is a session's start; its time into *t. */
static int32_t take_due(scn_sessions_src *q, int32_t top, int64_t t_open, int64_t *t)
{
    int32_t i;
    if (top >= 0 && q->s[top].ready <= t_open) {
        i = heap_pop(q);
        *t = q->s[i].ready;
        if (q->s[i].starting)
            start_session(q, i, *t);
        return i;
    }
    i = slot_new(q);
    *t = t_open;
    start_session(q, i, *t);
    open_start(q);
    return i;
}

int scn_sessions_next(scn_sessions_src *q, int64_t now, eng_arrival *out)
{
    int open = q->w.arrival.kind != SCN_ARR_CLOSED;
    for (;;) {
        int64_t t_open = open_due(q, open);
        int32_t top = q->nheap ? q->heap[0] : -1;
        if (top < 0 && !open)
            return ENG_SRC_LATER;
        /* nothing due yet: a finish before then may bring a turn forward, so the engine asks
         * again at the earliest known time or at the next finish */
        int64_t first = top >= 0 && q->s[top].ready < t_open ? q->s[top].ready : t_open;
        if (first > now) {
            out->t = first;
            return ENG_SRC_LATER;
        }
        int64_t t;
        int32_t i = take_due(q, top, t_open, &t);
        if (t < now)
            t = now;
        if (emit_turn(q, i, t, out))
            return ENG_SRC_OK;
        end_session(q, i, t);
    }
}

void scn_sessions_done(scn_sessions_src *q, int64_t now, const eng_request *rq)
{
    if (!rq || rq->tag == 0 || rq->tag > (uint64_t)q->ns)
        return;
    int32_t i = (int32_t)(rq->tag - 1);
    sess *x = &q->s[i];
    if (rq->status != ENG_RQ_FINISHED || x->turn >= x->turns) {
        end_session(q, i, now);
        return;
    }
    add_seg(x, x->out_id, x->out_len);
    int clipped = 0;
    int64_t think = q->w.sessions.think_fixed_ms >= 0
                        ? (int64_t)llround(q->w.sessions.think_fixed_ms * 1e6)
                        : scn_sampler_draw(q->think, q->g, &clipped) * 1000000;
    x->ready = now + think;
    heap_push(q, i);
}
