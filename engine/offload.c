/*
 * offload.c: KV offload tiers behind a replica's GPU prefix cache: host memory, local SSD and a
 * remote store, as vLLM's OffloadingConnector (vllm/distributed/kv_transfer/kv_connector/v1/
 * offloading_connector.py with vllm/v1/kv_offload/), LMCache (local CPU, local disk, remote
 * backends), NVIDIA Dynamo's KV block manager (G2 host, G3 disk, G4 remote) and Mooncake's store
 * keep KV blocks the GPU no longer holds.
 *
 * A tier holds copies of blocks by their content hash (the GPU cache's chained hash), up to its
 * capacity, and evicts its least recently used block, which goes down to the next tier when
 * there is one. A GPU block reaches the first tier when the GPU cache evicts it (write-back) or
 * as soon as it is computed (write-through). Each replica reaches each tier through one channel
 * (its GPUs' links to the tier), which carries that tier's writes and loads in turn (FIFO): a
 * load queued behind write-downs waits for them, and concurrent loads wait for each other.
 *
 * A request that reaches a replica looks up the blocks of its prompt past those the GPU cache
 * holds, block after block, in the fastest tier that has each, stopping at the first block no
 * tier has (a prefix). When there are such blocks, they are loaded before the request reaches
 * the replica's policy: its load time is on its path to the first token, and the link's queue
 * is in it. Once loaded, the blocks enter the GPU cache unreferenced at the free queue's tail
 * (with the GPU-cached part of the prefix refreshed first), where the policy's prefix match
 * finds them.
 *
 * Invariants (eng_off_check): a tier holds at most its capacity; its LRU list and its table
 * hold the same blocks. Memory: one node per block a tier holds; nothing per token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "otier.h"

/* ---------------- settings ---------------- */

const char *eng_tier_kind_name(eng_tier_kind k)
{
    static const char *const names[ENG_TIER_KINDS] = {"cpu", "ssd", "remote"};
    return (unsigned)k < ENG_TIER_KINDS ? names[k] : "?";
}

const eng_key eng_tier_keys[] = {
    {"kind", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL, "cpu|ssd|remote",
     "host memory, local NVMe, or a store every replica shares", ENG_KEY_AT(eng_tier_config, kind)},
    {"capacity_gb", ENG_KEY_NUM, 0, 0, INFINITY, "GB", "0", NULL,
     "what the tier holds: a replica's (remote: the deployment's); 0 is unbounded",
     ENG_KEY_AT(eng_tier_config, capacity_gb)},
    {"bandwidth_gb_s", ENG_KEY_NUM, ENG_KEY_CODE | ENG_KEY_LO_OPEN, 0, INFINITY, "GB/s",
     "(cpu: the catalog's host link; required for ssd and remote)", NULL,
     "per GPU, each way, between the tier and the GPUs",
     ENG_KEY_AT(eng_tier_config, bandwidth_gb_s)},
    {"latency_us", ENG_KEY_NUM, 0, 0, 1e9, "us", "0", NULL, "added to every load from the tier",
     ENG_KEY_AT(eng_tier_config, latency_us)},
    ENG_KEY_END};

const eng_key eng_offload_keys[] = {
    {"tiers", ENG_KEY_MAP, ENG_KEY_LIST | ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "a list of 1 to 3 {kind, capacity_gb, bandwidth_gb_s, latency_us}, fastest first",
     ENG_KEY_NOWHERE, .sub = eng_tier_keys},
    {"policy", ENG_KEY_ENUM, 0, 0, 0, "", "write_back", "write_back|write_through",
     "when a GPU block goes down to the first tier: when the GPU cache evicts it, or once computed",
     ENG_KEY_AT(eng_offload_config, policy)},
    {"min_load_tokens", ENG_KEY_INT, 0, 0, INT32_MAX, "tokens", "0", NULL,
     "hits in the tiers shorter than this are recomputed, not loaded (SGLang HiCache: 10)",
     ENG_KEY_AT(eng_offload_config, min_load_tokens)},
    ENG_KEY_END};

/* ---------------- a tier: table and LRU list ---------------- */

