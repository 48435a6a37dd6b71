/*
 * test_spec_scn.c: speculative decoding as a scenario says it: the `speculative:` keys and their
 * errors, the measured acceptance curves of ../shared/data/speculative (read in place; the tests
 * that need them skip when the folder is absent), the drafters each method builds, and runs end
 * to end on the roofline: a good drafter lowers TPOT, a useless one raises it.
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
#include "study_util.h"
#include "test_main.h"

static const char base[] = "name: spec\nmodel: llama-3.1-8b\ngpu: h100-sxm\nengine: vllm\n"
                           "workload:\n  num_requests: 200\n"
                           "  arrival: {process: poisson, rate: 2}\n"
                           "  prompt_tokens: {dist: uniform, min: 200, max: 1000}\n"
                           "  output_tokens: 300\n";

static int load(const char *extra, const char *const *sets, int nsets, scn_scenario *s,
                sim_err *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", base, extra);
    return scn_load_text("spec.yaml", text, sets, nsets, study_resolver(), s, err);
}

static void expect_error(const char *extra, const char *want)
{
    scn_scenario s;
    sim_err err = {{0}};
    int rc = load(extra, NULL, 0, &s, &err);
    scn_free(&s);
    if (rc == 0)
        fail_msg("loaded, expected an error containing '%s'", want);
    if (!strstr(err.msg, want))
        fail_msg("error '%s' lacks '%s'", err.msg, want);
}

static int have_curves(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/speculative/dsv4_mtp.yaml", study_shared_data());
    if (access(path, R_OK) == 0)
        return 1;
    print_message("skipped: %s is absent (the shared data)\n", path);
    return 0;
}

static void test_key_errors(void **state)
{
    expect_error("speculative: {num_speculative_tokens: 3, acceptance: {length: 2}}",
                 "speculative.method: missing");
    expect_error("speculative: {method: medusa, num_speculative_tokens: 3}",
                 "unknown method 'medusa' (valid: draft, eagle, eagle3, mtp, ngram)");
    expect_error("speculative: {method: eagle, acceptance: {length: 2}}",
                 "num_speculative_tokens: missing");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3}",
                 "speculative.acceptance: missing");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, "
                 "acceptance: {length: 2, rate: 0.5}}",
                 "give one of curve, length or rate (2 given)");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, "
                 "acceptance: {length: 4.5}}",
                 "a mean acceptance length is 1 (nothing accepted) to 4");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, "
                 "acceptance: {rate: 1.5}}",
                 "speculative.acceptance.rate: expected a number in [0, 1], got '1.5'");
    expect_error("speculative: {method: mtp, num_speculative_tokens: 3, draft_model: "
                 "llama-3.1-8b, acceptance: {length: 2}}",
                 "method mtp runs no draft model");
    expect_error("speculative: {method: draft, num_speculative_tokens: 3, "
                 "acceptance: {length: 2}}",
                 "method draft needs draft_model");
    expect_error("speculative: {method: draft, draft_model: qwen2.5-0.5b, "
                 "num_speculative_tokens: 3, acceptance: {length: 2}}",
                 "vLLM refuses a draft model of another vocabulary");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, mtp_layers: 2, "
                 "acceptance: {length: 2}}",
                 "only method mtp has MTP layers");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, "
                 "acceptance: {length: 2, thinking: on}}",
                 "only a curve has thinking series");
    expect_error("speculative: {method: eagle, num_speculative_tokens: 3, spec: 1, "
                 "acceptance: {length: 2}}",
                 "unknown key (valid: method, num_speculative_tokens, draft_model");
    /* vLLM 0.6 runs the scheduler that has multi-step scheduling */
    scn_scenario s;
    sim_err err = {{0}};
    static const char v0[] = "name: spec\nmodel: llama-3.1-8b\ngpu: h100-sxm\n"
                             "engine: {name: vllm, version: \"0.6\"}\n"
                             "workload: {num_requests: 10, arrival: {process: poisson, rate: 2},"
                             " prompt_tokens: 200, output_tokens: 300}\n"
                             "scheduler: {num_scheduler_steps: 8}\n"
                             "speculative: {method: eagle, num_speculative_tokens: 3, "
                             "acceptance: {length: 2}}\n";
    int rc = scn_load_text("spec.yaml", v0, NULL, 0, study_resolver(), &s, &err);
    scn_free(&s);
    if (rc == 0)
        fail_msg("loaded multi-step scheduling with speculative decoding");
    if (!strstr(err.msg, "multi-step scheduling does not support speculative decoding"))
        fail_msg("error '%s' lacks the multi-step refusal", err.msg);
}

