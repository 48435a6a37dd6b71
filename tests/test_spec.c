/*
 * test_spec.c: speculative decoding in the engine: accepted tokens per step (the minimum-
 * variance schedule and i.i.d. acceptance), what a step costs (the target verifies k + 1
 * tokens per sequence, the drafter runs its passes), the KV of the lookahead, ITL as a client
 * sees a multi-token step, the batch-size rule, and the decode cohort's exactness when members
 * advance by different numbers of tokens.
 */
#include <math.h>
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
#include "rng.h"
#include "test_main.h"

/* ---- a recorder keeping iterations, gaps and requests; it checks the engine each step ---- */

#define MAXIT 400000
typedef struct it_row {
    int64_t out, draft, gpu, blocks, ctx;
    int32_t verify, decodes, emit;
} it_row;

typedef struct rec {
    it_row *it;
    int64_t n;
    int64_t gaps, zeros; /* ITL samples: positive gaps, zero gaps */
    int64_t finished, out_tokens;
    double tpot_sum;
    int64_t tpot_n;
} rec;

static void on_it(void *st, const eng_iter_rec *it)
{
    rec *r = st;
    if (r->n >= MAXIT)
        return;
    r->it[r->n++] = (it_row){it->output_tokens,     it->draft_ns,         it->gpu_ns,
                             it->kv_blocks_used,    it->shape.decode_ctx, it->shape.decode_verify,
                             it->shape.decode_seqs, it->shape.emit_seqs};
}

static void on_itl(void *st, int64_t gap, int64_t count)
{
    rec *r = st;
    if (gap == 0)
        r->zeros += count;
    else
        r->gaps += count;
}

static void on_rq(void *st, const eng_request *rq)
{
    rec *r = st;
    if (rq->status != ENG_RQ_FINISHED)
        return;
    r->finished++;
    r->out_tokens += rq->output;
    if (rq->output > 1) {
        r->tpot_sum += (double)(rq->t_finish - rq->t_first_token) / (rq->output - 1);
        r->tpot_n++;
    }
}

static const eng_recorder_ops rec_ops = {on_rq, on_it, on_itl, NULL};

static int64_t draft_cost_ns(const void *st, const eng_shape *s)
{
    return 100000 + 500 * s->tokens;
}

static const eng_predictor_ops lin_ops = {"linear", linear_ns, linear_xfer_ns, NULL, NULL, NULL,
                                          NULL,     NULL,      NULL,           NULL, NULL};
static const eng_predictor lin = {&lin_ops, NULL, "linear test cost"};
static const eng_predictor_ops draft_ops = {"draft", draft_cost_ns, NULL, NULL, NULL, NULL,
                                            NULL,    NULL,          NULL, NULL, NULL};
static const eng_predictor drafter = {&draft_ops, NULL, "drafter test cost"};

typedef struct result {
    rec *r;
    eu_out o;
} result;

static double metric(const result *res, const char *name)
{
    return eu_metric(&res->o, name);
}

static result run(const eng_config *cfg, const eng_arrival *a, int n, uint64_t seed)
{
    result res = {0};
    res.r = calloc(1, sizeof *res.r);
    res.r->it = calloc(MAXIT, sizeof *res.r->it);
    eu_run(cfg, &(eng_costs){&lin, &drafter}, a, n, seed, &rec_ops, res.r, 1, &res.o);
    return res;
}

static void done(result *res)
{
    free(res->r->it);
    free(res->r);
}

/* tiny_config with a cache of `tokens` tokens, and speculative decoding of k drafts by an EAGLE
 * head (the head's own KV and weights join the plan) at mean acceptance length al. */
static void spec_config(eng_config *c, int64_t tokens, int32_t k, double al)
{
    tiny_config(c, tokens);
    c->gpu.mem_bytes *= 2; /* room for the head and its KV */
    if (k == 0)
        return;
    c->spec.method = ENG_SPEC_EAGLE;
    c->spec.k = k;
    c->spec.al = al;
    c->spec.classes = 8;
    char why[256];
    assert_int_equal(eng_spec_drafter(&c->spec, &c->model, 1, why, sizeof why), 0);
}

