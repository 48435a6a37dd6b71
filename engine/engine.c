/*
 * engine.c: the simulated serving engine: arrivals, routing, iterations, and the primitives
 * policies call. KV block accounting is in kv.c, the routers in router.c.
 *
 * Ownership: the engine owns requests (slabs + free list; a request is recycled once recorded),
 * replicas, policy state and the batch arrays. Policies own only their queues, built from the
 * requests' sched_* fields. The workload source, the predictor and the recorder are borrowed.
 *
 * One iteration per replica is in flight at a time. Forming it (next_batch) happens when the
 * replica is idle: after an arrival, after an iteration ends, or at a requested wake-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "rng.h"

static const char *const status_names[ENG_RQ_STATUS_COUNT] = {
    "waiting", "prefill", "decode", "swapped", "finished", "rejected", "transfer"};
static const char *const reject_names[ENG_REJECT_REASON_COUNT] = {
    "",
    "exceeds model context",
    "exceeds KV cache capacity",
    "exceeds batch token limit",
    "shed at admission: every replica saturated",
    "lost in a replica crash"};

const char *eng_rq_status_name(eng_rq_status s)
{
    return (unsigned)s < ENG_RQ_STATUS_COUNT ? status_names[s] : "?";
}

const char *eng_reject_reason_name(eng_reject_reason r)
{
    return (unsigned)r < ENG_REJECT_REASON_COUNT ? reject_names[r] : "?";
}

const char *eng_spec_method_name(eng_spec_method m)
{
    static const char *const names[ENG_SPEC_METHOD_COUNT] = {"none",   "draft", "eagle",
                                                             "eagle3", "mtp",   "ngram"};
    return (unsigned)m < ENG_SPEC_METHOD_COUNT ? names[m] : "?";
}

const char *eng_span_end_name(eng_span_end e)
{
    static const char *const names[ENG_SPAN_END_COUNT] = {"finished", "preempted", "swapped"};
    return (unsigned)e < ENG_SPAN_END_COUNT ? names[e] : "?";
}

/* ---------------- request pool ---------------- */

static eng_request *rq_new(eng_engine *e)
{
    if (!e->free_rq) {
        eng_slab *s = sim_xmalloc(sizeof *s);
        s->next = e->slabs;
        e->slabs = s;
        for (int i = ENG_SLAB - 1; i >= 0; i--) {
            s->rq[i].status = ENG_RQ_FINISHED;
            s->rq[i].pc = NULL;
            s->rq[i].pool_next = e->free_rq;
            e->free_rq = &s->rq[i];
        }
    }
    eng_request *rq = e->free_rq;
    e->free_rq = rq->pool_next;
    eng_pcreq *pc = rq->pc; /* its buffers are kept for reuse */
    if (pc)
        eng_pcreq_reset(pc);
    /* one initializer: every other field zero, written once (no clear, then the -1s over it) */
    *rq = (eng_request){.t_first_sched = -1,
                        .t_last_sched = -1,
                        .t_first_token = -1,
                        .t_finish = -1,
                        .t_span_decode = -1,
                        .c_fin_idx = -1,
                        .pd_src = -1,
                        .pd_dst = -1,
                        .t_prefilled = -1,
                        .t_reserved = -1,
                        .pc = pc};
    return rq;
}

static void rq_release(eng_engine *e, eng_request *rq)
{
    rq->pool_next = e->free_rq;
    e->free_rq = rq;
}

/* ---------------- lifecycle ---------------- */

static void kick(eng_replica *r);
static void pull_arrival(eng_engine *e);

static void request_done(eng_replica *r, eng_request *rq)
{
    eng_engine *e = r->e;
    eng_router_left(r, rq);
    r->outstanding--;
    r->outstanding_tokens -= rq->prompt + rq->output;
    e->in_system--;
    if (e->as)
        eng_autoscale_request(e, rq);
    if (eng_replica_drained(r))
        eng_autoscale_drained(r);
    if (e->rec && e->rec->on_request)
        e->rec->on_request(e->rec_st, rq);
    if (e->src->on_done)
        e->src->on_done(e->src_st, sim_now(e->ctx), rq);
    rq_release(e, rq);
    if (e->src_state == ENG_SRC_LATER)
        pull_arrival(e);
}

/* Tells the recorder that rq's current scheduled span ended at `end`, and how. */
static void end_span(eng_replica *r, const eng_request *rq, int64_t end, eng_span_end how)
{
    eng_engine *e = r->e;
    if (!e->rec || !e->rec->on_span)
        return;
    eng_span_rec s = {.req = rq->id,
                      .replica = r->id,
                      .span = rq->scheduled - 1,
                      .start_ns = rq->t_last_sched,
                      .decode_ns = rq->t_span_decode,
                      .end_ns = end,
                      .end = how};
    e->rec->on_span(e->rec_st, &s);
}

/* The client sees rq's last token at now: the request is done. */
void eng_deliver_finish(eng_replica *r, eng_request *rq, int64_t now)
{
    eng_engine *e = r->e;
    end_span(r, rq, now, ENG_SPAN_FINISHED);
    rq->t_finish = now;
    rq->t_last_token = now;
    if (rq->first_unseen) {
        rq->t_first_token = now;
        rq->first_unseen = 0;
    }
    e->tot.finished++;
    e->tot.prompt_tokens += rq->prompt;
    e->tot.output_tokens += rq->output;
    if (now > e->tot.last_finish_ns)
        e->tot.last_finish_ns = now;
    eng_metrics_request(&e->m, rq);
    request_done(r, rq);
}

/* Appends rq to the growing array *a of *n (room for *cap). */
static void rq_push(eng_request ***a, int32_t *n, int32_t *cap, eng_request *rq)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *a = sim_xrealloc(*a, (size_t)*cap * sizeof **a);
    }
    (*a)[(*n)++] = rq;
}

static void defer(eng_replica *r, eng_request *rq)
{
    rq_push(&r->unseen, &r->nunseen, &r->capunseen, rq);
}

/* Delivers the tokens deferred by async output processing: first tokens and finishes. */
static void deliver_deferred(eng_replica *r, int64_t now)
{
    for (int32_t i = 0; i < r->nunseen; i++) {
        eng_request *rq = r->unseen[i];
        if (rq->status == ENG_RQ_FINISHED)
            eng_deliver_finish(r, rq, now);
        else if (rq->first_unseen) {
            rq->t_first_token = now;
            rq->first_unseen = 0;
        }
    }
    r->nunseen = 0;
}

/* Once per request: flattened (its calls inlined down the tree, the metrics' and the delivery's
 * among them), the operations and their order unchanged, contraction being off. */
static __attribute__((flatten)) void finish(eng_replica *r, eng_request *rq)
{
    eng_engine *e = r->e;
    if (r->pool->role == ENG_ROLE_PREFILL) {
        eng_pd_prefilled(r, rq); /* its one token: the KV now goes to a decode replica */
        return;
    }
    int64_t now = sim_now(e->ctx);
    rq->status = ENG_RQ_FINISHED;
    /* MODEL: vLLM caches a finished request's computed full blocks (prompt + output - 1 tokens:
     * the last sampled token is never fed back); SGLang's cache_finished_req inserts the same
     * tokens into its radix tree */
    eng_kv_free_rq(&r->kv, rq, (int64_t)rq->prompt + rq->output - 1);
    r->ops->on_finish(r->st, r, rq, now);
    int64_t last_ctx = (int64_t)rq->prompt + rq->output - 1;
    if (r->run_left > 0) {
        /* MODEL: vLLM 0.6 multi-step: the batch is fixed for num_scheduler_steps forward passes,
         * so a sequence that finished is computed until the last one */
        if (r->co.cap > 0) { /* each one's context, for the capped sum */
            if (r->run_pad_seqs == r->caprunpad) {
                r->caprunpad = r->caprunpad ? 2 * r->caprunpad : 64;
                r->run_pad_c =
                    sim_xrealloc(r->run_pad_c, (size_t)r->caprunpad * sizeof *r->run_pad_c);
            }
            r->run_pad_c[r->run_pad_seqs] = last_ctx;
        }
        r->run_pad_seqs++;
        r->run_pad_ctx += last_ctx;
    }
    if (r->pool->cfg.cpu.async) {
        /* MODEL: vLLM async output processing (v0.6): the outputs of step n are processed
         * while step n+1 runs, so a sequence that finished in step n was already scheduled into
         * step n+1, which computes it once more, and its client sees the last token when step
         * n+1 ends. TensorRT-LLM's overlap loop (tensorrt_llm/_torch/pyexecutor/py_executor.py,
         * _executor_loop_overlap) also computes it once more in step n+1, formed before step n's
         * results were read, but reads them (_update_requests waits on step n's decoder event,
         * then _handle_responses) right after launching step n+1: its client sees the token when
         * step n ends (cpu.own_step) */
        if (r->run_left == 0) {
            r->async_pad_seqs++;
            r->async_pad_ctx += last_ctx;
            r->async_pad_capped += eng_cohort_capped_of(&r->co, last_ctx);
        }
        if (!r->pool->cfg.cpu.own_step) {
            defer(r, rq);
            return;
        }
    }
    eng_deliver_finish(r, rq, now);
}

void eng_reject(eng_replica *r, eng_request *rq, eng_reject_reason why)
{
    eng_engine *e = r->e;
    SIM_CHECK(e->ctx, rq->status == ENG_RQ_WAITING && rq->kv_blocks == 0);
    if (rq->pd_src >= 0)
        eng_pd_rejected(r, rq);
    eng_off_release(r, rq);
    rq->status = ENG_RQ_REJECTED;
    rq->reject = why;
    rq->t_finish = sim_now(e->ctx);
    r->waiting--;
    e->waiting_total--;
    e->tot.rejected++;
    e->tot.rejected_by[why]++;
    eng_metrics_request(&e->m, rq);
    request_done(r, rq);
}

void eng_drop_request(eng_replica *r, eng_request *rq, int lost)
{
    eng_engine *e = r->e;
    int running = rq->status == ENG_RQ_PREFILL || rq->status == ENG_RQ_DECODE ||
                  rq->status == ENG_RQ_FINISHED; /* its last token held back (async) */
    if (running)
        end_span(r, rq, sim_now(e->ctx), ENG_SPAN_PREEMPTED);
    if (rq->status != ENG_RQ_WAITING && rq->status != ENG_RQ_SWAPPED) {
        r->waiting++; /* counted as waiting again, as a request routed here and not running */
        e->waiting_total++;
    }
    /* MODEL: the crashed engine's KV and progress are gone: a retry computes the prompt again
     * and generates its whole output; what the client saw streamed before the crash is
     * discarded (its TTFT still counts from the original arrival) */
    eng_request k = *rq;
    memset(rq, 0, sizeof *rq);
    *rq = (eng_request){.id = k.id,
                        .prompt = k.prompt,
                        .output = k.output,
                        .replica = k.replica,
                        .t_arrival = k.t_arrival,
                        .tag = k.tag,
                        .session = k.session,
                        .attempts = k.attempts,
                        .scheduled = k.scheduled,
                        .preemptions = k.preemptions,
                        .t_first_sched = k.t_first_sched,
                        .cached_tokens = k.cached_tokens,
                        .c_class = k.c_class,
                        .pc = k.pc};
    if (k.pc) { /* its content stays; its place in the crashed cache does not */
        k.pc->tabled = 0;
        k.pc->nblk = k.pc->nident = k.pc->nmemo = 0;
        k.pc->m_ps = NULL;
    }
    rq->t_last_sched = rq->t_first_token = rq->t_finish = rq->t_span_decode = -1;
    rq->c_fin_idx = -1;
    rq->pd_src = rq->pd_dst = -1;
    rq->t_prefilled = rq->t_reserved = -1;
    rq->prefill_target = rq->padded_prompt = rq->prompt;
    rq->status = ENG_RQ_WAITING;
    if (lost) {
        eng_reject(r, rq, ENG_REJECT_FAULT);
        return;
    }
    eng_router_left(r, rq);
    r->outstanding--;
    r->outstanding_tokens -= rq->prompt + rq->output;
    r->waiting--;
    e->waiting_total--;
    e->in_system--;
}

/* ---------------- routing ---------------- */

void eng_router_left(eng_replica *r, const eng_request *rq)
{
    eng_pool *p = r->pool->route;
    if (p->nroute > 1 && p->router->on_leave)
        p->router->on_leave(p->router_st, r, eng_replica_slot(r), rq);
}

/* rq's prompt is computed on r: r's router is told (it may count prefill work still owed). */
static void router_prefilled(eng_replica *r, const eng_request *rq)
{
    eng_pool *p = r->pool->route;
    if (p->nroute > 1 && p->router->on_prefilled)
        p->router->on_prefilled(p->router_st, r, eng_replica_slot(r), rq);
}

void eng_router_joined(const eng_replica *r)
{
    eng_pool *p = r->pool->route;
    if (p->nroute > 1 && p->router->on_join)
        p->router->on_join(p->router_st, r, eng_replica_slot(r));
}

void eng_router_gone(const eng_replica *r)
{
    eng_pool *p = r->pool->route;
    if (p->nroute > 1 && p->router->on_gone)
        p->router->on_gone(p->router_st, eng_replica_slot(r));
}

/* The replica rq goes to: pool p's router's choice (none to make with one replica; a router
 * with state is asked even when one of several is ready, to keep its account). */
eng_replica *eng_route(eng_engine *e, eng_pool *p, const eng_request *rq)
{
    if (p->nact == 1 && (p->nroute == 1 || !p->router->init))
        return (eng_replica *)p->rep_list[0];
    int32_t i = p->router->pick(p->router_st, p->rep_list, p->nact, rq, p->router_rng);
    SIM_CHECK(e->ctx, i >= 0 && i < p->nact);
    return (eng_replica *)p->rep_list[i]; /* the ready replicas (autoscale.c) */
}

/* ---------------- arrivals ---------------- */

/* rq's prefix-cache state: its copied content, or unique content (ids no source produces). */
static eng_pcreq *pc_of(eng_request *rq)
{
    if (!rq->pc)
        rq->pc = sim_xcalloc(1, sizeof *rq->pc);
    return rq->pc;
}

static uint64_t unique_id(const eng_request *rq, uint64_t salt)
{
    uint64_t x = (uint64_t)rq->id * UINT64_C(0x9e3779b97f4a7c15) + salt;
    x ^= x >> 31;
    x *= UINT64_C(0xd6e8feb86659fd93);
    return x ^ (x >> 32);
}

