/*
 * engine_int.h: the engine's internal structures, shared by engine.c, cohort.c, kv.c and
 * metrics.c. Never included from another folder; policies and routers see only engine.h.
 */
#ifndef ENG_ENGINE_INT_H
#define ENG_ENGINE_INT_H

#include "engine.h"
#include "metrics.h"

/* Indexed binary min-heap of requests keyed by one of their int64 fields (ties: request id). */
typedef struct eng_rq_heap {
    eng_request **a;
    int32_t n, cap;
    size_t key_off; /* offsetof(eng_request, c_fin_step) */
    size_t idx_off; /* offsetof(eng_request, c_fin_idx) */
} eng_rq_heap;

void eng_heap_init(eng_rq_heap *h, size_t key_off, size_t idx_off);
void eng_heap_free(eng_rq_heap *h);
void eng_heap_push(eng_rq_heap *h, eng_request *rq);
void eng_heap_remove(eng_rq_heap *h, eng_request *rq);
eng_request *eng_heap_top(const eng_rq_heap *h);
int eng_heap_check(const eng_rq_heap *h);

/* ---- the prefix cache (kv.c) ----
 * Blocks identified by a chained hash of their content live in a table from hash to block; each
 * has a reference count (the requests whose block table holds it). A block nobody references
 * stays cached but counts as free: it waits in the free queue, which also holds runs of
 * anonymous free blocks, and is evicted when an allocation reaches it. Allocations take blocks
 * from the queue's head; freed blocks join its tail (a request's in reverse order, its tail
 * blocks first), as vLLM's block pool does. */
typedef struct eng_pblock {
    uint64_t hash;
    int32_t ref;   /* requests holding it; -1 while the slot is unused */
    int32_t qnode; /* its free-queue node while ref == 0, else -1; next free slot when unused */
} eng_pblock;

typedef struct eng_qnode {
    int64_t count; /* blocks: an anonymous run's length, 1 for a cached block */
    int32_t blk;   /* the cached block, or -1 for a run of anonymous free blocks */
    int32_t prev, next;
} eng_qnode;

typedef struct eng_pstore {
    int mode; /* ENG_PC_AT_SCHEDULE or ENG_PC_AT_COMPLETION */
    eng_pblock *b;
    int32_t nb, capb, freeb; /* slots used, allocated, head of the unused ones (-1: none) */
    int32_t *tab;            /* open addressing: block index + 1, 0 = empty */
    uint32_t tabmask;
    int32_t tabn;
    eng_qnode *q;
    int32_t capq, qfree, qhead, qtail; /* -1: none */
    int64_t inuse;                     /* cached blocks with ref > 0 */
    int64_t refs;                      /* sum of their refs */
    int64_t evictions;                 /* cached blocks evicted */
} eng_pstore;

/* A request's content and its place in the prefix cache (requests of a replica with the cache
 * on; the engine keeps the buffers with the pooled request for reuse). */
typedef struct eng_pcreq {
    eng_segment *seg; /* its prompt's content; none: unique content */
    int32_t nseg, capseg;
    uint64_t uid;    /* content id of a prompt without segments */
    uint64_t out_id; /* content id of its output tokens */
    uint64_t *bh;    /* chained hashes of its leading full blocks */
    int32_t nbh, capbh;
    int32_t cur_seg, cur_off; /* where block nbh starts in the content */
    int32_t *blk;             /* its first nblk blocks: cached block index, or -1 (anonymous) */
    int32_t nblk, capblk;
    int32_t nident; /* entries of blk that are cached blocks */
    int32_t nmemo;  /* waiting requests: blk[0..nmemo) remembers the blocks the last match found
                       (checked before use: a block may have been evicted since) */
} eng_pcreq;

/* The KV blocks of one replica (kv.c). Every block in use is on one account: a request's
 * (rq->kv_blocks, or derived from its context for a paged decode cohort member, cohort.c), or
 * the policy's (held). Swapped requests keep their count while their blocks are on the host.
 * With the prefix cache on, a request's first blocks may be cached blocks shared with others:
 * the blocks in use are then the requests' anonymous blocks, the held ones and the cached blocks
 * someone references. */
typedef struct eng_kv {
    int64_t total;      /* blocks */
    int64_t used;       /* blocks in use, held ones included */
    int64_t held;       /* blocks the policy holds on no request's account */
    int32_t block_size; /* tokens per block */
    eng_pstore *ps;     /* the prefix cache, or NULL */
} eng_kv;

