/*
 * test_experiments.c: the classic batching experiments, from the shipped scenarios
 * scenarios/exp*.yaml, run with the roofline predictor; each test prints the figures it asserts
 * on.
 *
 * Scenarios are loaded and run through study/ as the llmsim program runs them (variants are
 * --set overrides), except where a test says it builds the arrivals itself.
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

#include "engine_util.h"
#include "study.h"
#include "test_main.h"

#define SCN_DIR LLMSIM_SOURCE_DIR "/scenarios/"
#define SHAREGPT                                                                                   \
    LLMSIM_SHARED_DIR                                                                              \
    "/data/traces/etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"

/* ---------------- one run ---------------- */

typedef struct result {
    double out_tps; /* output tokens/s */
    double drain_s; /* first arrival to last finish */
    double median_e2el_ms, mean_e2el_ms, p99_e2el_ms;
    double median_ttft_ms, median_tpot_ms;
    double median_itl_ms, p99_itl_ms;
    int64_t completed, rejected, preemptions;
    int32_t max_seqs; /* most sequences in one iteration */
    int64_t kv_blocks;
} result;

static void rec_iteration(void *st, const eng_iter_rec *it)
{
    result *r = st;
    if (it->num_seqs > r->max_seqs)
        r->max_seqs = it->num_seqs;
}

static const eng_recorder_ops rec_ops = {NULL, rec_iteration, NULL, NULL};

static double metric(const study_result *r, const char *name)
{
    double v = study_metric(r, name);
    if (isnan(v))
        fail_msg("no metric %s", name);
    return v;
}

/* The engine's walker (eng_check) visits every request slot, thousands per event; the
 * conformance suite runs it after every event. These runs are measurements with up to half a
 * million events each (static batching one request at a time over the 1000-request burst), so
 * here it runs after every CHECK_EVERY-th event, which keeps the Debug build within its time
 * budget and still stops a run that breaks an invariant. */
#define CHECK_EVERY 64

/* What a run may change beyond the scenario's overrides. */
typedef struct run_opts {
    const eng_arrival *arrivals; /* non-NULL: these instead of the scenario's workload */
    int narrivals;
    int sharegpt; /* sample lengths from the ShareGPT table when it is present */
} run_opts;

static int have_sharegpt(void)
{
    return access(SHAREGPT, R_OK) == 0;
}

/* Loads scenarios/<file> with the overrides, runs it and fills *out. */
static void run_scenario(const char *file, const char *const *ovr, int novr, const run_opts *o,
                         result *out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", SCN_DIR, file);
    scn_scenario s;
    sim_err err;
    if (study_load(path, ovr, novr, &s, &err) != 0)
        fail_msg("%s", err.msg);
    if (o && o->sharegpt && have_sharegpt()) {
        scn_lengths *l = &s.workload.lengths;
        l->present = 1;
        snprintf(l->path, sizeof l->path, "%s", SHAREGPT);
        snprintf(l->format, sizeof l->format, "csv");
        snprintf(l->col_prompt, sizeof l->col_prompt, "num_prefill_tokens");
        snprintf(l->col_output, sizeof l->col_output, "num_decode_tokens");
    }
    memset(out, 0, sizeof *out);
    list_src lsrc = {o ? o->arrivals : NULL, o ? o->narrivals : 0, 0};
    study_hooks hooks = {.rec = &rec_ops, .rec_st = out, .check_every = CHECK_EVERY};
    if (o && o->arrivals) {
        hooks.src = &list_ops;
        hooks.src_st = &lsrc;
    }
    study_result *r = test_malloc(sizeof *r);
    if (study_run(&s, s.seed, NULL, NULL, &hooks, r, &err) != 0)
        fail_msg("%s: %s", file, err.msg);
    out->out_tps = metric(r, "output_throughput");
    out->drain_s = (double)(r->tot.last_finish_ns - r->tot.first_arrival_ns) / 1e9;
    out->median_e2el_ms = metric(r, "median_e2el_ms");
    out->mean_e2el_ms = metric(r, "mean_e2el_ms");
    out->p99_e2el_ms = metric(r, "p99_e2el_ms");
    out->median_ttft_ms = metric(r, "median_ttft_ms");
    out->median_tpot_ms = metric(r, "median_tpot_ms");
    out->median_itl_ms = metric(r, "median_itl_ms");
    out->p99_itl_ms = metric(r, "p99_itl_ms");
    out->completed = r->tot.finished;
    out->rejected = r->tot.rejected;
    out->preemptions = r->tot.preemptions;
    out->kv_blocks = r->kv.blocks;
    test_free(r);
    scn_free(&s);
}

/* scenarios/<file> run as it is into *plain, and with the one override `set` into *with. */
static void run_ab(const char *file, const char *set, const run_opts *o, result *plain,
                   result *with)
{
    run_scenario(file, NULL, 0, o, plain);
    run_scenario(file, &set, 1, o, with);
}

/* ---------------- 1: static batching over batch sizes ---------------- */

