/*
 * test_offload.c: KV offload tiers (kv_offload) end to end through study/, on multi-turn chat
 * whose conversations outgrow a small GPU cache (llama-3-8b with a quarter of an H100):
 *  - an unbounded host tier brings back what the GPU cache evicted: the hit rate and the TTFT
 *    improve, and the tier reports its hits, bytes and loads;
 *  - a slower tier lowers the benefit monotonically (mean TTFT rises as the bandwidth falls);
 *  - with every load refused (min_load_tokens) the run is the run without tiers, to the bit;
 *  - a bounded host tier evicts, and an SSD tier below it catches what it evicts;
 *  - a remote tier is one store for every replica: a round-robin pool finds there what the
 *    other replica computed, which per-replica disks do not;
 *  - write-through writes at least what write-back writes;
 *  - SGLang (HiCache) and TensorRT-LLM (its host cache) bring back what their GPU caches
 *    evicted within the step that admits the request: the hit rate rises, the TTFT falls, and
 *    a slower host link costs TTFT;
 *  - what is not modelled or not given is refused with the key at fault;
 *  - a tier's table (otier.h) tells apart blocks whose hashes share the 32-bit tag it keeps:
 *    each is found as itself, removing one leaves the other, an absent one is a miss.
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

#include "otier.h"
#include "study.h"

#include "study_util.h"
#include "test_main.h"

static const char chat[] =
    "name: chat\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
    "memory: {gpu_utilization: 0.25}\n"
    "workload:\n  num_requests: 600\n"
    "  arrival: {process: closed, concurrency: 32, think_time_ms: 1000, ramp_up_s: 5}\n"
    "  output_tokens: {dist: lognormal, mean: 150, sigma: 0.6, max: 800}\n"
    "  sessions:\n"
    "    turns: {dist: uniform, min: 4, max: 10}\n"
    "    user_tokens: {dist: lognormal, mean: 300, sigma: 0.8, min: 20, max: 1500}\n"
    "    system_prompt_tokens: 1000\n"
    "    think_time_ms: {dist: lognormal, mean: 4000, sigma: 0.6, min: 1000, max: 10000}\n";

static study_result *must_run(const char *const *sets)
{
    return su_must_run_text(chat, sets);
}

#define m(r, name) su_metric(r, name)

static void test_host_tier_brings_back_evicted_prefixes(void **state)
{
    study_result *none = must_run(NULL);
    const char *cpu[] = {"kv_offload.tiers=[{kind: cpu}]", NULL};
    study_result *off = must_run(cpu);
    print_message("no tiers: hit rate %.3f, mean TTFT %.1f ms, %g blocks evicted; host tier: hit "
                  "rate %.3f (%.3f from it), mean TTFT %.1f ms, %g loads of %.2f ms, %.3g B "
                  "written, %.3g B read\n",
                  m(none, "prefix_hit_rate"), m(none, "mean_ttft_ms"),
                  m(none, "prefix_evicted_blocks"), m(off, "prefix_hit_rate"),
                  m(off, "kv_offload_cpu_hit_rate"), m(off, "mean_ttft_ms"),
                  m(off, "kv_offload_loads"), m(off, "kv_offload_mean_load_ms"),
                  m(off, "kv_offload_cpu_write_bytes"), m(off, "kv_offload_cpu_read_bytes"));
    assert_true(isnan(study_metric(none, "kv_offload_loads")));
    assert_true(m(none, "prefix_evicted_blocks") > 0);
    assert_true(m(off, "prefix_hit_rate") > m(none, "prefix_hit_rate") + 0.2);
    assert_true(m(off, "mean_ttft_ms") < m(none, "mean_ttft_ms"));
    assert_true(m(off, "kv_offload_cpu_hit_rate") > 0.2 && m(off, "kv_offload_loads") > 0);
    assert_true(m(off, "kv_offload_cpu_write_bytes") > 0 &&
                m(off, "kv_offload_cpu_evicted_blocks") == 0);
    /* what came from the tier is part of the hit the policy saw */
    assert_true(m(off, "kv_offload_cpu_hit_tokens") <= m(off, "prefix_hit_tokens"));
    /* a load's bytes are whole blocks: llama-3-8b's 128 KiB per token, 16-token blocks */
    assert_true(fabs(m(off, "kv_offload_cpu_read_bytes") -
                     m(off, "kv_offload_cpu_hit_tokens") * 131072) < 1);
    free(none);
    free(off);
}

