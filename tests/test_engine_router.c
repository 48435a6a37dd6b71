/*
 * test_engine_router.c: the routers and their registry: lookup by name, round robin's cycle, the
 * load-aware routers' choice of the lightest replica, power of two's determinism for a seed, the
 * engine refusing an unknown router with the valid names; the routers' prefix index (rindex.h)
 * bounded under a long stream of keys; prefix_affinity (sgl-router's cache_aware) following
 * cached prefixes while the load is balanced and not beyond its thresholds; weighted's stale
 * load signals and its LRU index over a long trace in a small table; precise_prefix reading the
 * replicas' own caches; kv_router weighing overlap against load and its temperature; and
 * session_affinity keeping a session on one replica.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "engine_util.h"
#include "rindex.h"
#include "rng.h"
#include "test_main.h"

static const eng_predictor_ops linear_ops = {"linear", linear_ns, NULL, NULL, NULL, NULL,
                                             NULL,     NULL,      NULL, NULL, NULL};
static const eng_predictor linear = {&linear_ops, NULL, "linear test cost"};

static const char *const names[] = {"round_robin",    "least_outstanding", "least_tokens",
                                    "power_of_two",   "prefix_affinity",   "weighted",
                                    "precise_prefix", "kv_router",         "session_affinity"};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

/* ---- a recorder of each request's replica ---- */
#define MAXR 8192
typedef struct placed {
    int32_t replica[MAXR]; /* by request id */
    int n;
} placed;

static void rec_rq(void *st, const eng_request *rq)
{
    placed *p = st;
    assert_true(rq->id >= 0 && rq->id < MAXR);
    p->replica[rq->id] = rq->replica;
    p->n++;
}
static const eng_recorder_ops rec_ops = {rec_rq, NULL, NULL, NULL};

/* The tiny model with room for kv_tokens tokens of KV, over replicas behind router. */
static void small_config(eng_config *c, int64_t kv_tokens, int32_t replicas, const char *router)
{
    tiny_config(c, kv_tokens);
    c->replicas = replicas;
    snprintf(c->router, sizeof c->router, "%s", router);
}

/* Runs the arrivals through an engine seeded with seed; returns each request's replica. */
static placed *run(const eng_config *c, const eng_arrival *a, int n, uint64_t seed)
{
    placed *p = calloc(1, sizeof *p);
    list_src src = {a, n, 0};
    sim_ctx *ctx = sim_new(seed);
    /* the engine's invariant walkers (Debug) after every event on a short run; a long one, every
     * 1024th, so that it stays a test of routing rather than of the walkers */
    sim_set_check_every(ctx, n > 1000 ? 1024 : 1);
    sim_err err;
    eng_engine *e =
        eng_new(ctx, c, &(eng_costs){&linear, NULL}, &list_ops, &src, &rec_ops, p, &err);
    if (!e)
        fail_msg("eng_new: %s", err.msg);
    assert_int_equal(eng_run(e, &err), 0);
    assert_int_equal(p->n, n);
    for (int32_t i = 0; i < c->replicas; i++) {
        const eng_replica *r = eng_get_replica(e, i);
        assert_non_null(r);
        assert_int_equal(eng_replica_outstanding(r), 0);
        assert_int_equal(eng_replica_outstanding_tokens(r), 0);
        assert_int_equal(eng_replica_waiting(r), 0);
    }
    assert_null(eng_get_replica(e, c->replicas));
    assert_null(eng_get_replica(e, -1));
    eng_free(e);
    sim_free(ctx);
    return p;
}

/* Calls ops->pick count times over the replicas of a fresh engine (no load anywhere). */
static void pick_fresh(const eng_router_ops *ops, int32_t nrep, gsl_rng *g, int count, int32_t *out)
{
    eng_config c;
    small_config(&c, 4096, nrep, ops->name);
    list_src src = {NULL, 0, 0};
    sim_ctx *ctx = sim_new(1);
    sim_err err;
    eng_engine *e =
        eng_new(ctx, &c, &(eng_costs){&linear, NULL}, &list_ops, &src, NULL, NULL, &err);
    assert_non_null(e);
    const eng_replica *reps[8];
    assert_true(nrep <= 8);
    for (int32_t i = 0; i < nrep; i++)
        reps[i] = eng_get_replica(e, i);
    void *st = calloc(1, ops->state_size ? ops->state_size : 1);
    if (ops->init)
        assert_int_equal(ops->init(st, nrep, &c.router_params), 0);
    for (int i = 0; i < count; i++) {
        out[i] = ops->pick(st, reps, nrep, NULL, g);
        assert_true(out[i] >= 0 && out[i] < nrep);
    }
    if (ops->fini)
        ops->fini(st);
    free(st);
    eng_free(e);
    sim_free(ctx);
}

