/*
 * test_engines.c: the rules of the engines' policies (vllm V1, vllm-v0's fixes, sglang, trtllm,
 * tgi's defaults) and of the prefix cache, one test per rule, on the tiny model with the linear
 * cost of engine_util.h (1 ms + 1 us per token per iteration), so the times are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "engine_run.h"
#include "engine_util.h"
#include "preset.h"
#include "test_main.h"

static const eng_predictor_ops linear_ops = {"linear", linear_ns, linear_xfer_ns, NULL, NULL, NULL,
                                             NULL,     NULL,      NULL,           NULL, NULL};
static const eng_predictor linear = {&linear_ops, NULL, "linear test cost"};

/* ---- a run's requests (by id) and iterations, its totals and prefix evictions ---- */
typedef struct rec {
    eu_rec t;
    int64_t evictions;
    int64_t tabled; /* blocks keyed by hash in the replicas' caches at the end */
    eng_totals tot;
} rec;

/* A source that runs eng_check (the policies' own queue walkers included) at every pull. */
typedef struct checked_src {
    list_src l;
    eng_engine *e;
    int64_t checks;
} checked_src;

static int checked_next(void *st, int64_t now, eng_arrival *out, sim_err *err)
{
    checked_src *s = st;
    char buf[256];
    if (s->e) {
        if (eng_check(s->e, buf, sizeof buf) != 0)
            fail_msg("engine check during the run: %s", buf);
        s->checks++;
    }
    return list_next(&s->l, now, out, err);
}

static const eng_source_ops checked_ops = {checked_next, NULL};

static rec *run(const eng_config *c, const eng_arrival *a, int n)
{
    rec *r = calloc(1, sizeof *r);
    checked_src src = {{a, n, 0}, NULL, 0};
    sim_ctx *ctx = sim_new(1);
    sim_err err;
    eng_engine *e =
        eng_new(ctx, c, &(eng_costs){&linear, NULL}, &checked_ops, &src, &eu_rec_ops, &r->t, &err);
    if (!e)
        fail_msg("eng_new: %s", err.msg);
    src.e = e;
    assert_int_equal(eng_run(e, &err), 0);
    char buf[256];
    assert_int_equal(eng_check(e, buf, sizeof buf), 0);
    r->tot = *eng_get_totals(e);
    for (int32_t i = 0; i < c->replicas; i++)
        r->evictions += eng_prefix_evictions(eng_get_replica(e, i));
    for (int32_t i = 0; i < c->replicas; i++)
        r->tabled += eng_prefix_tabled_blocks(eng_get_replica(e, i));
    eng_free(e);
    sim_free(ctx);
    return r;
}

static void free_rec(rec *r)
{
    eu_rec_free(&r->t);
    free(r);
}

static void config(eng_config *c, const char *policy, int64_t kv_tokens)
{
    tiny_config(c, kv_tokens);
    snprintf(c->sched.name, sizeof c->sched.name, "%s", policy);
}

static eng_arrival arrival(int64_t t, int32_t prompt, int32_t output, const eng_segment *seg,
                           int32_t nseg)
{
    return (eng_arrival){.t = t, .prompt = prompt, .output = output, .seg = seg, .nseg = nseg};
}

static const eng_segment seg_a[] = {{101, 1000}};
static const eng_segment seg_a512_b[] = {{101, 512}, {202, 488}};
static const eng_segment seg_a512_c[] = {{101, 512}, {303, 488}};
static const eng_segment seg_a1600[] = {{404, 1600}};

/* ================= the prefix cache ================= */

/* Two requests of 1000 prompt and 10 output tokens, 200 ms apart, their contents x and y. */
static rec *run_pair(eng_config *c, const eng_segment *x, int nx, const eng_segment *y, int ny)
{
    eng_arrival a[] = {arrival(0, 1000, 10, x, nx), arrival(200 * SIM_NS_PER_MS, 1000, 10, y, ny)};
    return run(c, a, 2);
}

/* A cached prefix is not computed again: the second request with the same content starts after
 * its cached whole blocks, at most prompt - 1 tokens (the last is computed for its logits). */
