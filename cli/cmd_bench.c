/*
 * cmd_bench.c: `llmsim bench [--quick] [--data DIR] [--cases A,B,...]`: how fast the simulator
 * is: one row per case (study/bench.c) with wall seconds, simulated requests, iterations and
 * events per wall second, and peak resident memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "study_bench.h"

static const cli_command bench_cmd = {
    .name = "bench",
    .summary =
        "Measures how fast the simulator is: Llama-3-8B on one H100 SXM, ShareGPT lengths, Poisson "
        "arrivals at 90% of each policy's burst capacity, each case in its own process.",
    .details =
        "Cases: static (batch 64), orca, vllm-v0, chunked at 1M requests; vllm-v0-small "
        "(100k), vllm-v0-large (10M), cluster16 (16 replicas), vllm-v0-stored (every "
        "request and iteration stored); vllm-mooncake (vLLM V1 with prefix caching on the "
        "Mooncake conversation trace, 12k requests, 2 replicas, behind prefix_affinity); "
        "llmd-mooncake and dynamo-mooncake (the same behind weighted and kv_router); "
        "dynamo-mooncake-fleet (behind kv_router, autoscaled up to 6 replicas, one crash); "
        "sessions (1M turns of "
        "multi-turn chat, vLLM V1); sessions-hybrid (100k of those turns on Qwen3.5-397B-A17B, "
        "8 x H200, prefix caching by mamba_cache_mode align); speculative (vLLM V1 with an EAGLE-3 "
        "head, 3 draft "
        "tokens, at half its plain burst capacity, 1M requests); pd (1M ShareGPT requests, "
        "vLLM V1 disaggregated: one prefill and two decode replicas, the KV over RDMA, at "
        "90% of that deployment's burst capacity); pd-mixed (the same with a decode pool of "
        "an H100 and an A100-80GB, weighed by capacity, each transfer at its pair's link); "
        "sqlite-rows (request rows into SQLite "
        "alone); deepseek-v3 and deepseek-v3-dp8: vllm-v0 at 1M requests of DeepSeek-V3 in "
        "fp8 on 8 x H200 as TP8 and as DP8 + EP8; deepseek-v3-eplb (DP8 + EP8 with routing skew "
        "1.2 on EPLB's placement, 32 redundant experts); vllm (V1, prefix caching on, as by "
        "default), "
        "vllm-small (the same at 100k), vllm-nocache (V1 with prefix caching off), sglang and "
        "trtllm (their default policies, radix cache and block reuse on) at 1M requests; tgi3 "
        "(TGI 3: chunked prefill, prefix caching, the launcher's prefill budget), 1M requests; "
        "sglang-mixed (SGLang with mixed chunks), trtllm-overlap (TensorRT-LLM's overlap "
        "scheduler) and gpt-oss-w4a8 (gpt-oss-120b as TensorRT-LLM's W4A8 on 4 x H100, experts "
        "over 2 groups of 2), 1M requests each; offload-mooncake and offload-sessions: "
        "vllm-mooncake and sessions with a 256 GB host-memory tier behind each replica's KV "
        "cache (kv_offload); offload-mooncake-1m (mooncake_offload.yaml's deployment, host and "
        "NVMe tiers, on the Mooncake trace replayed 84 times back to back with trace.repeat, 1M "
        "requests); offload-sglang (offload-sessions with SGLang's HiCache); pipeline "
        "(Llama-3.1-405B as TP8 PP2 on two nodes of 8 H100s, vLLM "
        "V1, 1M requests); mixed-pool (a mixed GPU pool, one H100 and two A100-80GB behind "
        "least_outstanding weighed by capacity, vLLM V1, 1M requests at 90% of the pool's "
        "burst capacity); fleet-day (a 24-hour day of ServeGen's hourly rates / 8, 172,800 "
        "requests, served by vLLM V1 on up to 10 autoscaled L4 replicas with cold starts); "
        "fleet-faults (the same day with a replica crash every two hours, each retried and "
        "replaced after its cold start, and two hour-long slowdowns); fleet-pd-day (the day's "
        "rates / 4, 334,000 requests of 2,000-6,000 prompt and 200-1,000 output tokens, on "
        "Llama-3-8B H100s in prefill (1 GPU) and decode (2 GPUs) pools of up to 6 replicas, "
        "each scaled by Dynamo's planner); "
        "recommend-dsv3 (llmsim recommend's whole search for DeepSeek-V3 within 8 x H200, "
        "1000/500 tokens, p99 TTFT 2 s and TPOT 50 ms, 1,000 requests a run; requests: those of "
        "all its runs); vllm-priority and sglang-priority (1M ShareGPT requests in two classes, "
        "30% priority 0 and 70% priority 1, under vLLM V1's scheduling_policy priority and "
        "SGLang's enable_priority_scheduling).",
    .common = CLI_QUIET};

static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Each (policy, settings, setup, disaggregation)'s burst capacity, measured once. */
typedef struct capacities {
    const char *name[16], *params[16], *setup[16];
    int decode[16];
    double cap[16];
    int n;
} capacities;