/* Prefix cache internals (kv.c): blocks leave and join the free queue. */
void eng_ps_take(eng_pstore *ps, int64_t n);
void eng_ps_give(eng_pstore *ps, int64_t n);
/* The cached block with hash h, or -1. */
int32_t eng_ps_find(const eng_pstore *ps, uint64_t h);

void eng_kv_init(eng_kv *kv, int64_t total, int32_t block_size);
void eng_kv_fini(eng_kv *kv);
/* Conservation: `on_requests` anonymous blocks counted on requests' accounts, plus the held
 * ones, plus the referenced cached blocks must be the blocks in use, within [0, total]; the
 * requests' cached-block entries (`refs`) must be the cached blocks' reference counts, and the
 * free queue must hold total - used blocks. 0, or -1 with a message naming the replica. */
int eng_kv_check(const eng_kv *kv, int32_t replica, int64_t on_requests, int64_t refs, char *buf,
                 size_t len);
/* Registers rq's full blocks up to `tokens` tokens of its content in the prefix cache (no-op
 * without it). */
void eng_kv_register(eng_kv *kv, eng_request *rq, int64_t tokens);
/* Releases rq's prefix-cache buffers' contents (keeps the buffers for reuse). */
void eng_pcreq_reset(eng_pcreq *pc);
void eng_pcreq_free(eng_pcreq *pc);

static inline int64_t eng_kv_nfree(const eng_kv *kv)
{
    return kv->total - kv->used;
}

/* Blocks that hold `tokens` tokens: ceil(tokens / block size). */
static inline int64_t eng_kv_nblocks(const eng_kv *kv, int64_t tokens)
{
    int64_t bs = kv->block_size;
    return (tokens + bs - 1) / bs;
}

/* n free blocks go into use (from the prefix cache's free queue when it is on). */
static inline void eng_kv_take(eng_kv *kv, int64_t n)
{
    SIM_ASSERT(NULL, n >= 0 && n <= eng_kv_nfree(kv));
    kv->used += n;
    if (kv->ps && n > 0)
        eng_ps_take(kv->ps, n);
}

/* n anonymous blocks in use become free. */
static inline void eng_kv_give(eng_kv *kv, int64_t n)
{
    kv->used -= n;
    if (kv->ps && n > 0)
        eng_ps_give(kv->ps, n);
}

/* Puts n more blocks on rq's account; the caller has checked that they are free. */
static inline void eng_kv_alloc_rq(eng_kv *kv, eng_request *rq, int64_t n)
{
    eng_kv_take(kv, n);
    rq->kv_blocks += (int32_t)n;
}

/* Frees every block on rq's account: with the prefix cache on, its computed full blocks stay
 * cached (registering those not yet registered up to keep_tokens tokens), tail blocks first. */
void eng_kv_free_rq(eng_kv *kv, eng_request *rq, int64_t keep_tokens);

/* A decode step's new blocks for paged cohort members, whose accounts are derived from their
 * contexts: only the count in use changes. The caller has checked that they are free. */
static inline void eng_kv_alloc_derived(eng_kv *kv, int64_t n)
{
    eng_kv_take(kv, n);
}

/* Swap preemption moves rq's blocks to the host (rq keeps its count) and back. */
static inline void eng_kv_swap_out(eng_kv *kv, const eng_request *rq)
{
    eng_kv_give(kv, rq->kv_blocks);
}

static inline void eng_kv_swap_in(eng_kv *kv, const eng_request *rq)
{
    eng_kv_take(kv, rq->kv_blocks);
}

/* Cached blocks at the head of rq's block table (0 without the prefix cache). */
static inline int32_t eng_kv_ident(const eng_request *rq)
{
    return rq->pc ? rq->pc->nident : 0;
}

/* The decoding sequences of one replica, advanced together one token per decode step. */
typedef struct eng_cohort {
    int32_t n;     /* members */
    int64_t step;  /* decode steps run */
    int64_t a_sum; /* sum of (context - step) over members: contexts sum to a_sum + n*step */
    int64_t last_step_end; /* ns: when the last decode step's tokens came out */
    eng_rq_heap fin;       /* by the step at which each member has generated its output */
    /* Paged members by block residue: a member whose context before step s is a + s - 1
     * writes the first token of a new block at every step s = 1 - a (mod block size), so the
     * members needing a block at step s are exactly bucket[s mod block size]. */
    int32_t bs;           /* block size */
    eng_request **bucket; /* bs list heads */
    int32_t *bcount;      /* bs counts */
    int64_t paged;        /* paged members */
    eng_request **fresh;  /* members that joined since the last decode step (own ITL gap) */
    int32_t nfresh, capfresh;
} eng_cohort;

