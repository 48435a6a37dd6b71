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
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* ---- the free queue ---- */

static int32_t q_new(eng_pstore *ps)
{
    if (ps->qfree < 0) {
        int32_t old = ps->capq;
        ps->capq = old ? 2 * old : 1024;
        ps->q = sim_xrealloc(ps->q, (size_t)ps->capq * sizeof *ps->q);
        for (int32_t i = ps->capq - 1; i >= old; i--) {
            ps->q[i].next = ps->qfree;
            ps->qfree = i;
        }
    }
    int32_t i = ps->qfree;
    ps->qfree = ps->q[i].next;
    return i;
}

static void q_unlink(eng_pstore *ps, int32_t i)
{
    eng_qnode *n = &ps->q[i];
    if (n->prev >= 0)
        ps->q[n->prev].next = n->next;
    else
        ps->qhead = n->next;
    if (n->next >= 0)
        ps->q[n->next].prev = n->prev;
    else
        ps->qtail = n->prev;
    n->next = ps->qfree;
    ps->qfree = i;
}

/* Appends a cached block (blk >= 0) or count anonymous blocks (blk < 0, merged into a tail
 * run) to the queue's tail. */
static void q_push(eng_pstore *ps, int32_t blk, int64_t count)
{
    if (blk < 0 && ps->qtail >= 0 && ps->q[ps->qtail].blk < 0) {
        ps->q[ps->qtail].count += count;
        return;
    }
    int32_t i = q_new(ps);
    ps->q[i] = (eng_qnode){count, blk, ps->qtail, -1};
    if (ps->qtail >= 0)
        ps->q[ps->qtail].next = i;
    else
        ps->qhead = i;
    ps->qtail = i;
    if (blk >= 0)
        ps->b[blk].qnode = i;
}

/* ---- the hash table (linear probing, backward-shift deletion) ---- */

static uint32_t home(const eng_pstore *ps, uint64_t h)
{
    return (uint32_t)(h ^ (h >> 32)) & ps->tabmask;
}

static int32_t tab_find(const eng_pstore *ps, uint64_t h)
{
    for (uint32_t i = home(ps, h);; i = (i + 1) & ps->tabmask) {
        int32_t v = ps->tab[i];
        if (v == 0)
            return -1;
        if (ps->b[v - 1].hash == h)
            return v - 1;
    }
}

int32_t eng_ps_find(const eng_pstore *ps, uint64_t h)
{
    return ps->tab ? tab_find(ps, h) : -1;
}

static void tab_put(eng_pstore *ps, int32_t idx)
{
    uint32_t i = home(ps, ps->b[idx].hash);
    while (ps->tab[i])
        i = (i + 1) & ps->tabmask;
    ps->tab[i] = idx + 1;
    ps->tabn++;
}

static void tab_grow(eng_pstore *ps)
{
    int32_t *old = ps->tab;
    uint32_t oldcap = ps->tab ? ps->tabmask + 1 : 0;
    uint32_t cap = oldcap ? 2 * oldcap : 4096;
    ps->tab = sim_xcalloc(cap, sizeof *ps->tab);
    ps->tabmask = cap - 1;
    ps->tabn = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i])
            tab_put(ps, old[i] - 1);
    free(old);
}

static void tab_erase(eng_pstore *ps, int32_t idx)
{
    uint32_t i = home(ps, ps->b[idx].hash);
    while (ps->tab[i] != idx + 1)
        i = (i + 1) & ps->tabmask;
    for (;;) {
        ps->tab[i] = 0;
        uint32_t j = i;
        for (;;) {
            j = (j + 1) & ps->tabmask;
            if (!ps->tab[j]) {
                ps->tabn--;
                return;
            }
            uint32_t k = home(ps, ps->b[ps->tab[j] - 1].hash);
            int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
            if (!stays)
                break;
        }
        ps->tab[i] = ps->tab[j];
        i = j;
    }
}

/* ---- cached blocks ---- */

