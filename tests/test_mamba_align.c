/*
 * test_mamba_align.c: memory.mamba_cache_mode align, vLLM's opt-in prefix caching for models
 * with linear-attention layers (engine/kv_hybrid.c), on Qwen3.5-397B-A17B's config (read in
 * place from ../shared/data/models, skipped when absent).
 *
 * The aligned block size is worked out here from the config's numbers by vLLM's rule (16 x
 * ceil(one layer's state / (16 x one layer's KV per token)), per GPU at tensor_parallel 8), not
 * read back from the engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "study.h"
#include "study_util.h"
#include "test_main.h"

/* Qwen3.5-397B-A17B at tensor_parallel 8: 2 KV heads (one per GPU) of 256 in bf16, K and V;
 * a DeltaNet layer's state: 64 / 8 value heads x 128 x 128 in float32 (mamba_ssm_dtype) and a
 * conv state of (2 x 16 x 128 + 64 x 128) / 8 channels x 3 taps in bf16. */
#define ATTN_PER_TOKEN (1 * 256 * 2 * 2)
#define STATE_PER_LAYER (8 * 128 * 128 * 4 + (2 * 16 * 128 + 64 * 128) / 8 * 3 * 2)
#define ALIGNED (16 * ((STATE_PER_LAYER + 16 * ATTN_PER_TOKEN - 1) / (16 * ATTN_PER_TOKEN)))

static char model_path[1024];

static int have_model(void)
{
    snprintf(model_path, sizeof model_path, "%s/data/models/qwen3.5-397b-a17b/config.json",
             LLMSIM_SHARED_DIR);
    if (access(model_path, R_OK) == 0)
        return 1;
    print_message("skipped: %s is absent (the shared data)\n", model_path);
    return 0;
}

/* A shared system prompt: 4 prefixes of 3000 tokens, then each request's own 50-200. */
static const char shared[] = "workload:\n  num_requests: 200\n"
                             "  arrival: {process: poisson, rate: 2}\n"
                             "  prompt_tokens: {dist: uniform, min: 50, max: 200}\n"
                             "  output_tokens: 100\n"
                             "  shared_prefix: {tokens: 3000, groups: 4}\n";

static int load(const char *model, const char *engine, const char *memory, const char *work,
                scn_scenario *s, sim_err *err)
{
    char text[4096];
    snprintf(text, sizeof text,
             "name: align\nseed: 3\nmodel: %s\ngpu: h200\ntensor_parallel: 8\nengine: %s\n"
             "memory: {%s}\n%s",
             model, engine, memory, work);
    return scn_load_text("align.yaml", text, NULL, 0, study_resolver(), s, err);
}

static void load_ok(const char *memory, const char *work, scn_scenario *s)
{
    sim_err err = {{0}};
    if (load(model_path, "vllm", memory, work, s, &err) != 0)
        fail_msg("load: %s", err.msg);
}

typedef struct hits {
    int64_t n, hit, misaligned, most;
} hits;

static void on_request(void *st, const eng_request *rq)
{
    hits *h = st;
    h->n++;
    h->hit += rq->cached_tokens > 0;
    h->misaligned += rq->cached_tokens % ALIGNED != 0;
    h->most = rq->cached_tokens > h->most ? rq->cached_tokens : h->most;
}

static const eng_recorder_ops hit_ops = {on_request, NULL, NULL, NULL};

static study_result *run(const char *memory, const char *work, const eng_recorder_ops *ops,
                         void *st)
{
    scn_scenario s;
    load_ok(memory, work, &s);
    study_result *r = calloc(1, sizeof *r);
    su_run(&s, &(study_hooks){.rec = ops, .rec_st = st, .check_every = 64}, r);
    scn_free(&s);
    return r;
}

/* The opt-in raises the blocks to vLLM's aligned size (528 tokens here), and says so. */
static void test_block_size(void **state)
{
    (void)state;
    if (!have_model())
        skip();
    assert_int_equal(ALIGNED, 528);
    scn_scenario s;
    load_ok("mamba_cache_mode: align", shared, &s);
    assert_int_equal(s.engine.block_size, ALIGNED);
    assert_int_equal(eng_kv_hybrid_block_size(&s.engine), ALIGNED);
    assert_non_null(strstr(s.notes, "attention blocks of 528 tokens (from 16)"));
    scn_free(&s);
    /* off: nothing changes, and the note points at the opt-in */
    load_ok("mamba_cache_mode: none", shared, &s);
    assert_int_equal(s.engine.block_size, 16);
    assert_non_null(strstr(s.notes, "memory.mamba_cache_mode: align"));
    scn_free(&s);
}

/* A model without linear-attention layers, or an engine other than vLLM V1, is refused. */
static void test_refused(void **state)
{
    (void)state;
    scn_scenario s;
    sim_err err = {{0}};
    assert_int_not_equal(load("llama-3.1-8b", "vllm", "mamba_cache_mode: align", shared, &s, &err),
                         0);
    scn_free(&s);
    assert_non_null(strstr(err.msg, "llama-3.1-8b has none"));
    if (!have_model())
        return;
    memset(&err, 0, sizeof err);
    assert_int_not_equal(load(model_path, "sglang", "mamba_cache_mode: align", shared, &s, &err),
                         0);
    scn_free(&s);
    assert_non_null(strstr(err.msg, "align is vLLM V1's option"));
}

