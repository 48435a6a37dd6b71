/*
 * test_engine.c: the engine's KV arithmetic, the orca policy's rules, rejection, and
 * determinism, on hand-made workloads with a simple linear cost model.
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
#include "records.h"
#include "test_main.h"

static const eng_predictor_ops linear_ops = {"linear", linear_ns, NULL, NULL, NULL, NULL,
                                             NULL,     NULL,      NULL, NULL, NULL};
static const eng_predictor linear = {&linear_ops, NULL, "linear test cost"};

/* ---- a recorder that keeps everything ---- */
#define MAXR 4096
typedef struct rec {
    eng_request rq[MAXR];
    int nrq;
    eng_iter_rec it[MAXR * 4];
    int nit;
} rec;

static void rec_rq(void *st, const eng_request *rq)
{
    rec *r = st;
    assert_true(r->nrq < MAXR);
    r->rq[r->nrq++] = *rq;
}
static void rec_it(void *st, const eng_iter_rec *it)
{
    rec *r = st;
    if (r->nit < MAXR * 4)
        r->it[r->nit++] = *it;
}
static const eng_recorder_ops rec_ops = {rec_rq, rec_it, NULL, NULL};

static const eng_request *find_rq(const rec *r, int64_t id)
{
    for (int i = 0; i < r->nrq; i++)
        if (r->rq[i].id == id)
            return &r->rq[i];
    fail_msg("request %lld not recorded", (long long)id);
    return NULL;
}

static rec *run(const eng_config *c, const eng_arrival *a, int n, eng_totals *tot)
{
    rec *r = calloc(1, sizeof *r);
    eu_out o;
    eu_run(c, &(eng_costs){&linear, NULL}, a, n, 1, &rec_ops, r, 0, &o);
    if (tot)
        *tot = o.tot;
    return r;
}

static void test_kv_plan_arithmetic(void **state)
{
    eng_config c;
    eng_config_defaults(&c);
    /* llama-3-8b's shape: 32 layers, 8 KV heads of 128 */
    c.model = (eng_model)TEST_DENSE_MODEL("l3", 32, 4096, 32, 8, 128, 14336, 128256, 8192);
    c.gpu.mem_bytes = INT64_C(80) * 1000000000;
    c.gpu_utilization = 0.9;
    c.block_size = 16;
    c.activation_reserve = INT64_C(1) << 30;
    eng_kv_plan p;
    sim_err err;
    assert_int_equal(eng_kv_plan_compute(&c, &p, &err), 0);
    /* 2 x 32 x 8 x 128 x 2 bytes */
    assert_int_equal(p.bytes_per_token, 131072);
    /* 8,030,261,248 parameters (embeddings + 32 layers + LM head + final norm) */
    assert_int_equal(eng_model_params(&c.model), INT64_C(8030261248));
    assert_int_equal(p.weight_bytes, INT64_C(16060522496));
    assert_int_equal(p.usable_bytes, INT64_C(72000000000));
    int64_t kv = INT64_C(72000000000) - INT64_C(16060522496) - (INT64_C(1) << 30);
    assert_int_equal(p.kv_bytes, kv);
    assert_int_equal(p.blocks, kv / (131072 * 16));
    assert_int_equal(p.tokens, p.blocks * 16);
    print_message("llama-3-8b on 80 GB at 0.9: %lld blocks = %lld tokens of KV\n",
                  (long long)p.blocks, (long long)p.tokens);
    /* TensorRT-LLM's rule: the whole memory, the cache 0.8 of what weights and activations
     * leave (KvCacheCreator._cal_max_memory) */
    c.gpu_utilization = 1.0;
    c.free_memory_fraction = 0.8;
    assert_int_equal(eng_kv_plan_compute(&c, &p, &err), 0);
    kv =
        (int64_t)((double)(INT64_C(80000000000) - INT64_C(16060522496) - (INT64_C(1) << 30)) * 0.8);
    assert_int_equal(p.kv_bytes, kv);
    assert_int_equal(p.blocks, kv / (131072 * 16));
    c.gpu_utilization = 0.9;
    c.free_memory_fraction = 1;
    /* weights that do not fit are an error, not a negative cache */
    c.gpu.mem_bytes = INT64_C(16) * 1000000000;
    assert_int_equal(eng_kv_plan_compute(&c, &p, &err), -1);
    assert_non_null(strstr(err.msg, "does not fit"));
}