/* A hash's 32-bit tag: every bit of the hash folded in; the table keeps the tag beside the node
 * (8 bytes a slot), the node the whole hash. */
static inline uint32_t tag_of(uint64_t h)
{
    return (uint32_t)(h ^ (h >> 32));
}

static inline uint32_t home(const eng_otier *t, uint32_t tag)
{
    return tag & t->mask;
}

/* The node holding hash h, or -1. */
static int32_t find(const eng_otier *t, uint64_t h)
{
    if (!t->tab)
        return -1;
    uint32_t tag = tag_of(h);
    for (uint32_t i = home(t, tag);; i = (i + 1) & t->mask) {
        const eng_oslot *v = &t->tab[i];
        if (v->node == 0)
            return -1;
        if (v->tag == tag && t->nd[v->node - 1].hash == h)
            return v->node - 1;
    }
}

static void slot_put(eng_otier *t, uint32_t tag, int32_t idx)
{
    uint32_t i = home(t, tag);
    while (t->tab[i].node)
        i = (i + 1) & t->mask;
    t->tab[i] = (eng_oslot){tag, idx + 1};
}

static void grow_table(eng_otier *t)
{
    eng_oslot *old = t->tab;
    uint32_t oldcap = old ? t->mask + 1 : 0, cap = oldcap ? 2 * oldcap : 1024;
    t->tab = sim_xcalloc(cap, sizeof *t->tab);
    t->mask = cap - 1;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].node)
            slot_put(t, old[i].tag, old[i].node - 1);
    free(old);
}

/* Removes node idx from the table (backward-shift deletion keeps probe runs whole). */
static void slot_erase(eng_otier *t, int32_t idx)
{
    uint32_t i = home(t, tag_of(t->nd[idx].hash));
    while (t->tab[i].node != idx + 1)
        i = (i + 1) & t->mask;
    for (uint32_t j = i;;) {
        j = (j + 1) & t->mask;
        if (!t->tab[j].node)
            break;
        uint32_t k = home(t, t->tab[j].tag);
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue; /* its home is past the hole: it stays */
        t->tab[i] = t->tab[j];
        i = j;
    }
    t->tab[i].node = 0;
}

static void lru_unlink(eng_otier *t, int32_t i)
{
    eng_onode *n = &t->nd[i];
    if (n->prev >= 0)
        t->nd[n->prev].next = n->next;
    else
        t->head = n->next;
    if (n->next >= 0)
        t->nd[n->next].prev = n->prev;
    else
        t->tail = n->prev;
}

static void lru_append(eng_otier *t, int32_t i)
{
    t->nd[i].prev = t->tail;
    t->nd[i].next = -1;
    if (t->tail >= 0)
        t->nd[t->tail].next = i;
    else
        t->head = i;
    t->tail = i;
}

/* MODEL: vLLM's LRUOffloadingManager.touch (vllm/v1/kv_offload/lru_manager.py): a block a lookup
 * finds becomes the most recently used */
static void touch(eng_otier *t, int32_t i)
{
    lru_unlink(t, i);
    lru_append(t, i);
}

static int32_t node_new(eng_otier *t, uint64_t h, int64_t ready)
{
    int32_t i;
    if (t->freen >= 0) {
        i = t->freen;
        t->freen = t->nd[i].next;
    } else {
        if (t->nn == t->capn) {
            int64_t want = t->capn ? 2 * (int64_t)t->capn : 1024;
            t->capn = (int32_t)(want < t->cap ? want : t->cap); /* never past its capacity */
            t->nd = sim_xrealloc(t->nd, (size_t)t->capn * sizeof *t->nd);
        }
        i = t->nn++;
    }
    if (!t->tab || 2 * (t->n + 1) > (int64_t)t->mask + 1)
        grow_table(t);
    t->nd[i] = (eng_onode){h, ready, -1, -1};
    slot_put(t, tag_of(h), i);
    lru_append(t, i);
    t->n++;
    return i;
}

static void node_free(eng_otier *t, int32_t i)
{
    slot_erase(t, i);
    lru_unlink(t, i);
    t->nd[i].next = t->freen;
    t->freen = i;
    t->n--;
}

/* ---------------- writes ---------------- */

