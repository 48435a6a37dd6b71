/*
 * router_cache.c: the routers that follow the prefix cache, as the systems people deploy do it:
 * llm-d's scorers (weighted: a router-side prefix index; precise_prefix: the replicas' own
 * caches), sgl-router's cache_aware policy (prefix_affinity), Dynamo's KV router (kv_router)
 * and vLLM production-stack's session router (session_affinity). Each cites its source.
 *
 * What a router believes a replica holds lives in an eng_rix (rindex.h): pairs of (block hash,
 * replica) with one recency list per replica, bounded as the system bounds it (an LRU per
 * replica, a tree trimmed on a timer, the blocks of requests in flight). Routers see the
 * replicas only through engine.h's accessors; a pick costs O(replicas x prompt blocks).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "rindex.h"
#include "router_int.h"

static int64_t ns_of_ms(double ms)
{
    return (int64_t)llround(ms * 1e6);
}

/* Blocks at the head of h[0..nb) that replica i holds in x. */
static int32_t leading(const eng_rix *x, const uint64_t *h, int32_t nb, int32_t i)
{
    int32_t m = 0;
    while (m < nb && eng_rix_find(x, h[m], i) >= 0)
        m++;
    return m;
}

/* ---- llm-d: weighted (prefix-cache-scorer) and precise_prefix (precise-prefix-cache-scorer) */

/* MODEL: gateway-api-inference-extension prefix plugin: maxPrefixBlocksToMatch 256 */
#define LLMD_MAX_BLOCKS 256

typedef struct llmd_state {
    eng_router_params p;
    int32_t nrep;
    int64_t refreshed; /* ns: when the load signals were last read; -1: never */
    double *queue;     /* the signals as last read */
    double *kv, *score, *pre;
    eng_rix ix; /* weighted: which blocks the router sent where */
} llmd_state;

static int llmd_init(void *st, int32_t nrep, const eng_router_params *p)
{
    llmd_state *w = st;
    w->p = *p;
    w->nrep = nrep;
    w->refreshed = -1;
    w->queue = sim_xcalloc((size_t)nrep, sizeof *w->queue);
    w->kv = sim_xcalloc((size_t)nrep, sizeof *w->kv);
    w->score = sim_xcalloc((size_t)nrep, sizeof *w->score);
    w->pre = sim_xcalloc((size_t)nrep, sizeof *w->pre);
    eng_rix_init(&w->ix, nrep);
    return 0;
}

static void llmd_fini(void *st)
{
    llmd_state *w = st;
    free(w->queue);
    free(w->kv);
    free(w->score);
    free(w->pre);
    eng_rix_free(&w->ix);
}

/* MODEL: the inference extension scrapes each pod's queue length and KV usage periodically:
 * the scorers see values up to staleness_ms old */
static void llmd_refresh(llmd_state *w, const eng_replica *const *reps, int64_t now)
{
    if (w->refreshed >= 0 && now - w->refreshed < ns_of_ms(w->p.staleness_ms))
        return;
    /* MODEL: in a mixed pool the queue a scorer sees is the waiting count over the replica's
     * capacity (eng_replica_capacity), an approximation of ours: llm-d's queue-scorer reads raw
     * queue lengths; KV usage is already a fraction of each replica's own cache */
    int weighed = eng_replica_weighed(reps[0]);
    for (int32_t i = 0; i < w->nrep; i++) {
        double q = (double)eng_replica_waiting(reps[i]);
        w->queue[i] = weighed ? q / eng_replica_capacity(reps[i]) : q;
        w->kv[i] = eng_replica_kv_usage(reps[i]);
    }
    w->refreshed = now;
}

/* The weighted sum of the scorers (pre[] filled) and the max-score pick. */
static int32_t llmd_pick_max(llmd_state *w)
{
    double qmin = w->queue[0], qmax = w->queue[0];
    for (int32_t i = 1; i < w->nrep; i++) {
        qmin = w->queue[i] < qmin ? w->queue[i] : qmin;
        qmax = w->queue[i] > qmax ? w->queue[i] : qmax;
    }
    int32_t best = 0;
    for (int32_t i = 0; i < w->nrep; i++) {
        /* MODEL: queue-scorer: (max - queue) / (max - min) over the pods, 1 when all equal;
         * kv-cache-utilization-scorer: 1 - KV usage */
        double q = qmax > qmin ? (qmax - w->queue[i]) / (qmax - qmin) : 1.0;
        w->score[i] = w->p.prefix_weight * w->pre[i] + w->p.queue_weight * q +
                      w->p.kv_weight * (1.0 - w->kv[i]);
        if (w->score[i] > w->score[best]) /* MODEL: max-score-picker (ties: the first here) */
            best = i;
    }
    return best;
}

