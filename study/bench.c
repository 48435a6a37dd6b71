/*
 * bench.c: the bench cases (see study_bench.h).
 */
#define _DEFAULT_SOURCE /* wait4: the peak memory of one case's process */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_run.h"
#include "study.h"
#include "study_bench.h"
#include "study_recommend.h"

#define SHAREGPT "traces/etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"

/* MODEL: lognormals fitted to sharegpt_8k_filtered_stats_llama2_tokenizer.csv (30,731 rows):
 * prompt mean 2340 tokens, sigma of log 1.626; output mean 439, sigma 1.001; the table's own
 * maxima (8141 and 1024) as clips. Used only when the table is absent. */
static const char lognormal_lengths[] =
    "  prompt_tokens: {dist: lognormal, mean: 2340, sigma: 1.626, max: 8141}\n"
    "  output_tokens: {dist: lognormal, mean: 439, sigma: 1.001, max: 1024}\n";

#define LLAMA_SETUP "model: llama-3-8b\ngpu: h100-sxm\n"
/* DeepSeek-V3 as the capacity planner of DESIGN.md asks about it: fp8 on 8 x H200 */
#define DSV3_TP8 "model: deepseek-v3\ngpu: h200\ntensor_parallel: 8\n"
#define DSV3_DP8 "model: deepseek-v3\ngpu: h200\ndata_parallel_attention: 8\nexpert_parallel: 8\n"
#define DSV3 "model: deepseek-v3\ngpu: h200\n"
/* gpt-oss-120b as TensorRT-LLM runs its "fp8": MXFP4 experts on fp8 tensor cores, 4 H100s with
 * the experts placed over 2 groups and each split over 2 GPUs */
#define GPTOSS_W4A8                                                                                \
    "model: gpt-oss-120b\ngpu: h100-sxm\ndtype: mxfp4-fp8\ntensor_parallel: 4\nexpert_parallel: "  \
    "2\n"

#define LLAMA405_PP2                                                                               \
    "model: llama-3.1-405b\ngpu: h100-sxm\ntensor_parallel: 8\npipeline_parallel: 2\n"

/* a mixed pool: an H100 and two A100s behind least_outstanding, weighed by capacity (its
 * capacity is the three replicas', so the case's rate is 90% of the pool's) */
#define MIXED_POOL                                                                                 \
    "model: llama-3-8b\ngpu: h100-sxm\nreplicas: [{gpu: h100-sxm, count: 1}, {gpu: a100-80gb, "    \
    "count: 2}]\n"

/* disaggregated with a mixed decode pool: an H100 and an A100 behind the decode pool's router,
 * weighed by capacity, each transfer at its pair's link */
#define PD_MIXED                                                                                   \
    "model: llama-3-8b\ngpu: h100-sxm\nprefill: {replicas: 1}\ndecode: {replicas: [{gpu: "         \
    "h100-sxm, count: 1}, {gpu: a100-80gb, count: 1}]}\n"

/* an own-workload case's extra lines: a host tier of 256 GB (a DGX H100's 2 TB over its GPUs) */
#define OFFLOAD "kv_offload: {tiers: [{kind: cpu, capacity_gb: 256}]}\n"

/* the tiers of scenarios/mooncake_offload.yaml: host memory, then a local NVMe drive */
#define OFFLOAD_NVME                                                                               \
    "kv_offload: {policy: write_back, tiers: [{kind: cpu, capacity_gb: 256}, {kind: ssd, "         \
    "capacity_gb: 3840, bandwidth_gb_s: 7, latency_us: 100}]}\n"

/* the Mooncake conversation trace's rows: a case asking for more replays it (trace.repeat) */
#define MOONCAKE_ROWS 12031

/* fleet-faults's extra lines: a crash every two hours (replicas 0 and 1 in turn, 10 s before
 * each cold start) and two slowdowns of an hour */
