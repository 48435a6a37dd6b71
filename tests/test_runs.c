/*
 * test_runs.c: decode runs change nothing. Every registered policy runs a set of workloads
 * twice, once with one event per decode step (max_run_steps 1) and once with the decode runs its
 * policy declares (max_run_steps 0), and every record the store would write must be the same in
 * the same order: each request row, each iteration row, each inter-token gap, each scheduled
 * span, and the summary's every metric to the bit. The workloads reach the paths a run must get
 * right: a CPU overhead per step (synchronous, overlapped, and formed a step ahead), preemption
 * under a small cache, several replicas behind routers that read the replicas' load and KV usage,
 * an autoscaled fleet with cold starts and admission shedding, prefix hits of multi-turn sessions,
 * speculative decoding in acceptance classes, a sliding-window model, a disaggregated deployment,
 * swap preemption, multi-step scheduling, TGI's waiting steps, and requests waiting for the seat
 * a finish inside a run frees, with drafts too (a small cache, a batch size that turns them off).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study.h"
#include "test_main.h"

/* Everything a run hands its recorder, folded into one running hash per kind of record, with
 * the records counted. */
typedef struct trace {
    uint64_t h[4]; /* requests, iterations, ITL gaps, spans */
    int64_t n[4];
} trace;

static void fold(trace *t, int kind, const int64_t *v, int nv)
{
    uint64_t h = t->h[kind] ? t->h[kind] : UINT64_C(1469598103934665603);
    for (int i = 0; i < nv; i++) {
        h ^= (uint64_t)v[i];
        h *= UINT64_C(1099511628211);
        h ^= h >> 29;
    }
    t->h[kind] = h;
    t->n[kind]++;
}

static void on_request(void *st, const eng_request *rq)
{
    int64_t v[] = {rq->id,          rq->replica,       rq->status,        rq->reject,
                   rq->t_arrival,   rq->t_first_sched, rq->t_last_sched,  rq->t_first_token,
                   rq->t_finish,    rq->preemptions,   rq->scheduled,     rq->generated,
                   rq->prompt,      rq->output,        rq->cached_tokens, rq->t_last_token,
                   rq->t_prefilled, rq->t_reserved};
    fold(st, 0, v, (int)(sizeof v / sizeof v[0]));
}

static void on_iteration(void *st, const eng_iter_rec *it)
{
    const eng_shape *s = &it->shape;
    int64_t v[] = {it->replica,
                   it->iter,
                   it->start_ns,
                   it->cpu_ns,
                   it->gpu_ns,
                   it->duration_ns,
                   it->num_seqs,
                   it->prefill_tokens,
                   it->decode_tokens,
                   it->kv_blocks_used,
                   it->preempted,
                   it->output_tokens,
                   it->draft_ns,
                   s->tokens,
                   s->decode_ctx,
                   s->decode_ctx_capped,
                   s->emit_seqs,
                   s->decode_verify,
                   (int64_t)s->prefill_pairs,
                   (int64_t)s->prefill_kv};
    fold(st, 1, v, (int)(sizeof v / sizeof v[0]));
}

static void on_itl(void *st, int64_t gap_ns, int64_t count)
{
    int64_t v[] = {gap_ns, count};
    fold(st, 2, v, 2);
}

static void on_span(void *st, const eng_span_rec *s)
{
    int64_t v[] = {s->req, s->replica, s->span, s->start_ns, s->decode_ns, s->end_ns, s->end};
    fold(st, 3, v, 7);
}

static const eng_recorder_ops trace_ops = {on_request, on_iteration, on_itl, on_span};

typedef struct variant {
    const char *name;
    const char *text;      /* the scenario after its scheduler line */
    int pd;                /* a disaggregated deployment: only policies that take transfers */
    const char *skip;      /* a policy that refuses it (static batching a windowed model) */
    const char *key, *val; /* a setting for the policies that declare it */
} variant;

#define LENGTHS                                                                                    \
    "  prompt_tokens: {dist: uniform, min: 50, max: 1500}\n"                                       \
    "  output_tokens: {dist: uniform, min: 2, max: 300}\n"

