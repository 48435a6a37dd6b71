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

#endif
