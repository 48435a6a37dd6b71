/*
 * engine_int.h: the engine's internal structures, shared by engine.c, cohort.c, kv.c and
 * metrics.c. Never included from another folder; policies and routers see only engine.h.
 */
#ifndef ENG_ENGINE_INT_H
#define ENG_ENGINE_INT_H

#include "engine.h"
#include "metrics.h"
#include "rng.h"

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
 * blocks first), as vLLM's block pool does.
 *
 * One array of records holds the cached blocks and the queue's runs, linked into the queue
 * through the records themselves (an intrusive list: joining or leaving it touches the record
 * and its neighbours only). A run is a count: of anonymous free blocks, or of one request's own
 * blocks (content no other request has, kept unhashed for the request itself after a
 * preemption; cached all the same: taking them from the queue evicts them, head side first).
 * The table keeps each entry's hash beside its record (a probe compares hashes without leaving
 * the table) and each block its slot, so an eviction starts at that slot; the table is kept at
 * most a sixth full, and an eviction moves the few entries after it back (backward-shift
 * deletion: no tombstones, no rebuild but to grow). */
enum { ENG_Q_ANON = -2, ENG_Q_OWN = -3, ENG_B_UNUSED = -4 };
typedef struct eng_pblock {
    uint64_t key;       /* a cached block: its content's hash; a run: its length in blocks */
    int32_t ref;        /* a cached block: requests holding it (0: in the free queue); a run:
                           ENG_Q_ANON or ENG_Q_OWN; ENG_B_UNUSED */
    int32_t prev, next; /* free-queue neighbours (-1: none); the next unused record when unused */
    uint32_t slot;      /* a cached block: its table slot; an own run: its request's first block
                           in it (it holds blocks slot .. slot + key - 1) */
    union {
        struct eng_pcreq *owner; /* an own run: its request, NULL once it is gone */
        uint64_t seq; /* a cached block in the free queue: when it joined the queue's tail
                         (eng_pstore.qseq then; own_settle's blocks take their run's) */
    };
} eng_pblock;

typedef struct eng_tslot {
    uint64_t hash;
    int32_t rec; /* record + 1; 0: empty */
} eng_tslot;

/* A finished request's content and block hashes, kept for its conversation's next turn, whose
 * prompt starts with that content: the turn takes the hashes of the blocks they share instead of
 * computing them again (kv.c, memo_*). The buffers move, not their contents: the request's go to
 * the memory when it frees its blocks, and the memory's to the next turn, which uses it up. */
typedef struct eng_hmemo {
    uint64_t session; /* 0: empty */
    int64_t rid;      /* the request that kept it */
    eng_segment *seg; /* its content: the prompt's segments, then its output */
    int32_t nseg, capseg;
    uint64_t *bh; /* chained hashes of its first nbh full blocks */
    int32_t nbh, capbh;
    int32_t *blk; /* the cached blocks of its first nblk (<= nbh) as it freed them */
    int32_t nblk, capblk;
    uint64_t seq; /* the store's qseq when it was kept: blk[0..nblk) all still cached while no
                     block of a later seq was evicted (eng_pcreq.mseq) */
} eng_hmemo;

#define ENG_HMEMO_SLOTS 512 /* direct-mapped by session id */

typedef struct eng_pstore {
    int mode;      /* ENG_PC_AT_SCHEDULE or ENG_PC_AT_COMPLETION */
    eng_hmemo *hm; /* ENG_HMEMO_SLOTS, made at the first stash; NULL: none yet */
    eng_pblock *b;
    int32_t nb, capb, freeb; /* records used, allocated, head of the unused ones (-1: none) */
    int32_t qhead, qtail;    /* the free queue (-1: empty) */
    eng_tslot *tab;          /* open addressing, linear probing */
    uint32_t tabmask;
    int32_t tabn;            /* entries */
    int64_t tabhint;         /* entries the table is first made for (the cache's blocks) */
    int64_t inuse;           /* cached blocks with ref > 0 */
    int64_t refs;            /* sum of their refs */
    int64_t evictions;       /* cached blocks evicted */
    int64_t own;             /* requests' own computed blocks (not in the table): held or queued */
    uint64_t epoch;          /* bumped whenever a match could change: a block cached, evicted, held
                                or let go, an own run taken from */
    uint64_t serial;         /* this store among the engine's (requests' memories name it) */
    uint64_t qseq;           /* the seq the next block joining the queue's tail gets (from 1) */
    int64_t pend;            /* blocks taken, still on the queue's head (eng_kv_take) */
    uint64_t evicted_seq;    /* the largest seq of a cached block evicted (0: none) */
    struct eng_offload *off; /* the replica's offload tiers, or NULL (offload.c) */
} eng_pstore;

/* A request's content and its place in the prefix cache (requests of a replica with the cache
 * on; the engine keeps the buffers with the pooled request for reuse). Its leading blocks made
 * of content the workload named (segments, an output id) may be another request's too: they are
 * hashed and go through the table. The blocks after them hold content of its own: no other
 * request can hit them, so they are never hashed; computed, they are its own blocks (counted as
 * anonymous on its account), and when it frees them they wait as one run in the free queue,
 * where only it can find them again (a recompute after a preemption). A run it takes only in
 * part sends its own blocks to the table for the rest of its life (own_settle in kv.c). */