static void test_curves(void **state)
{
    if (!have_curves())
        skip();
    scn_scenario s;
    sim_err err;
    assert_int_equal(load("speculative: {method: mtp, num_speculative_tokens: 3, "
                          "acceptance: {curve: dsv4_mtp, thinking: on}}",
                          NULL, 0, &s, &err),
                     0);
    assert_true(fabs(s.engine.spec.al - 2.49) < 1e-12);
    assert_int_equal(s.engine.spec.dist, ENG_SPEC_MIN_VARIANCE);
    assert_non_null(strstr(s.notes, "measured on deepseek-v4-pro"));
    scn_free(&s);
    /* the K of a sweep picks its own point of the curve */
    const char *k6[] = {"speculative.num_speculative_tokens=6",
                        "speculative.acceptance.thinking=off"};
    assert_int_equal(load("speculative: {method: mtp, num_speculative_tokens: 3, "
                          "acceptance: {curve: qwen3.5_mtp, thinking: on}}",
                          k6, 2, &s, &err),
                     0);
    assert_true(fabs(s.engine.spec.al - 4.48) < 1e-12);
    scn_free(&s);
    /* an i.i.d. draw at the curve's length: the rate that gives it */
    assert_int_equal(load("speculative: {method: eagle3, num_speculative_tokens: 4, "
                          "acceptance: {curve: kimik2.5_eagle3, thinking: off, "
                          "distribution: iid}}",
                          NULL, 0, &s, &err),
                     0);
    assert_true(fabs(eng_spec_length_of_rate(s.engine.spec.rate, 4) - 3.06) < 1e-9);
    scn_free(&s);
    expect_error("speculative: {method: mtp, num_speculative_tokens: 9, "
                 "acceptance: {curve: dsv4_mtp, thinking: on}}",
                 "has no acceptance length for 9 draft tokens (it has: 1, 2, 3, 4, 5, 6, 7, 8)");
    expect_error("speculative: {method: mtp, num_speculative_tokens: 3, "
                 "acceptance: {curve: dsv4_mtp}}",
                 "has the series thinking: on, off; say which (acceptance.thinking)");
    expect_error("speculative: {method: mtp, num_speculative_tokens: 3, "
                 "acceptance: {curve: glm5.2_mtp, thinking: off}}",
                 "has no thinking_off series (it has: on)");
    expect_error("speculative: {method: mtp, num_speculative_tokens: 3, "
                 "acceptance: {curve: nope}}",
                 "unknown acceptance curve 'nope'; valid: ");
}

/* The drafters: an EAGLE head is one layer of the target's width sharing its embedding and
 * head; EAGLE-3 keeps a head of its own over 32,000 tokens; MTP is the target's layer kind; the
 * plan adds their weights and KV. */
static void test_drafters(void **state)
{
    scn_scenario plain, eagle, eagle3, draft;
    sim_err err;
    assert_int_equal(load("", NULL, 0, &plain, &err), 0);
    assert_int_equal(load("speculative: {method: eagle, num_speculative_tokens: 3, "
                          "acceptance: {length: 2.5}}",
                          NULL, 0, &eagle, &err),
                     0);
    assert_int_equal(load("speculative: {method: eagle3, num_speculative_tokens: 3, "
                          "acceptance: {length: 2.5}}",
                          NULL, 0, &eagle3, &err),
                     0);
    const char *big[] = {"model=llama-3.1-70b", "tensor_parallel=4"};
    assert_int_equal(load("speculative: {method: draft, draft_model: llama-3.1-8b, "
                          "num_speculative_tokens: 3, acceptance: {length: 2.5}}",
                          big, 2, &draft, &err),
                     0);
    const eng_model *h = &eagle.engine.spec.draft;
    assert_int_equal(h->layers, 1);
    assert_int_equal(h->hidden, 4096);
    assert_int_equal(h->kv_heads, 8);
    assert_int_equal(h->intermediate, 14336);
    assert_int_equal(eagle3.engine.spec.draft.vocab, 32000);
    eng_kv_plan p0, p1, p3, pd;
    assert_int_equal(eng_kv_plan_compute(&plain.engine, &p0, &err), 0);
    assert_int_equal(eng_kv_plan_compute(&eagle.engine, &p1, &err), 0);
    assert_int_equal(eng_kv_plan_compute(&eagle3.engine, &p3, &err), 0);
    assert_int_equal(eng_kv_plan_compute(&draft.engine, &pd, &err), 0);
    /* one Llama-3.1-8B layer and a final norm in bf16 (its embedding and head are the
     * target's), and its KV: 4 KiB a token */
    assert_int_equal(p1.draft_weight_bytes, 2 * (INT64_C(4096) * 4096 * 2 + 4096 * 1024 * 2 +
                                                 3 * INT64_C(4096) * 14336 + 3 * 4096));
    assert_int_equal(p1.draft_bytes_per_token, 4096);
    assert_int_equal(p1.bytes_per_token, p0.bytes_per_token + 4096);
    /* EAGLE-3's own head adds 32,000 x 4096 x 2 bytes */
    assert_int_equal(p3.draft_weight_bytes - p1.draft_weight_bytes, INT64_C(32000) * 4096 * 2);
    assert_true(p1.blocks < p0.blocks);
    /* a draft model counts whole, its weights and KV split over the target's TP 4 */
    assert_true(pd.draft_weight_bytes > INT64_C(3900000000) &&
                pd.draft_weight_bytes < INT64_C(4100000000));
    assert_int_equal(pd.draft_bytes_per_token, 131072 / 4);
    scn_free(&plain);
    scn_free(&eagle);
    scn_free(&eagle3);
    scn_free(&draft);
}