/* The replica's channel to tier k carries `blocks` blocks from now (or when it is free): the time
 * the last one has crossed. */
static int64_t carry(eng_offload *o, int k, int64_t blocks, int64_t now)
{
    int64_t start = o->busy[k] > now ? o->busy[k] : now;
    o->busy[k] = start + (int64_t)ceil((double)blocks * o->block_bytes / o->bw[k]);
    return o->busy[k];
}

static void put(eng_offload *o, int k, uint64_t h, int64_t now);

/* Tier k makes room for one block: its least recently used goes down a tier (or is dropped from
 * the last). MODEL: vLLM LRUOffloadingManager.prepare_store evicts the least recently used
 * blocks; Dynamo's KVBM and LMCache's hierarchy write a block evicted from host memory down to
 * disk and then to the remote store. */
static void make_room(eng_offload *o, int k, int64_t now)
{
    eng_otier *t = o->tier[k];
    while (t->n >= t->cap) {
        int32_t v = t->head;
        uint64_t h = t->nd[v].hash;
        node_free(t, v);
        t->evicted_blocks++;
        if (k + 1 < o->ntiers)
            put(o, k + 1, h, now);
    }
}

/* Block h is written to tier k unless it is there already (then it is refreshed). MODEL: vLLM
 * prepare_store skips blocks already stored; a block can be loaded once its store completes
 * (BlockStatus.is_ready). */
static void put(eng_offload *o, int k, uint64_t h, int64_t now)
{
    eng_otier *t = o->tier[k];
    int32_t i = find(t, h);
    if (i >= 0) {
        touch(t, i);
        return;
    }
    if (t->cap <= 0)
        return;
    make_room(o, k, now);
    node_new(t, h, carry(o, k, 1, now));
    t->written_blocks++;
}

void eng_off_evicted(eng_offload *o, uint64_t h)
{
    /* MODEL: SGLang HiRadixCache.evict under write_back backs an evicted node up to host memory
     * (write_backup) before freeing it; under write_through it is there already */
    if (o->policy == ENG_OFFLOAD_WRITE_BACK)
        put(o, 0, h, sim_now(o->r->e->ctx));
}

void eng_off_computed(eng_offload *o, uint64_t h)
{
    /* MODEL: vLLM OffloadingConnector stores each request's new full blocks after the step that
     * computed them (build_connector_meta: store jobs per request); LMCache stores a request's KV
     * as it is computed; SGLang HiCache write_through backs up each inserted node */
    if (o->policy == ENG_OFFLOAD_WRITE_THROUGH)
        put(o, 0, h, sim_now(o->r->e->ctx));
}

/* ---------------- loads ---------------- */

/* The fastest tier holding block h, ready by now, or -1 (*node gets its node). */
static int tier_of(const eng_offload *o, uint64_t h, int64_t now, int32_t *node)
{
    for (int k = 0; k < o->ntiers; k++) {
        int32_t i = find(o->tier[k], h);
        if (i >= 0 && o->tier[k]->nd[i].ready <= now) {
            *node = i;
            return k;
        }
    }
    return -1;
}

/* The blocks of rq's prompt that the tiers hold past the GPU cache's hit (g blocks), up to most,
 * counted per tier into per[]; each found block is refreshed in its tier. Returns how many. */
static int32_t look_up(eng_offload *o, const uint64_t *bh, int32_t g, int32_t most, int64_t now,
                       int64_t per[ENG_MAX_TIERS])
{
    int32_t j = g;
    for (; j < most; j++) {
        int32_t node;
        int k = tier_of(o, bh[j], now, &node);
        if (k < 0)
            break;
        touch(o->tier[k], node);
        per[k]++;
    }
    return j - g;
}

static int32_t pin_prefix(eng_replica *r, eng_request *rq, int32_t g, int32_t n);

/* The loaded blocks are in: the reservation becomes them, pinned with the GPU-cached part of the
 * prefix before them; a block the GPU lost meanwhile ends the usable prefix. */