/* Requests join a running batch at the next iteration and leave as soon as they finish. */
static void test_orca_joins_and_leaves(void **state)
{
    eng_config c;
    tiny_config(&c, 100000);
    eng_arrival a[] = {{.t = 0, .prompt = 100, .output = 10},
                       {.t = 500000, .prompt = 50, .output = 3}};
    rec *r = run(&c, a, 2, NULL);
    assert_int_equal(r->nrq, 2);
    const eng_request *r0 = find_rq(r, 0), *r1 = find_rq(r, 1);
    /* iteration 0: prefill of r0 (100 tokens) = 1.1 ms */
    assert_int_equal(r0->t_first_sched, 0);
    assert_int_equal(r0->t_first_token, 1100000);
    /* r1 arrived during iteration 0, joins at iteration 1 (prefill 50 + decode 1) */
    assert_int_equal(r1->t_first_sched, 1100000);
    assert_int_equal(r1->t_first_token, 1100000 + 1051000);
    /* r1 needs 2 more tokens: two decode steps of 2 sequences (1.002 ms each) */
    assert_int_equal(r1->t_finish, 2151000 + 2 * 1002000);
    /* r0 then decodes alone: 10 tokens = 1 from prefill + 9 decode steps */
    assert_int_equal(r0->t_finish, 2151000 + 2 * 1002000 + 6 * 1001000);
    assert_int_equal(r0->status, ENG_RQ_FINISHED);
    assert_int_equal(r0->preemptions, 0);
    free(r);
}

/* max_num_seqs caps the running set; the rest wait in arrival order. */
static void test_orca_max_num_seqs(void **state)
{
    eng_config c;
    tiny_config(&c, 100000);
    eng_cfg_set(&c.sched, "max_num_seqs", "3");
    eng_arrival a[10];
    for (int i = 0; i < 10; i++)
        a[i] = (eng_arrival){.t = 0, .prompt = 20, .output = 5 + i};
    rec *r = run(&c, a, 10, NULL);
    assert_int_equal(r->nrq, 10);
    for (int i = 0; i < r->nit; i++)
        assert_true(r->it[i].num_seqs <= 3);
    /* first come, first served */
    for (int i = 1; i < 10; i++)
        assert_true(find_rq(r, i)->t_first_sched >= find_rq(r, i - 1)->t_first_sched);
    assert_true(find_rq(r, 3)->t_first_sched > 0);
    free(r);
}

/* Reservation of prompt + output limits concurrency: 10 requests of 60 + 40 tokens each need
 * 7 blocks of 16; a cache of 21 blocks runs 3 at a time. */
static void test_orca_reserves_up_front(void **state)
{
    eng_config c;
    tiny_config(&c, 21 * 16);
    eng_arrival a[10];
    for (int i = 0; i < 10; i++)
        a[i] = (eng_arrival){.t = 0, .prompt = 60, .output = 40};
    rec *r = run(&c, a, 10, NULL);
    int maxseqs = 0;
    for (int i = 0; i < r->nit; i++) {
        if (r->it[i].num_seqs > maxseqs)
            maxseqs = r->it[i].num_seqs;
        assert_true(r->it[i].kv_blocks_used <= 21);
    }
    assert_int_equal(maxseqs, 3);
    for (int i = 0; i < r->nrq; i++)
        assert_int_equal(r->rq[i].status, ENG_RQ_FINISHED);
    free(r);
}

/* Requests that can never fit are rejected with a reason and do not stall the others. */
static void test_reject_never_fits(void **state)
{
    eng_config c;
    tiny_config(&c, 64 * 16);
    eng_arrival a[] = {{.t = 0, .prompt = 100, .output = 10},
                       {.t = 0, .prompt = 2000, .output = 10},
                       {.t = 0, .prompt = 4000, .output = 200},
                       {.t = 0, .prompt = 30, .output = 5}};
    eng_totals t;
    rec *r = run(&c, a, 4, &t);
    assert_int_equal(t.finished, 2);
    assert_int_equal(t.rejected, 2);
    assert_int_equal(find_rq(r, 1)->status, ENG_RQ_REJECTED);
    assert_int_equal(find_rq(r, 1)->reject, ENG_REJECT_KV);
    assert_int_equal(find_rq(r, 2)->reject, ENG_REJECT_CONTEXT);
    assert_int_equal(find_rq(r, 3)->status, ENG_RQ_FINISHED);
    free(r);
}