static void test_registry(void **state)
{
    char buf[256];
    assert_int_equal(eng_router_registry_check(buf, sizeof buf), 0);
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    assert_int_equal(n, NNAMES);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(eng_router_find(all[i]->name), all[i]);
        assert_non_null(all[i]->summary);
        assert_non_null(all[i]->pick);
        assert_true(strlen(all[i]->name) < ENG_ROUTER_NAME_MAX);
    }
    for (int i = 0; i < NNAMES; i++) {
        const eng_router_ops *o = eng_router_find(names[i]);
        assert_non_null(o);
        assert_string_equal(o->name, names[i]);
    }
    assert_null(eng_router_find("random"));
    assert_null(eng_router_find(""));
    assert_null(eng_router_find("Round_Robin"));
    assert_ptr_equal(eng_router_names(buf, sizeof buf), buf);
    assert_string_equal(buf, "round_robin, least_outstanding, least_tokens, power_of_two, "
                             "prefix_affinity, weighted, precise_prefix, kv_router, "
                             "session_affinity");
    /* a short buffer is cut, never overrun */
    char small[8];
    eng_router_names(small, sizeof small);
    assert_string_equal(small, "round_r");
}

static void test_round_robin_cycles(void **state)
{
    int32_t got[7];
    pick_fresh(eng_router_find("round_robin"), 3, NULL, 7, got);
    for (int i = 0; i < 7; i++)
        assert_int_equal(got[i], i % 3);
    /* through the engine: arrival i goes to replica i mod 3 */
    eng_arrival a[10];
    for (int i = 0; i < 10; i++)
        a[i] = (eng_arrival){.t = (int64_t)i * 1000, .prompt = 10 + i, .output = 5};
    eng_config c;
    small_config(&c, 4096, 3, "round_robin");
    placed *p = run(&c, a, 10, 1);
    for (int i = 0; i < 10; i++)
        assert_int_equal(p->replica[i], i % 3);
    free(p);
}

/* Arrivals at one instant are routed before any replica runs, so the load a router sees is what
 * it routed so far, less the requests rejected on arrival (request 2 exceeds the context). */
static void test_least_loaded(void **state)
{
    static const eng_arrival a[] = {
        {.t = 0, .prompt = 100, .output = 100}, {.t = 0, .prompt = 10, .output = 10},
        {.t = 0, .prompt = 5000, .output = 1},  {.t = 0, .prompt = 50, .output = 50},
        {.t = 0, .prompt = 10, .output = 10},   {.t = 0, .prompt = 10, .output = 10},
        {.t = 0, .prompt = 10, .output = 10}};
    /* outstanding after each: [1,0,0] [1,1,0] [1,1,0] [1,1,1] [2,1,1] [2,2,1] [2,2,2] */
    static const int32_t by_count[] = {0, 1, 2, 2, 0, 1, 2};
    /* tokens after each: [200,0,0] [200,20,0] [200,20,0] [200,20,100] [200,40,100] ... */
    static const int32_t by_tokens[] = {0, 1, 2, 2, 1, 1, 1};
    int n = (int)(sizeof a / sizeof a[0]);
    eng_config c;
    small_config(&c, 65536, 3, "least_outstanding");
    placed *p = run(&c, a, n, 1);
    for (int i = 0; i < n; i++)
        assert_int_equal(p->replica[i], by_count[i]);
    free(p);
    small_config(&c, 65536, 3, "least_tokens");
    p = run(&c, a, n, 1);
    for (int i = 0; i < n; i++)
        assert_int_equal(p->replica[i], by_tokens[i]);
    free(p);
}