static void on_loaded(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_replica *r = obj;
    eng_request *rq = (eng_request *)(intptr_t)arg;
    eng_offload *o = r->off;
    eng_kv *kv = &r->kv;
    SIM_ASSERT(ctx, rq->status == ENG_RQ_WAITING);
    kv->held -= rq->off_blocks;
    o->reserved -= rq->off_blocks;
    eng_kv_give(kv, rq->off_blocks);
    pin_prefix(r, rq, rq->off_first, rq->off_first + rq->off_blocks);
    if (!r->busy)
        eng_replica_wake_at(r, sim_now(ctx));
}

/* The loads of per[k] blocks from each tier k over r's channels from now: when the last is in,
 * counted as one load. */
static int64_t load_blocks(eng_replica *r, const int64_t per[ENG_MAX_TIERS], int64_t now)
{
    eng_offload *o = r->off;
    int64_t done = now;
    for (int k = 0; k < o->ntiers; k++) {
        if (!per[k])
            continue;
        int64_t t = carry(o, k, per[k], now) + o->lat[k];
        done = t > done ? t : done;
        o->tier[k]->read_blocks += per[k];
        o->tier[k]->hit_blocks += per[k];
    }
    r->e->off_loads++;
    sim_samples_add(&r->e->off_load, (double)(done - now) / 1e6);
    return done;
}

/* Starts loading rq's blocks [g, g + n), counted per tier in per[], into n reserved blocks. */
static void start_load(eng_replica *r, eng_request *rq, int32_t g, int32_t n,
                       const int64_t per[ENG_MAX_TIERS], int64_t now)
{
    eng_offload *o = r->off;
    eng_engine *e = r->e;
    int64_t done = load_blocks(r, per, now);
    eng_kv_take(&r->kv, n);
    r->kv.held += n;
    o->reserved += n;
    rq->off_first = g;
    rq->off_blocks = n;
    rq->off_state = ENG_OFF_LOADING;
    sim_schedule(e->ctx, done, ENG_PRIO_XFER, on_loaded, r, (int64_t)(intptr_t)rq);
}

/* Pins rq's first n blocks in the GPU cache (cached ones, or new ones for the hashes the tiers
 * hold past the first g); returns how many it pinned (a block lost ends the prefix). */
static int32_t pin_prefix(eng_replica *r, eng_request *rq, int32_t g, int32_t n)
{
    eng_kv *kv = &r->kv;
    const uint64_t *bh;
    int32_t got = eng_request_block_hashes(r, rq, n, &bh), j = 0;
    SIM_ASSERT(r->e->ctx, got == n);
    for (; j < got; j++) {
        int32_t idx = eng_ps_find(kv->ps, bh[j]);
        if (idx >= 0)
            eng_kv_pin(kv, idx);
        else if (j < g || eng_kv_insert(kv, bh[j]) < 0)
            break;
    }
    rq->off_pinned = j;
    r->off->pins += j;
    rq->off_state = ENG_OFF_PINNED;
    return j;
}

/* The blocks of rq's prompt the tiers hold past the GPU cache's hit (*g blocks), counted per
 * tier into per[] and refreshed there; 0 when they are fewer than min_load_tokens.
 * MODEL: vLLM's scheduler asks the connector for the tokens past the GPU cache's hit when it
 * reaches a waiting request (get_num_new_matched_tokens); the offloading manager counts the
 * leading blocks it has ready and stops at the first it has not (LRUOffloadingManager.lookup);
 * the last prompt token is always computed (get_computed_blocks). SGLang HiRadixCache.load_back
 * refuses loads shorter than load_back_threshold (10 tokens) and recomputes them; vLLM's
 * OffloadingConnector and LMCache load every hit. */
static int32_t past_hit(eng_replica *r, eng_request *rq, int64_t now, int32_t *g,
                        int64_t per[ENG_MAX_TIERS])
{
    int32_t bs = r->kv.block_size, most = (int32_t)(((int64_t)rq->prefill_target - 1) / bs);
    const uint64_t *bh;
    *g = eng_prefix_match(r, rq, NULL) / bs;
    most = eng_request_block_hashes(r, rq, most, &bh);
    if (*g >= most)
        return 0;
    int32_t n = look_up(r->off, bh, *g, most, now, per);
    return (int64_t)n * bs < r->off->min_load_tokens ? 0 : n;
}

