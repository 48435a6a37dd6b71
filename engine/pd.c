/*
 * pd.c: disaggregated prefill/decode: a request's way from its prefill replica, over the link
 * (link.c), into its decode replica's cohort; and the configuration of the pools.
 *
 * A request is routed to a prefill replica by the prefill pool's router and prefills there
 * asking for one token. Its KV (the prompt's) then goes to a decode replica picked by the decode
 * pool's router, which reserves the blocks that KV needs before a byte moves; it arrives after
 * the transfer and the link's latency, and joins the decode replica's cohort at that replica's
 * next step, when the client gets the first token. Three disciplines (eng_xfer_mode):
 *
 *  - after the prefill: the decode replica is picked and its KV reserved once the prefill is
 *    done; until then the request keeps its prefill-side KV (so a decode pool out of memory
 *    fills the prefill pool's cache and slows its admissions: backpressure, never a drop);
 *  - layer-wise: the decode replica is picked and its KV reserved when the request arrives,
 *    before its prefill may start; each chunk's KV streams while the chunk computes;
 *  - per chunk: reserved at arrival as layer-wise, but each chunk's KV leaves once the chunk is
 *    computed (so a prompt of one chunk moves after its prefill, as after the prefill).
 *
 * Invariants: a request holds blocks on its prefill replica (rq->kv_blocks, rq->replica) until
 * its KV has arrived, and, from the reservation until then, rq->pd_blocks on its decode replica
 * (counted by eng_check); a decode replica's waiting transfers are admitted in arrival order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

/* ---------------- configuration ---------------- */

/* Pools of a disaggregated pool k (ENG_POOL_PREFILL or ENG_POOL_DECODE): its groups, or 1. */
static int pd_pools(const eng_config *c, int k)
{
    return c->pd.ngroups[k] > 0 ? c->pd.ngroups[k] : 1;
}

int eng_config_pools(const eng_config *c)
{
    return c->pd.enabled     ? pd_pools(c, ENG_POOL_PREFILL) + pd_pools(c, ENG_POOL_DECODE)
           : c->groups.n > 0 ? c->groups.n
                             : 1;
}

int eng_config_decode_pool(const eng_config *c)
{
    return pd_pools(c, ENG_POOL_PREFILL);
}

int eng_config_group(const eng_config *c, int p)
{
    if (!c->pd.enabled)
        return c->groups.n > 0 ? p : -1;
    int d = eng_config_decode_pool(c), k = p >= d;
    if (c->pd.ngroups[k] == 0)
        return -1;
    return k ? c->pd.ngroups[ENG_POOL_PREFILL] + p - d : p;
}

void eng_config_pool(const eng_config *c, int p, eng_config *out)
{
    *out = *c;
    int g = eng_config_group(c, p);
    if (g >= 0)
        out->pool = c->groups.group[g];
    else if (c->pd.enabled)
        out->pool = c->pd.pool[p >= eng_config_decode_pool(c)];
}

/* A prefill or decode pool: the deployment's keys (a pool starts from the deployment's values)
 * and a GPU of its own. */
