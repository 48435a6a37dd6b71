/*
 * test_cost_objective.c: capacity and recommend minimising cost instead of GPUs. Llama-3-8B at
 * 10 requests/s (prompts of 1,000 tokens, outputs of 200, p99 TTFT under 2 s): one H100 SXM
 * (4.76 USD/h in the catalog) serves it, an L40S (1.40 USD/h) serves about 6 requests/s, so two
 * L40S are the cheaper deployment on more GPUs. The two objectives must pick differently, the
 * costs must be GPUs x price, and a GPU without a price is refused, never priced as another.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "study_recommend.h"
#include "study_util.h"
#include "test_main.h"

static char out[65536], err[8192];

#define QUESTION                                                                                   \
    "--model llama-3-8b --gpu h100 --isl 1000 --osl 200 --slo ttft_p99=2s,tpot_p99=100ms "         \
    "--target-rate 10"

/* The table's row of choice `name` (its line, NUL-ended in a static buffer). */
static const char *row(const char *name)
{
    static char line[1024];
    for (const char *p = out; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, name, strlen(name)) == 0 && p[strlen(name)] == ' ') {
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            return line;
        }
        p = nl ? nl + 1 : NULL;
    }
    fail_msg("no row %s in:\n%s", name, out);
    return NULL;
}

/* `llmsim capacity` on the question comparing `gpus`, minimising `what`, with `extra`
 * options; its exit status, the output in out and err. */
static int capacity_of(const char *gpus, const char *what, const char *extra)
{
    return e2e_sh(out, sizeof out, err, sizeof err,
                  "%s capacity " QUESTION
                  " --compare gpu=%s --minimise %s --db %s/cap.db --quiet%s",
                  LLMSIM_BINARY, gpus, what, e2e_dir, extra);
}

static void capacity(const char *minimise)
{
    int st = capacity_of("h100-sxm,l40s", minimise, "");
    if (st != 0)
        fail_msg("capacity --minimise %s: %d: %s", minimise, st, err);
    print_message("%s", out);
}

/* Fewest GPUs: the H100; cheapest: two L40S, at 2 x 1.40 USD/h against 4.76. */
static void test_capacity_objectives(void **state)
{
    capacity("gpus");
    assert_non_null(strstr(row("h100-sxm"), "<- fewest GPUs"));
    assert_null(strstr(row("l40s"), "<-"));
    assert_null(strstr(out, "USD/h"));
    capacity("cost");
    const char *l40s = row("l40s");
    int replicas, gpus;
    double rate, usd;
    assert_int_equal(sscanf(l40s, "l40s %lf %d %d %lf", &rate, &replicas, &gpus, &usd), 4);
    assert_true(replicas >= 2 && gpus == replicas);
    assert_true(fabs(usd - replicas * 1.40) < 0.006); /* printed to the cent */
    assert_non_null(strstr(l40s, "<- cheapest"));
    const char *h100 = row("h100-sxm");
    assert_int_equal(sscanf(h100, "h100-sxm %lf %d %d %lf", &rate, &replicas, &gpus, &usd), 4);
    assert_int_equal(gpus, 1);
    assert_true(fabs(usd - 4.76) < 0.006);
    assert_null(strstr(h100, "<-"));
    /* the JSON says the same */
    assert_int_equal(capacity_of("h100-sxm,l40s", "cost", " --json"), 0);
    assert_non_null(strstr(out, "\"minimise\": \"cost\""));
    const char *l = strstr(out, "\"choice\": \"l40s\"");
    assert_non_null(l);
    assert_non_null(strstr(l, "\"best\": true"));
    const char *h = strstr(out, "\"choice\": \"h100-sxm\"");
    assert_non_null(h);
    h = strstr(h, "\"usd_per_hour\": ");
    assert_non_null(h);
    assert_true(fabs(strtod(h + 16, NULL) - 4.76) < 1e-9);
}

