/*
 * test_pd.c: disaggregated prefill/decode, end to end through study/ as `llmsim run` runs it
 * (Llama-3 on the roofline of catalog GPUs):
 *  - TTFT grows with a slower link by exactly the transfer time at low load;
 *  - transfers sharing a port share its bandwidth (each end), and only there;
 *  - a saturated decode pool holds transfers back and backs up the prefill pool, and every
 *    request still finishes;
 *  - heterogeneous pools (H200 prefill, B200 decode, other layouts) run, with the bytes and
 *    the link rate their layouts give;
 *  - after-prefill and layer-wise transfers differ as they should;
 *  - every policy serves either pool, the engine's walkers run at every event;
 *  - the loader's errors, determinism, the prefill:decode capacity search, and the shipped
 *    DeepSeek-V3 scenario (skipped while the cost model refuses the model).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_run.h"
#include "study.h"
#include "scratch.h"
#include "study_capacity.h"
#include "study_util.h"
#include "test_main.h"

/* Llama-3-8B's KV in bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes per token */
#define KV8B 131072.0
#define PROMPT 2000

static int load(const char *text, const char *const *sets, int nsets, scn_scenario *s, sim_err *err)
{
    return scn_load_text("pd.yaml", text, sets, nsets, study_resolver(), s, err);
}

/* A run's requests (by id) and iterations. */
typedef eu_rec rec;

static void free_rec(rec *r)
{
    eu_rec_free(r);
    free(r);
}

/* Runs text with sets; every event checked when check_every is 1. Returns the result (free it);
 * r (may be NULL) gets the requests and iterations. */
static study_result *run_text(const char *text, const char *const *sets, int nsets, rec *r,
                              uint64_t check_every)
{
    scn_scenario s;
    sim_err err;
    if (load(text, sets, nsets, &s, &err) != 0)
        fail_msg("load: %s", err.msg);
    study_result *res = calloc(1, sizeof *res);
    study_hooks h = {.rec = r ? &eu_rec_ops : NULL, .rec_st = r, .check_every = check_every};
    if (study_run(&s, s.seed, NULL, NULL, &h, res, &err) != 0)
        fail_msg("run: %s", err.msg);
    scn_free(&s);
    return res;
}

static double m(const study_result *r, const char *name)
{
    double v = study_metric(r, name);
    if (isnan(v))
        fail_msg("no metric %s", name);
    return v;
}

/* ns a lone transfer of `bytes` at `gbs` GB/s takes on the link (as link.c rounds it) */
static int64_t xfer_ns(double bytes, double gbs)
{
    return (int64_t)ceil(bytes / gbs);
}

/* One request every 2 s, each done long before the next: nothing queues anywhere. */
static const char lone[] = "name: lone\nseed: 3\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                           "prefill: {replicas: 1}\ndecode: {replicas: 1}\n"
                           "kv_transfer: {link: rdma, latency_us: 10}\n"
                           "workload:\n  num_requests: 30\n"
                           "  arrival: {process: constant, rate: 0.5}\n"
                           "  prompt_tokens: 2000\n  output_tokens: 40\n";

/* ================= the link ================= */