/* Prefills a step completes: the positions through the LM head beyond its decodes' k + 1. */
static int64_t completed(const it_row *it)
{
    return it->emit - (int64_t)it->decodes * (it->verify + 1);
}

static eng_arrival *same_requests(int n, int64_t gap_ns, int32_t prompt, int32_t output)
{
    eng_arrival *a = calloc((size_t)n, sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = (eng_arrival){(int64_t)i * gap_ns, prompt, output, NULL, 0, 0, 0, 0, 0};
    return a;
}

/* Acceptance 0 (AL 1): one token a step, each step dearer by the verification of k drafts and
 * the drafter's passes, so TPOT is worse than without speculation, never better. */
static void test_al1_no_better(void **state)
{
    eng_arrival *a = same_requests(16, 50000000, 200, 100);
    eng_config plain, spec;
    spec_config(&plain, 100000, 0, 0);
    spec_config(&spec, 100000, 3, 1.0);
    snprintf(plain.sched.name, sizeof plain.sched.name, "vllm");
    snprintf(spec.sched.name, sizeof spec.sched.name, "vllm");
    result p = run(&plain, a, 16, 1), s = run(&spec, a, 16, 1);
    for (int64_t i = 0; i < s.r->n; i++)
        if (s.r->it[i].decodes > 0) {
            /* one token each, plus the first tokens of the prefills it completes */
            assert_int_equal(s.r->it[i].out, s.r->it[i].decodes + completed(&s.r->it[i]));
            assert_int_equal(s.r->it[i].verify, 3);
            assert_true(s.r->it[i].draft > 0);
        }
    double tp = p.r->tpot_sum / p.r->tpot_n, ts = s.r->tpot_sum / s.r->tpot_n;
    print_message("AL 1: TPOT %.3f ms with k = 3, %.3f ms without\n", ts / 1e6, tp / 1e6);
    assert_true(ts > tp);
    assert_true(fabs(metric(&s, "spec_acceptance_length") - 1.0) < 1e-12);
    assert_int_equal(s.r->zeros, 0);
    done(&p);
    done(&s);
    free(a);
}

/* Perfect acceptance: every step emits k + 1 tokens per sequence (the last one what remains);
 * a request of 1 + m (k + 1) tokens decodes in m steps. */
static void test_perfect_acceptance(void **state)
{
    const int32_t k = 3, m = 25, output = 1 + m * (k + 1);
    eng_arrival a = {0, 300, output, NULL, 0, 0, 0, 0, 0};
    eng_config c;
    spec_config(&c, 100000, k, k + 1);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, &a, 1, 3);
    int64_t decode_steps = 0;
    for (int64_t i = 0; i < res.r->n; i++)
        if (res.r->it[i].decodes > 0) {
            decode_steps++;
            assert_int_equal(res.r->it[i].out, k + 1);
            /* the target computes k + 1 query tokens and their logits */
            assert_int_equal(res.r->it[i].emit, k + 1);
        }
    assert_int_equal(decode_steps, m);
    assert_true(fabs(metric(&res, "spec_acceptance_length") - (k + 1)) < 1e-12);
    /* as a client sees it: each step one gap, then k zero gaps */
    assert_int_equal(res.r->gaps, m);
    assert_int_equal(res.r->zeros, (int64_t)m * k);
    assert_int_equal(res.r->gaps + res.r->zeros, output - 1);
    done(&res);
}

/* A request whose remaining output is shorter than what its step accepts stops at its output:
 * the step's tokens and the zero gaps count only what it emitted. */
static void test_stops_at_output(void **state)
{
    const int32_t k = 4, output = 8; /* the first token, then 5 + 2 */
    eng_arrival a = {0, 50, output, NULL, 0, 0, 0, 0, 0};
    eng_config c;
    spec_config(&c, 100000, k, k + 1);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, &a, 1, 3);
    int64_t outs[4] = {0}, nd = 0;
    for (int64_t i = 0; i < res.r->n; i++)
        if (res.r->it[i].decodes > 0 && nd < 4)
            outs[nd++] = res.r->it[i].out;
    assert_int_equal(nd, 2);
    assert_int_equal(outs[0], 5);
    assert_int_equal(outs[1], 2);
    assert_int_equal(res.r->gaps, 2);
    assert_int_equal(res.r->zeros, 4 + 1);
    done(&res);
}

