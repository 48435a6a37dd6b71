/*
 * rqlist.h: an intrusive FIFO of requests through their sched_prev/sched_next links, for
 * policies' queues. A request is in at most one such list at a time. And eng_rq_array: an
 * array of requests each marked by its sched_flag while in it, for a policy's requests still
 * prefilling.
 */
#ifndef ENG_RQLIST_H
#define ENG_RQLIST_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"
#include "sim.h"

typedef struct eng_rq_list {
    eng_request *head, *tail;
    int64_t n;
} eng_rq_list;

/* Links rq in right after `after` (a member of l; NULL: at the front). */
static inline void eng_list_insert_after(eng_rq_list *l, eng_request *after, eng_request *rq)
{
    eng_request *next = after ? after->sched_next : l->head;
    rq->sched_prev = after;
    rq->sched_next = next;
    if (after)
        after->sched_next = rq;
    else
        l->head = rq;
    if (next)
        next->sched_prev = rq;
    else
        l->tail = rq;
    l->n++;
}

static inline void eng_list_push_back(eng_rq_list *l, eng_request *rq)
{
    eng_list_insert_after(l, l->tail, rq);
}

static inline void eng_list_push_front(eng_rq_list *l, eng_request *rq)
{
    eng_list_insert_after(l, NULL, rq);
}

static inline void eng_list_remove(eng_rq_list *l, eng_request *rq)
{
    if (rq->sched_prev)
        rq->sched_prev->sched_next = rq->sched_next;
    else
        l->head = rq->sched_next;
    if (rq->sched_next)
        rq->sched_next->sched_prev = rq->sched_prev;
    else
        l->tail = rq->sched_prev;
    rq->sched_prev = rq->sched_next = NULL;
    l->n--;
}

/* Inserts rq keeping the list ordered by request id (arrival order); walks from the tail, so
 * appending the newest request is O(1). */
static inline void eng_list_insert_by_id(eng_rq_list *l, eng_request *rq)
{
    eng_request *after = l->tail;
    while (after && after->id > rq->id)
        after = after->sched_prev;
    eng_list_insert_after(l, after, rq);
}

static inline eng_request *eng_list_pop_front(eng_rq_list *l)
{
    eng_request *rq = l->head;
    if (rq)
        eng_list_remove(l, rq);
    return rq;
}

/* Walks the list checking links and count; 0 when consistent. */
static inline int eng_list_check(const eng_rq_list *l)
{
    int64_t n = 0;
    const eng_request *prev = NULL;
    for (const eng_request *rq = l->head; rq; prev = rq, rq = rq->sched_next, n++)
        if (rq->sched_prev != prev)
            return -1;
    return (n == l->n && prev == l->tail) ? 0 : -1;
}

typedef struct eng_rq_array {
    eng_request **rq;
    int32_t n, cap;
} eng_rq_array;

/* Makes room for one more request. */
static inline void eng_array_grow(eng_rq_array *a)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->rq = sim_xrealloc(a->rq, (size_t)a->cap * sizeof *a->rq);
    }
}

/* Appends rq and marks it. */
static inline void eng_array_push(eng_rq_array *a, eng_request *rq)
{
    eng_array_grow(a);
    a->rq[a->n++] = rq;
    rq->sched_flag = 1;
}

/* Inserts rq keeping the array ordered by request id (arrival order), and marks it; appending
 * the newest request is O(1). */
static inline void eng_array_insert_by_id(eng_rq_array *a, eng_request *rq)
{
    eng_array_grow(a);
    int32_t i = a->n++;
    for (; i > 0 && a->rq[i - 1]->id > rq->id; i--)
        a->rq[i] = a->rq[i - 1];
    a->rq[i] = rq;
    rq->sched_flag = 1;
}

/* Takes rq out (when it is marked as in) and unmarks it. */
static inline void eng_array_remove(eng_rq_array *a, eng_request *rq)
{
    if (!rq->sched_flag)
        return;
    int32_t j = 0;
    for (int32_t i = 0; i < a->n; i++)
        if (a->rq[i] != rq)
            a->rq[j++] = a->rq[i];
    a->n = j;
    rq->sched_flag = 0;
}

/* Drops (and unmarks) the requests whose prefill completed: they decode now. */
static inline void eng_array_drop_prefilled(eng_rq_array *a)
{
    int32_t j = 0;
    for (int32_t i = 0; i < a->n; i++) {
        if (a->rq[i]->status == ENG_RQ_PREFILL)
            a->rq[j++] = a->rq[i];
        else
            a->rq[i]->sched_flag = 0;
    }
    a->n = j;
}

#endif