/* Each block carries a state page per linear-attention group: 3 here (45 DeltaNet layers over
 * 15 full-attention ones, pages of equal size), so a block costs 4 pages and the cache holds a
 * quarter of the tokens 528-token blocks would hold without the states. */
static void test_capacity(void **state)
{
    (void)state;
    if (!have_model())
        skip();
    scn_scenario on, off;
    load_ok("mamba_cache_mode: align", shared, &on);
    load_ok("block_size: 256", shared, &off);
    eng_kv_plan pon, poff, bare;
    sim_err err = {{0}};
    assert_int_equal(eng_kv_plan_compute(&on.engine, &pon, &err), 0);
    assert_int_equal(eng_kv_plan_compute(&off.engine, &poff, &err), 0);
    eng_config c = on.engine;
    c.mamba_cache_mode = ENG_MAMBA_NONE;
    assert_int_equal(eng_kv_plan_compute(&c, &bare, &err), 0);
    int64_t page = (int64_t)15 * ATTN_PER_TOKEN * ALIGNED; /* 15 full layers on one GPU */
    assert_int_equal(bare.block_bytes, page);
    assert_int_equal(bare.state_blocks, 3);
    assert_int_equal(pon.block_bytes, 4 * page);
    assert_int_equal(pon.state_blocks, 0);
    assert_int_equal(pon.blocks, pon.kv_bytes / (4 * page));
    assert_true(pon.tokens < poff.tokens);
    assert_true(pon.tokens < bare.tokens);
    scn_free(&on);
    scn_free(&off);
}

/* On a shared system prompt: off, no hit; on, hits in whole 528-token blocks (5 of the 3000
 * shared tokens' blocks at most), on most requests. */
static void test_hits_aligned(void **state)
{
    (void)state;
    if (!have_model())
        skip();
    hits hon = {0}, hoff = {0};
    study_result *off = run("mamba_cache_mode: none", shared, &hit_ops, &hoff);
    study_result *on = run("mamba_cache_mode: align", shared, &hit_ops, &hon);
    assert_int_equal(hoff.hit, 0);
    assert_true(study_metric(off, "prefix_hit_rate") == 0);
    assert_int_equal(hon.n, 200);
    assert_true(hon.hit > hon.n / 2);
    assert_int_equal(hon.misaligned, 0);
    assert_int_equal(hon.most, 3000 / ALIGNED * ALIGNED);
    assert_true(study_metric(on, "prefix_hit_rate") > 0.5);
    assert_true(study_metric(on, "mean_ttft_ms") < study_metric(off, "mean_ttft_ms"));
    free(off);
    free(on);
}

/* Same scenario and seed, same results. */
static void test_deterministic(void **state)
{
    (void)state;
    if (!have_model())
        skip();
    hits a = {0}, b = {0};
    study_result *x = run("mamba_cache_mode: align", shared, &hit_ops, &a);
    study_result *y = run("mamba_cache_mode: align", shared, &hit_ops, &b);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(x->n, y->n);
    for (int i = 0; i < x->n; i++)
        assert_memory_equal(&x->m[i].value, &y->m[i].value, sizeof x->m[i].value);
    free(x);
    free(y);
}

typedef struct chunks {
    int64_t n, aligned, tail, other, longest;
} chunks;

static void on_iteration(void *st, const eng_iter_rec *it)
{
    chunks *c = st;
    if (it->prefill_tokens <= 0)
        return;
    c->n++;
    c->aligned += it->prefill_tokens % ALIGNED == 0;
    c->tail += it->prefill_tokens == 5000 % ALIGNED;
    c->other += it->prefill_tokens % ALIGNED != 0 && it->prefill_tokens != 5000 % ALIGNED;
    c->longest = it->prefill_tokens > c->longest ? it->prefill_tokens : c->longest;
}

static const eng_recorder_ops chunk_ops = {NULL, on_iteration, NULL, NULL};

/* Prefill chunks under a 2048-token budget end at block boundaries: 3 chunks of 1584 tokens up
 * to the prompt's last whole block (4752), then its 248 left; off, 2048-token chunks. */
static void test_chunks_aligned(void **state)
{
    (void)state;
    if (!have_model())
        skip();
    static const char lone[] = "workload:\n  num_requests: 3\n"
                               "  arrival: {process: poisson, rate: 0.01}\n"
                               "  prompt_tokens: 5000\n  output_tokens: 4\n"
                               "scheduler: {max_num_batched_tokens: 2048}\n";
    chunks on = {0}, off = {0};
    free(run("mamba_cache_mode: align", lone, &chunk_ops, &on));
    free(run("mamba_cache_mode: none", lone, &chunk_ops, &off));
    assert_int_equal(on.n, 3 * 4);
    assert_int_equal(on.aligned, 3 * 3);
    assert_int_equal(on.tail, 3);
    assert_int_equal(on.other, 0);
    assert_int_equal(on.longest, 3 * ALIGNED);
    assert_int_equal(off.longest, 2048);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_block_size, test_refused, test_capacity, test_hits_aligned,
                 test_deterministic, test_chunks_aligned)
