/*
 * test_prio.c: request classes (workload.classes) and priority scheduling: the vLLM and SGLang
 * policies' priority orders and preemption, class-aware shedding at admission, per-class
 * goodput, the classes' keys and their refusals, and the request heap the policies use.
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

#include "rqheap.h"
#include "study.h"
#include "study_util.h"
#include "test_main.h"

#define PRIO LLMSIM_SOURCE_DIR "/scenarios/priority_classes.yaml"

/* Preemptions and requests seen per class, through the recorder. */
typedef struct per_class {
    int64_t preempted[ENG_MAX_CLASSES], requests[ENG_MAX_CLASSES];
} per_class;

static void on_request(void *st, const eng_request *rq)
{
    per_class *p = st;
    p->preempted[rq->wclass] += rq->preemptions;
    p->requests[rq->wclass]++;
}

static const eng_recorder_ops counter = {.on_request = on_request};

/* Runs scenario path with the overrides (NULL-terminated), counting per class into pc (may be
 * NULL); the result is the caller's. */
static study_result *run_with(const char *path, const char *const *sets, per_class *pc)
{
    scn_scenario s;
    su_load(path, sets, &s);
    study_result *r = test_calloc(1, sizeof *r);
    su_run(&s, &(study_hooks){.rec = pc ? &counter : NULL, .rec_st = pc}, r);
    scn_free(&s);
    return r;
}

static double cm(const study_result *r, const char *cls, const char *metric)
{
    char k[64];
    snprintf(k, sizeof k, "class.%s.%s", cls, metric);
    return study_metric(r, k);
}

/* Overload (8 requests/s offered to a replica serving about 4): with vLLM's priority policy the
 * interactive class's p99 TTFT stays under its 1 s objective and the batch class absorbs the
 * overload; with fcfs both queue and the interactive class misses it. */
static void test_vllm_priority_holds_slo(void **state)
{
    (void)state;
    const char *prio[] = {"workload.num_requests=1000", NULL};
    const char *fcfs[] = {"workload.num_requests=1000", "scheduler.scheduling_policy=fcfs", NULL};
    per_class pp = {0}, pf = {0};
    study_result *p = run_with(PRIO, prio, &pp), *f = run_with(PRIO, fcfs, &pf);
    assert_true(p->saturated && f->saturated);
    assert_true(cm(p, "interactive", "p99_ttft_ms") < 1000);
    assert_true(cm(f, "interactive", "p99_ttft_ms") > 1000);
    assert_true(cm(p, "interactive", "slo_attainment") > 0.98);
    assert_true(cm(f, "interactive", "slo_attainment") < 0.5);
    /* the batch class waits longer than under fcfs: it absorbs the overload */
    assert_true(cm(p, "batch", "mean_ttft_ms") > cm(f, "batch", "mean_ttft_ms"));
    assert_true(cm(p, "batch", "p99_ttft_ms") > 10 * cm(p, "interactive", "p99_ttft_ms"));
    /* the same arrivals, of the same classes, whatever the policy */
    assert_true(cm(p, "interactive", "completed") == cm(f, "interactive", "completed"));
    assert_int_equal(pp.requests[0], pf.requests[0]);
    test_free(p);
    test_free(f);
}

/* With too little KV for the load, vLLM's priority policy preempts the lowest-priority running
 * request (max of (priority, arrival)): batch requests are preempted, interactive ones hardly
 * ever (only when no batch request runs); fcfs preempts the newest, of either class. */