static void test_prefix_hit_skips_cached_blocks(void **state)
{
    eng_config c;
    config(&c, "vllm", 8192);
    rec *r = run_pair(&c, seg_a, 1, seg_a, 1);
    assert_int_equal(r->t.rq[0].cached_tokens, 0);
    assert_int_equal(r->t.rq[1].cached_tokens, (1000 - 1) / 16 * 16);
    int64_t ttft0 = r->t.rq[0].t_first_token - r->t.rq[0].t_arrival;
    int64_t ttft1 = r->t.rq[1].t_first_token - r->t.rq[1].t_arrival;
    /* linear cost: 1 ms + 1 us per computed token */
    assert_int_equal(ttft0, 1000000 + 1000 * 1000);
    assert_int_equal(ttft1, 1000000 + 1000 * (1000 - 992));
    free_rec(r);
    /* off: nothing is reused */
    eng_cfg_set(&c.sched, "enable_prefix_caching", "false");
    r = run_pair(&c, seg_a, 1, seg_a, 1);
    assert_int_equal(r->t.rq[1].cached_tokens, 0);
    free_rec(r);
}

/* Matching walks the prompt's blocks from the first and stops at the first miss. */
static void test_prefix_longest_leading_match(void **state)
{
    eng_config c;
    config(&c, "vllm", 8192);
    rec *r = run_pair(&c, seg_a512_b, 2, seg_a512_c, 2);
    assert_int_equal(r->t.rq[1].cached_tokens, 512);
    free_rec(r);
}

/* Cached blocks no one holds count as free and are evicted from the free queue's head: blocks
 * never used first, then a freed request's tail blocks before its head blocks. */
static void test_prefix_eviction_order(void **state)
{
    eng_config c;
    config(&c, "vllm", 128 * 16);
    static const eng_segment u[] = {{909, 800}};
    eng_arrival a[] = {arrival(0, 1600, 1, seg_a1600, 1),
                       arrival(100 * SIM_NS_PER_MS, 800, 1, u, 1),
                       arrival(200 * SIM_NS_PER_MS, 1600, 1, seg_a1600, 1)};
    rec *r = run(&c, a, 3);
    /* 1600 tokens = 100 blocks cached; the 800-token request takes the 28 never-used blocks and
     * evicts 22 of them, the last ones; the third request finds the first 78 */
    assert_int_equal(r->t.rq[1].status, ENG_RQ_FINISHED);
    assert_int_equal(r->t.rq[2].cached_tokens, 78 * 16);
    assert_true(r->evictions >= 22);
    free_rec(r);
}

/* vLLM caches a block when its tokens are scheduled, so a request scheduled in the same step
 * hits it; SGLang inserts a prefill into its tree once computed, so the same step misses. */
static void test_prefix_visible_at_schedule_or_completion(void **state)
{
    eng_config c;
    eng_arrival a[] = {arrival(0, 1000, 5, seg_a, 1), arrival(0, 1000, 5, seg_a, 1)};
    config(&c, "vllm", 8192);
    rec *r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].t_first_sched, r->t.rq[1].t_first_sched);
    assert_int_equal(r->t.rq[1].cached_tokens, 992);
    /* the shared blocks are counted once: 63 for the first, 1 more for the second */
    assert_int_equal(r->t.it[0].kv_blocks_used, 64);
    free_rec(r);
    config(&c, "sglang", 8192);
    r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].t_first_sched, r->t.rq[1].t_first_sched);
    assert_int_equal(r->t.rq[1].cached_tokens, 0);
    free_rec(r);
}

/* Run apart gave each of the n requests' records, every iteration record and the evictions
 * exactly as run all. */
static void same_run(const rec *all, const rec *apart, int n, const char *name, int round,
                     const char *what)
{
    assert_int_equal(all->evictions, apart->evictions);
    assert_int_equal(all->tot.preemptions, apart->tot.preemptions);
    assert_int_equal(all->t.nit, apart->t.nit);
    for (int i = 0; i < n; i++) {
        const eng_request *p = &all->t.rq[i], *q = &apart->t.rq[i];
        if (p->t_finish != q->t_finish || p->t_first_token != q->t_first_token ||
            p->cached_tokens != q->cached_tokens || p->preemptions != q->preemptions ||
            p->status != q->status)
            fail_msg("%s round %d: request %d differs with %s", name, round, i, what);
    }
    for (int i = 0; i < all->t.nit; i++) {
        const eng_iter_rec *p = &all->t.it[i], *q = &apart->t.it[i];
        if (p->start_ns != q->start_ns || p->duration_ns != q->duration_ns ||
            p->kv_blocks_used != q->kv_blocks_used || p->num_seqs != q->num_seqs ||
            p->prefill_tokens != q->prefill_tokens || p->preempted != q->preempted ||
            p->output_tokens != q->output_tokens || p->shape.tokens != q->shape.tokens ||
            p->shape.decode_ctx != q->shape.decode_ctx)
            fail_msg("%s round %d: %s: iteration %d differs: kv %lld/%lld "
                     "tokens %lld/%lld",
                     name, round, what, i, (long long)p->kv_blocks_used,
                     (long long)q->kv_blocks_used, (long long)p->shape.tokens,
                     (long long)q->shape.tokens);
    }
}

