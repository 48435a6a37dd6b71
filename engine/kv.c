/*
 * kv.c: KV cache accounting: sizing a replica's cache (the plan), the blocks of one replica, and
 * its prefix cache.
 *
 * Invariant (eng_kv_check, after every event in debug builds): the blocks on requests' accounts
 * plus the blocks the policy holds equal the blocks in use, and 0 <= used <= total; with the
 * prefix cache on, requests' accounts count their anonymous blocks and the cached blocks someone
 * references are counted once. The engine moves blocks only through the functions here and the
 * inline ones of engine_int.h; policies reserve and hold through the public functions below.
 *
 * Prefix cache: a block is identified by a chained hash of its content (the hash of the block
 * before it and of its own tokens, vLLM's hash_block_tokens), so equal hashes mean equal
 * prefixes. Matching a prompt walks its blocks from the first until one is not cached: O(blocks
 * in the prompt), never O(cache). A request's hashes are computed once, from its content
 * segments, and kept with it; nothing is per token. Memory: one slot and one queue node per
 * cached block, a hash table at most half full; it grows with the cache, not with the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

void eng_config_layout(const eng_config *c, eng_layout *out)
{
    out->tp = c->tensor_parallel > 0 ? c->tensor_parallel : 1;
    out->ep = c->expert_parallel > 0 ? c->expert_parallel : 1;
    out->dp = c->data_parallel_attention > 0 ? c->data_parallel_attention : 1;
    out->moe = c->moe;
}

eng_dtype eng_config_dtype(const eng_config *c)
{
    return c->dtype == ENG_DTYPE_AUTO ? c->model.weight_dtype : c->dtype;
}

eng_dtype eng_config_kv_dtype(const eng_config *c)
{
    return c->kv_dtype == ENG_DTYPE_AUTO ? c->model.kv_dtype : c->kv_dtype;
}

/* The drafter's share of each GPU: its weights but the parts it shares with the target, and its
 * KV per token. */
static void draft_share(const eng_config *c, const eng_layout *l, eng_dtype dt, eng_dtype kv,
                        int64_t *weights, int64_t *per_token)
{
    const eng_spec *sp = &c->spec;
    *weights = *per_token = 0;
    if (sp->method == ENG_SPEC_NONE || !sp->has_draft)
        return;
    eng_gpu_share g;
    eng_model_gpu_share(&sp->draft, dt, kv, l, &g);
    double shared = 0;
    for (int i = 0; i < ENG_PART_COUNT; i++)
        if (sp->draft_shared & (1u << i))
            shared += (double)eng_model_part_params(&sp->draft, 1u << i) *
                      eng_model_part_bytes(&sp->draft, dt, 1u << i) / l->tp;
    *weights = g.weight_bytes - (int64_t)(shared + 0.5);
    /* MODEL: vLLM puts a drafter's attention layers in the target's full-attention KV cache
     * group (kv_cache_utils: "gpt-oss-20b + eagle, with 12 sw + 13 full"): its KV grows with
     * the context like the target's full layers; a windowed draft model is budgeted so too */
    *per_token = g.kv_per_token + g.window_per_token;
}

/* MODEL: vLLM's hybrid KV cache manager (vllm/v1/core/kv_cache_utils.py,
 * _get_kv_cache_groups_uniform_page_size) splits the layers into groups of as many layers as
 * the least numerous attention type has (all groups share one page size), padding the last
 * group of a type: a windowed block costs ceil(windowed bytes / full bytes) full blocks
 * (Gemma-3-27B: 52 sliding layers over 10 full ones take 6 pages per block, vLLM's 8 padding
 * layers included). A linear-attention state is one page per group (MambaSpec); vLLM raises the
 * attention block size until a page holds it, llmsim keeps block_size and rounds the state up
 * to whole blocks (the same bytes within a block). */
static void hybrid_layout(const eng_config *c, eng_kv_plan *p)
{
    int64_t full = p->bytes_per_token, win = p->window_bytes_per_token;
    int64_t unit = full > 0 ? full : win;
    p->full_mul = full > 0;
    p->window_mul = win <= 0 ? 0 : full > 0 ? (int32_t)((win + full - 1) / full) : 1;
    p->window_chunked = c->model.window_chunked != 0;
    p->block_bytes = unit * c->block_size;
    p->state_blocks =
        p->block_bytes > 0 ? (int32_t)((p->state_bytes + p->block_bytes - 1) / p->block_bytes) : 0;
    int64_t model_unit = p->full_mul
                             ? eng_model_kv_bytes_per_token(&c->model, eng_config_kv_dtype(c))
                             : eng_model_window_bytes_per_token(&c->model, eng_config_kv_dtype(c));
    p->model_block_bytes = model_unit * c->block_size;
    eng_kv_hybrid_layout(c, p);
}

