/*
 * router_cache.c: the routers that follow the prefix cache, as the systems people deploy do it:
 * llm-d's scorers (weighted: a router-side prefix index; precise_prefix: the replicas' own
 * caches), sgl-router's cache_aware policy (prefix_affinity), Dynamo's KV router (kv_router)
 * and vLLM production-stack's session router (session_affinity). Each cites its source.
 *
 * What a router believes a replica holds lives in an eng_rix (rindex.h): pairs of (block hash,
 * replica slot) with one recency list per slot, bounded as the system bounds it (an LRU per
 * replica, a tree trimmed on a timer, the blocks of requests in flight). Everything a router
 * keeps per replica is keyed by the replica's slot (eng_replica_slot), which stays its own while
 * replicas start, drain and crash around it; pick gets the ready replicas only, and a replica
 * leaving them (on_gone) has its entries cleared, as each system does when a worker is removed
 * (cited at each router's on_gone). Routers see the replicas only through engine.h's accessors;
 * a pick costs O(ready replicas x prompt blocks).
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

/* Blocks at the head of h[0..nb) that slot i holds in x. */
static int32_t leading(const eng_rix *x, const uint64_t *h, int32_t nb, int32_t i)
{
    int32_t m = 0;
    while (m < nb && eng_rix_find(x, h[m], i) >= 0)
        m++;
    return m;
}

/* Forgets every pair of slot i in x. O(its pairs). */
static void forget(eng_rix *x, int32_t i)
{
    int32_t n;
    while ((n = eng_rix_oldest(x, i)) >= 0)
        eng_rix_erase(x, n);
}

/* Slot i's position among the n ready replicas reps (it is one of them). */
static int32_t position(const eng_replica *const *reps, int32_t n, int32_t i)
{
    for (int32_t k = 0; k < n; k++)
        if (eng_replica_slot(reps[k]) == i)
            return k;
    SIM_CHECK(NULL, !"a slot among the ready replicas");
    return 0;
}

/* ---- llm-d: weighted (prefix-cache-scorer) and precise_prefix (precise-prefix-cache-scorer) */

/* MODEL: gateway-api-inference-extension prefix plugin: maxPrefixBlocksToMatch 256 */
#define LLMD_MAX_BLOCKS 256

typedef struct llmd_state {
    eng_router_params p;
    int32_t nrep;      /* slots */
    int64_t refreshed; /* ns: when the load signals were last read; -1: never */
    double *queue;     /* per slot: the signals as last read */
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
    SIM_FREE_ALL(w->queue, w->kv, w->score, w->pre);
    eng_rix_free(&w->ix);
}

/* MODEL: the inference extension scrapes each pod's queue length and KV usage periodically:
 * the scorers see values up to staleness_ms old */
static void llmd_refresh(llmd_state *w, const eng_replica *const *reps, int32_t n, int64_t now)
{
    if (w->refreshed >= 0 && now - w->refreshed < ns_of_ms(w->p.staleness_ms))
        return;
    /* MODEL: in a mixed pool the queue a scorer sees is the waiting count over the replica's
     * capacity (eng_replica_capacity), an approximation of ours: llm-d's queue-scorer reads raw
     * queue lengths; KV usage is already a fraction of each replica's own cache */
    int weighed = eng_replica_weighed(reps[0]);
    for (int32_t k = 0; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
        double q = (double)eng_replica_waiting(reps[k]);
        w->queue[i] = weighed ? q / eng_replica_capacity(reps[k]) : q;
        w->kv[i] = eng_replica_kv_usage(reps[k]);
    }
    w->refreshed = now;
}

/* The weighted sum of the scorers (pre[] filled per slot) and the max-score pick among the n
 * ready replicas: its position in reps. */
