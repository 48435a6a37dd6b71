/*
 * router.c: the routers llmsim knows and their registry. Adding a router: its ops table here and
 * one line in the registry table below.
 *
 * Routers read the replicas' load through engine.h's accessors only, and keep their own state
 * (round robin's cursor) in the state the engine allocates for them. Ties go to the lowest index.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- round_robin ---- */

typedef struct rr_state {
    int32_t next; /* index of the next replica */
} rr_state;

static int32_t rr_pick(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                       gsl_rng *rng)
{
    rr_state *s = st;
    int32_t i = s->next;
    s->next = (s->next + 1) % n;
    return i;
}

static const eng_router_ops round_robin = {
    .name = "round_robin",
    .summary = "each replica in turn",
    .state_size = sizeof(rr_state),
    .pick = rr_pick,
};

/* ---- least_outstanding, least_tokens ---- */

static int32_t least_outstanding_pick(void *st, const eng_replica *const *reps, int32_t n,
                                      const eng_request *rq, gsl_rng *rng)
{
    /* MODEL: least connections (nginx's least_conn): the replica with the fewest requests
     * routed to it and not yet done */
    int32_t best = 0;
    int64_t low = eng_replica_outstanding(reps[0]);
    for (int32_t i = 1; i < n; i++) {
        int64_t x = eng_replica_outstanding(reps[i]);
        if (x < low) {
            best = i;
            low = x;
        }
    }
    return best;
}

static const eng_router_ops least_outstanding = {
    .name = "least_outstanding",
    .summary = "the replica with the fewest requests not yet done",
    .pick = least_outstanding_pick,
};

static int32_t least_tokens_pick(void *st, const eng_replica *const *reps, int32_t n,
                                 const eng_request *rq, gsl_rng *rng)
{
    /* MODEL: least work, weighed as the prompt + output tokens of the requests routed to each
     * replica and not yet done (whole requests: tokens already computed still count) */
    int32_t best = 0;
    int64_t low = eng_replica_outstanding_tokens(reps[0]);
    for (int32_t i = 1; i < n; i++) {
        int64_t x = eng_replica_outstanding_tokens(reps[i]);
        if (x < low) {
            best = i;
            low = x;
        }
    }
    return best;
}

static const eng_router_ops least_tokens = {
    .name = "least_tokens",
    .summary = "the replica with the fewest prompt + output tokens not yet done",
    .pick = least_tokens_pick,
};

/* ---- power_of_two ---- */

static int32_t power_of_two_pick(void *st, const eng_replica *const *reps, int32_t n,
                                 const eng_request *rq, gsl_rng *rng)
{
    /* MODEL: power of two choices (Mitzenmacher): two replicas at random, the less loaded */
    int32_t a = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    int32_t b = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    return eng_replica_outstanding(reps[b]) < eng_replica_outstanding(reps[a]) ? b : a;
}

static const eng_router_ops power_of_two = {
    .name = "power_of_two",
    .summary = "two replicas at random, the one with fewer requests not yet done",
    .pick = power_of_two_pick,
};

/* ---- prefix_affinity ---- */

static int32_t prefix_affinity_pick(void *st, const eng_replica *const *reps, int32_t n,
                                    const eng_request *rq, gsl_rng *rng)
{
    /* MODEL: precise prefix-cache-aware routing (llm-d's precise-prefix-cache-scorer, fed by
     * vLLM's KV events; SGLang router's cache-aware policy): the replica holding the longest
     * cached prefix of the prompt; among equals, the one with the fewest requests not done */
    int32_t best = 0, hit = eng_replica_prefix_match(reps[0], rq);
    int64_t load = eng_replica_outstanding(reps[0]);
    for (int32_t i = 1; i < n; i++) {
        int32_t h = eng_replica_prefix_match(reps[i], rq);
        int64_t x = eng_replica_outstanding(reps[i]);
        if (h > hit || (h == hit && x < load)) {
            best = i;
            hit = h;
            load = x;
        }
    }
    return best;
}

static const eng_router_ops prefix_affinity = {
    .name = "prefix_affinity",
    .summary = "the replica with the longest cached prefix of the prompt (ties: fewest requests)",
    .pick = prefix_affinity_pick,
};

/* ---- weighted (llm-d's scorers) ---- */

/* MODEL: llm-d-inference-scheduler prefix-cache-scorer: maxPrefixBlocksToMatch 256,
 * lruCapacityPerServer 31250 */
#define PREFIX_MAX_BLOCKS 256
#define PREFIX_LRU_PER_REPLICA 31250