static void test_ttft_grows_by_transfer_time(void **state)
{
    const char *fast[] = {"kv_transfer.bandwidth_gb_s=50"};
    const char *slow[] = {"kv_transfer.bandwidth_gb_s=5"};
    rec *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    study_result *ra = run_text(lone, fast, 1, a, 64), *rb = run_text(lone, slow, 1, b, 64);
    double bytes = PROMPT * KV8B;
    int64_t ta = xfer_ns(bytes, 50), tb = xfer_ns(bytes, 5);
    assert_int_equal((int)m(ra, "completed"), 30);
    assert_int_equal((int)m(rb, "completed"), 30);
    for (int i = 0; i < 30; i++) {
        assert_true(a->seen[i] && b->seen[i]);
        int64_t da = a->rq[i].t_first_token - a->rq[i].t_arrival;
        int64_t db = b->rq[i].t_first_token - b->rq[i].t_arrival;
        /* the prefill and the decode instance's scheduling are the same: only the link moves */
        assert_int_equal(db - da, tb - ta);
        /* and the decode that follows is untouched: the same time from first token to last */
        assert_int_equal(b->rq[i].t_finish - b->rq[i].t_first_token,
                         a->rq[i].t_finish - a->rq[i].t_first_token);
    }
    /* the transfer metric is the lone transfer: bytes / bandwidth + latency */
    assert_true(fabs(m(rb, "mean_kv_transfer_ms") - (tb + 10000) / 1e6) < 1e-9);
    assert_true(fabs(m(ra, "kv_transfer_bytes_per_request") - bytes) < 1e-3);
    assert_true(fabs(m(ra, "mean_kv_wait_ms")) < 1e-12);
    assert_int_equal((int)m(ra, "kv_transfers_held"), 0);
    free(ra);
    free(rb);
    free_rec(a);
    free_rec(b);
}

/* Two requests prefilled in one batch send at once: where they share a port, each moves at
 * half its rate; where each has its own ports, at its full rate. */
static void test_link_shared_per_port(void **state)
{
    static const char two[] = "name: two\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                              "prefill: {replicas: 1}\ndecode: {replicas: 1}\n"
                              "kv_transfer: {bandwidth_gb_s: 20, latency_us: 0}\n"
                              "workload:\n  num_requests: 2\n  arrival: {process: burst}\n"
                              "  prompt_tokens: 2000\n  output_tokens: 20\n";
    double bytes = PROMPT * KV8B;
    int64_t alone = xfer_ns(bytes, 20);
    struct {
        const char *p, *d;
        int64_t want; /* each transfer's time */
    } cases[] = {
        {"prefill.replicas=1", "decode.replicas=1", 2 * alone}, /* both ports shared */
        {"prefill.replicas=1", "decode.replicas=2", 2 * alone}, /* the sending port shared */
        {"prefill.replicas=2", "decode.replicas=1", 2 * alone}, /* the receiving port shared */
        {"prefill.replicas=2", "decode.replicas=2", alone},     /* nothing shared */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *sets[] = {cases[k].p, cases[k].d};
        study_result *r = run_text(two, sets, 2, NULL, 1);
        assert_int_equal((int)m(r, "kv_transfers"), 2);
        /* within the 1 ns each flow's event rounds up */
        assert_true(fabs(m(r, "mean_kv_transfer_ms") - cases[k].want / 1e6) < 2e-6);
        assert_true(fabs(m(r, "p99_kv_transfer_ms") - cases[k].want / 1e6) < 2e-6);
        free(r);
    }
}

/* ================= backpressure ================= */

static const char busy[] =
    "name: busy\nseed: 7\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
    "prefill: {replicas: 1, memory: {gpu_utilization: 0.25}}\n"
    "decode: {replicas: 2}\n"
    "workload:\n  num_requests: 200\n  arrival: {process: poisson, rate: 10}\n"
    "  prompt_tokens: {dist: uniform, min: 800, max: 1200}\n  output_tokens: 300\n";

static void test_saturated_decode_backs_up_prefill(void **state)
{
    /* decode replicas with room for a handful of requests each */
    const char *tight[] = {"decode.memory.gpu_utilization=0.21"};
    study_result *roomy = run_text(busy, NULL, 0, NULL, 256);
    study_result *r = run_text(busy, tight, 1, NULL, 256);
    /* nothing dropped: every request finished, none refused */
    assert_int_equal((int)m(r, "completed"), 200);
    assert_int_equal((int)m(r, "rejected"), 0);
    assert_int_equal((int)m(r, "kv_transfers"), 200);
    /* transfers were held back for decode-side KV, with their KV on the prefill side... */
    assert_true(m(r, "kv_transfers_held") > 100);
    assert_true(m(r, "mean_kv_wait_ms") > 100 * m(roomy, "mean_kv_wait_ms"));
    /* ...which filled the prefill pool's cache: new prefills waited there */
    assert_true(m(r, "mean_waiting_ms") > 10 * m(roomy, "mean_waiting_ms") + 100);
    assert_true(m(r, "mean_ttft_ms") > 10 * m(roomy, "mean_ttft_ms"));
    assert_int_equal((int)m(roomy, "completed"), 200);
    free(r);
    free(roomy);
}

