/*
 * cohort.c: the decode cohort: the decoding sequences of a replica, advanced one token per step
 * in O(1) plus the work for members that change.
 *
 * A member's context (tokens in its KV cache before a step) is context0 + (step - step0); the
 * cohort keeps the sum of (context - step) so the sum of contexts is a_sum + n * step. Each member
 * sits in `fin`, keyed by the step after which it has all its output tokens, and, when its KV is
 * paged, in `blk`, keyed by the step that writes the first token of a new block.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_int.h"

#define KEY(h, rq) (*(int64_t *)((char *)(rq) + (h)->key_off))
#define IDX(h, rq) (*(int32_t *)((char *)(rq) + (h)->idx_off))

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

static inline void place(eng_rq_heap *h, int32_t i, eng_request *rq)
{
    h->a[i] = rq;
    IDX(h, rq) = i;
}

static void up(eng_rq_heap *h, int32_t i)
{
    eng_request *rq = h->a[i];
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!less(h, rq, h->a[p]))
            break;
        place(h, i, h->a[p]);
        i = p;
    }
    place(h, i, rq);
}

static void down(eng_rq_heap *h, int32_t i)
{
    eng_request *rq = h->a[i];
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(h, h->a[c + 1], h->a[c]))
            c++;
        if (!less(h, h->a[c], rq))
            break;
        place(h, i, h->a[c]);
        i = c;
    }
    place(h, i, rq);
}

void eng_heap_push(eng_rq_heap *h, eng_request *rq)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->a = sim_xrealloc(h->a, (size_t)h->cap * sizeof *h->a);
    }
    h->a[h->n] = rq;
    up(h, h->n++);
}

void eng_heap_remove(eng_rq_heap *h, eng_request *rq)
{
    int32_t i = IDX(h, rq);
    SIM_CHECK(NULL, i >= 0 && i < h->n && h->a[i] == rq);
    IDX(h, rq) = -1;
    eng_request *last = h->a[--h->n];
    if (i == h->n)
        return;
    place(h, i, last);
    if (i > 0 && less(h, last, h->a[(i - 1) / 2]))
        up(h, i);
    else
        down(h, i);
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

void eng_cohort_init(eng_cohort *c, int32_t block_size)
{
    c->n = 0;
    c->step = 0;
    c->a_sum = 0;
    c->last_step_end = 0;
    eng_heap_init(&c->fin, offsetof(eng_request, c_fin_step), offsetof(eng_request, c_fin_idx));
    c->fresh = NULL;
    c->nfresh = c->capfresh = 0;
    c->bs = block_size;
    c->bucket = sim_xcalloc((size_t)block_size, sizeof *c->bucket);
    c->bcount = sim_xcalloc((size_t)block_size, sizeof *c->bcount);
    c->paged = 0;
}

void eng_cohort_free(eng_cohort *c)
{
    eng_heap_free(&c->fin);
    free(c->fresh);
    free(c->bucket);
    free(c->bcount);
    c->fresh = NULL;
    c->bucket = NULL;
    c->bcount = NULL;
}

/* Context before the next step of a member joining with g tokens generated. */
static inline int64_t context_of(const eng_request *rq, int32_t g)
{
    return (int64_t)rq->prompt + g - 1;
}

/* a: the member's context is a + step. */
static inline int64_t a_of(const eng_request *rq)
{
    return context_of(rq, rq->c_gen0) - rq->c_step0;
}

/* The residue of the steps at which the member needs a new block: s = 1 - a (mod bs). */
static inline int32_t residue(const eng_cohort *c, const eng_request *rq)
{
    int64_t m = (1 - a_of(rq)) % c->bs;
    return (int32_t)(m < 0 ? m + c->bs : m);
}

static void bucket_insert(eng_cohort *c, eng_request *rq)
{
    int32_t b = residue(c, rq);
    rq->c_bprev = NULL;
    rq->c_bnext = c->bucket[b];
    if (c->bucket[b])
        c->bucket[b]->c_bprev = rq;
    c->bucket[b] = rq;
    c->bcount[b]++;
    c->paged++;
}

static void bucket_remove(eng_cohort *c, eng_request *rq)
{
    int32_t b = residue(c, rq);
    if (rq->c_bprev)
        rq->c_bprev->c_bnext = rq->c_bnext;
    else
        c->bucket[b] = rq->c_bnext;
    if (rq->c_bnext)
        rq->c_bnext->c_bprev = rq->c_bprev;
    rq->c_bprev = rq->c_bnext = NULL;
    c->bcount[b]--;
    c->paged--;
}