typedef struct eng_pcreq {
    eng_segment *seg; /* its prompt's content; none: unique content */
    int32_t nseg, capseg;
    uint64_t uid;     /* content id of a prompt without segments */
    uint64_t out_id;  /* content id of its output tokens */
    int out_shared;   /* out_id came from the workload (another request may hold that content) */
    int tabled;       /* its own blocks go through the table too */
    int32_t own_tail; /* eng_arrival.own_tail: the prompt's last tokens that are its alone */
    struct eng_pstore *own_ps; /* the cache whose free queue holds its own run, or NULL */
    int32_t own_q;             /* that run's record */
    uint64_t own_seq;          /* when that run joined the queue's tail (eng_pblock.seq) */
    uint64_t *bh;              /* chained hashes of its leading full blocks */
    int32_t nbh, capbh;
    int32_t cur_seg, cur_off; /* where block nbh starts in the content */
    int32_t *blk;             /* its first nblk blocks computed: those through the table: cached
                                 block index, or -1 (computed twice: anonymous) */
    int32_t nblk, capblk;
    int32_t nident; /* entries of blk that are cached blocks */
    int32_t nmemo;  /* waiting requests: blk[0..nmemo) remembers the blocks the last match found
                       (checked before use: a block may have been evicted since) */
    /* blk[0..nmemo) are cached blocks of store memo_ps; each, whenever it waits in the free
     * queue, has a seq >= mseq (it was held when remembered, or its seq was taken into mseq):
     * while that store evicted no block of seq >= mseq, all of them are still cached */
    uint64_t memo_ps; /* that store's serial (0: none) */
    uint64_t mseq;
    /* the last match, kept while nothing in its cache changed (its epoch): its hit in blocks
     * and how many of them no request holds */
    const struct eng_pstore *m_ps;
    uint64_t m_epoch;
    int32_t m_target, m_hit;
    int64_t m_ev;
} eng_pcreq;

/* How a sequence's KV blocks follow its context (kv.c; see eng_kv_plan): the growing layers
 * one block per block_size tokens (x fm), the windowed layers the same minus the blocks wholly
 * before their window (x wm), and a fixed state taken once. */
typedef struct eng_kvlay {
    int32_t bs;      /* tokens per block */
    int32_t fm, wm;  /* blocks per block_size tokens of the growing and of the windowed layers */
    int32_t window;  /* W: tokens the windowed layers attend to (0: none) */
    int32_t chunked; /* 1: aligned chunks of W (Llama-4), 0: a sliding window */
    int32_t state;   /* blocks of one sequence's linear-attention state */
} eng_kvlay;

/* Tokens before the window of the token at position c (c tokens computed): a sliding window
 * of W keeps c - W + 1 .. c, a chunk keeps floor(c / W) x W .. c (vLLM get_num_skipped_tokens). */
static inline int64_t eng_lay_skip(const eng_kvlay *l, int64_t c)
{
    if (l->window <= 0)
        return 0;
    if (l->chunked)
        return c / l->window * l->window;
    return c - l->window + 1 > 0 ? c - l->window + 1 : 0;
}

/* Blocks a sequence with c tokens computed holds while `ahead` more slots are allocated (a
 * prefill chunk, a decode step's token and its lookahead): 0 for an empty sequence. */
static inline int64_t eng_lay_held(const eng_kvlay *l, int64_t c, int64_t ahead)
{
    if (c + ahead <= 0)
        return 0;
    int64_t top = (c + ahead + l->bs - 1) / l->bs;
    return l->fm * top + l->wm * (top - eng_lay_skip(l, c) / l->bs) + l->state;
}

/* The most blocks a sequence of `tokens` tokens holds on its way, each step allocating `ahead`
 * slots beyond its context (1, or 1 + K with speculative decoding). */
int64_t eng_lay_peak(const eng_kvlay *l, int64_t tokens, int64_t ahead);

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
    eng_kvlay lay;      /* how a sequence's blocks follow its context */
    int32_t ahead;      /* slots a decode step allocates beyond the context: 1 + spec.k */
    int table_all;      /* eng_config.prefix_table_all */
} eng_kv;

/* Prefix cache internals (kv.c): blocks leave and join the free queue. eng_ps_take takes the
 * pending blocks (pend) off the queue's head. */
void eng_ps_take(eng_pstore *ps);
void eng_ps_give(eng_pstore *ps, int64_t n);
/* The cached block with hash h, or -1. */
int32_t eng_ps_find(const eng_pstore *ps, uint64_t h);

/* ---- KV offload tiers (offload.c) ----
 * A tier holds copies of KV blocks by content hash, up to its capacity, evicting its least
 * recently used block (written down to the next tier when there is one). Each replica reaches
 * each tier through a channel of its own (its GPUs' links to it), which carries the tier's
 * writes and loads in turn; the remote tier's store is shared by the replicas. */
typedef struct eng_onode {
    uint64_t hash;
    int64_t ready;      /* ns: when its write completes (a load may not start before) */
    int32_t prev, next; /* LRU list (head: least recently used); next: free list when unused */
} eng_onode;

typedef struct eng_oslot {
    uint32_t tag; /* the hash folded to 32 bits (offload.c tag_of): its home, and a filter */
    int32_t node; /* node + 1, 0 empty */
} eng_oslot;

typedef struct eng_otier {
    eng_tier_kind kind;
    int64_t cap; /* blocks (INT64_MAX: unbounded) */
    eng_onode *nd;
    int32_t nn, capn, freen; /* nodes used, allocated, first unused (-1: none) */
    eng_oslot *tab;          /* open addressing, a tag of the hash beside its node */
    uint32_t mask;
    int64_t n; /* blocks held */
    int32_t head, tail;
    int32_t users; /* replicas sharing it */
    int64_t hit_blocks, written_blocks, read_blocks, evicted_blocks;
} eng_otier;

/* A request's way through the offload (eng_request.off_state). */
enum { ENG_OFF_NONE = 0, ENG_OFF_LOADING, ENG_OFF_PINNED };

/* How a replica's policy brings offloaded KV back (eng_offload.mode). */
enum {
    ENG_OFF_ASYNC = 0, /* the request waits while others run (vLLM V1) */
    ENG_OFF_ONBOARD,   /* copied in before the forward pass of the step admitting it (TRT-LLM) */
    ENG_OFF_LAYERWISE  /* loaded during that step's pass, layer by layer (SGLang HiCache) */
};

typedef struct eng_offload {
    eng_replica *r;
    int mode;       /* ENG_OFF_* above */
    int32_t layers; /* the model's, for a layer-wise load's last layer */
    int32_t ntiers;
    eng_otier *tier[ENG_MAX_TIERS];
    double bw[ENG_MAX_TIERS];    /* bytes/ns: the replica's channel to each tier */
    int64_t lat[ENG_MAX_TIERS];  /* ns added to each load */
    int64_t busy[ENG_MAX_TIERS]; /* ns: the channel is busy until */
    double block_bytes;          /* one block's KV on the replica's GPUs */
    eng_offload_policy policy;
    int32_t min_load_tokens;
    int64_t reserved; /* GPU blocks reserved for loads in flight (on the KV's held account) */
    int64_t pins;     /* references pinned blocks hold for requests not yet admitted */
} eng_offload;