/* The same inputs give identical per-request records. */
static void test_deterministic(void **state)
{
    eng_config c;
    tiny_config(&c, 4096);
    eng_arrival a[300];
    lcg_arrivals(a, 300, 7, 44, 500, 300);
    rec *r1 = run(&c, a, 300, NULL);
    rec *r2 = run(&c, a, 300, NULL);
    assert_int_equal(r1->nrq, r2->nrq);
    assert_int_equal(r1->nit, r2->nit);
    for (int i = 0; i < r1->nrq; i++) {
        assert_int_equal(r1->rq[i].id, r2->rq[i].id);
        assert_int_equal(r1->rq[i].t_first_token, r2->rq[i].t_first_token);
        assert_int_equal(r1->rq[i].t_finish, r2->rq[i].t_finish);
    }
    free(r1);
    free(r2);
}

/* Every policy drains a random overload on a small cache (preemption for the paged ones),
 * with the engine's checks after every event in debug builds. */
static void test_all_policies_drain(void **state)
{
    size_t np;
    const eng_sched_ops *const *all = eng_sched_all(&np);
    eng_arrival a[400];
    lcg_arrivals(a, 400, 11, 46, 700, 400);
    for (size_t p = 0; p < np; p++) {
        for (int swap = 0; swap < 2; swap++) {
            eng_config c;
            tiny_config(&c, 2048);
            snprintf(c.sched.name, sizeof c.sched.name, "%s", all[p]->name);
            if (swap && !eng_sched_param(all[p], "preemption"))
                continue;
            if (swap)
                eng_cfg_set(&c.sched, "preemption", "swap");
            eng_totals tot;
            rec *r = run(&c, a, 400, &tot);
            assert_int_equal(tot.finished + tot.rejected, 400);
            assert_int_equal(r->nrq, 400);
            for (int i = 0; i < r->nrq; i++)
                if (r->rq[i].status == ENG_RQ_FINISHED) {
                    assert_true(r->rq[i].t_first_token >= r->rq[i].t_first_sched);
                    assert_true(r->rq[i].t_finish >= r->rq[i].t_first_token);
                }
            print_message("%-8s%s finished %lld rejected %lld preemptions %lld iterations %lld\n",
                          all[p]->name, swap ? "+swap" : "", (long long)tot.finished,
                          (long long)tot.rejected, (long long)tot.preemptions,
                          (long long)tot.iterations);
            free(r);
        }
    }
}

/* Routers spread requests over replicas: round robin exactly, the load-aware ones evenly. */
static void test_routers(void **state)
{
    static const char *const routers[] = {"round_robin", "least_outstanding", "least_tokens",
                                          "power_of_two"};
    eng_arrival a[400];
    lcg_arrivals(a, 400, 5, 47, 500, 200);
    for (size_t k = 0; k < sizeof routers / sizeof routers[0]; k++) {
        eng_config c;
        tiny_config(&c, 4096);
        c.replicas = 4;
        snprintf(c.router, sizeof c.router, "%s", routers[k]);
        rec *r = run(&c, a, 400, NULL);
        int count[4] = {0};
        for (int i = 0; i < r->nrq; i++)
            count[r->rq[i].replica]++;
        print_message("%-18s %d %d %d %d\n", routers[k], count[0], count[1], count[2], count[3]);
        for (int i = 0; i < 4; i++) {
            if (k == 0)
                assert_int_equal(count[i], 100);
            else
                assert_true(count[i] >= 60 && count[i] <= 140);
        }
        free(r);
    }
    /* an unknown router is refused by the engine */
    eng_config c;
    tiny_config(&c, 4096);
    c.replicas = 2;
    snprintf(c.router, sizeof c.router, "random");
    sim_ctx *ctx = sim_new(1);
    sim_err err;
    list_src src = {a, 1, 0};
    assert_null(eng_new(ctx, &c, &(eng_costs){&linear, NULL}, &list_ops, &src, NULL, NULL, &err));
    assert_non_null(strstr(err.msg, "random"));
    sim_free(ctx);
}

/* Running a static batch's identical decode steps as one event changes nothing: every request
 * and iteration record is the same as with one event per step. */