/* ================= heterogeneous pools ================= */

static void test_heterogeneous_pools(void **state)
{
    static const char het[] = "name: het\nseed: 2\nmodel: llama-3-70b\ngpu: h100-sxm\n"
                              "engine: vllm\n"
                              "prefill: {replicas: 1, gpu: h200, tensor_parallel: 4}\n"
                              "decode: {replicas: 2, gpu: b200, tensor_parallel: 2, "
                              "engine: sglang}\n"
                              "kv_transfer: {latency_us: 0}\n"
                              "workload:\n  num_requests: 20\n"
                              "  arrival: {process: constant, rate: 0.25}\n"
                              "  prompt_tokens: 2000\n  output_tokens: 30\n";
    scn_scenario s;
    sim_err err;
    assert_int_equal(load(het, NULL, 0, &s, &err), 0);
    const eng_pd_config *pd = &s.engine.pd;
    assert_true(pd->enabled);
    assert_string_equal(pd->pool[ENG_POOL_PREFILL].gpu.name, "h200");
    assert_string_equal(pd->pool[ENG_POOL_DECODE].gpu.name, "b200");
    assert_string_equal(pd->pool[ENG_POOL_PREFILL].sched.name, "vllm");
    assert_string_equal(pd->pool[ENG_POOL_DECODE].sched.name, "sglang");
    scn_free(&s);
    rec *r = calloc(1, sizeof *r);
    study_result *res = run_text(het, NULL, 0, r, 64);
    assert_int_equal((int)m(res, "completed"), 20);
    assert_non_null(strstr(res->label, "h200"));
    assert_non_null(strstr(res->label, "b200"));
    assert_int_equal((int)m(res, "prefill_gpus"), 4);
    assert_int_equal((int)m(res, "decode_gpus"), 4);
    /* the decode side receives 4 of Llama-3-70B's 8 KV heads on each of its 2 GPUs: 80 layers
     * x 8 heads x 128 x 2 x 2 bytes per token in all */
    double bytes = PROMPT * 327680.0;
    assert_true(fabs(m(res, "kv_transfer_bytes_per_request") - bytes) < 1e-3);
    /* a request's KV moves over the smaller side's GPUs: 2 decode GPUs x 50 GB/s */
    assert_true(fabs(m(res, "mean_kv_transfer_ms") - xfer_ns(bytes, 100) / 1e6) < 1e-9);
    free(res);
    free_rec(r);
}

/* ================= the three disciplines ================= */