/* Sets up the tiers of every replica of an aggregated deployment (cfg.offload); 0, or -1 with
 * err. */
int eng_off_init(eng_engine *e, sim_err *err);
void eng_off_fini(eng_engine *e);
/* kv.c's hooks: the GPU cache evicts the block of hash h (write-back: it goes down a tier), or
 * caches a newly computed one (write-through). */
void eng_off_evicted(struct eng_offload *o, uint64_t h);
void eng_off_computed(struct eng_offload *o, uint64_t h);
/* Whether waiting request rq may not be admitted yet: the first time a policy asks (about to
 * admit it), the blocks of its prompt the tiers hold past the GPU cache's hit start loading into
 * blocks reserved for them, and it waits until they are in (1); 0 when there is nothing to load
 * or once they are loaded (they stay pinned in the GPU cache until it is admitted). */
int eng_off_gate(eng_replica *r, eng_request *rq);
/* When a step placed on the GPU at gpu_start with gpu ns of work ends, given the loads its
 * prefill chunks wait for (ENG_OFF_ONBOARD, ENG_OFF_LAYERWISE); gpu_start + gpu otherwise. */
int64_t eng_off_step_end(const eng_replica *r, int64_t gpu_start, int64_t gpu);
/* rq is admitted or rejected: the blocks pinned for it are its own now, or free (cached). */
void eng_off_release(eng_replica *r, eng_request *rq);
/* Appends the offload metrics to out[n..]; returns the new count. */
int eng_off_summary(const eng_engine *e, eng_metric *out, int n);
/* Tiers within capacity, LRU lists whole: 0, or -1 with a message. */
int eng_off_check(const eng_engine *e, char *buf, size_t len);

/* kv.c for offload.c: the engine takes (pin) or drops (unpin) a reference on cached block idx,
 * as a request's block table does; a block of hash h not cached enters the cache in place of
 * the least recently used free block, with one reference (pinned): its index, or -1 when no
 * block is free. */
void eng_kv_pin(eng_kv *kv, int32_t idx);
void eng_kv_unpin(eng_kv *kv, int32_t idx);
int32_t eng_kv_insert(eng_kv *kv, uint64_t h);

/* A replica's blocks: `total` of them, laid out as plan p says. */
void eng_kv_init(eng_kv *kv, const eng_kv_plan *p, int32_t block_size, int32_t ahead);
/* kv_hybrid.c, memory.mamba_cache_mode align: each block carries its boundary's
 * linear-attention state (p's block_bytes grow, its per-sequence state blocks go); nothing
 * otherwise. */
void eng_kv_hybrid_layout(const eng_config *c, eng_kv_plan *p);
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

/* n free blocks go into use (from the prefix cache's free queue when it is on). The queue is
 * first-in first-out (takes from its head, frees join its tail, at most the free blocks are
 * taken), so blocks taken one allocation after another, with frees between, are the same blocks
 * when taken at once: they are counted here (pend) and leave the queue when kv.c next reads it
 * (an allocation that needs no lookup costs an addition). Where offload tiers keep the cache's
 * blocks they leave at once: the tiers see each eviction as it happens. */
