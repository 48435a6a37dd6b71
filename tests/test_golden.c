/*
 * test_golden.c: fixed-seed summaries compared exactly with files under tests/golden/.
 *
 * Each case is a shipped scenario (or tests/golden/engine.yaml) with a few overrides (every
 * scheduler, preemption by recompute and by swap under a small KV cache, every router over three
 * replicas, tensor parallelism, async CPU overhead, a closed loop, every engine preset and
 * version, prefill and decode pools, speculative decoding by each kind of drafter), run through
 * study/ as `llmsim run` runs it. Its file holds every summary metric as `name %.17g`, then the
 * iteration and preemption counts. A change that moves any figure fails here; when the change is
 * intended, regenerate the files with LLMSIM_GOLDEN_UPDATE=1 build-debug/tests/test_golden and
 * commit them with the change that explains why they moved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "study.h"

#define GOLDEN_DIR LLMSIM_SOURCE_DIR "/tests/golden/"
#define DEMO LLMSIM_SOURCE_DIR "/scenarios/demo.yaml"
#define ENGINE GOLDEN_DIR "engine.yaml"
#define PD70 LLMSIM_SOURCE_DIR "/scenarios/pd_llama70b.yaml"
#define SPEC_K LLMSIM_SOURCE_DIR "/scenarios/speculative_k.yaml"

typedef struct golden_case {
    const char *name, *scenario;
    const char *sets[8];
} golden_case;

static const golden_case cases[] = {
    {"static", DEMO, {"scheduler.name=static"}},
    {"orca", DEMO, {"scheduler.name=orca"}},
    {"vllm_v0", DEMO, {"scheduler.name=vllm-v0"}},
    {"chunked", DEMO, {"scheduler.name=chunked"}},
    {"tgi", DEMO, {"scheduler.name=tgi"}},
    {"vllm_v0_recompute_tight",
     DEMO,
     {"scheduler.name=vllm-v0", "scheduler.preemption=recompute", "memory.gpu_utilization=0.22",
      "workload.arrival.rate=6"}},
    {"vllm_v0_swap_tight",
     DEMO,
     {"scheduler.name=vllm-v0", "scheduler.preemption=swap", "memory.gpu_utilization=0.22",
      "workload.arrival.rate=6"}},
    {"chunked_tight",
     DEMO,
     {"scheduler.name=chunked", "memory.gpu_utilization=0.22", "workload.arrival.rate=6"}},
    {"router_round_robin", DEMO, {"replicas=3", "router=round_robin", "workload.arrival.rate=10"}},
    {"router_least_outstanding",
     DEMO,
     {"replicas=3", "router=least_outstanding", "workload.arrival.rate=10"}},
    {"router_least_tokens",
     DEMO,
     {"replicas=3", "router=least_tokens", "workload.arrival.rate=10"}},
    {"router_power_of_two",
     DEMO,
     {"replicas=3", "router=power_of_two", "workload.arrival.rate=10"}},
    {"tp2_a100", DEMO, {"tensor_parallel=2", "gpu=a100-80gb"}},
    {"async_cpu", LLMSIM_SOURCE_DIR "/scenarios/exp7_async_cpu.yaml", {"scheduler.name=vllm-v0"}},
    {"closed_loop", LLMSIM_SOURCE_DIR "/scenarios/closed_loop.yaml", {"scheduler.name=vllm-v0"}},
    {"vllm", DEMO, {"scheduler.name=vllm"}},
    {"vllm_tight",
     DEMO,
     {"scheduler.name=vllm", "memory.gpu_utilization=0.22", "workload.arrival.rate=6"}},
    {"sglang", DEMO, {"scheduler.name=sglang"}},
    {"sglang_tight",
     DEMO,
     {"scheduler.name=sglang", "memory.gpu_utilization=0.22", "workload.arrival.rate=6"}},
    {"trtllm", DEMO, {"scheduler.name=trtllm"}},
    {"trtllm_max_utilization_tight",
     DEMO,
     {"scheduler.name=trtllm", "scheduler.capacity_scheduler_policy=max_utilization",
      "memory.gpu_utilization=0.22", "workload.arrival.rate=6"}},
    {"sessions", LLMSIM_SOURCE_DIR "/scenarios/sessions.yaml", {NULL}},
    /* every router: those that follow cached prefixes see a shared prefix cached by vllm;
     * session_affinity, conversations */
    {"router_prefix_affinity",
     DEMO,
     {"replicas=3", "router=prefix_affinity", "scheduler.name=vllm", "workload.arrival.rate=10",
      "workload.shared_prefix={tokens: 1000, groups: 6}"}},
    {"router_weighted",
     DEMO,
     {"replicas=3",
      "router={name: weighted, prefix_weight: 2, queue_weight: 1, kv_weight: 1, staleness_ms: 50}",
      "scheduler.name=vllm", "workload.arrival.rate=10",
      "workload.shared_prefix={tokens: 1000, groups: 6}"}},
    {"router_precise_prefix",
     DEMO,
     {"replicas=3", "router=precise_prefix", "scheduler.name=vllm", "workload.arrival.rate=10",
      "workload.shared_prefix={tokens: 1000, groups: 6}"}},
    {"router_kv_router",
     DEMO,
     {"replicas=3", "router={name: kv_router, overlap_weight: 1, temperature: 0.5}",
      "scheduler.name=vllm", "workload.arrival.rate=10",
      "workload.shared_prefix={tokens: 1000, groups: 6}"}},
    {"router_session_affinity",
     LLMSIM_SOURCE_DIR "/scenarios/sessions.yaml",
     {"replicas=3", "router=session_affinity", "workload.num_requests=1000"}},
    /* every engine preset, each version, with nothing of the scenario's own over it */
    {"engine_vllm", ENGINE, {"engine=vllm"}},
    {"engine_vllm_0_14", ENGINE, {"engine={name: vllm, version: '0.14'}"}},
    {"engine_vllm_0_6", ENGINE, {"engine={name: vllm, version: '0.6'}"}},
    {"engine_vllm_0_5", ENGINE, {"engine={name: vllm, version: '0.5'}"}},
    {"engine_sglang", ENGINE, {"engine=sglang"}},
    {"engine_trtllm", ENGINE, {"engine=trtllm"}},
    {"engine_trtllm_1_0", ENGINE, {"engine={name: trtllm, version: '1.0'}"}},
    {"engine_tgi", ENGINE, {"engine=tgi"}},
    /* prefill and decode pools: after-prefill over RDMA, layer-wise on an MoE model, and a
     * decode pool short of KV that holds transfers, over PCIe with its own V0 policy */
    {"pd_llama70b", PD70, {"workload.num_requests=300"}},
    {"pd_deepseek_v3",
     LLMSIM_SOURCE_DIR "/scenarios/pd_deepseek_v3.yaml",
     {"workload.num_requests=200"}},
    {"pd_held_pcie_layerwise",
     PD70,
     {"workload.num_requests=300", "workload.arrival.rate=8",
      "kv_transfer={link: pcie, bandwidth_gb_s: 25, latency_us: 10, discipline: layerwise}",
      "decode.memory.gpu_utilization=0.22", "decode.engine={name: vllm, version: '0.6'}",
      "prefill.router=least_tokens"}},
    /* speculative decoding: EAGLE-3 at an i.i.d. rate, MTP from a measured curve, a draft
     * model at a mean length drawn as one class, off above a batch size, n-gram */
    {"spec_eagle3_rate", SPEC_K, {NULL}},
    {"spec_mtp_curve",
     LLMSIM_SOURCE_DIR "/scenarios/speculative.yaml",
     {"workload.num_requests=200"}},
    {"spec_draft_length",
     SPEC_K,
     {"model=qwen3-8b", "speculative.method=draft", "speculative.draft_model=qwen2.5-0.5b",
      "speculative.acceptance={length: 2.5, classes: 1}"}},
    {"spec_disable_batch",
     SPEC_K,
     {"speculative.disable_by_batch_size=8", "workload.arrival.rate=8",
      "speculative.acceptance={rate: 0.7, distribution: min_variance}"}},
    {"spec_ngram_sglang",
     SPEC_K,
     {"engine=sglang", "speculative.method=ngram", "speculative.acceptance={length: 1.8}"}},
    /* request classes under each engine's priority scheduling, preempting by priority */
    {"priority_vllm",
     LLMSIM_SOURCE_DIR "/scenarios/priority_classes.yaml",
     {"workload.num_requests=400", "memory.gpu_utilization=0.5"}},
    {"priority_sglang",
     LLMSIM_SOURCE_DIR "/scenarios/priority_classes.yaml",
     {"workload.num_requests=400", "engine=sglang",
      "scheduler={name: sglang, enable_priority_scheduling: true, "
      "schedule_low_priority_values_first: true, max_running_requests: 24, "
      "priority_scheduling_preemption_threshold: 0}"}},
};

