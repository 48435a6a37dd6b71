/*
 * recommend.c: the deployment search of study_recommend.h: candidates, memory fit and
 * roofline pruning, the analytic screen, simulation of the best with paired seeds, and the
 * confirmed Pareto front.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "study_recommend.h"
#include "study_validate.h"

#define MAX_UNIT 8     /* GPUs of one node's NVLink domain: a unit's, but for pipelines */
#define MAX_PP_NODES 4 /* nodes a pipelined unit spans at most */
#define DEFAULT_TOP 8
#define CONFIRM_SEED_OFFSET 1000 /* the confirming runs' seeds: base + this, + 1, ... */

static void say(const study_recommend *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const study_recommend *r, const char *fmt, ...)
{
    if (!r->note)
        return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    r->note(r->note_arg, line);
}

/* ---- the workload: mean prompt and output, the prompts' p99 ---- */

static int workload_stats(study_recommend *r, sim_err *err)
{
    scn_scenario scn;
    if (study_capacity_load(&r->cap, &scn, err) != 0) {
        scn_free(&scn);
        return -1;
    }
    scn_source *src = scn_source_new(&scn, r->cap.seed_given ? r->cap.seed : scn.seed, err);
    int rc = src ? 0 : -1;
    sim_samples prompts;
    sim_samples_init(&prompts);
    double out = 0;
    eng_arrival a;
    int64_t now = 0;
    while (rc == 0 && sim_samples_count(&prompts) < 4000) {
        int st = scn_source_ops()->next(src, now, &a, err);
        if (st == ENG_SRC_ERROR)
            rc = -1;
        if (st != ENG_SRC_OK)
            break;
        now = a.t;
        sim_samples_add(&prompts, a.prompt);
        out += a.output;
    }
    double n = sim_samples_count(&prompts);
    if (rc == 0 && n == 0)
        rc = sim_errf(err, "%s: the workload yields no request to size the search by", r->cap.file);
    if (rc == 0) {
        const char *id = cal_model_hf_id(scn.engine.model.name);
        snprintf(r->launch_model, sizeof r->launch_model, "%s",
                 r->model_id && strchr(r->model_id, '/') ? r->model_id
                 : id                                    ? id
                                                         : scn.engine.model.name);
        r->isl = sim_samples_mean(&prompts);
        r->osl = out / n;
        r->isl_p99 = sim_samples_percentile(&prompts, 99);
    }
    sim_samples_free(&prompts);
    scn_source_free(src);
    scn_free(&scn);
    return rc;
}

/* ---- candidates ---- */

/* Each engine's names for the seats and the token budget (llmsim's scheduler keys). */
static void knob_keys(const char *engine, const char **seats, const char **tokens)
{
    if (strcmp(engine, "sglang") == 0) {
        *seats = "max_running_requests";
        *tokens = "chunked_prefill_size";
    } else if (strcmp(engine, "trtllm") == 0) {
        *seats = "max_batch_size";
        *tokens = "max_num_tokens";
    } else {
        *seats = "max_num_seqs";
        *tokens = "max_num_batched_tokens";
    }
}

static int add_set(study_choice *ch, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_set(study_choice *ch, const char *fmt, ...)
{
    if (ch->nsets == STUDY_CHOICE_SETS)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ch->set[ch->nsets++], sizeof ch->set[0], fmt, ap);
    va_end(ap);
    return 0;
}

static const char *layout_name(const study_rec_layout *l, char *buf, size_t len)
{
    if (l->dp > 1)
        snprintf(buf, len, "dp%d%s", l->dp, l->ep > 1 ? "ep" : "");
    else if (l->pp > 1)
        snprintf(buf, len, "tp%dpp%d", l->tp, l->pp);
    else
        snprintf(buf, len, "tp%d%s", l->tp, l->ep > 1 ? "ep" : "");
    return buf;
}

/* " s128 t2048" (seats, token budget; each only when set) into buf. */
static const char *knobs_name(const study_rec_cand *k, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    if (k->seats)
        n += (size_t)snprintf(buf, len, " s%d", k->seats);
    if (k->tokens && n < len)
        snprintf(buf + n, len - n, " t%d%s", k->tokens, k->chunked ? "c" : "");
    return buf;
}

/* The choice (overrides and name) of candidate k. */
static void make_choice(study_rec_cand *k)
{
    study_choice *ch = &k->choice;
    const char *seats, *tokens;
    char a[32], b[32];
    memset(ch, 0, sizeof *ch);
    knob_keys(k->engine, &seats, &tokens);
    add_set(ch, "engine=%s", k->engine);
    add_set(ch, "gpu=%s", k->gpu);
    if (k->kv_fp8)
        add_set(ch, "kv_dtype=fp8");
    if (!k->disagg) {
        study_rec_layout_sets(&k->lay, ch);
        if (k->seats)
            add_set(ch, "scheduler.%s=%d", seats, k->seats);
        if (k->tokens)
            add_set(ch, "scheduler.%s=%d", tokens, k->tokens);
        if (k->chunked)
            add_set(ch, "scheduler.enable_chunked_context=true");
        snprintf(ch->name, sizeof ch->name, "%s %s %s%s%s", k->gpu, k->engine,
                 layout_name(&k->lay, a, sizeof a), knobs_name(k, b, sizeof b),
                 k->kv_fp8 ? " kv8" : "");
        return;
    }
    /* MODEL: both pools on one node's NVLink (the unit is at most MAX_UNIT GPUs); the KV moves
     * after the prefill (vLLM NixlConnector), layer by layer with SGLang (Mooncake) */
    add_set(ch,
            "prefill={replicas: %d, tensor_parallel: %d, expert_parallel: %d, "
            "data_parallel_attention: %d}",
            k->nprefill, k->lay.tp, k->lay.ep, k->lay.dp);
    char sched[96] = "";
    if (k->seats)
        snprintf(sched, sizeof sched, ", scheduler: {%s: %d}", seats, k->seats);
    add_set(ch,
            "decode={replicas: %d, tensor_parallel: %d, expert_parallel: %d, "
            "data_parallel_attention: %d%s}",
            k->ndecode, k->dec.tp, k->dec.ep, k->dec.dp, sched);
    add_set(ch, "kv_transfer={link: nvlink, discipline: %s}",
            strcmp(k->engine, "sglang") == 0 ? "per_chunk" : "after_prefill");
    char c[32];
    snprintf(ch->name, sizeof ch->name, "%s %s %dx%s:%dx%s%s%s", k->gpu, k->engine, k->nprefill,
             layout_name(&k->lay, a, sizeof a), k->ndecode, layout_name(&k->dec, b, sizeof b),
             knobs_name(k, c, sizeof c), k->kv_fp8 ? " kv8" : "");
}