static int32_t weighted_pick(void *st, const eng_replica *const *reps, int32_t n,
                             const eng_request *rq, gsl_rng *rng)
{
    llmd_state *w = st;
    llmd_refresh(w, reps, rq->t_arrival);
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, LLMD_MAX_BLOCKS, &h);
    /* MODEL: prefix-cache-scorer: the prompt's leading blocks the router last sent to this pod
     * / the prompt's blocks (up to 256) */
    for (int32_t i = 0; i < n; i++)
        w->pre[i] = nb ? (double)leading(&w->ix, h, nb, i) / nb : 0;
    int32_t best = llmd_pick_max(w);
    /* MODEL: the prefix plugin's indexer keeps an LRU of block hashes per pod
     * (lruCapacityPerServer 31250); Add inserts a prompt's hashes tail first, so the leading
     * blocks, on which every match is anchored, are evicted last; an evicted hash leaves the
     * pod's set (gateway-api-inference-extension plugins/scheduling/prefix/indexer.go) */
    int32_t keep = nb < w->p.lru_capacity ? nb : w->p.lru_capacity;
    for (int32_t j = keep - 1; j >= 0; j--) {
        int made;
        eng_rix_touch(&w->ix, h[j], best, &made);
        if (made && w->ix.count[best] > w->p.lru_capacity)
            eng_rix_erase(&w->ix, eng_rix_oldest(&w->ix, best));
    }
    return best;
}

const eng_router_ops eng_router_weighted = {
    .name = "weighted",
    .summary = "llm-d's default scorers: prefix (a router-side LRU index per replica) 3, queue 2, "
               "KV usage 2, with load signals up to staleness_ms old",
    .state_size = sizeof(llmd_state),
    .init = llmd_init,
    .pick = weighted_pick,
    .fini = llmd_fini,
};

static int32_t precise_pick(void *st, const eng_replica *const *reps, int32_t n,
                            const eng_request *rq, gsl_rng *rng)
{
    llmd_state *w = st;
    llmd_refresh(w, reps, rq->t_arrival);
    /* MODEL: llm-d precise-prefix-cache-scorer: the kv-cache indexer, fed by vLLM's KV events,
     * gives each pod holding the prompt's first block the length of its cached prefix in
     * blocks; indexedScoresToNormalizedScoredPods maps those to (s - min) / (max - min) (1 when
     * all are equal) and a pod holding nothing to 0 (llm-d-inference-scheduler
     * pkg/plugins/scorer/precise_prefix_cache.go, utils.go). The events are taken as arriving
     * at once. */
    int32_t lo = INT32_MAX, hi = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t m = eng_replica_prefix_match(reps[i], rq);
        w->pre[i] = m;
        if (m > 0) {
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
        }
    }
    for (int32_t i = 0; i < n; i++)
        if (w->pre[i] > 0)
            w->pre[i] = hi > lo ? (w->pre[i] - lo) / (hi - lo) : 1.0;
    return llmd_pick_max(w);
}

const eng_router_ops eng_router_precise_prefix = {
    .name = "precise_prefix",
    .summary = "llm-d's precise prefix-cache scorer (the replicas' own caches) 3, queue 2, KV "
               "usage 2, with load signals up to staleness_ms old",
    .state_size = sizeof(llmd_state),
    .init = llmd_init,
    .pick = precise_pick,
    .fini = llmd_fini,
};

/* ---- prefix_affinity: sgl-router's cache_aware policy ---- */

typedef struct sgl_state {
    eng_router_params p;
    int32_t nrep;
    eng_rix tree;      /* the approximate tree: a block per (node, tenant) */
    int64_t next_trim; /* ns */
    int32_t *match;
} sgl_state;

static int sgl_init(void *st, int32_t nrep, const eng_router_params *p)
{
    sgl_state *s = st;
    s->p = *p;
    s->nrep = nrep;
    s->match = sim_xcalloc((size_t)nrep, sizeof *s->match);
    eng_rix_init(&s->tree, nrep);
    return 0;
}

