/*
 * test_hybrid.c: the engine's memory accounting and capped attention sums for today's layer
 * mixes: sliding windows (gpt-oss, Gemma), chunked local attention (Llama-4), DeepSeek sparse
 * attention, and linear-attention state (Qwen3.5), on small models and on the catalog's.
 *
 * Every expected figure is computed here from the rule the accounting follows (kv.c: a
 * sequence with c tokens holds full_mul x ceil(c / B) + window_mul x (ceil(c / B) -
 * floor(skipped(c) / B)) + state blocks), by brute force over each token, not from the engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "engine.h"
#include "engine_run.h"
#include "engine_util.h"
#include "rng.h"
#include "test_main.h"

/* ---- the rule, written out again ---- */

typedef struct rule {
    int64_t bs, fm, wm, window, chunked, state;
} rule;

static rule rule_of(const eng_kv_plan *p, int32_t bs)
{
    rule r = {bs, p->full_mul, p->window_mul, p->window, p->window_chunked, p->state_blocks};
    return r;
}

static int64_t skipped(const rule *r, int64_t c)
{
    if (r->wm == 0 || r->window == 0)
        return 0;
    if (r->chunked)
        return c / r->window * r->window;
    return c - r->window + 1 > 0 ? c - r->window + 1 : 0;
}

/* blocks of a sequence with c tokens computed and `ahead` more slots allocated */
static int64_t held(const rule *r, int64_t c, int64_t ahead)
{
    int64_t top = (c + ahead + r->bs - 1) / r->bs;
    return r->fm * top + r->wm * (top - skipped(r, c) / r->bs) + r->state;
}

/* the most a sequence of `tokens` tokens holds on its way, each step allocating one slot */
static int64_t peak(const rule *r, int64_t tokens)
{
    int64_t most = 0;
    for (int64_t c = 0; c < tokens; c++) {
        int64_t h = held(r, c, 1);
        most = h > most ? h : most;
    }
    return most;
}

/* ---- a recorder that checks the engine after every iteration ---- */

#define MAXIT 200000
typedef struct rec {
    int64_t n;
    int32_t num_seqs[MAXIT];
    int64_t blocks[MAXIT], gpu[MAXIT], capped[MAXIT], ctx[MAXIT];
    int32_t decodes[MAXIT];
    int64_t ptok[MAXIT];
    double pairs_c[MAXIT], kv_c[MAXIT];
    double hit_rate; /* prefix_hit_rate of the run */
} rec;

static void on_it(void *st, const eng_iter_rec *it)
{
    rec *r = st;
    if (r->n >= MAXIT)
        return;
    r->num_seqs[r->n] = it->num_seqs;
    r->blocks[r->n] = it->kv_blocks_used;
    r->gpu[r->n] = it->gpu_ns;
    r->capped[r->n] = it->shape.decode_ctx_capped;
    r->ctx[r->n] = it->shape.decode_ctx;
    r->decodes[r->n] = it->shape.decode_seqs;
    r->ptok[r->n] = it->shape.prefill_tokens;
    r->pairs_c[r->n] = it->shape.prefill_pairs_capped;
    r->kv_c[r->n] = it->shape.prefill_kv_capped;
    r->n++;
}

static const eng_recorder_ops rec_ops = {NULL, on_it, NULL, NULL};

static int64_t capped_cost_ns(const void *st, const eng_shape *s)
{
    return 1000000 + 1000 * s->tokens + 1000 * s->decode_ctx_capped;
}

static const eng_predictor_ops lin_ops = {"linear", linear_ns, linear_xfer_ns, NULL, NULL, NULL,
                                          NULL,     NULL,      NULL,           NULL, NULL};
static const eng_predictor lin = {&lin_ops, NULL, "linear test cost"};
static const eng_predictor_ops capped_ops = {"capped", capped_cost_ns, NULL, NULL, NULL, NULL,
                                             NULL,     NULL,           NULL, NULL, NULL};
static const eng_predictor capped_pred = {&capped_ops, NULL, "capped test cost"};