typedef struct cands {
    study_rec_cand *v;
    int n, cap;
} cands;

static study_rec_cand *push(cands *c)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->v = sim_xrealloc(c->v, (size_t)c->cap * sizeof *c->v);
    }
    study_rec_cand *k = &c->v[c->n++];
    memset(k, 0, sizeof *k);
    return k;
}

#define MAX_LAYOUTS 8

/* The layouts of n GPUs (at most MAX_LAYOUTS): TP; for MoE models, TP with EP, and attention
 * DP with EP; with `layers` > 0 (pipelines allowed), TP x PP for each PP degree that leaves TP
 * at least 1 and a layer a stage. Past one node (n > MAX_UNIT) only pipelines, TP 8 a stage.
 * MODEL: vLLM's multi-node practice (docs, "Distributed inference and serving": the tensor
 * parallel size is the GPUs in each node, the pipeline parallel size the number of nodes); the
 * stages hold ceil(layers / PP) layers at most, as vLLM's get_pp_indices splits them
 * (engine/pipeline.c). */
static int layouts(int n, int moe, int layers, study_rec_layout *out)
{
    int k = 0;
    if (n > MAX_UNIT) {
        if (layers >= n / MAX_UNIT)
            out[k++] = (study_rec_layout){MAX_UNIT, 1, 1, n / MAX_UNIT};
        return k;
    }
    out[k++] = (study_rec_layout){n, 1, 1, 1};
    if (moe && n > 1) {
        out[k++] = (study_rec_layout){n, n, 1, 1};
        out[k++] = (study_rec_layout){1, n, n, 1};
    }
    for (int pp = 2; pp <= n && pp <= layers && k < MAX_LAYOUTS; pp *= 2)
        out[k++] = (study_rec_layout){n / pp, 1, 1, pp};
    return k;
}

int study_rec_pipelines(int layers, study_rec_layout *out, int max)
{
    int k = 0;
    for (int n = 2 * MAX_UNIT; n <= MAX_UNIT * MAX_PP_NODES && k < max; n *= 2)
        k += layouts(n, 0, layers, out + k); /* past one node: one layout at most */
    return k;
}

void study_rec_layout_sets(const study_rec_layout *l, study_choice *ch)
{
    add_set(ch, "tensor_parallel=%d", l->tp);
    add_set(ch, "expert_parallel=%d", l->ep);
    add_set(ch, "data_parallel_attention=%d", l->dp);
    if (l->pp > 1)
        add_set(ch, "pipeline_parallel=%d", l->pp);
}

/* The seats and token budgets searched; 0 is the engine's default (vLLM 1,024 seats and 8,192
 * tokens on large GPUs, SGLang's seats from its KV cache and 8,192 tokens, TensorRT-LLM 2,048
 * and 8,192: see the README's scheduler table). */
static const int knob_seats[] = {0, 32, 128};
static const int knob_tokens[] = {0, 2048};
#define TRTLLM_DEFAULT_TOKENS 8192 /* max_num_tokens by default (engine/sched_trtllm.c) */

static void add_aggregated(study_recommend *r, cands *c, const char *gpu, const char *engine,
                           int moe, int layers, int kv8_ok)
{
    int most = MAX_UNIT * MAX_PP_NODES;
    int max = r->budget > 0 && r->budget < most ? r->budget : most;
    for (int n = 1; n <= max; n *= 2) {
        study_rec_layout lay[MAX_LAYOUTS];
        int nl = layouts(n, moe, layers, lay);
        for (int l = 0; l < nl; l++)
            for (int s = 0; s < (r->no_knobs ? 1 : 3); s++)
                for (int t = 0; t < (r->no_knobs ? 1 : 2); t++)
                    for (int kv = 0; kv <= kv8_ok; kv++) {
                        study_rec_cand *k = push(c);
                        snprintf(k->gpu, sizeof k->gpu, "%s", gpu);
                        snprintf(k->engine, sizeof k->engine, "%s", engine);
                        k->lay = lay[l];
                        k->dec.pp = 1;
                        k->seats = r->no_knobs ? 0 : knob_seats[s];
                        k->tokens = r->no_knobs ? 0 : knob_tokens[t];
                        k->kv_fp8 = kv;
                        k->gpus = n;
                        /* MODEL: TensorRT-LLM turns away a prompt over max_num_tokens unless
                         * chunked prefill is on (--enable_chunked_prefill, off by default in
                         * tensorrt_llm/commands/serve.py): on where the budget is shorter */
                        k->chunked = strcmp(engine, "trtllm") == 0 &&
                                     (k->tokens ? k->tokens : TRTLLM_DEFAULT_TOKENS) < r->isl_p99;
                        make_choice(k);
                    }
    }
}

/* Disaggregated units of one node: P prefill replicas of one layout, D decode replicas of
 * another, P x gp + D x gd GPUs within the unit size and the budget. */
