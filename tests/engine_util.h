/*
 * engine_util.h: what engine-level tests share: a workload source over a fixed list of
 * arrivals, and a linear cost model (1 ms per iteration + 1 us per token; swap at 25 GB/s).
 */
#ifndef LLMSIM_TESTS_ENGINE_UTIL_H
#define LLMSIM_TESTS_ENGINE_UTIL_H

#include "engine.h"

typedef struct list_src {
    const eng_arrival *a;
    int n, next;
} list_src;

static inline int list_next(void *st, int64_t now, eng_arrival *out, sim_err *err)
{
    list_src *s = st;
    if (s->next == s->n)
        return ENG_SRC_END;
    *out = s->a[s->next++];
    return ENG_SRC_OK;
}

static const eng_source_ops list_ops = {list_next, NULL};

static inline int64_t linear_ns(const void *st, const eng_shape *s)
{
    return 1000000 + 1000 * s->tokens;
}

static inline int64_t linear_xfer_ns(const void *st, int64_t bytes)
{
    return bytes / 25;
}

#endif