/* A request's own blocks (content no other request has) are kept apart from the table, unhashed,
 * and wait in the free queue as one run; that changes nothing: random workloads of prompts that
 * share prefixes (or not) followed by content of their own, outputs shared or not, through tight
 * caches with chunked prefills (long_prefill_token_threshold lets two requests compute the same
 * prefix at once, so one holds blocks computed twice), preemptions and recomputes that find their
 * blocks again (all, part, or, past a block computed twice, none of their own run), give every
 * request and iteration record and the evictions exactly as with every computed block in the
 * table; so does each prompt's own part told (eng_arrival.own_tail), whose blocks then stay out
 * of the table (fewer blocks keyed by hash at the end). */
static void test_prefix_own_blocks_apart(void **state)
{
    enum { N = 60 };
    static const char *const setups[][4] = {
        {"vllm", "max_num_batched_tokens", "96", "max_num_seqs"},
        {"vllm", "max_num_batched_tokens", "2048", "max_num_seqs"},
        {"sglang", "chunked_prefill_size", "96", "max_running_requests"},
        {"trtllm", "capacity_scheduler_policy", "max_utilization", "max_batch_size"},
    };
    eng_segment seg[N][2];
    eng_arrival a[N];
    uint64_t x = 88172645463325252ULL;
    int64_t tabled_apart = 0, tabled_tail = 0;
    for (int round = 0; round < 48; round++) {
        int64_t t = 0;
        for (int i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int32_t pre = (int32_t)(x % 4) * 250, own = 1 + (int32_t)((x >> 8) % 100);
            seg[i][0] = (eng_segment){1000 + (x >> 16) % 3, pre};
            seg[i][1] = (eng_segment){(uint64_t)round * 1000000 + (uint64_t)i + 7, own};
            t += (int64_t)((x >> 24) % 4) * SIM_NS_PER_MS;
            a[i] = arrival(t, pre + own, 1 + (int32_t)((x >> 32) % 400), pre ? seg[i] : seg[i] + 1,
                           pre ? 2 : 1);
            if ((x >> 40) % 5 == 0) /* no content given: all of it its own */
                a[i] = arrival(t, own, a[i].output, NULL, 0);
            else if ((x >> 48) % 3 == 0)
                a[i].out_id = 5000 + (x >> 50) % 4; /* an answer others give too */
        }
        const char *const *su = setups[round % 4];
        eng_config c;
        config(&c, su[0], 100 * 16 + (int64_t)(round % 5) * 640);
        eng_cfg_set(&c.sched, su[1], su[2]);
        eng_cfg_set(&c.sched, su[3], "8");
        if (round % 4 < 2)
            eng_cfg_set(&c.sched, "long_prefill_token_threshold", "32");
        c.prefix_table_all = 1;
        rec *all = run(&c, a, N);
        c.prefix_table_all = 0;
        rec *apart = run(&c, a, N);
        same_run(all, apart, N, su[0], round, "own blocks apart");
        /* the same with each prompt's own part told (eng_arrival.own_tail): its blocks are kept
         * apart from the first that holds a token of it, never tabled */
        for (int i = 0; i < N; i++)
            a[i].own_tail = a[i].nseg > 0 ? a[i].seg[a[i].nseg - 1].len : 0;
        rec *tail = run(&c, a, N);
        same_run(all, tail, N, su[0], round, "own tails apart");
        tabled_apart += apart->tabled;
        tabled_tail += tail->tabled;
        free_rec(tail);
        free_rec(all);
        free_rec(apart);
    }
    assert_true(tabled_tail < tabled_apart);
}

/* ================= vllm (V1) ================= */

/* The defaults vLLM's arg_utils picks: at least 70 GiB and not an A100: 8192 batched tokens for
 * the server, 16384 offline, 1024 sequences; otherwise 2048 / 8192 tokens and 256. */
