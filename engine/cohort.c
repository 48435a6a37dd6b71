/*
 * cohort.c: the decode cohort: the decoding sequences of a replica, advanced together in O(1)
 * per step plus the work for members that change (join, leave, finish, cross a cap).
 *
 * Members are split into classes (one without speculative decoding); every member of a class
 * advances by the same number of tokens in a step, so a member's context is a + t, with a fixed
 * at its join and t the class's token count. Each class keeps the sum of a, a finish heap keyed
 * by the t at which a member has its output, and an event heap keyed by the t at which its
 * context reaches the model's cap (sliding window, top-k) or its next chunk boundary (chunked
 * local attention); those events keep the capped decode sum (eng_shape.decode_ctx_capped) and
 * the windowed layers' blocks exact. A paged member's blocks are derived from its context (kv.c,
 * eng_lay_held); the blocks a step allocates and frees come from counts of paged members by
 * their residue a mod block size: extending every context of a class by L tokens crosses a block
 * boundary exactly for the members whose residue lies in a window of L values, so a step costs
 * O(L) per class, never O(members).
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "heap.h"

#define KEY(h, rq) (*(int64_t *)((char *)(rq) + (h)->key_off))
#define IDX(h, rq) (*(int32_t *)((char *)(rq) + (h)->idx_off))
/* A heap's moves take its offsets as arguments (ko: the key's, io: the index's): the two heaps of
 * a class get them as constants (FIN_KO..., push_as/remove_as inlined), so a compare reads the key
 * with no load of the offset, which a store to an element would make the compiler read again. */
#define KEY_AT(ko, rq) (*(int64_t *)((char *)(rq) + (ko)))
#define IDX_AT(io, rq) (*(int32_t *)((char *)(rq) + (io)))
_Static_assert((sizeof(eng_cclass) & (sizeof(eng_cclass) - 1)) == 0,
               "eng_cclass.pad: a power of two in all");
#define FIN_KO offsetof(eng_request, c_fin_t)
#define FIN_IO offsetof(eng_request, c_fin_idx)
#define EV_KO offsetof(eng_request, c_ev_t)
#define EV_IO offsetof(eng_request, c_ev_idx)

void eng_heap_init(eng_rq_heap *h, size_t key_off, size_t idx_off)
{
    h->a = NULL;
    h->n = h->cap = 0;
    h->key_off = key_off;
    h->idx_off = idx_off;
}

void eng_heap_free(eng_rq_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

static inline int less(const eng_rq_heap *h, const eng_request *x, const eng_request *y)
{
    int64_t kx = KEY(h, x), ky = KEY(h, y);
    return kx < ky || (kx == ky && x->id < y->id);
}

static inline __attribute__((always_inline)) int less_at(size_t ko, const eng_request *x,
                                                         const eng_request *y)
{
    int64_t kx = KEY_AT(ko, x), ky = KEY_AT(ko, y);
    return kx < ky || (kx == ky && x->id < y->id);
}

static inline __attribute__((always_inline)) void place_at(eng_rq_heap *h, size_t io, int32_t i,
                                                           eng_request *rq)
{
    h->a[i] = rq;
    IDX_AT(io, rq) = i;
}

/* set(ko, i, p) for heap.h's moves: stores p at i of the array a, its index at io. */
#define SET_AT(ko, i, p) (a[(i)] = (p), IDX_AT(io, a[(i)]) = (i))

static inline __attribute__((always_inline)) void up_at(eng_rq_heap *h, size_t ko, size_t io,
                                                        int32_t i)
{
    eng_request **a = h->a, *rq = a[i];
    ENG_HEAP_SIFT_UP(ko, a, i, rq, less_at, SET_AT);
}

static inline __attribute__((always_inline)) void push_as(eng_rq_heap *h, size_t ko, size_t io,
                                                          eng_request *rq)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->a = sim_xrealloc(h->a, (size_t)h->cap * sizeof *h->a);
    }
    h->a[h->n] = rq;
    up_at(h, ko, io, h->n++);
}

/* What fill_at reads past a heap's last element, so a level's second child needs no test of the
 * size: no key goes after it (a member's keys are class steps, below INT64_MAX), and its id
 * breaks a tie the same way. */
static const eng_request heap_end = {.c_fin_t = INT64_MAX, .c_ev_t = INT64_MAX, .id = INT64_MAX};

/* Fills the hole at i with x, x going no higher than i: the hole sinks to a leaf past the
 * smaller child at each level (one compare a level), then x rises from there to its place. x is
 * the heap's last element, which mostly belongs near the leaves, so this takes about half the
 * compares of sinking x from i (two a level). The order of the heap's elements (each key with
 * its id's tie-break, a total order) is the same whatever places they take. */
static inline __attribute__((always_inline)) void fill_at(eng_rq_heap *h, size_t ko, size_t io,
                                                          int32_t at, eng_request *x)
{
    eng_request **a = h->a;
    /* positions as wide as a pointer, so an element's address needs no widening of them */
    intptr_t n = h->n, top = at, i = at, c;
    a[n] = (eng_request *)&heap_end; /* the slot x left (n < cap): a child past the last */
    while ((c = 2 * i + 1) < n) {
        eng_request *p = a[c], *q = a[c + 1];
        if (less_at(ko, q, p)) {
            p = q;
            c++;
        }
        a[i] = p;
        IDX_AT(io, p) = (int32_t)i;
        i = c;
    }
    while (i > top && less_at(ko, x, a[(i - 1) / 2])) {
        eng_request *p = a[(i - 1) / 2];
        a[i] = p;
        IDX_AT(io, p) = (int32_t)i;
        i = (i - 1) / 2;
    }
    a[i] = x;
    IDX_AT(io, x) = (int32_t)i;
}

static inline __attribute__((always_inline)) void remove_as(eng_rq_heap *h, size_t ko, size_t io,
                                                            eng_request *rq)
{
    int32_t i = IDX_AT(io, rq);
    SIM_CHECK(NULL, i >= 0 && i < h->n && h->a[i] == rq);
    IDX_AT(io, rq) = -1;
    eng_request *last = h->a[--h->n];
    if (i == h->n)
        return;
    if (i > 0 && less_at(ko, last, h->a[(i - 1) / 2])) {
        place_at(h, io, i, last);
        up_at(h, ko, io, i);
    } else {
        fill_at(h, ko, io, i, last);
    }
}

void eng_heap_push(eng_rq_heap *h, eng_request *rq)
{
    push_as(h, h->key_off, h->idx_off, rq);
}

void eng_heap_remove(eng_rq_heap *h, eng_request *rq)
{
    remove_as(h, h->key_off, h->idx_off, rq);
}

/* The class's finish heap's top key as the heap now has it (eng_cclass.top). */
static inline void fin_top(eng_cclass *cl)
{
    cl->top = cl->fin.n ? cl->fin.a[0]->c_fin_t : INT64_MAX;
}

/* The class's finish heap (by c_fin_t) and event heap (by c_ev_t), their offsets constants. */
static void fin_push(eng_cclass *cl, eng_request *rq)
{
    SIM_ASSERT(NULL, cl->fin.key_off == FIN_KO && cl->fin.idx_off == FIN_IO);
    push_as(&cl->fin, FIN_KO, FIN_IO, rq);
    fin_top(cl);
}

