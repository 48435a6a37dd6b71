/*
 * test_validate_data.c: the shipped validation sets over ../shared/data: every row of the
 * aiconfigurator table is kept (predicted or refused with a reason), a few of its rows run end
 * to end, and Vidur's attention table is read and predicted. Exits 77 (skipped) when the shared
 * data is absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "study_validate.h"

static void load_ok(const char *path, const char *match, study_vset *v)
{
    sim_err err = {{0}};
    if (study_vset_load(path, match, v, &err) != 0)
        fail_msg("%s", err.msg);
}

static void test_shipped_serving(void **state)
{
    (void)state;
    study_vset v;
    sim_err err = {{0}};
    load_ok(LLMSIM_SOURCE_DIR "/validation/aic-silicon-h100.yaml", NULL, &v);
    int64_t ok, cannot, failed, disagg = 0, gptoss = 0;
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_int_equal(ok + cannot + failed, 917); /* every row of the table, none dropped */
    assert_true(ok > 0);
    for (int i = 0; i < v.nrows; i++) {
        const study_vrow *r = &v.rows[i];
        assert_true(r->status == STUDY_V_OK || (r->reason && *r->reason));
        disagg += r->status == STUDY_V_CANNOT && strstr(r->reason, "disaggregated") != NULL;
        /* each backend is its engine preset: no engine is approximated by another (what remains
         * are the model reader's and the precision's notes: MiniMax-M2.5's MTP modules,
         * gpt-oss's weight-only MXFP4 on an H100) */
        if (r->status == STUDY_V_OK && r->approx && strstr(r->approx, "approximated"))
            fail_msg("%s: %s", r->group, r->approx);
        gptoss += r->status == STUDY_V_OK && strstr(r->group, "gpt-oss") != NULL;
    }
    assert_int_equal(disagg, 107);
    assert_int_equal(gptoss, 69); /* its 128-token windows bind: priced with the capped sums */
    study_vset_free(&v);
    /* the MoE rows (125 of Qwen3-235B-A22B, 30 of MiniMax-M2.5) are priced now */
    int64_t moe_ok = 0;
    load_ok(LLMSIM_SOURCE_DIR "/validation/aic-silicon-h100.yaml", "_agg_", &v);
    for (int i = 0; i < v.nrows; i++) {
        const study_vrow *r = &v.rows[i];
        moe_ok += r->status == STUDY_V_OK &&
                  (strstr(r->group, "Qwen3-235B") || strstr(r->group, "MiniMax-M2.5"));
    }
    assert_true(moe_ok >= 150);
    study_vset_free(&v);
    /* a few rows end to end */
    load_ok(LLMSIM_SOURCE_DIR "/validation/aic-silicon-h100.yaml", "_1024x128_c16_tp1_", &v);
    if (study_vset_run(&v, NULL, 2, STORE_SUMMARY, NULL, NULL, &err))
        fail_msg("%s", err.msg);
    study_vset_counts(&v, &ok, &cannot, &failed);
    assert_true(ok >= 3 && failed == 0);
    for (int i = 0; i < v.nrows; i++)
        if (v.rows[i].status == STUDY_V_OK)
            assert_true(v.rows[i].predicted[0] > 0 && v.rows[i].predicted[1] > 0);
    study_vset_free(&v);
}

static void test_shipped_operators(void **state)
{
    (void)state;
    study_vset v;
    load_ok(LLMSIM_SOURCE_DIR "/validation/vidur-a100-ops.yaml", "llama-3-70b tp2 attn", &v);
    int prefill = 0, decode = 0;
    for (int i = 0; i < v.nrows; i++) {
        prefill += strcmp(v.rows[i].group, "attn_prefill") == 0;
        decode += strcmp(v.rows[i].group, "attn_decode") == 0;
        assert_true(v.rows[i].predicted[0] > 0);
    }
    assert_true(prefill > 1000 && decode > 1000);
    study_vset_free(&v);
}

int main(void)
{
    if (access(LLMSIM_SHARED_DIR "/data/validation/aic-silicon-h100.csv", R_OK) != 0 ||
        access(LLMSIM_SHARED_DIR "/data/vidur/data/profiling", R_OK) != 0) {
        printf("skipped: no %s/data/validation or data/vidur\n", LLMSIM_SHARED_DIR);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_serving),
        cmocka_unit_test(test_shipped_operators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