static int32_t llmd_pick_max(llmd_state *w, const eng_replica *const *reps, int32_t n)
{
    int32_t s0 = eng_replica_slot(reps[0]);
    double qmin = w->queue[s0], qmax = w->queue[s0];
    for (int32_t k = 1; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
        qmin = w->queue[i] < qmin ? w->queue[i] : qmin;
        qmax = w->queue[i] > qmax ? w->queue[i] : qmax;
    }
    int32_t best = 0;
    double top = -INFINITY;
    for (int32_t k = 0; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
        /* MODEL: queue-scorer: (max - queue) / (max - min) over the pods, 1 when all equal;
         * kv-cache-utilization-scorer: 1 - KV usage */
        double q = qmax > qmin ? (qmax - w->queue[i]) / (qmax - qmin) : 1.0;
        w->score[i] = w->p.prefix_weight * w->pre[i] + w->p.queue_weight * q +
                      w->p.kv_weight * (1.0 - w->kv[i]);
        if (k == 0 || w->score[i] > top) { /* MODEL: max-score-picker (ties: the first here) */
            best = k;
            top = w->score[i];
        }
    }
    return best;
}

/* MODEL: a pod that joins the pool is a fresh server: its queue and KV usage are 0 until the
 * next scrape says otherwise (the datastore adds it with empty metrics) */
static void llmd_join(void *st, const eng_replica *r, int32_t slot)
{
    llmd_state *w = st;
    w->queue[slot] = 0;
    w->kv[slot] = 0;
}

/* MODEL: the prefix plugin drops the pods that left the pool from its indexer
 * (gateway-api-inference-extension prefix plugin CleanUpInactivePods: every pod no longer in
 * the datastore's pod list is removed; it does so on a 2-minute ticker, here at once: a pod
 * gone is never scored, and a pod that comes back is a new pod with an empty LRU) */
static void llmd_gone(void *st, int32_t slot)
{
    llmd_state *w = st;
    forget(&w->ix, slot);
}

static int32_t weighted_pick(void *st, const eng_replica *const *reps, int32_t n,
                             const eng_request *rq, gsl_rng *rng)
{
    llmd_state *w = st;
    llmd_refresh(w, reps, n, rq->t_arrival);
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(reps[0], rq, LLMD_MAX_BLOCKS, &h);
    /* MODEL: prefix-cache-scorer: the prompt's leading blocks the router last sent to this pod
     * / the prompt's blocks (up to 256) */
    for (int32_t k = 0; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
        w->pre[i] = nb ? (double)leading(&w->ix, h, nb, i) / nb : 0;
    }
    int32_t pick = llmd_pick_max(w, reps, n), best = eng_replica_slot(reps[pick]);
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
    return pick;
}

const eng_router_ops eng_router_weighted = {
    .name = "weighted",
    .summary = "llm-d's default scorers: prefix (a router-side LRU index per replica) 3, queue 2, "
               "KV usage 2, with load signals up to staleness_ms old",
    .state_size = sizeof(llmd_state),
    .init = llmd_init,
    .pick = weighted_pick,
    .fini = llmd_fini,
    .on_join = llmd_join,
    .on_gone = llmd_gone,
};

static int32_t precise_pick(void *st, const eng_replica *const *reps, int32_t n,
                            const eng_request *rq, gsl_rng *rng)
{
    llmd_state *w = st;
    llmd_refresh(w, reps, n, rq->t_arrival);
    /* MODEL: llm-d precise-prefix-cache-scorer: the kv-cache indexer, fed by vLLM's KV events,
     * gives each pod holding the prompt's first block the length of its cached prefix in
     * blocks; indexedScoresToNormalizedScoredPods maps those to (s - min) / (max - min) (1 when
     * all are equal) and a pod holding nothing to 0 (llm-d-inference-scheduler
     * pkg/plugins/scorer/precise_prefix_cache.go, utils.go). The events are taken as arriving
     * at once. */
    int32_t lo = INT32_MAX, hi = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t m = eng_replica_prefix_match(reps[k], rq);
        w->pre[eng_replica_slot(reps[k])] = m;
        if (m > 0) {
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
        }
    }
    for (int32_t k = 0; k < n; k++) {
        double *pre = &w->pre[eng_replica_slot(reps[k])];
        if (*pre > 0)
            *pre = hi > lo ? (*pre - lo) / (hi - lo) : 1.0;
    }
    return llmd_pick_max(w, reps, n);
}