static void fin_remove(eng_cclass *cl, eng_request *rq)
{
    SIM_ASSERT(NULL, cl->fin.key_off == FIN_KO && cl->fin.idx_off == FIN_IO);
    remove_as(&cl->fin, FIN_KO, FIN_IO, rq);
    fin_top(cl);
}

/* fin_remove of the heap's top rq: remove_as at 0, its place known. */
static inline __attribute__((always_inline)) void fin_pop(eng_cclass *cl, eng_request *rq)
{
    eng_rq_heap *h = &cl->fin;
    SIM_ASSERT(NULL, h->key_off == FIN_KO && h->idx_off == FIN_IO);
    SIM_ASSERT(NULL, h->n > 0 && h->a[0] == rq && rq->c_fin_idx == 0);
    rq->c_fin_idx = -1;
    eng_request *last = h->a[--h->n];
    if (h->n > 0)
        fill_at(h, FIN_KO, FIN_IO, 0, last);
    fin_top(cl);
}

static void ev_push(eng_cclass *cl, eng_request *rq)
{
    SIM_ASSERT(NULL, cl->ev.key_off == EV_KO && cl->ev.idx_off == EV_IO);
    push_as(&cl->ev, EV_KO, EV_IO, rq);
}

static void ev_remove(eng_cclass *cl, eng_request *rq)
{
    SIM_ASSERT(NULL, cl->ev.key_off == EV_KO && cl->ev.idx_off == EV_IO);
    remove_as(&cl->ev, EV_KO, EV_IO, rq);
}

eng_request *eng_heap_top(const eng_rq_heap *h)
{
    return h->n ? h->a[0] : NULL;
}

int eng_heap_check(const eng_rq_heap *h)
{
    for (int32_t i = 0; i < h->n; i++) {
        if (IDX(h, h->a[i]) != i)
            return -1;
        if (i > 0 && less(h, h->a[i], h->a[(i - 1) / 2]))
            return -1;
    }
    return 0;
}

static inline int32_t res(int64_t x, int32_t m)
{
    if ((m & (m - 1)) == 0) /* a power of two, as block sizes are: a mask, no division */
        return (int32_t)(x & (m - 1));
    int64_t r = x % m;
    return (int32_t)(r < 0 ? r + m : r);
}

/* a: the member's context is a + t of its class. */
static inline int64_t a_of(const eng_request *rq)
{
    return (int64_t)rq->prompt + rq->c_gen0 - 1 - rq->c_t0;
}

static inline int32_t class_index(const eng_cohort *c, const eng_request *rq)
{
    return rq->c_class < c->nclass ? rq->c_class : 0;
}

static inline eng_cclass *cls_of(const eng_cohort *c, const eng_request *rq)
{
    return &c->cls[class_index(c, rq)];
}

/* rq's class's bit in the cohort's class masks (eng_cohort.live, .begun). */
static inline uint64_t bit_of(const eng_cohort *c, const eng_request *rq)
{
    return UINT64_C(1) << class_index(c, rq);
}

/* The classes of mask m, in index order: for (uint64_t m = mask; m; m &= m - 1) cls[CLASS(m)]. */
#define CLASS(m) __builtin_ctzll(m)

static inline int paged(const eng_request *rq)
{
    return !rq->kv_reserved;
}

static void rc_init(eng_rescount *rc, int32_t bs)
{
    rc->cnt = sim_xcalloc((size_t)bs, sizeof *rc->cnt);
    rc->pre = sim_xcalloc(2 * (size_t)bs + 1, sizeof *rc->pre);
}

static void rc_free(eng_rescount *rc)
{
    free(rc->cnt);
    free(rc->pre);
    rc->cnt = NULL;
    rc->pre = NULL;
}

/* d more members with residue i (O(1): the running sums are summed again when read). */
static inline void rc_add(eng_rescount *rc, int32_t i, int32_t d)
{
    rc->cnt[i] += d;
    rc->stale = 1;
}

/* The running sums of rc's counts (O(bs)), once they moved. */
static __attribute__((noinline)) void rc_sums(eng_rescount *rc, int32_t bs)
{
    int64_t sum = 0;
    for (int32_t k = 0; k < bs; k++) {
        rc->pre[k] = sum;
        sum += rc->cnt[k];
    }
    rc->pre[bs] = sum;
    for (int32_t k = 1; k <= bs; k++)
        rc->pre[bs + k] = sum + rc->pre[k];
    rc->stale = 0;
}

/* Members counted in rc by a mod bs whose (a + off) crosses a multiple of bs when it grows by
 * len: sum of floor(((a + off) mod bs + len) / bs): every member len / bs times, and once more
 * those whose residue lies in the window of the last len mod bs residues before a multiple.
 * O(1) (a window of one residue, as a plain decode step's, is its count; a wider one reads the
 * running sums, summed again in O(bs) when members joined or left since). */
static inline int64_t cross(eng_rescount *rc, int64_t total, int32_t bs, int64_t off, int64_t len)
{
    int64_t q = (bs & (bs - 1)) == 0 ? len >> __builtin_ctz((unsigned)bs) : len / bs;
    int64_t n = total * q;
    int32_t w = (int32_t)(len - q * bs);
    if (w == 0)
        return n;
    int32_t s = res(bs - w - off, bs); /* the window's first residue: a + off = bs - w mod bs */
    if (w == 1)
        return n + rc->cnt[s];
    if (rc->stale)
        rc_sums(rc, bs);
    if (s + w <= bs)
        return n + rc->pre[s + w] - rc->pre[s];
    return n + rc->pre[bs] - rc->pre[s] + rc->pre[s + w - bs];
}

/* grow_blocks counted afresh (a non-empty class), and kept for the next call. */
static int64_t grow_count(const eng_replica *r, const eng_cclass *cl, int64_t len)
{
    const eng_kvlay *l = &r->kv.lay;
    /* a cache of the count: the class holds the same members whether it is kept or not */
    eng_cclass *m = (eng_cclass *)cl;
    m->gm_len = len;
    m->gm_t = cl->t;
    m->gm_ver = cl->gver;
    m->gm_val = (l->fm + l->wm) * cross(&m->grow, cl->paged, l->bs, cl->t - 1, len);
    return m->gm_val;
}

/* Blocks the growing and windowed layers of a class's paged members add when every context
 * extends by len slots (the top block index moves: ceil((x + len) / bs) - ceil(x / bs)). */
static inline int64_t grow_blocks(const eng_replica *r, const eng_cclass *cl, int64_t len)
{
    if (cl->paged == 0) /* an empty class (one of 8 acceptance classes, often) */
        return 0;
    if (cl->gm_len == len && cl->gm_t == cl->t && cl->gm_ver == cl->gver)
        return cl->gm_val;
    return grow_count(r, cl, len);
}

/* Blocks of the step in flight's slots past the n tokens its class accepted (of ahead): they go
 * back. While the growth counted at the step's start stands (same t, length and members), those
 * are the boundaries crossed between n and ahead slots: one count, not two. */
