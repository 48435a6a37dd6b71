/*
 * test_fleet.c: the deployment as a fleet: GPU-hours, cost and energy in the summary, the
 * catalog's price and power rows, and the price: and power: settings.
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

#include "catalog.h"
#include "e2e_util.h"
#include "study.h"
#include "study_util.h"
#include "test_main.h"

#define DEMO LLMSIM_SOURCE_DIR "/scenarios/demo.yaml"
#define PD70 LLMSIM_SOURCE_DIR "/scenarios/pd_llama70b.yaml"

/* Runs scenario path with the overrides (NULL-terminated); the result is the caller's. */
static study_result *run_with(const char *path, const char *const *sets, scn_scenario *s)
{
    su_load(path, sets, s);
    study_result *r = test_calloc(1, sizeof *r);
    su_run(s, NULL, r);
    return r;
}

static void test_catalog_rows(void **state)
{
    (void)state;
    char why[256];
    if (cal_gpu_catalog_check(why, sizeof why) != 0)
        fail_msg("%s", why);
    eng_gpu g;
    assert_int_equal(cal_gpu_find("h100-sxm", &g), 0);
    assert_true(g.price_per_hour > 0 && g.max_w == 700);
    assert_true(g.idle_w > 0 && g.idle_w < g.max_w);
    assert_non_null(strstr(cal_gpu_price_source("h100-sxm"), "2026"));
    assert_int_equal(cal_gpu_find("gh200", &g), 0); /* no GPU-only power figure: none */
    assert_true(g.max_w == 0);
}

/* Cost per Mtok is the price times the GPU-hours over the tokens, exactly; the GPU-hours are
 * every GPU over the duration. */
static void test_cost_per_mtok_exact(void **state)
{
    (void)state;
    const char *sets[] = {"replicas=2", "tensor_parallel=2", "workload.num_requests=200",
                          "price.per_gpu_hour_usd=3.25", NULL};
    scn_scenario s;
    study_result *r = run_with(DEMO, sets, &s);
    double dur = study_metric(r, "duration"), gh = study_metric(r, "gpu_hours");
    double tok = study_metric(r, "total_input_tokens") + study_metric(r, "total_output_tokens");
    assert_true(dur > 0);
    assert_true(gh == 4 * dur / 3600);
    assert_true(study_metric(r, "cost_usd") == 3.25 * gh);
    assert_true(study_metric(r, "cost_per_mtok_usd") == 3.25 * gh * 1e6 / tok);
    assert_true(study_metric(r, "cost_per_output_mtok_usd") ==
                3.25 * gh * 1e6 / study_metric(r, "total_output_tokens"));
    test_free(r);
    scn_free(&s);
}

/* Energy: idle power throughout plus the rest up to full power while forward passes run; it
 * lies between all-idle and all-full, and the overrides move it as the model says. A light
 * load (one request every 5 s) leaves the GPU idle between requests. */
static void test_energy_model(void **state)
{
    (void)state;
    const char *full[] = {"workload.num_requests=100", "workload.arrival.rate=0.2",
                          "power={idle_w: 500, max_w: 500}", NULL};
    const char *idle0[] = {"workload.num_requests=100", "workload.arrival.rate=0.2",
                           "power={idle_w: 0, max_w: 500}", NULL};
    scn_scenario s;
    study_result *a = run_with(DEMO, full, &s);
    double dur = study_metric(a, "duration");
    /* at a constant 500 W whatever it does: 500 W x duration, exactly the GPU-hours' energy */
    assert_true(fabs(study_metric(a, "energy_kwh") - 500 * dur / 3.6e6) < 1e-12);
    scn_free(&s);
    study_result *b = run_with(DEMO, idle0, &s);
    double busy_kwh = study_metric(b, "energy_kwh");
    assert_true(busy_kwh > 0 && busy_kwh < 0.9 * study_metric(a, "energy_kwh"));
    /* with no idle power the energy is full power over the GPU's busy time: at most the
     * duration, at least the forward passes of the prefills and decodes it ran */
    assert_true(busy_kwh * 3.6e6 / 500 <= dur);
    /* the default: the catalog's 700 W and its idle floor */
    scn_free(&s);
    const char *def[] = {"workload.num_requests=100", "workload.arrival.rate=0.2", NULL};
    study_result *c = run_with(DEMO, def, &s);
    double e = study_metric(c, "energy_kwh"), lo = 105 * dur / 3.6e6, hi = 700 * dur / 3.6e6;
    assert_true(e > lo && e < hi);
    assert_true(fabs(study_metric(c, "joules_per_output_token") -
                     e * 3.6e6 / study_metric(c, "total_output_tokens")) < 1e-9);
    test_free(a);
    test_free(b);
    test_free(c);
    scn_free(&s);
}

