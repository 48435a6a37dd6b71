/*
 * test_prefix_traces.c: the Mooncake FAST'25 traces (read in place from ../shared/data; the test
 * exits 77, skipped, when they are absent): counting, in arrival order, each request's leading
 * 512-token blocks some earlier request had gives the ideal-cache bound of prefix reuse (37.4%
 * of prompt tokens for the conversation trace, 65.1% for the synthetic one, as the traces'
 * SOURCE.md says); a replay through vllm with an unbounded cache reports a hit rate at or just
 * below it (a block is cached once its computation is scheduled; hits are whole 256-token
 * blocks here, and the last prompt token is always computed), and an H200's real cache less;
 * the same H200 with an unbounded host-memory tier behind its cache (kv_offload) reaches the
 * bound again for the conversation trace.
 */
#include <math.h>
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

#define MOONCAKE "traces/mooncake-fast25/"

static int load(const char *text, scn_scenario *s)
{
    sim_err err;
    int rc = scn_load_text("test.yaml", text, NULL, 0, study_resolver(), s, &err);
    if (rc != 0)
        print_message("load: %s\n", err.msg);
    return rc;
}

static double metric(const scn_scenario *s, const char *name)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    study_hooks h = {.check_every = 4096};
    if (study_run(s, s->seed, NULL, NULL, &h, r, &err) != 0)
        fail_msg("run: %s", err.msg);
    double v = study_metric(r, name);
    free(r);
    return v;
}

/* A set of 64-bit content ids (open addressing). */
typedef struct idset {
    uint64_t *a;
    size_t cap, n;
} idset;

static int idset_has(const idset *s, uint64_t x)
{
    if (!s->cap)
        return 0;
    for (size_t i = (x ^ (x >> 31)) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->a[i] == x)
            return 1;
        if (s->a[i] == 0)
            return 0;
    }
}

static void idset_add(idset *s, uint64_t x)
{
    if (2 * (s->n + 1) > s->cap) {
        idset old = *s;
        s->cap = old.cap ? 2 * old.cap : 1 << 16;
        s->a = calloc(s->cap, sizeof *s->a);
        s->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.a[i])
                idset_add(s, old.a[i]);
        free(old.a);
    }
    if (idset_has(s, x))
        return;
    for (size_t i = (x ^ (x >> 31)) & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
        if (s->a[i] == 0) {
            s->a[i] = x;
            s->n++;
            return;
        }
}

static char *trace_scenario(const char *file, const char *extra)
{
    char *text = malloc(2048);
    snprintf(text, 2048,
             "name: mc\nmodel: qwen2.5-7b\ngpu: h200\nengine: vllm\n%s"
             "workload:\n  trace: {path: %s/%s%s, format: mooncake}\n",
             extra, study_shared_data(), MOONCAKE, file);
    return text;
}

/* The bound: in arrival order, the prompt tokens of each request's leading blocks that some
 * earlier request already had (min(k x 512, prompt)), over all prompt tokens. */
static double ideal_bound(const scn_scenario *s)
{
    sim_err err;
    scn_source *src = scn_source_new(s, 1, &err);
    assert_non_null(src);
    idset seen = {0};
    double hit = 0, all = 0;
    eng_arrival a = {0};
    while (scn_source_ops()->next(src, a.t, &a, &err) == ENG_SRC_OK) {
        int32_t k = 0;
        while (k < a.nseg && idset_has(&seen, a.seg[k].id + 1))
            k++;
        hit += (double)(k * 512 < a.prompt ? k * 512 : a.prompt);
        all += a.prompt;
        for (int32_t i = 0; i < a.nseg; i++)
            idset_add(&seen, a.seg[i].id + 1);
    }
    scn_source_free(src);
    free(seen.a);
    return hit / all;
}

static void test_mooncake_bound_and_replay(void **state)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%sconversation_trace.jsonl", study_shared_data(), MOONCAKE);

    static const struct {
        const char *file;
        double bound;
    } traces[] = {{"conversation_trace.jsonl", 0.374}, {"synthetic_trace.jsonl", 0.651}};
    for (size_t t = 0; t < 2; t++) {
        scn_scenario s;
        char *text = trace_scenario(traces[t].file, "replicas: 1\nmemory: {block_size: 256}\n");
        assert_int_equal(load(text, &s), 0);
        double bound = ideal_bound(&s);
        /* an unbounded cache: the memory of the replica stretched until nothing is evicted */
        s.engine.gpu.mem_bytes = INT64_C(20000) * 1000 * 1000 * 1000;
        double unbounded = metric(&s, "prefix_hit_rate");
        double evicted = metric(&s, "prefix_evicted_blocks");
        scn_free(&s);
        /* the H200 as it is */
        assert_int_equal(load(text, &s), 0);
        double bounded = metric(&s, "prefix_hit_rate");
        scn_free(&s);
        free(text);
        double offload = -1;
        if (t == 0) { /* and with an unbounded host tier behind its cache */
            text = trace_scenario(traces[t].file, "replicas: 1\nmemory: {block_size: 256}\n"
                                                  "kv_offload: {tiers: [{kind: cpu}]}\n");
            assert_int_equal(load(text, &s), 0);
            offload = metric(&s, "prefix_hit_rate");
            scn_free(&s);
            free(text);
            print_message("%s: an H200's cache with an unbounded host tier %.4f\n", traces[t].file,
                          offload);
            assert_true(offload <= bound && offload > bound - 0.02);
        }
        print_message("%s: ideal bound %.4f, unbounded cache %.4f (%g evictions), an H200's "
                      "cache %.4f\n",
                      traces[t].file, bound, unbounded, evicted, bounded);
        assert_true(fabs(bound - traces[t].bound) < 0.0005);
        assert_true(evicted == 0);
        assert_true(unbounded <= bound && unbounded > bound - 0.02);
        assert_true(bounded < unbounded);
    }
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%sconversation_trace.jsonl", study_shared_data(), MOONCAKE);
    if (access(path, R_OK) != 0) {
        printf("skipped: %s is absent\n", path);
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mooncake_bound_and_replay)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