typedef struct wslot {
    uint64_t hash;
    uint64_t mask; /* replicas the router sent a request with this block to */
} wslot;

typedef struct weighted_state {
    eng_router_params p;
    int32_t nrep;
    int64_t refreshed; /* ns: when the load signals were last read; -1: never */
    int64_t *queue;    /* the signals as last read */
    double *kv;
    wslot *tab; /* open addressing, hash 0 = empty (a real 0 is stored as 1) */
    uint32_t mask;
    uint64_t *ring; /* (hash, replica) pairs in insertion order: hash in the ring, replica in
                       rep_of */
    int32_t *rep_of;
    int64_t ring_cap, ring_head, ring_n;
    double *score;
} weighted_state;

static uint64_t key_of(uint64_t h)
{
    return h ? h : 1;
}

static wslot *wfind(weighted_state *w, uint64_t h)
{
    for (uint32_t i = (uint32_t)(h ^ (h >> 29)) & w->mask;; i = (i + 1) & w->mask) {
        if (w->tab[i].hash == h || w->tab[i].hash == 0)
            return &w->tab[i];
    }
}

static void werase(weighted_state *w, wslot *e)
{
    uint32_t i = (uint32_t)(e - w->tab);
    for (;;) {
        w->tab[i].hash = 0;
        uint32_t j = i;
        for (;;) {
            j = (j + 1) & w->mask;
            if (!w->tab[j].hash)
                return;
            uint64_t h = w->tab[j].hash;
            uint32_t k = (uint32_t)(h ^ (h >> 29)) & w->mask;
            if (!(i <= j ? (i < k && k <= j) : (i < k || k <= j)))
                break;
        }
        w->tab[i] = w->tab[j];
        i = j;
    }
}

static int weighted_init(void *st, int32_t nrep, const eng_router_params *p)
{
    weighted_state *w = st;
    if (nrep > 64)
        return -1; /* the replica sets are 64-bit masks */
    w->p = *p;
    w->nrep = nrep;
    w->refreshed = -1;
    w->queue = sim_xcalloc((size_t)nrep, sizeof *w->queue);
    w->kv = sim_xcalloc((size_t)nrep, sizeof *w->kv);
    w->score = sim_xcalloc((size_t)nrep, sizeof *w->score);
    w->ring_cap = (int64_t)PREFIX_LRU_PER_REPLICA * nrep;
    w->ring = sim_xcalloc((size_t)w->ring_cap, sizeof *w->ring);
    w->rep_of = sim_xcalloc((size_t)w->ring_cap, sizeof *w->rep_of);
    uint32_t cap = 1;
    while (cap < 2 * w->ring_cap)
        cap <<= 1;
    w->tab = sim_xcalloc(cap, sizeof *w->tab);
    w->mask = cap - 1;
    return 0;
}

static void weighted_fini(void *st)
{
    weighted_state *w = st;
    free(w->queue);
    free(w->kv);
    free(w->score);
    free(w->ring);
    free(w->rep_of);
    free(w->tab);
}

/* Records that replica i was sent block hash h (the prefix scorer's index, LRU by insertion). */
static void wrecord(weighted_state *w, uint64_t h, int32_t i)
{
    h = key_of(h);
    if (w->ring_n == w->ring_cap) { /* the oldest record goes */
        uint64_t old = w->ring[w->ring_head];
        wslot *e = wfind(w, old);
        if (e->hash) {
            e->mask &= ~(UINT64_C(1) << w->rep_of[w->ring_head]);
            if (!e->mask)
                werase(w, e);
        }
        w->ring_head = (w->ring_head + 1) % w->ring_cap;
        w->ring_n--;
    }
    int64_t at = (w->ring_head + w->ring_n) % w->ring_cap;
    w->ring[at] = h;
    w->rep_of[at] = i;
    w->ring_n++;
    wslot *e = wfind(w, h);
    e->hash = h;
    e->mask |= UINT64_C(1) << i;
}