/* rq's workload class: class k with probability its share (the shares sum to 1). */
static void draw_class(const eng_classes *cl, gsl_rng *rng, eng_request *rq)
{
    double u = gsl_rng_uniform(rng), acc = 0;
    int32_t k = 0;
    for (; k < cl->n - 1; k++) {
        acc += cl->c[k].share;
        if (u < acc)
            break;
    }
    rq->wclass = k;
    rq->priority = cl->c[k].priority;
}

static void set_content(eng_request *rq, const eng_arrival *a)
{
    eng_pcreq *pc = pc_of(rq);
    if (a->nseg > pc->capseg) {
        pc->capseg = a->nseg;
        pc->seg = sim_xrealloc(pc->seg, (size_t)pc->capseg * sizeof *pc->seg);
    }
    if (a->nseg > 0)
        memcpy(pc->seg, a->seg, (size_t)a->nseg * sizeof *pc->seg);
    pc->nseg = a->nseg > 0 ? a->nseg : 0;
    pc->uid = unique_id(rq, UINT64_C(0x70726f6d7074));
    pc->out_id = a->out_id ? a->out_id : unique_id(rq, UINT64_C(0x6f7574707574));
    pc->out_shared = a->out_id != 0;
    pc->own_tail = a->nseg > 0 && a->own_tail > 0 && a->own_tail <= rq->prompt ? a->own_tail : 0;
}

void eng_ensure_content(eng_replica *r, eng_request *rq)
{
    if (r->kv.ps && (!rq->pc || !rq->pc->out_id)) {
        eng_arrival none = {0};
        set_content(rq, &none);
    }
}

void eng_count_arrival(eng_replica *r, eng_request *rq)
{
    eng_engine *e = r->e;
    rq->replica = r->id;
    rq->status = ENG_RQ_WAITING;
    rq->attempts++;
    r->outstanding++;
    r->outstanding_tokens += rq->prompt + rq->output;
    e->in_system++;
    r->waiting++;
    e->waiting_total++;
    if (e->waiting_total > e->tot.max_waiting)
        e->tot.max_waiting = e->waiting_total;
    if (rq->attempts == 1 && (rq->id & (rq->id + 1)) == 0) /* arrival id + 1 a power of two */
        e->tot.waiting_at_pow2[__builtin_ctzll((unsigned long long)(rq->id + 1))] =
            e->waiting_total;
}

/* MODEL: an overlap loop forms step n+1 when step n starts: TensorRT-LLM's
 * _executor_loop_overlap (tensorrt_llm/_torch/pyexecutor/py_executor.py) fetches new requests
 * and schedules the next batch (_prepare_and_schedule_batch), launches it (_forward_step), and
 * only then waits for the step before (_update_requests, _process_previous_batch); SGLang's
 * event_loop_overlap (recv_requests, get_next_batch_to_run, run_batch, then
 * process_batch_result of the last batch) and vLLM V1's async scheduling do the same. A
 * request arriving while a step is in flight therefore misses the step formed at its start:
 * it reaches the policy once the next step is formed (kick, fetch_now). */
static void fetch_later(eng_replica *r, eng_request *rq)
{
    rq_push(&r->fetch, &r->nfetch, &r->capfetch, rq);
}

/* Gives the policy the requests fetch_later held, in arrival order; returns how many. */
static int32_t fetch_now(eng_replica *r, int64_t now)
{
    int32_t n = r->nfetch;
    r->nfetch = 0;
    for (int32_t i = 0; i < n; i++)
        r->ops->on_arrival(r->st, r, r->fetch[i], now);
    return n;
}

/* Once per request: flattened as finish is (its routing, its counts and the policy's wake-up
 * inline where they can be). */
__attribute__((flatten)) void eng_dispatch(eng_engine *e, eng_request *rq, int64_t now)
{
    if (e->pools[0].nact == 0) { /* every replica crashed: it waits for one (fault.c) */
        eng_fault_park(e, rq);
        return;
    }
    int shed = eng_admission_on(&e->cfg.fleet) && eng_admission_sheddable(e, rq) &&
               eng_admission_shed(e, &e->pools[0]);
    /* a shed request is counted on the first ready replica; the router never sees it */
    eng_replica *r = shed ? (eng_replica *)e->pools[0].rep_list[0] : eng_route(e, &e->pools[0], rq);
    eng_ensure_content(r, rq);
    eng_count_arrival(r, rq);
    int64_t total = (int64_t)rq->prompt + rq->output;
    if (shed)
        eng_reject(r, rq, ENG_REJECT_SHED);
    else if (total > e->max_len)
        eng_reject(r, rq, ENG_REJECT_CONTEXT);
    else if (eng_kv_blocks_for(r, total) > r->kv.total)
        eng_reject(r, rq, ENG_REJECT_KV);
    else {
        if (r->busy && r->pool->cfg.cpu.async && r->pool->cfg.cpu.form_ahead)
            fetch_later(r, rq);
        else
            r->ops->on_arrival(r->st, r, rq, now);
        /* after the policy's admission check (TGI's can reject the request right here): a
         * request turned away never counts toward the peak */
        eng_metrics_concurrency(&e->m, e->in_system);
        /* Requests arriving at the same instant form one queue before the policy looks at it
         * (a burst queued at t=0 is one batch for static batching, as in the generate_batch
         * loop): the batch is formed by a wake-up, which runs after this instant's arrivals. */
        if (!r->busy)
            eng_replica_wake_at(r, now);
    }
}

static void on_arrival(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_engine *e = obj;
    eng_request *rq = (eng_request *)(intptr_t)arg;
    int64_t now = sim_now(ctx);
    if (e->pd)
        eng_pd_arrival(e, rq, now);
    else
        eng_dispatch(e, rq, now);
    pull_arrival(e);
}

static void on_pull(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_engine *e = obj;
    e->pull_ev = 0;
    if (e->src_state == ENG_SRC_LATER)
        pull_arrival(e);
}

/* The source has nothing due before t (or a finish): ask it again then. */
static void pull_at(eng_engine *e, int64_t t)
{
    if (e->pull_ev && e->pull_at <= t)
        return;
    if (e->pull_ev)
        sim_cancel(e->ctx, e->pull_ev);
    e->pull_at = t;
    e->pull_ev = sim_schedule(e->ctx, t, ENG_PRIO_ARRIVAL, on_pull, e, 0);
}

/* Once per request: flattened as finish is (the request's setup, its routing and the arrival's
 * event inline where they can be). */
static __attribute__((flatten)) void pull_arrival(eng_engine *e)
{
    if (e->failed || e->src_state == ENG_SRC_END)
        return;
    eng_arrival a;
    memset(&a, 0, sizeof a); /* sources that know no content leave its fields alone */
    int st = e->src->next(e->src_st, sim_now(e->ctx), &a, &e->err);
    e->src_state = st;
    if (st == ENG_SRC_ERROR) {
        e->failed = 1;
        sim_stop(e->ctx);
        return;
    }
    if (st == ENG_SRC_END) {
        e->tot.waiting_at_end_of_arrivals = e->waiting_total;
        return;
    }
    if (st == ENG_SRC_LATER && a.t > sim_now(e->ctx))
        pull_at(e, a.t);
    if (st != ENG_SRC_OK)
        return;
    SIM_CHECK(e->ctx, a.t >= sim_now(e->ctx) && a.prompt >= 1 && a.output >= 1);
    eng_request *rq = rq_new(e);
    rq->id = e->next_id++;
    rq->prompt = a.prompt;
    rq->output = a.output;
    rq->tag = a.tag;
    rq->session = a.session;
    if (a.nseg > 0 || a.out_id) {
        int64_t sum = 0;
        for (int32_t i = 0; i < a.nseg; i++)
            sum += a.seg[i].len;
        SIM_CHECK(e->ctx, a.nseg == 0 || sum == a.prompt);
        set_content(rq, &a);
    }
    rq->prefill_target = a.prompt;
    rq->padded_prompt = a.prompt;
    if (e->class_rng) /* the workload's arrival order: the same classes whatever the policy */
        rq->c_class =
            (int32_t)gsl_rng_uniform_int(e->class_rng, (unsigned long)e->cfg.spec.classes);
    if (e->wclass_rng) /* likewise: one draw per arrival, in arrival order */
        draw_class(&e->cfg.classes, e->wclass_rng, rq);
    rq->t_arrival = a.t;
    if (e->tot.arrived++ == 0)
        e->tot.first_arrival_ns = a.t;
    /* one arrival pending at a time: the next is pulled when it runs */
    sim_schedule_side(e->ctx, a.t, ENG_PRIO_ARRIVAL, on_arrival, e, (int64_t)(intptr_t)rq);
}

/* ---------------- iterations ---------------- */

static void on_iteration_end(sim_ctx *ctx, void *obj, int64_t arg);

static void batch_reset(eng_batch *b)
{
    b->decode = 0;
    b->steps = 1;
    b->nchunks = 0;
    b->pad_seqs = 0;
    b->pad_ctx = 0;
    b->fixed_steps = 0;
    b->speculate = -1;
}

/* The record of an iteration (record_iteration) handed to the recorder. Out of line: without
 * one, record_iteration's counts stay a few instructions where it is inlined. */
static __attribute__((noinline)) void iteration_rec(eng_replica *r, int64_t iter, int64_t start,
                                                    int64_t cpu, int64_t gpu, int64_t end,
                                                    const eng_shape *s, int64_t tokens,
                                                    int64_t draft)
{
    eng_engine *e = r->e;
    eng_iter_rec it = {.replica = r->id,
                       .iter = iter,
                       .start_ns = start,
                       .cpu_ns = cpu,
                       .gpu_ns = gpu,
                       .duration_ns = end - start,
                       .num_seqs = s->num_seqs,
                       .prefill_tokens = (int32_t)s->prefill_tokens,
                       .decode_tokens = s->decode_seqs,
                       .kv_blocks_used = r->kv.used,
                       .preempted = iter == r->iter ? r->preempted_now : 0,
                       .shape = *s,
                       .output_tokens = tokens,
                       .draft_ns = draft};
    e->rec->on_iteration(e->rec_st, &it);
}

/* Counts an iteration formed at now (its tokens in their second) and hands its record to the
 * recorder. */
static inline void record_iteration(eng_replica *r, int64_t iter, int64_t now, int64_t start,
                                    int64_t cpu, int64_t gpu, int64_t end, const eng_shape *s,
                                    int64_t tokens, int64_t draft)
{
    eng_engine *e = r->e;
    e->tot.iterations++;
    e->tot.pool_busy_ns[r->pool->id] += end - start;
    e->tot.pool_gpu_ns[r->pool->id] += gpu;
    eng_metrics_tokens(&e->m, now - e->tot.first_arrival_ns, end - e->tot.first_arrival_ns, tokens);
    if (e->rec && e->rec->on_iteration)
        iteration_rec(r, iter, start, cpu, gpu, end, s, tokens, draft);
}

/* record_iteration out of line, for the steps a run adds (fixed_batch_run, run_step_count with a
 * recorder): their loops stay as small as they were. */
static __attribute__((noinline)) void record_step(eng_replica *r, int64_t iter, int64_t now,
                                                  int64_t start, int64_t cpu, int64_t gpu,
                                                  int64_t end, const eng_shape *s, int64_t tokens,
                                                  int64_t draft)
{
    record_iteration(r, iter, now, start, cpu, gpu, end, s, tokens, draft);
}

/* Whether offloaded KV is on its way into r's cache or loaded and waiting for its request's
 * admission: the request joins at the next step the policy forms, so no step is run ahead. */
static int off_pending(const eng_replica *r)
{
    return r->off && (r->off->reserved > 0 || r->off->pins > 0);
}

/* Decode steps the current batch may run as one event whatever happens meanwhile: what the
 * policy allows (eng_batch.steps), up to the cohort's next finish, and only where nothing else
 * happens per step (no prefill chunks, no paged blocks to allocate, no async output delivery, no
 * swap traffic) and nothing else can see the replica in between (it is the only one: another's
 * records would come between its steps). */
static int64_t run_length(const eng_replica *r)
{
    const eng_batch *b = &r->batch;
    if (b->steps <= 1 || !b->decode || b->nchunks > 0 || r->co.paged > 0 || r->pipe ||
        off_pending(r) || r->pool->cfg.cpu.async || b->fixed_steps > 1 ||
        r->e->cfg.spec.method != ENG_SPEC_NONE || r->e->nrep > 1)
        return 1;
    /* one class: every member advances a token per step */
    const eng_request *top = eng_heap_top(&r->co.cls[0].fin);
    int64_t k = top ? top->c_fin_t - r->co.cls[0].t : 1;
    int64_t ev = eng_cohort_next_event(&r->co); /* the capped sum grows linearly until then */
    int64_t most = r->e->cfg.max_run_steps > 0 ? r->e->cfg.max_run_steps : b->steps;
    if (most > b->steps)
        most = b->steps;
    if (ev < most)
        most = ev;
    return k < most ? k : most;
}

/* The draft tokens each sequence verifies in the batch being formed or run (0: none). */
static int32_t spec_k(const eng_replica *r, const eng_batch *b)
{
    const eng_spec *sp = &r->e->cfg.spec;
    if (sp->method == ENG_SPEC_NONE)
        return 0;
    if (b && b->speculate >= 0)
        return b->speculate < sp->k ? b->speculate : sp->k;
    /* MODEL: vLLM V0's spec_decode_worker._should_disable_all_speculation: with
     * speculative_disable_by_batch_size set, a step whose running queue holds at least that
     * many sequences runs without speculation, "to stop trading off throughput for latency" */
    if (sp->disable_batch > 0 && r->co.n >= sp->disable_batch)
        return 0;
    return sp->k;
}

/* The drafter's forward passes for a step of shape s in which decodes verify k drafts.
 * MODEL: vLLM's EagleProposer.propose (EAGLE, EAGLE-3, MTP; draft models the same way): one
 * pass over every token the target computed in the step, then k - 1 passes of one token per
 * sequence, each drafting the next token */
static int64_t draft_time(eng_replica *r, const eng_shape *s, int32_t k)
{
    const eng_predictor *drafter = r->pool->draft;
    if (!drafter || k <= 0 || s->num_seqs <= 0)
        return 0;
    int32_t cap, chunked;
    cap = eng_shape_cap(&r->pool->cfg.spec.draft, &chunked);
    eng_shape d = *s;
    if (cap != s->cap) { /* a drafter without the target's cap reads the plain sums */
        d.cap = d.cap_chunked = 0;
        d.prefill_pairs_capped = d.prefill_kv_capped = 0;
        d.decode_ctx_capped = 0;
    }
    d.emit_seqs = s->num_seqs;
    int64_t ns = drafter->ops->iteration_ns(drafter->st, &d);
    if (k <= 1)
        return ns;
    /* the k - 1 passes, one token each: the j-th over contexts j * n longer */
    int64_t n = s->num_seqs, ctx = s->decode_ctx + (int64_t)s->prefill_kv;
    int64_t grow = d.cap ? eng_cohort_capped_growth(&r->co) : 0;
    eng_shape p = {0};
    eng_shape_set_cap(&p, d.cap, d.cap_chunked);
    eng_shape_add_decodes_capped(&p, n, ctx + n, d.cap ? s->decode_ctx_capped + grow : 0);
    p.emit_seqs = (int32_t)n;
    return ns + eng_predictor_passes_ns(drafter, &p, k - 1, n, grow);
}