int32_t eng_kv_onboard(eng_replica *r, eng_request *rq)
{
    eng_offload *o = r->off;
    if (!o || o->mode == ENG_OFF_ASYNC || rq->off_state != ENG_OFF_NONE)
        return 0;
    int64_t now = sim_now(r->e->ctx), per[ENG_MAX_TIERS] = {0};
    int32_t g;
    /* MODEL: SGLang HiRadixCache.match_prefix finds the host-held continuation of the device
     * prefix (host_hit_length) and init_load_back allocates device memory for it, evicting if it
     * must, and loads it unless it is shorter than load_back_threshold; when the memory cannot be
     * had the tokens are recomputed. TensorRT-LLM's BlockManager reuses a block found in the
     * secondary (host) pool by copying it back into a primary block (onboardBlock) as it
     * schedules the context request. */
    int32_t n = past_hit(r, rq, now, &g, per);
    if (n == 0 || n + eng_decode_blocks_needed(r) > eng_kv_nfree(&r->kv))
        return 0;
    rq->off_ready = load_blocks(r, per, now);
    return pin_prefix(r, rq, g, g + n) - g;
}

/* MODEL: TensorRT-LLM's onboardBlock copies a block from the host pool on the forward pass's
 * stream ahead of the pass, so the step starts once its onboarded blocks are in. SGLang HiCache
 * loads on a stream of its own, layer by layer, and each layer of the pass waits for its own
 * layer's KV (HiCacheController's layer_done_counter, waited on per layer by the KV pool): the
 * pass ends a layer's compute after the load does, at the earliest. */
int64_t eng_off_step_end(const eng_replica *r, int64_t gpu_start, int64_t gpu)
{
    const eng_offload *o = r->off;
    int64_t ready = 0;
    if (o->mode == ENG_OFF_ASYNC)
        return gpu_start + gpu;
    for (int32_t i = 0; i < r->batch.nchunks; i++) {
        int64_t t = r->batch.chunks[i].rq->off_ready;
        ready = t > ready ? t : ready;
    }
    if (ready <= gpu_start)
        return gpu_start + gpu;
    if (o->mode == ENG_OFF_ONBOARD)
        return ready + gpu;
    int64_t last = ready + gpu / (o->layers > 0 ? o->layers : 1);
    return last > gpu_start + gpu ? last : gpu_start + gpu;
}

int eng_off_gate(eng_replica *r, eng_request *rq)
{
    eng_offload *o = r->off;
    if (!o || o->mode != ENG_OFF_ASYNC || rq->off_state == ENG_OFF_PINNED)
        return 0;
    if (rq->off_state == ENG_OFF_LOADING)
        return 1;
    int64_t now = sim_now(r->e->ctx), per[ENG_MAX_TIERS] = {0};
    int32_t g, n = past_hit(r, rq, now, &g, per);
    if (n == 0)
        return 0;
    /* MODEL: vLLM allocates the blocks of the external hit (allocate_slots with
     * num_external_computed_tokens) or leaves the request waiting when they do not fit; the
     * load is asynchronous: the request waits in WAITING_FOR_REMOTE_KVS while others run */
    if (n + eng_decode_blocks_needed(r) > eng_kv_nfree(&r->kv))
        return 1; /* the running requests' next step comes first */
    start_load(r, rq, g, n, per, now);
    return 1;
}

int eng_kv_loading(eng_replica *r, eng_request *rq)
{
    if (!r->off)
        return 0;
    eng_off_gate(r, rq);
    return rq->off_state == ENG_OFF_LOADING;
}

void eng_off_release(eng_replica *r, eng_request *rq)
{
    if (!r->off || rq->off_state == ENG_OFF_NONE)
        return;
    SIM_CHECK(r->e->ctx, rq->off_state == ENG_OFF_PINNED); /* never admitted while loading */
    const uint64_t *bh;
    int32_t n = eng_request_block_hashes(r, rq, rq->off_pinned, &bh);
    SIM_ASSERT(r->e->ctx, n == rq->off_pinned);
    for (int32_t j = 0; j < n; j++)
        eng_kv_unpin(&r->kv, eng_ps_find(r->kv.ps, bh[j]));
    r->off->pins -= n;
    rq->off_state = ENG_OFF_NONE;
    rq->off_pinned = rq->off_first = rq->off_blocks = 0;
}