static void sgl_fini(void *st)
{
    sgl_state *s = st;
    free(s->match);
    eng_rix_free(&s->tree);
}

/* MODEL: sgl-router's eviction thread wakes every eviction_interval_secs and, for a tenant
 * whose tree holds more than max_tree_size, removes its least recently used leaves until it
 * fits (tree.rs evict_tenant_by_size). A prompt's path is touched leaf first, so within a
 * tenant's recency list a node is always younger than its descendants: the oldest is a leaf. */
static void sgl_trim(sgl_state *s, int32_t bs, int64_t now)
{
    if (now < s->next_trim)
        return;
    for (int32_t i = 0; i < s->nrep; i++)
        while (s->tree.count[i] * bs > s->p.max_tree_tokens)
            eng_rix_erase(&s->tree, eng_rix_oldest(&s->tree, i));
    double iv = s->p.eviction_interval_s * 1e9;
    s->next_trim = iv > 0 ? (int64_t)((floor((double)now / iv) + 1) * iv) : now;
}

/* The prompt's path goes in tenant i's tree (Tree::insert), leaf first. */
static void sgl_insert(sgl_state *s, const uint64_t *h, int32_t nb, int32_t i)
{
    int made;
    for (int32_t j = nb - 1; j >= 0; j--)
        eng_rix_touch(&s->tree, h[j], i, &made);
}

/* Of the tenants whose match is m blocks long, the one that reached that node first: the node
 * remembers the tenant that created it (tree.rs last_tenant). */
static int32_t sgl_owner(const sgl_state *s, uint64_t node, int32_t m)
{
    int32_t best = -1;
    int64_t first = INT64_MAX;
    for (int32_t i = 0; i < s->nrep; i++) {
        if (s->match[i] != m)
            continue;
        int64_t serial = s->tree.node[eng_rix_find(&s->tree, node, i)].serial;
        if (serial < first) {
            first = serial;
            best = i;
        }
    }
    return best;
}

static int32_t sgl_pick(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                        gsl_rng *rng)
{
    sgl_state *s = st;
    int32_t bs = eng_kv_block_size(reps[0]);
    sgl_trim(s, bs, rq->t_arrival);
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, INT32_MAX, &h);
    /* MODEL: sgl-router cache_aware select_worker (sgl-router/src/policies/cache_aware.rs;
     * CacheAwareConfig's defaults 0.5, 32, 1.0001): the load is each worker's count of requests
     * the router sent it and has not seen answered (WorkerLoadGuard); imbalanced when max - min
     * > balance_abs_threshold and max > min x balance_rel_threshold: then the least loaded
     * (the first of equals), its tree updated all the same */
    /* MODEL: in a mixed pool each load is over the replica's capacity (eng_replica_capacity),
     * an approximation of ours: sgl-router counts raw requests */
    int weighed = eng_replica_weighed(reps[0]);
    double lo = (double)eng_replica_outstanding(reps[0]), hi;
    lo = weighed ? lo / eng_replica_capacity(reps[0]) : lo;
    hi = lo;
    int32_t least = 0;
    for (int32_t i = 1; i < n; i++) {
        double x = (double)eng_replica_outstanding(reps[i]);
        x = weighed ? x / eng_replica_capacity(reps[i]) : x;
        if (x < lo) {
            lo = x;
            least = i;
        }
        hi = x > hi ? x : hi;
    }
    int32_t best;
    if (hi - lo > s->p.balance_abs && hi > lo * s->p.balance_rel) {
        best = least;
    } else {
        /* MODEL: balanced: the longest match in the tree; above cache_threshold of the prompt
         * the tenant holding it, else the tenant with the smallest tree (get_smallest_tenant).
         * sgl-router matches characters; here whole blocks of the prompt. */
        int32_t top = 0;
        for (int32_t i = 0; i < n; i++) {
            s->match[i] = leading(&s->tree, h, nb, i);
            top = s->match[i] > top ? s->match[i] : top;
        }
        if (rq->prompt > 0 && (double)top * bs / rq->prompt > s->p.cache_threshold) {
            best = sgl_owner(s, h[top - 1], top);
        } else {
            best = 0;
            for (int32_t i = 1; i < n; i++)
                if (s->tree.count[i] < s->tree.count[best])
                    best = i;
        }
    }
    sgl_insert(s, h, nb, best);
    return best;
}