#define LLAMA "model: llama-3-8b\ngpu: h100-sxm\n"
/* 200 requests of LENGTHS arriving at `rate` a second */
#define POISSON200(rate)                                                                           \
    "workload:\n  num_requests: 200\n  arrival: {process: poisson, rate: " #rate "}\n" LENGTHS

/* speculative decoding as in the "speculative" variant, with extra settings */
#define SPEC(extra)                                                                                \
    "speculative: {method: eagle3, num_speculative_tokens: 3, acceptance: {length: 2.4, classes: " \
    "4}" extra "}\n"

static const variant variants[] = {
    {"poisson",
     LLAMA "cpu_overhead: {per_iteration_us: 150, per_seq_us: 3, async: false}\n"
           "workload:\n  num_requests: 240\n  arrival: {process: poisson, rate: 12}\n" LENGTHS,
     0, NULL, NULL, NULL},
    {"tight", LLAMA "memory: {gpu_utilization: 0.215}\n" POISSON200(9), 0, NULL, NULL, NULL},
    {"async",
     LLAMA "cpu_overhead: {per_iteration_us: 400, per_seq_us: 2, async: true}\n" POISSON200(8), 0,
     NULL, NULL, NULL},
    /* each step formed as the one before starts: arrivals reach the policy after it */
    {"formed ahead",
     LLAMA "cpu_overhead: {per_iteration_us: 400, per_seq_us: 2, async: true, own_step: true, "
           "form_ahead: true}\n" POISSON200(8),
     0, NULL, NULL, NULL},
    {"replicas",
     LLAMA "replicas: 3\nrouter: weighted\n"
           "memory: {gpu_utilization: 0.3}\n"
           "workload:\n  num_requests: 300\n  arrival: {process: poisson, rate: 20}\n" LENGTHS,
     0, NULL, NULL, NULL},
    /* an autoscaled fleet: the autoscaler's evaluations and the replicas' cold starts end are
     * events a run stops at, and admission sheds by the replicas' queues and KV usage */
    {"fleet",
     LLAMA "replicas: 1\nrouter: least_outstanding\nmemory: {gpu_utilization: 0.25}\n"
           "autoscale: {metric: concurrency, target: 6, max_replicas: 3, interval_s: 0.7, "
           "scale_down_delay_s: 1.5, startup_s: 1, graph_capture_s: 0.3}\n"
           "admission: {queue_depth: 4}\n"
           "workload:\n  num_requests: 300\n  arrival:\n    process: schedule\n    steps:\n"
           "      - {start_s: 0, rate: 6}\n      - {start_s: 3, rate: 45}\n"
           "      - {start_s: 7, rate: 4}\n" LENGTHS,
     0, NULL, NULL, NULL},
    /* admission in front of one replica: it sheds by that replica's queue and KV usage */
    {"shed", LLAMA "memory: {gpu_utilization: 0.25}\nadmission: {queue_depth: 3}\n" POISSON200(14),
     0, NULL, NULL, NULL},
    {"sessions",
     LLAMA
     "memory: {gpu_utilization: 0.25}\n"
     "workload:\n  num_requests: 200\n"
     "  arrival: {process: closed, concurrency: 24, think_time_ms: 300, ramp_up_s: 2}\n"
     "  output_tokens: {dist: lognormal, mean: 120, sigma: 0.6, max: 600}\n"
     "  sessions: {turns: {dist: uniform, min: 2, max: 6}, user_tokens: {dist: uniform, min: 20, "
     "max: 300}, system_prompt_tokens: 500, think_time_ms: {dist: uniform, min: 200, max: 2000}}\n",
     0, NULL, NULL, NULL},
    {"speculative",
     LLAMA "speculative: {method: eagle3, num_speculative_tokens: 3, acceptance: {length: "
           "2.4, classes: 4}}\n" POISSON200(6),
     0, NULL, NULL, NULL},
    {"window",
     "model: gemma-3-4b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.3}\n"
     "workload:\n  num_requests: 200\n  arrival: {process: poisson, rate: 10}\n"
     "  prompt_tokens: {dist: uniform, min: 200, max: 3000}\n"
     "  output_tokens: {dist: uniform, min: 2, max: 1500}\n",
     0, "static", NULL, NULL},
    {"pd",
     LLAMA "prefill: {replicas: 1}\ndecode: {replicas: 2}\n"
           "kv_transfer: {link: rdma}\n" POISSON200(10),
     1, NULL, NULL, NULL},
    {"swap", LLAMA "memory: {gpu_utilization: 0.215}\n" POISSON200(9), 0, NULL, "preemption",
     "swap"},
    {"multistep",
     LLAMA "memory: {gpu_utilization: 0.25}\n"
           "cpu_overhead: {per_iteration_us: 200, per_seq_us: 1, async: true}\n" POISSON200(9),
     0, NULL, "num_scheduler_steps", "4"},
    /* SGLang's decode batch mixed into its prefill steps */
    {"mixed", LLAMA "memory: {gpu_utilization: 0.25}\n" POISSON200(9), 0, NULL,
     "enable_mixed_chunk", "true"},
    /* TensorRT-LLM's overlap scheduler: a finished request's seat held one step more, with
     * requests waiting for seats (the value goes into the scheduler's flow map as written) */
    {"overlap", LLAMA POISSON200(12), 0, NULL, "overlap_scheduler", "true, max_batch_size: 12"},
    {"tgi-wait", LLAMA POISSON200(9), 0, NULL, "max_waiting_tokens", "40"},
    /* few seats, requests waiting for them: a finish inside a run frees a seat, and the next
     * step admits the head of the queue (runs_past_finishes asks the policy after it) */
    {"seats", LLAMA POISSON200(12), 0, NULL, "max_num_seqs", "4"},
    /* drafts past finishes (runs_past_finishes with speculative decoding): requests waiting for
     * the seats a finish inside a run frees, a small cache (preemption, the rejected drafts'
     * blocks given back at each step's end, the next step's 1 + K slots), and a cohort that
     * speculates again once finishes bring it under disable_by_batch_size */
    {"spec-seats", LLAMA SPEC("") POISSON200(12), 0, NULL, "max_num_seqs", "4"},
    {"spec-tight", LLAMA "memory: {gpu_utilization: 0.215}\n" SPEC("") POISSON200(9), 0, NULL, NULL,
     NULL},
    {"spec-off", LLAMA SPEC(", disable_by_batch_size: 6") POISSON200(5), 0, NULL, NULL, NULL},
};

