/*
 * evq.c: binary min-heap of events keyed by (t, key), key = biased priority << 48 | sequence.
 *
 * Invariants: heap[i] <= heap[2i+1], heap[2i+2]; every sequence number in the cancelled set is
 * also in the heap (it leaves the set when its tombstone is popped); live = n - cancelled count.
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
    /* cancelled sequence numbers: open addressing, linear probing, 0 = empty slot */
    uint64_t *dead;
    size_t ndead, deadcap; /* deadcap is a power of two, or 0 */
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
    free(q->dead);
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

sim_event_id sim_evq_push(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj, int64_t arg)
{
    SIM_CHECK(NULL, prio >= SIM_PRIO_MIN && prio <= SIM_PRIO_MAX);
    SIM_CHECK(NULL, q->next_seq <= SEQ_MASK);
    if (q->n == q->cap) {
        q->cap *= 2;
        q->heap = sim_xrealloc(q->heap, q->cap * sizeof *q->heap);
    }
    uint64_t seq = q->next_seq++;
    sim_event *ev = &q->heap[q->n];
    ev->t = t;
    ev->key = ((uint64_t)(prio - SIM_PRIO_MIN) << 48) | seq;
    ev->fn = fn;
    ev->obj = obj;
    ev->arg = arg;
    sift_up(q->heap, q->n++);
    return seq;
}

static inline size_t hash_slot(uint64_t seq, size_t cap)
{
    seq *= UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(seq >> 17) & (cap - 1);
}

static bool dead_find(const sim_evq *q, uint64_t seq, size_t *slot)
{
    if (q->deadcap == 0)
        return false;
    for (size_t i = hash_slot(seq, q->deadcap);; i = (i + 1) & (q->deadcap - 1)) {
        if (q->dead[i] == 0)
            return false;
        if (q->dead[i] == seq) {
            *slot = i;
            return true;
        }
    }
}

static void dead_insert_raw(uint64_t *tab, size_t cap, uint64_t seq)
{
    size_t i = hash_slot(seq, cap);
    while (tab[i] != 0)
        i = (i + 1) & (cap - 1);
    tab[i] = seq;
}

static void dead_grow(sim_evq *q)
{
    size_t cap = q->deadcap ? q->deadcap * 2 : 64;
    uint64_t *tab = sim_xcalloc(cap, sizeof *tab);
    for (size_t i = 0; i < q->deadcap; i++)
        if (q->dead[i])
            dead_insert_raw(tab, cap, q->dead[i]);
    free(q->dead);
    q->dead = tab;
    q->deadcap = cap;
}

/* Backward-shift deletion keeps probe sequences unbroken without tombstones. */
static void dead_remove(sim_evq *q, size_t i)
{
    size_t mask = q->deadcap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (q->dead[j] == 0)
            break;
        size_t home = hash_slot(q->dead[j], q->deadcap);
        /* move dead[j] into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            q->dead[i] = q->dead[j];
            i = j;
        }
    }
    q->dead[i] = 0;
    q->ndead--;
}

#ifdef SIM_DEBUG
static bool in_heap(const sim_evq *q, uint64_t seq)
{
    for (size_t i = 0; i < q->n; i++)
        if ((q->heap[i].key & SEQ_MASK) == seq)
            return true;
    return false;
}
#endif

void sim_evq_cancel(sim_evq *q, sim_event_id id)
{
    size_t slot;
    if (id == 0 || id >= q->next_seq || dead_find(q, id, &slot))
        return;
    /* An id that already ran must not become a tombstone that never pops. Callers cancel
     * events they know are pending; the debug build verifies it. */
    SIM_ASSERT(NULL, in_heap(q, id));
    if ((q->ndead + 1) * 2 > q->deadcap)
        dead_grow(q);
    dead_insert_raw(q->dead, q->deadcap, id);
    q->ndead++;
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
    while (q->n > 0) {
        size_t slot;
        if (q->ndead == 0 || !dead_find(q, q->heap[0].key & SEQ_MASK, &slot))
            return true;
        dead_remove(q, slot);
        pop_top(q);
    }
    return false;
}

bool sim_evq_pop(sim_evq *q, sim_event *ev)
{
    if (!skip_dead(q))
        return false;
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
    return q->n - q->ndead;
}

int sim_evq_check(const sim_evq *q)
{
    for (size_t i = 1; i < q->n; i++)
        if (before(&q->heap[i], &q->heap[(i - 1) / 2]))
            return -1;
    if (q->ndead > q->n)
        return -1;
    return 0;
}