static void test_slower_tier_lowers_benefit(void **state)
{
    study_result *none = must_run(NULL);
    static const char *const bw[] = {
        "kv_offload.tiers=[{kind: cpu}]", /* the catalog's PCIe 5 x16: 64 GB/s */
        "kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 16}]",
        "kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 4}]",
        "kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 1}]",
        "kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 0.25}]"};
    double last = 0;
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
        const char *sets[] = {bw[i], NULL};
        study_result *r = must_run(sets);
        double ttft = m(r, "mean_ttft_ms");
        print_message("%s: mean TTFT %.1f ms (none: %.1f), loads %.2f ms, hit rate %.3f\n", bw[i],
                      ttft, m(none, "mean_ttft_ms"), m(r, "kv_offload_mean_load_ms"),
                      m(r, "prefix_hit_rate"));
        assert_true(ttft >= last);
        if (i == 0)
            assert_true(ttft < m(none, "mean_ttft_ms"));
        last = ttft;
        free(r);
    }
    free(none);
}

static void test_no_load_is_no_tier(void **state)
{
    study_result *none = must_run(NULL);
    const char *sets[] = {"kv_offload.tiers=[{kind: cpu}]", "kv_offload.min_load_tokens=1000000",
                          NULL};
    study_result *r = must_run(sets);
    assert_true(m(r, "kv_offload_loads") == 0 && m(r, "kv_offload_cpu_write_bytes") > 0);
    for (int i = 0; i < none->n; i++)
        if (strcmp(none->m[i].name, "completed") && none->m[i].value != m(r, none->m[i].name))
            fail_msg("%s: %.17g without tiers, %.17g with loads refused", none->m[i].name,
                     none->m[i].value, m(r, none->m[i].name));
    free(none);
    free(r);
}

static void test_bounded_host_tier_and_ssd(void **state)
{
    const char *cpu[] = {"kv_offload.tiers=[{kind: cpu}]", NULL};
    const char *small[] = {"kv_offload.tiers=[{kind: cpu, capacity_gb: 5}]", NULL};
    const char *two[] = {"kv_offload.tiers=[{kind: cpu, capacity_gb: 5}, {kind: ssd, "
                         "bandwidth_gb_s: 6, latency_us: 100}]",
                         NULL};
    study_result *a = must_run(cpu), *b = must_run(small), *c = must_run(two);
    print_message("hit rate: unbounded host %.3f, 5 GB host %.3f (%g evicted), with an SSD %.3f "
                  "(%.3f from it)\n",
                  m(a, "prefix_hit_rate"), m(b, "prefix_hit_rate"),
                  m(b, "kv_offload_cpu_evicted_blocks"), m(c, "prefix_hit_rate"),
                  m(c, "kv_offload_ssd_hit_rate"));
    assert_true(m(a, "kv_offload_cpu_evicted_blocks") == 0);
    assert_true(m(b, "kv_offload_cpu_evicted_blocks") > 0);
    assert_true(m(b, "kv_offload_cpu_blocks") * 16 * 131072 <= 5e9);
    assert_true(m(b, "prefix_hit_rate") < m(a, "prefix_hit_rate"));
    /* what the host tier evicts goes down to the disk, which serves hits */
    assert_true(m(c, "kv_offload_ssd_write_bytes") > 0 &&
                m(c, "kv_offload_ssd_write_bytes") <=
                    m(c, "kv_offload_cpu_evicted_blocks") * 16 * 131072);
    assert_true(m(c, "kv_offload_ssd_hit_tokens") > 0);
    assert_true(m(c, "prefix_hit_rate") > m(b, "prefix_hit_rate"));
    free(a);
    free(b);
    free(c);
}

static void test_remote_tier_is_shared(void **state)
{
    const char *ssd[] = {"replicas=2", "router=round_robin",
                         "kv_offload.tiers=[{kind: ssd, bandwidth_gb_s: 10}]", NULL};
    const char *remote[] = {"replicas=2", "router=round_robin",
                            "kv_offload.tiers=[{kind: remote, bandwidth_gb_s: 10}]", NULL};
    study_result *a = must_run(ssd), *b = must_run(remote);
    print_message("two replicas, round robin: hit rate with a disk each %.3f, with one remote "
                  "store %.3f\n",
                  m(a, "prefix_hit_rate"), m(b, "prefix_hit_rate"));
    assert_true(m(b, "kv_offload_remote_hit_tokens") > m(a, "kv_offload_ssd_hit_tokens"));
    assert_true(m(b, "prefix_hit_rate") > m(a, "prefix_hit_rate"));
    free(a);
    free(b);
}