static double run_metric(const char *extra, const char *const *sets, int nsets, const char *name,
                         double *tpot)
{
    scn_scenario s;
    sim_err err;
    if (load(extra, sets, nsets, &s, &err) != 0)
        fail_msg("load: %s", err.msg);
    study_result *r = calloc(1, sizeof *r);
    su_run(&s, &(study_hooks){.check_every = 64}, r);
    double v = name ? study_metric(r, name) : 0;
    *tpot = study_metric(r, "mean_tpot_ms");
    free(r);
    scn_free(&s);
    return v;
}

/* The realised acceptance length of a run of s (the engine's walkers every 64 events). */
static double realised_al(scn_scenario *s)
{
    study_result *r = calloc(1, sizeof *r);
    su_run(s, &(study_hooks){.check_every = 64}, r);
    double al = study_metric(r, "spec_acceptance_length");
    free(r);
    return al;
}

/* On the roofline: an EAGLE-3 head accepting 2.5 tokens a step cuts TPOT; one accepting none
 * (AL 1) raises it by the verification and drafting it adds; the realised length is reported. */
static void test_end_to_end(void **state)
{
    double plain, good, useless;
    run_metric("", NULL, 0, NULL, &plain);
    double al = run_metric("speculative: {method: eagle3, num_speculative_tokens: 3, "
                           "acceptance: {length: 2.5}}",
                           NULL, 0, "spec_acceptance_length", &good);
    run_metric("speculative: {method: eagle3, num_speculative_tokens: 3, "
               "acceptance: {length: 1}}",
               NULL, 0, NULL, &useless);
    print_message("llama-3.1-8b TPOT: %.3f ms plain, %.3f ms at AL 2.5, %.3f ms at AL 1 "
                  "(realised %.3f)\n",
                  plain, good, useless, al);
    assert_true(good < plain);
    assert_true(useless > plain);
    assert_true(fabs(al - 2.5) < 0.05);
}

/* The shipped scenario: Qwen3.5-397B-A17B with its MTP layer and its measured curve. It loads
 * with the curve's length; it runs once the cost model prices its layers (MoE, gated DeltaNet),
 * and says which ones it does not until then. */
static void test_shipped_scenario(void **state)
{
    if (!have_curves())
        skip();
    const char *path = LLMSIM_SOURCE_DIR "/scenarios/speculative.yaml";
    scn_scenario s;
    sim_err err;
    su_load(path, NULL, &s);
    assert_int_equal(s.engine.spec.method, ENG_SPEC_MTP);
    assert_int_equal(s.engine.spec.k, 3);
    assert_true(fabs(s.engine.spec.al - 3.39) < 1e-12);
    assert_true(s.engine.model.linear_layers > 0);
    eng_kv_plan p;
    assert_int_equal(eng_kv_plan_compute(&s.engine, &p, &err), 0);
    assert_true(p.state_blocks > 0 && p.draft_weight_bytes > 0);
    if (study_cost_check(&s, &err) != 0) {
        print_message("not run: %s\n", err.msg);
        assert_non_null(strstr(err.msg, "does not price"));
    } else {
        /* priced: it runs, and realises its curve's length */
        double al = realised_al(&s);
        print_message("%s: realised acceptance length %.3f\n", path, al);
        assert_true(fabs(al - 3.39) / 3.39 < 0.02);
    }
    scn_free(&s);
}

/* The shipped sweep over K (docs/speculative.png): Llama-3.1-8B with an EAGLE-3 head at an
 * i.i.d. rate of 0.7 runs on today's roofline; it realises 1 + 0.7 + 0.49 + 0.343 a step. */
static void test_shipped_k_scenario(void **state)
{
    const char *path = LLMSIM_SOURCE_DIR "/scenarios/speculative_k.yaml";
    scn_scenario s;
    su_load(path, NULL, &s);
    assert_int_equal(s.engine.spec.method, ENG_SPEC_EAGLE3);
    assert_int_equal(s.engine.spec.dist, ENG_SPEC_IID);
    double al = realised_al(&s), want = 1 + 0.7 + 0.49 + 0.343;
    print_message("%s: realised acceptance length %.3f (i.i.d. 0.7: %.3f)\n", path, al, want);
    assert_true(fabs(al - want) / want < 0.02);
    scn_free(&s);
}

LLMSIM_TEST_MAIN(NULL, NULL, test_key_errors, test_curves, test_drafters, test_end_to_end,
                 test_shipped_scenario, test_shipped_k_scenario)