static void test_exp1_static_batch_size(void **state)
{
    double prev_tps = 0, prev_lat = 0;
    print_message("exp1 static batching, 512 + 128 tokens, one batch per size:\n");
    print_message("  %5s %14s %16s\n", "batch", "output tok/s", "latency ms");
    for (int b = 1; b <= 128; b *= 2) {
        char bs[64], nr[64];
        snprintf(bs, sizeof bs, "scheduler.batch_size=%d", b);
        snprintf(nr, sizeof nr, "workload.num_requests=%d", b);
        const char *ovr[] = {bs, nr};
        result r;
        run_scenario("exp1_static_batch_size.yaml", ovr, 2, NULL, &r);
        print_message("  %5d %14.1f %16.1f\n", b, r.out_tps, r.median_e2el_ms);
        assert_int_equal(r.completed, b);
        assert_true(r.out_tps > prev_tps);
        assert_true(r.median_e2el_ms > prev_lat);
        prev_tps = r.out_tps;
        prev_lat = r.median_e2el_ms;
    }
}

/* ---------------- 2: 32 queued requests, every 8th long ---------------- */

static void test_exp2_orca_drains_faster(void **state)
{
    /* the scenario's prompt length, with the seed's pattern: 100 tokens if i % 8 == 0, else 10 */
    scn_scenario s;
    sim_err err;
    if (study_load(SCN_DIR "exp2_orca_vs_static_queue.yaml", NULL, 0, &s, &err) != 0)
        fail_msg("%s", err.msg);
    int32_t prompt = (int32_t)s.workload.prompt.value;
    int n = (int)s.workload.num_requests;
    scn_free(&s);
    assert_int_equal(n, 32);
    eng_arrival a[32];
    for (int i = 0; i < n; i++)
        a[i] = (eng_arrival){.t = 0, .prompt = prompt, .output = i % 8 == 0 ? 100 : 10};
    run_opts o = {a, n, 0};
    result st, orca;
    run_ab("exp2_orca_vs_static_queue.yaml", "scheduler.name=orca", &o, &st, &orca);
    print_message("exp2 32 queued requests, batch 8, every 8th wants 100 tokens:\n"
                  "  static drains in %.3f s, orca in %.3f s (%.2f of static's time)\n",
                  st.drain_s, orca.drain_s, orca.drain_s / st.drain_s);
    assert_int_equal(st.completed, 32);
    assert_int_equal(orca.completed, 32);
    assert_true(orca.max_seqs <= 8 && st.max_seqs <= 8);
    assert_true(orca.drain_s <= 0.5 * st.drain_s);
}

/* ---------------- 3: burst with ShareGPT-like lengths ---------------- */

static void test_exp3_burst_throughput(void **state)
{
    run_opts o = {NULL, 0, 1};
    print_message("exp3 burst of 1000 requests, lengths %s:\n",
                  have_sharegpt() ? "sampled from the ShareGPT table" : "lognormal");
    double best = 0;
    int best_b = 0;
    for (int b = 1; b <= 256; b *= 2) {
        char bs[64];
        snprintf(bs, sizeof bs, "scheduler.batch_size=%d", b);
        const char *ovr[] = {"scheduler.name=static", bs};
        result r;
        run_scenario("exp3_burst_sharegpt.yaml", ovr, 2, &o, &r);
        print_message("  static batch %3d: %8.1f output tok/s\n", b, r.out_tps);
        if (r.out_tps > best) {
            best = r.out_tps;
            best_b = b;
        }
    }
    static const char *const pol[] = {"vllm-v0", "chunked"};
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "scheduler.name=%s", pol[i]);
        const char *ovr[] = {name};
        result r;
        run_scenario("exp3_burst_sharegpt.yaml", ovr, 1, &o, &r);
        print_message("  %-16s %8.1f output tok/s = %.2fx static at its best (batch %d), "
                      "%lld preemptions, %lld rejected\n",
                      pol[i], r.out_tps, r.out_tps / best, best_b, (long long)r.preemptions,
                      (long long)r.rejected);
        assert_int_equal(r.completed + r.rejected, 1000);
        assert_true(r.out_tps >= 3 * best);
    }
}

/* ---------------- 4: KV limits of a reserving policy ---------------- */