/* The capped contexts of the padded sequences (eng_shape.decode_ctx_capped): O(1) for a model
 * without a cap; the batch's own pads (static batching) are refused when the cap can bind
 * (check_modelled), so theirs equal their contexts. */
static int64_t pads_capped(const eng_replica *r, const eng_batch *b)
{
    if (r->co.cap <= 0)
        return 0;
    int64_t c = r->async_pad_capped + b->pad_ctx;
    for (int32_t i = 0; i < r->run_pad_seqs; i++)
        c += eng_cohort_capped_of(&r->co, r->run_pad_c[i]);
    return c;
}

/* The shape of the step r's batch forms once its decode cohort has begun the step (its blocks
 * taken, its acceptance drawn): the prefill chunks (a chunk that ends its prefill emits a token),
 * the cohort verifying k drafts each and the padded slots. Moves nothing; returns the chunks'
 * output tokens. */
static int64_t shape_of(const eng_replica *r, int32_t k, eng_shape *s)
{
    const eng_batch *b = &r->batch;
    int64_t tokens = 0;
    memset(s, 0, sizeof *s);
    eng_shape_set_cap(s, r->co.cap, r->co.cap_chunked);
    for (int32_t i = 0; i < b->nchunks; i++) {
        const struct eng_chunk *ch = &b->chunks[i];
        eng_shape_add_prefill_capped(s, ch->charged, ch->rq->prefilled);
        if (ch->rq->prefilled + ch->tokens == ch->rq->prefill_target) {
            s->emit_seqs++;
            tokens++;
        }
    }
    int32_t vk = b->decode ? k : 0;
    if (b->decode) {
        eng_shape_add_verify(s, r->co.n, eng_cohort_ctx_sum(&r->co), eng_cohort_capped_sum(&r->co),
                             vk);
        /* MODEL: each decode sequence samples its token; verifying k drafts, vLLM computes the
         * logits of all k + 1 positions (RejectionSampler over target_logits) */
        s->emit_seqs += r->co.n * (vk + 1);
    }
    int32_t pads = b->pad_seqs + r->async_pad_seqs + r->run_pad_seqs;
    int64_t pads_ctx = b->pad_ctx + r->async_pad_ctx + r->run_pad_ctx;
    if (pads != 0 || pads_ctx != 0 || r->co.cap > 0) /* (else it adds nothing) */
        eng_shape_add_verify(s, pads, pads_ctx, pads_capped(r, b), vk);
    return tokens;
}

/* A step's shape (shape_of), its decode cohort's step begun first (eng_cohort_begin_step draws
 * the acceptance and allocates the step's blocks). Returns the output tokens it emits. */
static int64_t step_shape(eng_replica *r, int32_t k, eng_shape *s)
{
    int64_t tokens = r->batch.decode ? eng_cohort_begin_step(r, k) : 0;
    tokens += shape_of(r, k, s);
    r->async_pad_seqs = 0;
    r->async_pad_ctx = 0;
    r->async_pad_capped = 0;
    return tokens;
}

/* ---------------- the prices a pool keeps ---------------- */

/* A predictor's price is a function of the shape alone (predictor.h), so a pool keeps the ones
 * its steps ask for again: a plain decode pass's base by its sequences, and a pass without
 * decodes (every vllm-v0 prefill step) by its prefill tokens. Debug builds price each kept one
 * again in full and compare. */

/* Whether s decodes its num_seqs sequences one token each and does nothing else (no prefill
 * chunk, padded slot, draft or cap): its price is its base's (price_base) at its contexts. */
static inline int shape_plain_decode(const eng_shape *s)
{
    int32_t n = s->num_seqs;
    return s->tokens == n && s->decode_seqs == n && s->emit_seqs == n && s->prefill_seqs == 0 &&
           s->prefill_tokens == 0 && s->prefill_pairs == 0 && s->prefill_kv == 0 &&
           s->prefill_q2 == 0 && s->cap == 0 && s->cap_chunked == 0 &&
           s->prefill_pairs_capped == 0 && s->prefill_kv_capped == 0 && s->decode_ctx_capped == 0 &&
           s->decode_verify == 0;
}

static int shape_same(const eng_shape *a, const eng_shape *b)
{
    return a->tokens == b->tokens && a->num_seqs == b->num_seqs &&
           a->prefill_seqs == b->prefill_seqs && a->prefill_tokens == b->prefill_tokens &&
           a->prefill_pairs == b->prefill_pairs && a->prefill_kv == b->prefill_kv &&
           a->prefill_q2 == b->prefill_q2 && a->decode_seqs == b->decode_seqs &&
           a->decode_ctx == b->decode_ctx && a->emit_seqs == b->emit_seqs && a->cap == b->cap &&
           a->cap_chunked == b->cap_chunked && a->prefill_pairs_capped == b->prefill_pairs_capped &&
           a->prefill_kv_capped == b->prefill_kv_capped &&
           a->decode_ctx_capped == b->decode_ctx_capped && a->decode_verify == b->decode_verify;
}

/* price_base's n not yet asked: grows what pool p keeps to hold n and asks the predictor. Out of
 * line: price_base's kept answer stays a few instructions where it is inlined. */
static __attribute__((noinline)) void price_base_ask(eng_pool *p, int32_t n)
{
    eng_price_memo *m = &p->memo;
    if (n >= m->nbase) {
        int32_t cap = m->nbase ? 2 * m->nbase : 64;
        while (cap <= n)
            cap *= 2;
        m->base = sim_xrealloc(m->base, (size_t)cap * sizeof *m->base);
        m->base_st = sim_xrealloc(m->base_st, (size_t)cap * sizeof *m->base_st);
        memset(m->base_st + m->nbase, 0, (size_t)(cap - m->nbase) * sizeof *m->base_st);
        m->nbase = cap;
    }
    if (m->base_st[n] == 0) {
        const eng_predictor *pred = p->pred;
        eng_shape s = {.tokens = n, .num_seqs = n, .decode_seqs = n, .emit_seqs = n};
        m->base_st[n] =
            pred->ops->decode_base && pred->ops->decode_base(pred->st, &s, &m->base[n]) ? 1 : -1;
    }
}

/* The decode base of pool p's plain decode pass of n sequences (shape_plain_decode): asked of the
 * predictor once per n and kept (price_base_ask). NULL when the predictor has none for it. */
static inline const eng_decode_base *price_base(eng_pool *p, int32_t n)
{
    eng_price_memo *m = &p->memo;
    if (n >= m->nbase || m->base_st[n] == 0)
        price_base_ask(p, n);
    return m->base_st[n] > 0 ? &m->base[n] : NULL;
}

/* The predictor's price of a pass of shape s on pool p (iteration_ns), from what p kept when it
 * can be. */
static int64_t price_of(eng_pool *p, const eng_shape *s)
{
    const eng_predictor *pred = p->pred;
    int64_t ns;
    if (s->decode_seqs == 0 && s->prefill_tokens > 0) {
        eng_price_memo *m = &p->memo;
        if (!m->slot)
            m->slot = sim_xcalloc(ENG_PRICE_SLOTS, sizeof *m->slot);
        struct eng_price_slot *e = &m->slot[s->prefill_tokens % ENG_PRICE_SLOTS];
        if (e->ns > 0 && shape_same(&e->s, s)) {
            SIM_ASSERT(NULL, e->ns == pred->ops->iteration_ns(pred->st, s));
            return e->ns;
        }
        ns = pred->ops->iteration_ns(pred->st, s);
        *e = (struct eng_price_slot){*s, ns};
        return ns;
    }
    const eng_decode_base *b;
    if (shape_plain_decode(s) && (b = price_base(p, s->num_seqs))) {
        ns = pred->ops->decode_ns(pred->st, b, s->decode_ctx);
        SIM_ASSERT(NULL, ns == pred->ops->iteration_ns(pred->st, s));
        return ns;
    }
    return pred->ops->iteration_ns(pred->st, s);
}

/* Whether s is a step of its num_seqs sequences each verifying k > 0 drafts and nothing else (no
 * prefill chunk, padded slot or cap): its passes' prices are their bases' (spec_base) at its
 * contexts. */
static inline int shape_plain_verify(const eng_shape *s, int32_t k)
{
    int64_t n = s->num_seqs;
    return k > 0 && s->decode_verify == k && s->decode_seqs == n && s->tokens == n * (k + 1) &&
           s->emit_seqs == n * (k + 1) && s->prefill_seqs == 0 && s->prefill_tokens == 0 &&
           s->prefill_pairs == 0 && s->prefill_kv == 0 && s->prefill_q2 == 0 && s->cap == 0 &&
           s->cap_chunked == 0 && s->prefill_pairs_capped == 0 && s->prefill_kv_capped == 0 &&
           s->decode_ctx_capped == 0;
}

/* The decode bases of pool p's passes for a step of n sequences verifying k drafts
 * (shape_plain_verify): the target's pass, and the drafter's passes as draft_time forms them
 * (its first over the target's tokens, emitting one token per sequence, then one token per
 * sequence). 0 when a predictor has none for them or the drafter has a cap. */
static int spec_bases(const eng_pool *p, int32_t n, int32_t k, struct eng_spec_base *b)
{
    const eng_predictor *pred = p->pred, *dr = p->draft;
    eng_shape s = {0};
    b->packed = 0;
    eng_shape_add_verify(&s, n, 0, 0, k);
    s.emit_seqs = n * (k + 1);
    if (!pred->ops->decode_base || !pred->ops->decode_base(pred->st, &s, &b->target))
        return 0;
    if (!dr)
        return 1;
    int32_t chunked;
    if (eng_shape_cap(&p->cfg.spec.draft, &chunked) != 0 || !dr->ops->decode_base)
        return 0;
    s.emit_seqs = n;
    eng_shape q = {.tokens = n, .num_seqs = n, .decode_seqs = n, .emit_seqs = n};
    if (!dr->ops->decode_base(dr->st, &s, &b->first) ||
        (k > 1 && !dr->ops->decode_base(dr->st, &q, &b->draft)))
        return 0;
    if (k <= 1)
        b->draft = b->first; /* (not read) */
    b->packed =
        dr->ops == pred->ops && pred->ops->verify_pack && dr->ops->decode_passes_ns &&
        pred->ops->verify_pack(pred->st, &b->target, dr->st, &b->first, &b->draft, k, &b->vp);
    return 1;
}

/* Pool p's bases for a step of n sequences verifying k drafts: asked of the predictors once per
 * n (and k) and kept. NULL when they have none for it. */
static const struct eng_spec_base *spec_base(eng_pool *p, int32_t n, int32_t k)
{
    eng_price_memo *m = &p->memo;
    if (n >= m->nspec) {
        int32_t cap = m->nspec ? 2 * m->nspec : 64;
        while (cap <= n)
            cap *= 2;
        m->spec = sim_xrealloc(m->spec, (size_t)cap * sizeof *m->spec);
        memset(m->spec + m->nspec, 0, (size_t)(cap - m->nspec) * sizeof *m->spec);
        m->nspec = cap;
    }
    struct eng_spec_base *b = &m->spec[n];
    if (b->k != k) {
        b->k = k;
        b->st = spec_bases(p, n, k, b) ? 1 : -1;
    }
    return b->st > 0 ? b : NULL;
}

/* The target's and the drafter's passes of a step s of plain verifies (shape_plain_verify) from
 * their bases b: each pass priced and rounded on its own, as iteration_ns and
 * eng_predictor_passes_ns price them (draft_time: the drafter's j-th one-token pass over
 * contexts j * n longer). *draft: the drafter's. */
__attribute__((always_inline)) static inline int64_t spec_gpu_in(const eng_pool *p,
                                                                 const struct eng_spec_base *b,
                                                                 const eng_shape *s, int32_t k,
                                                                 int64_t *draft)
{
    const eng_predictor *pred = p->pred, *dr = p->draft;
    int64_t ctx = s->decode_ctx, n = s->num_seqs, d = 0;
    if (b->packed) { /* the passes at once */
        int64_t gpu = pred->ops->verify_ns(pred->st, &b->target, dr->st, &b->first, &b->draft,
                                           &b->vp, k, ctx, n, draft);
        return gpu + *draft;
    }
    int64_t gpu = pred->ops->decode_ns(pred->st, &b->target, ctx);
    if (dr && dr->ops->decode_passes_ns) {
        d = dr->ops->decode_passes_ns(dr->st, &b->first, &b->draft, k, ctx, n);
    } else if (dr) {
        d = dr->ops->decode_ns(dr->st, &b->first, ctx);
        for (int32_t j = 1; j < k; j++)
            d += dr->ops->decode_ns(dr->st, &b->draft, ctx + j * n);
    }
    *draft = d;
    return gpu + d;
}

/* spec_gpu_in out of line, for the steps priced afresh (step_gpu_of); a decode run's steps
 * inline it (run_spec_gpu). */
static __attribute__((noinline)) int64_t spec_gpu(const eng_pool *p, const struct eng_spec_base *b,
                                                  const eng_shape *s, int32_t k, int64_t *draft)
{
    return spec_gpu_in(p, b, s, k, draft);
}

static void price_memo_free(eng_price_memo *m)
{
    SIM_FREE_ALL(m->base, m->base_st, m->slot, m->spec);
    memset(m, 0, sizeof *m);
}

/* GPU time gpu on r, under a `slow` fault (fault.c) longer by its factor. */
static inline int64_t slowed(const eng_replica *r, int64_t gpu)
{
    return r->slow > 0 ? (int64_t)((double)gpu * r->slow + 0.5) : gpu;
}

/* step_gpu of s, its passes priced from the bases b when s is a step of plain verifies
 * (shape_plain_verify; b: spec_base's for it), else (b NULL) from its shape. */
