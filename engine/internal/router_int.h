/*
 * router_int.h: the cache-aware routers (router_cache.c), for router.c's registry.
 */
#ifndef ENG_ROUTER_INT_H
#define ENG_ROUTER_INT_H

#include "router.h"

extern const eng_router_ops eng_router_weighted;        /* llm-d's default scorers */
extern const eng_router_ops eng_router_precise_prefix;  /* llm-d's precise prefix-cache scorer */
extern const eng_router_ops eng_router_prefix_affinity; /* sgl-router's cache_aware policy */
extern const eng_router_ops eng_router_kv_router;       /* Dynamo's KV router */
extern const eng_router_ops eng_router_session;         /* production-stack's session router */

/* Whether load la on replica a is lighter than lb on b, each against its capacity (a mixed
 * pool's weights; router.c). */
int eng_router_lighter(const eng_replica *a, double la, const eng_replica *b, double lb);

#endif