static void test_vllm_defaults_per_gpu_and_entry_point(void **state)
{
    static const struct {
        const char *gpu, *entry;
        int64_t mem_gb;
        int32_t tokens, seqs;
    } cases[] = {{"h100-sxm", "server", 80, 8192, 1024},
                 {"h100-sxm", "offline", 80, 16384, 1024},
                 {"a100-80gb", "server", 80, 2048, 256},
                 {"l4", "server", 24, 2048, 256}};
    eng_arrival a[300]; /* 17,950 prompt tokens at once */
    for (int i = 0; i < 300; i++)
        a[i] = arrival(0, i < 5 ? 3000 : 10, 50, NULL, 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        eng_config c;
        config(&c, "vllm", 1000000);
        snprintf(c.gpu.name, sizeof c.gpu.name, "%s", cases[k].gpu);
        c.gpu.mem_bytes = cases[k].mem_gb * 1000000000;
        c.gpu_utilization = 0.2;
        eng_cfg_set(&c.sched, "entry_point", cases[k].entry);
        rec *r = run(&c, a, 300);
        int32_t most = 0;
        for (int i = 0; i < r->t.nit; i++)
            most = r->t.it[i].num_seqs > most ? r->t.it[i].num_seqs : most;
        print_message("%s %s: first step %d tokens, most sequences %d\n", cases[k].gpu,
                      cases[k].entry, (int)r->t.it[0].shape.tokens, most);
        assert_int_equal(r->t.it[0].shape.tokens, cases[k].tokens);
        assert_int_equal(most, cases[k].seqs < 300 ? cases[k].seqs : 300);
        free_rec(r);
    }
}

/* One budget per step: running requests first (every decode, then the unfinished prefill),
 * then waiting ones in the budget that is left. */
static void test_vllm_running_then_waiting(void **state)
{
    eng_config c;
    config(&c, "vllm", 100000); /* fake GPU: 2048-token budget */
    eng_arrival a[] = {arrival(0, 3000, 20, NULL, 0), arrival(SIM_NS_PER_MS / 2, 500, 20, NULL, 0)};
    rec *r = run(&c, a, 2);
    assert_int_equal(r->t.it[0].prefill_tokens, 2048);      /* a chunk of the long prompt */
    assert_int_equal(r->t.it[1].prefill_tokens, 952 + 500); /* its rest first, then the newcomer */
    assert_int_equal(r->t.rq[1].t_first_sched, r->t.it[1].start_ns);
    free_rec(r);
}

/* When blocks run out, the running list's tail (the request scheduled last) is preempted by
 * recompute, and a step that preempted admits no waiting request. */
static void test_vllm_preempts_tail_admits_none(void **state)
{
    eng_config c;
    config(&c, "vllm", 64 * 16);
    eng_arrival a[] = {arrival(0, 200, 600, NULL, 0), arrival(0, 200, 600, NULL, 0),
                       arrival(300 * SIM_NS_PER_MS, 50, 10, NULL, 0)};
    rec *r = run(&c, a, 3);
    assert_int_equal(r->t.rq[0].preemptions, 0);
    assert_true(r->t.rq[1].preemptions >= 1);
    int steps = 0;
    for (int i = 0; i < r->t.nit; i++)
        if (r->t.it[i].preempted > 0) {
            assert_int_equal(r->t.it[i].prefill_tokens, 0);
            steps++;
        }
    assert_true(steps >= 1);
    free_rec(r);
}

/* ================= vllm-v0's fixes ================= */

/* can_allocate's NEVER looks at the prompt's blocks: a request whose prompt + output needs the
 * whole cache (more than the cache less the watermark) still runs. */
static void test_vllm_v0_can_allocate_prompt_only(void **state)
{
    eng_config c;
    config(&c, "vllm-v0", 100 * 16); /* watermark: 1 block */
    eng_arrival a[] = {arrival(0, 1000, 600, NULL, 0)};
    rec *r = run(&c, a, 1);
    assert_int_equal(r->t.rq[0].status, ENG_RQ_FINISHED);
    free_rec(r);
}

/* Preemption takes the latest-arrived running request (vLLM sorts running by arrival before
 * popping): run under swap preemption, the policy's queues stay in arrival order at every step
 * (its check, run at every arrival), and the first request is never preempted. */
static void test_vllm_v0_latest_arrived(void **state)
{
    const char *const policies[] = {"vllm-v0", "chunked"};
    for (int p = 0; p < 2; p++) {
        eng_config c;
        config(&c, policies[p], 96 * 16);
        eng_cfg_set(&c.sched, "preemption", "swap");
        eng_arrival a[40];
        for (int i = 0; i < 40; i++)
            a[i] = arrival((int64_t)i * 3 * SIM_NS_PER_MS, 16 + 8 * (i % 5), 300 + 37 * (i % 7),
                           NULL, 0);
        rec *r = run(&c, a, 40);
        assert_int_equal(r->t.rq[0].preemptions, 0);
        assert_true(r->tot.preemptions > 0);
        free_rec(r);
    }
}

