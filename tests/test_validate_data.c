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
#include "test_main.h"

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
    assert_int_equal(v.nrows, 917); /* every row of the table, none dropped */
    /* 57 of them repeat another row's measurement: 35 the same run in two source files, every
     * other column equal; 22 the same measured values to 12 digits under other columns (10
     * disaggregated TensorRT-LLM rows without worker counts carry configs 494's and 503's
     * measurements, whose rows give the deployment; 9 pairs differ in a measured value's last
     * digit; 3 repeat those): 860 measurements */
    assert_int_equal(ok + cannot + failed, 860);
    assert_int_equal(failed, 0);
    /* refused, each with its reason: 20 disaggregated TensorRT-LLM rows whose deployment is
     * not given (not the defaults'; 13 more repeat such rows), 7 rows without a client count;
     * the 15 MiniMax-M2.5 rows whose id (tp4 ep4) contradicts their columns (16 GPUs) are
     * priced as their id's layout */
    assert_int_equal(cannot, 27);
    int64_t no_layout = 0, no_clients = 0, repeats = 0, contradictory = 0, read_as_id = 0;
    for (int i = 0; i < v.nrows; i++) {
        const study_vrow *r = &v.rows[i];
        assert_true(r->status == STUDY_V_OK || (r->reason && *r->reason));
        repeats += r->status == STUDY_V_REPEAT;
        if (r->status == STUDY_V_CANNOT) {
            no_layout += strstr(r->reason, "without worker counts") != NULL &&
                         strstr(r->id, "_trtllm_") != NULL && strstr(r->id, "disagg") != NULL;
            no_clients += strstr(r->reason, "no client count") != NULL;
            contradictory += strstr(r->reason, "contradict") != NULL;
        }
        read_as_id += r->status == STUDY_V_OK && r->approx &&
                      strstr(r->approx, "its id's layout (tp, ep) contradicts") &&
                      strstr(r->id, "2026_04_06_minimax_m2_5_") == r->id;
        disagg += r->status == STUDY_V_OK && strstr(r->id, "disagg") != NULL;
        /* each backend is its engine preset: no engine is approximated by another (what remains
         * are the model reader's and the precision's notes: MiniMax-M2.5's MTP modules,
         * gpt-oss's weight-only MXFP4 on an H100) */
        if (r->status == STUDY_V_OK && r->approx && strstr(r->approx, "approximated"))
            fail_msg("%s: %s", r->group, r->approx);
        gptoss += r->status == STUDY_V_OK && strstr(r->group, "gpt-oss") != NULL;
    }
    assert_int_equal(repeats, 57);
    assert_int_equal(no_layout, 20);
    assert_int_equal(no_clients, 7);
    assert_int_equal(contradictory, 0);
    assert_int_equal(read_as_id, 15);
    assert_int_equal(disagg, 38); /* 107 less those 27, and 42 repeats */
    /* its 128-token windows bind: priced with the capped sums; 5 of them TensorRT-LLM's
     * (15 more repeat earlier rows) */
    assert_int_equal(gptoss, 59);
    study_vset_free(&v);
    /* the MoE rows (125 of Qwen3-235B-A22B, 30 of MiniMax-M2.5) are priced now */
    int64_t moe_ok = 0;
    load_ok(LLMSIM_SOURCE_DIR "/validation/aic-silicon-h100.yaml", "_agg_", &v);
    for (int i = 0; i < v.nrows; i++) {
        const study_vrow *r = &v.rows[i];
        moe_ok += r->status == STUDY_V_OK &&
                  (strstr(r->group, "Qwen3-235B") || strstr(r->group, "MiniMax-M2.5"));
    }
    assert_true(moe_ok >= 155);
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

static const char *set_of(const study_vrow *r, const char *key)
{
    size_t n = strlen(key);
    const char *found = NULL;
    for (int k = 0; k < r->nsets; k++) /* the last override of a key wins */
        if (strncmp(r->sets[k], key, n) == 0 && r->sets[k][n] == '=')
            found = r->sets[k] + n + 1;
    if (!found)
        fail_msg("%s: no override of %s", r->id, key);
    return found;
}

static const study_vrow *row_like(const study_vset *v, const char *frag)
{
    for (int i = 0; i < v->nrows; i++)
        if (strstr(v->rows[i].id, frag))
            return &v->rows[i];
    fail_msg("no row like %s", frag);
    return NULL;
}