static inline int64_t step_gpu_of(eng_replica *r, const eng_shape *s, int32_t k,
                                  const struct eng_spec_base *b, int64_t *draft)
{
    const eng_predictor *pred = r->pool->pred;
    int64_t gpu;
    if (b) {
        SIM_ASSERT(r->e->ctx, shape_plain_verify(s, k) && b == spec_base(r->pool, s->num_seqs, k));
        gpu = spec_gpu(r->pool, b, s, k, draft);
        SIM_ASSERT(r->e->ctx, *draft == draft_time(r, s, k) &&
                                  gpu == pred->ops->iteration_ns(pred->st, s) + *draft);
    } else {
        /* draft_time's own first answer, without its call where nothing is drafted */
        *draft = r->pool->draft && k > 0 ? draft_time(r, s, k) : 0;
        gpu = price_of(r->pool, s) + *draft;
    }
    if (r->pending_xfer_bytes && pred->ops->transfer_ns)
        gpu += pred->ops->transfer_ns(pred->st, r->pending_xfer_bytes);
    r->pending_xfer_bytes = 0;
    return slowed(r, gpu);
}

/* step_gpu_of of a decode run's step of plain verifies from its bases b (run_ctx.sb), the
 * passes' pricing inlined. Out of line: the plain runs' loop stays as small as it was. */
static __attribute__((noinline)) int64_t run_spec_gpu(eng_replica *r, const eng_shape *s, int32_t k,
                                                      const struct eng_spec_base *b, int64_t *draft)
{
    const eng_predictor *pred = r->pool->pred;
    SIM_ASSERT(r->e->ctx, shape_plain_verify(s, k) && b == spec_base(r->pool, s->num_seqs, k));
    int64_t gpu = spec_gpu_in(r->pool, b, s, k, draft);
    SIM_ASSERT(r->e->ctx, *draft == draft_time(r, s, k) &&
                              gpu == pred->ops->iteration_ns(pred->st, s) + *draft);
    if (r->pending_xfer_bytes && pred->ops->transfer_ns)
        gpu += pred->ops->transfer_ns(pred->st, r->pending_xfer_bytes);
    r->pending_xfer_bytes = 0;
    return slowed(r, gpu);
}

/* The GPU time of a step of shape s whose decodes verify k drafts: the target's forward pass,
 * the drafter's (*draft, included) and the swap traffic charged to it. */
static int64_t step_gpu(eng_replica *r, const eng_shape *s, int32_t k, int64_t *draft)
{
    const struct eng_spec_base *b =
        shape_plain_verify(s, k) ? spec_base(r->pool, s->num_seqs, k) : NULL;
    return step_gpu_of(r, s, k, b, draft);
}

/* The CPU time of a step of num_seqs sequences; cont: a continuation of a fixed multi-step run.
 * MODEL: vLLM 0.6 multi-step scheduling runs the scheduler and prepares inputs once per run; the
 * later steps advance the inputs on the GPU (advance_step) */
static int64_t step_cpu(const eng_replica *r, int64_t num_seqs, int cont)
{
    const eng_cpu_overhead *c = &r->pool->cfg.cpu;
    return cont ? 0 : (int64_t)((c->per_iteration_us + c->per_seq_us * num_seqs) * 1e3 + 0.5);
}

/* Debug builds: one step in RUN_CHECK_EVERY of those a run forms by moving the step before it
 * (the summed contexts one token further) is formed again as the step-by-step engine forms it
 * (shape_of, step_cpu) and must be the same to the field, so its price is the same to the ns. */
#define RUN_CHECK_EVERY 64
static void run_step_check(const eng_replica *r, int64_t iter, int32_t k, const eng_shape *s,
                           int64_t cpu)
{
#ifdef SIM_DEBUG
    if (iter % RUN_CHECK_EVERY != 0)
        return;
    eng_shape f;
    shape_of(r, k, &f);
    SIM_CHECK(r->e->ctx, memcmp(&f, s, sizeof f) == 0);
    SIM_CHECK(r->e->ctx, cpu == step_cpu(r, s->num_seqs, 0));
#else
    (void)r, (void)iter, (void)k, (void)s, (void)cpu;
#endif
}

/* place_step of a replica whose CPU work overlaps the GPU's (async) or whose steps wait for
 * offloaded KV: out of line, so the steps of the others stay short. */
static __attribute__((noinline)) int64_t place_step_slow(eng_replica *r, int64_t now, int64_t cpu,
                                                         int64_t gpu)
{
    int64_t gpu_start;
    if (r->pool->cfg.cpu.async) {
        /* MODEL: async scheduling (vLLM v0.6 multi-step/async output, SGLang overlap): the CPU
         * work of this iteration ran while the previous iteration's GPU work did, so the GPU
         * starts when both are done. That needs a previous iteration running until now: after
         * an idle stretch nothing was in flight to hide the CPU work behind. */
        int64_t cpu_from = r->iter > 0 && r->gpu_free_at == now ? r->gpu_start : now;
        gpu_start = cpu_from + cpu > now ? cpu_from + cpu : now;
    } else {
        gpu_start = now + cpu;
    }
    int64_t end = r->off ? eng_off_step_end(r, gpu_start, gpu) : gpu_start + gpu;
    r->gpu_start = end - gpu;
    r->gpu_free_at = end;
    return end;
}

/* Places a step formed at now, with cpu and gpu ns of work, on r's GPU; returns its end. */
static inline int64_t place_step(eng_replica *r, int64_t now, int64_t cpu, int64_t gpu)
{
    if (r->pool->cfg.cpu.async || r->off)
        return place_step_slow(r, now, cpu, gpu);
    int64_t gpu_start = now + cpu, end = gpu_start + gpu;
    r->gpu_start = gpu_start;
    r->gpu_free_at = end;
    return end;
}

/* The steps of a batch nothing can join (static batching) up to the cohort's next finish, as one
 * event: the first is formed (shape s); each later one costs its own shape, every context one
 * token longer. Returns the last one's end. */
static int64_t fixed_batch_run(eng_replica *r, eng_shape *s, int64_t run, int64_t cpu, int64_t gpu,
                               int64_t end)
{
    eng_engine *e = r->e;
    const eng_predictor *pred = r->pool->pred;
    int64_t now = sim_now(e->ctx);
    /* MODEL: the same decode batch for k steps: each step's cost from its own shape (every
     * context one token longer), no event in between */
    if (run > r->capsteps) {
        r->capsteps = (int32_t)run;
        r->step_end = sim_xrealloc(r->step_end, (size_t)run * sizeof *r->step_end);
    }
    r->step_end[0] = end;
    int64_t growth = eng_cohort_capped_growth(&r->co);
    eng_decode_base base; /* the steps differ only in their summed contexts */
    int fast = growth == 0 && pred->ops->decode_base && pred->ops->decode_base(pred->st, s, &base);
    for (int64_t j = 1; j < run; j++) {
        s->decode_ctx += s->decode_seqs;
        s->decode_ctx_capped += growth;
        int64_t start = end;
        int64_t ns = fast ? pred->ops->decode_ns(pred->st, &base, s->decode_ctx)
                          : pred->ops->iteration_ns(pred->st, s);
        SIM_ASSERT(e->ctx, !fast || ns == pred->ops->iteration_ns(pred->st, s));
        gpu = slowed(r, ns);
        end = start + cpu + gpu;
        r->step_end[j] = end;
        eng_metrics_iteration_cpu(&e->m, cpu, 1);
        record_step(r, r->iter + j, now, start, cpu, gpu, end, s, s->emit_seqs, 0);
    }
    r->nsteps = (int32_t)run;
    r->gpu_start = end - gpu;
    r->gpu_free_at = end;
    return end;
}

/* Whether r's batch may open a decode run: its policy runs them, the batch is the whole cohort
 * and nothing else, and nothing would happen between its steps but the decodes (no output held
 * back by async processing, no fixed multi-step run, no transfer waiting to join). */
static int run_possible(const eng_replica *r)
{
    const eng_batch *b = &r->batch;
    if (!r->ops->run_steps || !b->decode || b->nchunks > 0 || b->fixed_steps > 1 ||
        r->run_left > 0 || r->nunseen > 0 || r->co.n == 0 || r->e->cfg.max_run_steps == 1 ||
        r->fetched > 0 || r->pipe || /* a pipeline's stages are shared with its other batches */
        off_pending(r))
        return 0;
    return r->pool->role == ENG_ROLE_MIXED ||
           (r->pool->role == ENG_ROLE_DECODE && !r->pdq.head && r->njoining == 0);
}

static void no_finish(eng_replica *r, eng_request *rq)
{
    SIM_CHECK(r->e->ctx, !"a decode run's inner step finished a request");
}

/* The output tokens of a decode run's steps when no recorder takes them: summed by the second
 * they come out in, from (the start of) the first step that put tokens in that second. */
typedef struct run_tokens {
    int64_t n, from, end, second_end;
} run_tokens;

static void run_tokens_flush(eng_engine *e, const run_tokens *t)
{
    int64_t first = e->tot.first_arrival_ns;
    if (t->n > 0)
        eng_metrics_tokens(&e->m, t->from - first, t->end - first, t->n);
}

static inline void run_tokens_add(eng_engine *e, run_tokens *t, int64_t start, int64_t end,
                                  int64_t n)
{
    int64_t first = e->tot.first_arrival_ns;
    if (t->n > 0 && end >= t->second_end) {
        run_tokens_flush(e, t);
        t->n = 0;
    }
    if (t->n == 0) {
        t->from = start;
        t->second_end = first + ((end - first) / 1000000000 + 1) * 1000000000;
    }
    t->n += n;
    t->end = end;
}

/* A decode run under way: its steps' drafts (k, and kp for the step after), the step in flight's
 * shape and CPU time, and its tokens summed. */
typedef struct run_ctx {
    eng_shape s;
    int shaped; /* s is the step in flight's, formed here */
    int respec; /* and it verifies drafts, with no padded slot of async output in it */
    int32_t k, kp;
    int64_t cpu;
    int64_t ncpu; /* steps formed at cpu whose CPU samples are not yet added */
    run_tokens tok;
    /* the steps of a plain cohort (run_plain_shape's, then plain_steps's, whose shapes differ
     * from s only in decode_ctx): priced from base (eng_predictor_ops.decode_ns) while fast;
     * cleared when s is shaped afresh */
    int fast;
    int plain_s; /* s is run_plain_shape's: no field but those it sets is non-zero */
    eng_decode_base base;
    /* while fast, the prices of the steps after the one in flight, priced with it or a step
     * before (eng_predictor_ops.decode_steps_ns): ahead[i] for iahead <= i < nahead, the next
     * step's first, each step's contexts a token further per member; cleared with fast */
    int64_t ahead[ENG_DECODE_STEPS];
    int32_t iahead, nahead;
    /* the bases of a speculative step of plain verifies (spec_base) while s is one, found at the
     * first step after it that moves only the contexts (run_respec_shape); sb_known: found */
    const struct eng_spec_base *sb;
    int sb_known;
} run_ctx;

/* A decode run's context before its first step, k and kp its drafts: the fields read before a
 * step writes them (s, base and ahead are read only once a step shaped them: c->shaped,
 * c->fast, c->nahead), not the whole struct. */
static inline void run_ctx_init(run_ctx *c, int32_t k, int32_t kp)
{
    c->shaped = c->respec = 0;
    c->k = k;
    c->kp = kp;
    c->cpu = c->ncpu = 0;
    c->tok = (run_tokens){0};
    c->fast = c->plain_s = 0;
    c->iahead = c->nahead = 0;
    c->sb = NULL;
    c->sb_known = 0;
}

/* Adds the CPU samples of the run's steps formed at c->cpu so far. */
static void run_cpu_flush(eng_engine *e, run_ctx *c)
{
    eng_metrics_iterations_cpu_each(&e->m, c->cpu, c->ncpu);
    c->ncpu = 0;
}

/* eng_cohort_need(r, k, 1), its one-class, no-draft answer (eng_cohort_plain_need) taken here
 * without the call. */
static inline int64_t next_need(const eng_replica *r, int32_t k)
{
    if (k == 0 && r->co.nclass == 1 && r->kv.lay.wm == 0) {
        int64_t need = eng_cohort_plain_need(r);
        SIM_ASSERT(r->e->ctx, need == eng_cohort_need(r, 0, 1));
        return need;
    }
    return eng_cohort_need(r, k, 1);
}

/* Ends a decode run's step in flight at end (none of its members finishes) and says whether the
 * next step's blocks fit (*need: how many it takes). */
static inline int run_step_end(eng_replica *r, const run_ctx *c, int plain, int64_t end,
                               int64_t *need)
{
    if (plain) {
        eng_cohort_plain_end(r, end);
        *need = eng_cohort_plain_need(r);
    } else if (c->k > 0) {
        *need = eng_cohort_end_need(r, end, c->k, no_finish);
    } else {
        eng_cohort_end(r, end, no_finish);
        *need = next_need(r, c->k);
    }
    r->iter++;
    return *need <= eng_kv_nfree(&r->kv) &&
           (c->kp == c->k || next_need(r, c->kp) <= eng_kv_nfree(&r->kv));
}

/* Forms a decode run's speculative step after one shaped here (run_ctx.respec): the same members
 * and padded slots verifying as many drafts, so only the summed contexts move (the cohort's by
 * the tokens its classes accepted). Returns the step's output tokens. Out of line: the plain
 * runs' loop stays as small as it was. */
static __attribute__((noinline)) int64_t run_respec_shape(eng_replica *r, run_ctx *c)
{
    int64_t tokens = eng_cohort_begin_step(r, c->k);
    c->s.decode_ctx = eng_cohort_ctx_sum(&r->co) + r->batch.pad_ctx + r->run_pad_ctx;
    if (r->co.cap > 0) /* (else both 0, as the step shaped afresh had them) */
        c->s.decode_ctx_capped = eng_cohort_capped_sum(&r->co) + pads_capped(r, &r->batch);
    run_step_check(r, r->iter, c->k, &c->s, c->cpu);
    if (!c->sb_known) { /* the steps after it share them: only the contexts move */
        c->sb = shape_plain_verify(&c->s, c->k) ? spec_base(r->pool, c->s.num_seqs, c->k) : NULL;
        c->sb_known = 1;
    }
    return tokens;
}

/* The CPU time of a decode run's step of c->s, its samples kept in the steps' order. */
static inline void run_step_cpu(eng_replica *r, run_ctx *c)
{
    int64_t cpu = step_cpu(r, c->s.num_seqs, 0);
    if (cpu != c->cpu && c->ncpu > 0) /* the samples in the steps' order */
        run_cpu_flush(r->e, c);
    c->cpu = cpu;
    c->shaped = 1;
}

/* Whether a plain cohort's step (eng_cohort_plain, no drafts) is shaped by run_plain_shape: no
 * padded slot of any kind and no prefill chunk beside it. */