int eng_kv_plan_compute(const eng_config *c, eng_kv_plan *p, sim_err *err)
{
    eng_layout l;
    eng_gpu_share g;
    char why[512];
    memset(p, 0, sizeof *p);
    eng_config_layout(c, &l);
    if (eng_layout_check(&c->model, &l, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    if (c->pipeline_parallel > c->model.layers)
        return sim_errf(err, "pipeline_parallel %d: model %s has %d layers to split",
                        c->pipeline_parallel, c->model.name, c->model.layers);
    eng_dtype dt = eng_config_dtype(c), kv = eng_config_kv_dtype(c);
    eng_model_gpu_share(&c->model, dt, kv, &l, &g);
    eng_pipe_plan(c, dt, &l, &g, p);
    p->gpus = l.tp * l.dp * (c->pipeline_parallel > 1 ? c->pipeline_parallel : 1);
    p->ranks = l.dp;
    p->usable_bytes = (int64_t)((double)c->gpu.mem_bytes * c->gpu_utilization);
    draft_share(c, &l, dt, kv, &p->draft_weight_bytes, &p->draft_bytes_per_token);
    p->weight_bytes = g.weight_bytes + p->draft_weight_bytes;
    p->activation_bytes = c->activation_reserve;
    p->kv_bytes = p->usable_bytes - p->weight_bytes - p->activation_bytes;
    if (c->free_memory_fraction < 1 && p->kv_bytes > 0)
        p->kv_bytes = (int64_t)((double)p->kv_bytes * c->free_memory_fraction);
    p->bytes_per_token = g.kv_per_token + p->draft_bytes_per_token;
    p->window_bytes_per_token = g.window_per_token;
    p->window = c->model.window_layers > 0 ? c->model.window : 0;
    p->state_bytes = g.state_per_seq;
    p->kv_heads = g.kv_heads;
    p->model_bytes_per_token = eng_model_kv_bytes_per_token(&c->model, kv) +
                               eng_model_window_bytes_per_token(&c->model, kv);
    int64_t per_token = p->bytes_per_token + p->window_bytes_per_token;
    if (p->kv_bytes <= 0 || per_token <= 0)
        return sim_errf(err,
                        "%s does not fit: %.1f GB of weights per GPU (%s, %d GPU%s of %s, "
                        "tensor_parallel %d, expert_parallel %d, data_parallel_attention %d%s) "
                        "and %.1f GB of activation reserve against %.1f GB usable per GPU "
                        "(gpu_utilization %.2f)",
                        c->model.name, (double)p->weight_bytes / 1e9, eng_dtype_name(dt), p->gpus,
                        p->gpus > 1 ? "s" : "", c->gpu.name, l.tp, l.ep, l.dp,
                        p->draft_weight_bytes ? ", the drafter's included" : "",
                        (double)p->activation_bytes / 1e9, (double)p->usable_bytes / 1e9,
                        c->gpu_utilization);
    hybrid_layout(c, p);
    p->blocks = p->kv_bytes / p->block_bytes * p->ranks;
    p->tokens = p->blocks * c->block_size;
    if (p->blocks < 1)
        return sim_errf(err, "no room for a single KV block of %d tokens", c->block_size);
    return 0;
}

int64_t eng_lay_peak(const eng_kvlay *l, int64_t tokens, int64_t ahead)
{
    /* the last step starts with at most tokens - 1 computed, its slots reaching
     * tokens - 1 + ahead (the plain reservation of ceil(tokens / block size) blocks) */
    int64_t last = tokens - 1 > 0 ? tokens - 1 : 0, most = eng_lay_held(l, last, ahead);
    if (l->wm == 0 || l->window <= 0)
        return most; /* grows with the context */
    if (l->chunked) {
        /* within a chunk the blocks grow; a boundary drops the chunk's blocks: the peak is at
         * the end, or at the previous chunk's last token */
        if (last >= l->window) {
            int64_t h = eng_lay_held(l, last / l->window * l->window - 1, ahead);
            most = h > most ? h : most;
        }
        return most;
    }
    /* a sliding window holds a block more or less within each block's worth of steps: the peak
     * is within the last block size of steps, or (nothing grows: fm = 0) the first past the
     * window */
    for (int64_t x = last - l->bs > 0 ? last - l->bs : 0; x < last; x++) {
        int64_t h = eng_lay_held(l, x, ahead);
        most = h > most ? h : most;
    }
    if (l->fm == 0)
        for (int64_t x = l->window - 1; x < l->window - 1 + l->bs && x < last; x++) {
            int64_t h = eng_lay_held(l, x, ahead);
            most = h > most ? h : most;
        }
    return most;
}

void eng_kv_init(eng_kv *kv, const eng_kv_plan *p, int32_t block_size, int32_t ahead)
{
    kv->total = p->blocks;
    kv->used = 0;
    kv->held = 0;
    kv->block_size = block_size;
    kv->ps = NULL;
    kv->lay = (eng_kvlay){block_size, p->full_mul,       p->window_mul,
                          p->window,  p->window_chunked, p->state_blocks};
    if (p->window_mul == 0)
        kv->lay.window = 0;
    kv->ahead = ahead;
    kv->table_all = 0;
}

static int ps_check(const eng_kv *kv, int32_t replica, int64_t refs, char *buf, size_t len);

int eng_kv_check(const eng_kv *kv, int32_t replica, int64_t on_requests, int64_t refs, char *buf,
                 size_t len)
{
    int64_t cached = kv->ps ? kv->ps->inuse : 0;
    if (on_requests + kv->held + cached != kv->used || kv->used > kv->total || kv->used < 0) {
        snprintf(buf, len,
                 "replica %d: %lld KV blocks in use, requests hold %lld, %lld cached in use, total "
                 "%lld",
                 replica, (long long)kv->used, (long long)on_requests, (long long)cached,
                 (long long)kv->total);
        return -1;
    }
    return kv->ps ? ps_check(kv, replica, refs, buf, len) : 0;
}

/* ---------------- primitives for policies ---------------- */

int64_t eng_kv_total(const eng_replica *r)
{
    return r->kv.total;
}

int64_t eng_kv_free(const eng_replica *r)
{
    return eng_kv_nfree(&r->kv);
}

int32_t eng_kv_block_size(const eng_replica *r)
{
    return r->kv.block_size;
}

int64_t eng_kv_blocks_for(const eng_replica *r, int64_t tokens)
{
    return eng_lay_peak(&r->kv.lay, tokens, r->kv.ahead);
}

int64_t eng_kv_tokens_within(const eng_replica *r, int64_t blocks)
{
    const eng_kvlay *l = &r->kv.lay;
    if (l->wm != 0 && l->window > 0)
        return -2; /* a window's blocks come and go: eng_lay_peak is no plain ceiling */
    /* eng_lay_peak is then eng_lay_held(tokens - 1): fm ceilings of the slots, plus state, which
     * never falls as the tokens grow: bisect for the last count within `blocks` */
    int64_t lo = -1, hi = (int64_t)1 << 40; /* lo fits (or -1), hi is past any context */
    if (eng_kv_blocks_for(r, hi) <= blocks)
        return INT64_MAX;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (eng_kv_blocks_for(r, mid) <= blocks)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* MODEL: vLLM V0's disaggregated decode instance (0.6 KV connectors) takes a request like a
 * prefill: a seat under max_num_seqs and can_allocate's watermark for the prompt's blocks */
int64_t eng_kv_seat_blocks(const eng_replica *r, const eng_request *rq, int64_t running,
                           int64_t max_seqs, int64_t watermark)
{
    int64_t need = eng_kv_blocks_for(r, rq->prompt);
    if (running >= max_seqs || eng_kv_free(r) - need < watermark)
        return -1;
    return need;
}

int eng_kv_reserve(eng_replica *r, eng_request *rq, int64_t tokens)
{
    int64_t need = eng_kv_blocks_for(r, tokens) - rq->kv_blocks;
    if (need > eng_kv_nfree(&r->kv))
        return -1;
    if (need > 0)
        eng_kv_alloc_rq(&r->kv, rq, need);
    rq->kv_reserved = 1;
    return 0;
}

void eng_kv_hold(eng_replica *r, int64_t blocks)
{
    SIM_CHECK(r->e->ctx, blocks >= 0 && blocks <= eng_kv_nfree(&r->kv));
    eng_kv_take(&r->kv, blocks);
    r->kv.held += blocks;
}

void eng_kv_release(eng_replica *r, int64_t blocks)
{
    SIM_CHECK(r->e->ctx, blocks >= 0 && blocks <= r->kv.held);
    eng_kv_give(&r->kv, blocks);
    r->kv.held -= blocks;
}

/* ================= the prefix cache ================= */

/* splitmix64's finaliser: every input bit moves every output bit */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* ---- records: cached blocks and the queue's runs ---- */

/* The blocks taken since the queue was last read leave it (eng_kv_take): before anything that
 * reads the queue, the table, or what taking from them changes (the epoch, the evictions, the
 * own blocks, a request's own run). */
static inline void ps_settle(eng_pstore *ps)
{
    if (ps->pend > 0)
        eng_ps_take(ps);
}

/* Room for k more records past the last used (the unused ones aside). The records grow only for
 * live ones: every path that takes new ones settles first (run_new, block_new, register_blocks),
 * so none waits to be freed (a run taken whole, still on the queue's head) when they grow. */
static inline void rec_reserve(eng_pstore *ps, int32_t k)
{
    if (ps->nb + k > ps->capb) {
        SIM_ASSERT(NULL, ps->pend == 0);
        ps->capb = ps->capb ? 2 * ps->capb : 1024;
        ps->capb = ps->capb < ps->nb + k ? ps->nb + k : ps->capb;
        ps->b = sim_xrealloc(ps->b, (size_t)ps->capb * sizeof *ps->b);
    }
}

static inline int32_t rec_new(eng_pstore *ps)
{
    if (ps->freeb >= 0) {
        int32_t i = ps->freeb;
        ps->freeb = ps->b[i].next;
        return i;
    }
    rec_reserve(ps, 1);
    return ps->nb++;
}

static inline void rec_free(eng_pstore *ps, int32_t i)
{
    ps->b[i].ref = ENG_B_UNUSED;
    ps->b[i].next = ps->freeb;
    ps->freeb = i;
}

/* ---- the free queue, through the records ---- */

/* Unlinks records first .. last, neighbours in the queue in that order (the links between them
 * are left as they were). */
static inline void q_unlink_stretch(eng_pstore *ps, int32_t first, int32_t last)
{
    int32_t before = ps->b[first].prev, after = ps->b[last].next;
    if (before >= 0)
        ps->b[before].next = after;
    else
        ps->qhead = after;
    if (after >= 0)
        ps->b[after].prev = before;
    else
        ps->qtail = before;
}

static inline void q_unlink(eng_pstore *ps, int32_t i)
{
    q_unlink_stretch(ps, i, i);
}

/* Links record i into the queue after record `after` (-1: at the head). */
static inline void q_link(eng_pstore *ps, int32_t i, int32_t after)
{
    int32_t next = after >= 0 ? ps->b[after].next : ps->qhead;
    ps->b[i].prev = after;
    ps->b[i].next = next;
    if (after >= 0)
        ps->b[after].next = i;
    else
        ps->qhead = i;
    if (next >= 0)
        ps->b[next].prev = i;
    else
        ps->qtail = i;
}

/* A new run of count blocks of kind ENG_Q_ANON or ENG_Q_OWN at the queue's tail (q_link's, for
 * the tail, with rec_new's). Where every record is in use and blocks taken wait to leave the
 * queue's head (eng_pstore.pend), they leave first, their records freed: else a store nothing
 * reads (content no one shares) would keep a run for every request it ever freed, its memory
 * growing with the requests. The same blocks leave whenever they do (first in, first out). */
static inline int32_t run_new(eng_pstore *ps, int32_t kind, int64_t count)
{
    if (ps->freeb < 0 && ps->nb == ps->capb)
        ps_settle(ps);
    int32_t i = ps->freeb, t = ps->qtail;
    if (i >= 0)
        ps->freeb = ps->b[i].next;
    else
        i = rec_new(ps);
    eng_pblock *b = ps->b;
    b[i] = (eng_pblock){.key = (uint64_t)count, .ref = kind, .prev = t, .next = -1};
    if (t >= 0)
        b[t].next = i;
    else
        ps->qhead = i;
    ps->qtail = i;
    return i;
}

/* n anonymous blocks join the queue's tail (merged into a tail run of them). */
static inline void q_push_anon(eng_pstore *ps, int64_t n)
{
    if (ps->qtail >= 0 && ps->b[ps->qtail].ref == ENG_Q_ANON)
        ps->b[ps->qtail].key += (uint64_t)n;
    else
        run_new(ps, ENG_Q_ANON, n);
}

/* ---- the table (linear probing, at most a sixth full; backward-shift deletion) ---- */

/* The slot where hash h's probe sequence starts in a table of mask + 1 slots. */
static inline uint32_t home_slot(uint64_t h, uint32_t mask)
{
    return (uint32_t)(h ^ (h >> 32)) & mask;
}

static inline uint32_t home(const eng_pstore *ps, uint64_t h)
{
    return home_slot(h, ps->tabmask);
}

/* The record of the cached block with hash h in table tab of mask + 1 slots, or -1 with *at the
 * empty slot that ends its probe sequence (where it would go). */
static inline int32_t probe(const eng_tslot *tab, uint32_t mask, uint64_t h, uint32_t *at)
{
    for (uint32_t i = home_slot(h, mask);; i = (i + 1) & mask) {
        if (tab[i].rec == 0) {
            *at = i;
            return -1;
        }
        if (tab[i].hash == h)
            return tab[i].rec - 1;
    }
}

/* probe in ps's table (it exists). */
static inline int32_t tab_probe(const eng_pstore *ps, uint64_t h, uint32_t *at)
{
    return probe(ps->tab, ps->tabmask, h, at);
}

/* The record of the cached block with hash h, or -1. */
static inline int32_t tab_find(const eng_pstore *ps, uint64_t h)
{
    uint32_t at = 0;
    return ps->tab ? tab_probe(ps, h, &at) : -1;
}

int32_t eng_ps_find(const eng_pstore *ps, uint64_t h)
{
    SIM_ASSERT(NULL, ps->pend == 0); /* (the offload tiers' store: takes leave at once) */
    return tab_find(ps, h);
}

/* Enters record idx (its key the hash) in slot i. */
static inline void tab_put_at(eng_pstore *ps, int32_t idx, uint32_t i)
{
    ps->tab[i] = (eng_tslot){ps->b[idx].key, idx + 1};
    ps->b[idx].slot = i;
    ps->tabn++;
}

/* The table made, or doubled, to hold k more entries at most a sixth full. */
static void tab_grow(eng_pstore *ps, int64_t k)
{
    eng_tslot *old = ps->tab;
    uint32_t oldcap = old ? ps->tabmask + 1 : 0, cap = oldcap ? 2 * oldcap : 4096;
    /* made first for every block of the cache (the most it can hold, but for a block pinned
     * past it): no rehash as the cache fills */
    int64_t want = oldcap ? (int64_t)ps->tabn + k : ps->tabhint + k;
    while (6 * want > (int64_t)cap)
        cap *= 2;
    ps->tab = sim_xcalloc(cap, sizeof *ps->tab);
    ps->tabmask = cap - 1;
    ps->tabn = 0;
    for (uint32_t i = 0; i < oldcap; i++) {
        if (old[i].rec == 0)
            continue;
        uint32_t j = home(ps, old[i].hash);
        while (ps->tab[j].rec)
            j = (j + 1) & ps->tabmask;
        tab_put_at(ps, old[i].rec - 1, j);
    }
    free(old);
}

/* Makes room for k more entries: the table is kept at most a sixth full (a probe then ends
 * within a slot or two). Where it grows changes no result: only where entries sit. */
static inline void tab_reserve(eng_pstore *ps, int64_t k)
{
    if (!ps->tab || 6 * ((int64_t)ps->tabn + k) > (int64_t)ps->tabmask + 1)
        tab_grow(ps, k);
}

/* Removes record idx's entry (of table tab, mask, records b; the caller counts it); the entries
 * after it in its run move back where their probe sequences allow, so every probe still ends at
 * the first empty slot. */
static inline void tab_erase(eng_tslot *tab, uint32_t mask, eng_pblock *b, int32_t idx)
{
    uint32_t i = b[idx].slot, j = i;
    for (;;) {
        tab[i].rec = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (tab[j].rec == 0)
                return;
            uint32_t k = home_slot(tab[j].hash, mask);
            if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
                break;
        }
        tab[i] = tab[j];
        b[tab[i].rec - 1].slot = i;
        i = j;
    }
}

/* ---- cached blocks ---- */

/* A new cached block of hash h with `ref` holders (0: the caller queues it), entered in the
 * table's empty slot `at` (tab_probe's, after tab_reserve). */
static int32_t block_add(eng_pstore *ps, uint64_t h, int32_t ref, uint32_t at)
{
    int32_t idx = rec_new(ps);
    ps->b[idx] = (eng_pblock){.key = h, .ref = ref, .prev = -1, .next = -1, .slot = at};
    ps->tab[at] = (eng_tslot){h, idx + 1};
    ps->tabn++;
    if (ref > 0) {
        ps->inuse++;
        ps->refs += ref;
    }
    ps->epoch++;
    if (ps->off)
        eng_off_computed(ps->off, h);
    return idx;
}

/* A new cached block of hash h (not in the table) with `ref` holders. */
static int32_t block_new(eng_pstore *ps, uint64_t h, int32_t ref)
{
    ps_settle(ps); /* (rec_reserve) */
    uint32_t at = 0;
    tab_reserve(ps, 1);
    int32_t found = tab_probe(ps, h, &at);
    SIM_ASSERT(NULL, found < 0);
    (void)found;
    return block_add(ps, h, ref, at);
}

/* The free queue starts at i now (-1: it is empty). */
static inline void queue_from(eng_pstore *ps, int32_t i)
{
    ps->qhead = i;
    if (i >= 0)
        ps->b[i].prev = -1;
    else
        ps->qtail = -1;
}

/* MODEL: vLLM block_pool._maybe_evict_cached_block: a block taken from the free queue loses its
 * hash (SGLang evicts its radix tree's least recently used unreferenced leaves; reverse-order
 * frees keep every cached block behind its cached descendants in the queue, so evicting from the
 * head evicts leaves first here too). Evicts the cached blocks at the queue's head, up to n, and
 * returns how many; the store's fields are read and written once (through locals). */
static int64_t evict_head(eng_pstore *ps, int64_t n)
{
    eng_pblock *b = ps->b;
    eng_tslot *tab = ps->tab;
    uint32_t mask = ps->tabmask;
    int32_t i = ps->qhead, freeb = ps->freeb;
    uint64_t top = ps->evicted_seq;
    int64_t k = 0;
    /* the offload tiers see them first, in the same order (they keep no link into the store) */
    for (int32_t j = i; ps->off && k < n && j >= 0 && b[j].ref >= 0; k++, j = b[j].next)
        eng_off_evicted(ps->off, b[j].key);
    for (k = 0; k < n && b[i].ref >= 0; k++) { /* (n blocks are free: i >= 0) */
        top = b[i].seq > top ? b[i].seq : top;
        tab_erase(tab, mask, b, i);
        int32_t next = b[i].next;
        b[i].ref = ENG_B_UNUSED; /* rec_free's */
        b[i].next = freeb;
        freeb = i;
        i = next;
    }
    queue_from(ps, i);
    ps->freeb = freeb;
    ps->tabn -= (int32_t)k;
    ps->evicted_seq = top;
    ps->evictions += k;
    ps->epoch++;
    return k;
}

/* A request's own run loses its link to the request (consumed, or the request is gone). */
static void own_detach(eng_pcreq *pc)
{
    if (pc->own_ps && pc->own_q >= 0) {
        pc->own_ps->b[pc->own_q].owner = NULL;
        pc->own_ps->epoch++;
    }
    pc->own_ps = NULL;
    pc->own_q = -1;
}

void eng_ps_take(eng_pstore *ps)
{
    int64_t n = ps->pend, own = 0; /* own: blocks of own runs taken (evicted) */
    ps->pend = 0;
    eng_pblock *b = ps->b;
    int32_t i = ps->qhead;
    while (n > 0) {
        SIM_ASSERT(NULL, i >= 0);
        eng_pblock *q = &b[i];
        if (q->ref >= 0) {
            ps->qhead = i;
            b[i].prev = -1;
            n -= evict_head(ps, n);
            i = ps->qhead;
            continue;
        }
        int64_t k = (int64_t)q->key < n ? (int64_t)q->key : n;
        q->key -= (uint64_t)k;
        n -= k;
        if (q->ref == ENG_Q_OWN) /* its blocks are evicted, tail blocks first */
            own += k;
        if (q->key != 0)
            break;
        if (q->ref == ENG_Q_OWN && q->owner)
            own_detach(q->owner);
        int32_t next = q->next; /* it leaves the head (q_unlink's, rec_free's) */
        q->ref = ENG_B_UNUSED;
        q->next = ps->freeb;
        ps->freeb = i;
        i = next;
    }
    queue_from(ps, i);
    if (own > 0) {
        ps->evictions += own;
        ps->own -= own;
        ps->epoch++;
    }
}

void eng_ps_give(eng_pstore *ps, int64_t n)
{
    q_push_anon(ps, n);
}

/* ps_settle for the store holding rq's own run, if it has one (taking from the run could end
 * it, and with it its link). */
static inline void own_settle_run(eng_pcreq *pc)
{
    if (pc->own_q >= 0 && pc->own_ps)
        ps_settle(pc->own_ps);
}

void eng_kv_pin(eng_kv *kv, int32_t idx)
{
    eng_pstore *ps = kv->ps;
    ps_settle(ps);
    eng_pblock *b = &ps->b[idx];
    if (b->ref == 0) {
        /* as a hit's attach: it leaves the free queue */
        q_unlink(ps, idx);
        kv->used++;
        ps->inuse++;
    }
    b->ref++;
    ps->refs++;
    ps->epoch++;
}

void eng_kv_unpin(eng_kv *kv, int32_t idx)
{
    eng_pstore *ps = kv->ps;
    ps_settle(ps);
    ps->refs--;
    if (--ps->b[idx].ref == 0) {
        ps->inuse--;
        kv->used--;
        q_link(ps, idx, ps->qtail);
        ps->b[idx].seq = ps->qseq++;
    }
    ps->epoch++;
}

int32_t eng_kv_insert(eng_kv *kv, uint64_t h)
{
    if (eng_kv_nfree(kv) < 1)
        return -1;
    eng_kv_take(kv, 1); /* the least recently used free block holds it now */
    ps_settle(kv->ps);
    return block_new(kv->ps, h, 1);
}

/* ---- a request's content and block hashes ---- */

/* What a lookup reads of a store, copied out of it: a loop that stores references or block
 * numbers (int32_t, as some of these fields are) does not make the compiler read them again. */
typedef struct ps_view {
    const eng_tslot *tab;
    const eng_pblock *b;
    uint32_t mask;
    int32_t nb;
} ps_view;

static inline ps_view view_of(const eng_pstore *ps)
{
    return (ps_view){ps->tab, ps->b, ps->tabmask, ps->nb};
}

/* The cached block holding a request's block j (hashes bh, the last match's blocks blk[0..memo)):
 * the one the match remembered if it still holds that content, else a table lookup; -1. */
static inline int32_t view_block(ps_view v, const uint64_t *bh, const int32_t *blk, int32_t memo,
                                 int32_t j)
{
    uint64_t h = bh[j];
    if (j < memo) {
        int32_t idx = blk[j];
        if (idx >= 0 && idx < v.nb && v.b[idx].ref >= 0 && v.b[idx].key == h)
            return idx;
    }
    uint32_t at = 0;
    return v.tab ? probe(v.tab, v.mask, h, &at) : -1;
}

/* The cached block holding rq's block j, or -1 (view_block). */
static inline int32_t find_block(const eng_pstore *ps, const eng_pcreq *pc, int32_t j)
{
    return view_block(view_of(ps), pc->bh, pc->blk, pc->nmemo, j);
}

void eng_pcreq_reset(eng_pcreq *pc)
{
    own_detach(pc);
    pc->nseg = 0;
    pc->uid = pc->out_id = 0;
    pc->out_shared = 0;
    pc->tabled = 0;
    pc->own_tail = 0;
    pc->nbh = pc->cur_seg = pc->cur_off = 0;
    pc->nblk = pc->nident = pc->nmemo = 0;
    pc->memo_ps = 0;
    pc->m_ps = NULL;
}

void eng_pcreq_free(eng_pcreq *pc)
{
    if (pc)
        SIM_FREE_ALL(pc->seg, pc->bh, pc->blk, pc);
}

/* Segment k of rq's content (its prompt's segments, then its output): 0 past the end. */
static inline int seg_at(const eng_request *rq, int32_t k, uint64_t *id, int32_t *len)
{
    const eng_pcreq *pc = rq->pc;
    int32_t np = pc->nseg ? pc->nseg : 1;
    if (k < np) {
        *id = pc->nseg ? pc->seg[k].id : pc->uid;
        *len = pc->nseg ? pc->seg[k].len : rq->prompt;
        return 1;
    }
    if (k == np) {
        *id = pc->out_id;
        *len = rq->output;
        return 1;
    }
    return 0;
}

/* A piece of content: `take` tokens of content id from token off (odd multiplier: distinct
 * pieces stay distinct). */
static inline uint64_t piece(uint64_t id, int32_t off, int32_t take)
{
    return (id ^ ((uint64_t)off << 32) ^ (uint64_t)take) * UINT64_C(0x9e3779b97f4a7c15);
}

static void ensure_table(eng_pcreq *pc, int32_t n);

/* Room for n hashes in pc->bh (those in it kept). */
static void ensure_room(eng_pcreq *pc, int32_t n)
{
    if (n <= pc->capbh)
        return;
    pc->capbh = n > 2 * pc->capbh ? n : 2 * pc->capbh;
    pc->bh = sim_xrealloc(pc->bh, (size_t)pc->capbh * sizeof *pc->bh);
}

#define SWAP(type, a, b)                                                                           \
    do {                                                                                           \
        type swap_ = (a);                                                                          \
        (a) = (b);                                                                                 \
        (b) = swap_;                                                                               \
    } while (0)

/* ---- a conversation's hashes, kept from one turn to the next ---- */

/* Keeps rq's content and the hashes computed for it in ps, for its conversation's next turn
 * (whose prompt starts with that content). */
static void memo_stash(eng_pstore *ps, eng_request *rq, int32_t tabled, uint64_t seq)
{
    eng_pcreq *pc = rq->pc;
    if (!rq->session || pc->nseg == 0 || !pc->out_shared || pc->nbh == 0)
        return;
    if (!ps->hm)
        ps->hm = sim_xcalloc(ENG_HMEMO_SLOTS, sizeof *ps->hm);
    eng_hmemo *m = &ps->hm[rq->session & (ENG_HMEMO_SLOTS - 1)];
    if (pc->nseg + 1 > m->capseg) {
        m->capseg = pc->nseg + 1 > 2 * m->capseg ? pc->nseg + 1 : 2 * m->capseg;
        m->seg = sim_xrealloc(m->seg, (size_t)m->capseg * sizeof *m->seg);
    }
    memcpy(m->seg, pc->seg, (size_t)pc->nseg * sizeof *m->seg);
    m->seg[pc->nseg] = (eng_segment){pc->out_id, rq->output};
    /* the cached blocks holding them, as a match's memory: those before the first computed twice
     * (anonymous), all held by rq until this free, so still cached while no block that joined
     * the queue from then on (seq) is evicted */
    int32_t held = pc->nblk < tabled ? pc->nblk : tabled; /* nident of them cached */
    int32_t nblk = held < pc->nbh ? held : pc->nbh;
    nblk = nblk > 0 ? nblk : 0;
    for (int32_t j = 0; pc->nident < held && j < nblk; j++)
        if (pc->blk[j] < 0) {
            nblk = j;
            break;
        }
    /* rq's buffers become the memory's (the memory's, rq's): rq is done with its blocks, and its
     * hashes come back from here if it asks again (memo_take) */
    SWAP(uint64_t *, pc->bh, m->bh);
    SWAP(int32_t, pc->capbh, m->capbh);
    SWAP(int32_t *, pc->blk, m->blk);
    SWAP(int32_t, pc->capblk, m->capblk);
    m->nblk = nblk;
    m->seq = seq;
    m->session = rq->session;
    m->rid = rq->id;
    m->nseg = pc->nseg + 1;
    m->nbh = pc->nbh;
    pc->nbh = pc->cur_seg = pc->cur_off = 0;
}

static void memo_free(eng_pstore *ps)
{
    for (int32_t i = 0; ps->hm && i < ENG_HMEMO_SLOTS; i++)
        SIM_FREE_ALL(ps->hm[i].seg, ps->hm[i].bh, ps->hm[i].blk);
    free(ps->hm);
    ps->hm = NULL;
}

/* rq has no hashes yet: those of its first blocks (at most n) taken from its conversation's
 * last turn kept in ps, as far as the two contents are the same segments; where the next block
 * starts set as ensure_hashes would leave it. A block's hash covers its pieces and the blocks
 * before it, so a block within the common segments hashes alike in both. (ps is const to its
 * callers, who only read the cache: the memory it keeps is not the cache.) */
static void memo_take(const eng_pstore *ps, eng_request *rq, int32_t n, int32_t bs)
{
    eng_pcreq *pc = rq->pc;
    if (!ps || !ps->hm || !rq->session || pc->nseg == 0)
        return;
    eng_hmemo *m = &ps->hm[rq->session & (ENG_HMEMO_SLOTS - 1)];
    if (m->session != rq->session)
        return;
    int64_t same = 0; /* tokens of the leading segments both contents have */
    uint64_t id = 0;
    int32_t len = 0;
    for (int32_t k = 0; k < m->nseg && seg_at(rq, k, &id, &len); k++) {
        if (id != m->seg[k].id || len != m->seg[k].len)
            break;
        same += len;
    }
    int64_t u = same / bs;
    u = u < m->nbh ? u : m->nbh;
    u = u < n ? u : n;
    if (u <= 0)
        return;
    /* the request that kept them (preempted, or asked after it finished) copies them, the
     * memory staying for its next turn; a next turn takes the memory's buffers (rq's, empty, go
     * to the memory): it is used up */
    int own = m->rid == rq->id;
    int32_t nblk = m->nblk < u ? m->nblk : (int32_t)u;
    nblk = pc->nblk == 0 ? nblk : 0; /* a match checks them before it uses them */
    if (own) {
        ensure_room(pc, (int32_t)u);
        memcpy(pc->bh, m->bh, (size_t)u * sizeof *pc->bh);
        ensure_table(pc, nblk);
        memcpy(pc->blk, m->blk, (size_t)nblk * sizeof *pc->blk);
    } else {
        SWAP(uint64_t *, pc->bh, m->bh);
        SWAP(int32_t, pc->capbh, m->capbh);
        if (nblk > 0) {
            SWAP(int32_t *, pc->blk, m->blk);
            SWAP(int32_t, pc->capblk, m->capblk);
        }
        m->session = 0;
        m->nbh = m->nblk = 0;
    }
    if (nblk > 0) {
        pc->nmemo = nblk;
        pc->memo_ps = ps->serial;
        pc->mseq = m->seq;
    }
    /* the walk ensure_hashes makes over u blocks' tokens, a segment left as its end is reached */
    int32_t k = 0, off = 0;
    int64_t rest = u * bs;
    seg_at(rq, k, &id, &len);
    while (rest > 0) {
        int32_t take = (int64_t)(len - off) < rest ? len - off : (int32_t)rest;
        off += take;
        rest -= take;
        if (off == len) {
            k++;
            off = 0;
            if (!seg_at(rq, k, &id, &len))
                break;
        }
    }
    pc->cur_seg = k;
    pc->cur_off = off;
    pc->nbh = (int32_t)u;
}

/* Hashes rq's blocks nbh .. n - 1 (room for them made, n within its content). */
static void hash_blocks(const eng_kv *kv, eng_request *rq, int32_t n)
{
    eng_pcreq *pc = rq->pc;
    /* the segment the next block starts in, walked with it */
    int32_t k = pc->cur_seg, off = pc->cur_off, len = 0, bs = kv->block_size;
    uint64_t id = 0;
    if (!seg_at(rq, k, &id, &len))
        SIM_CHECK(NULL, !"block hashes asked for beyond the request's content");
    uint64_t acc = pc->nbh ? pc->bh[pc->nbh - 1] : UINT64_C(0x6c6c6d73696d5043);
    uint64_t *bh = pc->bh;
    for (int32_t j = pc->nbh; j < n; j++) {
        /* MODEL: vLLM kv_cache_utils.hash_block_tokens: a block's hash covers the hash of the
         * block before it and its own tokens (here: the content pieces it is made of) */
        /* the whole blocks inside this segment, not at its end: one piece each */
        int32_t end = len - off > bs ? j + (len - off - 1) / bs : j;
        for (end = end < n ? end : n; j < end; j++, off += bs) {
            acc = mix64(acc ^ piece(id, off, bs));
            bh[j] = acc;
        }
        if (j == n)
            break;
        int32_t need = bs;
        while (need > 0) {
            int32_t take = len - off < need ? len - off : need;
            acc = mix64(acc ^ piece(id, off, take));
            off += take;
            need -= take;
            if (off == len) {
                k++;
                off = 0;
                if (!seg_at(rq, k, &id, &len) && (need > 0 || j + 1 < n))
                    SIM_CHECK(NULL, !"block hashes asked for beyond the request's content");
            }
        }
        bh[j] = acc;
    }
    pc->cur_seg = k;
    pc->cur_off = off;
    pc->nbh = n;
}

#ifndef NDEBUG
/* Debug builds: the hashes memo_take took are those hash_blocks computes. */
static void memo_verify(const eng_kv *kv, eng_request *rq)
{
    eng_pcreq *pc = rq->pc;
    int32_t u = pc->nbh, seg = pc->cur_seg, off = pc->cur_off;
    uint64_t *kept = sim_xmalloc((size_t)u * sizeof *kept);
    memcpy(kept, pc->bh, (size_t)u * sizeof *kept);
    pc->nbh = pc->cur_seg = pc->cur_off = 0;
    hash_blocks(kv, rq, u);
    SIM_CHECK(NULL, memcmp(kept, pc->bh, (size_t)u * sizeof *kept) == 0 && pc->cur_seg == seg &&
                        pc->cur_off == off);
    free(kept);
}
#endif

/* Computes the chained hashes of rq's first n full blocks (n within its content). */
static void ensure_hashes(const eng_kv *kv, eng_request *rq, int32_t n)
{
    eng_pcreq *pc = rq->pc;
    if (n <= pc->nbh)
        return;
    if (pc->nbh == 0) {
        memo_take(kv->ps, rq, n, kv->block_size);
#ifndef NDEBUG
        if (pc->nbh > 0)
            memo_verify(kv, rq);
#endif
        if (n <= pc->nbh)
            return;
    }
    ensure_room(pc, n);
    hash_blocks(kv, rq, n);
}

static void ensure_table(eng_pcreq *pc, int32_t n)
{
    if (n <= pc->capblk)
        return;
    pc->capblk = n > 2 * pc->capblk ? n : 2 * pc->capblk;
    pc->blk = sim_xrealloc(pc->blk, (size_t)pc->capblk * sizeof *pc->blk);
}

/* Full blocks of rq's content (prompt + output tokens). */
static int32_t content_blocks(const eng_kv *kv, const eng_request *rq)
{
    return (int32_t)(((int64_t)rq->prompt + rq->output) / kv->block_size);
}

/* The leading blocks of rq that go through the table: those another request can hold too. A
 * block's hash covers every block before it, so once a block holds content of rq's alone (a
 * prompt the workload gave no content, an output without the workload's id), so does every
 * later one: only rq itself can find them again (after a preemption), and they are kept as
 * its own, unhashed (eng_pcreq). So from the first block that holds a token of a prompt's own tail
 * (eng_arrival.own_tail), unless offload tiers keep the cache's blocks: they are told of tabled
 * blocks only, and a request could find its own evicted blocks there again. All of them once
 * rq's own blocks went to the table. */
static inline int32_t tabled_blocks(const eng_kv *kv, const eng_request *rq)
{
    const eng_pcreq *pc = rq->pc;
    if (pc->tabled || kv->table_all)
        return INT32_MAX;
    if (pc->nseg == 0)
        return 0;
    if (pc->own_tail > 0 && !kv->ps->off)
        return (rq->prompt - pc->own_tail) / kv->block_size;
    return (int32_t)(((int64_t)rq->prompt + (pc->out_shared ? rq->output : 0)) / kv->block_size);
}

/* Whether rq has a run of its own blocks in kv's free queue. */
static int own_run_here(const eng_kv *kv, const eng_pcreq *pc)
{
    return pc->own_ps == kv->ps && pc->own_q >= 0;
}

/* Sends rq's own blocks to the table, one by one, as the prefix cache without own runs keeps
 * them: the ones it holds (referenced by it) and those of its run in the free queue (in the
 * run's place, tail blocks nearest the head). Needed once rq's run is not taken whole (a hit
 * that stops short of it): from then on its own blocks can be computed twice. */
static void own_settle(eng_kv *kv, eng_request *rq)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    int32_t t = tabled_blocks(kv, rq), held = pc->nblk > t ? pc->nblk - t : 0, first = 0,
            queued = 0;
    if (own_run_here(kv, pc)) {
        first = (int32_t)ps->b[pc->own_q].slot;
        queued = (int32_t)ps->b[pc->own_q].key;
    }
    pc->tabled = 1;
    int32_t n = t + held > first + queued ? t + held : first + queued;
    ensure_hashes(kv, rq, n);
    ensure_table(pc, n);
    for (int32_t j = t; j < t + held; j++) {
        pc->blk[j] = block_new(ps, pc->bh[j], 1);
        pc->nident++;
    }
    if (queued > 0) {
        int32_t at = pc->own_q, before = ps->b[at].prev;
        uint64_t seq = pc->own_seq; /* they keep the run's place in the queue */
        own_detach(pc);
        q_unlink(ps, at);
        rec_free(ps, at);
        for (int32_t j = first + queued - 1; j >= first; j--) {
            int32_t idx = block_new(ps, pc->bh[j], 0);
            q_link(ps, idx, before);
            ps->b[idx].seq = seq;
            before = idx;
        }
    }
    ps->own -= held + queued;
    ps->epoch++;
}

static void register_blocks(eng_kv *kv, eng_request *rq, int64_t n);

/* Whether rq's blocks are all its own (tabled_blocks 0: none through the table) and no run of
 * its own waits in a free queue: its blocks are counted, not tabled. */
static inline int own_only(const eng_kv *kv, const eng_pcreq *pc)
{
    return pc->nseg == 0 && !pc->tabled && !kv->table_all && !pc->own_ps;
}

/* The full blocks of rq's content that `tokens` tokens fill, of those it holds. */
static inline int64_t filled_blocks(const eng_kv *kv, const eng_request *rq, int64_t tokens)
{
    int64_t n = tokens / kv->block_size;
    if (n > rq->kv_blocks)
        n = rq->kv_blocks;
    if (n > content_blocks(kv, rq))
        n = content_blocks(kv, rq);
    return n;
}

/* rq's blocks nblk .. n - 1 (n > nblk), its own, counted on the store's account. */
static inline void own_count(eng_pstore *ps, eng_pcreq *pc, int64_t n)
{
    ps->own += n - pc->nblk;
    pc->nblk = (int32_t)n;
}

void eng_kv_register(eng_kv *kv, eng_request *rq, int64_t tokens)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    if (!ps || !pc)
        return;
    int64_t n = filled_blocks(kv, rq, tokens);
    if (n <= pc->nblk)
        return;
    if (own_only(kv, pc)) { /* the new blocks are its own, counted (register_blocks's) */
        own_count(ps, pc, n);
        return;
    }
    register_blocks(kv, rq, n);
}

