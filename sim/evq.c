/*
 * evq.c: binary min-heap of events keyed by (t, key), key = biased priority << 48 | sequence.
 *
 * Invariants: heap[i] <= heap[2i+1], heap[2i+2]; the pending set holds exactly the sequence
 * numbers of the heap's live events (inserted at push, removed at pop or cancel), so a heap
 * entry whose number is not in it is a tombstone, and cancelling a number that is not in it
 * (already run, already cancelled, never issued) changes nothing. live = nlive <= n.
 *
 * The pending set is two parts. The last RING_BITS numbers issued, [next_seq - RING_BITS,
 * next_seq), are bits of a ring indexed by the number's low bits: pushing a number reuses the
 * bit of the one RING_BITS before it, which moves to `old` (a hash set) if it is still pending.
 * Events are mostly run or cancelled soon after they are pushed, so the ring answers almost
 * every question with one bit and `old` stays empty or small; together they hold any number of
 * pending events in memory proportional to them.
 * The queue owns its arrays; events hold borrowed obj pointers.
 *
 * Beside the heap the queue keeps at most one event, `side` (sim_evq_push_side): a stream whose
 * events come one at a time, each scheduling the next (a source's arrivals), has its pending
 * one there, where it costs no sift. The first event is the earlier of side and heap[0], by the
 * same (t, key) order, so the order of events is the same as with the side event in the heap.
 * Its number is in the pending set like any other: entries n + has_side, live nlive of them.
 */
#include <stdlib.h>
#include <string.h>

#include "evq.h"

#define SEQ_MASK ((UINT64_C(1) << 48) - 1)
#define RING_BITS 4096
#define RING_WORDS (RING_BITS / 64)

struct sim_evq {
    sim_event *heap;
    size_t n, cap;
    sim_event side;
    size_t has_side; /* 0 or 1 */
    uint64_t next_seq;
    size_t nlive; /* pending events: bits set in ring, plus nold */
    uint64_t ring[RING_WORDS];
    /* pending numbers older than the ring's: open addressing, linear probing, 0 = empty slot */
    uint64_t *old;
    size_t nold, oldcap; /* oldcap is a power of two, or 0 */
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
    if (q)
        SIM_FREE_ALL(q->heap, q->old, q);
}