static inline int run_plain_shapable(const eng_replica *r)
{
    const eng_batch *b = &r->batch;
    return b->nchunks == 0 && b->pad_seqs == 0 && b->pad_ctx == 0 && r->async_pad_seqs == 0 &&
           r->async_pad_ctx == 0 && r->run_pad_seqs == 0 && r->run_pad_ctx == 0;
}

/* The price of run_plain_shape's step c->s (from c->base) with those of the plain steps after it
 * up to where plain_steps stops at the cohort's next finish, at once (decode_steps_ns), kept in
 * c->ahead for run_step_gpu and plain_steps_lean to take in their order: where the step is the
 * last before a finish (or the predictor has no decode_steps_ns), nothing is kept and
 * run_step_gpu prices it alone. A price kept for a step that does not run is dropped. */
static inline void plain_shape_ahead(const eng_replica *r, run_ctx *c)
{
    const eng_predictor *pred = r->pool->pred;
    const eng_cclass *cl = &r->co.cls[0];
    const eng_request *top = eng_heap_top(&cl->fin);
    if (!pred->ops->decode_steps_ns || !top)
        return;
    /* plain_steps' bound: the step in flight finishes none while t <= the top's finish - 2 */
    int64_t room = top->c_fin_t - 2 - cl->t;
    if (room < 0)
        return;
    int32_t k = room + 2 < ENG_DECODE_STEPS ? (int32_t)room + 2 : ENG_DECODE_STEPS;
    c->nahead = pred->ops->decode_steps_ns(pred->st, &c->base, c->s.decode_ctx, c->s.decode_seqs, k,
                                           c->ahead);
}

/* Forms a decode run's step of a plain cohort (run_plain_shapable) that was not shaped here (the
 * run's first, or one after members finished), its `need` blocks taken: what step_shape forms,
 * the cohort's n sequences over their summed context and nothing else (eng_cohort_begin_step of
 * no drafts moves nothing else that a plain step reads: every class advances 1, none finishes
 * short), its base taken for its price (run_ctx.fast). Returns the step's output tokens.
 * Out of line: the plain runs' loop stays as small as it was. */
static __attribute__((noinline)) int64_t run_plain_shape(eng_replica *r, run_ctx *c, int64_t need)
{
    int32_t n = r->co.n;
    eng_cohort_plain_begin(r, need);
    if (c->plain_s) { /* the rest of s is 0 already */
        c->s.tokens = n;
        c->s.num_seqs = n;
        c->s.decode_seqs = n;
        c->s.decode_ctx = eng_cohort_ctx_sum(&r->co);
        c->s.emit_seqs = n;
    } else {
        c->s = (eng_shape){.tokens = n,
                           .num_seqs = n,
                           .decode_seqs = n,
                           .decode_ctx = eng_cohort_ctx_sum(&r->co),
                           .emit_seqs = n};
        c->plain_s = 1;
    }
#ifdef SIM_DEBUG
    eng_shape f;
    shape_of(r, 0, &f);
    SIM_CHECK(r->e->ctx, memcmp(&f, &c->s, sizeof f) == 0);
#endif
    c->respec = 0;
    c->sb = NULL;
    c->sb_known = 0;
    run_step_cpu(r, c);
    /* priced from its base, which the plain steps after it share (plain_steps) */
    const eng_decode_base *b = price_base(r->pool, n);
    c->fast = b != NULL;
    c->iahead = c->nahead = 0;
    if (b) {
        c->base = *b;
        plain_shape_ahead(r, c);
    }
    return n;
}

/* Forms a decode run's next step (its `need` blocks taken); of a plain cohort whose step was
 * shaped here, only the summed context moves. Returns the step's output tokens. */
__attribute__((always_inline)) static inline int64_t run_step_shape(eng_replica *r, run_ctx *c,
                                                                    int plain, int64_t need)
{
    r->batch.pad_ctx += r->batch.pad_seqs; /* padded slots one token longer, as next_batch
                                              counts them */
    if (plain && c->shaped) {
        /* every member and padded slot one token further */
        eng_cohort_plain_begin(r, need);
        c->s.decode_ctx += c->s.decode_seqs;
        SIM_ASSERT(r->e->ctx, c->s.decode_ctx == eng_cohort_ctx_sum(&r->co) + r->batch.pad_ctx);
        run_step_check(r, r->iter, c->k, &c->s, c->cpu);
        return r->co.n;
    }
    if (plain && run_plain_shapable(r))
        return run_plain_shape(r, c, need);
    c->fast = 0;
    c->nahead = 0;
    c->plain_s = 0;
    if (c->shaped && c->respec && r->async_pad_seqs == 0)
        return run_respec_shape(r, c);
    c->respec = c->k > 0 && r->async_pad_seqs == 0;
    c->sb = NULL;
    c->sb_known = 0;
    int64_t tokens = step_shape(r, c->k, &c->s);
    run_step_cpu(r, c);
    return tokens;
}

/* Counts a decode run's step from start to end: its record, or, with no recorder, its iteration,
 * busy time and tokens summed. */
static inline void run_step_count(eng_replica *r, run_ctx *c, int64_t start, int64_t gpu,
                                  int64_t end, int64_t tokens, int64_t draft)
{
    eng_engine *e = r->e;
    if (e->rec && e->rec->on_iteration) {
        record_step(r, r->iter, start, start, c->cpu, gpu, end, &c->s, tokens, draft);
        return;
    }
    e->tot.iterations++;
    e->tot.pool_busy_ns[r->pool->id] += end - start;
    e->tot.pool_gpu_ns[r->pool->id] += gpu;
    run_tokens_add(e, &c->tok, start, end, tokens);
}

/* step_gpu of a decode run's step c->s: from the run's base while c->fast (no drafts then;
 * debug builds price it in full too), priced ahead when c->ahead has it. */
static inline int64_t run_step_gpu(eng_replica *r, run_ctx *c, int64_t *draft)
{
    if (!c->fast) /* (c->sb: only the contexts moved since its bases were found) */
        return c->sb ? run_spec_gpu(r, &c->s, c->k, c->sb, draft) : step_gpu(r, &c->s, c->k, draft);
    const eng_predictor *pred = r->pool->pred;
    *draft = 0;
    int64_t gpu = c->iahead < c->nahead ? c->ahead[c->iahead++]
                                        : pred->ops->decode_ns(pred->st, &c->base, c->s.decode_ctx);
    SIM_ASSERT(r->e->ctx, c->k == 0 && gpu == pred->ops->iteration_ns(pred->st, &c->s));
    if (r->pending_xfer_bytes && pred->ops->transfer_ns)
        gpu += pred->ops->transfer_ns(pred->st, r->pending_xfer_bytes);
    r->pending_xfer_bytes = 0;
    return slowed(r, gpu);
}

/* Forms and runs a decode run's next step from *end, its `need` blocks taken (*end its end, *n
 * one more). */
__attribute__((always_inline)) static inline void
run_step_next(eng_replica *r, run_ctx *c, int plain, int64_t need, int64_t *end, int64_t *n)
{
    int64_t start = *end, draft;
    int64_t tokens = run_step_shape(r, c, plain, need);
    int64_t gpu = run_step_gpu(r, c, &draft);
    *end = place_step(r, start, c->cpu, gpu);
    (*n)++;
    c->ncpu++;
    run_step_count(r, c, start, gpu, *end, tokens, draft);
}

/* Ends a decode run's step in flight at *end and runs the next one (*end its end, *n one more);
 * 0 when the next one's blocks would not fit (the step ended, nothing run). */
__attribute__((always_inline)) static inline int run_step(eng_replica *r, run_ctx *c, int plain,
                                                          int64_t *end, int64_t *n)
{
    int64_t need;
    if (!run_step_end(r, c, plain, *end, &need))
        return 0;
    /* the step ended may make the cohort plain (its fresh members had their first gap) */
    run_step_next(r, c, plain || (c->k == 0 && c->kp == 0 && eng_cohort_plain(r)), need, end, n);
    return 1;
}

/* Whether a decode run may go on past a step that finishes requests: the step's event would only
 * finish them and ask the policy for the next batch (no per-batch hook, no count of the run's
 * steps kept by the policy, no output held back by async processing, no padded slots, no other
 * role's or tier's work a finish would start, no autoscaler counting finishes). Drafts may: the
 * finishing step's end is eng_cohort_end_step on both paths (its rejected drafts' blocks given
 * back, every class advanced by its draw), and the next step's drafts are the engine's rule
 * (spec_k, no policy's choice), asked again for the members left (run_finish_end). */
static int run_through_finishes(const eng_replica *r)
{
    const eng_engine *e = r->e;
    return r->ops->runs_past_finishes && !r->ops->on_batch_end && !r->ops->on_run &&
           !r->pool->cfg.cpu.async && r->pool->role == ENG_ROLE_MIXED && r->batch.pad_seqs == 0 &&
           r->batch.speculate < 0 && !r->off && !e->as;
}

/* Ends a decode run's step in flight at end as its event would: the clock moved to end (nothing
 * else comes before), the members whose output it completes finished, the policy asked again.
 * Returns 1 when the policy forms the same decode batch next (the whole cohort, nothing to admit)
 * and its blocks fit (*need); 0 when the event must ask the policy (the step ended here). */
static int run_finish_end(eng_replica *r, run_ctx *c, int64_t end, int64_t *need)
{
    eng_engine *e = r->e;
    sim_advance(e->ctx, end);
    eng_cohort_end(r, end, finish);
    r->iter++;
    c->shaped = 0; /* members left: the next step is shaped afresh */
    if (e->failed || r->co.n == 0 || r->ops->run_steps(r->st, r) <= 1)
        return 0;
    /* the drafts of the step the event would form, the engine's rule for the members left
     * (run_through_finishes: no policy's choice): fewer may speculate again (spec.disable_batch);
     * the policy's block check (eng_decode_blocks_needed) counts the same */
    if (e->cfg.spec.method != ENG_SPEC_NONE)
        c->k = c->kp = spec_k(r, NULL);
    *need = next_need(r, c->k);
    return *need <= eng_kv_nfree(&r->kv);
}

/* Whether plain_steps' steps, priced from their base (run_ctx.fast), may run as
 * plain_steps_lean runs them: what run_step checks at each step and none of them moves is
 * checked once (no padded slot, no transfer to price, no slowed GPU, no async CPU or offload
 * tier placing the step, no recorder of iterations or ITL gaps; a prefix store is told of the
 * blocks taken as run_step tells it). */
static inline int plain_lean(const eng_replica *r)
{
    const eng_engine *e = r->e;
    return r->batch.pad_seqs == 0 && r->pending_xfer_bytes == 0 && !(r->slow > 0) &&
           !r->pool->cfg.cpu.async && !r->off &&
           !(e->rec && (e->rec->on_iteration || e->rec->on_itl));
}

/* plain_steps' loop where plain_lean holds: each step what run_step does there (its end, its
 * blocks, its price from the base, its place on the GPU, its count), the run's state in locals;
 * ps: r has a prefix store, told of the blocks each step takes. Returns the last step's end. */
static inline __attribute__((always_inline)) int64_t
plain_steps_lean_as(eng_replica *r, run_ctx *c, int64_t *n, int64_t most, int64_t until,
                    int64_t end, int64_t last_t, int *ended, int ps)
{
    eng_engine *e = r->e;
    const eng_cclass *cl = &r->co.cls[0];
    const eng_predictor *pred = r->pool->pred;
    int64_t (*decode_ns)(const void *, const eng_decode_base *, int64_t) = pred->ops->decode_ns;
    int32_t (*decode_steps_ns)(const void *, const eng_decode_base *, int64_t, int64_t, int32_t,
                               int64_t[ENG_DECODE_STEPS]) = pred->ops->decode_steps_ns;
    const void *st = pred->st;
    int64_t steps = *n, cpu = c->cpu, ncpu = c->ncpu;
    /* the prices of the next steps priced at once (decode_steps_ns) with this one or a step
     * before (run_plain_shape's): c->ahead[i] of iahead <= i < nahead */
    int64_t *ahead = c->ahead;
    int32_t iahead = c->iahead, nahead = c->nahead;
    int32_t pool = r->pool->id;
    SIM_ASSERT(e->ctx, c->fast && c->k == 0 && c->kp == 0 && c->shaped);
    /* the class's t goes up by one a step: it passes last_t at the step stop, if before most */
    int64_t room = last_t - cl->t, stop = room < most - steps ? steps + room + 1 : most;
    while (steps < stop && end < until) {
        SIM_ASSERT(e->ctx, eng_cohort_plain(r) && !eng_cohort_step_finishes(&r->co));
        SIM_ASSERT(e->ctx, steps < most && cl->t <= last_t);
        /* run_step_end: the step in flight ends, the next one's blocks */
        eng_cohort_plain_end_as(r, end, 0);
        int64_t need = eng_cohort_plain_need(r);
        r->iter++;
        if (need > eng_kv_nfree(&r->kv)) {
            *ended = 1; /* the policy preempts first: it decides at this step's end */
            break;
        }
        /* run_step_next: every member one token further, priced from the base */
        int64_t start = end;
        eng_cohort_plain_begin_as(r, need, ps);
        c->s.decode_ctx += c->s.decode_seqs;
        SIM_ASSERT(e->ctx, c->s.decode_ctx == eng_cohort_ctx_sum(&r->co) + r->batch.pad_ctx);
        run_step_check(r, r->iter, c->k, &c->s, cpu);
        int64_t tokens = r->co.n;
        int64_t gpu;
        if (iahead < nahead) { /* priced with a step before: every context a token further each */
            gpu = ahead[iahead++];
        } else if (decode_steps_ns) { /* this step and up to the loop's bound past it */
            int64_t k = stop - steps;
            nahead = decode_steps_ns(st, &c->base, c->s.decode_ctx, c->s.decode_seqs,
                                     k < ENG_DECODE_STEPS ? (int32_t)k : ENG_DECODE_STEPS, ahead);
            gpu = ahead[0];
            iahead = 1;
        } else {
            gpu = decode_ns(st, &c->base, c->s.decode_ctx);
        }
        SIM_ASSERT(e->ctx, gpu == pred->ops->iteration_ns(pred->st, &c->s));
        SIM_ASSERT(e->ctx, gpu == slowed(r, gpu));
        int64_t gpu_start = start + cpu;
        end = gpu_start + gpu;
        r->gpu_start = gpu_start;
        r->gpu_free_at = end;
        steps++;
        ncpu++;
        e->tot.iterations++;
        e->tot.pool_busy_ns[pool] += end - start;
        e->tot.pool_gpu_ns[pool] += gpu;
        run_tokens_add(e, &c->tok, start, end, tokens);
    }
    *n = steps;
    c->ncpu = ncpu;
    c->iahead = iahead;
    c->nahead = nahead;
    return end;
}

