/*
 * scenario.h: scenario files (YAML): loading, validation, overrides, and the workload source.
 *
 * A scenario is read into a YAML tree, `--set KEY=VALUE` overrides are applied to the tree, and
 * the tree is converted to a scn_scenario with every key, type and range checked. Errors name
 * the file, the line and the key, and list the valid choices where there is a list. Model and
 * GPU names are resolved through a resolver the caller supplies (the catalogs live in
 * calibration/, which this folder may not use).
 */
#ifndef SCN_SCENARIO_H
#define SCN_SCENARIO_H

#include <stdint.h>

#include "sim.h"
#include "engine.h"

/* How names in a scenario become models and GPUs. Each returns 0, or -1 with a message in why
 * (for an unknown name: the valid choices). `base_dir` is the scenario's folder, for relative
 * paths to config.json files. */
typedef struct scn_resolver {
    int (*model)(void *st, const char *name, const char *base_dir, eng_model *out, char *why,
                 size_t len);
    int (*gpu)(void *st, const char *name, eng_gpu *out, char *why, size_t len);
    void *st;
    /* A speculative-decoding acceptance curve's file: a name in the shared curves folder, or a
     * path (relative to base_dir); NULL when the caller knows no curves. */
    int (*curve)(void *st, const char *name, const char *base_dir, char *path, size_t pathlen,
                 char *why, size_t len);
} scn_resolver;

typedef enum scn_arrival_kind {
    SCN_ARR_POISSON = 0,
    SCN_ARR_GAMMA,
    SCN_ARR_CONSTANT,
    SCN_ARR_BURST,
    SCN_ARR_CLOSED,
    SCN_ARR_SCHEDULE,
    SCN_ARR_COUNT
} scn_arrival_kind;

typedef enum scn_dist_kind {
    SCN_DIST_FIXED = 0,
    SCN_DIST_UNIFORM,
    SCN_DIST_NORMAL,
    SCN_DIST_LOGNORMAL,
    SCN_DIST_ZIPF,
    SCN_DIST_EMPIRICAL,
    SCN_DIST_COUNT
} scn_dist_kind;

typedef struct scn_dist {
    scn_dist_kind kind;
    double value;     /* fixed */
    double min, max;  /* uniform / zipf bounds; normal: truncation; others: clipping (0 = none) */
    double mean, std; /* normal; lognormal uses mean (tokens) and sigma */
    double sigma;
    double s;       /* zipf exponent */
    char path[512]; /* empirical: trace file (resolved against the scenario folder) */
    char format[16];
    char column[64];
} scn_dist;

/* The latest simulated time a request may arrive at, in seconds: 10^9 s (31.7 years), well
 * inside int64 nanoseconds (292 years), so that the run can finish after its last arrival.
 * A workload whose arrivals go past it is refused (at load time when its nominal span already
 * does, otherwise by the source when an arrival does). */
#define SCN_HORIZON_S 1e9

#define SCN_MAX_SCHEDULE 64
typedef struct scn_arrival {
    scn_arrival_kind kind;
    double rate;          /* requests/s (poisson, gamma, constant) */
    double cv;            /* gamma: coefficient of variation of the gaps */
    int32_t concurrency;  /* closed */
    double think_time_ms; /* closed */
    double ramp_up_s;     /* closed: client i (of N) starts at i x ramp_up_s / N; 0 = all at 0 */
    int32_t nsteps;       /* schedule: piecewise-constant rate */
    double step_start_s[SCN_MAX_SCHEDULE];
    double step_rate[SCN_MAX_SCHEDULE];
} scn_arrival;

typedef struct scn_trace {
    int present;
    char path[512];                                    /* resolved against the scenario folder */
    char format[16];                                   /* azure, mooncake, vidur, csv */
    char col_time[64], col_prompt[64], col_output[64]; /* csv column mapping */
    double time_unit_s;         /* csv: seconds per unit of the time column */
    double time_scale;          /* arrivals multiplied by this (2 = twice as slow); 1 by default */
    double rate;                /* rescale to this mean rate; 0 = native */
    double start_s, duration_s; /* window; duration 0 = to the end */
    int64_t limit;              /* first N requests; 0 = all */
    int skip_bad_rows;          /* on_bad_row: skip */
    int lengths_only;           /* 1: ignore the time column; arrivals come from the process */
    int32_t hash_block;         /* mooncake: tokens per hash_ids entry (512); 0 = ignore them */
    int64_t repeat;             /* the window replayed this many times back to back; 1 (0: 1) */
} scn_trace;

/* Joint (prompt, output) pairs sampled with replacement from a trace's rows, which keeps their
 * correlation; when present it takes the place of prompt_tokens and output_tokens. */
typedef struct scn_lengths {
    int present;
    char path[512];                      /* resolved against the scenario folder */
    char format[16];                     /* azure, mooncake, vidur, csv */
    char col_prompt[64], col_output[64]; /* "" = the format's columns (csv: required) */
} scn_lengths;

/* A prefix shared by groups of requests (a system prompt, a few-shot template): each request
 * draws one of `groups` prefixes of `tokens` tokens and puts its drawn prompt after it. */
typedef struct scn_prefix {
    int present;
    int32_t tokens;
    int32_t groups;
} scn_prefix;