static void add_disaggregated(study_recommend *r, cands *c, const char *gpu, const char *engine,
                              int moe, int kv8_ok)
{
    int max = r->budget > 0 && r->budget < MAX_UNIT ? r->budget : MAX_UNIT;
    for (int gp = 1; gp <= max / 2; gp *= 2)
        for (int gd = 1; gd <= max / 2; gd *= 2) {
            study_rec_layout lp[MAX_LAYOUTS], ld[MAX_LAYOUTS];
            int np = layouts(gp, moe, 0, lp), nd = layouts(gd, moe, 0, ld);
            for (int P = 1; P * gp + gd <= max; P++)
                for (int D = 1; P * gp + D * gd <= max; D++)
                    for (int a = 0; a < np; a++)
                        for (int b = 0; b < nd; b++)
                            for (int s = 0; s < (r->no_knobs ? 1 : 3); s++)
                                for (int kv = 0; kv <= kv8_ok; kv++) {
                                    study_rec_cand *k = push(c);
                                    snprintf(k->gpu, sizeof k->gpu, "%s", gpu);
                                    snprintf(k->engine, sizeof k->engine, "%s", engine);
                                    k->disagg = 1;
                                    k->lay = lp[a];
                                    k->dec = ld[b];
                                    k->nprefill = P;
                                    k->ndecode = D;
                                    k->seats = r->no_knobs ? 0 : knob_seats[s];
                                    k->kv_fp8 = kv;
                                    k->gpus = P * gp + D * gd;
                                    make_choice(k);
                                }
        }
}

/* What the searched model is: MoE or not, its layers, its KV dtype. 0, or -1 with err. */
static int model_traits(study_recommend *r, int *moe, int *layers, eng_dtype *kv, sim_err *err)
{
    scn_scenario scn;
    int rc = study_capacity_load(&r->cap, &scn, err);
    *moe = rc == 0 && scn.engine.model.moe_layers > 0;
    *layers = rc == 0 ? scn.engine.model.layers : 0;
    *kv = rc == 0 ? eng_config_kv_dtype(&scn.engine) : ENG_BF16;
    scn_free(&scn);
    return rc;
}

/* GPU type g of the search, as the scenario with gpu=<it> resolves it, into *gpu; refused when
 * minimising cost and it has no price. 0, or -1 with err. */
static int searched_gpu(study_recommend *r, int g, eng_gpu *gpu, sim_err *err)
{
    scn_scenario one;
    char set[96];
    snprintf(set, sizeof set, "gpu=%s", r->gpus[g]);
    const char *sets[STUDY_MAX_SETS + 1];
    int n = 0;
    for (int i = 0; i < r->cap.nsets && n < STUDY_MAX_SETS; i++)
        sets[n++] = r->cap.sets[i];
    sets[n++] = set;
    int rc = r->cap.text ? study_load_text(r->cap.file, r->cap.text, sets, n, &one, err)
                         : study_load(r->cap.file, sets, n, &one, err);
    *gpu = one.engine.gpu;
    double price = rc == 0 ? eng_fleet_gpu_price(&one.engine.fleet, gpu) : 0;
    scn_free(&one);
    if (rc == 0 && r->cap.minimise == STUDY_MIN_COST && !(price > 0))
        rc = sim_errf(err,
                      "recommend: minimising cost: GPU %s has no list price in the catalog "
                      "(llmsim list gpus); give one with --set price.per_gpu_hour_usd=USD, "
                      "leave it out, or minimise GPUs",
                      gpu->name);
    return rc;
}

/* Every candidate on one GPU type: each engine aggregated, vLLM's and SGLang's disaggregated. */
static void add_for_gpu(study_recommend *r, cands *c, const eng_gpu *gpu, int moe, int layers,
                        eng_dtype kv)
{
    /* fp8 KV needs fp8 tensor cores to compute in; a checkpoint already fp8 has nothing to
     * gain */
    int kv8_ok = gpu->flops_fp8 > 0 && kv != ENG_FP8;
    for (int e = 0; e < r->nengines; e++) {
        add_aggregated(r, c, gpu->name, r->engines[e], moe, layers, kv8_ok);
        if (!r->no_disagg &&
            (strcmp(r->engines[e], "vllm") == 0 || strcmp(r->engines[e], "sglang") == 0))
            add_disaggregated(r, c, gpu->name, r->engines[e], moe, kv8_ok);
    }
}

static int enumerate(study_recommend *r, sim_err *err)
{
    int moe, layers;
    eng_dtype kv;
    if (model_traits(r, &moe, &layers, &kv, err) != 0)
        return -1;
    cands c = {0};
    for (int g = 0; g < r->ngpus; g++) {
        eng_gpu gpu;
        if (searched_gpu(r, g, &gpu, err) != 0) {
            free(c.v);
            return -1;
        }
        add_for_gpu(r, &c, &gpu, moe, layers, kv);
    }
    r->c = c.v;
    r->nc = c.n;
    return 0;
}

/* ---- memory fit, roofline bounds and the analytic screen ---- */

/* The time of one pass of `dec` decodes at context ctx and a prefill chunk of q tokens (over
 * no context), CPU overhead included, in seconds. */
typedef struct pricer {
    const eng_predictor *pred;
    eng_cpu_overhead cpu;
    int32_t cap, chunked;
} pricer;

static double pass_s(const pricer *p, int64_t dec, double ctx, int64_t q)
{
    eng_shape s;
    memset(&s, 0, sizeof s);
    eng_shape_set_cap(&s, p->cap, p->chunked);
    if (q > 0)
        eng_shape_add_prefill_capped(&s, q, 0);
    if (dec > 0) {
        int64_t c = (int64_t)ctx;
        int64_t capped = p->cap <= 0  ? 0
                         : p->chunked ? c % (p->cap + 1)
                                      : (c < p->cap ? c : p->cap);
        eng_shape_add_decodes_capped(&s, dec, dec * c, dec * capped);
    }
    s.emit_seqs = (int32_t)dec + (q > 0);
    double gpu = (double)p->pred->ops->iteration_ns(p->pred->st, &s) / 1e9;
    double cpu = (p->cpu.per_iteration_us + p->cpu.per_seq_us * (double)(dec + (q > 0))) / 1e6;
    return p->cpu.async ? (gpu > cpu ? gpu : cpu) : gpu + cpu;
}