/* eng_kv_register's blocks nblk .. n - 1 of rq (n > nblk). */
static void register_blocks(eng_kv *kv, eng_request *rq, int64_t n)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    if (pc->own_ps == ps)
        ps_settle(ps);
    if (own_run_here(kv, pc))
        own_settle(kv, rq); /* its copies in the queue: the new ones may be computed twice */
    int32_t t = tabled_blocks(kv, rq), m = n < t ? (int32_t)n : t;
    if (m > pc->nblk) {
        ps_settle(ps);
        ensure_hashes(kv, rq, m);
        ensure_table(pc, m);
        tab_reserve(ps, m - pc->nblk);
        rec_reserve(ps, m - pc->nblk);
    }
    /* through locals: the stores to blk (int32_t) would make the store's fields be read again */
    const uint64_t *bh = pc->bh;
    int32_t *blk = pc->blk, freeb = ps->freeb, nb = ps->nb, added = 0;
    eng_pblock *b = ps->b;
    eng_tslot *tab = ps->tab;
    uint32_t mask = ps->tabmask;
    for (int32_t j = pc->nblk; j < m; j++) {
        /* MODEL: vLLM block_pool.cache_full_blocks: a full block gets its hash and enters the
         * table; a block whose hash is already there (computed twice at once) stays anonymous
         * here (vLLM keeps both; the first serves the hits) */
        uint32_t at = 0;
        if (probe(tab, mask, bh[j], &at) >= 0) {
            blk[j] = -1;
            continue;
        }
        int32_t idx = freeb >= 0 ? freeb : nb++; /* rec_new's */
        freeb = idx == freeb ? b[idx].next : freeb;
        b[idx] = (eng_pblock){bh[j], 1, -1, -1, at, {NULL}};
        tab[at] = (eng_tslot){bh[j], idx + 1};
        blk[j] = idx;
        added++;
    }
    ps->freeb = freeb;
    ps->nb = nb;
    if (added > 0) {
        ps->tabn += added;
        pc->nident += added;
        ps->inuse += added;
        ps->refs += added;
        ps->epoch++;
    }
    /* the offload tiers see the new blocks, in order (they keep no link into the store) */
    for (int32_t j = pc->nblk; ps->off && j < m; j++)
        if (blk[j] >= 0)
            eng_off_computed(ps->off, bh[j]);
    if (n > t)
        ps->own += n - (pc->nblk > t ? pc->nblk : t);
    pc->nblk = (int32_t)n;
}