static int32_t weighted_pick(void *st, const eng_replica *const *reps, int32_t n,
                             const eng_request *rq, gsl_rng *rng)
{
    weighted_state *w = st;
    /* MODEL: the inference extension scrapes each pod's queue length and KV usage
     * periodically: the scorers see values up to staleness_ms old */
    int64_t now = rq->t_arrival, stale = (int64_t)(w->p.staleness_ms * 1e6);
    if (w->refreshed < 0 || now - w->refreshed >= stale) {
        for (int32_t i = 0; i < n; i++) {
            w->queue[i] = eng_replica_waiting(reps[i]);
            w->kv[i] = eng_replica_kv_usage(reps[i]);
        }
        w->refreshed = now;
    }
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, PREFIX_MAX_BLOCKS, &h);
    int64_t qmin = w->queue[0], qmax = w->queue[0];
    for (int32_t i = 1; i < n; i++) {
        qmin = w->queue[i] < qmin ? w->queue[i] : qmin;
        qmax = w->queue[i] > qmax ? w->queue[i] : qmax;
    }
    for (int32_t i = 0; i < n; i++) {
        /* MODEL: queue-scorer: (max - queue) / (max - min) over the pods, 1 when all equal;
         * kv-cache-utilization-scorer: 1 - KV usage; prefix-cache-scorer: the prompt's leading
         * blocks the router last sent to this pod / the prompt's blocks (up to 256) */
        double q = qmax > qmin ? (double)(qmax - w->queue[i]) / (double)(qmax - qmin) : 1.0;
        int32_t m = 0;
        while (m < nb) {
            wslot *e = wfind(w, key_of(h[m]));
            if (!e->hash || !(e->mask & (UINT64_C(1) << i)))
                break;
            m++;
        }
        double pre = nb ? (double)m / nb : 0;
        w->score[i] =
            w->p.prefix_weight * pre + w->p.queue_weight * q + w->p.kv_weight * (1.0 - w->kv[i]);
    }
    int32_t best = 0; /* MODEL: max-score-picker (ties: the first here) */
    for (int32_t i = 1; i < n; i++)
        if (w->score[i] > w->score[best])
            best = i;
    for (int32_t j = 0; j < nb; j++)
        wrecord(w, h[j], best);
    return best;
}

static const eng_router_ops weighted = {
    .name = "weighted",
    .summary = "llm-d's scorers: prefix (router-side index), queue and KV usage, weighted, with "
               "signals up to staleness_ms old",
    .state_size = sizeof(weighted_state),
    .init = weighted_init,
    .pick = weighted_pick,
    .fini = weighted_fini,
};

/* ---- settings: `router: NAME` or `router: {name, prefix_weight, ...}` (keys.h) ---- */

/* MODEL: llm-d-inference-scheduler's default profile weighs prefix-cache-scorer 3, queue-scorer
 * 2, kv-cache-utilization-scorer 2; the inference extension refreshes pod metrics every 50 ms */
const eng_key eng_router_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", "round_robin", NULL,
     "a router of the registry, as `llmsim list routers` prints them",
     ENG_KEY_AT(eng_config, router)},
    {"prefix_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "3", NULL,
     "weighted: the prefix scorer's weight", ENG_KEY_AT(eng_config, router_params.prefix_weight)},
    {"queue_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "2", NULL,
     "weighted: the queue scorer's weight", ENG_KEY_AT(eng_config, router_params.queue_weight)},
    {"kv_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "2", NULL,
     "weighted: the KV usage scorer's weight", ENG_KEY_AT(eng_config, router_params.kv_weight)},
    {"staleness_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "50", NULL,
     "how old the load signals a router sees may be (0: current)",
     ENG_KEY_AT(eng_config, router_params.staleness_ms)},
    ENG_KEY_END};

/* ---- registry ---- */

static const eng_router_ops *const registry[] = {
    &round_robin, &least_outstanding, &least_tokens, &power_of_two, &prefix_affinity, &weighted,
};

const eng_router_ops *const *eng_router_all(size_t *n)
{
    *n = sizeof registry / sizeof registry[0];
    return registry;
}

const eng_router_ops *eng_router_find(const char *name)
{
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *eng_router_names(char *buf, size_t len)
{
    size_t n, off = 0;
    const eng_router_ops *const *all = eng_router_all(&n);
    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", all[i]->name);
    return buf;
}

int eng_router_registry_check(char *buf, size_t len)
{
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    for (size_t i = 0; i < n; i++) {
        const eng_router_ops *o = all[i];
        if (!o->name || !o->summary || !o->pick) {
            snprintf(buf, len, "router #%zu (%s) lacks a required op", i, o->name ? o->name : "?");
            return -1;
        }
        if (strlen(o->name) >= ENG_ROUTER_NAME_MAX) {
            snprintf(buf, len, "router name %s is longer than %d characters", o->name,
                     ENG_ROUTER_NAME_MAX - 1);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(all[j]->name, o->name) == 0) {
                snprintf(buf, len, "router name %s registered twice", o->name);
                return -1;
            }
    }
    return 0;
}