static int64_t rejected_blocks(const eng_replica *r, eng_cclass *cl, int64_t n, int64_t ahead)
{
    if (n == ahead)
        return 0;
    const eng_kvlay *l = &r->kv.lay;
    if (cl->paged > 0 && cl->gm_len == ahead && cl->gm_t == cl->t && cl->gm_ver == cl->gver &&
        cl->gm_val == cl->alloc) {
        int64_t b = (l->fm + l->wm) * cross(&cl->grow, cl->paged, l->bs, cl->t - 1 + n, ahead - n);
        SIM_ASSERT(r->e->ctx, b == cl->alloc - grow_blocks(r, cl, n));
        return b;
    }
    return cl->alloc - grow_blocks(r, cl, n);
}

/* The cap's kind: 0 none, 1 min(context, cap), 2 context mod (cap + 1). */
static inline int cap_kind(const eng_cohort *c)
{
    SIM_ASSERT(NULL, c->cap_kind == (c->cap <= 0 ? 0 : c->cap_chunked ? 2 : 1));
    return c->cap_kind;
}

/* Do the windowed layers free blocks as a sliding window (members past it in `slide`)? */
static inline int sliding(const eng_replica *r)
{
    return r->kv.lay.wm > 0 && !r->kv.lay.chunked;
}

void eng_cohort_init(eng_cohort *c, const eng_engine *e, const eng_config *cfg)
{
    memset(c, 0, sizeof *c);
    c->bs = cfg->block_size;
    c->cap = eng_shape_cap(&cfg->model, &c->cap_chunked);
    int spec = cfg->spec.method != ENG_SPEC_NONE;
    c->nclass = spec && cfg->spec.classes > 1 ? cfg->spec.classes : 1;
    c->cap_kind = c->cap <= 0 ? 0 : c->cap_chunked ? 2 : 1;
    c->one = c->nclass == 1 && c->cap_kind == 0;
    SIM_CHECK(e->ctx, c->nclass <= 64); /* a bit each in live and begun */
    c->cls = sim_xcalloc((size_t)c->nclass, sizeof *c->cls);
    for (int32_t i = 0; i < c->nclass; i++) {
        eng_cclass *cl = &c->cls[i];
        eng_heap_init(&cl->fin, offsetof(eng_request, c_fin_t), offsetof(eng_request, c_fin_idx));
        cl->top = INT64_MAX;
        eng_heap_init(&cl->ev, offsetof(eng_request, c_ev_t), offsetof(eng_request, c_ev_idx));
        rc_init(&cl->grow, c->bs);
        rc_init(&cl->slide, c->bs);
        cl->adv = 1;
        cl->gm_len = -1;
    }
    if (spec)
        c->accept = sim_mt_of(e->ctx, SIM_STREAM_ACCEPT);
    c->next_k = -1;
    c->run_layout = -1;
    c->rule_k = -1;
    c->nm_len = -1;
}

void eng_cohort_free(eng_cohort *c)
{
    for (int32_t i = 0; c->cls && i < c->nclass; i++) {
        eng_heap_free(&c->cls[i].fin);
        eng_heap_free(&c->cls[i].ev);
        rc_free(&c->cls[i].grow);
        rc_free(&c->cls[i].slide);
    }
    free(c->cls);
    free(c->fresh);
    c->cls = NULL;
    c->fresh = NULL;
}

/* Blocks a paged member holds: its context, plus the slots of a decode step in flight. */
static int32_t member_blocks(const eng_replica *r, const eng_request *rq)
{
    const eng_cohort *c = &r->co;
    int64_t ctx = a_of(rq) + cls_of(c, rq)->t;
    int64_t ahead = c->in_step ? 1 + c->step_k : 0;
    return (int32_t)eng_lay_held(&r->kv.lay, ctx, ahead);
}

int32_t eng_cohort_blocks_of(const eng_replica *r, const eng_request *rq)
{
    if (rq->status == ENG_RQ_DECODE && paged(rq))
        return member_blocks(r, rq);
    return rq->kv_blocks;
}

int64_t eng_cohort_capped_of(const eng_cohort *c, int64_t ctx)
{
    switch (cap_kind(c)) {
    case 1:
        return ctx < c->cap ? ctx : c->cap;
    case 2:
        return ctx % ((int64_t)c->cap + 1);
    case 0:
        return 0;
    default:
        SIM_CHECK(NULL, !"a cap kind the cohort does not know");
        return 0;
    }
}

/* Puts rq (context a + t) into its class's cap bookkeeping: below the cap or past it (and past
 * its sliding window), or in its chunk; with its next event. */
static inline __attribute__((always_inline)) void cap_enter(eng_replica *r, eng_cclass *cl,
                                                            eng_request *rq, int64_t a)
{
    eng_cohort *c = &r->co;
    int64_t ctx = a + cl->t;
    rq->c_ev_idx = -1;
    switch (cap_kind(c)) {
    case 1:
        if (ctx < c->cap) {
            cl->n_low++;
            cl->a_low += a;
            rq->c_ev_t = c->cap - a;
            ev_push(cl, rq);
        } else if (sliding(r) && paged(rq)) {
            rc_add(&cl->slide, res(a, c->bs), 1);
            cl->nslide++;
        }
        break;
    case 2: {
        int64_t w = (int64_t)c->cap + 1;
        cl->wraps += ctx / w;
        rq->c_ev_t = (ctx / w + 1) * w - a;
        ev_push(cl, rq);
        break;
    }
    case 0:
        break;
    default:
        SIM_CHECK(NULL, !"a cap kind the cohort does not know");
    }
}

static inline __attribute__((always_inline)) void cap_leave(eng_replica *r, eng_cclass *cl,
                                                            eng_request *rq, int64_t a)
{
    eng_cohort *c = &r->co;
    int64_t ctx = a + cl->t;
    if (rq->c_ev_idx >= 0)
        ev_remove(cl, rq);
    switch (cap_kind(c)) {
    case 1:
        if (ctx < c->cap) {
            cl->n_low--;
            cl->a_low -= a;
        } else if (sliding(r) && paged(rq)) {
            rc_add(&cl->slide, res(a, c->bs), -1);
            cl->nslide--;
        }
        break;
    case 2:
        cl->wraps -= ctx / ((int64_t)c->cap + 1);
        break;
    case 0:
        break;
    default:
        SIM_CHECK(NULL, !"a cap kind the cohort does not know");
    }
}

/* Members of cl whose context reached the cap or a chunk boundary by its t: their sums move, and
 * the windowed layers' blocks before the window are freed. Returns the blocks freed. */
