/*
 * rqheap.h: an intrusive binary heap of requests ordered by (priority, arrival), for the
 * policies' priority scheduling: push, pop, peek and remove in O(log n), each request's place
 * kept in its sched_idx. A request is in at most one such heap at a time.
 *
 * Order: a min-heap puts first the smallest (sign x priority, t_arrival, id), sign +1 or -1 (an
 * engine that serves larger priority values first); a max-heap (max = 1) the largest, for the
 * running request a policy preempts first. Ties on priority and arrival time go by arrival
 * order (id): the order is total, so runs are deterministic.
 */
#ifndef ENG_RQHEAP_H
#define ENG_RQHEAP_H

#include <stdint.h>

#include "heap.h"
#include "request.h"
#include "sim.h"

typedef struct eng_rq_heap {
    eng_request **a;
    int32_t n, cap;
    int32_t sign; /* +1: smaller priority values first; -1: larger first */
    int32_t max;  /* 1: the top is the last in that order */
} eng_rq_heap;

/* Whether x goes before y in h's order (the top goes before everything). */
static inline int eng_heap_before(const eng_rq_heap *h, const eng_request *x, const eng_request *y)
{
    int64_t px = (int64_t)h->sign * x->priority, py = (int64_t)h->sign * y->priority;
    int lt;
    if (px != py)
        lt = px < py;
    else if (x->t_arrival != y->t_arrival)
        lt = x->t_arrival < y->t_arrival;
    else
        lt = x->id < y->id;
    return h->max ? !lt && x != y : lt;
}

static inline void eng_heap_set(eng_rq_heap *h, int32_t i, eng_request *rq)
{
    h->a[i] = rq;
    rq->sched_idx = i;
}

static inline void eng_heap_up(eng_rq_heap *h, int32_t i)
{
    eng_request *rq = h->a[i];
    ENG_HEAP_SIFT_UP(h, h->a, i, rq, eng_heap_before, eng_heap_set);
}

static inline void eng_heap_down(eng_rq_heap *h, int32_t i)
{
    eng_request *rq = h->a[i];
    ENG_HEAP_SIFT_DOWN(h, h->a, h->n, i, rq, eng_heap_before, eng_heap_set);
}

/* Adds rq. */
static inline void eng_heap_push(eng_rq_heap *h, eng_request *rq)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 16;
        h->a = sim_xrealloc(h->a, (size_t)h->cap * sizeof *h->a);
    }
    h->a[h->n] = rq;
    eng_heap_up(h, h->n++);
}

/* The first request in h's order, or NULL when empty. */
static inline eng_request *eng_heap_top(const eng_rq_heap *h)
{
    return h->n ? h->a[0] : NULL;
}

/* Takes rq (which is in h) out. */
static inline void eng_heap_remove(eng_rq_heap *h, eng_request *rq)
{
    int32_t i = rq->sched_idx;
    eng_request *last = h->a[--h->n];
    rq->sched_idx = -1;
    if (i == h->n)
        return;
    eng_heap_set(h, i, last);
    eng_heap_up(h, i);
    eng_heap_down(h, last->sched_idx);
}

/* Takes the top out and returns it, or NULL when empty. */
static inline eng_request *eng_heap_pop(eng_rq_heap *h)
{
    eng_request *rq = eng_heap_top(h);
    if (rq)
        eng_heap_remove(h, rq);
    return rq;
}

/* 0 when every parent goes before its children and every index is right. */
static inline int eng_heap_check(const eng_rq_heap *h)
{
    for (int32_t i = 0; i < h->n; i++)
        if (h->a[i]->sched_idx != i || (i > 0 && eng_heap_before(h, h->a[i], h->a[(i - 1) / 2])))
            return -1;
    return 0;
}

#endif