/* The SLO limits the screen checks: TTFT (any percentile), TPOT (or tokens/s per user). */
static void limits(const study_capacity *c, double *ttft_ms, double *tpot_ms)
{
    *ttft_ms = *tpot_ms = INFINITY;
    for (int i = 0; i < c->nslo; i++) {
        if (strcmp(c->slo[i].what, "ttft") == 0 && c->slo[i].limit_ms < *ttft_ms)
            *ttft_ms = c->slo[i].limit_ms;
        if ((strcmp(c->slo[i].what, "tpot") == 0 || strcmp(c->slo[i].what, "itl") == 0) &&
            c->slo[i].limit_ms < *tpot_ms)
            *tpot_ms = c->slo[i].limit_ms;
    }
}

/* Candidate k misses an SLO with a single request (TPOT t1 at best, TTFT ttft_lb of the p99
 * prompt alone): pruned by the roofline bound, saying which. */
static void roofline_miss(study_rec_cand *k, double t1, double ttft_lb, double tpot_lim,
                          double ttft_lim)
{
    k->state = STUDY_REC_ROOFLINE;
    snprintf(k->why, sizeof k->why, "%s at best %.1f ms > %.1f ms",
             t1 > tpot_lim ? "TPOT" : "TTFT of the p99 prompt alone", t1 > tpot_lim ? t1 : ttft_lb,
             t1 > tpot_lim ? tpot_lim : ttft_lim);
}

/* Requests/s the prefill pool of disaggregated candidate k serves: its passes of the token
 * budget (8192 without one, at least a mean prompt), a mean prompt each. */
static double prefill_rate_of(const study_recommend *r, const study_rec_cand *k, const pricer *pre)
{
    int64_t q = k->tokens > 0 ? k->tokens : 8192;
    if (q < (int64_t)r->isl)
        q = (int64_t)r->isl;
    return k->nprefill * ((double)q / pass_s(pre, 0, 0, q)) / r->isl;
}

/* What each point of a unit's screen shares. */
typedef struct screen_point {
    const study_recommend *r;
    const study_rec_cand *k;
    const pricer *pre, *dec;
    double ctx;          /* tokens: the mean context */
    int pp;              /* pipeline stages */
    double prefill_rate; /* disaggregated: requests/s of the prefill pool */
    double pre_alone;    /* ms: the p99 prompt's prefill alone */
} screen_point;

/* A disaggregated unit at b running requests per decode replica: its step, rate and TTFT. */
static void disagg_point(const screen_point *sp, int64_t b, double *step, double *rate,
                         double *ttft)
{
    const study_rec_cand *k = sp->k;
    *step = pass_s(sp->dec, b, sp->ctx, 0);
    *rate = k->ndecode * (double)b / (sp->r->osl * *step);
    *rate = *rate < sp->prefill_rate ? *rate : sp->prefill_rate;
    /* MODEL: the prefill pool as an M/D/1 queue (Poisson arrivals, service of a mean
     * prompt), its waiting time's tail taken as exponential: p99 = mean x ln 100 */
    double svc = k->nprefill / sp->prefill_rate, rho = *rate / sp->prefill_rate;
    double wait = rho < 1 ? rho * svc / (2 * (1 - rho)) * log(100) * 1e3 : INFINITY;
    *ttft = sp->pre_alone + wait + *step * 1e3;
}

/* An aggregated unit at b running requests per replica: its step, rate and TTFT; -1 when
 * the token budget cannot hold the prefill that b's arrivals bring. */
static int agg_point(const screen_point *sp, int64_t b, double *step, double *rate, double *ttft)
{
    const study_recommend *r = sp->r;
    const study_rec_cand *k = sp->k;
    int64_t q = (int64_t)ceil((double)b * r->isl / r->osl);
    if (k->tokens > 0 && q + b > k->tokens)
        return -1;
    *step = pass_s(sp->dec, b, sp->ctx, q);
    *rate = (double)sp->pp * b / (r->osl * *step);
    /* the longest prompts are chunked over the steps' room for prefill */
    int64_t room = k->tokens > 0 ? k->tokens - b : 8192 - b;
    *ttft = ceil(r->isl_p99 / (double)(room > 1 ? room : 1)) * *step * 1e3;
    if (*ttft < sp->pre_alone)
        *ttft = sp->pre_alone;
    return 0;
}

/* A point within the SLOs: the best throughput per GPU so far, and one of k's points. */
static void add_screen_point(study_rec_cand *k, double tps_gpu, double tps_user)
{
    if (tps_gpu > k->a_tps_gpu) {
        k->a_tps_gpu = tps_gpu;
        k->a_tps_user = tps_user;
    }
    if (k->a_npts < (int)(sizeof k->a_pts / sizeof k->a_pts[0])) {
        k->a_pts[k->a_npts][0] = tps_gpu;
        k->a_pts[k->a_npts++][1] = tps_user;
    }
}

/* The unit's points at 1 to bmax running requests per replica (growing by half): those within
 * the SLOs into k, up to the first whose TPOT passes its limit. */