static int64_t cap_events(eng_replica *r, eng_cclass *cl)
{
    eng_cohort *c = &r->co;
    const eng_kvlay *l = &r->kv.lay;
    int64_t freed = 0;
    eng_request *rq;
    while ((rq = eng_heap_top(&cl->ev)) && rq->c_ev_t <= cl->t) {
        int64_t a = a_of(rq);
        if (cap_kind(c) == 2) {
            /* MODEL: vLLM ChunkedLocalAttentionManager: at a chunk boundary every block of the
             * chunk before is skipped and freed (get_num_skipped_tokens) */
            int64_t w = (int64_t)c->cap + 1, edge = rq->c_ev_t + a;
            cl->wraps++;
            if (l->wm && paged(rq))
                freed += l->wm * (edge / l->bs - (edge - w) / l->bs);
            ev_remove(cl, rq);
            rq->c_ev_t += w;
            ev_push(cl, rq);
        } else {
            cl->n_low--;
            cl->a_low -= a;
            ev_remove(cl, rq);
            if (sliding(r) && paged(rq)) {
                /* MODEL: vLLM SlidingWindowManager.remove_skipped_blocks: blocks wholly before
                 * the window of the next token (c - W + 1 tokens skipped) are freed */
                freed += l->wm * ((a + cl->t - l->window + 1) / l->bs);
                rc_add(&cl->slide, res(a, c->bs), 1);
                cl->nslide++;
            }
        }
    }
    return freed;
}

void eng_cohort_join(eng_replica *r, eng_request *rq, int64_t now)
{
    eng_cohort *c = &r->co;
    SIM_ASSERT(r->e->ctx, rq->generated < rq->output);
    int32_t ci = class_index(c, rq);
    eng_cclass *cl = &c->cls[ci];
    int64_t t = cl->t; /* read once: the stores to rq below leave it */
    rq->status = ENG_RQ_DECODE;
    rq->c_t0 = t;
    rq->c_gen0 = rq->generated;
    rq->c_fin_t = t + (rq->output - rq->generated);
    int64_t a = a_of(rq);
    if (cl->n == 0) /* as a class a step visited is left (eng_cohort_end_step), or as the step
                       in flight drew it */
        cl->adv = !c->in_step || c->step_k == 0 ? 1 : c->drawn_base + c->drawn[ci];
    cl->a_sum += a;
    cl->n++;
    c->n++;
    c->mver++;
    c->live |= UINT64_C(1) << ci;
    c->ctx += a + t;
    c->fin_known = 0;
    fin_push(cl, rq);
    if (paged(rq)) {
        SIM_ASSERT(r->e->ctx, rq->kv_blocks == member_blocks(r, rq));
        rc_add(&cl->grow, res(a, c->bs), 1);
        cl->gver++;
        cl->paged++;
        c->paged++;
    }
    cap_enter(r, cl, rq, a);
    if (c->nfresh == c->capfresh) {
        c->capfresh = c->capfresh ? 2 * c->capfresh : 64;
        c->fresh = sim_xrealloc(c->fresh, (size_t)c->capfresh * sizeof *c->fresh);
    }
    c->fresh[c->nfresh++] = rq;
    rq->c_new = c->nfresh; /* index + 1 */
    (void)now;
}

static void drop_fresh(eng_cohort *c, eng_request *rq)
{
    if (!rq->c_new)
        return;
    int32_t i = rq->c_new - 1;
    eng_request *last = c->fresh[--c->nfresh];
    c->fresh[i] = last;
    last->c_new = i + 1;
    rq->c_new = 0;
}

/* eng_cohort_leave; top: rq is its class's first to finish (the top of its finish heap), taken
 * off the heap's top with no look-up of its place. */
static inline __attribute__((always_inline)) void leave_as(eng_replica *r, eng_request *rq, int top)
{
    eng_cohort *c = &r->co;
    SIM_ASSERT(r->e->ctx, rq->status == ENG_RQ_DECODE);
    eng_cclass *cl = cls_of(c, rq);
    int64_t a = a_of(rq), t = cl->t; /* read once: the stores to rq below leave them */
    int64_t gen = rq->c_gen0 + (t - rq->c_t0);
    rq->generated = (int32_t)(gen < rq->output ? gen : rq->output);
    if (!rq->c_new)
        rq->t_last_token = c->last_step_end;
    drop_fresh(c, rq);
    cap_leave(r, cl, rq, a);
    if (paged(rq)) {
        SIM_ASSERT(r->e->ctx, a == a_of(rq) && t == cls_of(c, rq)->t);
        rq->kv_blocks = (int32_t)eng_lay_held(&r->kv.lay, a + t, c->in_step ? 1 + c->step_k : 0);
        SIM_ASSERT(r->e->ctx, rq->kv_blocks == member_blocks(r, rq));
        rc_add(&cl->grow, res(a, c->bs), -1);
        cl->gver++;
        cl->paged--;
        c->paged--;
    }
    c->ctx -= a + t;
    c->fin_known = 0;
    c->mver++;
    cl->a_sum -= a;
    if (--cl->n == 0)
        c->live &= ~bit_of(c, rq);
    c->n--;
    if (top)
        fin_pop(cl, rq);
    else
        fin_remove(cl, rq);
}

void eng_cohort_leave(eng_replica *r, eng_request *rq)
{
    leave_as(r, rq, 0);
}

/* leave_as of a heap's top, out of line for eng_cohort_end_step (whose frame, every step's, it
 * would make larger). */
static __attribute__((noinline)) void leave_top(eng_replica *r, eng_request *rq)
{
    leave_as(r, rq, 1);
}

/* How a step of k drafts draws its acceptance: the minimum-variance schedule's floor(AL) and
 * frac(AL), set once per step for every class. */
typedef struct draw_rule {
    int iid;
    int32_t k, base;
    double frac;
} draw_rule;

static draw_rule draw_rule_of(const eng_spec *sp, int32_t k)
{
    draw_rule d = {.iid = sp->dist == ENG_SPEC_IID, .k = k};
    double al = sp->al < 1 ? 1 : sp->al > k + 1 ? k + 1 : sp->al;
    d.base = (int32_t)al;
    d.frac = al - d.base;
    return d;
}

/* Tokens a step emits per member: the drafts it accepts, plus one. */
static int32_t draw_accepted(const eng_spec *sp, const draw_rule *d, sim_mt *g)
{
    int32_t n = 1;
    if (d->iid) {
        while (n <= d->k && sim_mt_uniform(g) < sp->rate)
            n++;
        return n;
    }
    n = d->base;
    if (d->frac > 0 && sim_mt_uniform(g) < d->frac)
        n++;
    return n;
}

/* draw_classes of a rule that draws class by class (the iid rule, or an integer AL): out of line,
 * so the minimum-variance rule's draws keep a small frame. */
static __attribute__((noinline)) void draw_classes_each(eng_cohort *c, const eng_spec *sp,
                                                        int32_t k)
{
    draw_rule d = draw_rule_of(sp, k);
    int32_t adv[ENG_SPEC_MAX_CLASSES]; /* a local array, which no store to drawn can alias */
    for (int32_t i = 0; i < c->nclass; i++)
        adv[i] = draw_accepted(sp, &d, c->accept);
    memcpy(c->drawn, adv, (size_t)c->nclass * sizeof *adv);
    c->drawn_base = 0;
}

/* Every class's tokens for a step of k > 0 drafts (eng_cohort.drawn): each class draws in index
 * order, members or not. The minimum-variance rule draws one word a class, u < frac(AL), which is
 * the integer compare x < ceil(frac * 2^32) for u = x / 2^32 (exact: frac * 2^32 is a double with
 * no rounding), found once for each k (eng_cohort.rule_k) and made on the classes' words at once
 * (sim_mt_below). */