/* Cached blocks joining the queue's tail one after another, through locals: the records, the
 * tail, where the next one's number goes, the next seq (the store's fields set at the end). */
typedef struct q_tailer {
    eng_pblock *rec;
    int32_t tail, *link;
    uint64_t seq;
} q_tailer;

static inline q_tailer q_tailer_of(eng_pstore *ps)
{
    int32_t t = ps->qtail;
    return (q_tailer){ps->b, t, t >= 0 ? &ps->b[t].next : &ps->qhead, ps->qseq};
}

/* Cached block idx (no holder left) joins the tail. */
static inline void q_tailer_add(q_tailer *q, int32_t idx)
{
    q->rec[idx].prev = q->tail;
    q->rec[idx].seq = q->seq++;
    *q->link = idx;
    q->link = &q->rec[idx].next;
    q->tail = idx;
}

static inline void q_tailer_end(eng_pstore *ps, q_tailer *q)
{
    *q->link = -1;
    ps->qtail = q->tail;
    ps->qseq = q->seq;
}

/* rq's own computed blocks [t, nblk), freed: one run at the queue's tail (cached: taking them
 * from it evicts them, tail blocks first), linked to rq. */
static inline void own_push(eng_kv *kv, eng_request *rq, int32_t t)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    int64_t n = pc->nblk - t;
    kv->used -= n;
    own_detach(pc);
    pc->own_q = run_new(ps, ENG_Q_OWN, n);
    pc->own_ps = ps;
    pc->own_seq = ps->qseq++;
    ps->b[pc->own_q].owner = pc;
    ps->b[pc->own_q].slot = (uint32_t)t;
    ps->epoch++;
}