typedef struct outcome {
    trace t;
    study_result r;
} outcome;

/* Runs policy p on variant v with decode runs at most max_run_steps long (0: as declared), its
 * requests' own blocks in the prefix cache's table (table_all) or kept apart, its records traced
 * (rec) or none asked for (the engine then sums a run's steps' counts). */
static void run_rec(const eng_sched_ops *p, const variant *v, int32_t max_run_steps, int table_all,
                    int rec, outcome *out)
{
    char text[4096], set[128] = "";
    if (v->key && eng_sched_param(p, v->key))
        snprintf(set, sizeof set, ", %s: %s", v->key, v->val);
    snprintf(text, sizeof text, "name: runs\nseed: 7\nscheduler: {name: %s%s%s}\n%s", p->name,
             strcmp(p->name, "static") == 0 ? ", batch_size: 16, max_wait_ms: 20" : "", set,
             v->text);
    scn_scenario s;
    sim_err err;
    if (scn_load_text("runs.yaml", text, NULL, 0, study_resolver(), &s, &err) != 0)
        fail_msg("%s/%s: %s", p->name, v->name, err.msg);
    s.engine.max_run_steps = max_run_steps;
    s.engine.prefix_table_all = table_all;
    memset(out, 0, sizeof *out);
    study_hooks hooks = {.rec = rec ? &trace_ops : NULL, .rec_st = &out->t, .check_every = 64};
    if (study_run(&s, s.seed, NULL, NULL, &hooks, &out->r, &err) != 0)
        fail_msg("%s/%s: %s", p->name, v->name, err.msg);
    scn_free(&s);
}

static void run_one(const eng_sched_ops *p, const variant *v, int32_t max_run_steps, int table_all,
                    outcome *out)
{
    run_rec(p, v, max_run_steps, table_all, 1, out);
}