/* Every kv_offload_* metric a run with all three kinds of tier reports is one of the names the
 * store's run_summary view has a column for, and every such name is reported. */
static void test_names_are_the_views(void **state)
{
    const char *all[] = {
        "replicas=2", "router=round_robin",
        "kv_offload.tiers=[{kind: cpu, capacity_gb: 5}, {kind: ssd, "
        "bandwidth_gb_s: 10, capacity_gb: 50}, {kind: remote, bandwidth_gb_s: 10}]",
        NULL};
    study_result *r = must_run(all);
    int n, seen = 0;
    const char *const *names = eng_offload_metric_names(&n);
    for (int i = 0; i < r->n; i++) {
        if (strncmp(r->m[i].name, "kv_offload_", 11) != 0)
            continue;
        int k = 0;
        while (k < n && strcmp(names[k], r->m[i].name) != 0)
            k++;
        if (k == n)
            fail_msg("%s is not among eng_offload_metric_names", r->m[i].name);
        seen++;
    }
    assert_int_equal(seen, n);
    free(r);
}

static void test_sglang_and_trtllm_host_tier(void **state)
{
    static const char *const engines[] = {"engine=sglang", "engine=trtllm"};
    for (int i = 0; i < 2; i++) {
        const char *plain[] = {engines[i], NULL};
        const char *cpu[] = {engines[i], "kv_offload.tiers=[{kind: cpu}]", NULL};
        const char *slow[] = {engines[i], "kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 0.25}]",
                              NULL};
        study_result *none = must_run(plain), *off = must_run(cpu), *low = must_run(slow);
        print_message("%s: no tiers: hit rate %.3f, mean TTFT %.1f ms; host tier: hit rate %.3f "
                      "(%.3f from it), mean TTFT %.1f ms, %g loads of %.2f ms; at 0.25 GB/s: "
                      "mean TTFT %.1f ms\n",
                      engines[i], m(none, "prefix_hit_rate"), m(none, "mean_ttft_ms"),
                      m(off, "prefix_hit_rate"), m(off, "kv_offload_cpu_hit_rate"),
                      m(off, "mean_ttft_ms"), m(off, "kv_offload_loads"),
                      m(off, "kv_offload_mean_load_ms"), m(low, "mean_ttft_ms"));
        assert_true(m(off, "prefix_hit_rate") > m(none, "prefix_hit_rate") + 0.2);
        assert_true(m(off, "mean_ttft_ms") < m(none, "mean_ttft_ms"));
        assert_true(m(off, "kv_offload_loads") > 0);
        assert_true(m(low, "mean_ttft_ms") > m(off, "mean_ttft_ms"));
        free(none);
        free(off);
        free(low);
    }
}

static void test_write_through(void **state)
{
    const char *back[] = {"kv_offload.tiers=[{kind: cpu}]", NULL};
    const char *through[] = {"kv_offload.tiers=[{kind: cpu}]", "kv_offload.policy=write_through",
                             NULL};
    study_result *a = must_run(back), *b = must_run(through);
    print_message("bytes written: write-back %.4g, write-through %.4g\n",
                  m(a, "kv_offload_cpu_write_bytes"), m(b, "kv_offload_cpu_write_bytes"));
    assert_true(m(b, "kv_offload_cpu_write_bytes") > m(a, "kv_offload_cpu_write_bytes"));
    assert_true(m(b, "prefix_hit_rate") > 0.8 * m(a, "prefix_hit_rate"));
    free(a);
    free(b);
}

static void refused(const char *const *sets, const char *want)
{
    su_refused_text(chat, sets, want);
}

