/*
 * evq.c: binary min-heap of events keyed by (t, key), key = biased priority << 48 | sequence.
 *
 * Invariants: heap[i] <= heap[2i+1], heap[2i+2]; the pending set holds exactly the sequence
 * numbers of the heap's live events (inserted at push, removed at pop or cancel), so a heap
 * entry whose number is not in it is a tombstone, and cancelling a number that is not in it
 * (already run, already cancelled, never issued) changes nothing. live = nlive <= n.
 * The queue owns its arrays; events hold borrowed obj pointers.
 */
#include <stdlib.h>
#include <string.h>

#include "evq.h"

#define SEQ_MASK ((UINT64_C(1) << 48) - 1)

struct sim_evq {
    sim_event *heap;
    size_t n, cap;
    uint64_t next_seq;
    /* pending (live) sequence numbers: open addressing, linear probing, 0 = empty slot */
    uint64_t *live;
    size_t nlive, livecap; /* livecap is a power of two, or 0 */
};

static inline bool before(const sim_event *a, const sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

sim_evq *sim_evq_new(void)
{
    sim_evq *q = sim_xcalloc(1, sizeof *q);
    q->cap = 256;
    q->heap = sim_xmalloc(q->cap * sizeof *q->heap);
    q->next_seq = 1;
    return q;
}

void sim_evq_free(sim_evq *q)
{
    if (!q)
        return;
    free(q->heap);
    free(q->live);
    free(q);
}

static void sift_up(sim_event *h, size_t i)
{
    sim_event ev = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&ev, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = ev;
}

static void sift_down(sim_event *h, size_t n, size_t i)
{
    sim_event ev = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &ev))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = ev;
}

static inline size_t hash_slot(uint64_t seq, size_t cap)
{
    seq *= UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(seq >> 17) & (cap - 1);
}

static bool live_find(const sim_evq *q, uint64_t seq, size_t *slot)
{
    if (q->livecap == 0)
        return false;
    for (size_t i = hash_slot(seq, q->livecap);; i = (i + 1) & (q->livecap - 1)) {
        if (q->live[i] == 0)
            return false;
        if (q->live[i] == seq) {
            *slot = i;
            return true;
        }
    }
}

static void live_insert_raw(uint64_t *tab, size_t cap, uint64_t seq)
{
    size_t i = hash_slot(seq, cap);
    while (tab[i] != 0)
        i = (i + 1) & (cap - 1);
    tab[i] = seq;
}

static void live_grow(sim_evq *q)
{
    size_t cap = q->livecap ? q->livecap * 2 : 64;
    uint64_t *tab = sim_xcalloc(cap, sizeof *tab);
    for (size_t i = 0; i < q->livecap; i++)
        if (q->live[i])
            live_insert_raw(tab, cap, q->live[i]);
    free(q->live);
    q->live = tab;
    q->livecap = cap;
}

static void live_insert(sim_evq *q, uint64_t seq)
{
    if ((q->nlive + 1) * 2 > q->livecap)
        live_grow(q);
    live_insert_raw(q->live, q->livecap, seq);
    q->nlive++;
}

/* Backward-shift deletion keeps probe sequences unbroken without tombstones. */
static void live_remove(sim_evq *q, size_t i)
{
    size_t mask = q->livecap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (q->live[j] == 0)
            break;
        size_t home = hash_slot(q->live[j], q->livecap);
        /* move live[j] into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            q->live[i] = q->live[j];
            i = j;
        }
    }
    q->live[i] = 0;
    q->nlive--;
}

sim_event_id sim_evq_push(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj, int64_t arg)
{
    SIM_CHECK(NULL, prio >= SIM_PRIO_MIN && prio <= SIM_PRIO_MAX);
    SIM_CHECK(NULL, q->next_seq <= SEQ_MASK);
    if (q->n == q->cap) {
        q->cap *= 2;
        q->heap = sim_xrealloc(q->heap, q->cap * sizeof *q->heap);
    }
    uint64_t seq = q->next_seq++;
    live_insert(q, seq);
    sim_event *ev = &q->heap[q->n];
    ev->t = t;
    ev->key = ((uint64_t)(prio - SIM_PRIO_MIN) << 48) | seq;
    ev->fn = fn;
    ev->obj = obj;
    ev->arg = arg;
    sift_up(q->heap, q->n++);
    return seq;
}

/* Only a pending event can be cancelled: an id that already ran, was already cancelled or was
 * never issued is not in the pending set, so it leaves no tombstone behind. */
void sim_evq_cancel(sim_evq *q, sim_event_id id)
{
    size_t slot;
    if (id != 0 && live_find(q, id, &slot))
        live_remove(q, slot);
}

static void pop_top(sim_evq *q)
{
    q->heap[0] = q->heap[--q->n];
    if (q->n > 0)
        sift_down(q->heap, q->n, 0);
}

/* Drops tombstones at the top; returns false when nothing live is left. */
static bool skip_dead(sim_evq *q)
{
    size_t slot;
    while (q->n > 0) {
        if (q->n == q->nlive || live_find(q, q->heap[0].key & SEQ_MASK, &slot))
            return true;
        pop_top(q);
    }
    return false;
}

bool sim_evq_pop(sim_evq *q, sim_event *ev)
{
    if (!skip_dead(q))
        return false;
    size_t slot = 0;
    bool found = live_find(q, q->heap[0].key & SEQ_MASK, &slot);
    SIM_ASSERT(NULL, found);
    (void)found;
    live_remove(q, slot);
    *ev = q->heap[0];
    pop_top(q);
    return true;
}

int64_t sim_evq_peek_time(sim_evq *q)
{
    return skip_dead(q) ? q->heap[0].t : SIM_TIME_MAX;
}

size_t sim_evq_size(const sim_evq *q)
{
    return q->nlive;
}

int sim_evq_check(const sim_evq *q)
{
    for (size_t i = 1; i < q->n; i++)
        if (before(&q->heap[i], &q->heap[(i - 1) / 2]))
            return -1;
    if (q->nlive > q->n)
        return -1;
    return 0;
}