static void draw_classes(eng_cohort *c, const eng_spec *sp, int32_t k)
{
    if (k != c->rule_k) {
        draw_rule d = draw_rule_of(sp, k);
        c->rule_k = k;
        c->rule_base = d.base;
        c->rule_thr = !d.iid && d.frac > 0 ? (uint64_t)ceil(d.frac * 4294967296.0) : 0;
    }
    if (c->rule_thr > 0) {
        sim_mt_below(c->accept, c->rule_thr, c->nclass, c->drawn);
        c->drawn_base = c->rule_base;
        return;
    }
    draw_classes_each(c, sp, k);
}

/* Members of the heap h whose key is below thr: the sum of thr - key over them (O(those)). */
static int64_t heap_short(const eng_rq_heap *h, int32_t i, int64_t thr)
{
    if (i >= h->n)
        return 0;
    int64_t key = h->a[i]->c_fin_t;
    if (key >= thr)
        return 0;
    return thr - key + heap_short(h, 2 * i + 1, thr) + heap_short(h, 2 * i + 2, thr);
}

/* eng_cohort_begin_step's visit of a class with members, a step of k drafts advancing them by
 * a tokens, where no count of its blocks stands: its blocks counted, and its tokens, whether a
 * member finishes and the tokens short of a (members that finish before) added up. */
static inline __attribute__((always_inline)) void begin_class(const eng_replica *r, eng_cclass *cl,
                                                              int32_t a, int32_t k, int64_t *need,
                                                              int64_t *adv, int *due,
                                                              int64_t *shorts)
{
    cl->adv = a;
    cl->alloc = grow_blocks(r, cl, 1 + k);
    *need += cl->alloc;
    *adv += (int64_t)cl->n * cl->adv;
    int64_t to = cl->t + cl->adv, top = cl->top;
    *due |= top <= to;
    if (top < to)
        *shorts += heap_short(&cl->fin, 0, to);
}

/* A step's start's sums kept (need: the blocks it takes; adv: the tokens it advances its
 * members; shorts: the tokens short of that of members that finish before; due: whether a
 * member finishes) and its blocks taken: the tokens it emits. */
static inline __attribute__((always_inline)) int64_t
begin_sums(eng_replica *r, int32_t k, int64_t need, int64_t adv, int64_t shorts, int due)
{
    eng_cohort *c = &r->co;
    c->fin_due = due;
    c->fin_known = 1;
    c->step_adv = adv;
    if (k > 0) { /* every member is in one class */
        c->spec_steps += c->n;
        c->spec_drafts += (int64_t)c->n * k;
        c->spec_accepted += adv - c->n;
    }
    /* MODEL: vLLM KVCacheManager.allocate_slots reserves the step's token and its
     * num_lookahead_tokens (the draft tokens) before the step */
    SIM_CHECK(r->e->ctx, need <= eng_kv_nfree(&r->kv));
    eng_kv_alloc_derived(&r->kv, need);
    return adv - shorts;
}

/* eng_cohort_begin_step where no count of the classes' blocks stands (a step of no drafts, or
 * one after an event): each class with members visited afresh. */
static inline __attribute__((always_inline)) int64_t begin_classes(eng_replica *r, int32_t k)
{
    eng_cohort *c = &r->co;
    int64_t need = 0, adv = 0, shorts = 0;
    int due = 0;
    if (k == 0 && c->one) {
        /* no drafts, one class: class 0 alone, if it has members */
        SIM_ASSERT(r->e->ctx, c->live <= 1);
        if (c->live)
            begin_class(r, &c->cls[0], 1, 0, &need, &adv, &due, &shorts);
    } else {
        for (uint64_t m = c->live; m; m &= m - 1)
            begin_class(r, &c->cls[CLASS(m)], k > 0 ? c->drawn_base + c->drawn[CLASS(m)] : 1, k,
                        &need, &adv, &due, &shorts);
    }
    return begin_sums(r, k, need, adv, shorts, due);
}

/* begin_classes of a step of drafts, out of line, so that a run's counted steps (begin_drafts)
 * keep a small frame. */
static __attribute__((noinline)) int64_t begin_uncounted(eng_replica *r, int32_t k)
{
    return begin_classes(r, k);
}

/* The tokens short of their classes' of the members that finish before the step in flight's
 * end, class by class (a counted step whose least finish gap is below zero). */
static __attribute__((noinline)) int64_t shorts_of_classes(const eng_cohort *c)
{
    int64_t shorts = 0;
    for (uint64_t m = c->live; m; m &= m - 1) {
        const eng_cclass *cl = &c->cls[CLASS(m)];
        int64_t to = cl->t + cl->adv;
        if (cl->top < to)
            shorts += heap_short(&cl->fin, 0, to);
    }
    return shorts;
}

/* eng_cohort_begin_step of a step of k > 0 drafts: the classes' draws, then their visit. */
static __attribute__((noinline)) int64_t begin_drafts(eng_replica *r, int32_t k)
{
    eng_cohort *c = &r->co;
    /* MODEL: vLLM's synthetic rejection sampler draws per request and step; SGLang's
     * SGLANG_SIMULATE_ACC_LEN one length per step for the whole batch: members of a class share
     * a draw (one class is SGLang's rule). Every class draws, members or not, so the stream moves
     * the same whoever holds which class. */
    draw_classes(c, &r->e->cfg.spec, k);
    /* the blocks eng_cohort_end_need counted for this step stand */
    int counted = c->next_k == k && c->next_ver == c->mver && c->next_step == c->step;
    /* (a step of no drafts leaves it: mver only grows, so an older start's version that still
     * stands says as much for this start) */
    c->begun_ver = c->mver;
    c->begun = c->live;
    if (!counted)
        return begin_uncounted(r, k);
    /* a decode run's step after one ended by eng_cohort_end_need: the blocks it counted and each
     * class's draw and top finish read into locals before a store to the class */
    const int32_t *drawn = c->drawn, base = c->drawn_base;
    eng_cclass *cls = c->cls;
    int64_t lo = INT64_MAX; /* the least (top finish - to) over the classes */
    int64_t adv = 0;
    for (uint64_t m = c->live; m; m &= m - 1) {
        eng_cclass *cl = &cls[(unsigned)CLASS(m)];
        int32_t a = base + drawn[(unsigned)CLASS(m)];
        int64_t next = cl->next, gap = cl->top - (cl->t + a);
        SIM_ASSERT(r->e->ctx, cl->fin.n > 0 && cl->top == cl->fin.a[0]->c_fin_t &&
                                  next == grow_blocks(r, cl, 1 + k));
        cl->adv = a;
        cl->alloc = next;
        adv += (int64_t)cl->n * a;
        lo = gap < lo ? gap : lo;
    }
    /* (a member finishing short of its class's tokens: lo below zero) */
    return begin_sums(r, k, c->next_need, adv, lo < 0 ? shorts_of_classes(c) : 0, lo <= 0);
}

/* eng_cohort_begin_step of a step of no drafts. */
static __attribute__((noinline)) int64_t begin_plain(eng_replica *r)
{
    r->co.begun = r->co.live;
    return begin_classes(r, 0);
}

/* (each kind of step in a function of its own: the frame of the one does not cost the other) */
int64_t eng_cohort_begin_step(eng_replica *r, int32_t k)
{
    eng_cohort *c = &r->co;
    c->step_k = k;
    c->in_step = 1;
    return k > 0 ? begin_drafts(r, k) : begin_plain(r);
}