static void test_power_of_two_deterministic(void **state)
{
    const eng_router_ops *ops = eng_router_find("power_of_two");
    enum { N = 200 };
    int32_t x[N], y[N];
    gsl_rng *g1 = sim_rng_new_stream(7, SIM_STREAM_ROUTER);
    gsl_rng *g2 = sim_rng_new_stream(7, SIM_STREAM_ROUTER);
    gsl_rng *g3 = sim_rng_new_stream(7, SIM_STREAM_ROUTER);
    pick_fresh(ops, 5, g1, N, x);
    pick_fresh(ops, 5, g2, N, y);
    int seen[5] = {0};
    for (int i = 0; i < N; i++) {
        assert_int_equal(x[i], y[i]);
        /* two draws per pick, in order; equal loads keep the first */
        int32_t first = (int32_t)gsl_rng_uniform_int(g3, 5);
        (void)gsl_rng_uniform_int(g3, 5);
        assert_int_equal(x[i], first);
        seen[x[i]]++;
    }
    for (int i = 0; i < 5; i++)
        assert_true(seen[i] > 0);
    gsl_rng_free(g1);
    gsl_rng_free(g2);
    gsl_rng_free(g3);

    /* through the engine: the same seed places every request the same way, another does not */
    eng_arrival a[300];
    uint64_t s = 11;
    int64_t t = 0;
    for (int i = 0; i < 300; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        t += (int64_t)(s >> 47);
        a[i] = (eng_arrival){.t = t,
                             .prompt = 1 + (int32_t)((s >> 20) % 500),
                             .output = 1 + (int32_t)((s >> 8) % 200)};
    }
    eng_config c;
    small_config(&c, 4096, 4, "power_of_two");
    placed *p = run(&c, a, 300, 3), *q = run(&c, a, 300, 3), *o = run(&c, a, 300, 4);
    int differ = 0;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(p->replica[i], q->replica[i]);
        differ += p->replica[i] != o->replica[i];
    }
    assert_true(differ > 0);
    free(p);
    free(q);
    free(o);
}

/* With one replica there is nothing to choose: no router draws from the router stream. */
static void test_single_replica_draws_nothing(void **state)
{
    eng_arrival a[20];
    for (int i = 0; i < 20; i++)
        a[i] = (eng_arrival){.t = (int64_t)i * 500000, .prompt = 20, .output = 4};
    eng_config c;
    small_config(&c, 4096, 1, "power_of_two");
    list_src src = {a, 20, 0};
    sim_ctx *ctx = sim_new(5);
    sim_err err;
    placed *p = calloc(1, sizeof *p);
    eng_engine *e =
        eng_new(ctx, &c, &(eng_costs){&linear, NULL}, &list_ops, &src, &rec_ops, p, &err);
    assert_non_null(e);
    assert_int_equal(eng_run(e, &err), 0);
    gsl_rng *fresh = sim_rng_new_stream(5, SIM_STREAM_ROUTER);
    assert_int_equal(gsl_rng_get(sim_rng(ctx, SIM_STREAM_ROUTER)), gsl_rng_get(fresh));
    gsl_rng_free(fresh);
    for (int i = 0; i < 20; i++)
        assert_int_equal(p->replica[i], 0);
    free(p);
    eng_free(e);
    sim_free(ctx);
}

static void test_unknown_router_refused(void **state)
{
    eng_config c;
    small_config(&c, 4096, 2, "random");
    eng_arrival a = {.t = 0, .prompt = 10, .output = 10};
    list_src src = {&a, 1, 0};
    sim_ctx *ctx = sim_new(1);
    sim_err err;
    err.msg[0] = '\0';
    assert_null(eng_new(ctx, &c, &(eng_costs){&linear, NULL}, &list_ops, &src, NULL, NULL, &err));
    assert_non_null(strstr(err.msg, "unknown router 'random'"));
    char list[256];
    assert_non_null(strstr(err.msg, eng_router_names(list, sizeof list)));
    for (int i = 0; i < NNAMES; i++)
        assert_non_null(strstr(err.msg, names[i]));
    sim_free(ctx);
}

/* Groups of requests sharing prefixes, routed by router over three replicas with vllm (prefix
 * caching on): n requests of 5 output tokens, one every gap_ms; request i's prompt is group
 * i % groups' prefix of `prefix` tokens (content key + group), then `suffix` tokens of its own
 * (content own + i). Once a group's first request is placed, the rest of the group must follow
 * it. */