static inline void eng_kv_take(eng_kv *kv, int64_t n)
{
    SIM_ASSERT(NULL, n >= 0 && n <= eng_kv_nfree(kv));
    kv->used += n;
    if (kv->ps) {
        kv->ps->pend += n;
        if (kv->ps->off && n > 0)
            eng_ps_take(kv->ps);
    }
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

/* Members counted by a residue mod the block size, with running sums, so that the members whose
 * residue lies in a window of consecutive residues are counted in O(1) (cohort.c). */
typedef struct eng_rescount {
    int32_t *cnt; /* by residue */
    /* pre[i]: members with a residue below i, and pre[bs + i] = pre[bs] + pre[i] for the residues
     * counted twice over (2 x block size + 1 entries: a window that wraps is one difference) */
    int64_t *pre;
    int stale; /* cnt moved since pre was summed (summed again when a count reads it) */
} eng_rescount;

/* A class of the decode cohort: members that advance by the same number of tokens each step
 * (all of them without speculative decoding; with it, the members that drew the class). A
 * member's context is a + t, a fixed at its join; the class keeps the sums that let a step cost
 * O(1) plus the members that change (cohort.c). */
typedef struct eng_cclass {
    int32_t n;     /* members */
    int32_t adv;   /* tokens the step in flight advances its members (1 .. 1 + K) */
    int64_t t;     /* tokens each member has advanced since the cohort began */
    int64_t top;   /* the c_fin_t of fin's top (INT64_MAX: no member), kept as fin changes */
    int64_t a_sum; /* sum of (context - t) over members */
    int64_t alloc; /* blocks the step in flight allocated for them */
    /* the last growth counted (grow_blocks): at t, for len tokens, with the residues as of
     * version gver (bumped when a paged member joins or leaves) */
    int64_t gm_t, gm_len, gm_val, gver, gm_ver;
    int64_t next;       /* blocks the next step takes for 1 + eng_cohort.next_k slots
                           (eng_cohort_spec_end), while next_ver is the cohort's mver */
    eng_rq_heap fin;    /* by c_fin_t: the t at which a member has generated its output */
    eng_rq_heap ev;     /* by c_ev_t: the t at which a member's context reaches the cap or its
                           next chunk boundary */
    eng_rescount grow;  /* paged members by a mod block size (block growth residues) */
    eng_rescount slide; /* paged members past their sliding window, by a mod block size */
    int64_t nslide;     /* their number */
    int64_t paged;      /* paged members */
    int32_t n_low;      /* members whose context is below the cap (windows, top-k) */
    int64_t a_low;      /* sum of a over them */
    int64_t wraps;      /* chunked local attention: sum of floor(context / (cap + 1)) */
    /* to a power of two in all (cohort.c asserts it): a class's record is found from its index
     * by a shift, in every visit of a step's classes */
    char pad[16];
} eng_cclass;

/* The decoding sequences of one replica, advanced together: one token per decode step, or with
 * speculative decoding 1 to K + 1 by class. */
typedef struct eng_cohort {
    int32_t n;             /* members */
    int64_t step;          /* decode steps run */
    int64_t last_step_end; /* ns: when the last decode step's tokens came out */
    int32_t bs;            /* block size */
    int32_t nclass;
    eng_cclass *cls;
    /* the classes a step visits (at most ENG_SPEC_MAX_CLASSES, bit i: class i): those with
     * members, and those whose blocks the step in flight allocated (members at its start) */
    uint64_t live, begun;
    int64_t ctx; /* sum of the members' contexts (eng_cohort_ctx_sum) */
    /* eng_cohort_step_finishes of the step in flight, as its start found it (fin_known: no
     * member has joined or left since) */
    int fin_due, fin_known;
    int32_t cap; /* the model's capped layers' cap (eng_shape_cap), 0: none */
    int32_t cap_chunked;
    /* set once with them: the cap's kind (0 none, 1 min(context, cap), 2 context mod (cap +
     * 1)), and whether the cohort is one class with no cap (a step's shorter paths) */
    int32_t cap_kind, one;
    int64_t paged;       /* paged members */
    int32_t step_k;      /* draft tokens each member verifies in the step in flight */
    int in_step;         /* 1 from a decode step's start to its end: its slots are allocated */
    eng_request **fresh; /* members that joined since the last decode step (own ITL gap) */
    int32_t nfresh, capfresh;
    sim_mt *accept; /* acceptance draws (SIM_STREAM_ACCEPT), with speculative decoding */
    /* speculative decoding totals: member-steps that verified drafts, drafts accepted */
    int64_t spec_steps, spec_drafts, spec_accepted;
    /* membership's version (bumped at each join and leave), as the step in flight's start saw
     * it, and as eng_cohort_spec_end counted the next step's blocks (eng_cclass.next) for
     * next_k drafts (-1: not counted) */
    int64_t mver, begun_ver, next_ver, next_step;
    int32_t next_k;
    int64_t next_need; /* the blocks of those counts, summed */
    /* whether the cohort's layout lets eng_cohort_end_need end a run's step on its running sums
     * (no cap, no sliding window, a block size that is a power of two; -1: not asked yet) */
    int32_t run_layout;
    /* the acceptance rule of steps of rule_k drafts (-1: none yet): the minimum-variance rule's
     * floor(AL) and its compare's threshold (0: the draws go through draw_accepted) */
    int32_t rule_k, rule_base;
    uint64_t rule_thr;
    /* the step in flight's draws (a step of drafts): class i advances drawn_base + drawn[i],
     * set in a class's record (eng_cclass.adv) when it has members or gains one */
    int32_t drawn_base;
    int32_t drawn[ENG_SPEC_MAX_CLASSES];
    /* tokens the step in flight advances its members, summed (sum of n * adv over the classes
     * at its start) */
    int64_t step_adv;
    /* the last eng_cohort_need counted over the classes: for growth nm_len (-1: none), at step
     * nm_step and membership version nm_ver */
    int64_t nm_len, nm_step, nm_ver, nm_val;
} eng_cohort;

/* ---- the link between the pools (link.c) ----
 * Each replica of a disaggregated deployment has a port: its GPUs' links in the direction its
 * transfers take (a prefill replica sends, a decode replica receives). A transfer (a flow) uses
 * its prefill replica's port and its decode replica's; the flows with bytes to move on a port
 * share it equally (processor sharing), and a flow moves at the smaller of its two shares and of
 * its own cap (the links of the GPUs that hold its request's KV). Bytes are released to a flow
 * all at once (after the prefill) or as a prefill computes them (layer-wise): a flow sends no
 * faster than its bytes are released. Rates change only at flow events, and an event touches
 * only the flows on its two ports: O(flows on those ports), nothing per token. */
typedef struct eng_flow eng_flow;

typedef struct eng_port {
    int send;       /* 1: a prefill replica's (flows leave it); 0: a decode replica's */
    double cap;     /* bytes/ns */
    int32_t n;      /* flows on it with bytes to move now */
    eng_flow *head; /* every open flow on it */
} eng_port;

/* Which of a flow's links (on[]) go with port p's list. */
static inline int eng_port_side(const eng_port *p)
{
    return !p->send;
}

struct eng_flow {
    eng_engine *e;
    eng_request *rq;
    eng_port *src, *dst;
    struct {
        eng_flow *next, *prev;
    } on[2];        /* its links on src's list ([0]) and dst's ([1]): eng_port_side */
    double cap;     /* bytes/ns: the links of the GPUs holding its request's KV */
    double sent;    /* bytes sent by t_upd */
    double base;    /* bytes released before the current production window */
    double prod;    /* bytes/ns released during [p0, p1) */
    double last;    /* bytes released at p1 (the last layer's KV) */
    int64_t p0, p1; /* the current production window, ns (p1 <= p0: none) */
    int final;      /* 1: nothing is released after the current window */
    double rate;    /* bytes/ns sent since t_upd */
    int64_t t_upd;
    int demanding; /* counted in its ports' n */
    sim_event_id ev;
    eng_flow *next_free;
};

/* Opens a flow for rq from port src to port dst at now, capped at cap bytes/ns; nothing is
 * released yet. The engine owns it (a pool); it closes itself when its last byte is sent. */
eng_flow *eng_flow_open(eng_engine *e, eng_request *rq, eng_port *src, eng_port *dst, double cap,
                        int64_t now);
/* Releases `bytes` at now; final: nothing more will be released. */
void eng_flow_release(eng_flow *f, double bytes, int final, int64_t now);
/* A production window [t0, t1) (now <= t0 < t1, after any earlier window): `linear` bytes
 * released evenly over it and `last` at t1; final: nothing more after it. */
void eng_flow_window(eng_flow *f, int64_t t0, int64_t t1, double linear, double last, int final,
                     int64_t now);
/* Closes f before its end (its request was rejected): it tells the engine nothing. */
void eng_flow_close(eng_flow *f, int64_t now);
/* Bytes released to f by time t (t >= its last update). */
double eng_flow_released(const eng_flow *f, int64_t t);
void eng_link_fini(eng_engine *e);
/* Walks every open flow: ports' counts and lists agree; 0, or -1 with a message. */
int eng_link_check(const eng_engine *e, char *buf, size_t len);

typedef struct eng_pool eng_pool;

/* ---- pipeline parallelism (pipeline.c) ----
 * The stages of one pipelined replica, shared by its virtual engines (the replicas that form
 * its batches in flight). */
typedef struct eng_pipe {
    int32_t stages;
    int64_t *free_at; /* ns: each stage is busy until */
    double share;     /* the largest stage's share of the layers */
    double act_bytes; /* activation bytes of one token sent from a stage to the next */
    double bw;        /* bytes/ns between stages, per GPU */
    int64_t latency;  /* ns per send */
} eng_pipe;

/* Layers of the largest of `stages` stages. */
int32_t eng_pipe_stage_layers(int32_t layers, int32_t stages);
/* Scales one GPU's share *g of the model to the largest stage of c's pipeline, and sets
 * p->stage_layers (all the layers without one). */
void eng_pipe_plan(const eng_config *c, eng_dtype dt, const eng_layout *l, eng_gpu_share *g,
                   eng_kv_plan *p);
/* Batches in flight through c's pipeline (1 without one): its virtual engines per replica. */
int32_t eng_pipe_batches(const eng_config *c);
/* Gives pool p's pipelined replicas their pipes (nothing without pipeline_parallel); 0, or -1
 * with err. */
int eng_pipe_init(eng_engine *e, eng_pool *p, sim_err *err);
void eng_pipe_fini(eng_pool *p);
/* A batch whose whole-model GPU time is gpu, of `tokens` query tokens, ready at start: when it
 * leaves the last stage. */
int64_t eng_pipe_place(eng_pipe *q, int64_t start, int64_t gpu, int64_t tokens);

/* The prices a pool's predictor gave that its steps ask for again (engine.c price_of): the decode
 * base of a plain decode pass by its sequences (eng_predictor_ops.decode_base reads no context),
 * the bases of a speculative step of n sequences verifying k drafts each (engine.c spec_gpu),
 * and the price of a pass without decodes by its prefill tokens, with the shape it priced. */
#define ENG_PRICE_SLOTS 8192
typedef struct eng_price_memo {
    eng_decode_base *base;
    int8_t *base_st; /* per n: 0 not asked, 1 base[n] holds it, -1 the predictor has none */
    int32_t nbase;
    struct eng_spec_base {
        int32_t k;              /* the drafts the bases are for (0: not asked) */
        int32_t st;             /* 1: the bases hold; -1: a predictor has none for them */
        eng_decode_base target; /* the target's pass */
        eng_decode_base first;  /* the drafter's first pass (over the target's tokens) */
        eng_decode_base draft;  /* the drafter's one-token passes */
        int32_t packed;         /* vp holds the predictor's constants (verify_pack) */
        eng_verify_pack vp;
    } * spec; /* per n */
    int32_t nspec;
    struct eng_price_slot {
        eng_shape s;
        int64_t ns; /* 0: empty (a price is >= 1) */
    } * slot;       /* ENG_PRICE_SLOTS, by prefill tokens mod their count */
} eng_price_memo;

/* One pool of replicas: all of them in an aggregated deployment, or the prefill or the decode
 * ones of a disaggregated one. */
struct eng_pool {
    int32_t id;    /* its index in e->pools */
    char name[40]; /* how messages name it: "", "prefill pool: ", "decode.replicas[1]: " */
    eng_role role;
    eng_config cfg;   /* what its replicas run with (eng_config_pool) */
    eng_kv_plan plan; /* one replica's KV cache */
    const eng_predictor *pred, *draft;
    const eng_sched_ops *ops;
    eng_replica *reps; /* &e->reps[first], nrep of them */
    int32_t first, nrep;
    const eng_replica **rep_list; /* the array its router picks from: its ready replicas */
    int32_t nact;                 /* how many: nrep, or fewer under autoscaling */
    /* routing: the pool whose router sends requests to this one's replicas (itself, or a
     * mixed pool's first group, whose router routes over every group's replicas) */
    struct eng_pool *route;
    int32_t nroute;  /* replicas its router routes over (route == this pool) */
    int32_t ngroups; /* groups its router routes over (route == this pool) */
    double weight;   /* a replica's capacity as routers weigh it (1 without groups) */
    const eng_router_ops *router;
    void *router_st;
    gsl_rng *router_rng; /* the run's SIM_STREAM_ROUTER (NULL with one replica) */
    double gpu_bw;       /* bytes/ns per GPU on the link (disaggregated) */
    eng_pipe *pipes;     /* one per pipelined replica (cfg.replicas), or NULL */
    eng_price_memo memo; /* pred's prices kept (engine.c price_of) */
};

/* A FIFO of requests linked through their pool_next (a decode replica's transfers waiting for
 * KV, the requests a crash parks until a replica is ready). */
typedef struct eng_rq_fifo {
    eng_request *head, *tail;
} eng_rq_fifo;

static inline void eng_fifo_push(eng_rq_fifo *q, eng_request *rq)
{
    rq->pool_next = NULL;
    if (q->tail)
        q->tail->pool_next = rq;
    else
        q->head = rq;
    q->tail = rq;
}

/* Takes the head off q (which is not empty) and returns it. */
static inline eng_request *eng_fifo_pop(eng_rq_fifo *q)
{
    eng_request *rq = q->head;
    q->head = rq->pool_next;
    if (!q->head)
        q->tail = NULL;
    rq->pool_next = NULL;
    return rq;
}

struct eng_replica {
    eng_engine *e;
    eng_pool *pool;
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
    int64_t async_pad_capped; /* their capped contexts (eng_shape), summed */
    int32_t run_left;         /* steps still to run of a fixed multi-step decode run */
    int32_t run_pad_seqs; /* members that finished inside the run, still computed until its end */
    int64_t run_pad_ctx;  /* their contexts before the next step, summed */
    int64_t *run_pad_c;   /* each one's context before the next step (for the capped sum) */
    int32_t caprunpad;
    /* async: tokens produced by the last iteration and delivered by the end of the next one
     * (first tokens, and requests whose last token it was) */
    eng_request **unseen;
    int32_t nunseen, capunseen;
    eng_request **fetch; /* cpu.form_ahead: arrived during the step in flight, given to the
                            policy once the next step is formed (engine.c fetch_later) */
    int32_t nfetch, capfetch, fetched; /* fetched: given to the policy as this step formed */
    int64_t outstanding;               /* requests routed here and not yet done */
    int64_t outstanding_tokens;        /* their prompt + output tokens */
    int64_t waiting;                   /* requests routed here and not running */
    /* disaggregated (pd.c): a decode replica's queue of transfers waiting for its KV (FIFO
     * through pool_next), the transfers admitted and on their way, and those arrived, joining
     * at its next step; every replica's port on the link */
    eng_rq_fifo pdq;
    int64_t pd_fails; /* times its queue's head could not be admitted (no seat or blocks) */
    int64_t incoming, incoming_tokens; /* their prompt + output tokens */
    eng_request **joining;
    int32_t njoining, capjoining;
    eng_port port;
    eng_offload *off;     /* its KV offload tiers, or NULL */
    eng_pipe *pipe;       /* the pipeline it is a virtual engine of, or NULL */
    int64_t pd_sending;   /* a prefill replica's requests prefilled whose KV has not arrived */
    int32_t fleet;        /* ENG_FLEET_*: autoscaling's state of it (ready otherwise) */
    int64_t fleet_since;  /* ns: when it last left ENG_FLEET_OFF */
    sim_event_id iter_ev; /* the end of the iteration in flight, or 0 */
    /* while its iteration's end is handled (on_iteration_end), the end of an iteration started
     * there is held here (end_due) instead of being scheduled: the handler runs it at once
     * when no event comes first */
    int ending, end_due, end_ended;
    int64_t end_at; /* ns */
    double slow;    /* its steps' GPU time is multiplied by this (a `slow` fault), or 0 */
};

/* A replica under autoscaling: off (no GPUs held), starting (cold start: paid, not routed
 * to), ready (routed to), draining (not routed to, finishing what it has). */
enum { ENG_FLEET_READY = 0, ENG_FLEET_OFF, ENG_FLEET_STARTING, ENG_FLEET_DRAINING };

#define ENG_SLAB 4096
typedef struct eng_slab {
    struct eng_slab *next;
    eng_request rq[ENG_SLAB];
} eng_slab;

struct eng_engine {
    sim_ctx *ctx;
    eng_config cfg;
    eng_kv_plan plan; /* pool 0's */
    int32_t max_len;
    gsl_rng *class_rng;  /* SIM_STREAM_SPEC_CLASS: a request's acceptance class */
    gsl_rng *wclass_rng; /* SIM_STREAM_WORK_CLASS: a request's workload class (classes given) */
    eng_pool pools[ENG_POOLS_MAX];
    int32_t npools;
    int pd;    /* disaggregated: prefill pools from pools[0], decode pools from pools[dpool] */
    int dpool; /* the first decode pool (disaggregated): the one whose router routes them all */
    eng_flow *free_flows;
    eng_flow **flow_slabs;
    int32_t nflow_slabs;
    const eng_source_ops *src;
    void *src_st;
    const eng_recorder_ops *rec;
    void *rec_st;
    eng_replica *reps; /* every pool's, pool by pool */
    int32_t nrep;
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
    /* KV offload (offload.c): every distinct tier store, and the loads' times */
    eng_otier **otiers;
    int32_t notiers;
    sim_samples off_load; /* ms, one per load */
    int64_t off_loads;
    int64_t in_system;         /* requests arrived and not yet done, every replica */
    struct eng_autoscaler *as; /* autoscale.c, or NULL */
    struct eng_faulter *fault; /* fault.c, or NULL */
    uint64_t ps_made;          /* prefix caches made (kv.c: each store's serial) */
};

/* Reports `count` inter-token gaps of gap_ns to the metrics and the recorder. */
static inline void eng_emit_itl(eng_engine *e, int64_t gap_ns, int64_t count)
{
    eng_metrics_itl(&e->m, gap_ns, count);
    if (e->rec && e->rec->on_itl)
        e->rec->on_itl(e->rec_st, gap_ns, count);
}

/* engine.c, for pd.c */
/* The replica pool p's router picks for rq (its only one without asking). */
eng_replica *eng_route(eng_engine *e, eng_pool *p, const eng_request *rq);
/* rq leaves r (finished, turned away, or handed on to a decode replica): r's pool's router is
 * told, before r's load counts drop. */
void eng_router_left(eng_replica *r, const eng_request *rq);
/* Replica r joined its pool's ready replicas (an empty engine), or left them (draining, or
 * crashed): its router is told (router.h: on_join, on_gone). */
void eng_router_joined(const eng_replica *r);
void eng_router_gone(const eng_replica *r);
/* Counts rq as arrived in the system and waiting on r (queue statistics). */
void eng_count_arrival(eng_replica *r, eng_request *rq);
/* Gives rq content ids when r keeps a prefix cache and rq has none yet. */
void eng_ensure_content(eng_replica *r, eng_request *rq);
/* The client has rq's last token at now: records it and lets it go (r: where it finished). */
void eng_deliver_finish(eng_replica *r, eng_request *rq, int64_t now);

/* pd.c: the disaggregated request flow */
/* rq arrived (now): routed to a prefill replica (and, layer-wise, a decode one). */
void eng_pd_arrival(eng_engine *e, eng_request *rq, int64_t now);
/* rq's prefill on prefill replica r is done (its one token computed). */
void eng_pd_prefilled(eng_replica *r, eng_request *rq);
/* Replica r is about to form a batch: arrived transfers join, waiting ones are admitted. */
void eng_pd_kick(eng_replica *r, int64_t now);
/* Prefill replica r started an iteration (layer-wise: its chunks' KV streams from now). */
void eng_pd_started(eng_replica *r, int64_t now);
/* rq, routed to prefill replica r, is rejected: its decode-side share is given back. */
void eng_pd_rejected(eng_replica *r, eng_request *rq);
/* rq's last byte left (link.c): it arrives after the link's latency. */
void eng_pd_flow_done(eng_engine *e, eng_request *rq, int64_t now);
/* Sets up the pools' link figures. The configuration is as the scenario loader checked it: a
 * decode policy that takes transfers, a bandwidth for each side (asserted). */
void eng_pd_init(eng_engine *e);

/* groups.c: a mixed pool */
/* Refuses what a mixed pool does not model (prefill and decode pools, speculative decoding,
 * autoscaling, offload tiers). 0, or -1 with err. */
int eng_groups_check(const eng_config *c, sim_err *err);
/* Sets each group's weight: the configured one, or its priced throughput (eng_pool_weight),
 * relative to the first group's. Nothing without groups (weights stay 1). */
void eng_groups_weigh(eng_engine *e);

/* fleet.c */
/* Refuses power figures that contradict each other (idle above full). 0, or -1 with err. */
int eng_fleet_check(const eng_config *c, sim_err *err);
/* Whether admission control sheds a request arriving at pool p now: every ready replica is
 * saturated. */
int eng_admission_shed(const eng_engine *e, const eng_pool *p);
/* Whether rq's class may be shed at admission (every request without classes). */
int eng_admission_sheddable(const eng_engine *e, const eng_request *rq);
/* Sets e->m's fleet figures (GPU-seconds, cost, energy) for the summary. */
void eng_fleet_fill(eng_engine *e);

/* autoscale.c */
/* The replicas pool p allocates: its replicas, or autoscale.max_replicas. */
int32_t eng_autoscale_slots(const eng_engine *e, const eng_pool *p);
/* Refuses what autoscaling does not model (ttft_p90, a disaggregated pool of groups) and
 * bounds that contradict each other. */
int eng_autoscale_check(const eng_config *c, sim_err *err);
/* Sets up the autoscaler of an engine whose configuration asks for one: the starting replicas
 * ready, the others off, the first evaluation scheduled. */
void eng_autoscale_init(eng_engine *e);
void eng_autoscale_free(eng_engine *e);
/* Whether replica r, draining, has nothing left: no request, no KV still leaving it. */
static inline int eng_replica_drained(const eng_replica *r)
{
    return r->fleet == ENG_FLEET_DRAINING && r->outstanding == 0 && r->pd_sending == 0;
}
/* Replica r, draining, has finished its last request (eng_replica_drained). */
void eng_autoscale_drained(eng_replica *r);
/* rq finished or was rejected: the fleet timeline counts it (e->as set). */
void eng_autoscale_request(eng_engine *e, const eng_request *rq);
/* The autoscaler's walker (e->as set): each pool's router lists its ready replicas, its count
 * of replicas held is those not off, and no replica off holds a request or sends KV. 0, or -1
 * with a message. */
int eng_autoscale_walk(const eng_engine *e, char *buf, size_t len);
/* Replica time (ns) pool p's replicas held GPUs within [t0, t1) (e->as set). */
int64_t eng_autoscale_held_ns(const eng_engine *e, const eng_pool *p, int64_t t0, int64_t t1);
/* Appends the autoscaler's metrics (replicas_mean, ...) to out from n; returns the count. */
int eng_autoscale_summary(const eng_engine *e, eng_metric *out, int n, double dur);

/* r leaves pool p's router's list, the others keeping their order (autoscale.c). */
void eng_pool_unlist(eng_pool *p, const eng_replica *r);
/* Starting replica r is ready: it joins the end of its router's list (autoscale.c; in a mixed
 * pool, the first group's, which routes over every group). */
void eng_replica_ready(eng_replica *r);
/* Replica r went from starting to ready (restarted after a crash, or scaled up): requests that
 * arrived while no replica was ready are routed now (fault.c). */
void eng_fault_ready(eng_engine *e);
/* Restarts replica r after a crash: under autoscaling it is starting until ready_at (ns), where
 * the autoscaler may cancel it as any replica starting; 1, or 0 without an autoscaler. */
int eng_autoscale_restart(eng_replica *r, int64_t ready_at);

/* fault.c */
/* Refuses faults the engine does not model (a link going down, a crash with state it cannot
 * rebuild: disaggregated pools, offload tiers, pipelines) and
 * faults that overlap on one replica. 0, or -1 with err. */
int eng_fault_check(const eng_config *c, sim_err *err);
/* Schedules the configured faults (nothing without any). */
void eng_fault_init(eng_engine *e);
void eng_fault_free(eng_engine *e);
/* Routes rq, arrived or retried, at pool 0 (aggregated): the router's pick, or a wait for the
 * first ready replica when none is (fault.c keeps it). */
void eng_dispatch(eng_engine *e, eng_request *rq, int64_t now);
/* rq waits at the router until a replica is ready again (none is now). */
void eng_fault_park(eng_engine *e, eng_request *rq);
/* Takes rq off crashed replica r (engine.c): its span ends, the router and r's counts let it
 * go, its progress is reset (prompt to recompute, nothing generated). lost: it is then counted
 * as rejected (ENG_REJECT_FAULT), else it is left for the caller to route again. */
void eng_drop_request(eng_replica *r, eng_request *rq, int lost);
/* Appends the fault metrics (fault_retried, fault_lost) to out from n; returns the count. */
int eng_fault_summary(const eng_engine *e, eng_metric *out, int n);
/* kv.c: forgets every block of a crashed replica's cache (requests' own runs let go first);
 * the cache is off until its policy enables it again. */
void eng_kv_drop(eng_kv *kv);

/* cohort.c */
/* An empty cohort for replica r's configuration (block size, cap, acceptance classes). */
void eng_cohort_init(eng_cohort *c, const eng_engine *e, const eng_config *cfg);
void eng_cohort_free(eng_cohort *c);
/* KV blocks rq holds (derived for paged cohort members, whose blocks grow without a write). */
int32_t eng_cohort_blocks_of(const eng_replica *r, const eng_request *rq);
void eng_cohort_join(eng_replica *r, eng_request *rq, int64_t now);
void eng_cohort_leave(eng_replica *r, eng_request *rq);
/* Starts a decode step in which each member verifies k draft tokens (0: plain decoding):
 * draws each class's accepted tokens and allocates the blocks the step needs (asserts they are
 * free). Returns the output tokens the step emits. */
int64_t eng_cohort_begin_step(eng_replica *r, int32_t k);
/* Ends a decode step at now: advances the members, frees the blocks they no longer hold,
 * counts ITL gaps; returns finished members through fn. */
void eng_cohort_end_step(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *));
/* eng_cohort_end_step, by a shorter path where the step has no drafts, the cohort one class, no
 * cap and no sliding window (every member one token further, no block given back). */