/* The engine limits aiconfigurator's generator writes, the harness's protocol and the pools of
 * a disaggregated row, as the rows map them. */
static void test_shipped_limits(void **state)
{
    (void)state;
    study_vset v;
    load_ok(LLMSIM_SOURCE_DIR "/validation/aic-silicon-h100.yaml", NULL, &v);
    /* vLLM: max_num_batched_tokens = max_batch_size + ISL + 1500, max-model-len ISL + OSL + 1500 */
    const study_vrow *r = row_like(&v, "qwen3_32b_h100_sxm_vllm_agg_1024x128_c8_tp2_");
    assert_string_equal(set_of(r, "scheduler.max_num_seqs"), "8");
    assert_string_equal(set_of(r, "scheduler.max_num_batched_tokens"), "2532");
    assert_string_equal(set_of(r, "memory.max_model_len"), "2652");
    /* the protocol: a fresh burst of C, none left out; the requests each run measured, as its
     * means' whole nanoseconds give them: vLLM 0.12's 10C, at 128 clients too */
    assert_string_equal(set_of(r, "workload.num_requests"), "80");
    assert_int_equal(r->warmup, 0);
    r = row_like(&v, "qwen3_32b_h100_sxm_vllm_agg_1024x128_c128_tp2_");
    assert_string_equal(set_of(r, "workload.num_requests"), "1280");
    /* vLLM 0.12.0 rows of another harness (no silicon_concurrency, whose means give no count)
     * keep 20C */
    r = row_like(&v, "qwen3_32b_qwen3_32b_h100_sxm_vllm_agg_4000x1000_c_tp2_0_epnone_3");
    assert_string_equal(set_of(r, "workload.num_requests"), "960");
    /* TensorRT-LLM 1.0.0rc3's and SGLang 0.5.1.post1's, as their means' whole nanoseconds give
     * them: 20C, but 2,000 at 128 clients */
    r = row_like(&v, "llama_3_1_8b_instruct_h100_sxm_trtllm_agg_2048x256_c64_tp2_");
    assert_string_equal(set_of(r, "workload.num_requests"), "1280");
    r = row_like(&v, "llama_3_1_8b_instruct_h100_sxm_trtllm_agg_2048x256_c128_tp2_");
    assert_string_equal(set_of(r, "workload.num_requests"), "2000");
    r = row_like(&v, "sglang_agg_1024x128_c128_");
    assert_string_equal(set_of(r, "workload.num_requests"), "2000");
    /* a source whose means do not give the count keeps the template's 20C */
    r = row_like(&v, "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c64_tp4_ep4_");
    assert_string_equal(set_of(r, "workload.num_requests"), "1280");
    /* TensorRT-LLM: the same budget rounded up to 32 tokens */
    r = row_like(&v, "llama_3_1_8b_instruct_h100_sxm_trtllm_agg_1024x128_c8_tp1_");
    assert_string_equal(set_of(r, "scheduler.max_batch_size"), "8");
    assert_string_equal(set_of(r, "scheduler.max_num_tokens"), "2560");
    /* SGLang: max-prefill-tokens = ISL + 1500; 0.5.1.post1's template never passed mixed chunk */
    r = row_like(&v, "sglang_agg_2048x128_c16_tp2_");
    assert_string_equal(set_of(r, "scheduler.max_prefill_tokens"), "3548");
    for (int k = 0; k < r->nsets; k++)
        assert_null(strstr(r->sets[k], "enable_mixed_chunk"));
    /* the only aggregated rows stating attention data parallelism (tp_size 4 x
     * attention_dp_size 4, moe_ep_size 16, batch_size 16 of 64 clients) contradict their ids
     * (tp4 ep4): priced as the id's layout, one vLLM engine of 4 GPUs with the experts over 4,
     * the columns' 64 seats and that engine's budget, 64 + 1024 + 1500 */
    r = row_like(&v, "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c64_tp4_ep4_");
    assert_int_equal(r->status, STUDY_V_OK);
    assert_string_equal(set_of(r, "tensor_parallel"), "4");
    assert_string_equal(set_of(r, "data_parallel_attention"), "1");
    assert_string_equal(set_of(r, "expert_parallel"), "4");
    assert_string_equal(set_of(r, "scheduler.max_num_seqs"), "64");
    assert_string_equal(set_of(r, "scheduler.max_num_batched_tokens"), "2588");
    assert_string_equal(set_of(r, "workload.arrival.concurrency"), "64");
    assert_null(strstr(r->approx, "spans 8-GPU nodes"));
    /* the same limits as the row named alike whose columns give that layout */
    const study_vrow *twin =
        row_like(&v, "2026_03_25_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c64_");
    assert_string_equal(set_of(twin, "tensor_parallel"), "4");
    assert_string_equal(set_of(twin, "expert_parallel"), "4");
    assert_string_equal(set_of(twin, "scheduler.max_num_seqs"), "64");
    assert_string_equal(set_of(twin, "scheduler.max_num_batched_tokens"), "2588");
    /* batch_size a quarter of the 192 clients with no attention DP stated: attention DP over
     * 4 ranks of the 4 GPUs; its "fp8" is the MXFP4 checkpoint TensorRT-LLM runs as W4A16 on
     * Hopper (weight-only mxfp4), not W4A8 */
    r = row_like(&v, "openai_gpt_oss_120b_h100_sxm_trtllm_agg_4000x1000_c192_tp4_");
    assert_string_equal(set_of(r, "data_parallel_attention"), "4");
    assert_string_equal(set_of(r, "tensor_parallel"), "1");
    assert_string_equal(set_of(r, "scheduler.max_batch_size"), "192");
    assert_string_equal(set_of(r, "dtype"), "mxfp4");
    /* a disaggregated row without worker counts that carries config 494's measurement is
     * compared through the configured row */
    r = row_like(
        &v, "2026_03_25_deepseek_r1_h100_sxm_trtllm_fp8_disagg_8192x1024_c6_tp16_0_ep16_0_878");
    assert_int_equal(r->status, STUDY_V_REPEAT);
    assert_non_null(strstr(r->reason, "dsr1_h100_trtllm_fp8_disagg_8192x1024_c6_cfg494 (line 2): "
                                      "the same measured values to 12 digits"));
    /* a disaggregated row with its deployment: its pools, workers and batch limits */
    r = row_like(&v, "dsr1_h100_trtllm_fp8_disagg_1024x1024_c6_cfg494");
    assert_int_equal(r->status, STUDY_V_OK);
    assert_string_equal(set_of(r, "decode.replicas"), "3");
    assert_string_equal(set_of(r, "decode.tensor_parallel"), "16");
    assert_string_equal(set_of(r, "decode.scheduler.max_batch_size"), "2");
    assert_string_equal(set_of(r, "prefill.data_parallel_attention"), "16");
    assert_string_equal(set_of(r, "prefill.scheduler.max_num_tokens"), "40448"); /* 2528 x 16 */
    /* the same measurement without its deployment: compared through it */
    r = row_like(&v, "2026_03_25_deepseek_r1_h100_sxm_trtllm_fp8_disagg_1024x1024_c6_");
    assert_int_equal(r->status, STUDY_V_REPEAT);
    assert_non_null(strstr(r->reason, "dsr1_h100_trtllm_fp8_disagg_1024x1024_c6_cfg494"));
    /* another measurement at 6 clients without its deployment: refused (it is not the
     * defaults' 1 x 128, and 6 clients may be 3 x 2, 2 x 3 or 6 x 1) */
    r = row_like(
        &v, "2026_03_25_deepseek_r1_h100_sxm_trtllm_fp8_disagg_1024x1024_c6_tp16_0_ep16_0_869");
    assert_int_equal(r->status, STUDY_V_CANNOT);
    /* an SGLang row without worker counts: one worker per pool, the columns' layout */
    r = row_like(&v, "2026_03_25_deepseek_r1_h100_sxm_sglang_fp8_disagg_1024x1024_c16_");
    assert_int_equal(r->status, STUDY_V_OK);
    assert_string_equal(set_of(r, "prefill.replicas"), "1");
    assert_string_equal(set_of(r, "prefill.tensor_parallel"), "16");
    assert_string_equal(set_of(r, "decode.scheduler.max_running_requests"), "128");
    assert_string_equal(set_of(r, "prefill.scheduler.max_prefill_tokens"),
                        "2524"); /* 1024 + 1500 */
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

LLMSIM_TESTS(tests, test_shipped_serving, test_shipped_limits, test_shipped_operators);

int main(void)
{
    if (access(LLMSIM_SHARED_DIR "/data/validation/aic-silicon-h100.csv", R_OK) != 0 ||
        access(LLMSIM_SHARED_DIR "/data/vidur/data/profiling", R_OK) != 0) {
        printf("skipped: no %s/data/validation or data/vidur\n", LLMSIM_SHARED_DIR);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
