/*
 * rindex.c: a router's index of (block hash, replica) pairs (rindex.h).
 *
 * Invariants (eng_rix_check): a live node sits in exactly one slot, which holds its key, reachable
 * from its home slot without crossing an empty one; it is on its replica's recency list exactly
 * once; the per-replica counts sum to `live`; `live` <= slots / 2.
 */
#include <stdlib.h>
#include <string.h>

#include "rindex.h"
#include "sim.h"

static inline uint32_t home(const eng_rix *x, uint64_t h, int32_t rep)
{
    uint64_t k = h ^ ((uint64_t)(rep + 1) * UINT64_C(0x9e3779b97f4a7c15));
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return (uint32_t)k & x->mask;
}

void eng_rix_init(eng_rix *x, int32_t nrep)
{
    memset(x, 0, sizeof *x);
    x->nrep = nrep;
    x->mask = 63;
    x->slot = sim_xcalloc(x->mask + 1, sizeof *x->slot);
    x->freel = -1;
    x->old = sim_xmalloc((size_t)nrep * sizeof *x->old);
    x->young = sim_xmalloc((size_t)nrep * sizeof *x->young);
    x->count = sim_xcalloc((size_t)nrep, sizeof *x->count);
    for (int32_t i = 0; i < nrep; i++)
        x->old[i] = x->young[i] = -1;
}

void eng_rix_free(eng_rix *x)
{
    SIM_FREE_ALL(x->slot, x->node, x->old, x->young, x->count);
    memset(x, 0, sizeof *x);
}

int32_t eng_rix_find(const eng_rix *x, uint64_t h, int32_t rep)
{
    uint32_t i = home(x, h, rep);
    for (uint32_t k = 0; k <= x->mask; k++, i = (i + 1) & x->mask) {
        const eng_rix_slot *s = &x->slot[i];
        if (!s->node)
            return -1;
        if (s->hash == h && s->rep == rep)
            return (int32_t)(s->node - 1);
    }
    return -1; /* unreachable while the table is at most half full */
}

/* Puts node n in the first empty slot from its home. */
static void place(eng_rix *x, int32_t n)
{
    const eng_rix_node *e = &x->node[n];
    uint32_t i = home(x, e->hash, e->rep);
    while (x->slot[i].node)
        i = (i + 1) & x->mask;
    x->slot[i] = (eng_rix_slot){e->hash, e->rep, (uint32_t)n + 1};
}

static void grow(eng_rix *x)
{
    free(x->slot);
    x->mask = 2 * x->mask + 1;
    x->slot = sim_xcalloc((size_t)x->mask + 1, sizeof *x->slot);
    for (int32_t n = 0; n < x->nnode; n++)
        if (x->node[n].rep >= 0)
            place(x, n);
}

static inline void unlink_node(eng_rix *x, int32_t n)
{
    eng_rix_node *e = &x->node[n];
    if (e->prev >= 0)
        x->node[e->prev].next = e->next;
    else
        x->old[e->rep] = e->next;
    if (e->next >= 0)
        x->node[e->next].prev = e->prev;
    else
        x->young[e->rep] = e->prev;
}

static inline void push_young(eng_rix *x, int32_t n)
{
    eng_rix_node *e = &x->node[n];
    e->prev = x->young[e->rep];
    e->next = -1;
    if (e->prev >= 0)
        x->node[e->prev].next = n;
    else
        x->old[e->rep] = n;
    x->young[e->rep] = n;
}

static inline int32_t new_node(eng_rix *x)
{
    if (x->freel >= 0) {
        int32_t n = x->freel;
        x->freel = x->node[n].next;
        return n;
    }
    if (x->nnode == x->capnode) {
        x->capnode = x->capnode ? 2 * x->capnode : 256;
        x->node = sim_xrealloc(x->node, (size_t)x->capnode * sizeof *x->node);
    }
    return x->nnode++;
}

void eng_rix_refresh(eng_rix *x, int32_t n)
{
    if (x->young[x->node[n].rep] != n) {
        unlink_node(x, n);
        push_young(x, n);
    }
}

/* eng_rix_touch with room in the table for the pair. One probe: the pair's slot, or the empty one
 * that ends its run (where place puts it). */
