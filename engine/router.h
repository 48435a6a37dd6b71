/*
 * router.h: the router interface (which replica an arriving request goes to) and its registry.
 *
 * A router is one ops table in router.c plus one line in its registry table. The engine looks
 * the configured router up once (eng_new), allocates its state (state_size bytes, zeroed), calls
 * init with the number of replica slots it routes over, then pick once per arrival, and fini at
 * the end. A router sees replicas only through the public accessors of engine.h, and gets the
 * ready ones as an array of pointers, so the same router can route over all replicas or over one
 * pool of them; pick returns an index into that array, not a replica id.
 *
 * Slots: each replica a router routes over has a slot in [0, nslots) that stays its own for the
 * whole run (eng_replica_slot), while its position in the array pick gets moves as replicas
 * start, drain and crash (autoscaling, faults). A router that keeps state per replica keys it by
 * slot. It is told when a replica joins the ready ones (on_join: a fresh engine, started or
 * restarted) and when one leaves them (on_gone: draining, or crashed), so that it forgets what
 * it knew of that replica, as the routers people deploy do when a worker is removed; a request
 * routed there before may still finish there afterwards (on_leave then names a slot that is
 * gone). A slot is not reused before every request it held has left.
 *
 * With a single replica slot there is nothing to choose: the engine does not call pick (and the
 * router draws no random number), nor the optional hooks. A router with state (init) is asked
 * even while only one of several slots is ready, so that its account stays whole; a stateless
 * one is not. A router that keeps its own account of what it sent where (the load a real router
 * counts, as sgl-router and Dynamo do) is told when a request it routed has its first token
 * (on_prefilled) and when it leaves the replica (on_leave: finished, turned away, dropped in a
 * crash, or handed from a prefill replica to a decode replica).
 */
#ifndef ENG_ROUTER_H
#define ENG_ROUTER_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "request.h"

typedef struct eng_replica eng_replica;

/* Longest router name, with its terminating NUL (eng_config.router holds one). */
#define ENG_ROUTER_NAME_MAX 32

/* Router settings (`router: {name, ...}` in a scenario, rows in router.c's eng_router_keys);
 * routers read the ones they use. */
typedef struct eng_router_params {
    double prefix_weight, queue_weight, kv_weight; /* weighted, precise_prefix: scorer weights */
    double staleness_ms;  /* how old the load signals a router sees may be (0: current) */
    int32_t lru_capacity; /* weighted: blocks the prefix index keeps per replica */
    /* prefix_affinity (sgl-router's cache_aware policy) */
    double cache_threshold;     /* follow a match above this fraction of the prompt */
    int32_t balance_abs;        /* imbalanced when max - min load exceeds this ... */
    double balance_rel;         /* ... and max load exceeds min load times this */
    double eviction_interval_s; /* how often the tree is trimmed */
    int64_t max_tree_tokens;    /* tokens the tree keeps per replica after a trim */
    double overlap_weight;      /* kv_router: weight of the prefill blocks against decode */
    double temperature;         /* kv_router: softmax temperature (0: the cheapest) */
    double qps_window_s;        /* session_affinity: the window its QPS is counted over */
} eng_router_params;

typedef struct eng_router_ops {
    const char *name;    /* registry key, shorter than ENG_ROUTER_NAME_MAX */
    const char *summary; /* one line for listings */
    size_t state_size;   /* bytes of state the engine allocates (zeroed); 0 for none */
    /* Prepares the state for routing over nslots replica slots, all of them ready; 0, or -1
     * when it cannot. Optional. */
    int (*init)(void *st, int32_t nslots, const eng_router_params *p);
    /* The replica for rq, as an index in [0, n) into reps (n >= 2). rng is the run's router
     * stream; a router that draws must do so here, in a fixed order, for runs to repeat. */
    int32_t (*pick)(void *st, const eng_replica *const *reps, int32_t n, const eng_request *rq,
                    gsl_rng *rng);
    void (*fini)(void *st); /* optional */
    /* Optional: rq, sent by this router to replica r (in slot `slot`), has computed its prompt
     * (its first token). */
    void (*on_prefilled)(void *st, const eng_replica *r, int32_t slot, const eng_request *rq);
    /* Optional: rq, sent by this router to replica r (in slot `slot`), leaves it (finished,
     * turned away, dropped in a crash, or handed to a decode replica); called before rq is
     * reused, once per pick. The slot may be gone by then (on_gone). */
    void (*on_leave)(void *st, const eng_replica *r, int32_t slot, const eng_request *rq);
    /* Optional: replica r, in slot `slot`, joins the ready replicas with an empty engine. */
    void (*on_join)(void *st, const eng_replica *r, int32_t slot);
    /* Optional: the replica in slot `slot` leaves the ready replicas (it drains, or crashed):
     * what the router keeps for it is forgotten. */
    void (*on_gone)(void *st, int32_t slot);
} eng_router_ops;

/* The router registered as name, or NULL. */
const eng_router_ops *eng_router_find(const char *name);
/* Every registered router, in registry order; *n gets the count. The table is static. */
const eng_router_ops *const *eng_router_all(size_t *n);
/* The registered names as "a, b, c" into buf (truncated to len), for messages. Returns buf. */
const char *eng_router_names(char *buf, size_t len);
/* Refuses a table with a missing required op (name, summary, pick), a name too long for
 * eng_config.router, or a duplicate name: returns 0 when the registry is sound, else -1 with a
 * message in buf. */
int eng_router_registry_check(char *buf, size_t len);

#endif