/* Blocks a paged member holds: its context, plus the token of a decode step in flight. */
static int32_t member_blocks(const eng_replica *r, const eng_request *rq)
{
    int64_t ctx = a_of(rq) + r->co.step + (r->busy && r->batch.decode ? 1 : 0);
    return (int32_t)((ctx + r->co.bs - 1) / r->co.bs);
}

int32_t eng_cohort_blocks_of(const eng_replica *r, const eng_request *rq)
{
    if (rq->status == ENG_RQ_DECODE && !rq->kv_reserved)
        return member_blocks(r, rq);
    return rq->kv_blocks;
}

void eng_cohort_join(eng_replica *r, eng_request *rq, int64_t now)
{
    eng_cohort *c = &r->co;
    SIM_ASSERT(r->e->ctx, rq->generated < rq->output);
    rq->status = ENG_RQ_DECODE;
    rq->c_step0 = c->step;
    rq->c_gen0 = rq->generated;
    rq->c_fin_step = c->step + (rq->output - rq->generated);
    c->a_sum += a_of(rq);
    c->n++;
    eng_heap_push(&c->fin, rq);
    if (!rq->kv_reserved) {
        SIM_ASSERT(r->e->ctx, rq->kv_blocks == member_blocks(r, rq));
        bucket_insert(c, rq);
    }
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

void eng_cohort_leave(eng_replica *r, eng_request *rq)
{
    eng_cohort *c = &r->co;
    SIM_ASSERT(r->e->ctx, rq->status == ENG_RQ_DECODE);
    rq->generated = rq->c_gen0 + (int32_t)(c->step - rq->c_step0);
    if (!rq->c_new)
        rq->t_last_token = c->last_step_end;
    drop_fresh(c, rq);
    if (!rq->kv_reserved) {
        rq->kv_blocks = member_blocks(r, rq);
        bucket_remove(c, rq);
    }
    c->a_sum -= a_of(rq);
    c->n--;
    eng_heap_remove(&c->fin, rq);
}

void eng_cohort_alloc_step(eng_replica *r)
{
    int32_t need = r->co.bcount[(r->co.step + 1) % r->co.bs];
    SIM_CHECK(r->e->ctx, need <= eng_kv_nfree(&r->kv));
    eng_kv_alloc_derived(&r->kv, need);
}

void eng_cohort_end_step(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *))
{
    eng_cohort *c = &r->co;
    eng_engine *e = r->e;
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
    eng_request *rq;
    while ((rq = eng_heap_top(&c->fin)) && rq->c_fin_step == c->step) {
        eng_cohort_leave(r, rq);
        fin(r, rq);
    }
}

int eng_cohort_check(const eng_replica *r, char *buf, size_t len)
{
    const eng_cohort *c = &r->co;
    if (eng_heap_check(&c->fin)) {
        snprintf(buf, len, "replica %d: cohort heap out of order", r->id);
        return -1;
    }
    if (c->fin.n != c->n) {
        snprintf(buf, len, "replica %d: cohort has %d members but %d in the finish heap", r->id,
                 c->n, c->fin.n);
        return -1;
    }
    int64_t a = 0, paged = 0;
    for (int32_t i = 0; i < c->fin.n; i++) {
        const eng_request *rq = c->fin.a[i];
        a += a_of(rq);
        paged += !rq->kv_reserved;
        if (rq->status != ENG_RQ_DECODE || rq->c_fin_step <= c->step) {
            snprintf(buf, len, "replica %d: request %lld in cohort in a bad state", r->id,
                     (long long)rq->id);
            return -1;
        }
    }
    int64_t counted = 0;
    for (int32_t b = 0; b < c->bs; b++) {
        int32_t k = 0;
        for (const eng_request *rq = c->bucket[b]; rq; rq = rq->c_bnext, k++)
            if (residue(c, rq) != b) {
                snprintf(buf, len, "replica %d: request %lld in the wrong block bucket", r->id,
                         (long long)rq->id);
                return -1;
            }
        if (k != c->bcount[b]) {
            snprintf(buf, len, "replica %d: block bucket %d miscounted", r->id, b);
            return -1;
        }
        counted += k;
    }
    if (a != c->a_sum || paged != c->paged || counted != paged) {
        snprintf(buf, len, "replica %d: cohort sums drifted", r->id);
        return -1;
    }
    return 0;
}