static void test_exp4_kv_limits(void **state)
{
    static const struct {
        int len;
        double expect;
        const char *ovr[4];
        int novr;
    } cases[] = {
        {512, 28, {NULL}, 0},
        {2048,
         7,
         {"memory.max_model_len=2048", "workload.prompt_tokens=1024", "workload.output_tokens=1024",
          "workload.num_requests=30"},
         4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r;
        run_scenario("exp4_kv_limits.yaml", cases[i].ovr, cases[i].novr, NULL, &r);
        print_message("exp4 opt-13b on a100-40gb, max_model_len %d: %lld KV blocks, orca runs "
                      "at most %d sequences at once (expected near %.0f)\n",
                      cases[i].len, (long long)r.kv_blocks, r.max_seqs, cases[i].expect);
        assert_int_equal(r.rejected, 0);
        assert_true(fabs(r.max_seqs - cases[i].expect) <= 0.25 * cases[i].expect);
        /* the limit is the cache divided by the reservation, not another cap */
        assert_int_equal(r.max_seqs, r.kv_blocks / ((cases[i].len + 15) / 16));
    }
}

/* ---------------- 5: Poisson arrivals at QPS 1 and 4 ---------------- */

static void test_exp5_poisson_latency(void **state)
{
    static const char *const pol[] = {"static", "orca", "vllm-v0"};
    double med[2][3];
    print_message("exp5 median end-to-end latency (ms), Poisson arrivals:\n");
    for (int q = 0; q < 2; q++) {
        const char *rate = q ? "workload.arrival.rate=4" : "workload.arrival.rate=1";
        for (int i = 0; i < 3; i++) {
            char name[64];
            snprintf(name, sizeof name, "scheduler.name=%s", pol[i]);
            const char *ovr[] = {rate, name};
            result r;
            run_scenario("exp5_poisson_latency.yaml", ovr, 2, NULL, &r);
            med[q][i] = r.median_e2el_ms;
            assert_int_equal(r.completed, 400);
        }
        print_message("  QPS %d: static %8.1f  orca %8.1f  vllm-v0 %8.1f\n", q ? 4 : 1, med[q][0],
                      med[q][1], med[q][2]);
    }
    for (int i = 1; i < 3; i++) {
        double gap1 = med[0][0] - med[0][i], gap4 = med[1][0] - med[1][i];
        print_message("  static - %s: %.1f ms at QPS 1, %.1f ms at QPS 4 (static / %s: %.2f, "
                      "%.2f)\n",
                      pol[i], gap1, gap4, pol[i], med[0][0] / med[0][i], med[1][0] / med[1][i]);
        assert_true(gap1 > 0 && gap4 > 0);
        assert_true(gap4 < gap1);
        assert_true(med[1][0] / med[1][i] < med[0][0] / med[0][i]);
    }
}

/* ---------------- 6: long prompts: chunked prefill versus vllm-v0 ---------------- */

static void test_exp6_chunked_itl(void **state)
{
    result ch, vl;
    run_ab("exp6_long_prompts_itl.yaml", "scheduler.name=vllm-v0", NULL, &ch, &vl);
    print_message("exp6 prompts of 4k-8k tokens at 2 QPS:\n"
                  "  chunked: p99 ITL %7.2f ms (median %.2f), %.1f output tok/s\n"
                  "  vllm-v0: p99 ITL %7.2f ms (median %.2f), %.1f output tok/s\n"
                  "  chunked p99 ITL = %.3f of vllm-v0's; throughput ratio %.4f\n",
                  ch.p99_itl_ms, ch.median_itl_ms, ch.out_tps, vl.p99_itl_ms, vl.median_itl_ms,
                  vl.out_tps, ch.p99_itl_ms / vl.p99_itl_ms, ch.out_tps / vl.out_tps);
    assert_int_equal(ch.completed, 200);
    assert_int_equal(vl.completed, 200);
    /* clearly lower: at most half */
    assert_true(ch.p99_itl_ms <= 0.5 * vl.p99_itl_ms);
    assert_true(fabs(ch.out_tps - vl.out_tps) <= 0.1 * vl.out_tps);
}

/* ---------------- 7: async versus sync CPU scheduling ---------------- */

static void test_exp7_async_cpu(void **state)
{
    result sy, as;
    run_ab("exp7_async_cpu.yaml", "cpu_overhead.async=true", NULL, &sy, &as);
    print_message("exp7 burst of 500, 300 us of CPU per iteration:\n"
                  "  sync:  %.1f output tok/s, drain %.3f s, median E2E %.1f ms, median TTFT "
                  "%.1f ms, median TPOT %.3f ms\n"
                  "  async: %.1f output tok/s, drain %.3f s, median E2E %.1f ms, median TTFT "
                  "%.1f ms, median TPOT %.3f ms\n"
                  "  async: throughput %+.2f%%, median E2E %+.2f%%, median TPOT %+.2f%%\n",
                  sy.out_tps, sy.drain_s, sy.median_e2el_ms, sy.median_ttft_ms, sy.median_tpot_ms,
                  as.out_tps, as.drain_s, as.median_e2el_ms, as.median_ttft_ms, as.median_tpot_ms,
                  100 * (as.out_tps / sy.out_tps - 1),
                  100 * (as.median_e2el_ms / sy.median_e2el_ms - 1),
                  100 * (as.median_tpot_ms / sy.median_tpot_ms - 1));
    assert_int_equal(sy.completed, 500);
    assert_int_equal(as.completed, 500);
    assert_true(as.out_tps > sy.out_tps);
}

LLMSIM_TESTS(tests, test_exp1_static_batch_size, test_exp2_orca_drains_faster,
             test_exp3_burst_throughput, test_exp4_kv_limits, test_exp5_poisson_latency,
             test_exp6_chunked_itl, test_exp7_async_cpu);

int main(void)
{
    return cmocka_run_group_tests_name("experiments", tests, NULL, NULL);
}