static void test_decode_runs_change_nothing(void **state)
{
    eng_arrival a[200];
    lcg_arrivals(a, 200, 21, 45, 600, 300);
    eng_config c;
    tiny_config(&c, 4096);
    snprintf(c.sched.name, sizeof c.sched.name, "static");
    eng_cfg_set(&c.sched, "batch_size", "6");
    eng_cfg_set(&c.sched, "max_wait_ms", "3");
    c.cpu.per_iteration_us = 50;
    c.max_run_steps = 1;
    rec *one = run(&c, a, 200, NULL);
    c.max_run_steps = 0;
    rec *runs = run(&c, a, 200, NULL);
    assert_int_equal(one->nrq, runs->nrq);
    assert_int_equal(one->nit, runs->nit);
    static const rec_field progress[] = {RQ_F(t_last_token), RQ_F(generated)};
    for (int i = 0; i < one->nrq; i++) {
        rec_check("request", i, &one->rq[i], &runs->rq[i], rec_request_fields,
                  REC_NFIELDS(rec_request_fields));
        rec_check("request", i, &one->rq[i], &runs->rq[i], progress, REC_NFIELDS(progress));
    }
    for (int i = 0; i < one->nit; i++)
        rec_check("iteration", i, &one->it[i], &runs->it[i], rec_iter_fields,
                  REC_NFIELDS(rec_iter_fields));
    print_message("static: %d iterations, identical with and without decode runs\n", one->nit);
    free(one);
    free(runs);
}

/* Members leave the decode cohort in the order of the step their output completes, those of
 * one step in arrival order (id): 1000 requests in waves, many of each wave finishing together,
 * so the cohort's finish heap holds hundreds and pops long runs of equal keys. Each policy's
 * records come out in that order. */
static void test_finish_order(void **state)
{
    (void)state;
    enum { N = 1000 };
    eng_arrival *a = calloc(N, sizeof *a);
    for (int i = 0; i < N; i++) /* 10 waves 30 ms apart, outputs 2 to 41 in a scrambled order */
        a[i] = (eng_arrival){.t = (int64_t)(i / 100) * 30000000,
                             .prompt = 8 + (i * 7) % 13,
                             .output = 2 + (int32_t)((i * 37u + i / 100) % 40)};
    const char *pol[] = {"orca", "vllm", "vllm-v0", "sglang", "trtllm"};
    for (size_t p = 0; p < sizeof pol / sizeof *pol; p++) {
        eng_config c;
        tiny_config(&c, 1 << 20);
        snprintf(c.sched.name, sizeof c.sched.name, "%s", pol[p]);
        rec *r = run(&c, a, N, NULL);
        assert_int_equal(r->nrq, N);
        int ties = 0;
        for (int i = 1; i < N; i++) {
            const eng_request *x = &r->rq[i - 1], *y = &r->rq[i];
            if (y->t_finish < x->t_finish || (y->t_finish == x->t_finish && y->id < x->id))
                fail_msg("%s: request %lld (finish %lld) recorded after %lld (finish %lld)", pol[p],
                         (long long)y->id, (long long)y->t_finish, (long long)x->id,
                         (long long)x->t_finish);
            ties += y->t_finish == x->t_finish;
        }
        assert_true(ties > N / 2); /* most leave with others */
        print_message("%s: %d of %d records share their finish with the one before\n", pol[p], ties,
                      N);
        free(r);
    }
    free(a);
}

static void test_registry_sound(void **state)
{
    char buf[256];
    assert_int_equal(eng_sched_registry_check(buf, sizeof buf), 0);
    assert_non_null(eng_sched_find("orca"));
    assert_null(eng_sched_find("nope"));
    const eng_param *p = eng_sched_param(eng_sched_find("orca"), "max_num_seqs");
    assert_non_null(p);
    assert_int_equal(eng_param_validate(p, "abc", buf, sizeof buf), -1);
    assert_int_equal(eng_param_validate(p, "0", buf, sizeof buf), -1);
    assert_int_equal(eng_param_validate(p, "64", buf, sizeof buf), 0);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_kv_plan_arithmetic, test_orca_joins_and_leaves,
                 test_orca_max_num_seqs, test_orca_reserves_up_front, test_reject_never_fits,
                 test_deterministic, test_registry_sound, test_decode_runs_change_nothing,
                 test_routers, test_all_policies_drain, test_finish_order)