/* The realised mean acceptance length over 100,000 speculating steps reproduces the requested
 * one within 1%, under both ways of drawing it. */
static void check_realised(double al, eng_spec_dist dist)
{
    const int32_t k = 3;
    /* 150 requests of 3,900 tokens (the tiny model's context is 4,096): over 100,000
     * member-steps of speculation even at AL 3.33 */
    eng_arrival *a = same_requests(150, 20000000, 100, 3900);
    eng_config c;
    spec_config(&c, 2000000, k, al);
    c.spec.dist = dist;
    c.spec.rate = eng_spec_rate_of_length(al, k);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, a, 150, 11);
    double steps = metric(&res, "spec_num_drafts"), got = metric(&res, "spec_acceptance_length");
    int64_t emitted = 0;
    for (int64_t i = 0; i < res.r->n; i++)
        emitted += res.r->it[i].out;
    print_message("AL %.2f (%s): %.0f steps, realised %.4f\n", al,
                  dist == ENG_SPEC_IID ? "iid" : "min-variance", steps, got);
    assert_true(steps >= 100000);
    assert_true(fabs(got - al) / al < 0.01);
    /* every token a client received came from a step: the prefill's, then the accepted ones */
    assert_int_equal(emitted, res.r->out_tokens);
    done(&res);
    free(a);
}

static void test_realised_length(void **state)
{
    /* DeepSeek-V4-Pro MTP, thinking on, 3 draft tokens (dsv4_mtp.yaml) */
    check_realised(2.49, ENG_SPEC_MIN_VARIANCE);
    check_realised(2.49, ENG_SPEC_IID);
    /* Qwen3.5 MTP, thinking off, 3 draft tokens */
    check_realised(3.33, ENG_SPEC_MIN_VARIANCE);
}

/* The minimum-variance schedule takes only floor(AL) and floor(AL) + 1 tokens. */
static void test_min_variance_values(void **state)
{
    eng_arrival *a = same_requests(8, 1000000, 100, 600);
    eng_config c;
    spec_config(&c, 100000, 5, 3.3);
    c.spec.classes = 1; /* one draw for the batch: every member emits the same */
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, a, 8, 5);
    int64_t threes = 0, fours = 0;
    for (int64_t i = 0; i < res.r->n; i++) {
        const it_row *it = &res.r->it[i];
        /* a member finishing short of the batch's draw makes the total no multiple */
        if (it->decodes == 0 || it->out % it->decodes != 0)
            continue;
        assert_true(it->out == 3 * it->decodes || it->out == 4 * it->decodes);
        threes += it->out == 3 * it->decodes;
        fours += it->out == 4 * it->decodes;
    }
    assert_true(fours > 0 && threes > fours); /* P(4) = 0.3 */
    done(&res);
    free(a);
}

/* KV for the lookahead: a step holds slots for its k + 1 tokens; the rejected ones free theirs:
 * the blocks in use at each step are those of context + k + 1 slots, and the context advances
 * by what was accepted. */
static void test_lookahead_blocks(void **state)
{
    const int32_t k = 4;
    eng_arrival a = {0, 37, 400, NULL, 0, 0, 0, 0, 0};
    eng_config c;
    spec_config(&c, 100000, k, 2.7);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, &a, 1, 9);
    int64_t prev_ctx = -1, prev_out = 0;
    for (int64_t i = 0; i < res.r->n; i++) {
        const it_row *it = &res.r->it[i];
        if (it->decodes == 0)
            continue;
        assert_int_equal(it->blocks, (it->ctx + k + 1 + 15) / 16);
        if (prev_ctx >= 0)
            assert_int_equal(it->ctx, prev_ctx + prev_out);
        prev_ctx = it->ctx;
        prev_out = it->out;
    }
    done(&res);
}

/* vLLM V0's disable_by_batch_size: steps with at least that many decoding sequences verify no
 * drafts and run no drafter; smaller ones speculate. */