/* Fails naming the first metric in which a and b differ. */
static void same_summary(const char *what, const char *policy, const char *vname, const outcome *a,
                         const outcome *b)
{
    assert_int_equal(a->r.n, b->r.n);
    for (int m = 0; m < a->r.n; m++)
        if (memcmp(&a->r.m[m].value, &b->r.m[m].value, sizeof(double)) != 0)
            fail_msg("%s/%s: %s is %.17g, %.17g %s", policy, vname, a->r.m[m].name, a->r.m[m].value,
                     b->r.m[m].value, what);
    assert_int_equal(a->r.tot.iterations, b->r.tot.iterations);
}

/* Fails naming the first kind of record, or the first metric, in which a and b differ. */
static void same(const char *what, const char *policy, const char *vname, const outcome *a,
                 const outcome *b)
{
    static const char *const kinds[] = {"request", "iteration", "ITL", "span"};
    for (int k = 0; k < 4; k++)
        if (a->t.n[k] != b->t.n[k] || a->t.h[k] != b->t.h[k])
            fail_msg("%s/%s: %s records differ %s (%lld against %lld)", policy, vname, kinds[k],
                     what, (long long)a->t.n[k], (long long)b->t.n[k]);
    same_summary(what, policy, vname, a, b);
}

static void test_runs_change_nothing(void **state)
{
    size_t np;
    const eng_sched_ops *const *all = eng_sched_all(&np);
    outcome *one = test_malloc(sizeof *one), *runs = test_malloc(sizeof *runs);
    for (size_t i = 0; i < np; i++) {
        for (size_t j = 0; j < sizeof variants / sizeof variants[0]; j++) {
            const variant *v = &variants[j];
            if ((v->pd && !all[i]->pd_join) || (v->skip && strcmp(v->skip, all[i]->name) == 0) ||
                (v->key && !eng_sched_param(all[i], v->key)))
                continue;
            run_one(all[i], v, 1, 0, one);
            run_one(all[i], v, 0, 0, runs);
            same("with decode runs", all[i]->name, v->name, one, runs);
            run_rec(all[i], v, 0, 0, 0, runs); /* no recorder: a run's counts are summed */
            same_summary("with decode runs and no recorder", all[i]->name, v->name, one, runs);
            if (strcmp(v->name, "fleet") == 0) /* the fleet did scale, both ways */
                assert_true(study_metric(&one->r, "scale_ups") > 0 &&
                            study_metric(&one->r, "scale_downs") > 0);
            if (strcmp(v->name, "shed") == 0 || strcmp(v->name, "fleet") == 0)
                assert_true(study_metric(&one->r, "rejected") > 0); /* some were shed */
            print_message("%-8s %-12s %6lld iterations, %6lld events one step an event, %6lld with "
                          "runs\n",
                          all[i]->name, v->name, (long long)one->r.tot.iterations,
                          (long long)one->r.events, (long long)runs->r.events);
        }
    }
    test_free(one);
    test_free(runs);
}

/* A request's own blocks kept apart from the prefix cache's table change nothing either: the
 * policies with a prefix cache, under memory pressure (preempted requests find their own blocks
 * again, or part of them), with prefixes shared and content of their own after them. */