/* The summary of a case as its golden file holds it; returns a malloc'd string. */
static char *summary_of(const golden_case *gc)
{
    int nsets = 0;
    while (nsets < 8 && gc->sets[nsets])
        nsets++;
    scn_scenario s;
    sim_err err;
    if (study_load(gc->scenario, gc->sets, nsets, &s, &err) != 0)
        fail_msg("%s: %s", gc->name, err.msg);
    study_result *r = test_malloc(sizeof *r);
    /* the engine's walkers are the conformance suite's business; here they would only slow the
     * debug build down */
    study_hooks hooks = {.check_every = 4096};
    if (study_run(&s, s.seed, NULL, NULL, &hooks, r, &err) != 0)
        fail_msg("%s: %s", gc->name, err.msg);
    size_t cap = 8192, n = 0;
    char *text = malloc(cap);
    for (int i = 0; i < r->n; i++)
        n += (size_t)snprintf(text + n, cap - n, "%s %.17g\n", r->m[i].name, r->m[i].value);
    n += (size_t)snprintf(text + n, cap - n, "iterations %lld\npreemptions %lld\n",
                          (long long)r->tot.iterations, (long long)r->tot.preemptions);
    assert_true(n < cap);
    test_free(r);
    scn_free(&s);
    return text;
}