/* plain_steps_lean_as of a replica without a prefix store, and of one with (told of the blocks
 * each step takes, eng_kv_alloc_derived): each its own loop. */
static __attribute__((noinline)) int64_t plain_steps_lean(eng_replica *r, run_ctx *c, int64_t *n,
                                                          int64_t most, int64_t until, int64_t end,
                                                          int64_t last_t, int *ended)
{
    return plain_steps_lean_as(r, c, n, most, until, end, last_t, ended, 0);
}
static __attribute__((noinline)) int64_t plain_steps_lean_ps(eng_replica *r, run_ctx *c, int64_t *n,
                                                             int64_t most, int64_t until,
                                                             int64_t end, int64_t last_t,
                                                             int *ended)
{
    return plain_steps_lean_as(r, c, n, most, until, end, last_t, ended, 1);
}

/* A decode run's steps once they are plain (eng_cohort_plain, no drafts) and shaped here, up to
 * the run's bounds, as decode_run's loop runs them: nothing joins or leaves the cohort between
 * them, so its next finish is known once (the step that brings the class's t to the top
 * member's finish) and plainness holds throughout. Returns the last step's end. */
static int64_t plain_steps(eng_replica *r, run_ctx *c, int64_t *n, int64_t most, int64_t until,
                           int64_t end, int *ended)
{
    const eng_cclass *cl = &r->co.cls[0];
    const eng_request *top = eng_heap_top(&cl->fin);
    /* the last t at which the step in flight finishes none (eng_cohort_step_finishes) */
    int64_t last_t = top ? top->c_fin_t - 2 : INT64_MAX;
    const eng_predictor *pred = r->pool->pred;
    /* the steps differ from the one in flight only in their summed contexts: its base, unless
     * it was priced from one (run_plain_shape; only the contexts moved since) */
    if (!c->fast)
        c->fast = pred->ops->decode_base && pred->ops->decode_base(pred->st, &c->s, &c->base);
    if (c->fast && plain_lean(r))
        return r->kv.ps ? plain_steps_lean_ps(r, c, n, most, until, end, last_t, ended)
                        : plain_steps_lean(r, c, n, most, until, end, last_t, ended);
    while (*n < most && end < until && cl->t <= last_t) {
        SIM_ASSERT(r->e->ctx, eng_cohort_plain(r) && !eng_cohort_step_finishes(&r->co));
        if (!run_step(r, c, 1, &end, n)) {
            *ended = 1; /* the policy preempts first: it decides at this step's end */
            break;
        }
    }
    return end;
}

/* A decode run: the decode steps after the first that the policy would form the same
 * (run_steps), formed now, up to the simulation's next event, the cohort's next finish, or the
 * step whose blocks would not fit. Each step before the last is ended here at its end time as
 * its event would end it (its tokens, ITL samples and freed blocks, in the same order: nothing
 * else happens before the next event); the last ends by its event. When the step after the last
 * would not fit, the last is ended here too (*ended = 1) and the event only asks the policy.
 * Returns the event's time. */
static int64_t decode_run(eng_replica *r, int64_t end, int *ended)
{
    eng_engine *e = r->e;
    *ended = 0;
    if (!run_possible(r))
        return end;
    int64_t most = r->ops->run_steps(r->st, r);
    if (e->cfg.max_run_steps > 0 && most > e->cfg.max_run_steps)
        most = e->cfg.max_run_steps;
    int64_t until = sim_next_time(e->ctx), n = 1, need;
    int through = run_through_finishes(r);
    run_ctx c;
    run_ctx_init(&c, spec_k(r, &r->batch), spec_k(r, NULL));
    while (n < most && end < until) {
        if (eng_cohort_step_finishes(&r->co)) {
            if (!through)
                break;
            if (!run_finish_end(r, &c, end, &need)) {
                *ended = 1; /* the step ended here: its event only asks the policy */
                break;
            }
            /* the members left: a plain cohort's step is shaped afresh (run_plain_shape) */
            int plain = c.k == 0 && c.kp == 0 && eng_cohort_plain(r);
            run_step_next(r, &c, plain, need, &end, &n);
            until = sim_next_time(e->ctx); /* a finish may have scheduled an arrival */
            continue;
        }
        int plain = c.k == 0 && c.kp == 0 && eng_cohort_plain(r);
        if (plain && c.shaped) {
            end = plain_steps(r, &c, &n, most, until, end, ended);
            if (*ended)
                break;
            continue; /* at a bound, or the step in flight finishes requests */
        }
        if (!run_step(r, &c, plain, &end, &n)) {
            *ended = 1; /* the policy preempts first: it decides at this step's end */
            break;
        }
    }
    run_tokens_flush(e, &c.tok);
    /* the steps after the first, each the CPU work of its sequences */
    run_cpu_flush(e, &c);
    if (n > 1 && r->ops->on_run)
        r->ops->on_run(r->st, r, n);
    return end;
}

/* Forms and prices the batch's step (cont: a continuation of a fixed multi-step run: no
 * scheduler call, no CPU charged), records it and schedules its end: with the steps a run adds
 * (fixed_batch_run, decode_run), the end of the last. */
static void start_iteration(eng_replica *r, int64_t now, int cont)
{
    eng_engine *e = r->e;
    eng_shape s;
    int32_t k = spec_k(r, &r->batch);
    int64_t draft, tokens = step_shape(r, k, &s);
    int64_t gpu = step_gpu(r, &s, k, &draft), cpu = step_cpu(r, s.num_seqs, cont);
    int64_t end = place_step(r, now, cpu, gpu);
    if (r->pipe) /* through the stages, each after the batch before it */
        end = r->gpu_free_at = eng_pipe_place(r->pipe, r->gpu_start, gpu, s.tokens);
    r->busy = 1;
    eng_metrics_iteration_cpu(&e->m, cpu, 1);
    record_iteration(r, r->iter, now, now, cpu, gpu, end, &s, tokens, draft);
    r->preempted_now = 0;
    r->nsteps = 1;
    int64_t run = run_length(r);
    int ended = 0;
    if (run > 1)
        end = fixed_batch_run(r, &s, run, cpu, gpu, end);
    else
        end = decode_run(r, end, &ended);
    if (r->ending) { /* on_iteration_end runs or schedules it (iteration_ends) */
        r->end_due = 1;
        r->end_at = end;
        r->end_ended = ended;
        return;
    }
    r->iter_ev = sim_schedule(e->ctx, end, ENG_PRIO_ITER_END, on_iteration_end, r, ended);
}

static void kick(eng_replica *r)
{
    if (r->busy || r->e->failed)
        return;
    int64_t now = sim_now(r->e->ctx);
    if (r->pool->role != ENG_ROLE_MIXED)
        eng_pd_kick(r, now);
again:
    batch_reset(&r->batch);
    int n = r->ops->next_batch(r->st, r, &r->batch, now);
    if (n <= 0 && r->batch.nchunks == 0 && !r->batch.decode) {
        SIM_CHECK(r->e->ctx, r->batch.pad_seqs == 0);
        goto idle;
    }
    if (r->batch.decode && r->co.n == 0 && r->batch.nchunks == 0)
        goto idle; /* a decode step with nobody to decode */
    if (r->batch.decode && r->batch.nchunks == 0 && r->batch.fixed_steps > 1)
        r->run_left = r->batch.fixed_steps - 1;
    /* arrived during the last step: after the next one is formed; the policy has not looked at
     * them, so that step opens no decode run */
    r->fetched = fetch_now(r, now);
    start_iteration(r, now, 0);
    if (r->pool->role == ENG_ROLE_PREFILL && r->e->cfg.pd.mode != ENG_XFER_AFTER_PREFILL)
        eng_pd_started(r, now);
    return;
idle:
    if (fetch_now(r, now) > 0)
        goto again; /* nothing to run: the loop fetches what arrived and schedules it at once */
    /* no next step: what async output processing held back is delivered now, and no step
     * computes the finished sequences again */
    r->async_pad_seqs = 0;
    r->async_pad_ctx = 0;
    deliver_deferred(r, now);
}

static void on_wake(sim_ctx *ctx, void *obj, int64_t arg)
{
    eng_replica *r = obj;
    r->wake_at = -1;
    r->wake_ev = 0;
    kick(r);
}

void eng_replica_wake_at(eng_replica *r, int64_t t)
{
    int64_t now = sim_now(r->e->ctx);
    if (t < now)
        t = now;
    if (r->wake_ev && r->wake_at <= t)
        return;
    if (r->wake_ev)
        sim_cancel(r->e->ctx, r->wake_ev);
    r->wake_at = t;
    r->wake_ev = sim_schedule(r->e->ctx, t, ENG_PRIO_WAKE, on_wake, r, 0);
}

static void complete_chunk(eng_replica *r, const struct eng_chunk *ch, int64_t now)
{
    eng_engine *e = r->e;
    eng_request *rq = ch->rq;
    rq->prefilled += ch->tokens;
    SIM_ASSERT(e->ctx, rq->prefilled <= rq->prefill_target);
    if (!rq->kv_reserved) {
        /* MODEL: vLLM allocate_slots gives a chunk slots in every KV cache group, then
         * remove_skipped_blocks frees the windowed layers' blocks wholly before the window */
        int64_t keep = eng_lay_held(&r->kv.lay, rq->prefilled, 0);
        SIM_ASSERT(e->ctx, keep <= rq->kv_blocks);
        eng_kv_give(&r->kv, rq->kv_blocks - keep);
        rq->kv_blocks = (int32_t)keep;
    }
    /* MODEL: SGLang inserts a prefill's tokens into the radix tree once computed
     * (cache_unfinished_req); TensorRT-LLM stores context blocks for reuse after the context */
    if (r->kv.ps && r->kv.ps->mode == ENG_PC_AT_COMPLETION)
        eng_kv_register(&r->kv, rq, rq->prefilled);
    if (rq->prefilled < rq->prefill_target)
        return;
    /* the prefill's last position samples the next token */
    rq->generated++;
    rq->t_span_decode = now;
    if (rq->t_first_token < 0 && !rq->first_unseen) {
        router_prefilled(r, rq);
        if (r->pool->cfg.cpu.async && !r->pool->cfg.cpu.own_step) {
            rq->first_unseen = 1; /* delivered with the next iteration, as a finish is */
            if (rq->generated < rq->output)
                defer(r, rq);
        } else
            rq->t_first_token = now;
    } else {
        eng_emit_itl(e, now - rq->t_last_token, 1);
    }
    rq->t_last_token = now;
    if (rq->generated >= rq->output)
        finish(r, rq);
    else
        eng_cohort_join(r, rq, now);
}

/* The end of an iteration at now (ended: a decode run's steps all ended already, decode_run). */
static void iteration_end(eng_replica *r, int64_t now, int64_t ended)
{
    eng_batch *b = &r->batch;
    r->busy = 0;
    r->iter_ev = 0;
    r->run_pad_ctx += r->run_pad_seqs; /* padded slots grew one token this step */
    for (int32_t i = 0; r->co.cap > 0 && i < r->run_pad_seqs; i++)
        r->run_pad_c[i]++;
    if (r->nunseen > 0) /* (deliver_deferred of none does nothing) */
        deliver_deferred(r, now);
    if (!ended) {
        if (b->decode) {
            for (int32_t j = 0; j + 1 < r->nsteps; j++)
                eng_cohort_end(r, r->step_end[j], finish);
            eng_cohort_end(r, now, finish);
        }
        for (int32_t i = 0; i < b->nchunks; i++)
            complete_chunk(r, &b->chunks[i], now);
        r->iter += r->nsteps;
    }
    r->nsteps = 1;
    if (r->ops->on_batch_end)
        r->ops->on_batch_end(r->st, r, b, now);
    if (r->run_left > 0 && r->co.n > 0 && !r->e->failed) {
        /* the next step of a fixed multi-step run: the same cohort, no scheduler call */
        r->run_left--;
        start_iteration(r, now, 1);
        return;
    }
    r->run_left = 0;
    r->run_pad_seqs = 0;
    r->run_pad_ctx = 0;
    kick(r);
}

/* An iteration's end event, and the ends of the iterations started from it that come before any
 * other event: each such end would be the next event run (nothing pending comes at or before its
 * time, and nothing else happens in between), so the clock moves there and it runs at once, as
 * run_finish_end ends a run's steps. Events keep their order (later ones take the next numbers);
 * only the queue's push and pop are saved (a prefill's step, alone, mostly ends before the next
 * arrival). Not with max_run_steps 1, where each step is its own event (the reference runs of
 * tests/test_runs.c). */
static void on_iteration_end(sim_ctx *ctx, void *obj, int64_t ended)
{
    eng_replica *r = obj;
    int64_t now = sim_now(ctx);
    for (int in_place = 0;; in_place = 1) {
        r->ending = r->e->cfg.max_run_steps != 1; /* not where every step is to be an event */
        iteration_end(r, now, ended);
        r->ending = 0;
        if (in_place) /* what sim_run checks after an event, after an end run here */
            sim_check_as_event(ctx);
        if (!r->end_due)
            return;
        r->end_due = 0;
        now = r->end_at;
        ended = r->end_ended;
        if (r->e->failed || !sim_advance_before(ctx, now)) {
            r->iter_ev = sim_schedule(ctx, now, ENG_PRIO_ITER_END, on_iteration_end, r, ended);
            return;
        }
    }
}

/* ---------------- primitives for policies ---------------- */

const eng_config *eng_replica_config(const eng_replica *r)
{
    return &r->pool->cfg;
}

int32_t eng_replica_id(const eng_replica *r)
{
    return r->id;
}

int32_t eng_replica_slot(const eng_replica *r)
{
    return (int32_t)(r - r->pool->route->reps);
}

int32_t eng_replica_max_len(const eng_replica *r)
{
    return r->e->max_len;
}

int64_t eng_replica_outstanding(const eng_replica *r)
{
    return r->outstanding;
}

int64_t eng_replica_outstanding_tokens(const eng_replica *r)
{
    return r->outstanding_tokens;
}

int64_t eng_replica_waiting(const eng_replica *r)
{
    return r->waiting;
}

double eng_replica_capacity(const eng_replica *r)
{
    return r->pool->weight;
}

int eng_replica_weighed(const eng_replica *r)
{
    return r->pool->route->ngroups > 1;
}

double eng_replica_kv_usage(const eng_replica *r)
{
    return r->kv.total ? (double)r->kv.used / (double)r->kv.total : 0;
}

int32_t eng_replica_prefix_match(const eng_replica *r, const eng_request *rq)
{
    /* the match only computes (and keeps) rq's own hashes: r and rq stay as they were */
    return eng_prefix_match((eng_replica *)r, (eng_request *)rq, NULL);
}