static void test_refusals(void **state)
{
    const char *ssd[] = {"kv_offload.tiers=[{kind: ssd}]", NULL};
    refused(ssd, "kv_offload.tiers[0].bandwidth_gb_s");
    const char *twice[] = {"kv_offload.tiers=[{kind: cpu}, {kind: cpu}]", NULL};
    refused(twice, "a second cpu tier");
    const char *none[] = {"kv_offload.tiers=[]", NULL};
    refused(none, "kv_offload.tiers");
    const char *zero[] = {"kv_offload.tiers=[{kind: cpu, bandwidth_gb_s: 0}]", NULL};
    refused(zero, "bandwidth_gb_s");
    const char *orca[] = {"kv_offload.tiers=[{kind: cpu}]", NULL};
    su_refused_text("model: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: orca}\n"
                    "workload: {num_requests: 10, arrival: {process: burst}, prompt_tokens: 100, "
                    "output_tokens: 10}\n",
                    orca, "without a prefix cache");
    const char *sglang[] = {"engine=sglang",
                            "kv_offload.tiers=[{kind: cpu}, {kind: ssd, bandwidth_gb_s: 7}]", NULL};
    refused(sglang, "kv_offload with scheduler sglang: one cpu tier only");
    const char *trt[] = {"engine=trtllm", "kv_offload.tiers=[{kind: cpu}]",
                         "kv_offload.policy=write_through", NULL};
    refused(trt, "TensorRT-LLM offloads a block to host memory when it is evicted");
    const char *scaled[] = {"kv_offload.tiers=[{kind: cpu}]", "router=round_robin",
                            "autoscale={metric: concurrency, target: 16, max_replicas: 4}", NULL};
    refused(scaled, "kv_offload with autoscale is not modelled");
}

/* A hash whose tag is `tag`: the tag folds the high half onto the low (otier.h), so any high
 * half with the low half tag ^ high gives it; each hi a different hash. */
static uint64_t with_tag(uint32_t tag, uint32_t hi)
{
    return (uint64_t)hi << 32 | (uint32_t)(tag ^ hi);
}

static void test_tier_tells_apart_hashes_sharing_a_tag(void **state)
{
    const uint32_t tag = 0x9e3779b9u;
    uint64_t a = with_tag(tag, 1), b = with_tag(tag, 2), c = with_tag(tag, 3);
    assert_true(a != b && b != c && a != c);
    assert_int_equal(eng_otier_tag(a), tag);
    assert_int_equal(eng_otier_tag(b), tag);
    assert_int_equal(eng_otier_tag(c), tag);
    eng_otier *t = eng_otier_new(8);
    int32_t na = eng_otier_add(t, a);
    assert_int_equal(eng_otier_find(t, b), -1); /* a's tag, not a's hash: a miss */
    int32_t nb = eng_otier_add(t, b);
    assert_int_not_equal(na, nb);
    assert_int_equal(eng_otier_find(t, a), na);
    assert_int_equal(eng_otier_find(t, b), nb); /* past a's slot, which has b's tag */
    assert_int_equal(eng_otier_find(t, c), -1); /* the same tag, in no node: a miss */
    /* the eviction takes the least recently used, a; b stays */
    assert_int_equal(eng_otier_oldest(t), na);
    eng_otier_remove(t, na);
    assert_int_equal(eng_otier_find(t, a), -1);
    assert_int_equal(eng_otier_find(t, b), nb);
    assert_int_equal(eng_otier_find(t, c), -1);
    /* a again, now behind b in the probe run; removing b moves it up and it stays found */
    na = eng_otier_add(t, a);
    eng_otier_remove(t, nb);
    assert_int_equal(eng_otier_find(t, a), na);
    assert_int_equal(eng_otier_find(t, b), -1);
    assert_int_equal(eng_otier_count(t), 1);
    eng_otier_free(t);

    /* many sharing one tag among others, through the table's growth (1,024 slots, then 2,048,
     * 4,096) and removals from the middle of the run */
    enum { N = 700 };
    t = eng_otier_new(2 * N);
    int32_t same[N], other[N];
    for (uint32_t i = 0; i < N; i++) {
        same[i] = eng_otier_add(t, with_tag(tag, 100 + i));
        other[i] = eng_otier_add(t, with_tag(tag + 1 + i, 7));
    }
    for (uint32_t i = 0; i < N; i += 2)
        eng_otier_remove(t, same[i]);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(eng_otier_find(t, with_tag(tag, 100 + i)), i % 2 ? same[i] : -1);
        assert_int_equal(eng_otier_find(t, with_tag(tag + 1 + i, 7)), other[i]);
    }
    assert_int_equal(eng_otier_find(t, with_tag(tag, 100 + N)), -1);
    assert_int_equal(eng_otier_count(t), N + N / 2);
    eng_otier_free(t);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_tier_tells_apart_hashes_sharing_a_tag,
                 test_host_tier_brings_back_evicted_prefixes, test_slower_tier_lowers_benefit,
                 test_no_load_is_no_tier, test_bounded_host_tier_and_ssd,
                 test_remote_tier_is_shared, test_write_through, test_sglang_and_trtllm_host_tier,
                 test_names_are_the_views, test_refusals)