void eng_kv_free_rq(eng_kv *kv, eng_request *rq, int64_t keep_tokens)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    if (!ps || !pc) {
        eng_kv_give(kv, rq->kv_blocks);
        rq->kv_blocks = 0;
        return;
    }
    if (own_only(kv, pc)) {
        /* what the path below does for such a request: its blocks past its content anonymous,
         * then its own blocks as one run (no cached block, no memory kept) */
        int64_t n = keep_tokens > 0 ? filled_blocks(kv, rq, keep_tokens) : 0;
        if (n > pc->nblk) /* eng_kv_register's */
            own_count(ps, pc, n);
        eng_kv_give(kv, rq->kv_blocks - pc->nblk);
        if (pc->nblk > 0)
            own_push(kv, rq, 0);
        pc->nblk = pc->nident = pc->nmemo = 0;
        rq->kv_blocks = 0;
        return;
    }
    if (keep_tokens > 0)
        eng_kv_register(kv, rq, keep_tokens);
    own_settle_run(pc);
    int32_t stash_t = tabled_blocks(kv, rq); /* (before own_settle) */
    uint64_t stash_seq = ps->qseq;
    if (own_run_here(kv, pc))
        own_settle(kv, rq);
    /* MODEL: vLLM KVCacheManager.free: blocks are freed in reverse order so that the tail
     * blocks are evicted first */
    eng_kv_give(kv, rq->kv_blocks - pc->nblk);
    int32_t t = tabled_blocks(kv, rq), m = pc->nblk < t ? pc->nblk : t;
    if (pc->nblk > m)
        own_push(kv, rq, m);
    const int32_t *blk = pc->blk;
    q_tailer q = q_tailer_of(ps);
    uint64_t seq0 = q.seq;
    if (pc->nident == m) { /* no block computed twice (anonymous): no test for one */
        /* by index, not pointer: blk is NULL when m is 0 */
        for (int32_t j = m; j > 0;) {
            int32_t idx = blk[--j];
            if (--q.rec[idx].ref == 0)
                q_tailer_add(&q, idx);
        }
    } else {
        for (int32_t j = m - 1; j >= 0; j--) {
            int32_t idx = blk[j];
            if (idx < 0) {
                q_tailer_end(ps, &q);
                eng_kv_give(kv, 1); /* (takes no seq) */
                q = q_tailer_of(ps);
            } else if (--q.rec[idx].ref == 0) {
                q_tailer_add(&q, idx);
            }
        }
    }
    int64_t freed = (int64_t)(q.seq - seq0); /* cached blocks nobody holds any more */
    q_tailer_end(ps, &q);
    ps->refs -= pc->nident;
    ps->inuse -= freed;
    kv->used -= freed;
    if (m > 0)
        ps->epoch++;
    memo_stash(ps, rq, stash_t, stash_seq);
    pc->nblk = pc->nident = pc->nmemo = 0;
    rq->kv_blocks = 0;
}