const eng_key eng_pool_keys[] = {
    {"gpu", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", "(the deployment's)", NULL,
     "the pool's GPU (llmsim list gpus)", .size = 32},
    {"", ENG_KEY_INCLUDE, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_NOWHERE, .sub = eng_deploy_keys},
    {"autoscale", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", "(a fixed pool)", NULL,
     "the pool's replicas follow its load, as Dynamo's planner scales a pool (autoscale.c)",
     ENG_KEY_NOWHERE, .sub = eng_pool_autoscale_keys},
    ENG_KEY_END};

/* MODEL: default latency per transfer, by link: RDMA 2 us (one-way InfiniBand RC latency,
 * ib_send_lat, 0.8-2.3 us for 32 B-4 KB messages: D. Potter, master's thesis, table
 * mtu_performance); PCIe 4.1 us (GPU peer reads over PCIe 5.0, best pair, p2pmark,
 * github.com/lukealonso/p2pmark); NVLink: no measured figure was found, taken as RDMA's. These
 * are the wires'; a transfer library's handshakes and notifications add their own (set
 * kv_transfer.latency_us from a measurement). */
double eng_link_default_latency_us(eng_link_kind k)
{
    return k == ENG_LINK_PCIE ? 4.1 : 2.0;
}

static void set_bandwidth(void *obj, double gb_s)
{
    ((eng_pd_config *)obj)->link_bw = gb_s * 1e9;
}

static void set_latency(void *obj, double us)
{
    ((eng_pd_config *)obj)->latency_ns = us * 1e3;
}

const eng_key eng_kv_transfer_keys[] = {
    {"link", ENG_KEY_ENUM, 0, 0, 0, "", "rdma", "rdma|nvlink|pcie",
     "what the KV crosses: each GPU's NIC, one NVLink domain, or the hosts' PCIe",
     ENG_KEY_AT(eng_pd_config, link)},
    {"bandwidth_gb_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, INFINITY, "GB/s",
     "(the catalog's figure for the link, per GPU)", NULL, "per GPU, each way",
     .set = set_bandwidth},
    {"latency_us", ENG_KEY_NUM, 0, 0, INFINITY, "us", "(2 for rdma and nvlink, 4.1 for pcie)", NULL,
     "added to every transfer", .set = set_latency},
    {"discipline", ENG_KEY_ENUM, 0, 0, 0, "", "after_prefill", "after_prefill|layerwise|per_chunk",
     "when the KV moves: once the prefill is done, layer by layer while it computes, or each "
     "prefill chunk's once that chunk is done (SGLang)",
     ENG_KEY_AT(eng_pd_config, mode)},
    ENG_KEY_END};

const char *eng_link_kind_name(eng_link_kind k)
{
    static const char *const names[ENG_LINK_COUNT] = {"rdma", "nvlink", "pcie"};
    return (unsigned)k < ENG_LINK_COUNT ? names[k] : "?";
}

const char *eng_xfer_mode_name(eng_xfer_mode m)
{
    return m == ENG_XFER_LAYERWISE   ? "layerwise"
           : m == ENG_XFER_PER_CHUNK ? "per_chunk"
                                     : "after_prefill";
}

double eng_link_gpu_bw(const eng_gpu *g, eng_link_kind k)
{
    switch (k) {
    case ENG_LINK_NVLINK:
        return g->link_bw;
    case ENG_LINK_PCIE:
        return g->pcie_bw;
    case ENG_LINK_RDMA:
        return g->nic_bw;
    default:
        SIM_CHECK(NULL, !"a link kind without a bandwidth");
        return 0;
    }
}

/* ---------------- set-up ---------------- */

/* The scenario loader has checked the configuration against the settings tables (kv_transfer's
 * range, each pool's or group's GPU's bandwidth when none is given, the decode policy's
 * pd_join). */
void eng_pd_init(eng_engine *e)
{
    const eng_pd_config *pd = &e->cfg.pd;
    SIM_CHECK(NULL, pd->latency_ns >= 0);
    for (int k = 0; k < e->npools; k++) {
        eng_pool *p = &e->pools[k];
        SIM_CHECK(NULL, p->role == ENG_ROLE_PREFILL || p->ops->pd_join != NULL);
        double bw = pd->link_bw > 0 ? pd->link_bw : eng_link_gpu_bw(&p->cfg.gpu, pd->link);
        SIM_CHECK(NULL, bw > 0);
        p->gpu_bw = bw / 1e9;
        for (int32_t i = 0; i < p->nrep; i++) {
            eng_port *port = &p->reps[i].port;
            port->send = p->role == ENG_ROLE_PREFILL;
            port->cap = p->gpu_bw * p->plan.gpus;
        }
    }
}

/* ---------------- bytes and rates ---------------- */

/* Bytes of the first n tokens' KV decode replica r receives: its pool's per-GPU KV of a token
 * (windowed layers keep at most their window) on each GPU that holds the request's KV (the
 * tensor-parallel group of one attention rank). */
static double kv_bytes(const eng_replica *r, int64_t n)
{
    const eng_pool *d = r->pool;
    const eng_kv_plan *p = &d->plan;
    int64_t w = p->window > 0 && n > p->window ? p->window : n;
    return (double)d->cfg.tensor_parallel *
           ((double)p->bytes_per_token * (double)n + (double)p->window_bytes_per_token * (double)w);
}

/* MODEL: a transfer moves over the links of the GPUs holding the request's KV on both sides
 * (each tensor-parallel rank sends its shard over its own NIC: vLLM NixlConnector and SGLang's
 * Mooncake backend pair the prefill and decode ranks), so one request gets at most the smaller
 * side's GPUs x per-GPU bandwidth. Each pair's own: in a pool of groups the two ends may differ
 * in GPU (link bandwidth) and layout, and the slower end bounds the transfer. */
static double flow_cap(const eng_replica *src, const eng_replica *dst)
{
    const eng_pool *p = src->pool, *d = dst->pool;
    double a = p->gpu_bw * p->cfg.tensor_parallel, b = d->gpu_bw * d->cfg.tensor_parallel;
    return a < b ? a : b;
}

/* ---------------- routing and admission on the decode side ---------------- */

/* rq goes to decode replica d: its load as routers see it. */
static void route_decode(eng_replica *d, eng_request *rq)
{
    rq->pd_dst = d->id;
    d->outstanding++;
    d->outstanding_tokens += rq->prompt + rq->pd_output;
    eng_ensure_content(d, rq);
}

/* rq waits for decode replica d's KV (counted waiting there, and in the system's queue when
 * no prefill replica counts it already). */
static void enqueue(eng_replica *d, eng_request *rq, int count_total)
{
    eng_fifo_push(&d->pdq, rq);
    rq->pd_epoch = d->pd_fails;
    d->waiting++;
    if (count_total) {
        eng_engine *e = d->e;
        if (++e->waiting_total > e->tot.max_waiting)
            e->tot.max_waiting = e->waiting_total;
    }
}

/* The transfer of rq may go: its decode-side blocks are reserved. */
static void start(eng_engine *e, eng_request *rq, int64_t now)
{
    eng_replica *p = &e->reps[rq->pd_src], *d = &e->reps[rq->pd_dst];
    eng_flow_open(e, rq, &p->port, &d->port, flow_cap(p, d), now);
    if (e->cfg.pd.mode == ENG_XFER_AFTER_PREFILL) {
        eng_flow_release(rq->pd_flow, kv_bytes(d, rq->prompt), 1, now);
        return;
    }
    /* MODEL: SGLang's prefill server keeps a request in its bootstrap queue until the decode
     * server has preallocated its KV (disaggregation/prefill.py, decode.py
     * DecodePreallocQueue): only then does the prefill policy see it */
    p->ops->on_arrival(p->st, p, rq, now);
    if (rq->status == ENG_RQ_WAITING && !p->busy)
        eng_replica_wake_at(p, now);
}

/* Admits decode replica d's waiting transfers in arrival order while the policy has a seat and
 * the blocks are free besides what d's next decode step needs. */
static void admit_waiting(eng_replica *d, int64_t now)
{
    eng_engine *e = d->e;
    eng_request *rq;
    while ((rq = d->pdq.head)) {
        /* MODEL: vLLM V1's decode instance allocates the blocks of a remote prefill's tokens
         * when its scheduler takes the request from the waiting queue (FCFS; it stops at the
         * first that does not fit) and marks it WAITING_FOR_REMOTE_KVS (vllm/v1/core/sched/
         * scheduler.py); SGLang's DecodePreallocQueue preallocates the prompt's KV the same
         * way; Dynamo's decode worker allocates before it pulls through NIXL */
        int64_t need = d->ops->pd_admit
                           ? d->ops->pd_admit(d->st, d, rq, d->incoming, d->incoming_tokens)
                           : eng_kv_blocks_for(d, rq->prompt);
        if (need < 0 || need > eng_kv_free(d) - eng_decode_blocks_needed(d)) {
            d->pd_fails++; /* everyone queued now waits for KV or a seat */
            break;
        }
        eng_fifo_pop(&d->pdq);
        d->waiting--;
        if (e->cfg.pd.mode == ENG_XFER_AFTER_PREFILL)
            e->waiting_total--;
        eng_kv_take(&d->kv, need);
        rq->pd_blocks = (int32_t)need;
        rq->t_reserved = now;
        rq->pd_epoch = d->pd_fails != rq->pd_epoch; /* from here: whether it was held back */
        d->incoming++;
        d->incoming_tokens += rq->prompt + rq->pd_output;
        start(e, rq, now);
    }
}

/* ---------------- the request's way ---------------- */

/* Whether total tokens of KV fit a replica of every decode pool: the decode router may pick any
 * (a request that fits only some groups is refused as one that fits none, an approximation of
 * ours: the routers do not filter by size). */
static int decode_fits(const eng_engine *e, int64_t total)
{
    for (int k = e->dpool; k < e->npools; k++)
        if (eng_kv_blocks_for(&e->pools[k].reps[0], total) > e->pools[k].plan.blocks)
            return 0;
    return 1;
}

void eng_pd_arrival(eng_engine *e, eng_request *rq, int64_t now)
{
    eng_pool *pp = &e->pools[ENG_POOL_PREFILL], *dp = &e->pools[e->dpool];
    eng_replica *p = eng_route(e, pp, rq);
    /* MODEL: the disaggregation proxies send the prefill instance the request with one output
     * token (vLLM's disagg proxy examples set max_tokens = 1; TensorRT-LLM's disaggregated
     * server sends a context-only request), and the rest to the decode instance */
    rq->pd_output = rq->output;
    rq->output = 1;
    rq->pd_src = p->id;
    eng_ensure_content(p, rq);
    eng_count_arrival(p, rq);
    int64_t total = (int64_t)rq->prompt + rq->pd_output;
    if (total > e->max_len) {
        eng_reject(p, rq, ENG_REJECT_CONTEXT);
        return;
    }
    if (eng_kv_blocks_for(p, (int64_t)rq->prompt + 1) > eng_kv_total(p) || !decode_fits(e, total)) {
        eng_reject(p, rq, ENG_REJECT_KV);
        return;
    }
    eng_metrics_concurrency(&e->m, e->in_system);
    if (e->cfg.pd.mode == ENG_XFER_AFTER_PREFILL) {
        p->ops->on_arrival(p->st, p, rq, now);
        if (rq->status == ENG_RQ_WAITING && !p->busy)
            eng_replica_wake_at(p, now);
        return;
    }
    /* MODEL: layer-wise transfer writes into KV the decode side holds already, so the pair is
     * chosen when the request arrives: SGLang's mini_lb picks a prefill and a decode server
     * together (select_pair) and the decode server preallocates; Mooncake's Conductor picks the
     * prefill and decode instances of a request up front */
    eng_replica *d = eng_route(e, dp, rq);
    route_decode(d, rq);
    enqueue(d, rq, 0);
    if (!d->busy)
        eng_replica_wake_at(d, now);
}

void eng_pd_rejected(eng_replica *r, eng_request *rq)
{
    eng_engine *e = r->e;
    r->outstanding_tokens += rq->pd_output - rq->output;
    rq->output = rq->pd_output;
    if (rq->pd_dst < 0)
        return;
    eng_replica *d = &e->reps[rq->pd_dst];
    int64_t now = sim_now(e->ctx);
    eng_router_left(d, rq);
    d->outstanding--;
    d->outstanding_tokens -= rq->prompt + rq->pd_output;
    if (rq->pd_flow)
        eng_flow_close(rq->pd_flow, now);
    if (rq->pd_blocks) {
        eng_kv_give(&d->kv, rq->pd_blocks);
        rq->pd_blocks = 0;
        d->incoming--;
        d->incoming_tokens -= rq->prompt + rq->pd_output;
        if (!d->busy)
            eng_replica_wake_at(d, now);
    }
}

void eng_pd_prefilled(eng_replica *p, eng_request *rq)
{
    eng_engine *e = p->e;
    int64_t now = sim_now(e->ctx);
    rq->status = ENG_RQ_TRANSFER;
    p->ops->on_finish(p->st, p, rq, now);
    eng_router_left(p, rq);
    p->outstanding--;
    p->outstanding_tokens -= rq->prompt + rq->output;
    p->pd_sending++;
    rq->t_prefilled = now;
    /* the token is the client's only once its KV is on the decode side (eng_pd_kick) */
    rq->t_first_token = -1;
    rq->first_unseen = 0;
    if (e->cfg.pd.mode != ENG_XFER_AFTER_PREFILL)
        return; /* its KV is on its way already */
    /* MODEL: Dynamo's PrefillRouter routes the request to a decode worker once the prefill
     * worker has returned its transfer metadata (Dynamo architecture flow, S5-S7) */
    eng_replica *d = eng_route(e, &e->pools[e->dpool], rq);
    route_decode(d, rq);
    enqueue(d, rq, 1);
    if (!d->busy)
        eng_replica_wake_at(d, now);
}

void eng_pd_started(eng_replica *p, int64_t now)
{
    eng_engine *e = p->e;
    const eng_batch *b = &p->batch;
    int64_t t0 = p->gpu_start, t1 = p->gpu_free_at;
    double layers = e->cfg.model.layers > 1 ? e->cfg.model.layers : 1;
    /* MODEL: SGLang's prefill server sends a chunk's KV when the chunk's forward is done
     * (sglang/srt/disaggregation/prefill.py: send_kv_chunk, called for each finished chunk of a
     * chunked prefill and for the last one from process_batch_result_disagg_prefill), not layer
     * by layer: the whole chunk leaves at its end */
    if (e->cfg.pd.mode == ENG_XFER_PER_CHUNK)
        layers = 1;
    for (int32_t i = 0; i < b->nchunks; i++) {
        eng_request *rq = b->chunks[i].rq;
        eng_flow *f = rq->pd_flow;
        if (!f)
            continue;
        int64_t c = rq->prefilled, q = b->chunks[i].tokens;
        const eng_replica *d = &e->reps[rq->pd_dst];
        double before = kv_bytes(d, c), target = kv_bytes(d, c + q);
        double rel = eng_flow_released(f, now);
        /* a prefix found cached is not computed: its KV can go at once */
        if (before > rel) {
            eng_flow_release(f, before - rel, 0, now);
            rel = before;
        }
        double fresh = target > rel ? target - rel : 0;
        /* MODEL: layer-wise transfer (Mooncake's layer-wise prefill; vLLM's P2pNcclConnector
         * sends each layer's KV from save_kv_layer as the forward pass reaches it): a chunk's KV
         * leaves layer by layer while the chunk computes, the last layer's once it is done */
        eng_flow_window(f, t0, t1, fresh * (layers - 1) / layers, fresh / layers,
                        c + q == rq->prefill_target, now);
    }
}

static void on_kv_arrived(sim_ctx *ctx, void *obj, int64_t arg);

void eng_pd_flow_done(eng_engine *e, eng_request *rq, int64_t now)
{
    int64_t lat = (int64_t)(e->cfg.pd.latency_ns + 0.5);
    sim_schedule(e->ctx, now + lat, ENG_PRIO_XFER, on_kv_arrived, e, (int64_t)(intptr_t)rq);
}

static void on_kv_arrived(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_engine *e = obj;
    eng_request *rq = (eng_request *)(intptr_t)arg;
    int64_t now = sim_now(ctx);
    SIM_CHECK(ctx, rq->status == ENG_RQ_TRANSFER && rq->pd_blocks > 0);
    eng_replica *p = &e->reps[rq->pd_src], *d = &e->reps[rq->pd_dst];
    /* MODEL: the prefill instance frees the request's blocks once the decode side has read them
     * (vLLM NixlConnector: request_finished delays the free until the notification; SGLang frees
     * on KVPoll.Success); with a prefix cache they stay cached */
    eng_kv_free_rq(&p->kv, rq, p->kv.ps ? rq->prompt : 0);
    /* MODEL: a prefill worker told to stop (Dynamo's planner scaling down, SIGTERM) exits once
     * its last request is done (planner docs: "no remote prefill request is dropped"); its KV
     * is done when the decode side has read it */
    if (--p->pd_sending == 0 && eng_replica_drained(p))
        eng_autoscale_drained(p);
    else if (!p->busy)
        eng_replica_wake_at(p, now);
    if (rq->pc && p->kv.block_size != d->kv.block_size) {
        rq->pc->nbh = rq->pc->cur_seg = rq->pc->cur_off = 0; /* hashes were of p's blocks */
    }
    double bytes = kv_bytes(d, rq->prompt);
    int64_t ready = rq->t_prefilled > rq->t_reserved ? rq->t_prefilled : rq->t_reserved;
    int64_t asked = e->cfg.pd.mode != ENG_XFER_AFTER_PREFILL ? rq->t_arrival : rq->t_prefilled;
    e->tot.transfers++;
    e->tot.transfer_bytes += bytes;
    e->tot.transfers_held += rq->pd_epoch;
    eng_metrics_transfer(&e->m, now - ready, rq->t_reserved - asked, bytes, (int)rq->pd_epoch);
    d->incoming--;
    d->incoming_tokens -= rq->prompt + rq->pd_output;
    rq->replica = d->id;
    rq->kv_blocks = rq->pd_blocks;
    rq->pd_blocks = 0;
    if (d->njoining == d->capjoining) {
        d->capjoining = d->capjoining ? 2 * d->capjoining : 16;
        d->joining = sim_xrealloc(d->joining, (size_t)d->capjoining * sizeof *d->joining);
    }
    d->joining[d->njoining++] = rq;
    if (!d->busy)
        eng_replica_wake_at(d, now);
}

/* rq, its KV on decode replica d, takes its seat: the client gets its first token now. */
static void join(eng_replica *d, eng_request *rq, int64_t now)
{
    /* MODEL: the first token is the one the prefill instance sampled; the decode instance hands
     * it out when the request enters its batch (SGLang's decode server pops finished transfers
     * into its batch and streams that token; TensorRT-LLM's generation server starts from the
     * context server's first token). vLLM's decode instance recomputes the prompt's last token
     * instead (_update_waiting_for_remote_kv); that step is not modelled. */
    rq->output = rq->pd_output;
    rq->t_first_token = now;
    rq->t_last_token = now;
    rq->t_span_decode = now;
    if (rq->generated >= rq->output) {
        eng_kv_free_rq(&d->kv, rq, 0);
        rq->status = ENG_RQ_FINISHED;
        eng_deliver_finish(d, rq, now);
        return;
    }
    d->ops->pd_join(d->st, d, rq, now);
    eng_cohort_join(d, rq, now);
}

void eng_pd_kick(eng_replica *r, int64_t now)
{
    if (r->pool->role != ENG_ROLE_DECODE)
        return;
    for (int32_t i = 0; i < r->njoining; i++)
        join(r, r->joining[i], now);
    r->njoining = 0;
    admit_waiting(r, now);
}