const eng_router_ops eng_router_prefix_affinity = {
    .name = "prefix_affinity",
    .summary = "sgl-router's cache_aware policy: the longest match in its tree while the load is "
               "balanced, the shortest queue when it is not",
    .state_size = sizeof(sgl_state),
    .init = sgl_init,
    .pick = sgl_pick,
    .fini = sgl_fini,
};

/* ---- kv_router: Dynamo's KV router ---- */

typedef struct dyn_state {
    eng_router_params p;
    int32_t nrep;
    eng_rix active;   /* (block, replica) of the requests in flight; aux: how many hold it */
    eng_rix reqs;     /* (2 x request id, replica): aux its prefill tokens not yet computed;
                         (2 x id + 1, replica): aux its blocks, for a request without content */
    int64_t *pending; /* per replica: prefill tokens routed and not yet computed */
    int64_t *anon;    /* per replica: blocks of requests in flight without content */
    double *logit;
    int32_t *tied;
} dyn_state;

static int dyn_init(void *st, int32_t nrep, const eng_router_params *p)
{
    dyn_state *d = st;
    d->p = *p;
    d->nrep = nrep;
    d->pending = sim_xcalloc((size_t)nrep, sizeof *d->pending);
    d->anon = sim_xcalloc((size_t)nrep, sizeof *d->anon);
    d->logit = sim_xcalloc((size_t)nrep, sizeof *d->logit);
    d->tied = sim_xcalloc((size_t)nrep, sizeof *d->tied);
    eng_rix_init(&d->active, nrep);
    eng_rix_init(&d->reqs, nrep);
    return 0;
}

static void dyn_fini(void *st)
{
    dyn_state *d = st;
    free(d->pending);
    free(d->anon);
    free(d->logit);
    free(d->tied);
    eng_rix_free(&d->active);
    eng_rix_free(&d->reqs);
}

static uint64_t req_key(const eng_request *rq, int anon)
{
    return 2 * (uint64_t)rq->id + (uint64_t)anon;
}

/* MODEL: Dynamo DefaultWorkerSelector: temperature 0 takes the lowest logit, ties going to the
 * worker whose cache (the indexer's tree) is smallest and, when those are equal too, to one at
 * random; above 0, softmax_sample: logits rescaled to [0, 1], negated, divided by the
 * temperature, one uniform draw (lib/llm/src/kv_router/scheduler.rs) */
static int32_t dyn_select(dyn_state *d, const eng_replica *const *reps, gsl_rng *rng)
{
    int32_t n = d->nrep, nt = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        lo = d->logit[i] < lo ? d->logit[i] : lo;
        hi = d->logit[i] > hi ? d->logit[i] : hi;
    }
    if (d->p.temperature > 0) {
        double sum = 0, u = gsl_rng_uniform(rng), acc = 0;
        for (int32_t i = 0; i < n; i++)
            sum += hi > lo ? exp(-(d->logit[i] - lo) / ((hi - lo) * d->p.temperature)) : 1.0;
        for (int32_t i = 0; i < n; i++) {
            acc +=
                (hi > lo ? exp(-(d->logit[i] - lo) / ((hi - lo) * d->p.temperature)) : 1.0) / sum;
            if (u <= acc)
                return i;
        }
        return n - 1;
    }
    int64_t small = INT64_MAX, big = -1;
    for (int32_t i = 0; i < n; i++) {
        if (d->logit[i] != lo)
            continue;
        int64_t t = eng_prefix_cached_blocks(reps[i]);
        small = t < small ? t : small;
        big = t > big ? t : big;
        d->tied[nt++] = i;
    }
    if (nt == 1)
        return d->tied[0];
    if (small < big) {
        for (int32_t k = 0; k < nt; k++)
            if (eng_prefix_cached_blocks(reps[d->tied[k]]) == small)
                return d->tied[k];
    }
    return d->tied[gsl_rng_uniform_int(rng, (unsigned long)nt)];
}