/* ---- set-up and checks ---- */

void eng_kv_drop(eng_kv *kv)
{
    eng_pstore *ps = kv->ps;
    if (ps)
        ps_settle(ps);
    for (int32_t i = 0; ps && i < ps->nb; i++)
        if (ps->b[i].ref == ENG_Q_OWN && ps->b[i].owner)
            own_detach(ps->b[i].owner); /* a request gone keeps no link into a freed cache */
    eng_kv_fini(kv);
}

void eng_kv_fini(eng_kv *kv)
{
    eng_pstore *ps = kv->ps;
    if (!ps)
        return;
    free(ps->b);
    free(ps->tab);
    memo_free(ps);
    free(ps);
    kv->ps = NULL;
}

/* The table: each entry its record's (hash and slot), found from its home without crossing an
 * empty slot, entries counted, at most a sixth full. O(slots). */
static int tab_check(const eng_pstore *ps, int32_t replica, char *buf, size_t len)
{
    int64_t n = 0;
    for (uint32_t i = 0; ps->tab && i <= ps->tabmask; i++) {
        const eng_tslot *t = &ps->tab[i];
        if (t->rec == 0)
            continue;
        n++;
        const eng_pblock *b = &ps->b[t->rec - 1];
        int bad = b->ref < 0 || b->key != t->hash || b->slot != i;
        for (uint32_t j = home(ps, t->hash); j != i && !bad; j = (j + 1) & ps->tabmask)
            bad = ps->tab[j].rec == 0;
        if (bad) {
            snprintf(buf, len, "replica %d: prefix table slot %u out of place", replica, i);
            return -1;
        }
    }
    if (n != ps->tabn || (ps->tab && 6 * n > (int64_t)ps->tabmask + 1)) {
        snprintf(buf, len, "replica %d: prefix table holds %lld entries, counts %d", replica,
                 (long long)n, ps->tabn);
        return -1;
    }
    return 0;
}