static double capacity_of(capacities *caps, const char *data, const study_bench_case *c, int quick,
                          sim_err *err)
{
    int decode = c->workload == STUDY_BENCH_PD ? c->replicas : 0;
    for (int k = 0; k < caps->n; k++)
        if (strcmp(caps->name[k], c->policy) == 0 && caps->decode[k] == decode &&
            strcmp(caps->params[k] ? caps->params[k] : "", c->params ? c->params : "") == 0 &&
            strcmp(caps->setup[k] ? caps->setup[k] : "", c->setup ? c->setup : "") == 0)
            return caps->cap[k];
    double cap = study_bench_capacity(data, c, quick, err);
    if (cap > 0 && caps->n < 16) {
        caps->name[caps->n] = c->policy;
        caps->params[caps->n] = c->params;
        caps->setup[caps->n] = c->setup;
        caps->decode[caps->n] = decode;
        caps->cap[caps->n++] = cap;
    }
    return cap;
}

static void print_row(const study_bench_case *c, const study_bench_out *o)
{
    if (!o->ok)
        printf("%-15s failed: %s\n", c->name, o->err);
    else if (c->workload == STUDY_BENCH_RECOMMEND)
        printf("%-15s %10.0f %8.2f %11s %13.0f %14s %14s %9.1f  (a recommend search: %.0f runs)\n",
               c->name, o->requests, o->wall, "-", o->requests / o->wall, "-", "-", o->peak_mb,
               o->runs);
    else if (c->store == STUDY_BENCH_ROWS)
        printf("%-15s %10.0f %8s %11s %13.0f %14s %14s %9.1f  (request rows/s into SQLite)\n",
               c->name, o->requests, "-", "-", o->rows_per_s, "-", "-", o->peak_mb);
    else
        printf("%-15s %10.0f %8.2f %11.2f %13.0f %14.0f %14.0f %9.1f\n", c->name, o->requests,
               o->wall, o->rate, o->requests / o->wall, o->iterations / o->wall,
               o->events / o->wall, o->peak_mb);
    fflush(stdout);
}

static int check_cases(const char *only)
{
    int n;
    const study_bench_case *cases = study_bench_cases(&n);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", only ? only : "");
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= strcmp(cases[i].name, t) == 0;
        if (!found) {
            fprintf(stderr, "llmsim bench: unknown case '%s'; valid:", t);
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %s", cases[i].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    return CLI_GO;
}

/* The table's heading: the setting, the machine, the columns, the baseline process's memory. */
static void print_head(int quick, const char *data)
{
    char hw[256];
    printf("llmsim bench%s: llama-3-8b on h100-sxm (roofline), lengths %s, Poisson arrivals at "
           "90%% of each policy's burst capacity\nmachine: %s\n",
           quick ? " --quick" : "",
           study_bench_have_table(data) ? "sampled from the ShareGPT table" : "lognormal fit",
           study_hardware(hw, sizeof hw));
    printf("%-15s %10s %8s %11s %13s %14s %14s %9s\n", "case", "requests", "wall_s", "rate_req/s",
           "req/wall_s", "iter/wall_s", "events/wall_s", "peak_MB");
    printf("%-15s %10s %8s %11s %13s %14s %14s %9.1f  (a process that runs nothing)\n", "baseline",
           "-", "-", "-", "-", "-", "-", study_bench_baseline_mb());
    fflush(stdout);
}

/* Runs the cases `only` selects (NULL: all), a row each. 0, or 1 when one failed. */
static int run_cases(int quick, const char *data, const char *only)
{
    char tmpdb[64];
    snprintf(tmpdb, sizeof tmpdb, "/tmp/llmsim-bench-%ld.db", (long)getpid());
    int n, failed = 0;
    const study_bench_case *cases = study_bench_cases(&n);
    capacities caps = {{0}, {0}, {0}, {0}, {0}, 0};
    for (int i = 0; i < n; i++) {
        const study_bench_case *bc = &cases[i];
        if (!selected(only, bc->name))
            continue;
        sim_err err = {{0}};
        int needs_cap = bc->policy &&
                        (bc->workload == STUDY_BENCH_POISSON || bc->workload == STUDY_BENCH_SPEC ||
                         bc->workload == STUDY_BENCH_PD || bc->workload == STUDY_BENCH_CLASSES);
        double cap = needs_cap ? capacity_of(&caps, data, bc, quick, &err) : 0;
        if (needs_cap && cap <= 0)
            return cli_fail("bench", &err);
        study_bench_out o;
        study_bench_run(bc, quick, cap, data, tmpdb, &o);
        print_row(bc, &o);
        failed += !o.ok;
    }
    return failed ? 1 : 0;
}

int cmd_bench(int argc, char **argv)
{
    int quick = 0;
    const char *data = study_shared_data(), *only = NULL;
    const cli_option opts[] = {
        {"--quick", NULL, CLI_FLAG, &quick, "run a tenth of each case", NULL, 0, 0, NULL, NULL},
        {"--data", "DIR", CLI_STRING, &data, "the shared data folder (the ShareGPT length table)",
         "the one beside the source tree", 0, 0, NULL, NULL},
        {"--cases", "A,B,...", CLI_STRING, &only, "run only these cases", "all", 0, 0, NULL, NULL},
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&bench_cmd, opts, &c, argc, argv, NULL, &npos);
    if (st == CLI_GO)
        st = check_cases(only);
    if (st != CLI_GO)
        return st;
    print_head(quick, data);
    return run_cases(quick, data, only);
}