struct eng_replica {
    eng_engine *e;
    int32_t id;
    const eng_sched_ops *ops;
    void *st; /* policy state */
    eng_cohort co;
    eng_kv kv; /* its KV blocks */
    int busy;  /* an iteration is in flight */
    int64_t iter;
    eng_batch batch;
    int64_t pending_xfer_bytes; /* swap traffic charged to the next iteration */
    int32_t preempted_now;      /* preemptions while forming the current batch */
    int64_t wake_at;            /* requested wake-up, or -1 */
    sim_event_id wake_ev;
    int64_t *step_end;        /* ns: end of each step of a multi-step decode run */
    int32_t nsteps, capsteps; /* steps in flight (1 for an ordinary iteration) */
    int64_t gpu_free_at;      /* ns: end of the GPU work in flight (async CPU overlap) */
    int64_t gpu_start;        /* ns: start of the GPU work of the last iteration */
    int32_t async_pad_seqs;   /* async: sequences that finished last step still computed once */
    int64_t async_pad_ctx;
    int32_t run_left;     /* steps still to run of a fixed multi-step decode run */
    int32_t run_pad_seqs; /* members that finished inside the run, still computed until its end */
    int64_t run_pad_ctx;  /* their contexts before the next step, summed */
    /* async: tokens produced by the last iteration and delivered by the end of the next one
     * (first tokens, and requests whose last token it was) */
    eng_request **unseen;
    int32_t nunseen, capunseen;
    int64_t outstanding;        /* requests routed here and not yet done */
    int64_t outstanding_tokens; /* their prompt + output tokens */
    int64_t waiting;            /* requests routed here and not running */
};

#define ENG_SLAB 4096
typedef struct eng_slab {
    struct eng_slab *next;
    eng_request rq[ENG_SLAB];
} eng_slab;

struct eng_engine {
    sim_ctx *ctx;
    eng_config cfg;
    eng_kv_plan plan;
    int32_t max_len;
    const eng_predictor *pred;
    const eng_source_ops *src;
    void *src_st;
    const eng_recorder_ops *rec;
    void *rec_st;
    eng_replica *reps;
    int32_t nrep;
    const eng_replica **rep_list; /* &reps[i], the array the router picks from */
    const eng_router_ops *router;
    void *router_st;
    gsl_rng *router_rng; /* the run's SIM_STREAM_ROUTER (NULL with one replica) */
    eng_slab *slabs;
    eng_request *free_rq;
    int64_t next_id;
    int src_state;        /* last ENG_SRC_* from the source */
    sim_event_id pull_ev; /* a pull the source asked for (ENG_SRC_LATER with a time), or 0 */
    int64_t pull_at;
    int failed;
    sim_err err;
    eng_totals tot;
    eng_metrics m;
    int64_t waiting_total;
    int64_t in_system; /* requests arrived and not yet done, every replica */
};

/* Reports `count` inter-token gaps of gap_ns to the metrics and the recorder. */
static inline void eng_emit_itl(eng_engine *e, int64_t gap_ns, int64_t count)
{
    eng_metrics_itl(&e->m, gap_ns, count);
    if (e->rec && e->rec->on_itl)
        e->rec->on_itl(e->rec_st, gap_ns, count);
}

/* cohort.c */
void eng_cohort_init(eng_cohort *c, int32_t block_size);
/* KV blocks rq holds (derived for paged cohort members, whose blocks grow without a write). */
int32_t eng_cohort_blocks_of(const eng_replica *r, const eng_request *rq);
void eng_cohort_free(eng_cohort *c);
void eng_cohort_join(eng_replica *r, eng_request *rq, int64_t now);
void eng_cohort_leave(eng_replica *r, eng_request *rq);
/* Allocates the blocks the next step needs (asserts they are free). */
void eng_cohort_alloc_step(eng_replica *r);
/* Ends a decode step at now: counts tokens, ITL gaps; returns finished members through fn. */
void eng_cohort_end_step(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *));
int eng_cohort_check(const eng_replica *r, char *buf, size_t len);

#endif