/* ---------------- set-up ---------------- */

static eng_otier *tier_new(eng_tier_kind kind, int64_t cap)
{
    eng_otier *t = sim_xcalloc(1, sizeof *t);
    t->kind = kind;
    t->cap = cap;
    t->freen = t->head = t->tail = -1;
    return t;
}

static void tier_free(eng_otier *t)
{
    if (t)
        SIM_FREE_ALL(t->nd, t->tab, t);
}

/* otier.h: one tier's store on its own. */
eng_otier *eng_otier_new(int64_t cap)
{
    SIM_CHECK(NULL, cap >= 1);
    return tier_new(ENG_TIER_CPU, cap);
}

void eng_otier_free(eng_otier *t)
{
    tier_free(t);
}

uint32_t eng_otier_tag(uint64_t h)
{
    return tag_of(h);
}

int32_t eng_otier_find(const eng_otier *t, uint64_t h)
{
    return find(t, h);
}

int32_t eng_otier_add(eng_otier *t, uint64_t h)
{
    SIM_CHECK(NULL, find(t, h) < 0 && t->n < t->cap);
    return node_new(t, h, 0);
}

int32_t eng_otier_oldest(const eng_otier *t)
{
    return t->head;
}

void eng_otier_remove(eng_otier *t, int32_t i)
{
    SIM_CHECK(NULL, i >= 0 && i < t->nn && find(t, t->nd[i].hash) == i);
    node_free(t, i);
}

int64_t eng_otier_count(const eng_otier *t)
{
    return t->n;
}

/* MODEL: the host tier's default link is the catalog's host link per GPU (PCIe; NVLink-C2C on
 * Grace parts), the one vLLM's and SGLang's host copies cross; a tier's bandwidth is per GPU,
 * and a replica's GPUs move their shards of a block in parallel */
/* How pool p's policy brings offloaded KV back (*mode), or a refusal of what its engine does
 * not do. */
static int offload_mode(const eng_pool *p, const eng_offload_config *oc, int *mode, sim_err *err)
{
    const char *name = p->ops->name;
    /* MODEL: vLLM V1 loads a request's offloaded KV asynchronously while the requests behind it
     * run (WAITING_FOR_REMOTE_KVS); SGLang HiCache (init_load_back in PrefillAdder.add_one_req)
     * and TensorRT-LLM's host cache (onboardBlock) bring it back within the step that admits the
     * request */
    *mode = !strcmp(name, "vllm")     ? ENG_OFF_ASYNC
            : !strcmp(name, "sglang") ? ENG_OFF_LAYERWISE
            : !strcmp(name, "trtllm") ? ENG_OFF_ONBOARD
                                      : -1;
    if (*mode < 0)
        return sim_errf(err,
                        "kv_offload is modelled for schedulers vllm (V1), sglang (HiCache) and "
                        "trtllm (its host cache); %s has no offload tier to follow",
                        name);
    if (*mode == ENG_OFF_ASYNC)
        return 0;
    /* MODEL: TensorRT-LLM's KV cache has one secondary pool, host memory
     * (KvCacheConfig.host_cache_size), which takes a primary block when it is evicted
     * (offloadBlock from getFreeBlock): write-back to one host tier. SGLang HiCache's host tier
     * takes write_back or write_through (--hicache-write-policy; write_through_selective
     * writes a block through once it is hit often enough, not modelled); its storage backends
     * (L3: file, mooncake, hf3fs) prefetch into the host tier before a request is scheduled
     * (prefetch policies best_effort, wait_complete, timeout), not modelled yet */
    if (oc->ntiers > 1 || oc->tier[0].kind != ENG_TIER_CPU)
        return sim_errf(err,
                        "kv_offload with scheduler %s: one cpu tier only (%s); its %s tier is "
                        "not modelled",
                        name,
                        *mode == ENG_OFF_ONBOARD ? "TensorRT-LLM's secondary pool is host memory"
                                                 : "SGLang HiCache's host tier",
                        *mode == ENG_OFF_ONBOARD ? "disk or remote"
                                                 : "storage backends' prefetch into the host");
    if (*mode == ENG_OFF_ONBOARD && oc->policy == ENG_OFFLOAD_WRITE_THROUGH)
        return sim_errf(err, "kv_offload.policy write_through with scheduler trtllm: TensorRT-LLM "
                             "offloads a block to host memory when it is evicted (write_back)");
    return 0;
}

