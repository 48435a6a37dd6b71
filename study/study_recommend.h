/*
 * study_recommend.h: a deployment recommended for a model, GPU types, a GPU budget or a target
 * rate, a workload and SLOs: the Pareto front of output tokens/s per GPU against tokens/s per
 * user, each point a layout, an engine and its settings with the real engine's launch command.
 *
 * The search (study/recommend.c):
 *  1. candidates: for each GPU type, engine (vllm, sglang, trtllm by default), unit size of 1,
 *     2, 4 or 8 GPUs within the budget: tensor parallel, and for MoE models expert parallel
 *     and attention data parallel; tensor parallel x pipeline parallel within the node, and
 *     past it units of 2 or 4 nodes, TP 8 in each node and a pipeline stage a node (aggregated
 *     only: pipelines with prefill and decode pools are not modelled); aggregated, and
 *     disaggregated prefill:decode splits of one node; max_num_seqs and the token budget (each
 *     engine's names); the KV dtype (the checkpoint's, fp8).
 *  2. pruned by memory fit (the weights and a sequence's KV must fit the unit) and roofline
 *     bounds (TPOT at batch 1, TTFT of the longest prompts alone, against the SLOs);
 *  3. screened analytically: steady-state decode steps priced by the scenario's cost model at
 *     batch sizes up to the seats and the KV cache, each giving tokens/s per GPU and per user;
 *  4. the best candidates are simulated: a capacity search each (the unloaded check, the rate
 *     search, intervals and seeds; every candidate on the same seeds, so comparisons are
 *     paired), then 0.9, 0.75, 0.5 and 0.25 of the rate found;
 *  5. the Pareto front of the simulated points that met the SLOs, each confirmed by a run at
 *     fresh seeds; a point that fails confirmation leaves the front.
 * Minimising cost (cap.minimise = STUDY_MIN_COST), tokens/s per GPU becomes output tokens per
 * USD (each unit's GPUs at their price per GPU-hour, eng_fleet_gpu_price) in the screen's
 * ranking, the front and the pick, so GPU types of different prices compare by what they cost;
 * a GPU type without a price is refused.
 * Every simulated probe is stored as a capacity search (choices named by candidate), so `llmsim
 * plot front --capacity ID` and `llmsim report --capacity ID` draw it again.
 */
#ifndef STUDY_RECOMMEND_H
#define STUDY_RECOMMEND_H

#include "study_capacity.h"

#define STUDY_REC_MAX_GPU_KINDS 8
#define STUDY_REC_MAX_ENGINES 4

typedef struct study_rec_layout {
    int tp, ep, dp; /* GPUs of a stage = tp x dp */
    int pp;         /* pipeline stages (>= 1): GPUs = tp x dp x pp */
} study_rec_layout;

/* The layouts past one node the search tries (and `capacity` falls back on where the model does
 * not fit the scenario's layout): 2 and 4 nodes, tensor parallel 8 in each node and a pipeline
 * stage a node, those with no more stages than `layers`, into out[max]; their count. */
int study_rec_pipelines(int layers, study_rec_layout *out, int max);
/* Layout l's overrides (tensor_parallel, expert_parallel, data_parallel_attention,
 * pipeline_parallel when over 1) appended to ch's. */
void study_rec_layout_sets(const study_rec_layout *l, study_choice *ch);

typedef enum study_rec_prune {
    STUDY_REC_KEPT = 0,
    STUDY_REC_FIT,       /* the weights (or one request's KV) do not fit, or the layout does not
                            divide the model */
    STUDY_REC_ROOFLINE,  /* a roofline bound misses an SLO (TPOT at batch 1, TTFT alone) */
    STUDY_REC_SCREENED,  /* the analytic screen found better candidates */
    STUDY_REC_SIMULATED, /* simulated */
} study_rec_prune;

typedef struct study_rec_cand {
    char gpu[32];
    char engine[16];
    int disagg;                /* 0: aggregated */
    study_rec_layout lay, dec; /* the replica's (disaggregated: prefill's), the decode pool's */
    int nprefill, ndecode;     /* disaggregated: replicas per pool in one unit */
    int seats, tokens;         /* max_num_seqs and the token budget (engine's keys) */
    int kv_fp8;                /* 1: fp8 KV cache; 0: the checkpoint's */
    int chunked;               /* trtllm: chunked prefill on (its budget is below the prompts) */
    int gpus;                  /* per unit */
    double usd_h;              /* one unit's GPUs per hour at their price (0: no price) */
    study_choice choice;       /* its overrides, its name */
    study_rec_prune state;
    char why[200];                /* why pruned (fit, roofline) */
    double a_tps_gpu, a_tps_user; /* the screen's best point within the SLOs */
    double a_pts[24][2];          /* the screen's points within the SLOs: tokens/s per GPU, per
                                     user */
    int a_npts;
    double a_score;   /* the most any of its points reaches of the analytic front at its tokens/s
                         per user (1: on the front) */
    double a_x;       /* a_tps_gpu as the objective weighs it (study_rec_point.x) */
    study_answer ans; /* the capacity search's answer (simulated ones) */
} study_rec_cand;