/* Runs cfg over the arrivals; the recorder checks the engine after every iteration. */
static rec *run(const eng_config *cfg, const eng_predictor *p, const eng_arrival *a, int n,
                eng_totals *tot)
{
    rec *r = calloc(1, sizeof *r);
    eu_out o;
    eu_run(cfg, &(eng_costs){p, NULL}, a, n, 7, &rec_ops, r, 1, &o);
    if (tot)
        *tot = o.tot;
    r->hit_rate = eu_metric(&o, "prefix_hit_rate");
    return r;
}

/* ---- small hybrid models ---- */

enum { SLIDING, GEMMA_LIKE, CHUNKED, DSA, LINEAR, FULL };

/* tiny_config's model (4 KiB of KV per layer and token) turned into a layer mix, on a GPU
 * whose cache holds `blocks` blocks exactly. */
static void hybrid_config(eng_config *c, int kind, int64_t blocks)
{
    tiny_config(c, 1024);
    eng_model *m = &c->model;
    m->layers = 4;
    switch (kind) {
    case SLIDING: /* gpt-oss: half the layers slide over a window */
        m->window_layers = 2;
        m->window = 64;
        break;
    case GEMMA_LIKE: /* Gemma-3: five windowed layers to one global */
        m->layers = 6;
        m->window_layers = 5;
        m->window = 64;
        break;
    case CHUNKED: /* Llama-4: three chunked layers to one global */
        m->window_layers = 3;
        m->window = 64;
        m->window_chunked = 1;
        break;
    case DSA: /* an indexer picks the top 48 keys: the cap binds, the KV grows */
        m->index_topk = 48;
        m->index_heads = 4;
        m->index_dim = 128;
        break;
    case LINEAR: /* Qwen3.5: linear-attention layers with a fixed state */
        m->linear_layers = 2;
        m->lin_k_heads = 2;
        m->lin_v_heads = 4;
        m->lin_k_dim = 64;
        m->lin_v_dim = 64;
        m->lin_conv = 4;
        m->state_dtype = ENG_FP32;
        break;
    default:
        break;
    }
    eng_kv_plan p;
    sim_err err;
    c->gpu.mem_bytes = INT64_C(1) << 40;
    assert_int_equal(eng_kv_plan_compute(c, &p, &err), 0);
    c->gpu.mem_bytes = p.weight_bytes + blocks * p.block_bytes;
}

static eng_kv_plan plan_of(const eng_config *c)
{
    eng_kv_plan p;
    sim_err err;
    if (eng_kv_plan_compute(c, &p, &err) != 0)
        fail_msg("plan: %s", err.msg);
    return p;
}

/* One request alone under vLLM on a model with a cache of 400 blocks: its config, plan, the
 * rule of its plan, and the run's record (the caller frees it). */
typedef struct lone {
    eng_config c;
    eng_kv_plan p;
    rule ru;
    rec *r;
} lone;

/* Runs one request of prompt and output tokens on the `kind` model, costed by pred, into *o. */
static void one_request(lone *o, int kind, const eng_predictor *pred, int32_t prompt,
                        int32_t output)
{
    hybrid_config(&o->c, kind, 400);
    snprintf(o->c.sched.name, sizeof o->c.sched.name, "vllm");
    o->p = plan_of(&o->c);
    o->ru = rule_of(&o->p, o->c.block_size);
    eng_arrival a = {0, prompt, output, NULL, 0, 0, 0, 0, 0};
    o->r = run(&o->c, pred, &a, 1, NULL);
}

