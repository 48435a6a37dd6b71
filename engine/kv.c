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

int eng_kv_plan_compute(const eng_config *c, eng_kv_plan *p, sim_err *err)
{
    memset(p, 0, sizeof *p);
    int tp = c->tensor_parallel > 0 ? c->tensor_parallel : 1;
    p->usable_bytes = (int64_t)((double)c->gpu.mem_bytes * c->gpu_utilization) * tp;
    p->weight_bytes = eng_model_params(&c->model) * eng_dtype_bytes(c->dtype);
    p->activation_bytes = c->activation_reserve * tp;
    p->kv_bytes = p->usable_bytes - p->weight_bytes - p->activation_bytes;
    p->bytes_per_token = eng_model_kv_bytes_per_token(&c->model, c->dtype);
    if (p->kv_bytes <= 0 || p->bytes_per_token <= 0)
        return sim_errf(err,
                        "%s (%s, %.1f GB of weights) does not fit on %d x %s at "
                        "gpu_utilization %.2f with %.1f GB of activation reserve",
                        c->model.name, eng_dtype_name(c->dtype), (double)p->weight_bytes / 1e9, tp,
                        c->gpu.name, c->gpu_utilization, (double)p->activation_bytes / 1e9);
    p->blocks = p->kv_bytes / (p->bytes_per_token * c->block_size);
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
