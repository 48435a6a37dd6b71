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
    h->version = 0;
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
    h->version++;
}

void eng_heap_remove(eng_rq_heap *h, eng_request *rq)
{
    int32_t i = IDX(h, rq);
    SIM_CHECK(NULL, i >= 0 && i < h->n && h->a[i] == rq);
    IDX(h, rq) = -1;
    h->version++;
    eng_request *last = h->a[--h->n];
    if (i == h->n)
        return;
    place(h, i, last);
    if (i > 0 && less(h, last, h->a[(i - 1) / 2]))
        up(h, i);
    else
        down(h, i);
}

void eng_heap_top_increased(eng_rq_heap *h)
{
    h->version++;
    down(h, 0);
}

eng_request *eng_heap_top(const eng_rq_heap *h)
{
    return h->n ? h->a[0] : NULL;
}

static int64_t count_from(const eng_rq_heap *h, int32_t i, int64_t k)
{
    if (i >= h->n || KEY(h, h->a[i]) != k)
        return 0;
    return 1 + count_from(h, 2 * i + 1, k) + count_from(h, 2 * i + 2, k);
}

int64_t eng_heap_count_key(const eng_rq_heap *h, int64_t k)
{
    return count_from(h, 0, k);
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

void eng_cohort_init(eng_cohort *c)
{
    c->n = 0;
    c->step = 0;
    c->a_sum = 0;
    c->last_step_end = 0;
    eng_heap_init(&c->fin, offsetof(eng_request, c_fin_step), offsetof(eng_request, c_fin_idx));
    eng_heap_init(&c->blk, offsetof(eng_request, c_blk_step), offsetof(eng_request, c_blk_idx));
    c->fresh = NULL;
    c->nfresh = c->capfresh = 0;
    c->need_version = UINT64_MAX;
    c->need_step = -1;
    c->need = 0;
}

void eng_cohort_free(eng_cohort *c)
{
    eng_heap_free(&c->fin);
    eng_heap_free(&c->blk);
    free(c->fresh);
    c->fresh = NULL;
}

/* Context before the next step of a member joining with g tokens generated. */
static inline int64_t context_of(const eng_request *rq, int32_t g)
{
    return (int64_t)rq->prompt + g - 1;
}

/* The step that writes the first token of the member's next block: the step s > step at which
 * its context before s is a multiple of the block size. */
static int64_t next_block_step(const eng_replica *r, const eng_request *rq)
{
    int64_t bs = r->e->cfg.block_size;
    int64_t a = context_of(rq, rq->c_gen0) - rq->c_step0; /* context = a + step */
    int64_t ctx = a + r->co.step;
    int64_t m = (ctx + bs - 1) / bs * bs; /* first multiple of bs >= ctx */
    return r->co.step + (m - ctx) + 1;
}

void eng_cohort_join(eng_replica *r, eng_request *rq, int64_t now)
{
    eng_cohort *c = &r->co;
    SIM_ASSERT(r->e->ctx, rq->generated < rq->output);
    rq->status = ENG_RQ_DECODE;
    rq->c_step0 = c->step;
    rq->c_gen0 = rq->generated;
    rq->c_fin_step = c->step + (rq->output - rq->generated);
    c->a_sum += context_of(rq, rq->generated) - c->step;
    c->n++;
    eng_heap_push(&c->fin, rq);
    rq->c_blk_idx = -1;
    if (!rq->kv_reserved) {
        rq->c_blk_step = next_block_step(r, rq);
        if (rq->c_blk_step <= rq->c_fin_step)
            eng_heap_push(&c->blk, rq);
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
    c->a_sum -= context_of(rq, rq->c_gen0) - rq->c_step0;
    c->n--;
    eng_heap_remove(&c->fin, rq);
    if (rq->c_blk_idx >= 0)
        eng_heap_remove(&c->blk, rq);
}

void eng_cohort_alloc_step(eng_replica *r)
{
    eng_cohort *c = &r->co;
    int64_t next = c->step + 1, bs = r->e->cfg.block_size;
    eng_request *rq;
    while ((rq = eng_heap_top(&c->blk)) && rq->c_blk_step == next) {
        SIM_CHECK(r->e->ctx, r->kv_used < r->kv_total);
        r->kv_used++;
        rq->kv_blocks++;
        rq->c_blk_step += bs;
        if (rq->c_blk_step <= rq->c_fin_step)
            eng_heap_top_increased(&c->blk);
        else
            eng_heap_remove(&c->blk, rq);
    }
}

void eng_cohort_end_step(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *))
{
    eng_cohort *c = &r->co;
    eng_engine *e = r->e;
    int64_t old = c->n - c->nfresh;
    if (old > 0)
        eng_metrics_itl(&e->m, now - c->last_step_end, old);
    for (int32_t i = 0; i < c->nfresh; i++) {
        eng_request *rq = c->fresh[i];
        eng_metrics_itl(&e->m, now - rq->t_last_token, 1);
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
    if (eng_heap_check(&c->fin) || eng_heap_check(&c->blk)) {
        snprintf(buf, len, "replica %d: cohort heap out of order", r->id);
        return -1;
    }
    if (c->fin.n != c->n) {
        snprintf(buf, len, "replica %d: cohort has %d members but %d in the finish heap", r->id,
                 c->n, c->fin.n);
        return -1;
    }
    int64_t a = 0;
    for (int32_t i = 0; i < c->fin.n; i++) {
        const eng_request *rq = c->fin.a[i];
        a += context_of(rq, rq->c_gen0) - rq->c_step0;
        if (rq->status != ENG_RQ_DECODE || rq->c_fin_step <= c->step) {
            snprintf(buf, len, "replica %d: request %lld in cohort in a bad state", r->id,
                     (long long)rq->id);
            return -1;
        }
        if (!rq->kv_reserved) {
            /* while a decode step is in flight its blocks are already allocated */
            int64_t ctx = context_of(rq, rq->c_gen0) + (c->step - rq->c_step0) +
                          (r->busy && r->batch.decode ? 1 : 0);
            int64_t need = (ctx + r->e->cfg.block_size - 1) / r->e->cfg.block_size;
            if (rq->kv_blocks != need) {
                snprintf(buf, len, "replica %d: request %lld holds %d blocks, needs %lld", r->id,
                         (long long)rq->id, rq->kv_blocks, (long long)need);
                return -1;
            }
        }
    }
    if (a != c->a_sum) {
        snprintf(buf, len, "replica %d: cohort context sum drifted", r->id);
        return -1;
    }
    return 0;
}