const eng_router_ops eng_router_precise_prefix = {
    .name = "precise_prefix",
    .summary = "llm-d's precise prefix-cache scorer (the replicas' own caches) 3, queue 2, KV "
               "usage 2, with load signals up to staleness_ms old",
    .state_size = sizeof(llmd_state),
    .init = llmd_init,
    .pick = precise_pick,
    .fini = llmd_fini,
    .on_join = llmd_join, /* the kv-cache indexer forgets a pod's blocks with the pod: its index
                             is the replicas' own caches, read afresh at each pick */
};

/* ---- prefix_affinity: sgl-router's cache_aware policy ---- */

/* The tree holds a tenant's blocks as runs: a run is blocks of one prompt's path that were made
 * together and touched together since, its blocks' hashes in order. The index keys a run by its
 * first block's hash (a node of tree per run, aux its length); a tenant's recency list is over
 * runs. A path touched leaf first leaves each run's blocks together in block recency, the
 * deepest the oldest; a path ending inside a run splits it there. So a block-by-block tree's
 * matches, counts, creation order and trims are the runs' exactly (debug builds keep the block
 * tree beside and compare: sgl_check). */
typedef struct sgl_run {
    uint64_t *h; /* its first nh blocks' hashes (aux of its node: its blocks) */
    int32_t nh, cap;
} sgl_run;

typedef struct sgl_state {
    eng_router_params p;
    int32_t nrep;      /* slots */
    eng_rix tree;      /* the approximate tree: a run per (node, tenant slot) */
    sgl_run *run;      /* per node of tree */
    int32_t caprun;    /* room in run */
    int64_t *blocks;   /* per slot: the blocks its runs hold */
    int64_t serial;    /* blocks made: a block's creation order */
    int64_t next_trim; /* ns */
    int32_t *match;    /* per slot: blocks matched */
    int32_t *nmatch;   /* per slot: runs matched */
    int32_t *tail;     /* per slot: blocks matched in the last of them */
    int32_t *nodes;    /* per slot, cap entries each: the runs of its match, prompt order */
    int32_t cap;
#ifndef NDEBUG
    eng_rix check;     /* the same tree block by block, as sgl-router keeps it */
    int32_t *check_at; /* cap entries: a match's nodes in it */
#endif
} sgl_state;

static int sgl_init(void *st, int32_t nrep, const eng_router_params *p)
{
    sgl_state *s = st;
    s->p = *p;
    s->nrep = nrep;
    s->match = sim_xcalloc((size_t)nrep, sizeof *s->match);
    s->nmatch = sim_xcalloc((size_t)nrep, sizeof *s->nmatch);
    s->tail = sim_xcalloc((size_t)nrep, sizeof *s->tail);
    s->blocks = sim_xcalloc((size_t)nrep, sizeof *s->blocks);
    eng_rix_init(&s->tree, nrep);
#ifndef NDEBUG
    eng_rix_init(&s->check, nrep);
#endif
    return 0;
}

static void sgl_fini(void *st)
{
    sgl_state *s = st;
    for (int32_t n = 0; n < s->caprun; n++)
        free(s->run[n].h);
    SIM_FREE_ALL(s->run, s->match, s->nmatch, s->tail, s->blocks, s->nodes);
    eng_rix_free(&s->tree);
#ifndef NDEBUG
    free(s->check_at);
    eng_rix_free(&s->check);
#endif
}

/* Room for node n's run of len blocks, the first nh of them hashed (a node number's buffer stays
 * with it for its next run). A run's blocks past its hashes are a prompt's own tail: no other
 * prompt holds them, its first own block's hash (the last one kept) ends any other's match. */