static void test_small_layouts(void **state)
{
    eng_config c;
    hybrid_config(&c, SLIDING, 1000);
    eng_kv_plan p = plan_of(&c);
    assert_int_equal(p.blocks, 1000);
    assert_int_equal(p.full_mul, 1);
    assert_int_equal(p.window_mul, 1);
    assert_int_equal(p.window, 64);
    assert_int_equal(p.block_bytes, 2 * 4096 * 16);
    hybrid_config(&c, GEMMA_LIKE, 1000);
    p = plan_of(&c);
    assert_int_equal(p.window_mul, 5);
    hybrid_config(&c, CHUNKED, 1000);
    p = plan_of(&c);
    assert_int_equal(p.window_mul, 3);
    assert_int_equal(p.window_chunked, 1);
    hybrid_config(&c, LINEAR, 1000);
    p = plan_of(&c);
    /* two layers of conv (2 x 2 x 64 + 4 x 64 channels x 3 taps x 2 B) and fp32 recurrent
     * (4 x 64 x 64 x 4 B) state: 137,216 bytes over 131,072-byte blocks */
    assert_int_equal(p.state_bytes, 137216);
    assert_int_equal(p.state_blocks, 2);
    assert_int_equal(p.window_mul, 0);
}

/* Catalog models: gpt-oss alternates sliding (128) and full layers; Gemma-3-27B has 52 local
 * layers to 10 global ones (vLLM pads them to 6 groups of 10); Llama-4 Scout 36 chunked
 * (8192) to 12 full. */