static void screen_batches(const screen_point *sp, study_rec_cand *k, int64_t bmax, double tpot_lim,
                           double ttft_lim)
{
    for (int64_t b = 1; b <= bmax; b = b * 3 / 2 + 1) {
        double step, rate, ttft;
        if (k->disagg)
            disagg_point(sp, b, &step, &rate, &ttft);
        else if (agg_point(sp, b, &step, &rate, &ttft) != 0)
            break; /* the budget cannot keep up with the arrivals b implies */
        double tpot = step * 1e3, tps_gpu = rate * sp->r->osl / k->gpus, tps_user = 1000 / tpot;
        if (tpot > tpot_lim)
            break;
        if (ttft <= ttft_lim)
            add_screen_point(k, tps_gpu, tps_user);
    }
}

/* The analytic points of one unit, the best within the SLOs into k. MODEL: a steady state of b
 * running requests per replica: each step decodes b tokens at the mean context (prompt + half
 * the output) and, with chunked prefill, prefills b x prompt / output tokens (the prompts of
 * the requests that replace those finishing); TPOT is that step, throughput b per step. TTFT
 * is bounded below by the longest prompts' prefill alone plus one step. Disaggregated: the
 * prefill pool's rate is its token budget per pass; the decode pool's steps are decodes only;
 * the unit serves the lower of the two rates. Pipelined (PP stages): P batches in flight, each
 * through every stage in turn (vLLM's virtual engines, engine/pipeline.c), each with its share
 * of the KV cache: a step is the whole model's pass (the stages' sum; the activations' hops
 * are left out) and the replica serves P times one batch's rate. Queueing is the simulation's
 * business. */
static void screen_unit(study_recommend *r, study_rec_cand *k, const pricer *pre, const pricer *dec,
                        int64_t kv_tokens, int seats)
{
    double ttft_lim, tpot_lim, ctx = r->isl + r->osl / 2;
    limits(&r->cap, &ttft_lim, &tpot_lim);
    double t1 = pass_s(dec, 1, ctx, 0) * 1e3;
    double ttft_lb = pass_s(pre, 0, 0, (int64_t)r->isl_p99) * 1e3 + t1;
    if (t1 > tpot_lim || ttft_lb > ttft_lim) {
        roofline_miss(k, t1, ttft_lb, tpot_lim, ttft_lim);
        return;
    }
    int pp = k->lay.pp > 1 ? k->lay.pp : 1;
    int64_t bmax = kv_tokens / pp / (int64_t)(r->isl + r->osl + 1);
    if (seats > 0 && bmax > seats)
        bmax = seats;
    screen_point sp = {.r = r,
                       .k = k,
                       .pre = pre,
                       .dec = dec,
                       .ctx = ctx,
                       .pp = pp,
                       .prefill_rate = k->disagg ? prefill_rate_of(r, k, pre) : 0,
                       .pre_alone = pass_s(pre, 0, 0, (int64_t)r->isl_p99) * 1e3};
    screen_batches(&sp, k, bmax, tpot_lim, ttft_lim);
}

/* The np pools of e into pc and their KV cache plans: each must hold the p99 prompt with a
 * mean output. 0, or -1 with err. */
static int plan_pools(const study_recommend *r, const eng_config *e, int np, eng_config *pc,
                      eng_kv_plan *plan, sim_err *err)
{
    for (int p = 0; p < np; p++) {
        eng_config_pool(e, p, &pc[p]);
        if (eng_kv_plan_compute(&pc[p], &plan[p], err) != 0)
            return -1;
        if (plan[p].tokens < (int64_t)(r->isl_p99 + r->osl))
            return sim_errf(err, "a %.0f-token request does not fit the KV cache (%lld tokens)",
                            r->isl_p99 + r->osl, (long long)plan[p].tokens);
    }
    return 0;
}

/* The screen of candidate k priced by cost: the prefill (first) pool's and the decode (last)
 * pool's passes, kv_tokens of the last pool's cache. */
static void screen_priced(study_recommend *r, study_rec_cand *k, const eng_model *m,
                          const study_cost *cost, const eng_config *pc, int np, int64_t kv_tokens)
{
    int32_t chunked = 0, cap = eng_shape_cap(m, &chunked);
    pricer pre = {&cost->pred, pc[0].cpu, cap, chunked};
    pricer dec = np == 2 ? (pricer){&cost->decode_pred, pc[1].cpu, cap, chunked} : pre;
    screen_unit(r, k, &pre, &dec, kv_tokens, k->seats);
}

/* Fit: the candidate's scenario loads, its weights fit, one long request's KV fits; then the
 * cost model prices the screen. */
static void screen(study_recommend *r, study_rec_cand *k)
{
    scn_scenario scn;
    sim_err err = {{0}};
    study_cost cost;
    memset(&cost, 0, sizeof cost);
    r->cap.choice[0] = k->choice;
    r->cap.ncmp = 1;
    int rc = study_capacity_load_choice(&r->cap, 0, &scn, &err);
    eng_config pc[2];
    eng_kv_plan plan[2];
    int np = rc == 0 ? eng_config_pools(&scn.engine) : 0;
    if (np > 0)
        rc = plan_pools(r, &scn.engine, np, pc, plan, &err);
    if (np > 0)
        k->usd_h = k->gpus * eng_fleet_gpu_price(&scn.engine.fleet, &pc[0].gpu);
    if (rc == 0)
        rc = study_cost_new(&scn, NULL, &cost, &err);
    if (rc != 0) {
        k->state = STUDY_REC_FIT;
        snprintf(k->why, sizeof k->why, "%.199s", err.msg);
    } else {
        screen_priced(r, k, &scn.engine.model, &cost, pc, np, plan[np - 1].tokens);
    }
    study_cost_free(&cost);
    scn_free(&scn);
    r->cap.ncmp = 0;
}

/* Tokens/s per GPU of candidate k as the objective weighs them: as they are, or (minimising
 * cost) as output tokens per USD of its unit's GPUs. */
static double weigh(const study_recommend *r, const study_rec_cand *k, double tps_gpu)
{
    if (r->cap.minimise != STUDY_MIN_COST)
        return tps_gpu;
    return k->usd_h > 0 ? tps_gpu * k->gpus * 3600 / k->usd_h : 0;
}