/* Multi-step scheduling: a decode batch runs num_scheduler_steps steps per scheduler call: the
 * CPU work is charged on the first step only, and a request arriving meanwhile waits for the
 * run's end. */
static void test_vllm_v0_multi_step(void **state)
{
    eng_config c;
    config(&c, "vllm-v0", 100000);
    eng_cfg_set(&c.sched, "num_scheduler_steps", "4");
    c.cpu.per_iteration_us = 100;
    eng_arrival a[] = {arrival(0, 100, 40, NULL, 0), arrival(0, 100, 37, NULL, 0),
                       arrival(5500 * SIM_NS_PER_US, 60, 5, NULL, 0)};
    rec *r = run(&c, a, 3);
    /* iteration 0 prefills; then decode runs of 4 steps: CPU on the first of each */
    for (int i = 1; i <= 8; i++)
        assert_int_equal(r->t.it[i].cpu_ns > 0, (i - 1) % 4 == 0);
    /* the late request joins after the run that was going when it came */
    int64_t sched = r->t.rq[2].t_first_sched;
    int k = 0;
    while (k < r->t.nit && r->t.it[k].start_ns < sched)
        k++;
    assert_true(k < r->t.nit && r->t.it[k].start_ns == sched && (k - 1) % 4 == 0);
    free_rec(r);
}

/* ================= tgi ================= */

/* TGI 3: waiting_served_ratio 0.3 (3 waiting next to 10 running get a prefill at once), and the
 * waiting counter restarts at 1 after a prefill. */
static void test_tgi_current_defaults(void **state)
{
    const eng_param *p = eng_sched_param(eng_sched_find("tgi"), "waiting_served_ratio");
    assert_string_equal(p->def, "0.3");
    eng_config c;
    config(&c, "tgi", 100000);
    eng_arrival a[13];
    for (int i = 0; i < 13; i++)
        a[i] = arrival(i < 10 ? 0 : 5 * SIM_NS_PER_MS, 20, 200, NULL, 0);
    rec *r = run(&c, a, 13);
    /* the first iteration ending after 5 ms is followed by their prefill */
    int k = 0;
    while (r->t.it[k].start_ns + r->t.it[k].duration_ns < 5 * SIM_NS_PER_MS)
        k++;
    assert_int_equal(r->t.rq[10].t_first_sched, r->t.it[k + 1].start_ns);
    free_rec(r);
    /* counter: with max_waiting_tokens 2 and a ratio no batch meets, a request that came during
     * the first prefill is prefilled at the third iteration (one decode), not the fourth */
    config(&c, "tgi", 100000);
    eng_cfg_set(&c.sched, "waiting_served_ratio", "100");
    eng_cfg_set(&c.sched, "max_waiting_tokens", "2");
    eng_arrival b[5];
    for (int i = 0; i < 5; i++)
        b[i] = arrival(i < 4 ? 0 : SIM_NS_PER_MS / 2, 20, 50, NULL, 0);
    r = run(&c, b, 5);
    assert_int_equal(r->t.rq[4].t_first_sched, r->t.it[2].start_ns);
    free_rec(r);
}

/* TGI 3 (chunked_prefill, prefix_caching, as the `tgi` preset sets them): a prompt longer than
 * max_batch_prefill_tokens is prefilled in chunks instead of refused, each step's prefill plus
 * its decodes within the budget; a repeated prompt starts after its cached blocks. */
static void test_tgi3_chunked_prefix(void **state)
{
    eng_config c;
    config(&c, "tgi", 100000);
    eng_cfg_set(&c.sched, "max_batch_prefill_tokens", "512");
    eng_arrival a[] = {arrival(0, 1000, 10, seg_a, 1),
                       arrival(200 * SIM_NS_PER_MS, 1000, 10, seg_a, 1)};
    rec *r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].reject, ENG_REJECT_BATCH); /* TGI 2: over the prefill budget */
    free_rec(r);
    eng_cfg_set(&c.sched, "chunked_prefill", "true");
    eng_cfg_set(&c.sched, "prefix_caching", "true");
    r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].reject, 0);
    assert_int_equal(r->t.rq[1].reject, 0);
    assert_int_equal(r->t.rq[1].cached_tokens, (1000 - 1) / 16 * 16);
    int chunks = 0;
    for (int i = 0; i < r->t.nit; i++) {
        assert_true(r->t.it[i].prefill_tokens + r->t.it[i].decode_tokens <= 512);
        chunks += r->t.it[i].prefill_tokens > 0 && r->t.it[i].start_ns < 200 * SIM_NS_PER_MS;
    }
    assert_int_equal(chunks, 2); /* 512 + 488 */
    free_rec(r);
}