static void test_vllm_preempts_low_class(void **state)
{
    (void)state;
    const char *prio[] = {"workload.num_requests=600", "memory.gpu_utilization=0.45", NULL};
    const char *fcfs[] = {"workload.num_requests=600", "memory.gpu_utilization=0.45",
                          "scheduler.scheduling_policy=fcfs", NULL};
    per_class pp = {0}, pf = {0};
    study_result *p = run_with(PRIO, prio, &pp), *f = run_with(PRIO, fcfs, &pf);
    assert_true(pp.preempted[1] > 0);
    assert_true(pf.preempted[0] > 0);
    /* interactive's share of preemptions: far below its share of requests with priority */
    assert_true(pp.preempted[0] * 10 < pp.preempted[1]);
    assert_true(pf.preempted[0] * 10 > pf.preempted[1]);
    test_free(p);
    test_free(f);
}

/* SGLang: the waiting queue by priority (larger values first unless
 * schedule_low_priority_values_first); the interactive class keeps a short TTFT. */
static void test_sglang_priority(void **state)
{
    (void)state;
    const char *low_first[] = {"workload.num_requests=1000", "engine=sglang",
                               "scheduler={name: sglang, enable_priority_scheduling: true, "
                               "schedule_low_priority_values_first: true}",
                               NULL};
    const char *high_first[] = {"workload.num_requests=1000", "engine=sglang",
                                "scheduler={name: sglang, enable_priority_scheduling: true}", NULL};
    const char *fcfs[] = {"workload.num_requests=1000", "engine=sglang", "scheduler={name: sglang}",
                          NULL};
    study_result *lo = run_with(PRIO, low_first, NULL), *hi = run_with(PRIO, high_first, NULL),
                 *f = run_with(PRIO, fcfs, NULL);
    double ilo = cm(lo, "interactive", "p99_ttft_ms"), ihi = cm(hi, "interactive", "p99_ttft_ms"),
           ifc = cm(f, "interactive", "p99_ttft_ms");
    assert_true(ilo < 3000);
    assert_true(ifc > 10 * ilo);
    /* larger values first: batch (priority 1) goes before interactive (0) */
    assert_true(ihi > 10 * ilo);
    assert_true(cm(hi, "batch", "p99_ttft_ms") < cm(lo, "batch", "p99_ttft_ms"));
    test_free(lo);
    test_free(hi);
    test_free(f);
}

/* SGLang's preempt_to_schedule: with a full running batch (max_running_requests), an
 * interactive arrival preempts batch requests more than the threshold below it; with a
 * threshold no gap exceeds, nothing is preempted and it waits for a seat. */
static void test_sglang_preempts_on_full_batch(void **state)
{
    (void)state;
    const char *on[] = {"workload.num_requests=600",
                        "workload.classes=[{name: interactive, share: 0.3, priority: 0, slo: "
                        "{ttft_ms: 1000}}, {name: batch, share: 0.7, priority: 20}]",
                        "engine=sglang",
                        "scheduler={name: sglang, enable_priority_scheduling: true, "
                        "schedule_low_priority_values_first: true, max_running_requests: 24}",
                        NULL};
    const char *off[] = {"workload.num_requests=600",
                         "workload.classes=[{name: interactive, share: 0.3, priority: 0, slo: "
                         "{ttft_ms: 1000}}, {name: batch, share: 0.7, priority: 20}]",
                         "engine=sglang",
                         "scheduler={name: sglang, enable_priority_scheduling: true, "
                         "schedule_low_priority_values_first: true, max_running_requests: 24, "
                         "priority_scheduling_preemption_threshold: 100}",
                         NULL};
    per_class pon = {0}, poff = {0};
    study_result *a = run_with(PRIO, on, &pon), *b = run_with(PRIO, off, &poff);
    assert_true(pon.preempted[1] > 0);
    assert_int_equal(pon.preempted[0], 0);
    assert_int_equal(poff.preempted[0] + poff.preempted[1], 0);
    assert_true(cm(a, "interactive", "p99_ttft_ms") < cm(b, "interactive", "p99_ttft_ms"));
    test_free(a);
    test_free(b);
}

/* Admission control sheds only the sheddable class; the other is admitted whatever the load,
 * and the rejections count in the class's metrics and the run's. */