/* The first line where a and b differ, for the failure message. */
static void first_difference(const char *a, const char *b, char *out, size_t len)
{
    for (int line = 1;; line++) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || strncmp(a, b, la) != 0) {
            snprintf(out, len, "line %d: got '%.*s', golden '%.*s'", line, (int)la, a, (int)lb, b);
            return;
        }
        if (!a[la] || !b[lb]) {
            snprintf(out, len, "line %d: one ends early", line);
            return;
        }
        a += la + 1;
        b += lb + 1;
    }
}

static void test_golden_summaries(void **state)
{
    int update = getenv("LLMSIM_GOLDEN_UPDATE") != NULL, bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s.txt", GOLDEN_DIR, cases[i].name);
        char *got = summary_of(&cases[i]);
        if (update) {
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs(got, f);
            fclose(f);
            print_message("golden: wrote %s\n", path);
        } else {
            char *want = e2e_slurp(path, 1 << 16);
            if (!want) {
                print_message("golden: %s is missing\n", path);
                bad++;
            } else if (strcmp(got, want) != 0) {
                char diff[512];
                first_difference(got, want, diff, sizeof diff);
                print_message("golden: %s differs, %s\n", cases[i].name, diff);
                bad++;
            } else {
                print_message("golden: %s identical\n", cases[i].name);
            }
            free(want);
        }
        free(got);
    }
    if (bad)
        fail_msg("%d golden summaries differ; if the change is intended, regenerate them with "
                 "LLMSIM_GOLDEN_UPDATE=1 build-debug/tests/test_golden",
                 bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden_summaries)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