/* A GPU without a list price is refused before anything runs, naming it. */
static void test_unpriced_refused(void **state)
{
    assert_int_equal(capacity_of("h100-sxm,mi300x", "cost", ""), 1);
    assert_non_null(strstr(err, "GPU mi300x of choice mi300x has no list price"));
    int st =
        e2e_sh(out, sizeof out, err, sizeof err,
               "%s recommend " QUESTION " --gpu h100-sxm,mi300x --minimise cost --db %s/rec.db "
               "--quiet",
               LLMSIM_BINARY, e2e_dir);
    assert_int_equal(st, 1);
    assert_non_null(strstr(err, "GPU mi300x has no list price"));
    st = e2e_sh(out, sizeof out, err, sizeof err, "%s capacity " QUESTION " --minimise money",
                LLMSIM_BINARY);
    assert_int_equal(st, 2);
    assert_non_null(strstr(err, "--minimise expects gpus or cost"));
}

static const char text[] = "name: cost\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                           "workload:\n  num_requests: 1000\n"
                           "  arrival: {process: poisson, rate: 1}\n"
                           "  prompt_tokens: {dist: fixed, value: 1000}\n"
                           "  output_tokens: {dist: fixed, value: 200}\n";

static const study_rec_point *recommend(study_recommend *r, study_objective o)
{
    su_recommend_setup(r, "cost.yaml", text, "ttft_p99=2s,tpot_p99=100ms", 0.1);
    r->cap.minimise = o;
    r->gpus[r->ngpus++] = "h100-sxm";
    r->gpus[r->ngpus++] = "l40s";
    r->engines[r->nengines++] = "vllm";
    r->target = 10;
    r->no_disagg = 1;
    su_recommend_run(r);
    assert_true(r->best >= 0);
    const study_rec_point *b = &r->p[r->best];
    const study_rec_cand *k = &r->c[b->cand];
    print_message("minimise %s: %s, %d units of %d GPUs, %.2f USD/h, cluster %s\n",
                  o == STUDY_MIN_COST ? "cost" : "gpus", k->choice.name, b->units, k->gpus,
                  b->usd_h, r->cluster_ok ? "meets" : "misses");
    assert_int_equal(r->cluster_ok, 1);
    return b;
}

/* The recommendation: fewest GPUs an H100, cheapest L40S; each point's cost is its units' GPUs
 * at their price, and the front minimising cost is over output tokens per USD. */
static void test_recommend_objectives(void **state)
{
    study_recommend r;
    const study_rec_point *b = recommend(&r, STUDY_MIN_GPUS);
    const study_rec_cand *k = &r.c[b->cand];
    assert_string_equal(k->gpu, "h100-sxm");
    int gpus_fewest = b->units * k->gpus;
    study_recommend_free(&r);
    b = recommend(&r, STUDY_MIN_COST);
    k = &r.c[b->cand];
    assert_string_equal(k->gpu, "l40s");
    assert_true(b->units * k->gpus > gpus_fewest); /* more GPUs, for less */
    assert_true(fabs(b->usd_h - b->units * k->gpus * 1.40) < 1e-9);
    assert_true(b->usd_h < 4.76 * gpus_fewest);
    for (int i = 0; i < r.np; i++) {
        const study_rec_point *p = &r.p[i];
        const study_rec_cand *c = &r.c[p->cand];
        double price = strcmp(c->gpu, "l40s") == 0 ? 1.40 : 4.76;
        assert_true(fabs(c->usd_h - c->gpus * price) < 1e-9);
        assert_true(p->x == p->tok_usd);
        assert_true(fabs(p->tok_usd - p->t.output_tps * 3600 / c->usd_h) < 1e-6 * p->tok_usd);
    }
    study_recommend_free(&r);
}

LLMSIM_TESTS(tests, test_capacity_objectives, test_unpriced_refused, test_recommend_objectives);

int main(void)
{
    return e2e_run_group(tests);
}