static double tier_bw(const eng_pool *p, const eng_tier_config *tc)
{
    double per_gpu = tc->bandwidth_gb_s > 0 ? tc->bandwidth_gb_s * 1e9 : p->cfg.gpu.pcie_bw;
    return per_gpu * p->plan.gpus / 1e9;
}

int eng_off_init(eng_engine *e, sim_err *err)
{
    const eng_offload_config *oc = &e->cfg.offload;
    if (oc->ntiers == 0)
        return 0;
    sim_samples_init(&e->off_load);
    if (e->pd)
        return sim_errf(err, "kv_offload with prefill and decode pools is not modelled yet");
    if (e->cfg.fleet.autoscale.enabled)
        return sim_errf(err, "kv_offload with autoscale is not modelled yet");
    eng_pool *p = &e->pools[0];
    if (!p->reps[0].kv.ps)
        return sim_errf(err,
                        "kv_offload keeps blocks the prefix cache evicts: scheduler %s runs "
                        "without a prefix cache",
                        p->ops->name);
    int mode;
    if (offload_mode(p, oc, &mode, err) != 0)
        return -1;
    e->otiers = sim_xcalloc((size_t)oc->ntiers * (size_t)p->nrep, sizeof *e->otiers);
    eng_otier *shared[ENG_MAX_TIERS] = {0};
    /* a block of the growing layers on every GPU of one attention rank (and of every pipeline
     * stage, each holding its layers' share) */
    double block_bytes = (double)p->plan.block_bytes * p->cfg.tensor_parallel *
                         (p->cfg.pipeline_parallel > 1 ? p->cfg.pipeline_parallel : 1);
    for (int32_t i = 0; i < p->nrep; i++) {
        eng_replica *r = &p->reps[i];
        eng_offload *o = sim_xcalloc(1, sizeof *o);
        o->r = r;
        o->mode = mode;
        o->layers = p->cfg.model.layers;
        o->ntiers = oc->ntiers;
        o->block_bytes = block_bytes;
        o->policy = oc->policy;
        o->min_load_tokens = oc->min_load_tokens;
        for (int k = 0; k < oc->ntiers; k++) {
            const eng_tier_config *tc = &oc->tier[k];
            int64_t cap =
                tc->capacity_gb > 0 ? (int64_t)(tc->capacity_gb * 1e9 / block_bytes) : INT64_MAX;
            o->bw[k] = tier_bw(p, tc);
            o->lat[k] = (int64_t)llround(tc->latency_us * 1e3);
            if (tc->kind == ENG_TIER_REMOTE && shared[k]) {
                o->tier[k] = shared[k];
            } else {
                o->tier[k] = tier_new(tc->kind, cap);
                e->otiers[e->notiers++] = o->tier[k];
                if (tc->kind == ENG_TIER_REMOTE)
                    shared[k] = o->tier[k];
            }
            o->tier[k]->users++;
            if (o->bw[k] <= 0)
                return sim_errf(err, "kv_offload.tiers[%d]: no bandwidth for a %s tier", k,
                                eng_tier_kind_name(tc->kind));
        }
        r->off = o;
        if (r->kv.ps)
            r->kv.ps->off = o;
    }
    return 0;
}

void eng_off_fini(eng_engine *e)
{
    for (int32_t i = 0; i < e->notiers; i++)
        tier_free(e->otiers[i]);
    free(e->otiers);
    e->otiers = NULL;
    e->notiers = 0;
    for (int32_t i = 0; e->reps && i < e->nrep; i++) {
        free(e->reps[i].off);
        e->reps[i].off = NULL;
    }
    if (e->cfg.offload.ntiers > 0)
        sim_samples_free(&e->off_load);
}

