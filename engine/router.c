/*
 * router.c: the routers llmsim knows and their registry, and the settings they read. Adding a
 * router: its ops table here (or in router_cache.c, the cache-aware ones) and one line in the
 * registry table below.
 *
 * Routers read the replicas' load through engine.h's accessors only, and keep their own state
 * (round robin's cursor) in the state the engine allocates for them. Ties go to the lowest index.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "registry_int.h"
#include "router_int.h"

/* ---- round_robin ---- */

typedef struct rr_state {
    int32_t next; /* index of the next replica */
} rr_state;

static int32_t rr_pick(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                       gsl_rng *rng)
{
    rr_state *s = st;
    int32_t i = s->next % n; /* n shrinks when an autoscaled pool scales down */
    s->next = (i + 1) % n;
    return i;
}

static const eng_router_ops round_robin = {
    .name = "round_robin",
    .summary = "each replica in turn",
    .state_size = sizeof(rr_state),
    .pick = rr_pick,
};

/* ---- least_outstanding, least_tokens ---- */

/* MODEL: in a mixed pool a replica's load counts against its capacity (eng_replica_capacity):
 * load a on replica i is lighter than load b on replica j when a / w_i < b / w_j, compared as
 * a x w_j < b x w_i, as nginx's least_conn weighs its servers (ngx_http_upstream_least_conn_
 * module.c: peer->conns * best->weight < best->conns * peer->weight) and LVS's weighted
 * least-connection does. */
int eng_router_lighter(const eng_replica *a, double la, const eng_replica *b, double lb)
{
    return la * eng_replica_capacity(b) < lb * eng_replica_capacity(a);
}

/* The replica with the least load(r), weighed by capacity in a mixed pool (the first of
 * equals). */
static int32_t least_load(const eng_replica *const *reps, int32_t n,
                          int64_t (*load)(const eng_replica *))
{
    int32_t best = 0;
    int64_t low = load(reps[0]);
    int weighed = eng_replica_weighed(reps[0]);
    for (int32_t i = 1; i < n; i++) {
        int64_t x = load(reps[i]);
        if (weighed ? eng_router_lighter(reps[i], (double)x, reps[best], (double)low) : x < low) {
            best = i;
            low = x;
        }
    }
    return best;
}

/* A router sending each request to the replica with the least LOAD: its pick function NAME_pick
 * and its ops table NAME, registered as "NAME". */