/* The launcher's budget (max_batch_prefill_tokens 0): the card's FLOP/s over the model's FLOPs
 * per token on the cards it knows, 4096 on the others. */
static int tgi3_prefill_steps(const char *gpu)
{
    eng_config c;
    config(&c, "tgi", 100000);
    c.model.max_context = 1 << 20;
    snprintf(c.gpu.name, sizeof c.gpu.name, "%s", gpu);
    eng_cfg_set(&c.sched, "chunked_prefill", "true");
    eng_cfg_set(&c.sched, "max_batch_prefill_tokens", "0");
    eng_arrival a[] = {arrival(0, 5000, 3, NULL, 0)};
    rec *r = run(&c, a, 1);
    int steps = 0;
    for (int i = 0; i < r->t.nit; i++)
        steps += r->t.it[i].prefill_tokens > 0;
    free_rec(r);
    return steps;
}

static void test_tgi3_launcher_budget(void **state)
{
    const eng_preset *p = eng_preset_find("tgi", NULL);
    assert_string_equal(p->version, "3");
    assert_non_null(strstr(p->params, "max_batch_prefill_tokens=0"));
    assert_non_null(eng_preset_find("tgi", "2"));
    /* a card the launcher does not know: 4096 (4096 + 904); an H100 SXM: 900 TFLOP/s over the
     * tiny model's 46 MFLOP per token, far above the 5000-token prompt */
    assert_int_equal(tgi3_prefill_steps("fake"), 2);
    assert_int_equal(tgi3_prefill_steps("h100-sxm"), 1);
}

/* ================= sglang ================= */

/* Admission reserves new_token_ratio x the running requests' remaining outputs; the ratio
 * decays every decode step: a request refused next to a long runner is admitted once a short one
 * finishes (clearing batch_is_full) and the ratio has decayed, long before the runner ends. */
static void test_sglang_ratio_admission_and_decay(void **state)
{
    eng_config c;
    config(&c, "sglang", 4096);
    eng_cfg_set(&c.sched, "disable_radix_cache", "true");
    eng_arrival a[] = {arrival(0, 100, 3000, NULL, 0), arrival(0, 100, 300, NULL, 0),
                       arrival(SIM_NS_PER_MS, 1800, 500, NULL, 0)};
    rec *r = run(&c, a, 3);
    int64_t short_done = r->t.rq[1].t_finish, long_done = r->t.rq[0].t_finish;
    print_message("short runner done %.1f ms, newcomer admitted %.1f ms, long runner done %.1f "
                  "ms\n",
                  short_done / 1e6, r->t.rq[2].t_first_sched / 1e6, long_done / 1e6);
    assert_true(r->t.rq[2].t_first_sched >= short_done); /* refused at first */
    assert_true(r->t.rq[2].t_first_sched < long_done);   /* admitted once the ratio decayed */
    free_rec(r);
}

/* Retraction when decode memory runs out takes the request with the fewest output tokens (the
 * longest prompt among equals). */
static void test_sglang_retracts_fewest_outputs(void **state)
{
    eng_config c;
    config(&c, "sglang", 80 * 16);
    eng_cfg_set(&c.sched, "disable_radix_cache", "true");
    eng_cfg_set(&c.sched, "schedule_conservativeness", "0"); /* admit both at once */
    eng_arrival a[] = {arrival(0, 100, 700, NULL, 0), arrival(SIM_NS_PER_MS, 300, 700, NULL, 0)};
    rec *r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].preemptions, 0); /* the one with more output tokens stays */
    assert_true(r->t.rq[1].preemptions >= 1);
    free_rec(r);
}

/* The prefill steps of a 2000-token request chunk-prefilled 512 tokens at a time next to one
 * running request, mixed or not: each step's prefill tokens (want) and decode tokens. */