static int ps_check(const eng_kv *kv, int32_t replica, int64_t refs, char *buf, size_t len)
{
    const eng_pstore *ps = kv->ps;
    if (refs != ps->refs) {
        snprintf(buf, len, "replica %d: requests hold %lld cached blocks, references say %lld",
                 replica, (long long)refs, (long long)ps->refs);
        return -1;
    }
    /* the free queue holds exactly the free blocks; walked in full on small caches */
    if (kv->total > 65536)
        return 0;
    int64_t free_blocks = 0, bad = 0;
    for (int32_t i = ps->qhead; i >= 0; i = ps->b[i].next) {
        const eng_pblock *q = &ps->b[i];
        free_blocks += q->ref >= 0 ? 1 : (int64_t)q->key;
        if (q->ref > 0 || q->ref == ENG_B_UNUSED ||
            (q->ref == 0 && ps->tab[q->slot].rec != i + 1) ||
            (q->ref == ENG_Q_OWN && q->owner &&
             (q->owner->own_q != i || q->owner->own_ps != ps || q->key == 0)))
            bad = 1;
    }
    free_blocks -= ps->pend; /* taken, not yet off the queue */
    if (free_blocks != kv->total - kv->used || bad) {
        snprintf(buf, len, "replica %d: free queue holds %lld blocks, %lld are free", replica,
                 (long long)free_blocks, (long long)(kv->total - kv->used));
        return -1;
    }
    return kv->total <= 4096 ? tab_check(ps, replica, buf, len) : 0;
}

/* ================= prefix caching for policies ================= */

void eng_prefix_cache_enable(eng_replica *r, int mode)
{
    eng_kv *kv = &r->kv;
    SIM_CHECK(r->e->ctx, kv->used == 0 && (mode == ENG_PC_AT_SCHEDULE ||
                                           mode == ENG_PC_AT_COMPLETION || mode == ENG_PC_OFF));
    eng_kv_fini(kv);
    /* MODEL: vLLM's supported-models page: "prefix caching is not yet supported" for hybrid
     * models with linear-attention (Mamba-like) layers; a model whose every layer is windowed
     * keeps no block past its window to share. Their prefix cache stays off, but for vLLM's
     * opt-in mamba_cache_mode align, whose plan leaves no per-sequence state (kv_hybrid.c). */
    if (mode == ENG_PC_OFF || kv->lay.state > 0 || kv->lay.fm == 0)
        return;
    eng_pstore *ps = sim_xcalloc(1, sizeof *ps);
    ps->mode = mode;
    ps->freeb = ps->qhead = ps->qtail = -1;
    ps->serial = ++r->e->ps_made;
    ps->qseq = 1;
    ps->tabhint = kv->total;
    kv->ps = ps;
    q_push_anon(ps, kv->total); /* every block starts free, never used */
}

int eng_prefix_cache_mode(const eng_replica *r)
{
    return r->kv.ps ? r->kv.ps->mode : ENG_PC_OFF;
}

/* How many of cached blocks blk[0..n) of records b no request holds (four at a time: the loop
 * runs over every block of a conversation's context at each turn). */
static inline int64_t unheld(const eng_pblock *b, const int32_t *blk, int32_t n)
{
    int64_t ev = 0;
    int32_t j = 0;
    for (; j + 4 <= n; j += 4)
        ev += (b[blk[j]].ref == 0) + (b[blk[j + 1]].ref == 0) + (b[blk[j + 2]].ref == 0) +
              (b[blk[j + 3]].ref == 0);
    for (; j < n; j++)
        ev += b[blk[j]].ref == 0;
    return ev;
}

/* Debug builds: the memory blk[0..n) that a match takes whole (no block of its seq or later
 * evicted) holds cached blocks of rq's hashes. */
static void memo_check(const eng_pstore *ps, const eng_pcreq *pc, int32_t n)
{
#ifndef NDEBUG
    for (int32_t j = 0; j < n; j++) {
        int32_t idx = pc->blk[j];
        SIM_CHECK(NULL,
                  idx >= 0 && idx < ps->nb && ps->b[idx].ref >= 0 && ps->b[idx].key == pc->bh[j]);
    }
#else
    (void)ps, (void)pc, (void)n;
#endif
}

/* Whether rq's last match still holds: same cache, nothing in it changed, same target. */
static inline int memo_valid(const eng_pstore *ps, const eng_request *rq)
{
    const eng_pcreq *pc = rq->pc;
    return pc->m_ps == ps && pc->m_epoch == ps->epoch && pc->m_target == rq->prefill_target;
}

static int32_t match_blocks(eng_replica *r, eng_request *rq, int64_t *evictable);

int32_t eng_prefix_match(eng_replica *r, eng_request *rq, int64_t *evictable)
{
    eng_kv *kv = &r->kv;
    eng_pstore *ps = kv->ps;
    if (evictable)
        *evictable = 0;
    if (!ps || !rq->pc || !rq->pc->out_id || rq->kv_blocks > 0)
        return 0;
    eng_pcreq *pc = rq->pc;
    if (pc->nseg == 0 && !pc->tabled && !kv->table_all && pc->own_ps != ps) {
        /* nothing it can hit (no block through the table, no run of its own here): what
         * match_blocks finds, without reading the cache (its memo left unset: the next looks) */
        pc->nmemo = 0;
        pc->m_ps = NULL;
        return 0;
    }
    return match_blocks(r, rq, evictable);
}