/* Whether a member of a class with members has its output by the step in flight's end. */
static int finishes_of_classes(const eng_cohort *c)
{
    for (uint64_t m = c->live; m; m &= m - 1) {
        const eng_cclass *cl = &c->cls[CLASS(m)];
        if (cl->top <= cl->t + cl->adv)
            return 1;
    }
    return 0;
}

int eng_cohort_step_finishes(const eng_cohort *c)
{
    SIM_ASSERT(NULL, !c->fin_known || c->fin_due == finishes_of_classes(c));
    return c->fin_known ? c->fin_due : finishes_of_classes(c);
}

int eng_cohort_plain(const eng_replica *r)
{
    const eng_cohort *c = &r->co;
    SIM_ASSERT(NULL, c->one == (c->nclass == 1 && cap_kind(c) == 0));
    return c->one && r->kv.lay.wm == 0 && c->nfresh == 0 && c->step_k == 0;
}

/* eng_cohort_need over the classes with members (grow_blocks of each). */
static int64_t count_of_classes(const eng_replica *r, int64_t len)
{
    const eng_cohort *c = &r->co;
    int64_t need = 0;
    for (uint64_t m = c->live; m; m &= m - 1) /* an empty class grows none */
        need += grow_blocks(r, &c->cls[CLASS(m)], len);
    return need;
}

/* count_of_classes, kept for the next call while it stands: the classes' t move only with a
 * step's end (eng_cohort.step) and their members only with a join or leave (eng_cohort.mver), so
 * a scheduler that asks again before either gets the count it had. */
static int64_t need_of_classes(const eng_replica *r, int32_t k, int32_t steps)
{
    /* a cache of the count: the cohort holds the same members whether it is kept or not */
    eng_cohort *c = (eng_cohort *)&r->co;
    int64_t len = (int64_t)steps * (1 + k);
    if (c->nm_len == len && c->nm_ver == c->mver && c->nm_step == c->step) {
        SIM_ASSERT(r->e->ctx, c->nm_val == count_of_classes(r, len));
        return c->nm_val;
    }
    c->nm_val = count_of_classes(r, len);
    c->nm_len = len;
    c->nm_ver = c->mver;
    c->nm_step = c->step;
    return c->nm_val;
}

int64_t eng_cohort_need(const eng_replica *r, int32_t k, int32_t steps)
{
    /* one token of one class whose blocks only grow: a window of one residue, its count (as
     * eng_cohort_plain_need counts it, members that joined since the last step or not) */
    if (k == 0 && steps == 1 && r->co.nclass == 1 && r->kv.lay.wm == 0) {
        int64_t need = eng_cohort_plain_need(r);
        SIM_ASSERT(r->e->ctx, need == need_of_classes(r, k, steps));
        return need;
    }
    return need_of_classes(r, k, steps);
}

/* A step's end for its inter-token gaps: one since the last step's end for each member that was
 * in it, one since its first token for each member that joined with it; the step counted. */
static inline __attribute__((always_inline)) void close_step_gaps(eng_engine *e, eng_cohort *c,
                                                                  int64_t now)
{
    int64_t old = c->n - c->nfresh;
    if (old > 0)
        eng_emit_itl(e, now - c->last_step_end, old);
    for (int32_t i = 0; i < c->nfresh; i++) {
        eng_request *rq = c->fresh[i];
        eng_emit_itl(e, now - rq->t_last_token, 1);
        rq->c_new = 0;
    }
    c->nfresh = 0;
    c->step++;
    c->last_step_end = now;
}

void eng_cohort_end_step(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *))
{
    eng_cohort *c = &r->co;
    eng_engine *e = r->e;
    const eng_kvlay *l = &r->kv.lay;
    int64_t zeros = 0, freed = 0, ahead = 1 + c->step_k, moved = 0;
    /* the classes with members or with blocks of the step: another holds nothing and moves
     * nothing (its t stays: a member's context a + t is relative to its class's t alone) */
    uint64_t visit = c->live | c->begun;
    c->in_step = 0;
    close_step_gaps(e, c, now);
    for (uint64_t m = visit; m; m &= m - 1) {
        eng_cclass *cl = &c->cls[CLASS(m)];
        int64_t n = cl->adv;
        if (!(c->begun & m & -m))
            cl->alloc = 0; /* it had no members when the step began */
        /* MODEL: rejected draft tokens free their slots: the blocks beyond the accepted tokens
         * go back (vLLM reuses them in the next step's allocate_slots; freeing them here and
         * allocating again then leaves the same blocks free when the next step is formed) */
        freed += rejected_blocks(r, cl, n, ahead);
        if (sliding(r))
            freed += l->wm * cross(&cl->slide, cl->nslide, l->bs, cl->t - l->window + 1, n);
        zeros += (int64_t)cl->n * (n - 1);
        moved += (int64_t)cl->n * n;
        cl->t += n;
        freed += cap_events(r, cl);
    }
    c->ctx += moved;
    c->begun = 0;
    c->fin_known = 0;
    eng_kv_give(&r->kv, freed);
    /* a multi-token step is one gap followed by zero gaps, as a client sees it */
    for (uint64_t m = visit; m; m &= m - 1) {
        eng_cclass *cl = &c->cls[CLASS(m)];
        while (cl->top <= cl->t) {
            eng_request *rq = cl->fin.a[0];
            zeros -= cl->t - rq->c_fin_t; /* it stopped at its output */
            leave_top(r, rq);
            fin(r, rq);
        }
        cl->adv = 1;
    }
    if (zeros > 0)
        eng_emit_itl(e, 0, zeros);
    c->step_k = 0;
}

void eng_cohort_end(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *))
{
    eng_cohort *c = &r->co;
    eng_cclass *cl = &c->cls[0];
    SIM_ASSERT(NULL, c->one == (c->nclass == 1 && cap_kind(c) == 0));
    if (!c->one || c->step_k != 0 || sliding(r) || cl->adv != 1) {
        eng_cohort_end_step(r, now, fin);
        return;
    }
    /* eng_cohort_end_step's moves where they do something: no rejected slots (1 accepted of 1),
     * no cap events, so no block goes back; no zero gaps (one token each, and a finishing
     * member only takes some away) */
    eng_engine *e = r->e;
    int visit = (c->live | c->begun) != 0;
    c->in_step = 0;
    close_step_gaps(e, c, now);
    if (visit) {
        if (!(c->begun & 1))
            cl->alloc = 0; /* it had no members when the step began */
        c->ctx += cl->n;
        cl->t++;
    }
    c->begun = 0;
    c->fin_known = 0;
    if (visit) {
        while (cl->top <= cl->t) {
            eng_request *rq = cl->fin.a[0];
            leave_as(r, rq, 1);
            fin(r, rq);
        }
    }
    c->step_k = 0;
}

/* Members counted in rc whose residue lies in the w residues from s on, mod bs (0 < w <= bs):
 * what cross counts for a growth of w < bs slots, from the running sums alone. */