static void check_groups_follow(const char *router, int n, int groups, uint64_t key, int prefix,
                                uint64_t own, int suffix, int gap_ms)
{
    eng_segment(*seg)[2] = calloc((size_t)n, sizeof *seg);
    eng_arrival *a = calloc((size_t)n, sizeof *a);
    for (int i = 0; i < n; i++) {
        seg[i][0] = (eng_segment){key + (uint64_t)(i % groups), prefix};
        seg[i][1] = (eng_segment){own + (uint64_t)i, suffix};
        a[i] = (eng_arrival){.t = (int64_t)i * gap_ms * SIM_NS_PER_MS,
                             .prompt = prefix + suffix,
                             .output = 5,
                             .seg = seg[i],
                             .nseg = 2};
    }
    eng_config c;
    small_config(&c, 100000, 3, router);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    placed *p = run(&c, a, n, 1);
    for (int i = groups; i < n; i++)
        assert_int_equal(p->replica[i], p->replica[i % groups]);
    free(p);
    free(a);
    free(seg);
}

/* prefix_affinity: a request goes where the longest prefix of its prompt is cached. Four groups
 * of requests sharing 1000-token prefixes: once a group's prefix is cached somewhere, the rest
 * of the group follows it. */
static void test_prefix_affinity(void **state)
{
    check_groups_follow("prefix_affinity", 40, 4, 1000, 1000, 5000, 50, 50);
}

/* weighted (llm-d's scorers): load signals may be up to staleness_ms old. Twenty requests within
 * a millisecond: read afresh, the queue scorer spreads them; read once for a second, every
 * replica looks alike and the max-score picker keeps taking the first. */
static void test_weighted_staleness(void **state)
{
    eng_arrival a[20];
    for (int i = 0; i < 20; i++)
        a[i] = (eng_arrival){.t = (int64_t)i * 10 * SIM_NS_PER_US, .prompt = 200, .output = 50};
    int count[2][3] = {{0}};
    for (int k = 0; k < 2; k++) {
        eng_config c;
        small_config(&c, 100000, 3, "weighted");
        snprintf(c.sched.name, sizeof c.sched.name, "vllm");
        c.router_params.staleness_ms = k ? 1000 : 0;
        placed *p = run(&c, a, 20, 1);
        for (int i = 0; i < 20; i++)
            count[k][p->replica[i]]++;
        free(p);
    }
    print_message("fresh signals: %d %d %d; 1 s old: %d %d %d\n", count[0][0], count[0][1],
                  count[0][2], count[1][0], count[1][1], count[1][2]);
    assert_true(count[0][1] > 0 && count[0][2] > 0);
    assert_int_equal(count[1][0], 20);
}

/* weighted: the prefix scorer's router-side index sends a request whose leading blocks it sent
 * to a replica before to that replica again (prefix weight above the load weights). */
static void test_weighted_prefix_index(void **state)
{
    check_groups_follow("weighted", 30, 3, 700, 2000, 9000, 40, 100);
}

/* The routers' prefix index: a long stream of touches and LRU evictions over a small key space,
 * checked against a plain model after every step: the pairs present are exactly the model's,
 * the table stays small (it never fills, so every lookup of a missing pair ends), and a pair
 * never inherits another's replica when a slot is reused. */