static void test_own_blocks_change_nothing(void **state)
{
    static const char *const policies[] = {"vllm", "sglang", "trtllm"};
    static const variant cases[] = {
        {"tight",
         "model: llama-3-8b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.215}\n"
         "workload:\n  num_requests: 300\n  arrival: {process: poisson, rate: 12}\n" LENGTHS,
         0, NULL, "capacity_scheduler_policy", "max_utilization"},
        {"prefix",
         "model: llama-3-8b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.215}\n"
         "workload:\n  num_requests: 300\n  arrival: {process: poisson, rate: 12}\n"
         "  shared_prefix: {tokens: 600, groups: 3}\n" LENGTHS,
         0, NULL, "capacity_scheduler_policy", "max_utilization"},
        {"sessions",
         "model: llama-3-8b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.22}\n"
         "workload:\n  num_requests: 300\n"
         "  arrival: {process: closed, concurrency: 40, think_time_ms: 100, ramp_up_s: 1}\n"
         "  output_tokens: {dist: lognormal, mean: 200, sigma: 0.8, max: 900}\n"
         "  sessions: {turns: {dist: uniform, min: 2, max: 8}, user_tokens: {dist: uniform, min: "
         "20, max: 400}, system_prompt_tokens: 400, think_time_ms: {dist: uniform, min: 50, max: "
         "500}}\n",
         0, NULL, "capacity_scheduler_policy", "max_utilization"},
        {"pd",
         "model: llama-3-8b\ngpu: h100-sxm\nprefill: {replicas: 1, memory: {gpu_utilization: "
         "0.22}}\ndecode: {replicas: 2}\nkv_transfer: {link: rdma}\n"
         "workload:\n  num_requests: 300\n  arrival: {process: poisson, rate: 14}\n"
         "  shared_prefix: {tokens: 300, groups: 2}\n" LENGTHS,
         1, NULL, NULL, NULL},
    };
    outcome *a = test_malloc(sizeof *a), *b = test_malloc(sizeof *b);
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
            const eng_sched_ops *p = eng_sched_find(policies[i]);
            run_one(p, &cases[j], 0, 1, a);
            run_one(p, &cases[j], 0, 0, b);
            same("with own blocks apart", p->name, cases[j].name, a, b);
            print_message("%-8s %-10s prefix_evicted_blocks %g, prefix hit rate %g\n", p->name,
                          cases[j].name, study_metric(&b->r, "prefix_evicted_blocks"),
                          study_metric(&b->r, "prefix_hit_rate"));
        }
    test_free(a);
    test_free(b);
}

/* multi-turn sessions, closed loop, their prefixes back after a think time */
#define OFF_SESSIONS                                                                               \
    "workload:\n  num_requests: 300\n"                                                             \
    "  arrival: {process: closed, concurrency: 40, think_time_ms: 100, ramp_up_s: 1}\n"            \
    "  output_tokens: {dist: lognormal, mean: 200, sigma: 0.8, max: 900}\n"                        \
    "  sessions: {turns: {dist: uniform, min: 2, max: 8}, user_tokens: {dist: uniform, min: 20, "  \
    "max: 400}, system_prompt_tokens: 400, think_time_ms: {dist: uniform, min: 500, max: 3000}}\n"

/* Decode runs change nothing with KV offload tiers either: vLLM V1 (the policy offload is
 * modelled for) under memory pressure, multi-turn sessions whose prefixes the GPU cache loses and
 * the tiers give back, written back at eviction and written through as computed. */
static void test_offload_runs_change_nothing(void **state)
{
    static const variant cases[] = {
        {"write-back",
         "model: llama-3-8b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.22}\n"
         "kv_offload: {policy: write_back, tiers: [{kind: cpu, capacity_gb: 1}, {kind: ssd, "
         "capacity_gb: 8, bandwidth_gb_s: 7, latency_us: 100}]}\n" OFF_SESSIONS,
         0, NULL, NULL, NULL},
        {"write-through",
         "model: llama-3-8b\ngpu: h100-sxm\nmemory: {gpu_utilization: 0.22}\n"
         "kv_offload: {policy: write_through, tiers: [{kind: cpu, capacity_gb: 2}]}\n" OFF_SESSIONS,
         0, NULL, NULL, NULL},
    };
    const eng_sched_ops *p = eng_sched_find("vllm");
    outcome *one = test_malloc(sizeof *one), *runs = test_malloc(sizeof *runs);
    for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
        run_one(p, &cases[j], 1, 0, one);
        run_one(p, &cases[j], 0, 0, runs);
        same("with decode runs and offload", p->name, cases[j].name, one, runs);
        /* the tiers served hits, and runs were formed */
        assert_true(study_metric(&one->r, "kv_offload_cpu_hit_rate") > 0);
        assert_true(runs->r.events < one->r.events);
        print_message("%-14s host hit rate %g, %lld events one step an event, %lld with runs\n",
                      cases[j].name, study_metric(&one->r, "kv_offload_cpu_hit_rate"),
                      (long long)one->r.events, (long long)runs->r.events);
    }
    test_free(one);
    test_free(runs);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_runs_change_nothing, test_own_blocks_change_nothing,
                 test_offload_runs_change_nothing)