static void test_catalog_layouts(void **state)
{
    static const struct {
        const char *name;
        int32_t window, wmul, chunked;
    } want[] = {{"gpt-oss-20b", 128, 1, 0},
                {"gpt-oss-120b", 128, 1, 0},
                {"gemma-3-27b", 1024, 6, 0},
                {"gemma-2-9b", 4096, 1, 0},
                {"llama-4-scout", 8192, 3, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        eng_config c;
        eng_config_defaults(&c);
        assert_int_equal(cal_model_find(want[i].name, &c.model), 0);
        assert_int_equal(cal_gpu_find("h200", &c.gpu), 0);
        if (strncmp(want[i].name, "llama-4", 7) == 0)
            c.tensor_parallel = 8;
        eng_kv_plan p = plan_of(&c);
        assert_int_equal(p.window, want[i].window);
        assert_int_equal(p.window_mul, want[i].wmul);
        assert_int_equal(p.window_chunked, want[i].chunked);
        assert_int_equal(p.full_mul, 1);
        assert_int_equal(p.state_blocks, 0);
        assert_true(p.block_bytes == p.bytes_per_token * c.block_size);
    }
}

/* Runs n requests of prompt and output tokens, gap_ns apart, on c: the most sequences an
 * iteration ran (or, when decoding, the most decode sequences). */
static int64_t most_at_once(const eng_config *c, int n, int64_t gap_ns, int32_t prompt,
                            int32_t output, int decoding)
{
    eng_arrival *a = calloc((size_t)n, sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = (eng_arrival){(int64_t)i * gap_ns, prompt, output, NULL, 0, 0, 0, 0, 0};
    rec *r = run(c, &lin, a, n, NULL);
    const int32_t *col = decoding ? r->decodes : r->num_seqs;
    int64_t most = 0;
    for (int64_t i = 0; i < r->n; i++)
        most = col[i] > most ? col[i] : most;
    free(r);
    free(a);
    return most;
}

/* A reserving policy (orca) admits as many long requests as whole reservations fit: the
 * windowed model's reservation is its peak under the window rule, the full-attention model of
 * the same bytes per token reserves every token. The first batch of n arriving at once: */
static int64_t first_batch(const eng_config *c, int n, int32_t prompt, int32_t output)
{
    return most_at_once(c, n, 0, prompt, output, 0);
}

/* The same model with every windowed layer made a full-attention one: the same KV bytes per
 * token, on the same GPU. */
static void as_full_attention(eng_config *c)
{
    c->model.window_layers = 0;
    c->model.window = 0;
    c->model.window_chunked = 0;
}

static void check_reserving(const char *name, const char *gpu, int32_t tp, int32_t prompt,
                            int32_t output)
{
    eng_config c;
    eng_config_defaults(&c);
    assert_int_equal(cal_model_find(name, &c.model), 0);
    assert_int_equal(cal_gpu_find(gpu, &c.gpu), 0);
    c.tensor_parallel = tp;
    c.max_model_len = prompt + output; /* the roofline's concern, not the engine's */
    snprintf(c.sched.name, sizeof c.sched.name, "orca");
    eng_cfg_set(&c.sched, "max_num_seqs", "100000");
    eng_kv_plan p = plan_of(&c);
    rule r = rule_of(&p, c.block_size);
    int64_t want = p.blocks / peak(&r, (int64_t)prompt + output);
    int64_t got = first_batch(&c, (int)(want + 50), prompt, output);
    assert_int_equal(got, want);

    eng_config f = c;
    as_full_attention(&f);
    eng_kv_plan pf = plan_of(&f);
    assert_int_equal(pf.bytes_per_token, p.bytes_per_token + p.window_bytes_per_token);
    int64_t full = pf.blocks / (((int64_t)prompt + output + f.block_size - 1) / f.block_size);
    assert_int_equal(first_batch(&f, (int)(full + 50), prompt, output), full);
    print_message("%s: %lld long requests at once, %lld with full attention\n", name,
                  (long long)got, (long long)full);
    assert_true(got > full);
}

static void test_windows_hold_more_reserving(void **state)
{
    check_reserving("gpt-oss-20b", "h100-sxm", 1, 16000, 200);
    check_reserving("gemma-3-27b", "h200", 1, 16000, 200);
}

/* A paged policy (vLLM V1) holds more running requests on the windowed model too. */
static void test_windows_hold_more_paged(void **state)
{
    eng_config c;
    eng_config_defaults(&c);
    assert_int_equal(cal_model_find("gpt-oss-20b", &c.model), 0);
    assert_int_equal(cal_gpu_find("h100-sxm", &c.gpu), 0);
    c.max_model_len = 32768;
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    eng_config f = c;
    as_full_attention(&f);
    int64_t w = most_at_once(&c, 400, 1000000, 12000, 300, 1);
    int64_t full = most_at_once(&f, 400, 1000000, 12000, 300, 1);
    print_message("gpt-oss-20b under vllm: %lld decoding at once, %lld with full attention\n",
                  (long long)w, (long long)full);
    assert_true(w > full);
}

/* Every layer mix through the paged policies with requests that cross their window, chunk
 * boundaries and cap many times: after every iteration eng_check recomputes each member's
 * blocks and capped context from scratch and compares them with the incremental accounts. */
static void test_paged_accounting_exact(void **state)
{
    static const char *const policies[] = {"vllm", "chunked", "sglang", "vllm-v0"};
    for (int kind = SLIDING; kind <= FULL; kind++)
        for (size_t pi = 0; pi < sizeof policies / sizeof policies[0]; pi++) {
            eng_config c;
            hybrid_config(&c, kind, 400);
            snprintf(c.sched.name, sizeof c.sched.name, "%s", policies[pi]);
            if (strcmp(policies[pi], "chunked") == 0)
                eng_cfg_set(&c.sched, "token_budget", "96");
            enum { N = 120 };
            eng_arrival a[N];
            random_arrivals(a, N, 3, 40e6, 300, 400);
            eng_totals tot;
            rec *r = run(&c, &lin, a, N, &tot);
            assert_int_equal(tot.finished + tot.rejected, N);
            assert_true(tot.finished > N / 2);
            free(r);
        }
}

/* One request on the linear-attention model: its state is taken once at admission, then only
 * the full-attention blocks grow, one per block_size tokens. */
static void test_state_taken_once(void **state)
{
    const int32_t prompt = 100, output = 300;
    lone o;
    one_request(&o, LINEAR, &lin, prompt, output);
    const rec *r = o.r;
    assert_int_equal(r->n, output); /* the prefill, then output - 1 decode steps */
    assert_int_equal(r->blocks[0], held(&o.ru, 0, prompt));
    for (int64_t i = 1; i < r->n; i++) {
        int64_t ctx = prompt + i - 1;
        assert_int_equal(r->ctx[i], ctx);
        assert_int_equal(r->blocks[i], (ctx + 1 + 15) / 16 + o.p.state_blocks);
    }
    free(o.r);
    /* and a reservation counts it once as well */
    eng_config res = o.c;
    snprintf(res.sched.name, sizeof res.sched.name, "orca");
    eng_cfg_set(&res.sched, "max_num_seqs", "100000");
    int64_t want = o.p.blocks / ((prompt + output + 15) / 16 + o.p.state_blocks);
    assert_int_equal(first_batch(&res, (int)want + 20, prompt, output), want);
}

/* One request's decode steps on a model with capped layers: the capped sum is min(context,
 * W - 1) under a sliding window, and under chunked local attention the context within its
 * chunk, dropping to 0 at each boundary; the blocks held follow the rule (past the window, or at
 * a chunk's end, its blocks are freed). */
static void test_decode_capped_sums(void **state)
{
    const int32_t prompt = 10, output = 200;
    static const int kinds[] = {SLIDING, CHUNKED};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        lone o;
        one_request(&o, kinds[k], &capped_pred, prompt, output);
        for (int64_t i = 1; i < o.r->n; i++) {
            int64_t ctx = prompt + i - 1;
            int64_t want = kinds[k] == CHUNKED ? ctx % 64 : ctx < 63 ? ctx : 63;
            assert_int_equal(o.r->capped[i], want);
            assert_int_equal(o.r->blocks[i], held(&o.ru, ctx, 1));
        }
        free(o.r);
    }
}

/* One request on a sliding-window model: a decode step's cost grows with its context until the
 * context reaches the window, then stays flat, and its blocks stop growing past the window. */
static void test_window_cost_flat(void **state)
{
    const int32_t prompt = 10, output = 200;
    lone o;
    one_request(&o, SLIDING, &capped_pred, prompt, output);
    const rec *r = o.r;
    int64_t flat = -1;
    for (int64_t i = 1; i < r->n; i++) {
        if (prompt + i - 1 < 63) {
            assert_true(r->gpu[i] > r->gpu[i - 1] || i == 1);
        } else {
            if (flat < 0)
                flat = r->gpu[i];
            assert_int_equal(r->gpu[i], flat);
        }
    }
    assert_true(flat > r->gpu[1]);
    /* past the window the windowed layers keep at most ceil((W - 1) / B) + 1 blocks */
    int64_t last = prompt + output - 2, top = (last + 1 + 15) / 16;
    assert_true(r->blocks[r->n - 1] - top <= 5);
    assert_true(r->blocks[r->n - 1] < 2 * top);
    free(o.r);
}

/* A prompt computed in chunks of 96 tokens: each chunk's capped sums, as the engine gives them
 * to the cost model, equal a brute-force count over its positions: the query at position p
 * sees min(p + 1, W) keys under a sliding window or the top-k, (p mod W) + 1 under aligned
 * chunks of W; the chunk reads the keys from the first any of its queries sees. */
static void test_prefill_capped_sums(void **state)
{
    static const int kinds[] = {SLIDING, CHUNKED, DSA};
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        eng_config c;
        hybrid_config(&c, kinds[ki], 400);
        snprintf(c.sched.name, sizeof c.sched.name, "chunked");
        eng_cfg_set(&c.sched, "token_budget", "96");
        int32_t chunked, cap = eng_shape_cap(&c.model, &chunked);
        const int64_t w = (int64_t)cap + 1, prompt = 700;
        assert_true(cap > 0 && w < prompt);
        eng_arrival a = {0, (int32_t)prompt, 3, NULL, 0, 0, 0, 0, 0};
        rec *r = run(&c, &lin, &a, 1, NULL);
        int64_t done = 0, chunks = 0;
        for (int64_t i = 0; i < r->n; i++) {
            int64_t q = r->ptok[i];
            if (q == 0)
                continue;
            double pairs = 0;
            for (int64_t pos = done; pos < done + q; pos++)
                pairs += (double)(chunked ? pos % w + 1 : (pos + 1 < w ? pos + 1 : w));
            int64_t first = chunked ? done / w * w : (done - w + 1 > 0 ? done - w + 1 : 0);
            assert_true(r->pairs_c[i] == pairs);
            assert_true(r->kv_c[i] == (double)(done + q - first));
            done += q;
            chunks++;
        }
        assert_int_equal(done, prompt);
        assert_int_equal(chunks, (prompt + 95) / 96);
        free(r);
    }
}