typedef struct study_rec_point {
    int cand;
    double rate;     /* requests/s per unit */
    double tps_gpu;  /* output tokens/s per GPU */
    double tps_user; /* output tokens/s each user sees: 1000 / mean TPOT */
    double tok_usd;  /* output tokens per USD of its unit's GPUs at their price */
    double x;        /* the front's other axis: tps_gpu, or tok_usd when minimising cost */
    study_trial t;
    int front;     /* on the Pareto front (confirmed) */
    int confirmed; /* -1 not tried, 0 failed, 1 met the SLOs at fresh seeds */
    study_trial confirm;
    int units;         /* units the budget holds, or the target rate needs */
    double total_rate; /* requests/s of those units */
    double usd_h;      /* those units' GPUs per hour at their price */
} study_rec_point;

typedef struct study_recommend {
    study_capacity cap; /* the scenario (file or text), --set, SLOs, seeds, the store */
    const char *gpus[STUDY_REC_MAX_GPU_KINDS];
    int ngpus;
    const char *engines[STUDY_REC_MAX_ENGINES];
    int nengines;
    const char *model_id; /* the model as the user named it (for launch commands) */
    int budget;           /* GPUs available; 0: none (the target rate sizes the deployment) */
    double target;        /* requests/s; 0: none */
    int top;              /* candidates simulated (the screen's best); 0: 8 */
    int exhaustive;       /* 1: simulate every candidate that fits, no screen */
    int no_disagg;        /* 1: aggregated only */
    int no_knobs;         /* 1: each engine's default seats and token budget only */
    /* results (owned; study_recommend_free) */
    study_rec_cand *c;
    int nc;
    study_rec_point *p;
    int np;
    int n_fit, n_roofline, n_screened, n_sim, n_unconfirmed;
    int n_refined; /* of n_sim: the best's siblings in seats and budget */
    /* the point recommended (-1: none): with a target rate the fewest GPUs (cap.minimise ==
     * STUDY_MIN_COST: the lowest USD per hour), checked by
     * simulating its units as a cluster at that rate (one unit added at a time, up to three,
     * until it meets the SLOs: cluster_ok); with a budget the most requests/s; else the most
     * tokens/s per GPU (minimising cost: the most output tokens per USD) */
    int best;
    int cluster_ok;  /* -1: no target rate; 0: no cluster tried met the SLOs; 1: it did */
    int units_added; /* units the cluster check added to the recommended point */
    study_trial cluster;
    double isl, osl, isl_p99; /* the workload's mean prompt and output, the prompts' p99 */
    char launch_model[256];   /* what the launch commands name: the id given, a catalog model's
                                 Hugging Face id, or its name */
    double screen_s, sim_s;   /* wall seconds of each stage */
    /* told of each stage and each simulated candidate (may be NULL) */
    void (*note)(void *arg, const char *line);
    void *note_arg;
} study_recommend;

/* Runs the search (see the top of this file). r->cap must be set up as for a capacity search
 * (file or text, sets, SLOs; db and search_id from study_capacity_begin when storing). 0, or -1
 * with err (a scenario that does not load, no GPU type). Free with study_recommend_free. */
int study_recommend_run(study_recommend *r, sim_err *err);
void study_recommend_free(study_recommend *r);
/* The validated error of candidate `cand`'s engine, GPU and layout, as study_verrors_describe
 * words it (the shipped validation/errors.csv), into buf; "" when its scenario does not load.
 * Returns buf. */
const char *study_recommend_validated(study_recommend *r, int cand, char *buf, size_t len);

/* The launch command of candidate c's real engine for model id `model` into buf (len), one
 * line per process kind ("prefill: ...", "decode: ..." when disaggregated), flags from each
 * engine's documented CLI (see launch.c). Returns buf. */
const char *study_launch(const study_rec_cand *c, const char *model, char *buf, size_t len);

/* The flags study_launch may emit for engine ("vllm", "sglang", "trtllm"), NULL-terminated;
 * NULL for another engine. */
const char *const *study_launch_flags(const char *engine);

#endif
