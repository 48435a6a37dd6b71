/*
 * test_router_scn.c: the cache-aware routers on shipped scenarios, as a user runs them.
 *
 * - prefix_affinity (sgl-router's cache_aware policy) on scenarios/sessions.yaml over four
 *   replicas, 256 clients, 4,000 turns and half the GPU's memory: it serves at least 90% of round
 *   robin's throughput with a higher prefix hit rate. Following the longest match regardless of
 *   load sends every session to the replica that cached the shared system prompt first (a third
 *   of round robin's throughput); the balance thresholds keep it from herding.
 * - weighted (llm-d's scorers) replays 7,000 requests of the Mooncake conversation trace on two
 *   replicas (skipped when ../shared/data lacks the trace): an index whose erased slots kept
 *   their replicas filled up and probed forever past about 6,000.
 * - the routers' shipped scenario scenarios/routers.yaml loads and runs with each router.
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
#include "test_main.h"

#define SCN LLMSIM_SOURCE_DIR "/scenarios/"

typedef struct figures {
    double throughput, hit_rate;
    int64_t done;
} figures;

/* Runs the scenario at path with sets; its throughput, hit rate and requests done. */
static figures run(const char *path, const char *const *sets, int nsets)
{
    scn_scenario s;
    sim_err err;
    if (study_load(path, sets, nsets, &s, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    study_result *r = calloc(1, sizeof *r);
    study_hooks h = {.check_every = 4096};
    if (study_run(&s, s.seed, NULL, NULL, &h, r, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    figures f = {study_metric(r, "request_throughput"), study_metric(r, "prefix_hit_rate"),
                 (int64_t)study_metric(r, "completed")};
    free(r);
    scn_free(&s);
    return f;
}

static void test_prefix_affinity_does_not_herd(void **state)
{
    const char *sets[] = {"replicas=4", "workload.arrival.concurrency=256",
                          "workload.num_requests=4000", "memory.gpu_utilization=0.5",
                          "router=round_robin"};
    figures rr = run(SCN "sessions.yaml", sets, 5);
    sets[4] = "router=prefix_affinity";
    figures pa = run(SCN "sessions.yaml", sets, 5);
    print_message("round_robin %.2f req/s hit %.3f; prefix_affinity %.2f req/s hit %.3f\n",
                  rr.throughput, rr.hit_rate, pa.throughput, pa.hit_rate);
    assert_true(pa.throughput >= 0.9 * rr.throughput);
    assert_true(pa.hit_rate > rr.hit_rate);
}

static void test_weighted_long_trace(void **state)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/traces/mooncake-fast25/conversation_trace.jsonl",
             study_shared_data());
    if (access(path, R_OK) != 0) {
        skip(); /* the Mooncake conversation trace is not in ../shared/data */
    }
    const char *sets[] = {"router=weighted", "workload.num_requests=7000"};
    figures f = run(SCN "mooncake_conv.yaml", sets, 2);
    assert_int_equal(f.done, 7000);
    assert_true(f.hit_rate > 0);
}

static void test_shipped_routers_scenario(void **state)
{
    const char *routers[] = {"router=round_robin", "router=prefix_affinity",
                             "router=weighted",    "router=precise_prefix",
                             "router=kv_router",   "router=session_affinity"};
    for (size_t i = 0; i < sizeof routers / sizeof routers[0]; i++) {
        const char *sets[] = {routers[i], "workload.num_requests=400"};
        figures f = run(SCN "routers.yaml", sets, 2);
        assert_int_equal(f.done, 400);
    }
}

LLMSIM_TEST_MAIN(NULL, NULL, test_prefix_affinity_does_not_herd, test_weighted_long_trace,
                 test_shipped_routers_scenario)