/* Multi-turn sessions: turn k's prompt is everything before it (the system prompt, every
 * earlier prompt and answer) plus new user tokens (chat) or tool-output tokens (agent, after
 * the first turn), sent a think time after turn k - 1's answer. Sessions start by the arrival
 * process (closed: `concurrency` sessions at a time; poisson, gamma, constant: new sessions per
 * second). A session ends after its turns, when a turn is rejected, or when its next turn would
 * not fit the model's context. */
typedef struct scn_sessions {
    int present;
    scn_dist turns;        /* turns per session, >= 1 */
    scn_dist user;         /* new user tokens per turn */
    scn_dist tool;         /* agent: tool-output tokens per turn after the first */
    scn_dist think;        /* ms between an answer and the next turn (dist), when think_fixed < 0 */
    double think_fixed_ms; /* a fixed think time (may be 0); < 0: drawn from think */
    int32_t system_tokens; /* a system prompt every session starts with (shared), 0 = none */
    int agent;             /* 1: turns after the first add tool output, not user tokens */
} scn_sessions;

typedef struct scn_workload {
    int64_t num_requests; /* 0 with a trace = every row; with sessions: turns in all */
    scn_arrival arrival;
    scn_dist prompt, output;
    scn_lengths lengths;
    scn_trace trace;
    scn_prefix prefix;
    scn_sessions sessions;
} scn_workload;

typedef struct scn_slo {
    double ttft_ms, tpot_ms, e2e_ms; /* 0 = none */
} scn_slo;

/* What the cost model takes from a scenario beyond the model, GPU and layout. */
typedef struct scn_cost {
    double moe_skew;        /* Zipf exponent of expert popularity; 0 = balanced routing */
    char engine[16];        /* whose kernels price the pass: vllm (default), sglang, trtllm */
    double eager_launch_ns; /* host time per kernel of a pass run without a CUDA graph, from the
                               `engine:` preset (0: the cost model's own figure) */
    uint32_t act_quant[ENG_AQ_SCHEMES]; /* the fp8 GEMM inputs the `engine:` preset quantizes by
                                           a kernel of their own (ENG_AQ_*; 0: none) */
} scn_cost;

typedef struct scn_scenario {
    char path[512];
    char *text; /* what produced the run: comment lines naming the file and each --set, then
                   the YAML tree re-emitted with the overrides applied (comments dropped);
                   loading it again gives the same scenario */
    char name[64];
    uint64_t seed;
    char model_name[512];
    char gpu_name[32];
    char profile[64];  /* "" = built-in roofline */
    eng_config engine; /* model, GPU, memory, scheduler, cpu overhead, replicas */
    scn_workload workload;
    scn_slo slo;
    scn_cost cost; /* cost_model: {moe_skew, engine} */
    /* profile: {name, borrow_from: GPU}: the GPU the profile was measured on, when it is not
     * the scenario's ("" = the profile must be the scenario's GPU's) */
    char profile_borrow[32];
    char notes[1024]; /* remarks for the user (keys only another policy uses), one per line;
                         the caller decides whether to print them */
} scn_scenario;

/* Loads and validates path, applying overrides ("key.path=value") in order. Returns 0, or -1
 * with err naming the file, line and key. The caller frees *out with scn_free (also after a
 * failure). */
int scn_load(const char *path, const char *const *overrides, int noverrides,
             const scn_resolver *res, scn_scenario *out, sim_err *err);
/* A scenario file's text (NUL-terminated; the caller frees it), or NULL with err naming the
 * file (cannot be opened or read, binary). A file past the size limit is cut short there, and
 * scn_load_text then refuses it. */
char *scn_read_text(const char *path, sim_err *err);
/* The same from text in memory; `name` stands for the file in messages (and its folder
 * anchors the scenario's relative paths). */
int scn_load_text(const char *name, const char *text, const char *const *overrides, int noverrides,
                  const scn_resolver *res, scn_scenario *out, sim_err *err);
void scn_free(scn_scenario *s);

/* The settings table (keys.h) of a scenario's top level, whose rows lead to every section's:
 * what `llmsim list keys` and docs/keys.md print. Static. */
const eng_key *scn_keys(void);

/* Tables a workload reads whole (an empirical length column, joint length pairs), kept so
 * that one process running many workloads (a sweep worker) reads each file once; a table is
 * read again when its file changes (device, inode, size or modification time). The cache owns
 * the tables and must outlive every source made with it. */
typedef struct scn_cache scn_cache;
scn_cache *scn_cache_new(void);
void scn_cache_free(scn_cache *c);

/* The workload source for the engine: arrivals and lengths drawn from the scenario's
 * distributions on the run's random streams, or read from its trace as the run goes. */
typedef struct scn_source scn_source;
scn_source *scn_source_new(const scn_scenario *s, uint64_t seed, sim_err *err);
/* The same, with whole-file tables taken from (and kept in) cache; cache may be NULL. */
scn_source *scn_source_new_cached(const scn_scenario *s, uint64_t seed, scn_cache *cache,
                                  sim_err *err);
const eng_source_ops *scn_source_ops(void);
void scn_source_free(scn_source *src);
/* Requests whose length was clipped (to the distribution's bounds or the model's context). */
int64_t scn_source_clipped(const scn_source *src);
/* Trace rows skipped as bad (on_bad_row: skip). */
int64_t scn_source_skipped(const scn_source *src);
/* Arrivals handed out so far. */
int64_t scn_source_emitted(const scn_source *src);

#endif