/* Fills the hole at i with ev: the hole sinks past the children that go before ev. */
static inline __attribute__((always_inline)) void sink_hole(sim_event *h, size_t n, size_t i,
                                                            sim_event ev)
{
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

static void sift_down(sim_event *h, size_t n, size_t i)
{
    sink_hole(h, n, i, h[i]);
}

/* ---- pending numbers older than the ring's (a hash set) ---- */

static inline size_t hash_slot(uint64_t seq, size_t cap)
{
    seq *= UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(seq >> 17) & (cap - 1);
}

static bool old_find(const sim_evq *q, uint64_t seq, size_t *slot)
{
    if (q->nold == 0)
        return false;
    for (size_t i = hash_slot(seq, q->oldcap);; i = (i + 1) & (q->oldcap - 1)) {
        if (q->old[i] == 0)
            return false;
        if (q->old[i] == seq) {
            *slot = i;
            return true;
        }
    }
}

static void old_insert_raw(uint64_t *tab, size_t cap, uint64_t seq)
{
    size_t i = hash_slot(seq, cap);
    while (tab[i] != 0)
        i = (i + 1) & (cap - 1);
    tab[i] = seq;
}

static void old_grow(sim_evq *q)
{
    size_t cap = q->oldcap ? q->oldcap * 2 : 64;
    uint64_t *tab = sim_xcalloc(cap, sizeof *tab);
    for (size_t i = 0; i < q->oldcap; i++)
        if (q->old[i])
            old_insert_raw(tab, cap, q->old[i]);
    free(q->old);
    q->old = tab;
    q->oldcap = cap;
}

static void old_insert(sim_evq *q, uint64_t seq)
{
    if ((q->nold + 1) * 2 > q->oldcap)
        old_grow(q);
    old_insert_raw(q->old, q->oldcap, seq);
    q->nold++;
}

/* Backward-shift deletion keeps probe sequences unbroken without tombstones. */
static void old_remove(sim_evq *q, size_t i)
{
    size_t mask = q->oldcap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (q->old[j] == 0)
            break;
        size_t home = hash_slot(q->old[j], q->oldcap);
        /* move old[j] into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            q->old[i] = q->old[j];
            i = j;
        }
    }
    q->old[i] = 0;
    q->nold--;
}

/* ---- the pending set ---- */

static inline uint64_t ring_bit(uint64_t seq)
{
    return UINT64_C(1) << (seq & 63);
}

static inline uint64_t *ring_word(sim_evq *q, uint64_t seq)
{
    return &q->ring[(seq / 64) % RING_WORDS];
}

/* Whether seq is pending; if so and remove, it no longer is. */
static bool pending(sim_evq *q, uint64_t seq, bool remove)
{
    if (seq == 0 || seq >= q->next_seq)
        return false;
    if (q->next_seq - seq <= RING_BITS) {
        uint64_t *w = ring_word(q, seq), b = ring_bit(seq);
        if (!(*w & b))
            return false;
        if (remove) {
            *w &= ~b;
            q->nlive--;
        }
        return true;
    }
    size_t slot;
    if (!old_find(q, seq, &slot))
        return false;
    if (remove) {
        old_remove(q, slot);
        q->nlive--;
    }
    return true;
}

/* Issues the next number, pending; the one RING_BITS before it, if still pending, moves to old. */
static inline __attribute__((always_inline)) uint64_t issue(sim_evq *q)
{
    uint64_t seq = q->next_seq++;
    uint64_t *w = ring_word(q, seq), b = ring_bit(seq);
    if (*w & b)
        old_insert(q, seq - RING_BITS);
    *w |= b;
    q->nlive++;
    return seq;
}

/* A new event's key: its priority over the next number, issued (pending). */
static inline __attribute__((always_inline)) uint64_t new_key(sim_evq *q, int prio)
{
    SIM_CHECK(NULL, prio >= SIM_PRIO_MIN && prio <= SIM_PRIO_MAX);
    SIM_CHECK(NULL, q->next_seq <= SEQ_MASK);
    return ((uint64_t)(prio - SIM_PRIO_MIN) << 48) | issue(q);
}

sim_event_id sim_evq_push_side(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj,
                               int64_t arg)
{
    if (q->has_side)
        return sim_evq_push(q, t, prio, fn, obj, arg);
    uint64_t key = new_key(q, prio);
    q->side = (sim_event){.t = t, .key = key, .fn = fn, .obj = obj, .arg = arg};
    q->has_side = 1;
    return key & SEQ_MASK;
}

sim_event_id sim_evq_push(sim_evq *q, int64_t t, int prio, sim_handler fn, void *obj, int64_t arg)
{
    uint64_t key = new_key(q, prio);
    if (q->n == q->cap) {
        q->cap *= 2;
        q->heap = sim_xrealloc(q->heap, q->cap * sizeof *q->heap);
    }
    /* the hole at the end rises past the parents the new event goes before */
    sim_event *h = q->heap;
    size_t i = q->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!(t < h[p].t || (t == h[p].t && key < h[p].key)))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = (sim_event){.t = t, .key = key, .fn = fn, .obj = obj, .arg = arg};
    return key & SEQ_MASK;
}

/* Only a pending event can be cancelled: an id that already ran, was already cancelled or was
 * never issued is not in the pending set, so it leaves no tombstone behind. */
void sim_evq_cancel(sim_evq *q, sim_event_id id)
{
    pending(q, id, true);
}

static void pop_top(sim_evq *q)
{
    q->heap[0] = q->heap[--q->n];
    if (q->n > 0)
        sift_down(q->heap, q->n, 0);
}

/* skip_dead where the side event or the heap is a tombstone. */
static __attribute__((noinline)) bool skip_dead_slow(sim_evq *q)
{
    if (q->has_side && !pending(q, q->side.key & SEQ_MASK, false))
        q->has_side = 0;
    while (q->n > 0) {
        if (q->n + q->has_side == q->nlive || pending(q, q->heap[0].key & SEQ_MASK, false))
            return true;
        pop_top(q);
    }
    return q->has_side != 0;
}

/* Drops tombstones at the side and the heap's top; returns false when nothing live is left.
 * Inline: with every entry live, there is nothing to drop. */
static inline bool skip_dead(sim_evq *q)
{
    if (q->n + q->has_side == q->nlive)
        return q->nlive > 0;
    return skip_dead_slow(q);
}

/* After skip_dead: whether the side event is the first. */
static inline bool side_first(const sim_evq *q)
{
    return q->has_side && (q->n == 0 || before(&q->side, &q->heap[0]));
}

/* Takes seq, the number of an event known to be pending, out of the pending set. */
static inline void unpend(sim_evq *q, uint64_t seq)
{
    if (q->next_seq - seq <= RING_BITS) { /* its bit in the ring */
        SIM_ASSERT(NULL, *ring_word(q, seq) & ring_bit(seq));
        *ring_word(q, seq) &= ~ring_bit(seq);
        q->nlive--;
    } else {
        bool found = pending(q, seq, true);
        SIM_ASSERT(NULL, found);
        (void)found;
    }
}

bool sim_evq_pop(sim_evq *q, sim_event *ev)
{
    return sim_evq_pop_until(q, SIM_TIME_MAX, ev);
}

bool sim_evq_pop_until(sim_evq *q, int64_t until, sim_event *ev)
{
    if (!skip_dead(q))
        return false;
    if (side_first(q)) {
        if (q->side.t > until)
            return false;
        unpend(q, q->side.key & SEQ_MASK);
        *ev = q->side;
        q->has_side = 0;
        return true;
    }
    if (q->heap[0].t > until)
        return false;
    unpend(q, q->heap[0].key & SEQ_MASK); /* pending (skip_dead) */
    *ev = q->heap[0];
    /* pop_top without its copy of the last event to the top: the hole there sinks past the
     * children that go before the last event, which fills it */
    size_t n = --q->n;
    if (n > 0)
        sink_hole(q->heap, n, 0, q->heap[n]);
    return true;
}

/* Inlined into its callers in the clock's checks (with link-time optimisation). */
__attribute__((always_inline)) inline int64_t sim_evq_peek_time(sim_evq *q)
{
    if (!skip_dead(q))
        return SIM_TIME_MAX;
    return side_first(q) ? q->side.t : q->heap[0].t;
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
    size_t bits = 0;
    for (size_t i = 0; i < RING_WORDS; i++)
        bits += (size_t)__builtin_popcountll(q->ring[i]);
    if (q->nlive > q->n + q->has_side || q->nlive != bits + q->nold)
        return -1;
    return 0;
}