static void admit(eng_replica *r, eng_request *rq)
{
    int64_t now = sim_now(r->e->ctx);
    eng_off_release(r, rq); /* its pinned hit is on its own account now */
    if (rq->t_first_sched < 0) {
        rq->t_first_sched = now;
        rq->cached_tokens = rq->prefilled; /* a prefix-cache hit attached before admission */
    }
    rq->t_last_sched = now;
    rq->t_span_decode = -1;
    rq->scheduled++;
    rq->status = ENG_RQ_PREFILL;
    r->waiting--;
    r->e->waiting_total--;
}

int64_t eng_prefill_blocks_needed(const eng_replica *r, const eng_request *rq, int32_t tokens)
{
    if (rq->kv_reserved)
        return 0;
    int64_t need = eng_lay_held(&r->kv.lay, rq->prefilled, tokens) - rq->kv_blocks;
    return need > 0 ? need : 0;
}

int32_t eng_prefill_tokens_fitting(const eng_replica *r, const eng_request *rq, int32_t most,
                                   int64_t blocks)
{
    if (most <= 0 || eng_prefill_blocks_needed(r, rq, most) <= blocks)
        return most > 0 ? most : 0;
    /* the blocks a chunk needs grow with its length: bisect (O(log most)) */
    int32_t lo = 0, hi = most; /* lo fits, hi does not */
    while (hi - lo > 1) {
        int32_t mid = lo + (hi - lo) / 2;
        if (eng_prefill_blocks_needed(r, rq, mid) <= blocks)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int eng_batch_add_prefill(eng_replica *r, eng_batch *b, eng_request *rq, int32_t tokens,
                          int32_t charged)
{
    SIM_CHECK(r->e->ctx, tokens >= 1 && rq->prefilled + tokens <= rq->prefill_target);
    SIM_CHECK(r->e->ctx, rq->status == ENG_RQ_WAITING || rq->status == ENG_RQ_PREFILL);
    int64_t need = eng_prefill_blocks_needed(r, rq, tokens);
    if (need > eng_kv_nfree(&r->kv))
        return -1;
    eng_kv_alloc_rq(&r->kv, rq, need);
    /* MODEL: vLLM KVCacheManager.allocate_slots caches the full blocks of the tokens it
     * schedules (cache_blocks) when it allocates them, so a later step's requests hit them */
    if (r->kv.ps && r->kv.ps->mode == ENG_PC_AT_SCHEDULE)
        eng_kv_register(&r->kv, rq, (int64_t)rq->prefilled + tokens);
    if (rq->status == ENG_RQ_WAITING)
        admit(r, rq);
    if (b->nchunks == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->chunks = sim_xrealloc(b->chunks, (size_t)b->cap * sizeof *b->chunks);
    }
    b->chunks[b->nchunks++] = (struct eng_chunk){rq, tokens, charged > tokens ? charged : tokens};
    return 0;
}

int eng_batch_add_prefill_hit(eng_replica *r, eng_batch *b, eng_request *rq, int32_t hit,
                              int32_t tokens)
{
    SIM_CHECK(r->e->ctx, rq->status == ENG_RQ_WAITING && rq->kv_blocks == 0 && tokens >= 1);
    if (r->off && eng_off_gate(r, rq))
        return -1; /* its offloaded KV is on its way */
    if (hit > 0) {
        SIM_CHECK(r->e->ctx, hit <= eng_prefix_match(r, rq, NULL));
        if (eng_prefill_hit_blocks_needed(r, rq, hit, tokens) > eng_kv_nfree(&r->kv))
            return -1;
        eng_prefix_attach(r, rq, hit);
    }
    if (eng_batch_add_prefill(r, b, rq, tokens, tokens) == 0)
        return 0;
    /* the chunk does not fit after all: put the hit back as it was */
    eng_kv_free_rq(&r->kv, rq, 0);
    rq->prefilled = 0;
    return -1;
}

int64_t eng_decode_blocks_needed(const eng_replica *r)
{
    return next_need(r, spec_k(r, NULL));
}

int64_t eng_decode_blocks_needed_steps(const eng_replica *r, int32_t k)
{
    return k == 1 ? next_need(r, spec_k(r, NULL)) : eng_cohort_need(r, spec_k(r, NULL), k);
}

void eng_batch_decode_all(eng_replica *r, eng_batch *b)
{
    SIM_CHECK(r->e->ctx, eng_decode_blocks_needed(r) <= eng_kv_nfree(&r->kv));
    b->decode = 1;
}

int eng_batch_finish(eng_replica *r, eng_batch *b)
{
    if (r->co.n > 0)
        eng_batch_decode_all(r, b);
    return b->nchunks + r->co.n;
}

int32_t eng_cohort_size(const eng_replica *r)
{
    return r->co.n;
}

int64_t eng_cohort_ctx(const eng_replica *r)
{
    return eng_cohort_ctx_sum(&r->co);
}

int64_t eng_replica_steps(const eng_replica *r)
{
    return r->co.step;
}

int32_t eng_rq_generated(const eng_replica *r, const eng_request *rq)
{
    if (rq->status == ENG_RQ_DECODE) {
        const eng_cohort *c = &r->co;
        int64_t t = c->cls[rq->c_class < c->nclass ? rq->c_class : 0].t;
        return rq->c_gen0 + (int32_t)(t - rq->c_t0);
    }
    return rq->generated;
}

int32_t eng_rq_context(const eng_replica *r, const eng_request *rq)
{
    if (rq->status == ENG_RQ_DECODE)
        return rq->prompt + eng_rq_generated(r, rq) - 1;
    return rq->prefilled;
}

void eng_preempt(eng_replica *r, eng_request *rq, int swap)
{
    eng_engine *e = r->e;
    SIM_CHECK(e->ctx, rq->status == ENG_RQ_DECODE || rq->status == ENG_RQ_PREFILL);
    int swapping = swap && rq->status == ENG_RQ_DECODE;
    end_span(r, rq, sim_now(e->ctx), swapping ? ENG_SPAN_SWAPPED : ENG_SPAN_PREEMPTED);
    if (rq->status == ENG_RQ_DECODE)
        eng_cohort_leave(r, rq);
    rq->preemptions++;
    e->tot.preemptions++;
    r->preempted_now++;
    if (swapping) {
        /* MODEL: vLLM swap preemption copies the sequence's blocks to host memory */
        rq->xfer_bytes = (int64_t)rq->kv_blocks * r->pool->plan.model_block_bytes;
        r->pending_xfer_bytes += rq->xfer_bytes;
        eng_kv_swap_out(&r->kv, rq);
        rq->status = ENG_RQ_SWAPPED;
    } else {
        /* MODEL: vLLM recompute preemption frees the blocks; the prompt and the tokens generated
         * so far are prefilled again when the request is resumed. With prefix caching, vLLM V1
         * frees its computed blocks to the cache (so the resumed request may hit them); SGLang's
         * retract_decode keeps only what its radix tree already holds. */
        int64_t keep = 0;
        if (r->kv.ps && r->kv.ps->mode == ENG_PC_AT_SCHEDULE)
            keep = eng_rq_context(r, rq);
        eng_kv_free_rq(&r->kv, rq, keep);
        rq->kv_reserved = 0;
        rq->prefill_target = rq->prompt + rq->generated;
        rq->prefilled = 0;
        rq->status = ENG_RQ_WAITING;
    }
    r->waiting++;
    e->waiting_total++;
}

int eng_swap_in(eng_replica *r, eng_request *rq)
{
    SIM_CHECK(r->e->ctx, rq->status == ENG_RQ_SWAPPED);
    if (rq->kv_blocks > eng_kv_nfree(&r->kv))
        return -1;
    eng_kv_swap_in(&r->kv, rq);
    r->pending_xfer_bytes += rq->xfer_bytes;
    rq->xfer_bytes = 0;
    int64_t now = sim_now(r->e->ctx);
    rq->t_last_sched = now;
    rq->t_span_decode = now; /* its KV is back: it decodes from the next step */
    rq->scheduled++;
    r->waiting--;
    r->e->waiting_total--;
    eng_cohort_join(r, rq, now);
    return 0;
}

/* ---------------- run ---------------- */

#ifdef SIM_DEBUG
static void debug_check(void *arg)
{
    char buf[256];
    if (eng_check(arg, buf, sizeof buf) != 0) {
        fprintf(stderr, "engine check failed: %s\n", buf);
        sim_assert_fail(((eng_engine *)arg)->ctx, __FILE__, __LINE__, "eng_check");
    }
}
#endif

/* How messages name pool k: "" (aggregated), "replicas[1]: " (a mixed pool's group), "prefill
 * pool: ", "decode pool: " or "decode.replicas[1]: " (a disaggregated pool or its group). */
static void name_pool(const eng_engine *e, eng_pool *p)
{
    const char *role = p->role == ENG_ROLE_PREFILL ? "prefill" : "decode";
    int g = eng_config_group(&e->cfg, p->id);
    int first = p->role == ENG_ROLE_DECODE ? e->cfg.pd.ngroups[ENG_POOL_PREFILL] : 0;
    if (g >= 0 && !e->pd)
        snprintf(p->name, sizeof p->name, "replicas[%d]: ", g);
    else if (g >= 0)
        snprintf(p->name, sizeof p->name, "%s.replicas[%d]: ", role, g - first);
    else if (e->pd)
        snprintf(p->name, sizeof p->name, "%s pool: ", role);
    else
        p->name[0] = '\0';
}

/* Pool p's router state over its n replicas from p->reps on (a mixed pool's first group: every
 * group's), and the replica array it picks from; -1 with err when init refuses. */
static int router_init(eng_engine *e, eng_pool *p, int32_t n, sim_err *err)
{
    const eng_router_ops *ops = p->router;
    p->route = p;
    p->nroute = n;
    p->rep_list = sim_xcalloc((size_t)n, sizeof *p->rep_list);
    for (int32_t i = 0; i < n; i++)
        p->rep_list[i] = &p->reps[i];
    p->nact = n;
    p->router_st = sim_xcalloc(1, ops->state_size ? ops->state_size : 1);
    if (ops->init && ops->init(p->router_st, n, &p->cfg.router_params) != 0)
        return sim_errf(err, "%srouter %s: cannot route over %d replicas", p->name, ops->name, n);
    /* both pools' routers draw from the one router stream, in event order */
    if (n > 1)
        p->router_rng = sim_rng(e->ctx, SIM_STREAM_ROUTER);
    return 0;
}

/* The pool whose router routes pool k's replicas: a mixed pool's first group, a disaggregated
 * deployment's first prefill or first decode pool, or k itself. */
static int route_head(const eng_engine *e, int k)
{
    if (e->cfg.groups.n > 0)
        return 0;
    if (e->pd)
        return k < e->dpool ? 0 : e->dpool;
    return k;
}

/* Every pool's router: its own, or (groups) its head's over every group's replicas, which lie
 * one group after another. */
static int routers_init(eng_engine *e, sim_err *err)
{
    for (int k = 0; k < e->npools; k++) {
        int h = route_head(e, k);
        if (h != k) {
            e->pools[k].route = &e->pools[h];
            continue;
        }
        int32_t n = 0, groups = 0;
        for (int j = k; j < e->npools && route_head(e, j) == k; j++, groups++)
            n += e->pools[j].nrep;
        if (router_init(e, &e->pools[k], n, err) != 0)
            return -1;
        e->pools[k].ngroups = groups;
    }
    return 0;
}

/* The scheduling policy and the router the configuration names, from their registries. */
static int find_policies(const eng_config *cfg, const eng_sched_ops **ops,
                         const eng_router_ops **router, sim_err *err)
{
    char why[256];
    if (eng_sched_registry_check(why, sizeof why) != 0)
        return sim_errf(err, "scheduler registry: %s", why);
    if (!(*ops = eng_sched_find(cfg->sched.name)))
        return sim_errf(err, "unknown scheduler '%s'", cfg->sched.name);
    if (eng_router_registry_check(why, sizeof why) != 0)
        return sim_errf(err, "router registry: %s", why);
    if (!(*router = eng_router_find(cfg->router)))
        return sim_errf(err, "unknown router '%s' (valid: %s)", cfg->router,
                        eng_router_names(why, sizeof why));
    if (cfg->replicas < 1 || cfg->block_size < 1)
        return sim_errf(err, "replicas and block_size must be >= 1");
    return 0;
}

/* Replica i of pool p with its KV cache, its decode cohort and its policy's state. */
static int replica_init(eng_engine *e, eng_pool *p, int32_t i, sim_err *err)
{
    eng_replica *r = &p->reps[i];
    r->e = e;
    r->pool = p;
    r->id = p->first + i;
    r->ops = p->ops;
    int32_t ahead = 1 + (p->cfg.spec.method != ENG_SPEC_NONE ? p->cfg.spec.k : 0);
    /* MODEL: vLLM V0's scheduler of each virtual engine gets num_gpu_blocks //
     * pipeline_parallel_size blocks (vllm/core/scheduler.py) */
    eng_kv_plan plan = p->plan;
    plan.blocks /= eng_pipe_batches(&p->cfg);
    eng_kv_init(&r->kv, &plan, p->cfg.block_size, ahead);
    r->kv.table_all = e->cfg.prefix_table_all;
    r->wake_at = -1;
    eng_cohort_init(&r->co, e, &p->cfg);
    r->st = sim_xcalloc(1, p->ops->state_size ? p->ops->state_size : 1);
    if (eng_sched_start(p->ops, r->st, &p->cfg.sched, r) != 0)
        return sim_errf(err, "%sscheduler %s: bad settings", p->name, p->ops->name);
    return 0;
}

/* Pool k: its configuration, KV plan, policy, cost model and the places of its replicas (from
 * *first on); the replicas themselves come once every pool has its place. */
static int pool_init(eng_engine *e, int k, const eng_costs *costs, int32_t *first, sim_err *err)
{
    eng_pool *p = &e->pools[k];
    const eng_router_ops *router;
    p->id = k;
    p->role = !e->pd ? ENG_ROLE_MIXED : k < e->dpool ? ENG_ROLE_PREFILL : ENG_ROLE_DECODE;
    p->weight = 1;
    name_pool(e, p);
    eng_config_pool(&e->cfg, k, &p->cfg);
    p->pred = costs[k].target;
    p->draft = p->cfg.spec.method != ENG_SPEC_NONE && p->cfg.spec.has_draft ? costs[k].draft : NULL;
    if (find_policies(&p->cfg, &p->ops, &router, err) != 0 ||
        eng_kv_plan_compute(&p->cfg, &p->plan, err) != 0)
        return p->name[0] ? sim_err_prefix(err, "%.*s", (int)strlen(p->name) - 2, p->name) : -1;
    p->router = router;
    p->first = *first;
    /* a pipeline's virtual engines, of every replica autoscaling may start */
    p->nrep = eng_autoscale_slots(e, p) * eng_pipe_batches(&p->cfg);
    *first += p->nrep;
    return 0;
}

/* What the engine does not model is refused, naming what is missing. 0, or -1 with err. */
/* Priority scheduling where the engine orders by something else first: refused by name. */
static int check_priority(const eng_sched_cfg *sc, sim_err *err)
{
    const char *on = eng_cfg_get(sc, "enable_priority_scheduling"),
               *pol = eng_cfg_get(sc, "schedule_policy");
    /* MODEL: SGLang schedule_policy.py sorts lpm's queue by cached prefix alone */
    if (!strcmp(sc->name, "sglang") && on && eng_key_bool(on) == 1 && pol && !strcmp(pol, "lpm"))
        return sim_errf(err, "scheduler sglang: enable_priority_scheduling with schedule_policy "
                             "lpm is not modelled (SGLang sorts lpm's queue by cached prefix "
                             "alone): use schedule_policy fcfs");
    return 0;
}

static int check_modelled(const eng_engine *e, sim_err *err)
{
    const eng_config *c = &e->cfg;
    if (check_priority(&c->sched, err) != 0)
        return -1;
    const eng_spec *sp = &c->spec;
    int32_t chunked, cap = eng_shape_cap(&c->model, &chunked);
    int pp = c->pipeline_parallel > 1;
    for (int k = 0; k < 2 && c->pd.enabled; k++)
        pp |= c->pd.pool[k].pipeline_parallel > 1;
    for (int g = 0; c->pd.enabled && g < c->pd.ngroups[0] + c->pd.ngroups[1]; g++)
        pp |= c->groups.group[g].pipeline_parallel > 1;
    if (pp && (c->pd.enabled || sp->method != ENG_SPEC_NONE || c->fleet.autoscale.enabled))
        return sim_errf(err, "pipeline_parallel with %s is not modelled yet",
                        c->pd.enabled                 ? "prefill and decode pools"
                        : sp->method != ENG_SPEC_NONE ? "speculative decoding"
                                                      : "autoscale");
    if (c->model.index_topk > 0 && c->model.window_layers > 0)
        return sim_errf(err,
                        "model %s: DeepSeek sparse attention together with windowed layers is "
                        "not modelled",
                        c->model.name);
    if (cap > 0 && e->max_len > cap + 1 && strcmp(c->sched.name, "static") == 0)
        return sim_errf(err,
                        "scheduler static: its padded slots' attention past the %s of %d "
                        "tokens is not kept; llmsim refuses model %s with it (set "
                        "memory.max_model_len to at most %d, or use another scheduler)",
                        c->model.index_topk ? "top-k" : "window", cap + 1, c->model.name, cap + 1);
    if (sp->method == ENG_SPEC_NONE)
        return 0;
    if (c->pd.enabled)
        return sim_errf(err, "speculative decoding in a disaggregated deployment (prefill and "
                             "decode pools) is not modelled yet: use one or the other");
    if (sp->k < 1 || sp->k > ENG_SPEC_MAX_K || !(sp->al >= 1 && sp->al <= sp->k + 1) ||
        sp->classes < 1 || sp->classes > ENG_SPEC_MAX_CLASSES ||
        (sp->dist == ENG_SPEC_IID && !(sp->rate >= 0 && sp->rate <= 1)))
        return sim_errf(err,
                        "speculative decoding: num_speculative_tokens %d (1..%d), acceptance "
                        "length %g (1..%d), classes %d (1..%d), rate %g (0..1)",
                        sp->k, ENG_SPEC_MAX_K, sp->al, sp->k + 1, sp->classes, ENG_SPEC_MAX_CLASSES,
                        sp->rate);
    if (sp->has_draft) {
        int32_t dchunked, dcap = eng_shape_cap(&sp->draft, &dchunked);
        if (dcap > 0 && (dcap != cap || dchunked != chunked))
            return sim_errf(err,
                            "speculative decoding: drafter %s attends to %d earlier keys, the "
                            "target %d: a drafter with a cap of its own is not modelled",
                            sp->draft.name, dcap, cap);
    }
    if (eng_cfg_get(&c->sched, "num_scheduler_steps") &&
        atoi(eng_cfg_get(&c->sched, "num_scheduler_steps")) > 1)
        return sim_errf(err, "speculative decoding with num_scheduler_steps > 1: vLLM's "
                             "multi-step scheduling does not support it");
    return 0;
}

eng_engine *eng_new(sim_ctx *ctx, const eng_config *cfg, const eng_costs *costs,
                    const eng_source_ops *src, void *src_st, const eng_recorder_ops *rec,
                    void *rec_st, sim_err *err)
{
    eng_engine *e = sim_xcalloc(1, sizeof *e);
    e->ctx = ctx;
    e->cfg = *cfg;
    e->src = src;
    e->src_st = src_st;
    e->rec = rec;
    e->rec_st = rec_st;
    e->src_state = ENG_SRC_OK;
    e->max_len = cfg->max_model_len > 0 ? cfg->max_model_len : cfg->model.max_context;
    e->pd = cfg->pd.enabled;
    e->npools = eng_config_pools(cfg);
    e->dpool = cfg->pd.enabled ? eng_config_decode_pool(cfg) : 0;
    eng_metrics_init(&e->m);
    int32_t n = 0;
    if (check_modelled(e, err) != 0 || eng_groups_check(cfg, err) != 0 ||
        eng_fleet_check(cfg, err) != 0 || eng_autoscale_check(cfg, err) != 0 ||
        eng_fault_check(cfg, err) != 0)
        goto fail;
    if (cfg->spec.method != ENG_SPEC_NONE && cfg->spec.classes > 1)
        e->class_rng = sim_rng(ctx, SIM_STREAM_SPEC_CLASS);
    if (cfg->classes.n > 0) {
        e->wclass_rng = sim_rng(ctx, SIM_STREAM_WORK_CLASS);
        eng_metrics_classes(&e->m, &e->cfg.classes);
    }
    for (int k = 0; k < e->npools; k++)
        if (pool_init(e, k, costs, &n, err) != 0)
            goto fail;
    e->plan = e->pools[0].plan;
    e->nrep = n;
    e->reps = sim_xcalloc((size_t)e->nrep, sizeof *e->reps);
    for (int k = 0; k < e->npools; k++)
        e->pools[k].reps = &e->reps[e->pools[k].first];
    for (int k = 0; k < e->npools; k++) {
        eng_pool *p = &e->pools[k];
        for (int32_t i = 0; i < p->nrep; i++)
            if (replica_init(e, p, i, err) != 0)
                goto fail;
        if (eng_pipe_init(e, p, err) != 0)
            goto fail;
    }
    if (routers_init(e, err) != 0)
        goto fail;
    eng_groups_weigh(e);
    if (e->pd)
        eng_pd_init(e);
    if (eng_off_init(e, err) != 0)
        goto fail;
    eng_autoscale_init(e);
    eng_fault_init(e);
#ifdef SIM_DEBUG
    sim_set_check(ctx, debug_check, e);
#endif
    return e;
fail:
    eng_free(e);
    return NULL;
}

int eng_run(eng_engine *e, sim_err *err)
{
    pull_arrival(e);
    sim_run(e->ctx, SIM_TIME_MAX);
    if (e->failed) {
        if (err)
            *err = e->err;
        return -1;
    }
    return 0;
}

void eng_free(eng_engine *e)
{
    if (!e)
        return;
    eng_off_fini(e);
    for (int32_t i = 0; e->reps && i < e->nrep; i++) {
        eng_replica *r = &e->reps[i];
        if (r->st && r->ops && r->ops->fini)
            r->ops->fini(r->st);
        SIM_FREE_ALL(r->st, r->batch.chunks, r->unseen, r->fetch, r->step_end, r->run_pad_c,
                     r->joining);
        eng_cohort_free(&r->co);
        eng_kv_fini(&r->kv);
    }
    free(e->reps);
    for (int k = 0; k < e->npools; k++) {
        eng_pool *p = &e->pools[k];
        if (p->router_st && p->router->fini)
            p->router->fini(p->router_st);
        free(p->router_st);
        free(p->rep_list);
        eng_pipe_fini(p);
        price_memo_free(&p->memo);
    }
    eng_link_fini(e);
    eng_autoscale_free(e);
    eng_fault_free(e);
    while (e->slabs) {
        eng_slab *s = e->slabs;
        e->slabs = s->next;
        for (int i = 0; i < ENG_SLAB; i++)
            eng_pcreq_free(s->rq[i].pc);
        free(s);
    }
    eng_metrics_free(&e->m);
    free(e);
}

const eng_totals *eng_get_totals(const eng_engine *e)
{
    return &e->tot;
}

int eng_totals_saturated(const eng_totals *t)
{
    if (t->arrived < 64)
        return 0;
    int k = 63 - __builtin_clzll((unsigned long long)(t->arrived / 2));
    int64_t half = t->waiting_at_pow2[k], end = t->waiting_at_end_of_arrivals;
    /* MODEL: a stable queue has no trend; an overloaded one grows linearly with arrivals, so
     * between arrival 2^k <= n/2 and arrival n it at least doubles */
    return end > 16 && end > 2 * half;
}

const eng_replica *eng_get_replica(const eng_engine *e, int32_t i)
{
    return i >= 0 && i < e->nrep ? &e->reps[i] : NULL;
}

const eng_kv_plan *eng_get_kv_plan(const eng_engine *e)
{
    return &e->plan;
}

int eng_pool_count(const eng_engine *e)
{
    return e->npools;
}

const eng_kv_plan *eng_get_pool_plan(const eng_engine *e, int p)
{
    return p >= 0 && p < e->npools ? &e->pools[p].plan : NULL;
}

eng_role eng_replica_role(const eng_replica *r)
{
    return r->pool->role;
}

int eng_summary(eng_engine *e, eng_metric *out)
{
    e->m.prefix_evictions = 0;
    for (int32_t i = 0; i < e->nrep; i++)
        e->m.prefix_evictions += eng_prefix_evictions(&e->reps[i]);
    e->m.pd = e->pd;
    memset(e->m.pool_busy_ns, 0, sizeof e->m.pool_busy_ns);
    memset(e->m.pool_gpus, 0, sizeof e->m.pool_gpus);
    memset(e->m.pool_replicas, 0, sizeof e->m.pool_replicas);
    for (int k = 0; e->pd && k < e->npools; k++) { /* by role: a pool's groups together */
        int r = e->pools[k].role == ENG_ROLE_DECODE;
        e->m.pool_busy_ns[r] += e->tot.pool_busy_ns[k];
        e->m.pool_gpus[r] += e->pools[k].plan.gpus * e->pools[k].nrep;
        e->m.pool_replicas[r] += e->pools[k].nrep;
    }
    eng_fleet_fill(e);
    int n = eng_off_summary(e, out, eng_metrics_summary(&e->m, out));
    if (e->as)
        n = eng_autoscale_summary(e, out, n, eng_metrics_duration(&e->m));
    if (e->fault)
        n = eng_fault_summary(e, out, n);
    n = eng_metrics_class_summary(&e->m, out, n);
    if (e->cfg.spec.method == ENG_SPEC_NONE)
        return n;
    /* MODEL: vLLM's spec-decode counters (vllm:spec_decode_num_drafts, num_draft_tokens,
     * num_accepted_tokens) and its mean acceptance length, 1 + accepted / drafts */
    int64_t steps = 0, drafts = 0, accepted = 0;
    for (int32_t i = 0; i < e->nrep; i++) {
        steps += e->reps[i].co.spec_steps;
        drafts += e->reps[i].co.spec_drafts;
        accepted += e->reps[i].co.spec_accepted;
    }
    static const char *const names[] = {"spec_num_drafts", "spec_num_draft_tokens",
                                        "spec_num_accepted_tokens", "spec_acceptance_length"};
    double v[] = {(double)steps, (double)drafts, (double)accepted,
                  steps ? 1 + (double)accepted / (double)steps : 0};
    for (int i = 0; i < 4 && n < ENG_MAX_METRICS; i++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", names[i]);
        out[n++].value = v[i];
    }
    return n;
}

void eng_set_slo(eng_engine *e, double ttft_ms, double tpot_ms, double e2e_ms)
{
    e->m.slo_ttft_ms = ttft_ms;
    e->m.slo_tpot_ms = tpot_ms;
    e->m.slo_e2e_ms = e2e_ms;
}

int eng_check(const eng_engine *e, char *buf, size_t len)
{
    int64_t *held = sim_xcalloc((size_t)e->nrep * 2, sizeof *held), *refs = held + e->nrep;
    int rc = 0;
    for (const eng_slab *s = e->slabs; s; s = s->next)
        for (int i = 0; i < ENG_SLAB; i++) {
            const eng_request *rq = &s->rq[i];
            if (rq->status == ENG_RQ_FINISHED || rq->status == ENG_RQ_REJECTED || rq->replica < 0)
                continue; /* done, or waiting for a replica to restart (fault.c) */
            if (rq->status != ENG_RQ_SWAPPED) {
                held[rq->replica] +=
                    eng_cohort_blocks_of(&e->reps[rq->replica], rq) - eng_kv_ident(rq);
                refs[rq->replica] += eng_kv_ident(rq);
            }
            if (rq->pd_blocks) /* reserved on its decode replica while its KV is on its way */
                held[rq->pd_dst] += rq->pd_blocks;
            if (rq->t_first_sched >= 0 && rq->t_first_sched < rq->t_arrival) {
                snprintf(buf, len, "request %lld scheduled before it arrived", (long long)rq->id);
                rc = -1;
            }
        }
    for (int32_t i = 0; rc == 0 && i < e->nrep; i++) {
        const eng_replica *r = &e->reps[i];
        refs[i] += r->off ? r->off->pins : 0; /* blocks pinned for requests loading offloaded KV */
        if (eng_kv_check(&r->kv, i, held[i], refs[i], buf, len) != 0) {
            rc = -1;
        } else if (eng_cohort_check(r, buf, len) != 0) {
            rc = -1;
        } else if (r->ops->check && r->ops->check(r->st, r) != 0) {
            snprintf(buf, len, "replica %d: scheduler %s queues inconsistent", i, r->ops->name);
            rc = -1;
        }
    }
    free(held);
    if (rc == 0 && e->pd)
        rc = eng_link_check(e, buf, len);
    if (rc == 0 && e->notiers)
        rc = eng_off_check(e, buf, len);
    if (rc == 0 && e->as)
        rc = eng_autoscale_walk(e, buf, len);
    return rc;
}