/* eng_prefix_match past its first tests (kept out of line: the caller above stays small). */
static __attribute__((noinline)) int32_t match_blocks(eng_replica *r, eng_request *rq,
                                                      int64_t *evictable)
{
    eng_kv *kv = &r->kv;
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    ps_settle(ps);
    if (memo_valid(ps, rq)) {
        if (evictable)
            *evictable = pc->m_ev;
        return pc->m_hit * kv->block_size;
    }
    /* MODEL: vLLM KVCacheManager.get_computed_blocks: when every token hits, the last one is
     * computed again for its logits: at most num_tokens - 1 tokens, in whole blocks */
    int32_t most = (int32_t)(((int64_t)rq->prefill_target - 1) / kv->block_size);
    int32_t t = tabled_blocks(kv, rq), m = most < t ? most : t, j = 0;
    int64_t ev = 0;
    if (m > 0) {
        ensure_hashes(kv, rq, m);
        ensure_table(pc, m);
    }
    ps_view v = view_of(ps);
    const uint64_t *bh = pc->bh;
    int32_t *blk = pc->blk, memo = pc->nmemo < m ? pc->nmemo : m;
    /* the blocks the memory still holds (a conversation's turn: most of them), then lookups;
     * seq: the least seq of a block found waiting in the queue outside the memory kept whole */
    uint64_t seq = ps->qseq;
    if (memo > 0 && pc->memo_ps == ps->serial && ps->evicted_seq < pc->mseq) {
        memo_check(ps, pc, memo); /* all still cached: only their holders count */
        seq = pc->mseq;
        ev = unheld(v.b, blk, memo);
        j = memo;
    }
    for (; j < memo; j++) {
        int32_t idx = blk[j];
        if ((uint32_t)idx >= (uint32_t)v.nb || v.b[idx].ref < 0 || v.b[idx].key != bh[j])
            break;
        if (v.b[idx].ref == 0) {
            ev++;
            seq = v.b[idx].seq < seq ? v.b[idx].seq : seq;
        }
    }
    for (; j < m; j++) {
        int32_t idx = view_block(v, bh, blk, memo, j);
        if (idx < 0)
            break;
        blk[j] = idx;
        if (v.b[idx].ref == 0) {
            ev++;
            seq = v.b[idx].seq < seq ? v.b[idx].seq : seq;
        }
    }
    pc->nmemo = j;
    pc->memo_ps = ps->serial;
    pc->mseq = seq;
    if (j == t && j < most && own_run_here(kv, pc) && (int32_t)ps->b[pc->own_q].slot == j) {
        /* its own blocks left in the queue after a preemption: the run's head side is evicted
         * first, so what is left of it is its first blocks */
        int64_t own = (int64_t)ps->b[pc->own_q].key;
        own = own < most - j ? own : most - j;
        j += (int32_t)own;
        ev += own;
    }
    pc->m_ps = ps;
    pc->m_epoch = ps->epoch;
    pc->m_target = rq->prefill_target;
    pc->m_hit = j > 0 ? j : 0;
    pc->m_ev = ev;
    if (evictable)
        *evictable = ev;
    return pc->m_hit * kv->block_size;
}

/* A stretch of blocks leaving the free queue together, first to last in queue order (first:
 * INT32_MIN, none, and no record's next), and the blocks that left it so far. */
typedef struct q_stretch {
    int32_t first, last;
    int64_t touched;
} q_stretch;

/* An attach takes a reference on cached block idx: one nobody held leaves the queue, with the
 * stretch if it stands just before it, else starting a new one (the last one unlinked). */
static inline void touch(eng_pstore *ps, eng_pblock *rec, q_stretch *st, int32_t idx)
{
    SIM_ASSERT(NULL, idx >= 0);
    if (rec[idx].ref++ != 0)
        return;
    st->touched++;
    if (rec[idx].next == st->first) {
        st->first = idx;
        return;
    }
    if (st->first != INT32_MIN)
        q_unlink_stretch(ps, st->first, st->last);
    st->first = st->last = idx;
}

void eng_prefix_attach(eng_replica *r, eng_request *rq, int32_t hit)
{
    eng_kv *kv = &r->kv;
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    if (hit == 0) { /* (the check below, for no hit) */
        SIM_CHECK(r->e->ctx, rq->kv_blocks == 0);
        return;
    }
    int32_t n = hit / kv->block_size;
    SIM_CHECK(r->e->ctx, hit % kv->block_size == 0 && rq->kv_blocks == 0 &&
                             (n == 0 || (ps && pc && pc->nblk == 0)));
    if (n == 0)
        return;
    ps_settle(ps);
    int32_t t = tabled_blocks(kv, rq), m = n < t ? n : t;
    int known = memo_valid(ps, rq) && n <= pc->m_hit; /* blk[0..m) as the match found them */
    SIM_CHECK(r->e->ctx, m <= pc->nbh);
    ensure_table(pc, m);
    int32_t *blk = pc->blk;
    for (int32_t j = 0; !known && j < m; j++)
        blk[j] = find_block(ps, pc, j);
    eng_pblock *rec = ps->b;
    /* MODEL: vLLM BlockPool.touch: a cached block with no user leaves the free queue. A request
     * freed its blocks tail first, so those leaving here often stand in the queue in reverse
     * order, each just before the last: they leave as one stretch, from first to last (queue
     * order), unlinked once (the links inside it are left as they are) */
    q_stretch st = {INT32_MIN, -1, 0};
    int32_t j = 0;               /* (by index, not pointer: blk is NULL when m is 0) */
    for (; j + 2 <= m; j += 2) { /* (two at a time: every block of a turn's context) */
        touch(ps, rec, &st, blk[j]);
        touch(ps, rec, &st, blk[j + 1]);
    }
    if (j < m)
        touch(ps, rec, &st, blk[j]);
    if (st.first != INT32_MIN)
        q_unlink_stretch(ps, st.first, st.last);
    int64_t touched = st.touched; /* cached blocks nobody held */
    kv->used += touched;
    ps->inuse += touched;
    ps->refs += m;
    if (n > m) {
        /* the first blocks of its own run: they leave the queue's tail side of the run */
        SIM_CHECK(r->e->ctx, own_run_here(kv, pc) && (int32_t)ps->b[pc->own_q].slot == m &&
                                 (int64_t)ps->b[pc->own_q].key >= n - m);
        eng_pblock *q = &ps->b[pc->own_q];
        q->slot += (uint32_t)(n - m);
        q->key -= (uint64_t)(n - m);
        kv->used += n - m;
        if (q->key == 0) {
            int32_t at = pc->own_q;
            own_detach(pc);
            q_unlink(ps, at);
            rec_free(ps, at);
        }
    }
    ps->epoch++;
    pc->nblk = n;
    pc->nident = m;
    pc->nmemo = 0;
    rq->kv_blocks = n;
    rq->prefilled = hit;
}

int64_t eng_prefill_hit_blocks_needed(const eng_replica *r, const eng_request *rq, int32_t hit,
                                      int32_t tokens)
{
    const eng_kv *kv = &r->kv;
    /* a request whose offloaded KV is on its way (or starts it now) does not fit yet */
    if (r->off && eng_off_gate((eng_replica *)r, (eng_request *)rq))
        return INT64_MAX / 4;
    int32_t n = hit / kv->block_size;
    int64_t need = eng_lay_held(&kv->lay, hit, tokens) - n;
    if (n == 0)
        return need;
    ps_settle(kv->ps);
    /* MODEL: vLLM get_num_blocks_to_allocate counts the hit's blocks no request holds: touching
     * them takes them out of the free queue (its own blocks all wait in the queue) */
    if (memo_valid(kv->ps, rq) && n == rq->pc->m_hit)
        return need + rq->pc->m_ev;
    int32_t t = tabled_blocks(kv, rq), m = n < t ? n : t;
    for (int32_t j = 0; j < m; j++)
        need += kv->ps->b[find_block(kv->ps, rq->pc, j)].ref == 0;
    return need + (n - m);
}

int32_t eng_request_block_hashes(const eng_replica *r, const eng_request *rq, int32_t max,
                                 const uint64_t **out)
{
    *out = NULL;
    if (!rq->pc || !rq->pc->out_id)
        return 0;
    int32_t n = rq->prompt / r->kv.block_size;
    if (n > max)
        n = max;
    ensure_hashes(&r->kv, (eng_request *)rq, n); /* memoised on rq */
    *out = rq->pc->bh;
    return n;
}

int32_t eng_request_shared_hashes(const eng_replica *r, const eng_request *rq, int32_t *nh,
                                  const uint64_t **out)
{
    const eng_pcreq *pc = rq->pc;
    int32_t bs = r->kv.block_size, n = pc && pc->out_id ? rq->prompt / bs : 0, m = n;
    if (n > 0 && pc->own_tail > 0 && (rq->prompt - pc->own_tail) / bs + 1 < n)
        m = (rq->prompt - pc->own_tail) / bs + 1;
    *nh = eng_request_block_hashes(r, rq, m, out);
    return n;
}

int64_t eng_prefix_evictions(const eng_replica *r)
{
    if (!r->kv.ps)
        return 0;
    ps_settle(r->kv.ps);
    return r->kv.ps->evictions;
}

int64_t eng_prefix_cached_blocks(const eng_replica *r)
{
    eng_pstore *ps = r->kv.ps;
    if (!ps)
        return 0;
    ps_settle(ps);
    return ps->tabn + ps->own;
}

int64_t eng_prefix_tabled_blocks(const eng_replica *r)
{
    if (!r->kv.ps)
        return 0;
    ps_settle(r->kv.ps);
    return r->kv.ps->tabn;
}