/* A GPU without a price reports no cost (NaN), never a guessed one, and says so. */
static void test_no_price(void **state)
{
    (void)state;
    const char *sets[] = {"gpu=a100-40gb", "workload.num_requests=50", NULL};
    scn_scenario s;
    study_result *r = run_with(DEMO, sets, &s);
    assert_true(isnan(study_metric(r, "cost_usd")));
    assert_true(isnan(study_metric(r, "cost_per_mtok_usd")));
    assert_true(study_metric(r, "gpu_hours") > 0 && study_metric(r, "energy_kwh") > 0);
    assert_non_null(strstr(s.notes, "no list price"));
    test_free(r);
    scn_free(&s);
    /* power figures that contradict each other are refused */
    const char *bad[] = {"power={idle_w: 800, max_w: 700}", NULL};
    su_load(DEMO, bad, &s);
    su_refused(&s, "idle_w");
}

/* Both pools of a disaggregated deployment are paid for, each at its GPU's price. */
static void test_pd_pools(void **state)
{
    (void)state;
    const char *sets[] = {"workload.num_requests=100", NULL};
    scn_scenario s;
    study_result *r = run_with(PD70, sets, &s);
    double gpus = study_metric(r, "prefill_gpus") + study_metric(r, "decode_gpus");
    assert_true(fabs(study_metric(r, "gpu_hours") - gpus * study_metric(r, "duration") / 3600) <
                1e-12);
    eng_gpu g;
    assert_int_equal(cal_gpu_find(s.engine.pd.pool[0].gpu.name, &g), 0);
    if (!strcmp(s.engine.pd.pool[0].gpu.name, s.engine.pd.pool[1].gpu.name) && g.price_per_hour > 0)
        assert_true(fabs(study_metric(r, "cost_usd") -
                         g.price_per_hour * study_metric(r, "gpu_hours")) < 1e-9);
    test_free(r);
    scn_free(&s);
}

/* Admission control at the router sheds what an overloaded replica cannot take: the shed
 * requests are rejections (with their reason), and the admitted ones keep a short TTFT. */
static void test_admission_sheds(void **state)
{
    (void)state;
    const char *over[] = {"gpu=l40s",
                          "workload.num_requests=1500",
                          "workload.arrival.rate=8",
                          "workload.prompt_tokens={dist: uniform, min: 200, max: 2000}",
                          "workload.output_tokens={dist: uniform, min: 50, max: 400}",
                          NULL};
    const char *shed[] = {"gpu=l40s",
                          "workload.num_requests=1500",
                          "workload.arrival.rate=8",
                          "workload.prompt_tokens={dist: uniform, min: 200, max: 2000}",
                          "workload.output_tokens={dist: uniform, min: 50, max: 400}",
                          "admission={queue_depth: 5}",
                          NULL};
    scn_scenario s;
    study_result *a = run_with(DEMO, over, &s);
    scn_free(&s);
    study_result *b = run_with(DEMO, shed, &s);
    scn_free(&s);
    assert_true(study_metric(a, "rejected") == 0 && study_metric(a, "p99_ttft_ms") > 10000);
    assert_true(study_metric(b, "rejected") > 100);
    assert_true(study_metric(b, "failed") == study_metric(b, "rejected"));
    assert_true(b->tot.rejected_by[ENG_REJECT_SHED] == (int64_t)study_metric(b, "rejected"));
    assert_true(study_metric(b, "completed") + study_metric(b, "rejected") == 1500);
    assert_true(study_metric(b, "p99_ttft_ms") < 2000);
    test_free(a);
    test_free(b);
}

/* The fleet's metrics travel to run --json and sweep --json; `list gpus` shows prices. */
static void test_cli_outputs(void **state)
{
    (void)state;
    static char out[1 << 16], err[4096];
    assert_int_equal(e2e_mkdir(), 0);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s run %s --no-db --json --quiet --set workload.num_requests=50",
                            LLMSIM_BINARY, DEMO),
                     0);
    assert_non_null(strstr(out, "\"cost_per_mtok_usd\": "));
    assert_non_null(strstr(out, "\"joules_per_output_token\": "));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s sweep %s --db %s/s.db --json --quiet --jobs 1 --vary "
                            "workload.arrival.rate=2,4 --set workload.num_requests=50",
                            LLMSIM_BINARY, DEMO, e2e_dir),
                     0);
    assert_non_null(strstr(out, "\"cost_per_mtok_usd\": {\"mean\": "));
    assert_non_null(strstr(out, "\"gpu_hours\": {\"mean\": "));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s list gpus --json", LLMSIM_BINARY),
                     0);
    assert_non_null(strstr(out, "\"price_per_gpu_hour_usd\": 4.7599"));
    assert_non_null(strstr(out, "\"max_w\": 700"));
    e2e_rmdir();
}

LLMSIM_TEST_MAIN(NULL, NULL, test_catalog_rows, test_cost_per_mtok_exact, test_energy_model,
                 test_no_price, test_pd_pools, test_cli_outputs, test_admission_sheds)