static void test_shed_by_class(void **state)
{
    (void)state;
    const char *sets[] = {"workload.num_requests=1000", "admission={queue_depth: 5}", NULL};
    study_result *r = run_with(PRIO, sets, NULL);
    assert_true(cm(r, "batch", "rejected") > 0);
    assert_true(cm(r, "interactive", "rejected") == 0);
    assert_true(study_metric(r, "rejected") == cm(r, "batch", "rejected"));
    assert_true(study_metric(r, "rejected_shed") == cm(r, "batch", "rejected"));
    /* a rejected request misses its objective */
    assert_true(cm(r, "batch", "slo_attainment") <=
                cm(r, "batch", "completed") /
                    (cm(r, "batch", "completed") + cm(r, "batch", "rejected")));
    test_free(r);
}

/* Per-class goodput against each class's own SLO; the run's SLO for a class without one. */
static void test_class_goodput(void **state)
{
    (void)state;
    const char *sets[] = {"workload.num_requests=400", "workload.arrival.rate=2", NULL};
    study_result *r = run_with(PRIO, sets, NULL);
    double dur = study_metric(r, "duration");
    double gi = cm(r, "interactive", "request_goodput") * dur,
           gb = cm(r, "batch", "request_goodput") * dur;
    assert_true(fabs(gi - round(gi)) < 1e-6 && fabs(gb - round(gb)) < 1e-6);
    assert_true(gi <= cm(r, "interactive", "completed") && gb <= cm(r, "batch", "completed"));
    /* batch's objective is the run's 30 s, met by all at this light load */
    assert_true(cm(r, "batch", "slo_attainment") == 1);
    assert_true(cm(r, "interactive", "completed") + cm(r, "batch", "completed") ==
                study_metric(r, "completed"));
    test_free(r);
}

/* The same seed gives the same classes and results; another seed other draws; the classes'
 * counts follow their shares. */
static void test_determinism(void **state)
{
    (void)state;
    const char *sets[] = {"workload.num_requests=2000", "workload.arrival.rate=3", NULL};
    const char *other[] = {"workload.num_requests=2000", "workload.arrival.rate=3", "seed=7", NULL};
    study_result *a = run_with(PRIO, sets, NULL), *b = run_with(PRIO, sets, NULL),
                 *c = run_with(PRIO, other, NULL);
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        assert_string_equal(a->m[i].name, b->m[i].name);
        assert_memory_equal(&a->m[i].value, &b->m[i].value, sizeof(double));
    }
    double n0 = cm(a, "interactive", "completed"), n1 = cm(a, "batch", "completed");
    assert_true(n0 + n1 == 2000);
    assert_true(fabs(n0 - 600) < 4 * sqrt(2000 * 0.3 * 0.7)); /* binomial, 4 sigma */
    assert_true(cm(c, "interactive", "completed") != n0);
    test_free(a);
    test_free(b);
    test_free(c);
}

/* Runs without classes carry no class metrics. */
static void test_no_classes(void **state)
{
    (void)state;
    const char *sets[] = {"workload.num_requests=100", NULL};
    study_result *r = run_with(LLMSIM_SOURCE_DIR "/scenarios/demo.yaml", sets, NULL);
    for (int i = 0; i < r->n; i++)
        assert_true(strncmp(r->m[i].name, "class.", 6) != 0);
    test_free(r);
}