static void test_rix_bounded(void **state)
{
    enum { NREP = 3, CAP = 8, KEYS = 64, STEPS = 100000 };
    eng_rix x;
    eng_rix_init(&x, NREP);
    uint64_t lru[NREP][CAP + 1];
    int n[NREP] = {0};
    uint64_t s = 5;
    for (int step = 0; step < STEPS; step++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t key = (s >> 33) % KEYS; /* 0 included */
        int32_t rep = (int32_t)((s >> 20) % NREP);
        int made, at = -1;
        eng_rix_touch(&x, key, rep, &made);
        for (int k = 0; k < n[rep]; k++)
            if (lru[rep][k] == key)
                at = k;
        assert_int_equal(made, at < 0);
        if (at >= 0) {
            memmove(&lru[rep][at], &lru[rep][at + 1], (size_t)(n[rep] - at - 1) * sizeof key);
            n[rep]--;
        }
        lru[rep][n[rep]++] = key;
        if (n[rep] > CAP) {
            int32_t old = eng_rix_oldest(&x, rep);
            assert_true(old >= 0 && x.node[old].hash == lru[rep][0]);
            eng_rix_erase(&x, old);
            memmove(&lru[rep][0], &lru[rep][1], CAP * sizeof key);
            n[rep]--;
        }
        if (step % 97 == 0 || step == STEPS - 1) {
            assert_int_equal(eng_rix_check(&x), 0);
            for (int32_t r = 0; r < NREP; r++) {
                assert_int_equal(x.count[r], n[r]);
                for (uint64_t k = 0; k < KEYS; k++) {
                    int in = 0;
                    for (int j = 0; j < n[r]; j++)
                        in |= lru[r][j] == k;
                    assert_int_equal(eng_rix_find(&x, k, r) >= 0, in);
                }
            }
        }
    }
    assert_true(x.live <= NREP * CAP);
    assert_true(x.mask + 1 <= 64); /* never grew past its first size */
    eng_rix_free(&x);
}

/* The index as it grows: touches of new pairs made in one probe land where a lookup finds them
 * after every doubling; a touch of a pair present makes no other; refresh moves a pair to its
 * replica's young end and leaves the rest of the order. */
static void test_rix_grow_refresh(void **state)
{
    enum { NREP = 2, KEYS = 5000 };
    eng_rix x;
    eng_rix_init(&x, NREP);
    int made;
    for (uint64_t k = 0; k < KEYS; k++)
        for (int32_t r = 0; r < NREP; r++) {
            int32_t n = eng_rix_touch(&x, k * 0x9e3779b97f4a7c15ULL, r, &made);
            assert_int_equal(made, 1);
            assert_int_equal(x.node[n].serial, (int64_t)(2 * k + (uint64_t)r));
        }
    assert_int_equal(eng_rix_check(&x), 0);
    assert_int_equal(x.live, NREP * KEYS);
    for (uint64_t k = 0; k < KEYS; k++)
        for (int32_t r = 0; r < NREP; r++) {
            int32_t n = eng_rix_find(&x, k * 0x9e3779b97f4a7c15ULL, r);
            assert_true(n >= 0);
            assert_int_equal(eng_rix_touch(&x, k * 0x9e3779b97f4a7c15ULL, r, &made), n);
            assert_int_equal(made, 0);
        }
    assert_int_equal(x.live, NREP * KEYS);
    /* every pair was touched again in key order: the oldest is key 0; refresh key 7 of replica 1
     * and its list runs 0, 1, .., 6, 8, .., KEYS - 1, 7 */
    int32_t seven = eng_rix_find(&x, 7 * 0x9e3779b97f4a7c15ULL, 1);
    eng_rix_refresh(&x, seven);
    assert_int_equal(x.young[1], seven);
    uint64_t want = 0;
    for (int32_t n = x.old[1]; n >= 0; n = x.node[n].next) {
        want += want == 7;
        if (n == seven) {
            assert_int_equal(x.node[n].next, -1);
            break;
        }
        assert_true(x.node[n].hash == want * 0x9e3779b97f4a7c15ULL);
        want++;
    }
    assert_int_equal(eng_rix_check(&x), 0);
    eng_rix_free(&x);
}

/* eng_rix_touch_path is the touches it stands for, one by one: the same pairs, serials and
 * recency lists, over paths that are partly new, partly there, and erased from. */