/* vLLM's prefix cache on a model with sliding-window layers: requests sharing a 200-token
 * system prompt hit its cached blocks, and the accounting stays exact after every iteration
 * (the recorder runs eng_check) with the pool under pressure. */
static void test_prefix_cache_windows(void **state)
{
    for (int kind = SLIDING; kind <= CHUNKED; kind++) {
        eng_config c;
        hybrid_config(&c, kind, 300);
        snprintf(c.sched.name, sizeof c.sched.name, "vllm");
        enum { N = 80 };
        eng_arrival a[N];
        eng_segment seg[N][2];
        gsl_rng *g = sim_rng_new_stream(5, 0);
        int64_t t = 0;
        for (int i = 0; i < N; i++) {
            t += (int64_t)(gsl_rng_uniform(g) * 30e6);
            seg[i][0] = (eng_segment){1, 200};
            seg[i][1] =
                (eng_segment){(uint64_t)(100 + i), 20 + (int32_t)gsl_rng_uniform_int(g, 200)};
            a[i] = (eng_arrival){t,
                                 200 + seg[i][1].len,
                                 1 + (int32_t)gsl_rng_uniform_int(g, 300),
                                 seg[i],
                                 2,
                                 0,
                                 0,
                                 0,
                                 0};
        }
        gsl_rng_free(g);
        eng_totals tot;
        rec *r = run(&c, &lin, a, N, &tot);
        assert_int_equal(tot.finished + tot.rejected, N);
        assert_true(tot.finished > N / 2);
        print_message("kind %d: prefix hit rate %.3f\n", kind, r->hit_rate);
        assert_true(r->hit_rate > 0.3); /* most of each prompt is the shared one */
        free(r);
    }
}

