/*
 * router.c: the routers llmsim knows and their registry. Adding a router: its ops table here and
 * one line in the registry table below.
 *
 * Routers read the replicas' load through engine.h's accessors only, and keep their own state
 * (round robin's cursor) in the state the engine allocates for them. Ties go to the lowest index.
 */
#include <stdio.h>
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

/* ---- registry ---- */

static const eng_router_ops *const registry[] = {
    &round_robin,
    &least_outstanding,
    &least_tokens,
    &power_of_two,
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
