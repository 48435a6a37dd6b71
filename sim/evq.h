/*
 * evq.h: the event queue, a binary min-heap ordered by (time, priority, sequence number), and
 * one event kept beside it (sim_evq_push_side).
 *
 * Every operation is O(log n). The sequence number is assigned by the queue at push time and
 * grows by one per push, so events pushed earlier at the same (time, priority) come out first:
 * the order is total and does not depend on the heap's layout. Cancellation is lazy: the queue
 * keeps the set of pending sequence numbers, cancelling removes one from it, and an event whose
 * number is no longer pending is dropped when it reaches the top.
 */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stdbool.h>
#include "sim.h"

typedef struct sim_event {
    int64_t t;    /* ns */
    uint64_t key; /* priority (high 16 bits, biased) and sequence number (low 48 bits) */
    sim_handler fn;
    void *obj;
    int64_t arg;
} sim_event;

typedef struct sim_evq sim_evq;

#define SIM_PRIO_MIN (-32768)
#define SIM_PRIO_MAX 32767

sim_evq *sim_evq_new(void);
void sim_evq_free(sim_evq *q);
/* Pushes an event; prio must lie in [SIM_PRIO_MIN, SIM_PRIO_MAX]. Returns its sequence number. */
sim_event_id sim_evq_push(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj, int64_t arg);
/* The same, for a stream whose events come one at a time, each scheduled by the one before (a
 * source's arrivals): the queue keeps one such event beside its heap, where it costs no sift
 * (with one there already, the event goes into the heap). The order of events is the same. */
sim_event_id sim_evq_push_side(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj,
                               int64_t arg);
/* Pops the first live event into *ev; returns false when the queue holds no live event. */
bool sim_evq_pop(sim_evq *q, sim_event *ev);
/* The same for an event due at or before until: false (nothing popped) when the first live one is
 * later or there is none. */
bool sim_evq_pop_until(sim_evq *q, int64_t until, sim_event *ev);
/* Time of the first live event, or SIM_TIME_MAX when empty (drops tombstones it meets). */
int64_t sim_evq_peek_time(sim_evq *q);
/* Cancels a pending event; an id that already ran, was cancelled or was never issued: no-op. */
void sim_evq_cancel(sim_evq *q, sim_event_id id);
size_t sim_evq_size(const sim_evq *q); /* live events */
/* Walks the heap and checks the heap property and the live count; returns 0 when sound. */
int sim_evq_check(const sim_evq *q);

static inline int sim_event_prio(const sim_event *ev)
{
    return (int)(ev->key >> 48) + SIM_PRIO_MIN;
}
static inline sim_event_id sim_event_seq(const sim_event *ev)
{
    return ev->key & ((UINT64_C(1) << 48) - 1);
}

#endif