static inline int32_t touch_in(eng_rix *x, uint64_t h, int32_t rep, int *made)
{
    uint32_t i = home(x, h, rep);
    for (;; i = (i + 1) & x->mask) {
        const eng_rix_slot *s = &x->slot[i];
        if (!s->node)
            break;
        if (s->hash == h && s->rep == rep) {
            int32_t n = (int32_t)(s->node - 1);
            *made = 0;
            eng_rix_refresh(x, n);
            return n;
        }
    }
    *made = 1;
    int32_t n = new_node(x);
    x->node[n] = (eng_rix_node){.hash = h, .rep = rep, .serial = x->serial++};
    x->slot[i] = (eng_rix_slot){h, rep, (uint32_t)n + 1};
    push_young(x, n);
    x->count[rep]++;
    x->live++;
    return n;
}

int32_t eng_rix_touch(eng_rix *x, uint64_t h, int32_t rep, int *made)
{
    if (2 * (x->live + 1) > (int64_t)x->mask + 1 && eng_rix_find(x, h, rep) < 0)
        grow(x); /* it is made below, and the table would be over half full */
    return touch_in(x, h, rep, made);
}

void eng_rix_touch_path(eng_rix *x, const uint64_t *h, int32_t from, int32_t to, int32_t rep)
{
    while (2 * (x->live + (to - from)) > (int64_t)x->mask + 1)
        grow(x); /* room for all of them new (where the table grows changes no result) */
    int made;
    for (int32_t j = to - 1; j >= from; j--)
        touch_in(x, h[j], rep, &made);
}

int32_t eng_rix_add_beside(eng_rix *x, uint64_t h, int32_t rep, int32_t at)
{
    int made;
    if (2 * (x->live + 1) > (int64_t)x->mask + 1)
        grow(x);
    int32_t n = touch_in(x, h, rep, &made);
    SIM_ASSERT(NULL, made && x->node[at].rep == rep);
    unlink_node(x, n); /* the youngest: next to at's older side instead */
    eng_rix_node *e = &x->node[n], *a = &x->node[at];
    e->prev = a->prev;
    e->next = at;
    if (e->prev >= 0)
        x->node[e->prev].next = n;
    else
        x->old[rep] = n;
    a->prev = n;
    return n;
}

void eng_rix_erase(eng_rix *x, int32_t n)
{
    eng_rix_node *e = &x->node[n];
    uint32_t i = home(x, e->hash, e->rep);
    while (x->slot[i].node != (uint32_t)n + 1)
        i = (i + 1) & x->mask;
    /* backward-shift: later members of the run move up unless that would put them before
     * their home */
    for (uint32_t j = i;;) {
        x->slot[i].node = 0;
        for (;;) {
            j = (j + 1) & x->mask;
            if (!x->slot[j].node)
                goto unlinked;
            uint32_t k = home(x, x->slot[j].hash, x->slot[j].rep);
            if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
                break;
        }
        x->slot[i] = x->slot[j];
        i = j;
    }
unlinked:
    unlink_node(x, n);
    x->count[e->rep]--;
    x->live--;
    e->rep = -1;
    e->next = x->freel;
    x->freel = n;
}

int32_t eng_rix_oldest(const eng_rix *x, int32_t rep)
{
    return x->old[rep];
}

int eng_rix_check(const eng_rix *x)
{
    int64_t seen = 0, listed = 0, sum = 0;
    if (2 * x->live > (int64_t)x->mask + 1)
        return -1;
    for (uint32_t i = 0; i <= x->mask; i++) {
        const eng_rix_slot *sl = &x->slot[i];
        if (!sl->node)
            continue;
        int32_t n = (int32_t)sl->node - 1;
        if (n >= x->nnode || x->node[n].rep < 0 || x->node[n].hash != sl->hash ||
            x->node[n].rep != sl->rep || eng_rix_find(x, sl->hash, sl->rep) != n)
            return -1;
        seen++;
    }
    for (int32_t r = 0; r < x->nrep; r++) {
        int64_t c = 0;
        for (int32_t n = x->old[r], prev = -1; n >= 0; prev = n, n = x->node[n].next) {
            if (x->node[n].rep != r || x->node[n].prev != prev || ++c > x->live)
                return -1;
        }
        if (c != x->count[r])
            return -1;
        listed += c;
        sum += x->count[r];
    }
    return seen == x->live && listed == x->live && sum == x->live ? 0 : -1;
}