static void test_disciplines(void **state)
{
    double bytes = PROMPT * KV8B, layers = 32;
    /* a fast link keeps up with the prefill: after the prefill the whole KV goes, layer by
     * layer only the last layer's is left when the prefill ends */
    const char *after[] = {"kv_transfer.discipline=after_prefill"};
    const char *lw[] = {"kv_transfer.discipline=layerwise"};
    study_result *ra = run_text(lone, after, 1, NULL, 64), *rl = run_text(lone, lw, 1, NULL, 64);
    assert_true(fabs(m(ra, "mean_kv_transfer_ms") - (xfer_ns(bytes, 50) + 10000) / 1e6) < 1e-9);
    assert_true(fabs(m(rl, "mean_kv_transfer_ms") - (xfer_ns(bytes / layers, 50) + 10000) / 1e6) <
                1e-9);
    assert_true(m(rl, "mean_ttft_ms") < m(ra, "mean_ttft_ms"));
    /* per chunk (SGLang), a prompt of one chunk: its whole KV leaves when the prefill is done,
     * as after the prefill, though its decode side was reserved at arrival */
    const char *pc[] = {"kv_transfer.discipline=per_chunk"};
    study_result *rc = run_text(lone, pc, 1, NULL, 64);
    assert_true(fabs(m(rc, "mean_kv_transfer_ms") - m(ra, "mean_kv_transfer_ms")) < 1e-9);
    assert_true(fabs(m(rc, "mean_ttft_ms") - m(ra, "mean_ttft_ms")) < 1e-6);
    free(rc);
    free(ra);
    free(rl);
    /* a slow link: layer by layer the KV leaves from the prefill's start, so it arrives earlier
     * by exactly the prefill's GPU time */
    const char *after_slow[] = {"kv_transfer.discipline=after_prefill",
                                "kv_transfer.bandwidth_gb_s=1"};
    const char *lw_slow[] = {"kv_transfer.discipline=layerwise", "kv_transfer.bandwidth_gb_s=1"};
    rec *a = calloc(1, sizeof *a), *l = calloc(1, sizeof *l);
    ra = run_text(lone, after_slow, 2, a, 64);
    rl = run_text(lone, lw_slow, 2, l, 64);
    /* one prefill iteration per request on the prefill replica (replica 0) */
    int64_t gpu_ns[30];
    int nit = 0;
    for (int64_t k = 0; k < a->nit; k++)
        if (a->it[k].replica == 0) {
            assert_true(nit < 30);
            gpu_ns[nit++] = a->it[k].gpu_ns;
        }
    assert_int_equal(nit, 30);
    for (int i = 0; i < 30; i++) {
        int64_t da = a->rq[i].t_first_token - a->rq[i].t_arrival;
        int64_t dl = l->rq[i].t_first_token - l->rq[i].t_arrival;
        assert_true(llabs((da - dl) - gpu_ns[i]) <= 2);
    }
    free(ra);
    free(rl);
    free_rec(a);
    free_rec(l);
}

/* Layer-wise and per chunk, the decode side's KV is reserved before the prefill may start: a
 * prefill waits at least as long as its reservation did. */
static void test_layerwise_reserves_first(void **state)
{
    for (int pc = 0; pc < 2; pc++) {
        const char *sets[] = {pc ? "kv_transfer.discipline=per_chunk"
                                 : "kv_transfer.discipline=layerwise",
                              "decode.memory.gpu_utilization=0.21"};
        study_result *r = run_text(busy, sets, 2, NULL, 256);
        assert_int_equal((int)m(r, "completed"), 200);
        assert_true(m(r, "kv_transfers_held") > 100);
        assert_true(m(r, "mean_waiting_ms") >= m(r, "mean_kv_wait_ms"));
        assert_true(m(r, "mean_kv_wait_ms") > 1000);
        free(r);
    }
}

/* ================= every policy in either pool ================= */