static inline int64_t window(eng_rescount *rc, int32_t bs, int32_t s, int32_t w)
{
    if (rc->stale)
        rc_sums(rc, bs);
    return rc->pre[s + w] - rc->pre[s];
}

/* eng_cohort_end_need's visit of a class with members (no cap, no window, its members those of
 * the step's start, a power-of-two block size above 1 + k and the step's lookahead): the blocks
 * of its rejected drafts' slots go back, its members advance, and the blocks of the next step's
 * 1 + k slots are counted (eng_cclass.next). Returns the blocks given back over per (blocks a
 * member's slot adds per boundary crossed: the growing and windowed layers). */
static inline int64_t end_class(eng_replica *r, eng_cclass *cl, int32_t ahead, int32_t k,
                                int64_t per)
{
    const eng_kvlay *l = &r->kv.lay;
    int32_t bs = l->bs, n = cl->adv;
    int64_t back = 0, t = cl->t + n; /* the class's t after the step */
    if (cl->paged == 0) {
        cl->t = t;
        cl->next = 0;
        return 0;
    }
    /* cross's windows end at the residue e with a + off = bs - 1 mod bs (off = t - 1 + n for the
     * rejected slots past the n accepted, t' - 1 for the next step's, t' = t + n: the same, so
     * e = -t' mod bs) */
    int32_t e1 = (int32_t)(-t & (bs - 1)) + 1;
    if (ahead == 1 + k) { /* the next step's window holds the rejected slots' (a run's steps) */
        if (cl->grow.stale)
            rc_sums(&cl->grow, bs);
        const int64_t *p = cl->grow.pre + bs; /* e1 + bs - w >= 1 */
        back = p[e1] - p[e1 - (ahead - n)];
        cl->next = per * (p[e1] - p[e1 - ahead]);
    } else {
        if (n < ahead) /* rejected_blocks's count while the step's growth stands */
            back = window(&cl->grow, bs, e1 + bs - (ahead - n), ahead - n);
        cl->next = per * window(&cl->grow, bs, e1 + bs - (1 + k), 1 + k);
    }
    SIM_ASSERT(r->e->ctx, per * back == cl->alloc - grow_blocks(r, cl, n));
    cl->t = t;
    SIM_ASSERT(r->e->ctx, cl->next == grow_blocks(r, cl, 1 + k));
    return back;
}

/* end_class of every class with members where the step's lookahead is the next step's (ahead ==
 * 1 + k, a run's steps), the loop's invariants (block size, per, ahead) read once: returns the
 * blocks given back over per, and the next step's blocks in *need (each class's in its next).
 * Each class's t moves by its adv, which goes back to 1. */
static __attribute__((noinline)) int64_t end_run_classes(eng_replica *r, int32_t ahead, int64_t per,
                                                         int64_t *need)
{
    eng_cohort *c = &r->co;
    eng_cclass *cls = c->cls;
    const int32_t bs = r->kv.lay.bs;
    /* indices as wide as a pointer, so an address needs no widening of them */
    const intptr_t mask = bs - 1, ah = ahead, off = (intptr_t)bs + 1;
    int64_t back = 0, sum = 0;
    for (uint64_t m = c->live; m; m &= m - 1) {
        eng_cclass *cl = &cls[(unsigned)CLASS(m)];
        intptr_t n = cl->adv;
        int64_t t = cl->t + n; /* the class's t after the step */
        if (cl->paged == 0) {
            cl->t = t;
            cl->next = 0;
            cl->adv = 1;
            continue;
        }
        if (cl->grow.stale)
            rc_sums(&cl->grow, bs);
        /* end_class's windows, both ending at bs + e1 - 1 of the running sums (bs + e1 - w >= 1) */
        const int64_t *p = cl->grow.pre + ((intptr_t)(-t & mask) + off);
        int64_t top = p[0], b = top - p[n - ah], next = per * (top - p[-ah]);
        SIM_ASSERT(r->e->ctx, per * b == cl->alloc - grow_blocks(r, cl, n));
        back += b;
        cl->t = t;
        cl->next = next;
        cl->adv = 1;
        sum += next;
        SIM_ASSERT(r->e->ctx, next == grow_blocks(r, cl, ahead));
    }
    *need = sum;
    return back;
}

/* The tokens the step in flight advances the members of the classes with members, summed (what
 * its start kept in eng_cohort.step_adv while the same members hold them). */
static inline int64_t adv_of_classes(const eng_cohort *c)
{
    int64_t s = 0;
    for (uint64_t m = c->live; m; m &= m - 1)
        s += (int64_t)c->cls[CLASS(m)].n * c->cls[CLASS(m)].adv;
    return s;
}

/* Whether the cohort's layout lets eng_cohort_end_need end a run's step on its running sums. */
static int32_t layout_runs(const eng_replica *r)
{
    return cap_kind(&r->co) == 0 && !sliding(r) && (r->co.bs & (r->co.bs - 1)) == 0;
}

/* layout_runs, kept at its first asking (eng_cohort.run_layout: the layout is the replica's KV
 * cache's, which may be set after the cohort). */
static int32_t run_layout_of(eng_replica *r)
{
    r->co.run_layout = layout_runs(r);
    return r->co.run_layout;
}

static inline int32_t run_layout(eng_replica *r)
{
    SIM_ASSERT(r->e->ctx, r->co.run_layout < 0 || r->co.run_layout == layout_runs(r));
    return r->co.run_layout >= 0 ? r->co.run_layout : run_layout_of(r);
}

int64_t eng_cohort_end_need(eng_replica *r, int64_t now, int32_t k,
                            void (*fin)(eng_replica *, eng_request *))
{
    eng_cohort *c = &r->co;
    int32_t ahead = 1 + c->step_k;
    if (c->nfresh > 0 || run_layout(r) == 0 || c->begun != c->live || c->begun_ver != c->mver ||
        ahead >= c->bs || k + 1 >= c->bs) {
        eng_cohort_end_step(r, now, fin);
        return eng_cohort_need(r, k, 1);
    }
    SIM_ASSERT(r->e->ctx, !eng_cohort_step_finishes(c) && c->step_adv == adv_of_classes(c));
    /* the tokens the step moves its members, as its start summed them (the same members); a
     * member's tokens past its first are zero gaps */
    int64_t moved = c->step_adv, zeros = moved - c->n, back = 0, need = 0;
    int64_t per = r->kv.lay.fm + r->kv.lay.wm;
    c->in_step = 0;
    if (c->n > 0)
        eng_emit_itl(r->e, now - c->last_step_end, c->n);
    c->step++;
    c->last_step_end = now;
    if (ahead == 1 + k)
        back = end_run_classes(r, ahead, per, &need);
    else
        for (uint64_t m = c->live; m; m &= m - 1) {
            eng_cclass *cl = &c->cls[CLASS(m)];
            back += end_class(r, cl, ahead, k, per);
            need += cl->next;
            cl->adv = 1;
        }
    c->ctx += moved;
    c->begun = 0;
    c->fin_known = 0;
    eng_kv_give(&r->kv, per * back);
    if (zeros > 0)
        eng_emit_itl(r->e, 0, zeros);
    c->step_k = 0;
    c->next_k = k;
    c->next_ver = c->mver;
    c->next_step = c->step;
    c->next_need = need;
    SIM_ASSERT(r->e->ctx, need == eng_cohort_need(r, k, 1));
    return need;
}