static uint64_t *run_room(sgl_state *s, int32_t n, int32_t len, int32_t nh)
{
    if (n >= s->caprun) {
        int32_t c = s->tree.capnode > n ? s->tree.capnode : n + 1;
        s->run = sim_xrealloc(s->run, (size_t)c * sizeof *s->run);
        memset(s->run + s->caprun, 0, (size_t)(c - s->caprun) * sizeof *s->run);
        s->caprun = c;
    }
    sgl_run *r = &s->run[n];
    if (nh > r->cap) {
        r->cap = nh > 2 * r->cap ? nh : 2 * r->cap;
        free(r->h);
        r->h = sim_xmalloc((size_t)r->cap * sizeof *r->h);
    }
    s->tree.node[n].aux = len;
    r->nh = nh;
    return r->h;
}

/* Removes blocks from slot i's oldest runs, the deepest first, until it holds at most keep. */
static void sgl_shed(sgl_state *s, int32_t i, int64_t keep)
{
    while (s->blocks[i] > keep) {
        int32_t n = eng_rix_oldest(&s->tree, i);
        eng_rix_node *e = &s->tree.node[n];
        int64_t cut = s->blocks[i] - keep < e->aux ? s->blocks[i] - keep : e->aux;
        e->aux -= (int32_t)cut;
        s->run[n].nh = s->run[n].nh < e->aux ? s->run[n].nh : e->aux;
        s->blocks[i] -= cut;
        if (e->aux == 0)
            eng_rix_erase(&s->tree, n);
    }
}

/* MODEL: sgl-router's eviction thread wakes every eviction_interval_secs and, for a tenant
 * whose tree holds more than max_tree_size, removes its least recently used leaves until it
 * fits (tree.rs evict_tenant_by_size). A prompt's path is touched leaf first, so within a
 * tenant's recency a node is always younger than its descendants: the oldest is a leaf. */
static void sgl_trim(sgl_state *s, int32_t bs, int64_t now)
{
    if (now < s->next_trim)
        return;
    for (int32_t i = 0; i < s->nrep; i++) {
        sgl_shed(s, i, s->p.max_tree_tokens / bs); /* blocks x bs <= max_tree_tokens */
#ifndef NDEBUG
        while (s->check.count[i] * bs > s->p.max_tree_tokens)
            eng_rix_erase(&s->check, eng_rix_oldest(&s->check, i));
#endif
    }
    double iv = s->p.eviction_interval_s * 1e9;
    s->next_trim = iv > 0 ? (int64_t)((floor((double)now / iv) + 1) * iv) : now;
}

/* Blocks at the head of h[0..nb) (a prompt's hashed blocks: its match ends there) that slot i
 * holds in its tree; their runs in s->nodes, how many in s->nmatch[i], the blocks matched in the
 * last in s->tail[i]. */
static int32_t sgl_match(sgl_state *s, const uint64_t *h, int32_t nb, int32_t i)
{
    int32_t *at = s->nodes + (size_t)i * s->cap, m = 0, k = 0, c = 0;
    while (m < nb) {
        int32_t n = eng_rix_find(&s->tree, h[m], i);
        if (n < 0)
            break;
        const uint64_t *rh = s->run[n].h;
        int32_t len = s->tree.node[n].aux, lim = nb - m < s->run[n].nh ? nb - m : s->run[n].nh;
        for (c = 1; c < lim && rh[c] == h[m + c]; c++)
            ;
        at[k++] = n;
        m += c;
        if (c < len)
            break;
    }
    s->nmatch[i] = k;
    s->tail[i] = c;
    return m;
}

/* The creation order of the last block of slot i's match (s->match[i] > 0). */
static int64_t sgl_made(const sgl_state *s, int32_t i)
{
    int32_t n = s->nodes[(size_t)i * s->cap + s->nmatch[i] - 1];
    return s->tree.node[n].serial - (s->tail[i] - 1);
}