/* What one unit of k costs as the objective counts: GPUs, or USD per hour. */
static double unit_cost(const study_recommend *r, const study_rec_cand *k)
{
    return r->cap.minimise == STUDY_MIN_COST ? k->usd_h : k->gpus;
}

/* The most any kept candidate's screen reaches (weighed) at tps_user or more. */
static double front_at(const study_recommend *r, double tps_user)
{
    double best = 0;
    for (int j = 0; j < r->nc; j++)
        for (int p = 0; r->c[j].state == STUDY_REC_KEPT && p < r->c[j].a_npts; p++) {
            double x = weigh(r, &r->c[j], r->c[j].a_pts[p][0]);
            if (r->c[j].a_pts[p][1] >= tps_user && x > best)
                best = x;
        }
    return best;
}

/* Each kept candidate's score: the most any of its screen points reaches of the analytic front
 * at that point's tokens/s per user, so a candidate best at high interactivity ranks as high
 * as one best at high throughput. */
static void score(study_recommend *r)
{
    for (int i = 0; i < r->nc; i++) {
        study_rec_cand *k = &r->c[i];
        k->a_score = 0;
        k->a_x = weigh(r, k, k->a_tps_gpu);
        for (int p = 0; k->state == STUDY_REC_KEPT && p < k->a_npts; p++) {
            double best = front_at(r, k->a_pts[p][1]);
            double share = best > 0 ? weigh(r, k, k->a_pts[p][0]) / best : 0;
            if (share > k->a_score)
                k->a_score = share;
        }
    }
}

static int by_score(const void *a, const void *b)
{
    const study_rec_cand *x = *(const study_rec_cand *const *)a;
    const study_rec_cand *y = *(const study_rec_cand *const *)b;
    if (x->a_score != y->a_score)
        return x->a_score < y->a_score ? 1 : -1;
    return x->a_x < y->a_x ? 1 : x->a_x > y->a_x ? -1 : 0;
}

static int within(double a, double b, double rel)
{
    return fabs(a - b) <= rel * (fabs(a) > fabs(b) ? fabs(a) : fabs(b));
}

/* Whether a and b are the same GPU, engine and unit (layouts, pools), settings aside. */
static int same_unit(const study_rec_cand *a, const study_rec_cand *b)
{
    return strcmp(a->gpu, b->gpu) == 0 && strcmp(a->engine, b->engine) == 0 &&
           a->disagg == b->disagg && a->gpus == b->gpus &&
           memcmp(&a->lay, &b->lay, sizeof a->lay) == 0 &&
           memcmp(&a->dec, &b->dec, sizeof a->dec) == 0 && a->nprefill == b->nprefill &&
           a->ndecode == b->ndecode;
}

/* Whether a and b differ only in settings that hardly bind: the same unit with screen
 * estimates within 2% (a token budget above every prompt, seats above what the KV cache holds,
 * an fp8 cache the batch never fills). The better ranked is simulated for both. */
static int same_in_effect(const study_rec_cand *a, const study_rec_cand *b)
{
    return same_unit(a, b) && within(a->a_tps_gpu, b->a_tps_gpu, 0.02) &&
           within(a->a_tps_user, b->a_tps_user, 0.02);
}

/* The candidates in the order they are simulated: the best scores first, then the best of
 * each engine and kind not among the first `top` (so the answer compares them), then the rest.
 * *first gets how many are always simulated; returns how many there are. */
static int select_top(study_recommend *r, study_rec_cand ***out, int *first)
{
    study_rec_cand **v = sim_xcalloc((size_t)(r->nc > 0 ? r->nc : 1), sizeof *v);
    int n = 0, top = r->top > 0 ? r->top : DEFAULT_TOP;
    for (int i = 0; i < r->nc; i++)
        if (r->c[i].state == STUDY_REC_KEPT && r->c[i].a_tps_gpu > 0)
            v[n++] = &r->c[i];
    qsort(v, (size_t)n, sizeof *v, by_score);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < kept && !dup && !r->exhaustive; j++)
            dup = same_in_effect(v[j], v[i]);
        if (!dup)
            v[kept++] = v[i];
    }
    n = kept;
    int m = top < n ? top : n;
    for (int i = m; i < n && !r->exhaustive; i++) {
        int new_kind = 1;
        for (int j = 0; j < m && new_kind; j++)
            new_kind = strcmp(v[j]->engine, v[i]->engine) != 0 || v[j]->disagg != v[i]->disagg;
        if (new_kind) {
            study_rec_cand *k = v[i];
            memmove(v + m + 1, v + m, (size_t)(i - m) * sizeof *v);
            v[m++] = k;
        }
    }
    *out = v;
    *first = r->exhaustive ? n : m;
    return n;
}

/* ---- simulation ---- */

static void add_point(study_recommend *r, int ci, double rate, const study_trial *t)
{
    r->p = sim_xrealloc(r->p, (size_t)(r->np + 1) * sizeof *r->p);
    study_rec_point *p = &r->p[r->np++];
    memset(p, 0, sizeof *p);
    p->cand = ci;
    p->rate = rate;
    p->t = *t;
    p->tps_gpu = t->output_tps / r->c[ci].gpus;
    p->tps_user = t->mean_tpot > 0 ? 1000 / t->mean_tpot : 0;
    p->tok_usd = r->c[ci].usd_h > 0 ? t->output_tps * 3600 / r->c[ci].usd_h : 0;
    p->x = weigh(r, &r->c[ci], p->tps_gpu);
    p->confirmed = -1;
}

