/*
 * kv.c: KV cache accounting: sizing a replica's cache (the plan), and the blocks of one replica.
 *
 * Invariant (eng_kv_check, after every event in debug builds): the blocks on requests' accounts
 * plus the blocks the policy holds equal the blocks in use, and 0 <= used <= total. The engine
 * moves blocks only through the functions here and the inline ones of engine_int.h; policies
 * reserve and hold through the public functions below.
 */
#include <stdio.h>
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

int eng_kv_plan_compute(const eng_config *c, eng_kv_plan *p, sim_err *err)
{
    eng_layout l;
    eng_gpu_share g;
    char why[512];
    memset(p, 0, sizeof *p);
    eng_config_layout(c, &l);
    if (eng_layout_check(&c->model, &l, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    eng_dtype dt = eng_config_dtype(c), kv = eng_config_kv_dtype(c);
    eng_model_gpu_share(&c->model, dt, kv, &l, &g);
    p->gpus = l.tp * l.dp;
    p->ranks = l.dp;
    p->usable_bytes = (int64_t)((double)c->gpu.mem_bytes * c->gpu_utilization);
    p->weight_bytes = g.weight_bytes;
    p->activation_bytes = c->activation_reserve;
    p->kv_bytes = p->usable_bytes - p->weight_bytes - p->activation_bytes;
    p->bytes_per_token = g.kv_per_token;
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
                        "tensor_parallel %d, expert_parallel %d, data_parallel_attention %d) "
                        "and %.1f GB of activation reserve against %.1f GB usable per GPU "
                        "(gpu_utilization %.2f)",
                        c->model.name, (double)p->weight_bytes / 1e9, eng_dtype_name(dt), p->gpus,
                        p->gpus > 1 ? "s" : "", c->gpu.name, l.tp, l.ep, l.dp,
                        (double)p->activation_bytes / 1e9, (double)p->usable_bytes / 1e9,
                        c->gpu_utilization);
    p->blocks = p->kv_bytes / (per_token * c->block_size) * p->ranks;
    p->tokens = p->blocks * c->block_size;
    if (p->blocks < 1)
        return sim_errf(err, "no room for a single KV block of %d tokens", c->block_size);
    return 0;
}

void eng_kv_init(eng_kv *kv, int64_t total, int32_t block_size)
{
    kv->total = total;
    kv->used = 0;
    kv->held = 0;
    kv->block_size = block_size;
}

int eng_kv_check(const eng_kv *kv, int32_t replica, int64_t on_requests, char *buf, size_t len)
{
    if (on_requests + kv->held == kv->used && kv->used <= kv->total && kv->used >= 0)
        return 0;
    snprintf(buf, len, "replica %d: %lld KV blocks in use, requests hold %lld, total %lld", replica,
             (long long)kv->used, (long long)on_requests, (long long)kv->total);
    return -1;
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
    return eng_kv_nblocks(&r->kv, tokens);
}

int eng_kv_reserve(eng_replica *r, eng_request *rq, int64_t tokens)
{
    int64_t need = eng_kv_nblocks(&r->kv, tokens) - rq->kv_blocks;
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
    r->kv.used += blocks;
    r->kv.held += blocks;
}

void eng_kv_release(eng_replica *r, int64_t blocks)
{
    SIM_CHECK(r->e->ctx, blocks >= 0 && blocks <= r->kv.held);
    r->kv.used -= blocks;
    r->kv.held -= blocks;
}