static void expect_sglang_chunks(const char *mixed, const int32_t want[4], int32_t decode)
{
    eng_config c;
    config(&c, "sglang", 100000);
    eng_cfg_set(&c.sched, "chunked_prefill_size", "512");
    eng_cfg_set(&c.sched, "enable_mixed_chunk", mixed);
    eng_arrival a[] = {arrival(0, 50, 100, NULL, 0), arrival(5 * SIM_NS_PER_MS, 2000, 5, NULL, 0)};
    rec *r = run(&c, a, 2);
    int k = 0;
    while (r->t.it[k].start_ns < r->t.rq[1].t_first_sched)
        k++;
    for (int j = 0; j < 4; j++) {
        assert_int_equal(r->t.it[k + j].prefill_tokens, want[j]);
        assert_int_equal(r->t.it[k + j].decode_tokens, decode);
    }
    free_rec(r);
}

/* One request at a time is chunk-prefilled, chunked_prefill_size tokens per prefill batch, and
 * the decode batch waits meanwhile (no mixed chunks). */
static void test_sglang_chunked_prefill(void **state)
{
    const int32_t want[] = {512, 512, 512, 464};
    expect_sglang_chunks("false", want, 0);
}

/* enable_mixed_chunk: the running requests decode in the prefill steps, and their decode tokens
 * come out of the prefill budgets (chunks of 512 - 1 tokens while one request runs). */
static void test_sglang_mixed_chunk(void **state)
{
    const int32_t want[] = {511, 511, 511, 467};
    expect_sglang_chunks("true", want, 1);
}

/* schedule_policy lpm: the waiting request with the longest cached prefix goes first. */
static void test_sglang_lpm(void **state)
{
    static const eng_segment u1[] = {{11, 1000}}, u2[] = {{12, 1000}};
    eng_arrival a[] = {arrival(0, 1000, 2, seg_a, 1), arrival(500 * SIM_NS_PER_MS, 1000, 2, u1, 1),
                       arrival(500 * SIM_NS_PER_MS, 1000, 2, u2, 1),
                       arrival(500 * SIM_NS_PER_MS, 1000, 2, seg_a, 1)};
    for (int lpm = 0; lpm < 2; lpm++) {
        eng_config c;
        config(&c, "sglang", 100000);
        eng_cfg_set(&c.sched, "max_prefill_tokens", "100"); /* one request per prefill batch */
        eng_cfg_set(&c.sched, "schedule_policy", lpm ? "lpm" : "fcfs");
        rec *r = run(&c, a, 4);
        int first = r->t.rq[3].t_first_sched < r->t.rq[1].t_first_sched;
        assert_int_equal(first, lpm);
        assert_int_equal(r->t.rq[3].cached_tokens, 992);
        free_rec(r);
    }
}

/* ================= trtllm ================= */

/* GUARANTEED_NO_EVICT starts a request only when the blocks it needs to completion are free:
 * never a preemption, one 64-block request at a time in a 64-block cache. MAX_UTILIZATION starts
 * both and pauses the latest-arrived when blocks run out. */
static void test_trtllm_capacity_policies(void **state)
{
    eng_arrival a[] = {arrival(0, 24, 1000, NULL, 0), arrival(0, 24, 1000, NULL, 0)};
    eng_config c;
    config(&c, "trtllm", 64 * 16);
    rec *r = run(&c, a, 2);
    assert_int_equal(r->tot.preemptions, 0);
    assert_true(r->t.rq[1].t_first_sched >= r->t.rq[0].t_finish);
    free_rec(r);
    eng_cfg_set(&c.sched, "capacity_scheduler_policy", "max_utilization");
    r = run(&c, a, 2);
    assert_int_equal(r->t.rq[0].t_first_sched, r->t.rq[1].t_first_sched);
    assert_int_equal(r->t.rq[0].preemptions, 0);
    assert_true(r->t.rq[1].preemptions >= 1);
    free_rec(r);
}

/* The overlap scheduler forms step n+1 before it reads step n's results: a request that
 * finished in step n still holds its seat in step n+1, so with max_batch_size 2 a waiting
 * request starts a step later than without the overlap scheduler (a long runner keeps the GPU
 * busy meanwhile). */