/* Candidate ci's capacity search, then fractions of its rate. */
static int simulate(study_recommend *r, int ci, sim_err *err)
{
    study_rec_cand *k = &r->c[ci];
    r->cap.choice[0] = k->choice;
    r->cap.ncmp = 1;
    int rc = study_capacity_find(&r->cap, 0, &k->ans, err);
    k->state = STUDY_REC_SIMULATED;
    r->n_sim++;
    /* the rate found, and fractions of it: lower rates trade throughput for interactivity,
     * and a point at the boundary that fails its confirmation has a neighbour below */
    static const double frac[] = {0.9, 0.75, 0.5, 0.25};
    if (rc == 0 && k->ans.verdict == STUDY_FOUND) {
        add_point(r, ci, k->ans.rate, &k->ans.at_rate);
        for (size_t f = 0; f < sizeof frac / sizeof frac[0] && rc == 0; f++) {
            study_trial t;
            double rate = k->ans.rate * frac[f];
            rc =
                study_capacity_probe(&r->cap, 0, "search", STUDY_LOAD_RATE, rate, 1, NULL, &t, err);
            if (rc == 0 && t.ok)
                add_point(r, ci, rate, &t);
        }
    }
    char v[64];
    if (k->ans.verdict == STUDY_FOUND)
        snprintf(v, sizeof v, "%.3g req/s per unit", k->ans.rate);
    else
        snprintf(v, sizeof v, "%s", study_verdict_name(k->ans.verdict));
    say(r, "  simulated %s (screen %.0f tok/s/GPU at %.1f tok/s/user): %s", k->choice.name,
        k->a_tps_gpu, k->a_tps_user, v);
    r->cap.ncmp = 0;
    return rc;
}

/* Whether a and b are the same deployment but for seats and token budget. */
static int knob_siblings(const study_rec_cand *a, const study_rec_cand *b)
{
    return a != b && same_unit(a, b) && a->kv_fp8 == b->kv_fp8;
}

/* MODEL: the screen prices steady decode steps, so it cannot see a seat cap or a token budget
 * act as admission control under Poisson arrivals (on a grid simulated whole, the exhaustive
 * search's best was a capped sibling of the screen's, 5% ahead). The simulated candidate with
 * the most requests/s per GPU has its siblings in seats and budget simulated too. */
static int refine(study_recommend *r, sim_err *err)
{
    int best = -1;
    for (int i = 0; i < r->nc; i++) {
        const study_rec_cand *k = &r->c[i];
        if (k->state == STUDY_REC_SIMULATED && k->ans.verdict == STUDY_FOUND &&
            (best < 0 ||
             k->ans.rate / unit_cost(r, k) > r->c[best].ans.rate / unit_cost(r, &r->c[best])))
            best = i;
    }
    int rc = 0;
    for (int i = 0; i < r->nc && best >= 0 && rc == 0; i++)
        if (r->c[i].state == STUDY_REC_SCREENED && r->c[i].a_tps_gpu > 0 &&
            knob_siblings(&r->c[i], &r->c[best])) {
            rc = simulate(r, i, err);
            r->n_refined++;
        }
    return rc;
}

/* ---- the front ---- */

/* Marks the Pareto front among the points that met the SLOs and were not refuted. */
static void mark_front(study_recommend *r)
{
    for (int i = 0; i < r->np; i++) {
        study_rec_point *p = &r->p[i];
        p->front = p->t.ok && p->confirmed != 0;
        for (int j = 0; j < r->np && p->front; j++) {
            const study_rec_point *q = &r->p[j];
            if (j == i || !q->t.ok || q->confirmed == 0)
                continue;
            if (q->x >= p->x && q->tps_user >= p->tps_user &&
                (q->x > p->x || q->tps_user > p->tps_user || j < i))
                p->front = 0;
        }
    }
}

/* Each front point run again at fresh seeds; one that misses leaves the front, which is then
 * recomputed (a point it hid may join, and is confirmed in turn). */
static int confirm(study_recommend *r, sim_err *err)
{
    study_capacity c = r->cap;
    uint64_t base = r->cap.seed;
    if (!r->cap.seed_given) {
        scn_scenario scn;
        if (study_capacity_load(&r->cap, &scn, err) != 0) {
            scn_free(&scn);
            return -1;
        }
        base = scn.seed;
        scn_free(&scn);
    }
    c.seed = base + CONFIRM_SEED_OFFSET;
    c.seed_given = 1;
    c.probe = NULL;
    c.cluster = NULL;
    for (int again = 1; again;) {
        again = 0;
        mark_front(r);
        for (int i = 0; i < r->np; i++) {
            study_rec_point *p = &r->p[i];
            if (!p->front || p->confirmed >= 0)
                continue;
            c.choice[0] = r->c[p->cand].choice;
            snprintf(c.choice[0].name, sizeof c.choice[0].name, "%.80s (confirm)",
                     r->c[p->cand].choice.name);
            c.ncmp = 1;
            if (study_capacity_probe(&c, 0, "search", STUDY_LOAD_RATE, p->rate, 1, NULL,
                                     &p->confirm, err) != 0)
                return -1;
            p->confirmed = p->confirm.ok;
            if (!p->confirmed) {
                r->n_unconfirmed++;
                again = 1;
            }
        }
    }
    r->cap.probes = c.probes;
    r->cap.runs = c.runs;
    mark_front(r);
    return 0;
}

/* Units the budget holds (or the target rate needs) for each point. */
static void size_points(study_recommend *r)
{
    for (int i = 0; i < r->np; i++) {
        study_rec_point *p = &r->p[i];
        int g = r->c[p->cand].gpus;
        if (r->target > 0)
            p->units = (int)ceil(r->target / p->rate - 1e-9);
        else if (r->budget > 0)
            p->units = r->budget / g;
        else
            p->units = 1;
        p->total_rate = p->units * p->rate;
        p->usd_h = p->units * r->c[p->cand].usd_h;
    }
}