static int32_t dyn_pick(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                        gsl_rng *rng)
{
    dyn_state *d = st;
    int32_t bs = eng_kv_block_size(reps[0]);
    /* MODEL: a decode worker has no prefill to do: Dynamo counts prefill tokens only where the
     * worker computes the prompt (track_prefill_tokens) */
    int prefills = eng_replica_role(reps[0]) != ENG_ROLE_DECODE;
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, INT32_MAX, &h);
    int32_t anon = nb ? 0 : rq->prompt / bs;
    for (int32_t i = 0; i < n; i++) {
        /* MODEL: Dynamo's logit = kv_overlap_score_weight x prefill blocks + decode blocks:
         * the prefill tokens the worker still owes (routed, prompt not yet computed) plus this
         * prompt's tokens beyond its cached prefix (the KV indexer's overlap, from the
         * engines' KV events), over the block size; the distinct blocks of the requests in
         * flight there plus this prompt's blocks not among them (ActiveSequences
         * potential_blocks_and_tokens, lib/llm/src/kv_router/sequence.rs) */
        int64_t fresh = anon;
        for (int32_t j = 0; j < nb; j++)
            fresh += eng_rix_find(&d->active, h[j], i) < 0;
        int64_t tokens = d->pending[i];
        if (prefills)
            tokens += rq->prompt - eng_replica_prefix_match(reps[i], rq);
        d->logit[i] = d->p.overlap_weight * (double)tokens / bs +
                      (double)(d->active.count[i] + d->anon[i] + fresh);
        /* MODEL: in a mixed pool the cost is over the replica's capacity
         * (eng_replica_capacity), an approximation of ours: Dynamo's logit counts blocks */
        if (eng_replica_weighed(reps[0]))
            d->logit[i] /= eng_replica_capacity(reps[i]);
    }
    int32_t best = dyn_select(d, reps, rng);
    int made;
    int32_t k; /* (touch may move the nodes: index them after it) */
    if (prefills) {
        int32_t owed = rq->prompt - eng_replica_prefix_match(reps[best], rq);
        k = eng_rix_touch(&d->reqs, req_key(rq, 0), best, &made);
        d->reqs.node[k].aux = owed;
        d->pending[best] += owed;
    }
    if (!nb) {
        k = eng_rix_touch(&d->reqs, req_key(rq, 1), best, &made);
        d->reqs.node[k].aux = anon;
        d->anon[best] += anon;
    }
    for (int32_t j = 0; j < nb; j++) {
        k = eng_rix_touch(&d->active, h[j], best, &made);
        d->active.node[k].aux++;
    }
    return best;
}

/* MODEL: Dynamo marks a request's prefill done at its first token (mark_prefill_completed) */
static void dyn_prefilled(void *st, const eng_replica *const *reps, int32_t i,
                          const eng_request *rq)
{
    dyn_state *d = st;
    int32_t k = eng_rix_find(&d->reqs, req_key(rq, 0), i);
    if (k >= 0) {
        d->pending[i] -= d->reqs.node[k].aux;
        eng_rix_erase(&d->reqs, k);
    }
}

/* MODEL: ... and frees its blocks when it completes (free) */
static void dyn_leave(void *st, const eng_replica *const *reps, int32_t i, const eng_request *rq)
{
    dyn_state *d = st;
    dyn_prefilled(st, reps, i, rq);
    int32_t k = eng_rix_find(&d->reqs, req_key(rq, 1), i);
    if (k >= 0) {
        d->anon[i] -= d->reqs.node[k].aux;
        eng_rix_erase(&d->reqs, k);
        return;
    }
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, INT32_MAX, &h);
    for (int32_t j = 0; j < nb; j++) {
        int32_t b = eng_rix_find(&d->active, h[j], i);
        SIM_CHECK(NULL, b >= 0);
        if (--d->active.node[b].aux == 0)
            eng_rix_erase(&d->active, b);
    }
}

const eng_router_ops eng_router_kv_router = {
    .name = "kv_router",
    .summary = "Dynamo's KV router: the lowest overlap_weight x prefill blocks + decode blocks "
               "(softmax at temperature > 0)",
    .state_size = sizeof(dyn_state),
    .init = dyn_init,
    .pick = dyn_pick,
    .fini = dyn_fini,
    .on_prefilled = dyn_prefilled,
    .on_leave = dyn_leave,
};

/* ---- session_affinity: vLLM production-stack's session router ---- */

/* MODEL: uhashring's HashRing (production-stack's SessionRouter uses its defaults): 160 points
 * per node */
#define RING_POINTS 160

typedef struct ring_pt {
    uint64_t at;
    int32_t rep;
} ring_pt;