/* The prompt's path of nb blocks (h: the first nh hashes, the rest its own) goes in tenant i's
 * tree (Tree::insert), leaf first: what is new of it made (block nb - 1 first), then what it
 * matched refreshed, deepest first. */
static void sgl_insert(sgl_state *s, const uint64_t *h, int32_t nh, int32_t nb, int32_t i)
{
    const int32_t *at = s->nodes + (size_t)i * s->cap;
    int32_t m = s->match[i], k = s->nmatch[i];
    if (k > 0 && s->tail[i] < s->tree.node[at[k - 1]].aux) {
        /* the path ends inside its last run: the rest of that run stays where it was */
        int32_t a = at[k - 1], c = s->tail[i], len = s->tree.node[a].aux, ah = s->run[a].nh;
        SIM_ASSERT(NULL, c < ah); /* a match ends at an own block's hash at the latest */
        int32_t b = eng_rix_add_beside(&s->tree, s->run[a].h[c], i, a);
        uint64_t *bh = run_room(s, b, len - c, ah - c);
        memcpy(bh, s->run[a].h + c, (size_t)(ah - c) * sizeof *bh);
        s->tree.node[b].serial = s->tree.node[a].serial - c;
        s->tree.node[a].aux = c;
        s->run[a].nh = c;
    }
    if (m < nb) {
        int made;
        SIM_ASSERT(NULL, m < nh); /* a match ends at an own block's hash at the latest */
        int32_t b = eng_rix_touch(&s->tree, h[m], i, &made);
        SIM_ASSERT(NULL, made);
        uint64_t *bh = run_room(s, b, nb - m, nh - m);
        memcpy(bh, h + m, (size_t)(nh - m) * sizeof *bh);
        s->serial += nb - m;
        s->tree.node[b].serial = s->serial - 1;
        s->blocks[i] += nb - m;
    }
    for (int32_t j = k - 1; j >= 0; j--)
        eng_rix_refresh(&s->tree, at[j]);
}

#ifndef NDEBUG
/* Debug builds: the block tree's match for slot i over all nb hashes of the prompt agrees with
 * the runs' over the first nh (length and the creation order of its last block); with insert,
 * the path goes in it as well, and every slot's count agrees after. */
static void sgl_check(sgl_state *s, const uint64_t *h, int32_t nh, int32_t nb, int32_t i,
                      int insert)
{
    eng_rix *x = &s->check;
    int32_t m = 0;
    while (m < nb && (s->check_at[m] = eng_rix_find(x, h[m], i)) >= 0)
        m++;
    SIM_CHECK(NULL, m == sgl_match(s, h, nh, i));
    s->match[i] = m;
    SIM_CHECK(NULL, m == 0 || x->node[s->check_at[m - 1]].serial == sgl_made(s, i));
    if (!insert)
        return;
    int64_t made0 = x->serial;
    eng_rix_touch_path(x, h, m, nb, i);
    for (int32_t j = m - 1; j >= 0; j--)
        eng_rix_refresh(x, s->check_at[j]);
    SIM_CHECK(NULL, x->serial - made0 == nb - m);
}

static void sgl_check_counts(const sgl_state *s)
{
    for (int32_t i = 0; i < s->nrep; i++)
        SIM_CHECK(NULL, s->check.count[i] == s->blocks[i]);
}
#endif

/* Of the ready tenants whose match is m blocks long, the one that reached that node first: the
 * node remembers the tenant that created it (tree.rs last_tenant). Its position in reps. */