/* Static batching's padded slots do not keep capped sums: refused for a model whose cap binds,
 * with the limit that would make it run. */
static void test_static_refused_when_cap_binds(void **state)
{
    eng_config c;
    hybrid_config(&c, SLIDING, 400);
    snprintf(c.sched.name, sizeof c.sched.name, "static");
    sim_ctx *ctx = sim_new(1);
    sim_err err;
    list_src src = {NULL, 0, 0};
    eng_engine *e = eng_new(ctx, &c, &(eng_costs){&lin, NULL}, &list_ops, &src, NULL, NULL, &err);
    assert_null(e);
    assert_non_null(strstr(err.msg, "max_model_len to at most 64"));
    c.max_model_len = 64;
    e = eng_new(ctx, &c, &(eng_costs){&lin, NULL}, &list_ops, &src, NULL, NULL, &err);
    assert_non_null(e);
    eng_free(e);
    sim_free(ctx);
}

/* The real Qwen3.5 config: its state is 48,015,360 bytes per sequence per GPU at TP 4. */
static void test_qwen35_state(void **state)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/models/qwen3.5-397b-a17b/config.json", LLMSIM_SHARED_DIR);
    eng_config c;
    eng_config_defaults(&c);
    char why[512];
    if (cal_model_from_config_json(path, &c.model, why, sizeof why) != 0) {
        print_message("skipped: %s\n", why);
        skip();
    }
    assert_int_equal(cal_gpu_find("b300", &c.gpu), 0);
    c.tensor_parallel = 4;
    eng_kv_plan p = plan_of(&c);
    rule r = rule_of(&p, c.block_size);
    assert_int_equal(p.state_bytes, 48015360);
    assert_int_equal(p.state_blocks, (48015360 + p.block_bytes - 1) / p.block_bytes);
    /* a 2,000-token request holds its state once: 125 blocks of KV and the state's 196 */
    assert_int_equal(held(&r, 2000, 0), 125 + 196);
    assert_int_equal(p.state_blocks, 196);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_small_layouts, test_catalog_layouts,
                 test_windows_hold_more_reserving, test_windows_hold_more_paged,
                 test_paged_accounting_exact, test_state_taken_once, test_decode_capped_sums,
                 test_window_cost_flat, test_prefill_capped_sums, test_prefix_cache_windows,
                 test_static_refused_when_cap_binds, test_qwen35_state)