static void test_rix_touch_path(void **state)
{
    enum { NREP = 3, PATHS = 400, LEN = 64 };
    eng_rix a, b;
    eng_rix_init(&a, NREP);
    eng_rix_init(&b, NREP);
    uint64_t h[LEN], seed = 1;
    int made;
    for (int p = 0; p < PATHS; p++) {
        int32_t rep = p % NREP, len = 1 + (int32_t)(seed % LEN), from = (int32_t)(seed / 7 % 8);
        for (int32_t j = 0; j < len; j++) /* a few hundred distinct pairs: many touched again */
            h[j] = (seed / 13 % 5) * 1000 + (uint64_t)j;
        from = from < len ? from : len;
        eng_rix_touch_path(&a, h, from, len, rep);
        for (int32_t j = len - 1; j >= from; j--)
            eng_rix_touch(&b, h[j], rep, &made);
        if (p % 50 == 49) /* the oldest few go, as a trim takes them */
            for (int k = 0; k < 10 && a.old[rep] >= 0; k++) {
                eng_rix_erase(&a, eng_rix_oldest(&a, rep));
                eng_rix_erase(&b, eng_rix_oldest(&b, rep));
            }
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    assert_int_equal(eng_rix_check(&a), 0);
    assert_int_equal(eng_rix_check(&b), 0);
    assert_int_equal(a.live, b.live);
    assert_true(a.live > 100);
    for (int32_t r = 0; r < NREP; r++) {
        assert_int_equal(a.count[r], b.count[r]);
        int32_t na = a.old[r], nb = b.old[r];
        for (; na >= 0 && nb >= 0; na = a.node[na].next, nb = b.node[nb].next) {
            assert_true(a.node[na].hash == b.node[nb].hash);
            assert_int_equal(a.node[na].serial, b.node[nb].serial);
        }
        assert_int_equal(na, -1);
        assert_int_equal(nb, -1);
    }
    eng_rix_free(&a);
    eng_rix_free(&b);
}

/* A trace of `n` requests, each a group's shared prefix and a unique tail (content segments),
 * `gap` apart, in `groups` groups (request i in group i mod groups). seg holds 2 x n segments. */
static void group_trace(eng_arrival *a, eng_segment (*seg)[2], int n, int groups, int32_t shared,
                        int32_t tail, int32_t output, int64_t gap)
{
    for (int i = 0; i < n; i++) {
        seg[i][0] = (eng_segment){1000 + (uint64_t)(i % groups), shared};
        seg[i][1] = (eng_segment){50000 + (uint64_t)i, tail};
        a[i] = (eng_arrival){.t = (int64_t)i * gap,
                             .prompt = shared + tail,
                             .output = output,
                             .seg = seg[i],
                             .nseg = 2};
    }
}

/* Of requests groups.. n-1, those on the replica of the first request of their group. */
static int followed(const placed *p, int n, int groups)
{
    int f = 0;
    for (int i = groups; i < n; i++)
        f += p->replica[i] == p->replica[i % groups];
    return f;
}

/* weighted over a long trace with a prefix index of a few blocks per replica: the run ends (the
 * index never fills), and a small index forgets what a full-size one remembers. The requests
 * overlap (200 output tokens), so KV usage tells the replicas apart where no prefix does. */
static void test_weighted_long_trace_small_table(void **state)
{
    enum { N = 6000, G = 60 };
    static eng_segment seg[N][2];
    static eng_arrival a[N];
    group_trace(a, seg, N, G, 256, 256, 200, 20 * SIM_NS_PER_MS);
    int follow[2];
    for (int k = 0; k < 2; k++) {
        eng_config c;
        small_config(&c, 200000, 3, "weighted");
        snprintf(c.sched.name, sizeof c.sched.name, "vllm");
        c.router_params.lru_capacity = k ? 31250 : 4;
        placed *p = run(&c, a, N, 1);
        follow[k] = followed(p, N, G);
        free(p);
    }
    print_message("followed their group: %d with 4 blocks per replica, %d with 31250\n", follow[0],
                  follow[1]);
    assert_true(follow[1] > follow[0]);
    assert_true(follow[1] > (N - G) * 9 / 10);
}

/* prefix_affinity (sgl-router's cache_aware): 200 requests sharing a 1000-token prefix arrive
 * at once over four replicas. While the load is balanced each follows the match to the replica
 * that cached the prefix first; once it leads the least loaded by more than
 * balance_abs_threshold, the least loaded takes the next one: the placement is exactly that
 * rule's, and the lead never exceeds the threshold by more than one. Above the match's share
 * of the prompt, cache_threshold sends each to the smallest tree instead: an even spread. */
static void test_prefix_affinity_thresholds(void **state)
{
    enum { N = 200, R = 4, ABS = 8 };
    static eng_segment seg[N][2];
    static eng_arrival a[N];
    group_trace(a, seg, N, 1, 1000, 100, 5, 0);
    eng_config c;
    small_config(&c, 1000000, R, "prefix_affinity");
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    c.router_params.balance_abs = ABS;
    placed *p = run(&c, a, N, 1);
    int64_t load[R] = {0};
    for (int i = 0; i < N; i++) {
        int32_t lo = 0, hi = 0, want;
        for (int32_t r = 1; r < R; r++) {
            lo = load[r] < load[lo] ? r : lo;
            hi = load[r] > load[hi] ? r : hi;
        }
        if (load[hi] - load[lo] > ABS && load[hi] > load[lo] * 1.0001)
            want = lo;
        else
            want = 0; /* the first request found no match and took replica 0 (all trees empty) */
        assert_int_equal(p->replica[i], want);
        load[want]++;
    }
    assert_true(load[0] - load[1] <= ABS + 1 && load[0] > load[1]);
    free(p);

    c.router_params.cache_threshold = 0.95; /* the prefix is 1000 / 1100 of each prompt */
    p = run(&c, a, N, 1);
    int count[R] = {0};
    for (int i = 0; i < N; i++)
        count[p->replica[i]]++;
    for (int32_t r = 0; r < R; r++)
        assert_int_equal(count[r], N / R);
    free(p);
}

/* prefix_affinity's tree keeps a tenant's blocks as runs (router_cache.c); Debug builds keep the
 * block-by-block tree beside it and check every match, its owner order and every tenant's count
 * against it. Prompts here walk a tree of 64-token segments (four children each, 1 to 10 deep,
 * the last segment cut anywhere), so paths end and diverge inside runs (splits) and a tree of a
 * few hundred tokens, trimmed at every request or every 50 ms, cuts runs part way. Each setting
 * runs twice: the same placement. */
static void test_prefix_affinity_runs(void **state)
{
    enum { N = 700, R = 3, MAXSEG = 10 };
    static eng_segment seg[N][MAXSEG];
    static eng_arrival a[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int depth = 1 + (int)((x >> 33) % MAXSEG);
        uint64_t id = 1;
        int32_t prompt = 0;
        for (int k = 0; k < depth; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            id = id * 4 + (x >> 40) % 4;
            int32_t len = k + 1 < depth ? 64 : 1 + (int32_t)((x >> 20) % 64);
            seg[i][k] = (eng_segment){id, len};
            prompt += len;
        }
        a[i] = (eng_arrival){.t = (int64_t)i * 3 * SIM_NS_PER_MS,
                             .prompt = prompt,
                             .output = 1 + (int32_t)((x >> 50) % 40),
                             .seg = seg[i],
                             .nseg = depth};
    }
    const double every[2] = {0, 0.05};
    const int64_t keep[2] = {300, 1200};
    for (int k = 0; k < 4; k++) {
        eng_config c;
        small_config(&c, 200000, R, "prefix_affinity");
        snprintf(c.sched.name, sizeof c.sched.name, "vllm");
        c.router_params.balance_abs = 2;
        c.router_params.eviction_interval_s = every[k % 2];
        c.router_params.max_tree_tokens = keep[k / 2];
        placed *p = run(&c, a, N, 1), *q = run(&c, a, N, 1);
        int spread[R] = {0};
        for (int i = 0; i < N; i++) {
            assert_int_equal(p->replica[i], q->replica[i]);
            spread[p->replica[i]]++;
        }
        for (int r = 0; r < R; r++)
            assert_true(spread[r] > 0);
        free(p);
        free(q);
    }
}

/* precise_prefix reads the replicas' own caches: with vLLM's prefix cache each group follows its
 * first request; with no prefix cache there is nothing to follow and the load scorers spread
 * the groups, where weighted, following its own index of what it sent, still keeps them. The
 * requests overlap, so KV usage tells the replicas apart where no prefix does. */
static void test_precise_prefix_reads_caches(void **state)
{
    enum { N = 60, G = 4 };
    static eng_segment seg[N][2];
    static eng_arrival a[N];
    group_trace(a, seg, N, G, 1000, 50, 200, 50 * SIM_NS_PER_MS);
    const char *sched[2] = {"vllm", "orca"};
    int got[2][2];
    for (int k = 0; k < 2; k++)
        for (int w = 0; w < 2; w++) {
            eng_config c;
            small_config(&c, 100000, 3, w ? "weighted" : "precise_prefix");
            snprintf(c.sched.name, sizeof c.sched.name, "%s", sched[k]);
            placed *p = run(&c, a, N, 1);
            got[k][w] = followed(p, N, G);
            free(p);
        }
    assert_int_equal(got[0][0], N - G); /* precise, cached: every one follows */
    assert_int_equal(got[1][1], N - G); /* weighted, no cache: its index still says so */
    assert_true(got[1][0] < (N - G) / 2);
}

/* kv_router: with no load, a prompt goes where its prefix is cached (its prefill is cheapest);
 * a burst of equal prompts spreads by the prefill and blocks it adds; what a finished burst
 * added is gone when the next arrives (the engine's hooks release it); a high temperature
 * spreads what temperature 0 keeps together. */
static void test_kv_router(void **state)
{
    enum { N = 60, G = 4 };
    static eng_segment seg[N][2];
    static eng_arrival a[N];
    group_trace(a, seg, N, G, 1000, 50, 5, 50 * SIM_NS_PER_MS);
    eng_config c;
    small_config(&c, 100000, 3, "kv_router");
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    placed *p = run(&c, a, N, 1);
    assert_int_equal(followed(p, N, G), N - G);
    free(p);

    /* a long prompt, then (long after it finished) a burst of three short ones: all three
     * replicas take one; had the long prompt's blocks and prefill stayed counted, its replica
     * would take none */
    eng_arrival b[4] = {{.t = 0, .prompt = 3000, .output = 5},
                        {.t = 60 * SIM_NS_PER_S, .prompt = 200, .output = 5},
                        {.t = 60 * SIM_NS_PER_S, .prompt = 200, .output = 5},
                        {.t = 60 * SIM_NS_PER_S, .prompt = 200, .output = 5}};
    p = run(&c, b, 4, 1);
    int seen[3] = {0};
    for (int i = 1; i < 4; i++)
        seen[p->replica[i]]++;
    assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    free(p);

    /* one group, temperature 0: all on one replica; a high temperature: all three used */
    group_trace(a, seg, N, 1, 1000, 50, 5, 50 * SIM_NS_PER_MS);
    for (int k = 0; k < 2; k++) {
        c.router_params.temperature = k ? 100.0 : 0.0;
        p = run(&c, a, N, 3);
        int used[3] = {0};
        for (int i = 0; i < N; i++)
            used[p->replica[i]] = 1;
        if (k)
            assert_true(used[0] && used[1] && used[2]);
        else
            assert_int_equal(used[0] + used[1] + used[2], 1);
        free(p);
    }
}

/* session_affinity: every turn of a session goes to the replica the ring gives its session, the
 * sessions spread over the replicas; requests without a session go to a replica with none yet,
 * then to the fewest in the window. */
static void test_session_affinity(void **state)
{
    enum { N = 200, S = 24 };
    eng_arrival a[N];
    for (int i = 0; i < N; i++)
        a[i] = (eng_arrival){.t = (int64_t)i * 10 * SIM_NS_PER_MS,
                             .prompt = 100,
                             .output = 5,
                             .session = 1 + (uint64_t)(i % S)};
    eng_config c;
    small_config(&c, 100000, 3, "session_affinity");
    placed *p = run(&c, a, N, 1);
    int used[3] = {0};
    for (int i = 0; i < N; i++) {
        assert_int_equal(p->replica[i], p->replica[i % S]);
        used[p->replica[i]] = 1;
    }
    assert_true(used[0] && used[1] && used[2]);
    free(p);
    for (int i = 0; i < 6; i++)
        a[i] = (eng_arrival){.t = 0, .prompt = 100, .output = 5};
    p = run(&c, a, 6, 1);
    for (int i = 0; i < 6; i++)
        assert_int_equal(p->replica[i], i % 3);
    free(p);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_registry, test_round_robin_cycles, test_least_loaded,
                 test_power_of_two_deterministic, test_single_replica_draws_nothing,
                 test_unknown_router_refused, test_prefix_affinity, test_prefix_affinity_runs,
                 test_weighted_staleness, test_weighted_prefix_index, test_rix_bounded,
                 test_rix_grow_refresh, test_rix_touch_path, test_weighted_long_trace_small_table,
                 test_prefix_affinity_thresholds, test_precise_prefix_reads_caches, test_kv_router,
                 test_session_affinity)