static int32_t block_new(eng_pstore *ps, uint64_t h)
{
    int32_t idx;
    if (ps->freeb >= 0) {
        idx = ps->freeb;
        ps->freeb = ps->b[idx].qnode;
    } else {
        if (ps->nb == ps->capb) {
            ps->capb = ps->capb ? 2 * ps->capb : 1024;
            ps->b = sim_xrealloc(ps->b, (size_t)ps->capb * sizeof *ps->b);
        }
        idx = ps->nb++;
    }
    if (2 * (ps->tabn + 1) > (int64_t)ps->tabmask + 1 || !ps->tab)
        tab_grow(ps);
    ps->b[idx] = (eng_pblock){h, 1, -1};
    tab_put(ps, idx);
    ps->inuse++;
    ps->refs++;
    if (ps->off)
        eng_off_computed(ps->off, h);
    return idx;
}

/* MODEL: vLLM block_pool._maybe_evict_cached_block: a block taken from the free queue loses its
 * hash (SGLang evicts its radix tree's least recently used unreferenced leaves; reverse-order
 * frees keep every cached block behind its cached descendants in the queue, so evicting from the
 * head evicts leaves first here too) */
static void evict(eng_pstore *ps, int32_t idx)
{
    if (ps->off)
        eng_off_evicted(ps->off, ps->b[idx].hash);
    q_unlink(ps, ps->b[idx].qnode);
    tab_erase(ps, idx);
    ps->b[idx].ref = -1;
    ps->b[idx].qnode = ps->freeb;
    ps->freeb = idx;
    ps->evictions++;
}

void eng_ps_take(eng_pstore *ps, int64_t n)
{
    while (n > 0) {
        int32_t i = ps->qhead;
        SIM_ASSERT(NULL, i >= 0);
        eng_qnode *q = &ps->q[i];
        if (q->blk >= 0) {
            evict(ps, q->blk);
            n--;
            continue;
        }
        int64_t k = q->count < n ? q->count : n;
        q->count -= k;
        n -= k;
        if (q->count == 0)
            q_unlink(ps, i);
    }
}

void eng_ps_give(eng_pstore *ps, int64_t n)
{
    q_push(ps, -1, n);
}

void eng_kv_pin(eng_kv *kv, int32_t idx)
{
    eng_pstore *ps = kv->ps;
    eng_pblock *b = &ps->b[idx];
    if (b->ref == 0) {
        /* MODEL: vLLM BlockPool.touch: a cached block with no user leaves the free queue */
        q_unlink(ps, b->qnode);
        b->qnode = -1;
        kv->used++;
        ps->inuse++;
    }
    b->ref++;
    ps->refs++;
}

void eng_kv_unpin(eng_kv *kv, int32_t idx)
{
    eng_pstore *ps = kv->ps;
    ps->refs--;
    if (--ps->b[idx].ref == 0) {
        ps->inuse--;
        kv->used--;
        q_push(ps, idx, 1);
    }
}

int32_t eng_kv_insert(eng_kv *kv, uint64_t h)
{
    if (eng_kv_nfree(kv) < 1)
        return -1;
    eng_kv_take(kv, 1); /* the least recently used free block holds it now */
    return block_new(kv->ps, h);
}

/* ---- a request's content and block hashes ---- */

/* The cached block holding rq's block j: the one the last match remembered if it still holds
 * that content, else a table lookup. */
static inline int32_t find_block(const eng_pstore *ps, const eng_pcreq *pc, int32_t j)
{
    if (j < pc->nmemo) {
        int32_t idx = pc->blk[j];
        if (idx >= 0 && idx < ps->nb && ps->b[idx].ref >= 0 && ps->b[idx].hash == pc->bh[j])
            return idx;
    }
    return eng_ps_find(ps, pc->bh[j]);
}

void eng_pcreq_reset(eng_pcreq *pc)
{
    pc->nseg = 0;
    pc->uid = pc->out_id = 0;
    pc->nbh = pc->cur_seg = pc->cur_off = 0;
    pc->nblk = pc->nident = pc->nmemo = 0;
}