typedef struct sess_state {
    eng_router_params p;
    int32_t nrep;
    ring_pt *ring; /* nrep x RING_POINTS, sorted */
    int64_t *seen; /* per replica: requests routed in the window; -1: none ever */
    /* the window: the times and replicas of the requests routed in it, oldest first */
    int64_t *t;
    int32_t *rep;
    int64_t head, n, cap;
} sess_state;

static uint64_t mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static int ring_cmp(const void *a, const void *b)
{
    const ring_pt *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->rep > y->rep) - (x->rep < y->rep);
}

static int sess_init(void *st, int32_t nrep, const eng_router_params *p)
{
    sess_state *s = st;
    s->p = *p;
    s->nrep = nrep;
    s->ring = sim_xmalloc((size_t)nrep * RING_POINTS * sizeof *s->ring);
    /* MODEL: a node's points are hashes of its name and point number (uhashring hashes them
     * with MD5; a 64-bit mix places them here) */
    for (int32_t i = 0; i < nrep; i++)
        for (int32_t v = 0; v < RING_POINTS; v++)
            s->ring[i * RING_POINTS + v] =
                (ring_pt){mix64(((uint64_t)(i + 1) << 32) | (uint64_t)v), i};
    qsort(s->ring, (size_t)nrep * RING_POINTS, sizeof *s->ring, ring_cmp);
    s->seen = sim_xmalloc((size_t)nrep * sizeof *s->seen);
    for (int32_t i = 0; i < nrep; i++)
        s->seen[i] = -1;
    return 0;
}

static void sess_fini(void *st)
{
    sess_state *s = st;
    free(s->ring);
    free(s->seen);
    free(s->t);
    free(s->rep);
}

/* The ring's node for a session: the first point at or after its hash, round the ring. */
static int32_t ring_node(const sess_state *s, uint64_t session)
{
    uint64_t k = mix64(session ^ UINT64_C(0x73657373696f6e));
    int64_t lo = 0, hi = (int64_t)s->nrep * RING_POINTS;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (s->ring[mid].at < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return s->ring[lo == (int64_t)s->nrep * RING_POINTS ? 0 : lo].rep;
}

/* MODEL: production-stack's RequestStatsMonitor counts each engine's requests over a sliding
 * window (--request-stats-window 60 s); _qps_routing takes an engine with no requests yet,
 * else the lowest QPS (the first of equals) */
static void sess_window(sess_state *s, int64_t now)
{
    int64_t w = (int64_t)llround(s->p.qps_window_s * 1e9);
    while (s->n > 0 && s->t[s->head] <= now - w) {
        s->seen[s->rep[s->head]]--;
        s->head = (s->head + 1) % s->cap;
        s->n--;
    }
}

static void sess_count(sess_state *s, int32_t i, int64_t now)
{
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 1024;
        int64_t *t = sim_xmalloc((size_t)cap * sizeof *t);
        int32_t *r = sim_xmalloc((size_t)cap * sizeof *r);
        for (int64_t k = 0; k < s->n; k++) {
            t[k] = s->t[(s->head + k) % s->cap];
            r[k] = s->rep[(s->head + k) % s->cap];
        }
        free(s->t);
        free(s->rep);
        s->t = t;
        s->rep = r;
        s->head = 0;
        s->cap = cap;
    }
    int64_t at = (s->head + s->n++) % s->cap;
    s->t[at] = now;
    s->rep[at] = i;
    s->seen[i] = s->seen[i] < 0 ? 1 : s->seen[i] + 1;
}

static int32_t sess_pick(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                         gsl_rng *rng)
{
    sess_state *s = st;
    int64_t now = rq->t_arrival;
    sess_window(s, now);
    int32_t best = 0;
    /* MODEL: SessionRouter.route_request: a request carrying the session key goes where the
     * hash ring puts its session; one without, by QPS (production-stack
     * src/vllm_router/routers/routing_logic.py) */
    if (rq->session) {
        best = ring_node(s, rq->session);
    } else {
        for (int32_t i = 0; i < n; i++) {
            if (s->seen[i] < 0) {
                best = i;
                break;
            }
            if (s->seen[i] < s->seen[best])
                best = i;
        }
    }
    sess_count(s, best, now);
    return best;
}

const eng_router_ops eng_router_session = {
    .name = "session_affinity",
    .summary = "vLLM production-stack's session router: a session's requests where a consistent "
               "hash ring puts it; others to the lowest QPS",
    .state_size = sizeof(sess_state),
    .init = sess_init,
    .pick = sess_pick,
    .fini = sess_fini,
};