void eng_cohort_end(eng_replica *r, int64_t now, void (*fin)(eng_replica *, eng_request *));
/* Plain decode steps: one class, no drafts, no cap or window, no member that joined since the
 * last step (eng_cohort_plain). Between two such steps only the class's t, the step count and
 * the blocks in use move: eng_cohort_plain_end ends the step in flight at now (one ITL gap for
 * every member, none finishing), eng_cohort_plain_begin starts the next, allocating the blocks
 * eng_cohort_plain_need says it takes (free: the caller checked) -- what eng_cohort_end_step
 * and eng_cohort_begin_step do for such a cohort, in O(1). */
int eng_cohort_plain(const eng_replica *r);
/* Inline (every step of a run asks it): grow_blocks(cl, 1) of the one class, the paged members
 * whose context a + t is a multiple of bs (their residue bs - t mod bs, as cohort.c's res finds
 * it). */
static inline int64_t eng_cohort_plain_need(const eng_replica *r)
{
    const eng_cohort *c = &r->co;
    const eng_cclass *cl = &c->cls[0];
    int64_t x = c->bs - cl->t;
    int32_t m = c->bs, i;
    if ((m & (m - 1)) == 0)
        i = (int32_t)(x & (m - 1));
    else {
        int64_t q = x % m;
        i = (int32_t)(q < 0 ? q + m : q);
    }
    return (int64_t)r->kv.lay.fm * cl->grow.cnt[i];
}
/* eng_cohort_end_step(r, now, fin) of a step that finishes no member, then
 * eng_cohort_need(r, k, 1): returns the blocks the next step of k drafts takes, and keeps each
 * class's for eng_cohort_begin_step while no member joins or leaves. With no member joined or
 * left since the step began and no cap or window, each class's blocks given back and taken come
 * from its residue counts at once, in one visit of the classes with members. */