void eng_pcreq_free(eng_pcreq *pc)
{
    if (!pc)
        return;
    free(pc->seg);
    free(pc->bh);
    free(pc->blk);
    free(pc);
}

/* Segment k of rq's content (its prompt's segments, then its output): 0 past the end. */
static int seg_at(const eng_request *rq, int32_t k, uint64_t *id, int32_t *len)
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

/* Computes the chained hashes of rq's first n full blocks (n within its content). */
static void ensure_hashes(const eng_kv *kv, eng_request *rq, int32_t n)
{
    eng_pcreq *pc = rq->pc;
    if (n <= pc->nbh)
        return;
    if (n > pc->capbh) {
        pc->capbh = n > 2 * pc->capbh ? n : 2 * pc->capbh;
        pc->bh = sim_xrealloc(pc->bh, (size_t)pc->capbh * sizeof *pc->bh);
    }
    for (int32_t j = pc->nbh; j < n; j++) {
        /* MODEL: vLLM kv_cache_utils.hash_block_tokens: a block's hash covers the hash of the
         * block before it and its own tokens (here: the content pieces it is made of) */
        uint64_t acc = j ? pc->bh[j - 1] : UINT64_C(0x6c6c6d73696d5043);
        int32_t need = kv->block_size;
        while (need > 0) {
            uint64_t id = 0;
            int32_t len = need;
            if (!seg_at(rq, pc->cur_seg, &id, &len))
                SIM_CHECK(NULL, !"block hashes asked for beyond the request's content");
            int32_t take = len - pc->cur_off < need ? len - pc->cur_off : need;
            acc = mix64(acc ^ mix64(id ^ ((uint64_t)pc->cur_off << 32) ^ (uint64_t)take));
            pc->cur_off += take;
            need -= take;
            if (pc->cur_off == len) {
                pc->cur_seg++;
                pc->cur_off = 0;
            }
        }
        pc->bh[j] = acc;
    }
    pc->nbh = n;
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

void eng_kv_register(eng_kv *kv, eng_request *rq, int64_t tokens)
{
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    if (!ps || !pc)
        return;
    int64_t n = tokens / kv->block_size;
    if (n > rq->kv_blocks)
        n = rq->kv_blocks;
    if (n > content_blocks(kv, rq))
        n = content_blocks(kv, rq);
    if (n <= pc->nblk)
        return;
    ensure_hashes(kv, rq, (int32_t)n);
    ensure_table(pc, (int32_t)n);
    for (int32_t j = pc->nblk; j < n; j++) {
        /* MODEL: vLLM block_pool.cache_full_blocks: a full block gets its hash and enters the
         * table; a block whose hash is already there (computed twice at once) stays anonymous
         * here (vLLM keeps both; the first serves the hits) */
        if (eng_ps_find(ps, pc->bh[j]) >= 0) {
            pc->blk[j] = -1;
            continue;
        }
        pc->blk[j] = block_new(ps, pc->bh[j]);
        pc->nident++;
    }
    pc->nblk = (int32_t)n;
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
    if (keep_tokens > 0)
        eng_kv_register(kv, rq, keep_tokens);
    /* MODEL: vLLM KVCacheManager.free: blocks are freed in reverse order so that the tail
     * blocks are evicted first */
    eng_kv_give(kv, rq->kv_blocks - pc->nblk);
    for (int32_t j = pc->nblk - 1; j >= 0; j--) {
        int32_t idx = pc->blk[j];
        if (idx < 0) {
            eng_kv_give(kv, 1);
            continue;
        }
        eng_pblock *b = &ps->b[idx];
        ps->refs--;
        if (--b->ref == 0) {
            ps->inuse--;
            kv->used--;
            q_push(ps, idx, 1);
        }
    }
    pc->nblk = pc->nident = pc->nmemo = 0;
    rq->kv_blocks = 0;
}

/* ---- set-up and checks ---- */

void eng_kv_fini(eng_kv *kv)
{
    eng_pstore *ps = kv->ps;
    if (!ps)
        return;
    free(ps->b);
    free(ps->tab);
    free(ps->q);
    free(ps);
    kv->ps = NULL;
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
    int64_t free_blocks = 0, cached = 0;
    for (int32_t i = ps->qhead; i >= 0; i = ps->q[i].next) {
        const eng_qnode *q = &ps->q[i];
        free_blocks += q->count;
        if (q->blk >= 0 && (ps->b[q->blk].ref != 0 || ps->b[q->blk].qnode != i))
            cached = -1;
    }
    if (free_blocks != kv->total - kv->used || cached < 0) {
        snprintf(buf, len, "replica %d: free queue holds %lld blocks, %lld are free", replica,
                 (long long)free_blocks, (long long)(kv->total - kv->used));
        return -1;
    }
    return 0;
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
     * keeps no block past its window to share. Their prefix cache stays off. */
    if (mode == ENG_PC_OFF || kv->lay.state > 0 || kv->lay.fm == 0)
        return;
    eng_pstore *ps = sim_xcalloc(1, sizeof *ps);
    ps->mode = mode;
    ps->freeb = ps->qfree = ps->qhead = ps->qtail = -1;
    kv->ps = ps;
    q_push(ps, -1, kv->total); /* every block starts free, never used */
}

int eng_prefix_cache_mode(const eng_replica *r)
{
    return r->kv.ps ? r->kv.ps->mode : ENG_PC_OFF;
}

int32_t eng_prefix_match(eng_replica *r, eng_request *rq, int64_t *evictable)
{
    eng_kv *kv = &r->kv;
    eng_pstore *ps = kv->ps;
    if (evictable)
        *evictable = 0;
    if (!ps || !rq->pc || !rq->pc->out_id || rq->kv_blocks > 0)
        return 0;
    /* MODEL: vLLM KVCacheManager.get_computed_blocks: when every token hits, the last one is
     * computed again for its logits: at most num_tokens - 1 tokens, in whole blocks */
    int32_t most = (int32_t)(((int64_t)rq->prefill_target - 1) / kv->block_size);
    if (most <= 0)
        return 0;
    ensure_hashes(kv, rq, most);
    eng_pcreq *pc = rq->pc;
    ensure_table(pc, most);
    int32_t j = 0;
    int64_t ev = 0;
    for (; j < most; j++) {
        int32_t idx = find_block(ps, pc, j);
        if (idx < 0)
            break;
        pc->blk[j] = idx;
        ev += ps->b[idx].ref == 0;
    }
    pc->nmemo = j;
    if (evictable)
        *evictable = ev;
    return j * kv->block_size;
}

void eng_prefix_attach(eng_replica *r, eng_request *rq, int32_t hit)
{
    eng_kv *kv = &r->kv;
    eng_pstore *ps = kv->ps;
    eng_pcreq *pc = rq->pc;
    int32_t n = hit / kv->block_size;
    SIM_CHECK(r->e->ctx, hit % kv->block_size == 0 && rq->kv_blocks == 0 &&
                             (n == 0 || (ps && pc && pc->nblk == 0 && n <= pc->nbh)));
    if (n == 0)
        return;
    ensure_table(pc, n);
    for (int32_t j = 0; j < n; j++) {
        int32_t idx = find_block(ps, pc, j);
        SIM_CHECK(r->e->ctx, idx >= 0);
        eng_kv_pin(kv, idx);
        pc->blk[j] = idx;
    }
    pc->nblk = pc->nident = n;
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
    /* MODEL: vLLM get_num_blocks_to_allocate counts the hit's blocks no request holds: touching
     * them takes them out of the free queue */
    for (int32_t j = 0; j < n; j++)
        need += kv->ps->b[find_block(kv->ps, rq->pc, j)].ref == 0;
    return need;
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

int64_t eng_prefix_evictions(const eng_replica *r)
{
    return r->kv.ps ? r->kv.ps->evictions : 0;
}

int64_t eng_prefix_cached_blocks(const eng_replica *r)
{
    const eng_pstore *ps = r->kv.ps;
    return ps ? ps->tabn : 0;
}