/* The members' contexts summed over the classes (eng_cohort.ctx, kept as they move). */
static int64_t ctx_of_classes(const eng_cohort *c)
{
    int64_t s = 0;
    for (int32_t i = 0; i < c->nclass; i++)
        s += c->cls[i].a_sum + (int64_t)c->cls[i].n * c->cls[i].t;
    return s;
}

int64_t eng_cohort_ctx_sum(const eng_cohort *c)
{
    SIM_ASSERT(NULL, c->ctx == ctx_of_classes(c));
    return c->ctx;
}

int64_t eng_cohort_capped_sum(const eng_cohort *c)
{
    int64_t s = 0;
    if (cap_kind(c) == 0)
        return 0;
    for (int32_t i = 0; i < c->nclass; i++) {
        const eng_cclass *cl = &c->cls[i];
        if (cap_kind(c) == 1)
            s += cl->a_low + (int64_t)cl->n_low * cl->t + (int64_t)(cl->n - cl->n_low) * c->cap;
        else if (cap_kind(c) == 2)
            s += cl->a_sum + (int64_t)cl->n * cl->t - ((int64_t)c->cap + 1) * cl->wraps;
    }
    return s;
}

int64_t eng_cohort_capped_growth(const eng_cohort *c)
{
    int64_t g = 0;
    if (cap_kind(c) == 0)
        return 0;
    for (int32_t i = 0; i < c->nclass; i++)
        g += cap_kind(c) == 1 ? c->cls[i].n_low : cap_kind(c) == 2 ? c->cls[i].n : 0;
    return g;
}

int64_t eng_cohort_next_event(const eng_cohort *c)
{
    int64_t k = INT64_MAX;
    for (int32_t i = 0; i < c->nclass; i++) {
        const eng_request *rq = eng_heap_top(&c->cls[i].ev);
        if (rq && rq->c_ev_t - c->cls[i].t < k)
            k = rq->c_ev_t - c->cls[i].t;
    }
    return k;
}

/* One class against its members, recomputed from scratch. 0, or -1 with a message. */
static int class_check(const eng_replica *r, int32_t ci, char *buf, size_t len)
{
    const eng_cohort *c = &r->co;
    const eng_cclass *cl = &c->cls[ci];
    const eng_kvlay *l = &r->kv.lay;
    int64_t a = 0, pg = 0, low = 0, alow = 0, wraps = 0, capped = 0, evs = 0, ns = 0;
    int32_t *grow = sim_xcalloc((size_t)c->bs * 2, sizeof *grow), *slide = grow + c->bs;
    int rc = 0;
    if (eng_heap_check(&cl->fin) || eng_heap_check(&cl->ev)) {
        snprintf(buf, len, "replica %d: cohort class %d heap out of order", r->id, ci);
        rc = -1;
    } else if (cl->top != (cl->fin.n ? cl->fin.a[0]->c_fin_t : INT64_MAX)) {
        snprintf(buf, len, "replica %d: cohort class %d top finish %" PRId64 " kept, %" PRId64,
                 r->id, ci, cl->top, cl->fin.n ? cl->fin.a[0]->c_fin_t : INT64_MAX);
        rc = -1;
    }
    for (int32_t i = 0; rc == 0 && i < cl->fin.n; i++) {
        const eng_request *rq = cl->fin.a[i];
        int64_t ra = a_of(rq), ctx = ra + cl->t, want_ev = -1;
        a += ra;
        capped += eng_cohort_capped_of(c, ctx);
        if (paged(rq)) {
            pg++;
            grow[res(ra, c->bs)]++;
        }
        if (cap_kind(c) == 1 && ctx < c->cap) {
            low++;
            alow += ra;
            want_ev = c->cap - ra;
        } else if (cap_kind(c) == 1 && sliding(r) && paged(rq)) {
            slide[res(ra, c->bs)]++;
            ns++;
        }
        if (cap_kind(c) == 2) {
            int64_t w = (int64_t)c->cap + 1;
            wraps += ctx / w;
            want_ev = (ctx / w + 1) * w - ra;
        }
        evs += want_ev >= 0;
        if (rq->status != ENG_RQ_DECODE || rq->c_fin_t <= cl->t || cls_of(c, rq) != cl ||
            (want_ev >= 0) != (rq->c_ev_idx >= 0) || (want_ev >= 0 && rq->c_ev_t != want_ev)) {
            snprintf(buf, len, "replica %d: request %lld in cohort in a bad state", r->id,
                     (long long)rq->id);
            rc = -1;
        }
    }
    for (int32_t b = 0; rc == 0 && b < c->bs; b++)
        if (grow[b] != cl->grow.cnt[b] || slide[b] != cl->slide.cnt[b] ||
            (!cl->grow.stale && cl->grow.pre[b + 1] - cl->grow.pre[b] != grow[b]) ||
            (!cl->slide.stale && cl->slide.pre[b + 1] - cl->slide.pre[b] != slide[b]) ||
            cl->grow.pre[0] != 0 || cl->slide.pre[0] != 0) {
            snprintf(buf, len, "replica %d: cohort class %d block residue %d miscounted", r->id, ci,
                     b);
            rc = -1;
        }
    if (rc == 0 &&
        (a != cl->a_sum || pg != cl->paged || low != cl->n_low || alow != cl->a_low ||
         wraps != cl->wraps || evs != cl->ev.n || cl->fin.n != cl->n || ns != cl->nslide)) {
        snprintf(buf, len, "replica %d: cohort class %d sums drifted", r->id, ci);
        rc = -1;
    }
    (void)l;
    (void)capped;
    free(grow);
    return rc;
}

int eng_cohort_check(const eng_replica *r, char *buf, size_t len)
{
    const eng_cohort *c = &r->co;
    int64_t n = 0, pg = 0, capped = 0;
    uint64_t live = 0;
    for (int32_t i = 0; i < c->nclass; i++) {
        if (class_check(r, i, buf, len) != 0)
            return -1;
        live |= c->cls[i].n > 0 ? UINT64_C(1) << i : 0;
        n += c->cls[i].n;
        pg += c->cls[i].paged;
        for (int32_t j = 0; j < c->cls[i].fin.n; j++) {
            const eng_request *rq = c->cls[i].fin.a[j];
            capped += eng_cohort_capped_of(c, a_of(rq) + c->cls[i].t);
        }
    }
    if (n != c->n || pg != c->paged) {
        snprintf(buf, len, "replica %d: cohort has %d members, its classes %lld", r->id, c->n,
                 (long long)n);
        return -1;
    }
    if (live != c->live || c->ctx != ctx_of_classes(c)) {
        snprintf(buf, len, "replica %d: cohort's classes with members or summed contexts drifted",
                 r->id);
        return -1;
    }
    /* the capped decode sum the cost model reads, against a brute-force sum over members */
    if (capped != eng_cohort_capped_sum(c)) {
        snprintf(buf, len, "replica %d: capped decode sum %lld, members say %lld", r->id,
                 (long long)eng_cohort_capped_sum(c), (long long)capped);
        return -1;
    }
    return 0;
}