static void test_trtllm_overlap_retiring_seat(void **state)
{
    eng_arrival a[] = {arrival(0, 16, 4, NULL, 0), arrival(0, 16, 40, NULL, 0),
                       arrival(0, 16, 4, NULL, 0)};
    int64_t start[2];
    for (int ov = 0; ov < 2; ov++) {
        eng_config c;
        config(&c, "trtllm", 100000);
        eng_cfg_set(&c.sched, "max_batch_size", "2");
        eng_cfg_set(&c.sched, "overlap_scheduler", ov ? "true" : "false");
        rec *r = run(&c, a, 3);
        int k = 0; /* the step in which the third request starts */
        while (r->t.it[k].start_ns < r->t.rq[2].t_first_sched)
            k++;
        assert_true(r->t.it[k].start_ns == r->t.rq[2].t_first_sched);
        /* the first finished in the step before the third's first, or one more before */
        int j = 0;
        while (r->t.it[j].start_ns + r->t.it[j].duration_ns < r->t.rq[0].t_finish)
            j++;
        assert_int_equal(k - j, ov ? 2 : 1);
        start[ov] = r->t.rq[2].t_first_sched;
        free_rec(r);
    }
    assert_true(start[1] > start[0]);
}

/* An overlap loop forms step n+1 when step n starts (cpu.form_ahead): a request that arrives
 * while a step is in flight is first scheduled in the step after the next, one step later than
 * without it. */
static void test_form_ahead(void **state)
{
    eng_arrival a[] = {arrival(0, 16, 40, NULL, 0), arrival(1, 16, 4, NULL, 0)};
    for (int fa = 0; fa < 2; fa++) {
        eng_config c;
        config(&c, "trtllm", 100000);
        c.cpu = (eng_cpu_overhead){.async = 1, .own_step = 1, .form_ahead = fa};
        rec *r = run(&c, a, 2);
        int j = 0; /* the step in flight when the second arrived */
        while (r->t.it[j].start_ns + r->t.it[j].duration_ns <= r->t.rq[1].t_arrival)
            j++;
        assert_true(r->t.it[j].start_ns <= r->t.rq[1].t_arrival);
        int k = 0; /* the step in which it starts */
        while (r->t.it[k].start_ns < r->t.rq[1].t_first_sched)
            k++;
        assert_int_equal(r->t.it[k].start_ns, r->t.rq[1].t_first_sched);
        assert_int_equal(k - j, fa ? 2 : 1);
        assert_int_equal(r->t.rq[1].output, 4); /* it ran to its end */
        assert_true(r->t.rq[1].t_finish > 0);
        free_rec(r);
    }
}

/* max_num_tokens counts context tokens and one per generation request; without chunked context
 * a context must fit a step whole (a longer one is refused); with it, a cut chunk is a whole
 * number of blocks. */
static void test_trtllm_max_num_tokens(void **state)
{
    eng_arrival a[12];
    for (int i = 0; i < 12; i++)
        a[i] = arrival((int64_t)i * SIM_NS_PER_MS, 700, 30, NULL, 0);
    eng_config c;
    config(&c, "trtllm", 100000);
    eng_cfg_set(&c.sched, "max_num_tokens", "1000");
    rec *r = run(&c, a, 12);
    for (int i = 0; i < r->t.nit; i++) {
        assert_true(r->t.it[i].prefill_tokens + r->t.it[i].decode_tokens <= 1000);
        assert_int_equal(r->t.it[i].prefill_tokens % 700, 0);
    }
    free_rec(r);
    eng_arrival b[] = {arrival(0, 2500, 3, NULL, 0)};
    r = run(&c, b, 1);
    assert_int_equal(r->t.rq[0].reject, ENG_REJECT_BATCH);
    free_rec(r);
    eng_cfg_set(&c.sched, "enable_chunked_context", "true");
    r = run(&c, b, 1);
    assert_int_equal(r->t.it[0].prefill_tokens, 992); /* 1000 cut to 62 blocks of 16 */
    assert_int_equal(r->t.it[1].prefill_tokens, 992);
    assert_int_equal(r->t.it[2].prefill_tokens, 516);
    free_rec(r);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_prefix_hit_skips_cached_blocks, test_prefix_longest_leading_match,
                 test_prefix_eviction_order, test_prefix_visible_at_schedule_or_completion,
                 test_prefix_own_blocks_apart, test_vllm_defaults_per_gpu_and_entry_point,
                 test_vllm_running_then_waiting, test_vllm_preempts_tail_admits_none,
                 test_vllm_v0_can_allocate_prompt_only, test_vllm_v0_latest_arrived,
                 test_vllm_v0_multi_step, test_tgi_current_defaults, test_tgi3_chunked_prefix,
                 test_tgi3_launcher_budget, test_sglang_ratio_admission_and_decay,
                 test_sglang_retracts_fewest_outputs, test_sglang_chunked_prefill,
                 test_sglang_mixed_chunk, test_sglang_lpm, test_trtllm_capacity_policies,
                 test_trtllm_max_num_tokens, test_trtllm_overlap_retiring_seat, test_form_ahead)