static void test_every_policy(void **state)
{
    static const char *const policies[] = {"vllm",   "vllm-v0", "chunked", "orca",
                                           "sglang", "trtllm",  "tgi"};
    static const char text[] = "name: pol\nseed: 5\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                               "prefill: {replicas: 2}\n"
                               "decode: {replicas: 2, memory: {gpu_utilization: 0.23}}\n"
                               "router: least_outstanding\n"
                               "workload:\n  num_requests: 120\n"
                               "  arrival: {process: poisson, rate: 12}\n"
                               "  prompt_tokens: {dist: uniform, min: 200, max: 1500}\n"
                               "  output_tokens: {dist: uniform, min: 1, max: 400}\n";
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        for (int lw = 0; lw < 3; lw++) {
            static const char *const disc[] = {"after_prefill", "layerwise", "per_chunk"};
            char p[64], d[64], x[64];
            snprintf(p, sizeof p, "prefill.scheduler.name=%s", policies[i]);
            snprintf(d, sizeof d, "decode.scheduler.name=%s", policies[i]);
            snprintf(x, sizeof x, "kv_transfer.discipline=%s", disc[lw]);
            const char *sets[] = {p, d, x};
            study_result *r = run_text(text, sets, 3, NULL, 1);
            if ((int)m(r, "completed") + (int)m(r, "rejected") != 120)
                fail_msg("%s (%s): %g of 120 requests done", policies[i], disc[lw],
                         m(r, "completed") + m(r, "rejected"));
            assert_int_equal((int)m(r, "kv_transfers"), (int)m(r, "completed"));
            free(r);
        }
    /* static batching prefills; it cannot take transferred requests */
    const char *ok[] = {"prefill.scheduler.name=static", "decode.scheduler.name=vllm"};
    study_result *r = run_text(text, ok, 2, NULL, 1);
    assert_int_equal((int)m(r, "completed"), 120);
    free(r);
    scn_scenario s;
    sim_err err;
    const char *bad[] = {"decode.scheduler.name=static"};
    assert_int_not_equal(load(text, bad, 1, &s, &err), 0);
    assert_non_null(strstr(err.msg, "decode.scheduler"));
    assert_non_null(strstr(err.msg, "static cannot take requests prefilled elsewhere"));
    scn_free(&s);
}

/* ================= scenarios ================= */

static void expect_error(const char *text, const char *const *sets, int nsets, const char *want)
{
    scn_scenario s;
    sim_err err = {{0}};
    int rc = load(text, sets, nsets, &s, &err);
    scn_free(&s);
    if (rc == 0)
        fail_msg("loaded, expected an error with '%s'", want);
    if (!strstr(err.msg, want))
        fail_msg("error '%s' lacks '%s'", err.msg, want);
}

static void test_loader(void **state)
{
    static const char agg[] = "model: llama-3-8b\ngpu: h100-sxm\n"
                              "workload: {num_requests: 1, prompt_tokens: 10, output_tokens: 5, "
                              "arrival: {process: burst}}\n";
    const char *only_p[] = {"prefill.replicas=2"};
    expect_error(agg, only_p, 1, "decode: missing");
    const char *link[] = {"kv_transfer.link=rdma"};
    expect_error(agg, link, 1, "kv_transfer: not used");
    const char *rep[] = {"replicas=2"};
    expect_error(lone, rep, 1, "replicas are per pool");
    const char *len[] = {"decode.memory.max_model_len=100"};
    expect_error(lone, len, 1, "decode.memory.max_model_len: the deployment's");
    const char *badlink[] = {"kv_transfer.link=ib"};
    expect_error(lone, badlink, 1, "unknown link 'ib' (valid: rdma, nvlink, pcie)");
    const char *badtp[] = {"decode.tensor_parallel=3"};
    expect_error(lone, badtp, 1, "decode.tensor_parallel");
    const char *nonic[] = {"decode.gpu=l40s"};
    expect_error(lone, nonic, 1, "no rdma bandwidth");
    const char *key[] = {"decode.foo=1"};
    expect_error(lone, key, 1, "decode.foo: unknown key");
    const char *spec[] = {"speculative.method=eagle3", "speculative.num_speculative_tokens=2",
                          "speculative.acceptance.length=2"};
    expect_error(lone, spec, 3, "speculative: speculative decoding in a disaggregated");
    const char *fp8[] = {"dtype=fp8", "decode.gpu=a100-80gb"};
    expect_error(lone, fp8, 2, "decode.gpu");
    /* a pool inherits the deployment's settings and replaces what it names */
    scn_scenario s;
    sim_err err;
    const char *sets[] = {"scheduler.max_num_seqs=64", "decode.scheduler.max_num_seqs=32",
                          "kv_transfer.link=nvlink"};
    assert_int_equal(load(lone, sets, 3, &s, &err), 0);
    const eng_pd_config *pd = &s.engine.pd;
    assert_string_equal(eng_cfg_get(&pd->pool[0].sched, "max_num_seqs"), "64");
    assert_string_equal(eng_cfg_get(&pd->pool[1].sched, "max_num_seqs"), "32");
    assert_true(pd->link == ENG_LINK_NVLINK && pd->link_bw == 0);
    assert_true(fabs(pd->latency_ns - 10000) < 1e-9);
    assert_true(pd->pool[0].cpu.per_iteration_us > 0); /* engine: vllm's CPU overhead */
    scn_free(&s);
    /* the default latency is the link's */
    const char *nolat[] = {"kv_transfer.link=pcie"};
    static const char bare[] = "model: llama-3-8b\ngpu: h100-sxm\nprefill: {}\ndecode: {}\n"
                               "workload: {num_requests: 1, prompt_tokens: 10, output_tokens: 5, "
                               "arrival: {process: burst}}\n";
    assert_int_equal(load(bare, nolat, 1, &s, &err), 0);
    assert_true(fabs(s.engine.pd.latency_ns - 4100) < 1e-9);
    assert_int_equal(s.engine.pd.pool[0].replicas, 1);
    scn_free(&s);
}