int64_t eng_cohort_end_need(eng_replica *r, int64_t now, int32_t k,
                            void (*fin)(eng_replica *, eng_request *));
/* Whether a member reaches its output in the decode step in flight (its draws made). */
int eng_cohort_step_finishes(const eng_cohort *c);
/* Blocks the next decode step needs when each member verifies k draft tokens, if nothing
 * finishes first; over `steps` steps. */
int64_t eng_cohort_need(const eng_replica *r, int32_t k, int32_t steps);
/* eng_cohort_plain_end, its gap given to the metrics alone where rec_itl is 0 (the caller found
 * no recorder of ITL gaps). Inline: a plain run's every step. */
static inline void eng_cohort_plain_end_as(eng_replica *r, int64_t now, int rec_itl)
{
    eng_cohort *c = &r->co;
    eng_cclass *cl = &c->cls[0];
    SIM_ASSERT(r->e->ctx, eng_cohort_plain(r) && !eng_cohort_step_finishes(c));
    SIM_ASSERT(r->e->ctx, rec_itl || !(r->e->rec && r->e->rec->on_itl));
    c->in_step = 0;
    if (rec_itl)
        eng_emit_itl(r->e, now - c->last_step_end, c->n);
    else
        eng_metrics_itl(&r->e->m, now - c->last_step_end, c->n);
    c->step++;
    c->last_step_end = now;
    cl->t++;
    c->ctx += c->n;
    c->fin_known = 0;
}
static inline void eng_cohort_plain_end(eng_replica *r, int64_t now)
{
    eng_cohort_plain_end_as(r, now, 1);
}
/* eng_cohort_plain_begin, the blocks counted in use alone where ps is 0 (the caller found no
 * prefix store to tell). */