static int32_t sgl_owner(const sgl_state *s, const eng_replica *const *reps, int32_t n, int32_t m)
{
    int32_t best = -1;
    int64_t first = INT64_MAX;
    for (int32_t k = 0; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
        if (s->match[i] != m)
            continue;
        int64_t serial = sgl_made(s, i);
        if (serial < first) {
            first = serial;
            best = k;
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
    int32_t nh, nb = eng_request_shared_hashes(reps[0], rq, &nh, &h), known = 0;
#ifndef NDEBUG
    eng_request_block_hashes(reps[0], rq, nb, &h); /* every block's, for the block tree */
#endif
    if (nb > s->cap) {
        s->cap = nb > 2 * s->cap ? nb : 2 * s->cap;
        free(s->nodes);
        s->nodes = sim_xmalloc((size_t)s->nrep * s->cap * sizeof *s->nodes);
#ifndef NDEBUG
        free(s->check_at);
        s->check_at = sim_xmalloc((size_t)s->cap * sizeof *s->check_at);
#endif
    }
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
        known = 1;
        for (int32_t k = 0; k < n; k++) {
            int32_t i = eng_replica_slot(reps[k]);
            s->match[i] = sgl_match(s, h, nh, i);
#ifndef NDEBUG
            sgl_check(s, h, nh, nb, i, 0);
#endif
            top = s->match[i] > top ? s->match[i] : top;
        }
        if (rq->prompt > 0 && (double)top * bs / rq->prompt > s->p.cache_threshold) {
            best = sgl_owner(s, reps, n, top);
        } else {
            best = 0;
            for (int32_t k = 1; k < n; k++)
                if (s->blocks[eng_replica_slot(reps[k])] < s->blocks[eng_replica_slot(reps[best])])
                    best = k;
        }
    }
    int32_t bi = eng_replica_slot(reps[best]);
    if (!known)
        s->match[bi] = sgl_match(s, h, nh, bi);
#ifndef NDEBUG
    sgl_check(s, h, nh, nb, bi, 1);
#endif
    sgl_insert(s, h, nh, nb, bi);
#ifndef NDEBUG
    sgl_check_counts(s);
#endif
    return best;
}

/* MODEL: sgl-router removes a worker's tenant from its tree when the worker is removed
 * (sgl-router/src/policies/cache_aware.rs remove_worker: tree.remove_tenant(url)); the worker
 * removal workflow removes it from the cache-aware policies before the worker registry */
static void sgl_gone(void *st, int32_t slot)
{
    sgl_state *s = st;
    forget(&s->tree, slot);
    s->blocks[slot] = 0;
#ifndef NDEBUG
    forget(&s->check, slot);
#endif
}

const eng_router_ops eng_router_prefix_affinity = {
    .name = "prefix_affinity",
    .summary = "sgl-router's cache_aware policy: the longest match in its tree while the load is "
               "balanced, the shortest queue when it is not",
    .state_size = sizeof(sgl_state),
    .init = sgl_init,
    .pick = sgl_pick,
    .fini = sgl_fini,
    .on_gone = sgl_gone,
};

/* ---- kv_router: Dynamo's KV router ---- */

typedef struct dyn_state {
    eng_router_params p;
    int32_t nrep;     /* slots */
    eng_rix active;   /* (block, slot) of the requests in flight; aux: how many hold it */
    eng_rix reqs;     /* (2 x request id, slot): aux its prefill tokens not yet computed;
                         (2 x id + 1, slot): aux its blocks, for a request without content */
    int64_t *pending; /* per slot: prefill tokens routed and not yet computed */
    int64_t *anon;    /* per slot: blocks of requests in flight without content */
    uint8_t *gone;    /* per slot: left the ready replicas since its account was cleared */
    double *logit;    /* per position among the ready replicas */
    int32_t *tied;
} dyn_state;

static int dyn_init(void *st, int32_t nrep, const eng_router_params *p)
{
    dyn_state *d = st;
    d->p = *p;
    d->nrep = nrep;
    d->pending = sim_xcalloc((size_t)nrep, sizeof *d->pending);
    d->anon = sim_xcalloc((size_t)nrep, sizeof *d->anon);
    d->gone = sim_xcalloc((size_t)nrep, sizeof *d->gone);
    d->logit = sim_xcalloc((size_t)nrep, sizeof *d->logit);
    d->tied = sim_xcalloc((size_t)nrep, sizeof *d->tied);
    eng_rix_init(&d->active, nrep);
    eng_rix_init(&d->reqs, nrep);
    return 0;
}

static void dyn_fini(void *st)
{
    dyn_state *d = st;
    SIM_FREE_ALL(d->pending, d->anon, d->gone, d->logit, d->tied);
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
static int32_t dyn_select(dyn_state *d, const eng_replica *const *reps, int32_t n, gsl_rng *rng)
{
    int32_t nt = 0;
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
    for (int32_t k = 0; k < n; k++) {
        int32_t i = eng_replica_slot(reps[k]);
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
            tokens += rq->prompt - eng_replica_prefix_match(reps[k], rq);
        d->logit[k] = d->p.overlap_weight * (double)tokens / bs +
                      (double)(d->active.count[i] + d->anon[i] + fresh);
        /* MODEL: in a mixed pool the cost is over the replica's capacity
         * (eng_replica_capacity), an approximation of ours: Dynamo's logit counts blocks */
        if (eng_replica_weighed(reps[0]))
            d->logit[k] /= eng_replica_capacity(reps[k]);
    }
    int32_t pick = dyn_select(d, reps, n, rng), best = eng_replica_slot(reps[pick]);
    int made;
    int32_t k; /* (touch may move the nodes: index them after it) */
    if (prefills) {
        int32_t owed = rq->prompt - eng_replica_prefix_match(reps[pick], rq);
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
    return pick;
}

/* MODEL: Dynamo marks a request's prefill done at its first token (mark_prefill_completed) */
static void dyn_prefilled(void *st, const eng_replica *r, int32_t i, const eng_request *rq)
{
    dyn_state *d = st;
    int32_t k = eng_rix_find(&d->reqs, req_key(rq, 0), i);
    if (k >= 0) {
        d->pending[i] -= d->reqs.node[k].aux;
        eng_rix_erase(&d->reqs, k);
    }
}

/* MODEL: ... and frees its blocks when it completes (free) */
static void dyn_leave(void *st, const eng_replica *r, int32_t i, const eng_request *rq)
{
    dyn_state *d = st;
    if (d->gone[i])
        return; /* its account went with the worker (dyn_gone) */
    dyn_prefilled(st, r, i, rq);
    int32_t k = eng_rix_find(&d->reqs, req_key(rq, 1), i);
    if (k >= 0) {
        d->anon[i] -= d->reqs.node[k].aux;
        eng_rix_erase(&d->reqs, k);
        return;
    }
    const uint64_t *h;
    int32_t nb = eng_request_block_hashes(r, rq, INT32_MAX, &h);
    for (int32_t j = 0; j < nb; j++) {
        int32_t b = eng_rix_find(&d->active, h[j], i);
        SIM_CHECK(NULL, b >= 0);
        if (--d->active.node[b].aux == 0)
            eng_rix_erase(&d->active, b);
    }
}

static void dyn_join(void *st, const eng_replica *r, int32_t slot)
{
    dyn_state *d = st;
    d->gone[slot] = 0;
}

/* MODEL: when a worker leaves (its instance gone from discovery), Dynamo's KV router drops it:
 * the indexer removes its blocks (lib/llm/src/kv_router/indexer.rs remove_worker) and the
 * scheduler its active sequences (sequence.rs ActiveSequencesMultiWorker::update_workers); its
 * requests still streaming are no longer counted anywhere */
static void dyn_gone(void *st, int32_t slot)
{
    dyn_state *d = st;
    forget(&d->active, slot);
    forget(&d->reqs, slot);
    d->pending[slot] = d->anon[slot] = 0;
    d->gone[slot] = 1;
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
    .on_join = dyn_join,
    .on_gone = dyn_gone,
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
    int32_t nrep;   /* slots */
    ring_pt *ring;  /* nrep x RING_POINTS, sorted: every slot's points */
    uint8_t *live;  /* per slot: a node of the ring now (ready) */
    int64_t *seen;  /* per slot: requests routed in the window; -1: none ever */
    int64_t *stale; /* per slot: its entries in the window from before it left */
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
    s->live = sim_xmalloc((size_t)nrep * sizeof *s->live);
    s->stale = sim_xcalloc((size_t)nrep, sizeof *s->stale);
    for (int32_t i = 0; i < nrep; i++) {
        s->seen[i] = -1;
        s->live[i] = 1;
    }
    return 0;
}

static void sess_fini(void *st)
{
    sess_state *s = st;
    SIM_FREE_ALL(s->ring, s->seen, s->live, s->stale, s->t, s->rep);
}

/* The ring's node for a session: the first point of a ready slot at or after its hash, round
 * the ring (a slot gone keeps its points in the array, skipped: the ring without its node). */
static int32_t ring_node(const sess_state *s, uint64_t session)
{
    uint64_t k = mix64(session ^ UINT64_C(0x73657373696f6e));
    int64_t lo = 0, npt = (int64_t)s->nrep * RING_POINTS, hi = npt;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (s->ring[mid].at < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int64_t j = 0; j < npt; j++) {
        const ring_pt *pt = &s->ring[(lo + j) % npt];
        if (s->live[pt->rep])
            return pt->rep;
    }
    SIM_CHECK(NULL, !"a ready slot on the ring");
    return 0;
}

/* MODEL: production-stack's RequestStatsMonitor counts each engine's requests over a sliding
 * window (--request-stats-window 60 s); _qps_routing takes an engine with no requests yet,
 * else the lowest QPS (the first of equals) */
static void sess_window(sess_state *s, int64_t now)
{
    int64_t w = (int64_t)llround(s->p.qps_window_s * 1e9);
    while (s->n > 0 && s->t[s->head] <= now - w) {
        int32_t i = s->rep[s->head];
        if (s->stale[i] > 0) /* counted before its slot left: no longer in seen */
            s->stale[i]--;
        else
            s->seen[i]--;
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
        int32_t i = ring_node(s, rq->session);
        sess_count(s, i, now);
        return position(reps, n, i);
    }
    for (int32_t k = 0; k < n; k++) {
        int64_t seen = s->seen[eng_replica_slot(reps[k])];
        if (seen < 0) {
            best = k;
            break;
        }
        if (seen < s->seen[eng_replica_slot(reps[best])])
            best = k;
    }
    sess_count(s, eng_replica_slot(reps[best]), now);
    return best;
}

/* MODEL: the session router keeps its hash ring to the endpoints service discovery lists
 * (SessionRouter._update_hash_ring adds the new ones and removes those gone, uhashring's
 * remove_node: a removed node's sessions go to the next point round the ring, the others stay);
 * the request stats monitor knows nothing of an engine that has served no request yet, which
 * _qps_routing takes first. A replica back in its slot is taken as the same node name. */
static void sess_join(void *st, const eng_replica *r, int32_t slot)
{
    sess_state *s = st;
    s->live[slot] = 1;
}

static void sess_gone(void *st, int32_t slot)
{
    sess_state *s = st;
    s->live[slot] = 0;
    s->stale[slot] += s->seen[slot] > 0 ? s->seen[slot] : 0;
    s->seen[slot] = -1;
}

const eng_router_ops eng_router_session = {
    .name = "session_affinity",
    .summary = "vLLM production-stack's session router: a session's requests where a consistent "
               "hash ring puts it; others to the lowest QPS",
    .state_size = sizeof(sess_state),
    .init = sess_init,
    .pick = sess_pick,
    .fini = sess_fini,
    .on_join = sess_join,
    .on_gone = sess_gone,
};