static void test_disable_by_batch_size(void **state)
{
    eng_arrival *a = same_requests(12, 30000000, 100, 300);
    eng_config c;
    spec_config(&c, 100000, 3, 2.5);
    c.spec.disable_batch = 6;
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result res = run(&c, a, 12, 2);
    int64_t on = 0, off = 0;
    for (int64_t i = 0; i < res.r->n; i++) {
        const it_row *it = &res.r->it[i];
        if (it->decodes == 0)
            continue;
        if (it->decodes >= 6) {
            assert_int_equal(it->verify, 0);
            assert_int_equal(it->draft, 0);
            assert_true(it->out <= it->decodes + completed(it));
            off++;
        } else {
            assert_int_equal(it->verify, 3);
            assert_true(it->draft > 0);
            on++;
        }
    }
    assert_true(on > 0 && off > 0);
    done(&res);
    free(a);
}

/* The cohort stays exact (every member's blocks and context against the incremental sums,
 * after every step) when classes advance by different amounts, under memory pressure, through
 * the paged and reserving policies. */
static void test_cohort_exact(void **state)
{
    static const char *const policies[] = {"vllm", "chunked", "sglang", "trtllm", "orca", "tgi"};
    for (size_t pi = 0; pi < sizeof policies / sizeof policies[0]; pi++) {
        eng_config c;
        spec_config(&c, 6000, 5, 3.1);
        c.spec.dist = pi % 2 ? ENG_SPEC_IID : ENG_SPEC_MIN_VARIANCE;
        c.spec.rate = eng_spec_rate_of_length(3.1, 5);
        snprintf(c.sched.name, sizeof c.sched.name, "%s", policies[pi]);
        enum { N = 150 };
        eng_arrival a[N];
        random_arrivals(a, N, 5, 30e6, 400, 500);
        result res = run(&c, a, N, 4);
        assert_int_equal(res.o.tot.finished + res.o.tot.rejected, N);
        assert_true(res.o.tot.finished > N / 2);
        assert_int_equal(res.r->out_tokens, res.o.tot.output_tokens);
        done(&res);
    }
}

/* The same scenario and seed give the same run; another seed other acceptance draws. */
static void test_deterministic(void **state)
{
    eng_arrival *a = same_requests(20, 10000000, 100, 200);
    eng_config c;
    spec_config(&c, 100000, 3, 2.2);
    snprintf(c.sched.name, sizeof c.sched.name, "vllm");
    result x = run(&c, a, 20, 8), y = run(&c, a, 20, 8), z = run(&c, a, 20, 9);
    assert_int_equal(x.o.tot.last_finish_ns, y.o.tot.last_finish_ns);
    assert_int_equal(x.r->n, y.r->n);
    assert_true(x.o.tot.last_finish_ns != z.o.tot.last_finish_ns);
    done(&x);
    done(&y);
    done(&z);
    free(a);
}

/* The lookahead counts in the reservation of a reserving policy. */
static void test_reservation_counts_lookahead(void **state)
{
    eng_config c;
    spec_config(&c, 1024, 7, 3);
    snprintf(c.sched.name, sizeof c.sched.name, "orca");
    eng_kv_plan p;
    sim_err err;
    assert_int_equal(eng_kv_plan_compute(&c, &p, &err), 0);
    /* a 1,000-token request reserves ceil((1000 + 7) / 16) = 63 blocks */
    int64_t room = p.blocks / 63;
    eng_arrival *a = same_requests((int)room + 5, 0, 900, 100);
    result res = run(&c, a, (int)room + 5, 1);
    assert_int_equal(res.r->it[0].decodes, 0);
    int64_t first = 0;
    for (int64_t i = 0; i < res.r->n && first == 0; i++)
        first = res.r->it[i].decodes;
    assert_int_equal(first, room);
    done(&res);
    free(a);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_al1_no_better, test_perfect_acceptance, test_stops_at_output,
                 test_realised_length, test_min_variance_values, test_lookahead_blocks,
                 test_disable_by_batch_size, test_cohort_exact, test_deterministic,
                 test_reservation_counts_lookahead)