static void test_deterministic(void **state)
{
    const char *sets[] = {"decode.memory.gpu_utilization=0.22"};
    study_result *a = run_text(busy, sets, 1, NULL, 4096), *b = run_text(busy, sets, 1, NULL, 4096);
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        assert_string_equal(a->m[i].name, b->m[i].name);
        assert_memory_equal(&a->m[i].value, &b->m[i].value, sizeof(double));
    }
    free(a);
    free(b);
}

/* ================= capacity ================= */

static const char cap_text[] =
    "name: cap\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
    "prefill: {replicas: 1}\ndecode: {replicas: 1}\n"
    "workload:\n  num_requests: 100\n"
    "  arrival: {process: poisson, rate: 4}\n"
    "  prompt_tokens: {dist: uniform, min: 1500, max: 2000}\n"
    "  output_tokens: 100\n";

/* The prefill:decode trials a search ran: each split and whether it met the SLOs. */
typedef struct probes {
    int n;
    int p[256], d[256], ok[256];
} probes;

static void on_probe(void *arg, const char *choice, const char *phase, double rate, int replicas,
                     const study_trial *t)
{
    probes *pr = arg;
    int p, d;
    if (strcmp(phase, "cluster") != 0 || sscanf(choice, "%d:%d", &p, &d) != 2 || pr->n >= 256)
        return;
    pr->p[pr->n] = p;
    pr->d[pr->n] = d;
    pr->ok[pr->n++] = t->ok;
}