static inline void eng_cohort_plain_begin_as(eng_replica *r, int64_t need, int ps)
{
    SIM_ASSERT(r->e->ctx, need == eng_cohort_need(r, 0, 1) && need <= eng_kv_nfree(&r->kv));
    SIM_ASSERT(r->e->ctx, ps || !r->kv.ps);
    r->co.in_step = 1;
    if (ps)
        eng_kv_alloc_derived(&r->kv, need);
    else
        r->kv.used += need;
}
static inline void eng_cohort_plain_begin(eng_replica *r, int64_t need)
{
    eng_cohort_plain_begin_as(r, need, 1);
}
/* Sum of the members' contexts, and of their capped contexts (eng_shape.decode_ctx_capped). */
int64_t eng_cohort_ctx_sum(const eng_cohort *c);
int64_t eng_cohort_capped_sum(const eng_cohort *c);
/* Members whose capped context grows with the next token (below the cap; every member under
 * chunked attention until its boundary), and the steps until one reaches the cap or a chunk
 * boundary (INT64_MAX: none). */
int64_t eng_cohort_capped_growth(const eng_cohort *c);
int64_t eng_cohort_next_event(const eng_cohort *c);
/* The capped context of a sequence with context ctx (min(ctx, cap) or ctx mod (cap + 1)). */
int64_t eng_cohort_capped_of(const eng_cohort *c, int64_t ctx);
int eng_cohort_check(const eng_replica *r, char *buf, size_t len);

#endif