#define DAY_FAULTS                                                                                 \
    "faults: [{at_s: 1800, replica: 0, kind: crash, duration_s: 10}, "                             \
    "{at_s: 9000, replica: 1, kind: crash, duration_s: 10}, "                                      \
    "{at_s: 16200, replica: 0, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 23400, replica: 1, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 30600, replica: 0, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 37800, replica: 1, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 45000, replica: 0, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 52200, replica: 1, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 59400, replica: 0, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 66600, replica: 1, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 73800, replica: 0, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 81000, replica: 1, kind: crash, duration_s: 10}, "                                     \
    "{at_s: 21600, replica: 2, kind: slow, duration_s: 3600, factor: 2}, "                         \
    "{at_s: 64800, replica: 3, kind: slow, duration_s: 3600, factor: 1.5}]\n"

/* The vllm-v0 cases are the ones that ran the `vllm` policy before it became V1 (the same V0
 * policy, renamed), so their figures compare with older benches like for like. */
static const study_bench_case cases[] = {
    {"static", "static", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL,
     "batch_size: 64"},
    {"orca", "orca", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-v0", "vllm-v0", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"chunked", "chunked", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-v0-small", "vllm-v0", 100000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-v0-large", "vllm-v0", 10000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"cluster16", "vllm-v0", 1000000, 16, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-v0-stored", "vllm-v0", 1000000, 1, STUDY_BENCH_STORED, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-mooncake", "vllm", 12031, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE, NULL, NULL},
    {"llmd-mooncake", "vllm", 12031, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE_WEIGHTED, NULL,
     NULL},
    {"dynamo-mooncake", "vllm", 12031, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE_KV, NULL, NULL},
    /* the same hour behind kv_router with its replicas autoscaled and one crashing: the router's
     * account keyed by slot as replicas start, drain and crash (on_join, on_gone) */
    {"dynamo-mooncake-fleet", "vllm", 12031, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE_KV,
     "autoscale: {metric: concurrency, target: 24, max_replicas: 6, interval_s: 15, "
     "scale_down_delay_s: 120}\nfaults: [{at_s: 1200, replica: 1, kind: crash}]\n",
     NULL},
    {"sessions", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_SESSIONS, NULL, NULL},
    /* the same chats on a hybrid model whose prefix cache keeps a linear-attention state per
     * 528-token block (memory.mamba_cache_mode align) */
    {"sessions-hybrid", "vllm", 100000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_HYBRID, NULL, NULL},
    {"speculative", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_SPEC, NULL, NULL},
    {"pd", "vllm-v0", 1000000, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_PD, NULL, NULL},
    {"pd-mixed", "vllm-v0", 1000000, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_PD, PD_MIXED, NULL},
    {"sqlite-rows", NULL, 1000000, 1, STUDY_BENCH_ROWS, STUDY_BENCH_POISSON, NULL, NULL},
    {"deepseek-v3", "vllm-v0", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, DSV3_TP8,
     NULL},
    {"deepseek-v3-dp8", "vllm-v0", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, DSV3_DP8,
     NULL},
    /* the same with skewed routing on EPLB's placement (32 redundant experts) */
    {"deepseek-v3-eplb", "vllm-v0", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON,
     DSV3_DP8 "moe: {placement: eplb, redundant_experts: 32, skew: 1.2}\n", NULL},
    /* the engines' own policies on the plain ShareGPT workload: their prefix caches are on by
     * default, and this workload gives each request content of its own */
    {"vllm", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-small", "vllm", 100000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"vllm-nocache", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL,
     "enable_prefix_caching: false"},
    {"sglang", "sglang", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    {"trtllm", "trtllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL, NULL},
    /* TGI 3 as the tgi preset runs it: chunked prefill, prefix caching, the launcher's budget */
    {"tgi3", "tgi", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL,
     "chunked_prefill: true, prefix_caching: true, max_batch_prefill_tokens: 0"},
    /* SGLang with mixed chunks, TensorRT-LLM's overlap scheduler, and W4A8 experts split both
     * ways (the aic validation set's engine settings) */
    {"sglang-mixed", "sglang", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL,
     "enable_mixed_chunk: true"},
    {"trtllm-overlap", "trtllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, NULL,
     "overlap_scheduler: true"},
    {"gpt-oss-w4a8", "trtllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, GPTOSS_W4A8,
     NULL},
    /* KV offload tiers: the Mooncake trace whole (12,031 requests) and a million chat turns, with
     * a host tier behind each replica's cache */
    {"offload-mooncake", "vllm", 12031, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE, OFFLOAD,
     NULL},
    /* mooncake_offload.yaml's deployment (host and NVMe tiers) on the trace replayed to 1M
     * requests: 84 copies back to back, each with content of its own */
    {"offload-mooncake-1m", "vllm", 1000000, 2, STUDY_BENCH_SUMMARY, STUDY_BENCH_MOONCAKE,
     OFFLOAD_NVME, NULL},
    {"offload-sessions", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_SESSIONS, OFFLOAD,
     NULL},
    /* the same with SGLang's HiCache, whose loads come within the admitting step */
    {"offload-sglang", "sglang", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_SESSIONS, OFFLOAD,
     NULL},
    /* Llama-3.1-405B on two nodes of 8 H100s, two batches in flight through two stages */
    {"pipeline", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, LLAMA405_PP2, NULL},
    {"mixed-pool", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_POISSON, MIXED_POOL, NULL},
    /* a day of load served by an autoscaled fleet: every replica's cold start, drain and the
     * autoscaler's evaluations */
    {"fleet-day", "vllm", 172800, 10, STUDY_BENCH_SUMMARY, STUDY_BENCH_FLEET, NULL, NULL},
    /* the same day with a crash every two hours and two slowdowns: each crash's walk over the
     * requests, its retries and its replacement's cold start */
    {"fleet-faults", "vllm", 172800, 10, STUDY_BENCH_SUMMARY, STUDY_BENCH_FLEET, DAY_FAULTS, NULL},
    /* the day on prefill and decode pools scaled each by its own planner: a sample a second,
     * an adjustment every 30 s, each pool's cold starts and drains */
    {"fleet-pd-day", "vllm", 334000, 6, STUDY_BENCH_SUMMARY, STUDY_BENCH_FLEET_PD, NULL, NULL},
    /* the recommend question docs/capacity.md answers: its screen and every simulation */
    {"recommend-dsv3", "vllm", 1000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_RECOMMEND, DSV3, NULL},
    /* two request classes, each engine's priority order and preemption by priority */
    {"vllm-priority", "vllm", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_CLASSES, NULL,
     "scheduling_policy: priority"},
    {"sglang-priority", "sglang", 1000000, 1, STUDY_BENCH_SUMMARY, STUDY_BENCH_CLASSES, NULL,
     "enable_priority_scheduling: true, schedule_low_priority_values_first: true"},
};

const study_bench_case *study_bench_cases(int *n)
{
    *n = (int)(sizeof cases / sizeof cases[0]);
    return cases;
}

int study_bench_have_table(const char *data)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data, SHAREGPT);
    return access(path, R_OK) == 0;
}

/* The ShareGPT scenario of a policy on a setup (NULL: Llama-3-8B on an H100) over `replicas`
 * replicas, or, with decode > 0, over one prefill and `decode` decode replicas. */
static int scenario_text(char *buf, size_t len, const char *data, const char *policy,
                         const char *params, const char *setup, int64_t n, int replicas, int decode,
                         const char *arrival, int spec)
{
    char lengths[1200], pools[200];
    if (study_bench_have_table(data))
        snprintf(lengths, sizeof lengths, "  lengths: {path: %s/%s, format: vidur}\n", data,
                 SHAREGPT);
    else
        snprintf(lengths, sizeof lengths, "%s", lognormal_lengths);
    if (decode > 0 && setup && strstr(setup, "decode:")) /* the setup's pools */
        snprintf(pools, sizeof pools, "kv_transfer: {link: rdma}\n");
    else if (decode > 0)
        snprintf(pools, sizeof pools,
                 "prefill: {replicas: 1}\ndecode: {replicas: %d}\nkv_transfer: {link: rdma}\n",
                 decode);
    else if (setup && strstr(setup, "replicas:")) /* a mixed pool: the setup's groups */
        pools[0] = '\0';
    else
        snprintf(pools, sizeof pools, "replicas: %d\n", replicas);
    int w = snprintf(buf, len,
                     "name: bench\nseed: 1\n%s"
                     "scheduler: {name: %s%s%s}\n%srouter: least_outstanding\n%s"
                     "workload:\n  num_requests: %lld\n  arrival: %s\n%s",
                     setup ? setup : LLAMA_SETUP, policy, params ? ", " : "", params ? params : "",
                     pools,
                     spec ? "speculative: {method: eagle3, num_speculative_tokens: 3, "
                            "acceptance: {length: 2.5}}\n"
                          : "",
                     (long long)n, arrival, lengths);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* Appends STUDY_BENCH_CLASSES's two classes to a scenario whose last section is its workload. */
static int add_classes(char *buf, size_t len)
{
    size_t n = strlen(buf);
    int w = snprintf(buf + n, len - n,
                     "  classes:\n    - {name: interactive, share: 0.3, priority: 0}\n"
                     "    - {name: batch, share: 0.7, priority: 1}\n");
    return w > 0 && (size_t)w < len - n ? 0 : -1;
}

/* ServeGen's DeepSeek-R1 day, the clients' rates summed and averaged per hour (requests/s). */
static const double servegen_hourly[24] = {19.31, 22.25, 32.58, 28.64, 17.04, 14.54, 12.00, 9.24,
                                           9.54,  10.63, 12.97, 13.29, 7.16,  8.72,  10.96, 11.27,
                                           14.06, 8.86,  12.00, 9.41,  19.86, 25.97, 35.13, 18.91};

/* The hourly steps of the day at `scale` times ServeGen's rates into buf from w; the new w. */
static int day_steps(char *buf, size_t len, int w, double scale)
{
    for (int h = 0; h < 24 && w > 0 && (size_t)w < len; h++)
        w += snprintf(buf + w, len - (size_t)w, "      - {start_s: %d, rate: %.4f}\n", h * 3600,
                      servegen_hourly[h] * scale);
    return w;
}

/* The day of STUDY_BENCH_FLEET_PD: the rates / 4 on scenarios/fleet_pd_diurnal.yaml's pools. */
static int fleet_pd_scenario(char *buf, size_t len, const study_bench_case *c, int64_t n)
{
    int w =
        snprintf(buf, len,
                 "name: bench\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: {name: %s}\n"
                 "prefill: {replicas: 2, autoscale: {max_replicas: %d}}\n"
                 "decode: {replicas: 2, tensor_parallel: 2, router: least_outstanding, autoscale: "
                 "{min_replicas: 2, max_replicas: %d, max_gpus: %d}}\nkv_transfer: {link: rdma}\n"
                 "slo: {ttft_ms: 2000, tpot_ms: 50}\nworkload:\n  num_requests: %lld\n"
                 "  prompt_tokens: {dist: uniform, min: 2000, max: 6000}\n"
                 "  output_tokens: {dist: uniform, min: 200, max: 1000}\n  arrival:\n    "
                 "process: schedule\n    steps:\n",
                 c->policy, c->replicas, c->replicas, 3 * c->replicas, (long long)n);
    w = day_steps(buf, len, w, 0.25);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* The autoscaled day of STUDY_BENCH_FLEET: the rates / 8, hour by hour (and the case's setup
 * lines after them). */
static int fleet_scenario(char *buf, size_t len, const study_bench_case *c, int64_t n)
{
    if (c->workload == STUDY_BENCH_FLEET_PD)
        return fleet_pd_scenario(buf, len, c, n);
    int w = snprintf(buf, len,
                     "name: bench\nseed: 1\nmodel: llama-3-8b\ngpu: l4\nengine: {name: %s}\n"
                     "router: least_outstanding\nreplicas: 2\nautoscale: {metric: concurrency, "
                     "target: 16, max_replicas: %d}\nslo: {ttft_ms: 2000}\nworkload:\n  "
                     "num_requests: %lld\n  prompt_tokens: {dist: uniform, min: 200, max: 2000}\n"
                     "  output_tokens: {dist: uniform, min: 50, max: 400}\n  arrival:\n    "
                     "process: schedule\n    steps:\n",
                     c->policy, c->replicas, (long long)n);
    w = day_steps(buf, len, w, 1.0 / 8);
    if (c->setup && w > 0 && (size_t)w < len)
        w += snprintf(buf + w, len - (size_t)w, "%s", c->setup);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* The scenario of a case with its own workload (its setup: extra lines). */
static int own_scenario(char *buf, size_t len, const char *data, const study_bench_case *c,
                        int64_t n)
{
    int w;
    if (c->workload == STUDY_BENCH_FLEET || c->workload == STUDY_BENCH_FLEET_PD)
        return fleet_scenario(buf, len, c, n);
    const char *extra = c->setup ? c->setup : "";
    const char *router = c->workload == STUDY_BENCH_MOONCAKE_WEIGHTED ? "weighted"
                         : c->workload == STUDY_BENCH_MOONCAKE_KV     ? "kv_router"
                                                                      : "prefix_affinity";
    char who[512] = "model: llama-3-8b\ngpu: h100-sxm\n";
    if (c->workload == STUDY_BENCH_HYBRID)
        snprintf(who, sizeof who,
                 "model: %s/models/qwen3.5-397b-a17b/config.json\ngpu: h200\ntensor_parallel: 8\n"
                 "memory: {mamba_cache_mode: align}\n",
                 data);
    if (c->workload != STUDY_BENCH_SESSIONS && c->workload != STUDY_BENCH_HYBRID) {
        char repeat[48] = "";
        if (n > MOONCAKE_ROWS)
            snprintf(repeat, sizeof repeat, ", repeat: %lld",
                     (long long)((n + MOONCAKE_ROWS - 1) / MOONCAKE_ROWS));
        w = snprintf(buf, len,
                     "name: bench\nseed: 1\nmodel: qwen2.5-7b\ngpu: h100-sxm\nengine: {name: %s}\n"
                     "replicas: %d\nrouter: %s\n%sworkload:\n  trace: {path: "
                     "%s/traces/mooncake-fast25/conversation_trace.jsonl, format: mooncake, "
                     "limit: %lld%s}\n",
                     c->policy, c->replicas, router, extra, data, (long long)n, repeat);
    } else {
        w = snprintf(buf, len,
                     "name: bench\nseed: 1\n%sengine: {name: %s}\n"
                     "replicas: %d\n%sworkload:\n  num_requests: %lld\n"
                     "  arrival: {process: closed, concurrency: 128, think_time_ms: 500, "
                     "ramp_up_s: 10}\n"
                     "  output_tokens: {dist: lognormal, mean: 250, sigma: 0.6, max: 1500}\n"
                     "  sessions: {turns: {dist: uniform, min: 2, max: 10}, user_tokens: {dist: "
                     "lognormal, mean: 120, sigma: 0.8, min: 20, max: 400}, "
                     "system_prompt_tokens: 1000, think_time_ms: {dist: lognormal, mean: 3000, "
                     "sigma: 0.6, min: 500, max: 10000}}\n",
                     who, c->policy, c->replicas, extra, (long long)n);
    }
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static int simulate_text(const char *text, store *s, study_result *res, sim_err *err)
{
    scn_scenario scn;
    int rc = scn_load_text("bench.yaml", text, NULL, 0, study_resolver(), &scn, err);
    if (rc == 0) {
        study_sink sink = {.s = s, .level = STORE_REQUESTS};
        rc = study_run(&scn, scn.seed, NULL, s ? &sink : NULL, NULL, res, err);
    }
    scn_free(&scn);
    return rc;
}

/* Runs fn(arg, buf) in a child process that writes len bytes of result into buf; the parent
 * gets them back and the child's peak memory in *peak_mb. 0, or -1 when the child failed. */
static int in_child(void (*fn)(void *arg, void *buf), void *arg, void *buf, size_t len,
                    double *peak_mb)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        fn(arg, buf);
        ssize_t w = write(fd[1], buf, len);
        _exit(w == (ssize_t)len ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], buf, len);
    close(fd[0]);
    struct rusage ru;
    wait4(pid, NULL, 0, &ru);
    if (peak_mb)
        *peak_mb = (double)ru.ru_maxrss / 1024.0;
    return got == (ssize_t)len ? 0 : -1;
}

static void nothing(void *arg, void *buf) {}

double study_bench_baseline_mb(void)
{
    char byte = 0;
    double mb = 0;
    in_child(nothing, NULL, &byte, 1, &mb);
    return mb;
}

typedef struct cap_arg {
    const char *data, *policy, *params, *setup;
    int decode;
    int64_t n;
} cap_arg;

static void measure_capacity(void *arg, void *buf)
{
    cap_arg *a = arg;
    double *cap = buf;
    char text[4096];
    sim_err err = {{0}};
    study_result *res = sim_xcalloc(1, sizeof *res);
    *cap = -1;
    if (scenario_text(text, sizeof text, a->data, a->policy, a->params, a->setup, a->n, 1,
                      a->decode, "burst", 0) == 0 &&
        simulate_text(text, NULL, res, &err) == 0)
        *cap = study_metric(res, "request_throughput");
    else
        fprintf(stderr, "llmsim bench: %s\n", err.msg);
    free(res);
}

double study_bench_capacity(const char *data, const study_bench_case *c, int quick, sim_err *err)
{
    cap_arg a = {data,
                 c->policy,
                 c->params,
                 c->setup,
                 c->workload == STUDY_BENCH_PD ? c->replicas : 0,
                 quick ? 2000 : 20000};
    double cap = -1;
    if (in_child(measure_capacity, &a, &cap, sizeof cap, NULL) != 0 || cap <= 0) {
        sim_errf(err, "measuring the capacity of %s failed", c->name);
        return -1;
    }
    return cap;
}

/* Writes n request rows through the streaming run writer into a fresh database. */
static int store_rows(const char *db, int64_t n, double *rows_per_s, sim_err *err)
{
    unlink(db);
    store *s = store_open(db, err);
    if (!s)
        return -1;
    store_run_info info = {.name = "rows",
                           .scenario_text = "",
                           .scheduler = "-",
                           .version = study_version(),
                           .profile = "-",
                           .level = STORE_REQUESTS};
    double t0 = sim_wall_seconds();
    store_run *w = store_run_begin(s, &info, 0, err);
    if (!w) {
        store_close(s);
        return -1;
    }
    eng_request rq;
    memset(&rq, 0, sizeof rq);
    rq.status = ENG_RQ_FINISHED;
    for (int64_t i = 0; i < n; i++) {
        rq.id = i;
        rq.t_arrival = i * 1000;
        rq.t_first_sched = rq.t_last_sched = rq.t_arrival + 10;
        rq.t_first_token = rq.t_arrival + 5000;
        rq.t_finish = rq.t_arrival + 90000;
        rq.prompt = 100 + (int32_t)(i % 900);
        rq.output = 10 + (int32_t)(i % 300);
        rq.scheduled = 1;
        store_run_request(w, &rq);
    }
    int rc = store_run_finish(w, NULL, 0, NULL, NULL, NULL, err);
    *rows_per_s = (double)n / (sim_wall_seconds() - t0);
    store_close(s);
    unlink(db);
    return rc;
}

typedef struct case_arg {
    const study_bench_case *c;
    int64_t n;
    double cap;
    const char *data, *tmpdb;
} case_arg;

/* The recommend case: the whole search (screen, capacity searches, confirmation), nothing
 * stored; requests counts those of every run. */
static void run_recommend(const case_arg *a, study_bench_out *o)
{
    char text[1024];
    sim_err err = {{0}};
    snprintf(text, sizeof text,
             "name: bench\nseed: 1\n%sengine: %s\nworkload:\n  num_requests: %lld\n  arrival: "
             "{process: poisson, rate: 1}\n  prompt_tokens: 1000\n  output_tokens: 500\n",
             a->c->setup ? a->c->setup : LLAMA_SETUP, a->c->policy, (long long)a->n);
    study_recommend *r = sim_xcalloc(1, sizeof *r);
    r->cap.file = "bench.yaml";
    r->cap.text = text;
    r->gpus[r->ngpus++] = strstr(text, "gpu: h200") ? "h200" : "h100-sxm";
    r->engines[r->nengines++] = "vllm";
    r->engines[r->nengines++] = "sglang";
    r->engines[r->nengines++] = "trtllm";
    r->budget = 8;
    r->cap.precision = 0.05; /* recommend's defaults */
    r->cap.max_seeds = 3;
    double t0 = sim_wall_seconds();
    if (study_slo_parse("ttft_p99=2s,tpot_p99=50ms", r->cap.slo, STUDY_MAX_SLO, &r->cap.nslo,
                        &err) == 0 &&
        study_recommend_run(r, &err) == 0) {
        o->wall = sim_wall_seconds() - t0;
        o->runs = (double)r->cap.runs;
        o->requests = o->runs * (double)a->n;
        o->ok = 1;
    }
    snprintf(o->err, sizeof o->err, "%s", err.msg);
    study_recommend_free(r);
    free(r);
}

static void run_case(void *arg, void *buf)
{
    case_arg *a = arg;
    study_bench_out *o = buf;
    sim_err err = {{0}};
    if (a->c->workload == STUDY_BENCH_RECOMMEND) {
        run_recommend(a, o);
        return;
    }
    if (a->c->store == STUDY_BENCH_ROWS) {
        o->ok = store_rows(a->tmpdb, a->n, &o->rows_per_s, &err) == 0;
        o->requests = (double)a->n;
        snprintf(o->err, sizeof o->err, "%s", err.msg);
        return;
    }
    char text[4096], arrival[128];
    int poisson = a->c->workload == STUDY_BENCH_POISSON || a->c->workload == STUDY_BENCH_SPEC ||
                  a->c->workload == STUDY_BENCH_CLASSES;
    /* speculation pays at moderate load, where batches stay small: half the plain capacity */
    double load = a->c->workload == STUDY_BENCH_SPEC ? 0.5 : 0.9;
    o->rate = poisson                            ? load * a->cap * a->c->replicas
              : a->c->workload == STUDY_BENCH_PD ? 0.9 * a->cap
                                                 : 0;
    snprintf(arrival, sizeof arrival, "{process: poisson, rate: %.6g}", o->rate);
    store *s = NULL;
    if (a->c->store == STUDY_BENCH_STORED) {
        unlink(a->tmpdb);
        if (!(s = store_open(a->tmpdb, &err))) {
            snprintf(o->err, sizeof o->err, "%s", err.msg);
            return;
        }
    }
    study_result *res = sim_xcalloc(1, sizeof *res);
    double t0 = sim_wall_seconds();
    int made = poisson ? scenario_text(text, sizeof text, a->data, a->c->policy, a->c->params,
                                       a->c->setup, a->n, a->c->replicas, 0, arrival,
                                       a->c->workload == STUDY_BENCH_SPEC)
               : a->c->workload == STUDY_BENCH_PD
                   ? scenario_text(text, sizeof text, a->data, a->c->policy, a->c->params,
                                   a->c->setup, a->n, 1, a->c->replicas, arrival, 0)
                   : own_scenario(text, sizeof text, a->data, a->c, a->n);
    if (made == 0 && a->c->workload == STUDY_BENCH_CLASSES) /* workload: is the text's last map */
        made = add_classes(text, sizeof text);
    if (made == 0 && simulate_text(text, s, res, &err) == 0) {
        o->wall = sim_wall_seconds() - t0;
        o->requests = study_metric(res, "completed") + study_metric(res, "rejected");
        o->iterations = (double)res->tot.iterations;
        o->events = (double)res->events;
        o->ok = 1;
    }
    snprintf(o->err, sizeof o->err, "%s", err.msg);
    free(res);
    store_close(s);
    if (a->c->store == STUDY_BENCH_STORED)
        unlink(a->tmpdb);
}

void study_bench_run(const study_bench_case *c, int quick, double cap, const char *data,
                     const char *tmpdb, study_bench_out *out)
{
    case_arg a = {c, quick ? c->requests / 10 : c->requests, cap, data, tmpdb};
    memset(out, 0, sizeof *out);
    double mb = 0;
    if (in_child(run_case, &a, out, sizeof *out, &mb) != 0) {
        memset(out, 0, sizeof *out);
        snprintf(out->err, sizeof out->err, "crashed");
    }
    out->peak_mb = mb;
}
