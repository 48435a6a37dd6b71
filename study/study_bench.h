/*
 * study_bench.h: how fast the simulator is: named cases, each run in its own process so its
 * peak resident memory is its own.
 *
 * Workload: Llama-3-8B on one H100 SXM (a case's setup may name another model, GPU and layout:
 * DeepSeek-V3 in fp8 on 8 x H200 as TP8), lengths sampled jointly from the ShareGPT length table
 * when it is found (DATA/traces/etalon-processed/...), else lognormals fitted to that table,
 * Poisson arrivals at 90% of the policy's capacity; capacity is the request throughput of a
 * burst of 20,000 such requests (2,000 when quick) through the same policy, measured in a child
 * process. Runs store summaries only, so the figures measure the simulator; vllm-v0-stored stores
 * every request and iteration, and sqlite-rows writes request rows alone through the run writer.
 * Two cases bring their own workloads (study_bench_workload): vllm (V1, prefix caching) on the
 * Mooncake trace, and a million turns of multi-turn sessions; a third decodes speculatively. The
 * pd case runs the ShareGPT workload disaggregated (vllm, one prefill and two decode H100s, the KV
 * over RDMA).
 * Static batching runs with batch_size 64 (its throughput grows with the batch). Quick runs a
 * tenth of each case.
 */
#ifndef STUDY_BENCH_H
#define STUDY_BENCH_H

#include <stdint.h>

#include "sim.h"

typedef enum study_bench_store {
    STUDY_BENCH_SUMMARY = 0, /* summary only */
    STUDY_BENCH_STORED,      /* every request and iteration stored */
    STUDY_BENCH_ROWS         /* request rows straight into SQLite, no simulation */
} study_bench_store;

/* What a case's requests are: ShareGPT lengths at 90% of the policy's burst capacity, or a
 * workload of its own (no capacity is measured for those). */
typedef enum study_bench_workload {
    STUDY_BENCH_POISSON = 0,
    STUDY_BENCH_MOONCAKE, /* the Mooncake conversation trace (its first `requests` rows) with its
                             hash_ids, Qwen2.5-7B on two H100s behind prefix_affinity, at its
                             own pace */
    STUDY_BENCH_MOONCAKE_WEIGHTED, /* the same trace behind weighted (llm-d's scorers: a
                                      router-side LRU prefix index, 256 blocks a prompt) */
    STUDY_BENCH_MOONCAKE_KV,       /* the same trace behind kv_router (Dynamo: every prompt block
                                      against the blocks in flight, hooks at first token and end) */
    STUDY_BENCH_SESSIONS,          /* closed-loop chat sessions sharing a system prompt */
    STUDY_BENCH_SPEC,      /* the Poisson workload at half the policy's burst capacity, decoded
                              speculatively (an EAGLE-3 head, 3 draft tokens, acceptance length
                              2.5 drawn in 8 classes) */
    STUDY_BENCH_PD,        /* ShareGPT lengths on a disaggregated deployment: one prefill replica
                              and `replicas` decode replicas, Poisson arrivals at 90% of that
                              deployment's burst capacity */
    STUDY_BENCH_FLEET,     /* a 24-hour day (ServeGen's hourly rates / 8, as
                              scenarios/fleet_diurnal.yaml) served by an autoscaled fleet of up
                              to `replicas` Llama-3-8B replicas on L4s, at its own pace */
    STUDY_BENCH_RECOMMEND, /* llmsim recommend's whole search for the case's model and GPU
                              within a budget of 8 GPUs, 1,000 prompt and 500 output tokens,
                              p99 TTFT 2 s and p99 TPOT 50 ms; `requests` per run */
    STUDY_BENCH_CLASSES,   /* the Poisson workload in two request classes (30% priority 0, 70%
                              priority 1), for the policies' priority scheduling */
    STUDY_BENCH_HYBRID,    /* the sessions workload on Qwen3.5-397B-A17B (its config from the
                              shared data) on 8 H200s, prefix caching by mamba_cache_mode align */
    STUDY_BENCH_FLEET_PD   /* the same day (ServeGen's hourly rates / 4) of long prompts and
                              answers on Llama-3-8B H100s, prefill (1 GPU) and decode (2 GPUs)
                              pools each autoscaled by the planner up to `replicas`
                              (scenarios/fleet_pd_diurnal.yaml's deployment), at its own pace */
} study_bench_workload;

typedef struct study_bench_case {
    const char *name, *policy;
    int64_t requests; /* full size; quick divides by 10 */
    int replicas;
    study_bench_store store;
    study_bench_workload workload;
    const char *setup;  /* scenario lines naming model, GPU and layout; NULL = Llama-3-8B on
                           one H100 SXM (a case with its own workload: lines added to its
                           scenario) */
    const char *params; /* the policy's settings as flow-map entries ("batch_size: 64"), or
                           NULL */
} study_bench_case;

/* The cases, in the order they are run; *n gets their count. */
const study_bench_case *study_bench_cases(int *n);

typedef struct study_bench_out {
    double wall, requests, iterations, events, rows_per_s, rate;
    double peak_mb; /* peak resident memory of the case's process */
    double runs;    /* a recommend case's simulations (requests: theirs, summed) */
    int ok;
    char err[1024];
} study_bench_out;

/* Whether the ShareGPT length table is found under data. */
int study_bench_have_table(const char *data);
/* Peak resident memory of a process that runs nothing (the binary's mapped libraries). */
double study_bench_baseline_mb(void);
/* The burst capacity (requests/s) of case c's policy on its setup (a disaggregated case's: one
 * prefill and c->replicas decode replicas), measured in a child process; -1 with err. */
double study_bench_capacity(const char *data, const study_bench_case *c, int quick, sim_err *err);
/* Runs case c in a child process at arrival rate 0.9 x cap x replicas (cap unused for the
 * sqlite-rows case), using tmpdb for the cases that store. Fills *out (out->ok = 0 with out->err
 * on failure). */
void study_bench_run(const study_bench_case *c, int quick, double cap, const char *data,
                     const char *tmpdb, study_bench_out *out);

#endif