#define LEAST_LOAD_ROUTER(NAME, LOAD, SUMMARY)                                                     \
    static int32_t NAME##_pick(void *st, const eng_replica *const *reps, int32_t n,                \
                               const eng_request *rq, gsl_rng *rng)                                \
    {                                                                                              \
        return least_load(reps, n, LOAD);                                                          \
    }                                                                                              \
    static const eng_router_ops NAME = {.name = #NAME, .summary = SUMMARY, .pick = NAME##_pick}

/* MODEL: least connections (nginx's least_conn): the replica with the fewest requests routed to
 * it and not yet done */
LEAST_LOAD_ROUTER(least_outstanding, eng_replica_outstanding,
                  "the replica with the fewest requests not yet done");

/* MODEL: least work, weighed as the prompt + output tokens of the requests routed to each
 * replica and not yet done (whole requests: tokens already computed still count) */
LEAST_LOAD_ROUTER(least_tokens, eng_replica_outstanding_tokens,
                  "the replica with the fewest prompt + output tokens not yet done");

/* ---- power_of_two ---- */

static int32_t power_of_two_pick(void *st, const eng_replica *const *reps, int32_t n,
                                 const eng_request *rq, gsl_rng *rng)
{
    /* MODEL: power of two choices (Mitzenmacher): two replicas at random, the less loaded */
    int32_t a = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    int32_t b = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    int64_t la = eng_replica_outstanding(reps[a]), lb = eng_replica_outstanding(reps[b]);
    if (eng_replica_weighed(reps[0]))
        return eng_router_lighter(reps[b], (double)lb, reps[a], (double)la) ? b : a;
    return lb < la ? b : a;
}

static const eng_router_ops power_of_two = {
    .name = "power_of_two",
    .summary = "two replicas at random, the one with fewer requests not yet done",
    .pick = power_of_two_pick,
};

/* ---- settings: `router: NAME` or `router: {name, prefix_weight, ...}` (keys.h) ---- */

#define LLMD "weighted|precise_prefix"
#define SGL "prefix_affinity"

/* MODEL: gateway-api-inference-extension's default-plugins.yaml (llm-d's inference-scheduling
 * guide) weighs queue-scorer 2, kv-cache-utilization-scorer 2, prefix-cache-scorer 3; llm-d's
 * precise-prefix-cache-aware guide weighs precise-prefix-cache-scorer 3 against the same two;
 * the inference extension refreshes pod metrics every 50 ms. sgl-router's defaults are its
 * Python Router class's (sglang_router/router.py: cache_threshold 0.5, balance_abs_threshold
 * 32, balance_rel_threshold 1.0001, eviction_interval_secs 60, max_tree_size 2^24 characters,
 * taken as 2^22 tokens at about 4 characters a token); the later launch_router's RouterArgs
 * default to 0.3, 64, 1.5, 120 and 2^26. Dynamo's --kv-overlap-score-weight defaults to 1 and
 * --router-temperature to 0 (docs/router/kv_cache_routing.md); production-stack's
 * --request-stats-window to 60 s (src/vllm_router/parsers/parser.py). */
const eng_key eng_router_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", "round_robin", NULL,
     "a router of the registry, as `llmsim list routers` prints them",
     ENG_KEY_AT(eng_config, router)},
    {"prefix_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "3", NULL, "the prefix scorer's weight",
     ENG_KEY_AT(eng_config, router_params.prefix_weight), .when = LLMD},
    {"queue_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "2", NULL, "the queue scorer's weight",
     ENG_KEY_AT(eng_config, router_params.queue_weight), .when = LLMD},
    {"kv_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "2", NULL, "the KV usage scorer's weight",
     ENG_KEY_AT(eng_config, router_params.kv_weight), .when = LLMD},
    {"staleness_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "50", NULL,
     "how old the load signals the scorers see may be (0: current)",
     ENG_KEY_AT(eng_config, router_params.staleness_ms), .when = LLMD},
    {"lru_capacity", ENG_KEY_INT, 0, 1, INT32_MAX, "blocks", "31250", NULL,
     "blocks the prefix index remembers per replica (lruCapacityPerServer)",
     ENG_KEY_AT(eng_config, router_params.lru_capacity), .when = "weighted"},
    {"cache_threshold", ENG_KEY_NUM, 0, 0, 1, "", "0.5", NULL,
     "follow the longest match when it covers more than this fraction of the prompt",
     ENG_KEY_AT(eng_config, router_params.cache_threshold), .when = SGL},
    {"balance_abs_threshold", ENG_KEY_INT, 0, 0, INT32_MAX, "requests", "32", NULL,
     "the load is imbalanced when max - min exceeds this ...",
     ENG_KEY_AT(eng_config, router_params.balance_abs), .when = SGL},
    {"balance_rel_threshold", ENG_KEY_NUM, 0, 1, INFINITY, "", "1.0001", NULL,
     "... and max exceeds min times this: then the least loaded replica",
     ENG_KEY_AT(eng_config, router_params.balance_rel), .when = SGL},
    {"eviction_interval_s", ENG_KEY_NUM, 0, 0, INFINITY, "s", "60", NULL,
     "how often the router's tree is trimmed (0: at every request)",
     ENG_KEY_AT(eng_config, router_params.eviction_interval_s), .when = SGL},
    {"max_tree_tokens", ENG_KEY_INT, 0, 1, INFINITY, "tokens", "4194304", NULL,
     "tokens a replica's tree keeps after a trim (max_tree_size, in tokens)",
     ENG_KEY_AT(eng_config, router_params.max_tree_tokens), .when = SGL},
    {"overlap_weight", ENG_KEY_NUM, 0, 0, INFINITY, "", "1", NULL,
     "the prefill blocks' weight against the decode blocks (kv_overlap_score_weight)",
     ENG_KEY_AT(eng_config, router_params.overlap_weight), .when = "kv_router"},
    {"temperature", ENG_KEY_NUM, 0, 0, INFINITY, "", "0", NULL,
     "softmax temperature over the costs (0: the cheapest replica)",
     ENG_KEY_AT(eng_config, router_params.temperature), .when = "kv_router"},
    {"qps_window_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, INFINITY, "s", "60", NULL,
     "the window requests without a session are balanced over (--request-stats-window)",
     ENG_KEY_AT(eng_config, router_params.qps_window_s), .when = "session_affinity"},
    ENG_KEY_END};

/* ---- registry ---- */

static const eng_router_ops *const registry[] = {
    &round_robin,
    &least_outstanding,
    &least_tokens,
    &power_of_two,
    &eng_router_prefix_affinity,
    &eng_router_weighted,
    &eng_router_precise_prefix,
    &eng_router_kv_router,
    &eng_router_session,
};

const eng_router_ops *const *eng_router_all(size_t *n)
{
    *n = sizeof registry / sizeof registry[0];
    return registry;
}

static const char *router_name(const void *all, size_t i)
{
    return ((const eng_router_ops *const *)all)[i]->name;
}

const eng_router_ops *eng_router_find(const char *name)
{
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    ptrdiff_t i = eng_registry_index(all, n, router_name, name);
    return i < 0 ? NULL : all[i];
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
        if (eng_registry_index(all, i, router_name, o->name) >= 0) {
            snprintf(buf, len, "router name %s registered twice", o->name);
            return -1;
        }
    }
    return 0;
}