/* Each bad classes list is refused at load with a message naming the key and the fault. */
static void test_keys_refused(void **state)
{
    (void)state;
    static const struct {
        const char *set, *want;
    } bad[] = {
        {"workload.classes=[{name: a, share: 0.5}, {name: b, share: 0.4}]", "sum to 0.9"},
        {"workload.classes=[{name: a, share: 0.5}, {name: a, share: 0.5}]", "named twice"},
        {"workload.classes=[{name: 'a b', share: 1}]", "letters, digits"},
        {"workload.classes=[{name: averyveryverylongname, share: 1}]", "longer than 16"},
        {"workload.classes=[{name: a, share: 0}, {name: b, share: 1}]", "share"},
        {"workload.classes=[{name: a, share: 1, colour: red}]", "unknown key"},
        {"workload.classes=[{share: 1}]", "name"},
        {"workload.classes=[{name: a}]", "share"},
        {"workload.classes=[]", "list of 1 to 8"},
        {"workload.classes={name: a, share: 1}", "list of 1 to 8"},
        {"workload.classes=[{name: a, share: 1, priority: x}]", "priority"},
        {"workload.classes=[{name: a, share: 1, slo: {ttft: 5}}]", "unknown key"},
        {"workload.classes=[{name: a, share: 0.2}, {name: b, share: 0.1}, {name: c, share: 0.1}, "
         "{name: d, share: 0.1}, {name: e, share: 0.1}, {name: f, share: 0.1}, {name: g, share: "
         "0.1}, {name: h, share: 0.1}, {name: i, share: 0.1}]",
         "list of 1 to 8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *sets[] = {bad[i].set};
        scn_scenario s;
        sim_err err;
        int rc = study_load(PRIO, sets, 1, &s, &err);
        if (rc == 0) {
            scn_free(&s);
            fail_msg("accepted: %s", bad[i].set);
        }
        if (!strstr(err.msg, bad[i].want) || !strstr(err.msg, "classes"))
            fail_msg("%s: message '%s' lacks '%s'", bad[i].set, err.msg, bad[i].want);
    }
    /* SGLang's priority order with lpm is refused by name when the run starts */
    const char *lpm[] = {"engine=sglang",
                         "scheduler={name: sglang, enable_priority_scheduling: "
                         "true, schedule_policy: lpm}",
                         NULL};
    scn_scenario s;
    su_load(PRIO, lpm, &s);
    su_refused(&s, "lpm");
}

/* The heap against a sorted order: random pushes, removals from the middle and pops. */
static int by_order(const void *x, const void *y)
{
    const eng_request *a = *(eng_request *const *)x, *b = *(eng_request *const *)y;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->t_arrival != b->t_arrival)
        return a->t_arrival < b->t_arrival ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static void test_heap_order(void **state)
{
    (void)state;
    enum { N = 500 };
    eng_request *rq = test_calloc(N, sizeof *rq), *sorted[N];
    eng_rq_heap mn = {.sign = 1}, mx = {.sign = 1, .max = 1};
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        rq[i].id = i;
        rq[i].priority = (int32_t)(x >> 60) % 4;
        rq[i].t_arrival = (int64_t)(x >> 40) % 50;
        sorted[i] = &rq[i];
    }
    qsort(sorted, N, sizeof *sorted, by_order);
    for (int i = 0; i < N; i++)
        eng_heap_push(&mn, &rq[i]);
    for (int i = 0; i < N; i += 3) /* out of the middle, then back */
        eng_heap_remove(&mn, &rq[i]);
    assert_int_equal(eng_heap_check(&mn), 0);
    for (int i = 0; i < N; i += 3)
        eng_heap_push(&mn, &rq[i]);
    for (int i = 0; i < N; i++) {
        eng_request *t = eng_heap_pop(&mn);
        assert_ptr_equal(t, sorted[i]);
        eng_heap_push(&mx, t);
    }
    for (int i = N - 1; i >= 0; i--)
        assert_ptr_equal(eng_heap_pop(&mx), sorted[i]);
    assert_null(eng_heap_pop(&mx));
    free(mn.a);
    free(mx.a);
    test_free(rq);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_heap_order, test_keys_refused, test_vllm_priority_holds_slo,
                 test_vllm_preempts_low_class, test_sglang_priority,
                 test_sglang_preempts_on_full_batch, test_shed_by_class, test_class_goodput,
                 test_determinism, test_no_classes)