/* ---------------- metrics and checks ---------------- */

#define TIER_NAMES(k)                                                                              \
    "kv_offload_" k "_hit_tokens", "kv_offload_" k "_hit_rate", "kv_offload_" k "_write_bytes",    \
        "kv_offload_" k "_read_bytes", "kv_offload_" k "_evicted_blocks",                          \
        "kv_offload_" k "_blocks"

/* eng_off_summary's names, every kind's (eng_tier_kind_name order), then the loads'. */
static const char *const offload_names[] = {TIER_NAMES("cpu"),           TIER_NAMES("ssd"),
                                            TIER_NAMES("remote"),        "kv_offload_loads",
                                            "kv_offload_mean_load_ms",   "kv_offload_p99_load_ms",
                                            "kv_offload_load_ttft_share"};

const char *const *eng_offload_metric_names(int *n)
{
    *n = (int)(sizeof offload_names / sizeof offload_names[0]);
    return offload_names;
}

static int put_metric(eng_metric *out, int n, const char *kind, const char *what, double v)
{
    if (n >= ENG_MAX_METRICS)
        return n;
    snprintf(out[n].name, sizeof out[n].name, "kv_offload_%s%s%s", kind, *kind ? "_" : "", what);
    out[n].value = v;
    return n + 1;
}

int eng_off_summary(const eng_engine *e, eng_metric *out, int n)
{
    if (e->cfg.offload.ntiers == 0)
        return n;
    const eng_offload *o = e->reps[0].off;
    double prompt = (double)e->m.prompt_tokens, bs = e->reps[0].kv.block_size;
    for (int k = 0; k < o->ntiers; k++) {
        int64_t hit = 0, wr = 0, rd = 0, ev = 0, held = 0;
        for (int32_t i = 0; i < e->notiers; i++) {
            const eng_otier *t = e->otiers[i];
            if (t->kind != e->cfg.offload.tier[k].kind)
                continue;
            hit += t->hit_blocks;
            wr += t->written_blocks;
            rd += t->read_blocks;
            ev += t->evicted_blocks;
            held += t->n;
        }
        const char *kind = eng_tier_kind_name(e->cfg.offload.tier[k].kind);
        n = put_metric(out, n, kind, "hit_tokens", (double)hit * bs);
        n = put_metric(out, n, kind, "hit_rate", prompt > 0 ? (double)hit * bs / prompt : 0);
        n = put_metric(out, n, kind, "write_bytes", (double)wr * o->block_bytes);
        n = put_metric(out, n, kind, "read_bytes", (double)rd * o->block_bytes);
        n = put_metric(out, n, kind, "evicted_blocks", (double)ev);
        n = put_metric(out, n, kind, "blocks", (double)held);
    }
    sim_samples *s = (sim_samples *)&e->off_load;
    double ttft_total = sim_samples_mean(&((eng_engine *)e)->m.ttft) * (double)e->m.completed;
    n = put_metric(out, n, "", "loads", (double)e->off_loads);
    n = put_metric(out, n, "", "mean_load_ms", sim_samples_mean(s));
    n = put_metric(out, n, "", "p99_load_ms", sim_samples_percentile(s, 99));
    return put_metric(out, n, "", "load_ttft_share",
                      ttft_total > 0 ? sim_samples_mean(s) * (double)e->off_loads / ttft_total : 0);
}

int eng_off_check(const eng_engine *e, char *buf, size_t len)
{
    for (int32_t i = 0; i < e->notiers; i++) {
        const eng_otier *t = e->otiers[i];
        int64_t walked = 0;
        for (int32_t v = t->head; v >= 0 && walked <= t->n && t->n <= 65536; v = t->nd[v].next)
            walked += find(t, t->nd[v].hash) == v;
        if (t->n > t->cap || t->n < 0 || (t->n <= 65536 && walked != t->n)) {
            snprintf(buf, len, "offload tier %d (%s): %lld blocks, capacity %lld, %lld listed", i,
                     eng_tier_kind_name(t->kind), (long long)t->n, (long long)t->cap,
                     (long long)walked);
            return -1;
        }
    }
    return 0;
}