static void test_capacity_split(void **state)
{
    char path[] = "/tmp/llmsim-test-pd-XXXXXX";
    assert_int_equal(scratch_write(path, cap_text), 0);
    study_capacity c;
    su_capacity_setup(&c, path, NULL, "ttft_p99=400ms,tpot_p99=15ms", 0.1);
    c.target = 24;
    probes *pr = calloc(1, sizeof *pr);
    c.probe = on_probe;
    c.probe_arg = pr;
    sim_err err;
    study_answer *ans = calloc(STUDY_PD_MAX, sizeof *ans);
    int n, best;
    if (study_capacity_pd_search(&c, ans, STUDY_PD_MAX, &n, &best, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(n >= 1 && best >= 0 && best < n);
    for (int k = 0; k < n; k++) {
        assert_true(ans[k].at_target.ok);
        assert_int_equal(ans[k].tp, ans[k].prefill + ans[k].decode); /* one GPU each */
        assert_true(ans[best].tp <= ans[k].tp);
        if (k > 0) /* more prefill replicas never need more decode ones */
            assert_true(ans[k].prefill > ans[k - 1].prefill && ans[k].decode <= ans[k - 1].decode);
    }
    /* the split found is the cheapest: one decode replica fewer misses, and so does one
     * prefill replica fewer with any decode count tried; every cheaper split tried missed */
    study_answer *a = &ans[best];
    print_message("capacity: %d:%d meets the SLOs at %g req/s with %d GPUs (%d trials)\n",
                  a->prefill, a->decode, c.target, a->tp, pr->n);
    int below = 0, fewer_prefill = 0;
    for (int k = 0; k < pr->n; k++) {
        if (pr->p[k] + pr->d[k] < a->tp)
            assert_false(pr->ok[k]);
        if (pr->p[k] == a->prefill && pr->d[k] == a->decode - 1)
            below = 1;
        if (pr->p[k] == a->prefill - 1)
            fewer_prefill = 1;
    }
    assert_true(a->decode == 1 || below);
    assert_true(a->prefill == 1 || fewer_prefill);
    free(pr);
    c.probe = NULL;
    /* --compare pd=P:D: the same split, as a comparison choice */
    study_capacity_free(&c);
    su_capacity_setup(&c, path, NULL, "ttft_p99=400ms,tpot_p99=15ms", 0.25);
    assert_int_equal(study_capacity_compare(&c, "pd=1:1,1:3", &err), 0);
    study_answer one, three;
    assert_int_equal(study_capacity_find(&c, 0, &one, &err), 0);
    assert_int_equal(study_capacity_find(&c, 1, &three, &err), 0);
    assert_true(one.prefill == 1 && one.decode == 1 && three.decode == 3 && three.tp == 4);
    assert_true(three.rate >= one.rate && one.rate > 0);
    assert_int_not_equal(study_capacity_compare(&c, "pd=2-3", &err), 0);
    assert_non_null(strstr(err.msg, "prefill:decode replica ratio"));
    study_capacity_free(&c);
    unlink(path);
    free(ans);
}

/* ================= the shipped scenarios ================= */

static void test_shipped_dense(void **state)
{
    const char *sets[] = {"workload.num_requests=200"};
    scn_scenario s;
    sim_err err;
    assert_int_equal(study_load(LLMSIM_SOURCE_DIR "/scenarios/pd_llama70b.yaml", sets, 1, &s, &err),
                     0);
    study_result *r = calloc(1, sizeof *r);
    study_hooks h = {.check_every = 4096};
    if (study_run(&s, s.seed, NULL, NULL, &h, r, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal((int)m(r, "completed"), 200);
    assert_true(m(r, "prefill_utilization") > 0 && m(r, "decode_utilization") > 0);
    free(r);
    scn_free(&s);
}

static void test_shipped_deepseek_v3(void **state)
{
    scn_scenario s;
    sim_err err;
    const char *sets[] = {"workload.num_requests=100"};
    assert_int_equal(
        study_load(LLMSIM_SOURCE_DIR "/scenarios/pd_deepseek_v3.yaml", sets, 1, &s, &err), 0);
    assert_true(s.engine.pd.enabled);
    if (study_cost_check(&s, &err) != 0) {
        if (!strstr(err.msg, "does not price"))
            fail_msg("%s", err.msg);
        print_message("skipped: the cost model refuses DeepSeek-V3 for now: %s\n", err.msg);
        scn_free(&s);
        skip();
    }
    study_result *r = calloc(1, sizeof *r);
    study_hooks h = {.check_every = 4096};
    if (study_run(&s, s.seed, NULL, NULL, &h, r, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal((int)m(r, "completed"), 100);
    assert_true(m(r, "kv_transfers") == 100);
    free(r);
    scn_free(&s);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_ttft_grows_by_transfer_time, test_link_shared_per_port,
                 test_saturated_decode_backs_up_prefill, test_heterogeneous_pools, test_disciplines,
                 test_layerwise_reserves_first, test_every_policy, test_loader, test_deterministic,
                 test_capacity_split, test_shipped_dense, test_shipped_deepseek_v3)