/* The point recommended among the front's (see study_recommend.best). */
static int pick(const study_recommend *r)
{
    int best = -1;
    for (int i = 0; i < r->np; i++) {
        const study_rec_point *p = &r->p[i], *b = best >= 0 ? &r->p[best] : NULL;
        if (!p->front)
            continue;
        double cost = p->units * unit_cost(r, &r->c[p->cand]);
        int better = !b;
        if (b && r->target > 0) {
            double bc = b->units * unit_cost(r, &r->c[b->cand]);
            better = cost < bc || (cost == bc && p->tps_user > b->tps_user);
        } else if (b && r->budget > 0)
            better = p->total_rate > b->total_rate ||
                     (p->total_rate == b->total_rate && p->tps_user > b->tps_user);
        else if (b)
            better = p->x > b->x;
        if (better)
            best = i;
    }
    return best;
}

/* The recommended point's units at the target rate, simulated as a cluster behind the
 * scenario's router; a unit is added while it misses (three tries). */
static int check_cluster(study_recommend *r, sim_err *err)
{
    r->cluster_ok = -1;
    if (r->best < 0 || r->target <= 0)
        return 0;
    study_rec_point *p = &r->p[r->best];
    r->cap.choice[0] = r->c[p->cand].choice;
    r->cap.ncmp = 1;
    r->cluster_ok = 0;
    for (int tries = 0; tries < 3 && !r->cluster_ok; tries++, p->units++) {
        if (r->cap.cluster)
            r->cap.cluster(r->cap.probe_arg, r->c[p->cand].choice.name, r->target, p->units, -1, 0);
        if (study_capacity_probe(&r->cap, 0, "cluster", STUDY_LOAD_RATE, r->target, p->units, NULL,
                                 &r->cluster, err) != 0)
            return -1;
        r->cluster_ok = r->cluster.ok;
        say(r, "  cluster: %d units of %s at %g req/s: %s", p->units, r->c[p->cand].choice.name,
            r->target, r->cluster.ok ? "meets the SLOs" : "misses");
        if (r->cluster_ok)
            break;
        r->units_added++;
    }
    p->total_rate = p->units * p->rate;
    p->usd_h = p->units * r->c[p->cand].usd_h;
    r->cap.ncmp = 0;
    return 0;
}

/* The screen over every candidate, then the scores. */
static void screen_all(study_recommend *r)
{
    double t0 = sim_wall_seconds();
    for (int i = 0; i < r->nc; i++) {
        screen(r, &r->c[i]);
        r->n_fit += r->c[i].state == STUDY_REC_FIT;
        r->n_roofline += r->c[i].state == STUDY_REC_ROOFLINE;
    }
    score(r);
    r->screen_s = sim_wall_seconds() - t0;
}

/* Simulates the candidates the screen ranks first. 0, or -1 with err. */
static int simulate_top(study_recommend *r, sim_err *err)
{
    study_rec_cand **top;
    int first, n = select_top(r, &top, &first);
    for (int i = 0; i < r->nc; i++)
        if (r->c[i].state == STUDY_REC_KEPT)
            r->c[i].state = STUDY_REC_SCREENED;
    say(r, "recommend: %d do not fit, %d miss a roofline bound, %d ranked by the screen (%.2f s)",
        r->n_fit, r->n_roofline, n, r->screen_s);
    int rc = 0, found = 0, want = r->top > 0 ? r->top : DEFAULT_TOP;
    /* MODEL: the screen knows no queueing tail: candidates it ranks well may prove
     * unreachable; after the first ones, the next in its order are simulated until `top` have
     * an answer (at most three times `top` in all) */
    for (int i = 0; i < n && rc == 0 && (i < first || (found < want && i < 3 * want)); i++) {
        rc = simulate(r, (int)(top[i] - r->c), err);
        found += top[i]->ans.verdict == STUDY_FOUND;
    }
    free(top);
    return rc;
}

/* After the first simulations: refined, confirmed, sized, the best picked and the cluster
 * checked. 0, or -1 with err. */
static int conclude(study_recommend *r, sim_err *err)
{
    int rc = r->exhaustive ? 0 : refine(r, err);
    if (rc == 0)
        rc = confirm(r, err);
    r->n_screened = r->nc - r->n_fit - r->n_roofline - r->n_sim;
    if (rc != 0)
        return rc;
    size_points(r);
    r->best = pick(r);
    return check_cluster(r, err);
}

int study_recommend_run(study_recommend *r, sim_err *err)
{
    r->best = -1;
    r->cluster_ok = -1;
    if (r->ngpus == 0)
        return sim_errf(err, "recommend: no GPU type to search (--gpu)");
    if (workload_stats(r, err) != 0 || enumerate(r, err) != 0)
        return -1;
    say(r, "recommend: %d candidates (mean prompt %.0f, p99 %.0f, mean output %.0f tokens)", r->nc,
        r->isl, r->isl_p99, r->osl);
    screen_all(r);
    double t0 = sim_wall_seconds();
    int rc = simulate_top(r, err);
    if (rc == 0)
        rc = conclude(r, err);
    r->sim_s = sim_wall_seconds() - t0;
    return rc;
}

const char *study_recommend_validated(study_recommend *r, int cand, char *buf, size_t len)
{
    study_choice keep = r->cap.choice[0];
    int ncmp = r->cap.ncmp;
    scn_scenario scn;
    sim_err ignore = {{0}};
    buf[0] = '\0';
    r->cap.choice[0] = r->c[cand].choice;
    r->cap.ncmp = 1;
    if (study_capacity_load_choice(&r->cap, 0, &scn, &ignore) == 0)
        study_verrors_describe(&scn, buf, len);
    scn_free(&scn);
    r->cap.choice[0] = keep;
    r->cap.ncmp = ncmp;
    return buf;
}

void study_recommend_free(study_recommend *r)
{
    free(r->c);
    free(r->p);
    r->c = NULL;
    r->p = NULL;
    r->nc = r->np = 0;
}
