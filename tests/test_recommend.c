/*
 * test_recommend.c: `llmsim recommend` on a small question (Llama-3-8B on H100, two GPUs):
 *  - every point of the front meets the SLOs in an independent run at seeds the search never
 *    used, and no simulated point that met them dominates a front point;
 *  - each launch command starts the right program and names only flags the engine documents
 *    (lists below, taken from each engine's own CLI source);
 *  - the candidates add up: pruned by fit, by roofline, screened out, simulated;
 *  - the best simulated candidate's siblings in seats and token budget are simulated too;
 *  - a budget too small for the weights is pruned by fit; --exhaustive simulates every
 *    candidate that fits and finds a front at least as good at its best point;
 *  - the CLI prints the table, the JSON and the front's points file.
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
#include "expect_text.h"
#include "test_main.h"

static const char text[] = "name: rec\nseed: 2\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                           "workload:\n  num_requests: 120\n"
                           "  arrival: {process: poisson, rate: 1}\n"
                           "  prompt_tokens: {dist: uniform, min: 300, max: 700}\n"
                           "  output_tokens: {dist: uniform, min: 30, max: 70}\n";

/* The flags each engine documents, read from its own source:
 * vLLM vllm/engine/arg_utils.py (EngineArgs.add_cli_args), SGLang
 * python/sglang/srt/server_args.py (ServerArgs fields), TensorRT-LLM
 * tensorrt_llm/commands/serve.py (the serve command's click options). */
static const char *const documented[][16] = {
    {"vllm", "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
     "--enable-expert-parallel", "--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-dtype",
     "--gpu-memory-utilization", "--block-size", "--kv-transfer-config", "--async-scheduling",
     NULL},
    {"sglang", "--model-path", "--tp-size", "--pp-size", "--dp-size", "--ep-size",
     "--enable-dp-attention", "--max-running-requests", "--chunked-prefill-size",
     "--kv-cache-dtype", "--mem-fraction-static", "--disaggregation-mode",
     "--disaggregation-transfer-backend", NULL},
    {"trtllm", "--backend", "--tp_size", "--pp_size", "--ep_size", "--max_batch_size",
     "--max_num_tokens", "--kv_cache_free_gpu_memory_fraction", "--extra_llm_api_options",
     "--enable_chunked_prefill", NULL}};

static void check_launch(const char *engine, const char *cmd)
{
    const char *program = strcmp(engine, "vllm") == 0     ? "vllm serve "
                          : strcmp(engine, "sglang") == 0 ? "python -m sglang.launch_server "
                                                          : "trtllm-serve serve ";
    const char *const *flags = NULL;
    for (size_t e = 0; e < sizeof documented / sizeof documented[0]; e++)
        if (strcmp(documented[e][0], engine) == 0)
            flags = documented[e] + 1;
    assert_non_null(flags);
    char *copy = strdup(cmd), *save = NULL;
    int lines = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *start = strstr(line, program);
        if (!start)
            fail_msg("%s: '%s' does not start %s", engine, line, program);
        lines++;
        char *comment = strchr(line, '#');
        if (comment)
            *comment = '\0';
        char *s2 = NULL;
        for (char *t = strtok_r(line, " ", &s2); t; t = strtok_r(NULL, " ", &s2)) {
            if (strncmp(t, "--", 2) != 0)
                continue;
            int known = 0;
            for (int i = 0; flags[i]; i++)
                known |= strcmp(flags[i], t) == 0;
            if (!known)
                fail_msg("%s: flag %s is not in its documented CLI", engine, t);
        }
    }
    assert_true(lines >= 1);
    free(copy);
}

static void setup(study_recommend *r, const char *slo)
{
    su_recommend_setup(r, "rec.yaml", text, slo, 0.15);
    r->gpus[r->ngpus++] = "h100-sxm";
    r->engines[r->nengines++] = "vllm";
    r->engines[r->nengines++] = "sglang";
    r->engines[r->nengines++] = "trtllm";
    r->budget = 2;
}

/* setup() narrowed to aggregated vLLM alone. */
static void setup_vllm(study_recommend *r, const char *slo)
{
    setup(r, slo);
    r->no_disagg = 1;
    r->engines[0] = "vllm";
    r->nengines = 1;
}

static double best_front(const study_recommend *r)
{
    double best = 0;
    for (int i = 0; i < r->np; i++)
        if (r->p[i].front && r->p[i].tps_gpu > best)
            best = r->p[i].tps_gpu;
    return best;
}

static void front_meets_slos(void **state)
{
    (void)state;
    study_recommend r;
    setup(&r, "ttft_p99=400ms,tpot_p99=25ms");
    su_recommend_run(&r);
    print_message("%d candidates: %d fit, %d roofline, %d screened, %d simulated (%lld runs)\n",
                  r.nc, r.n_fit, r.n_roofline, r.n_screened, r.n_sim, (long long)r.cap.runs);
    assert_int_equal(r.n_fit + r.n_roofline + r.n_screened + r.n_sim, r.nc);
    assert_true(r.n_sim >= 1 && r.n_sim <= r.nc);
    int nfront = 0;
    for (int i = 0; i < r.np; i++) {
        study_rec_point *p = &r.p[i];
        if (!p->front)
            continue;
        nfront++;
        const study_rec_cand *k = &r.c[p->cand];
        char launch[2048];
        study_launch(k, "meta-llama/Meta-Llama-3-8B-Instruct", launch, sizeof launch);
        print_message("front: %s at %.3g req/s: %.0f tok/s/GPU, %.1f tok/s/user\n  %s\n",
                      k->choice.name, p->rate, p->tps_gpu, p->tps_user, launch);
        assert_true(p->confirmed == 1 && p->t.ok && p->confirm.ok);
        check_launch(k->engine, launch);
        /* an independent run at seeds the search never used */
        study_capacity c;
        memset(&c, 0, sizeof c);
        c.file = "rec.yaml";
        c.text = text;
        c.check_every = 4096;
        c.seed = 777;
        c.seed_given = 1;
        c.nslo = r.cap.nslo;
        memcpy(c.slo, r.cap.slo, sizeof c.slo);
        c.choice[0] = k->choice;
        c.ncmp = 1;
        study_trial t;
        sim_err err;
        if (study_capacity_probe(&c, 0, "search", STUDY_LOAD_RATE, p->rate, 1, NULL, &t, &err))
            fail_msg("%s", err.msg);
        print_message("  at seed 777: p99 TTFT %.1f, p99 TPOT %.2f: %s\n", t.value[0], t.value[1],
                      t.ok ? "meets" : "misses");
        assert_true(t.ok);
        /* Pareto: no simulated point that met the SLOs (and was not refuted) dominates it */
        for (int j = 0; j < r.np; j++) {
            const study_rec_point *q = &r.p[j];
            if (j == i || !q->t.ok || q->confirmed == 0)
                continue;
            assert_false(q->tps_gpu > p->tps_gpu && q->tps_user > p->tps_user);
        }
    }
    assert_true(nfront >= 1);
    /* exhaustive: every candidate that fits simulated; its best is no worse */
    study_recommend x;
    setup(&x, "ttft_p99=400ms,tpot_p99=25ms");
    x.exhaustive = 1;
    su_recommend_run(&x);
    print_message("exhaustive: %d simulated, best %.0f tok/s/GPU; recommend: %d, best %.0f\n",
                  x.n_sim, best_front(&x), r.n_sim, best_front(&r));
    assert_int_equal(x.n_sim, x.nc - x.n_fit - x.n_roofline);
    assert_true(x.n_sim >= r.n_sim);
    assert_true(best_front(&x) >= 0.9 * best_front(&r));
    study_recommend_free(&x);
    study_recommend_free(&r);
}

/* Llama-3-70B (141 GB) on two H100s: nothing fits one GPU; the 2-GPU units are pruned by
 * fit when their KV cannot hold a request, else simulated. */
static void pruned_by_fit(void **state)
{
    (void)state;
    study_recommend r;
    setup_vllm(&r, "ttft_p99=2s,tpot_p99=100ms");
    r.cap.sets = (const char *const[]){"model=llama-3-70b"};
    r.cap.nsets = 1;
    su_recommend_run(&r);
    int one_gpu = 0;
    for (int i = 0; i < r.nc; i++)
        if (r.c[i].gpus == 1) {
            one_gpu++;
            assert_int_equal(r.c[i].state, STUDY_REC_FIT);
            assert_non_null(strstr(r.c[i].why, "does not fit"));
        }
    print_message("%d one-GPU candidates pruned by fit: %s\n", one_gpu, r.c[0].why);
    assert_true(one_gpu >= 1);
    study_recommend_free(&r);
}

/* Llama-3.1-405B in bf16 (811 GB) does not fit one node of 8 H100s (640 GB): every unit of
 * one node is pruned by fit, and the front is pipelines of TP 8 a node, PP 2 or 4 (each stage
 * a node's share of the 126 layers), launched with the engines' pipeline flags. */
static void pipeline_past_one_node(void **state)
{
    (void)state;
    study_recommend r;
    setup_vllm(&r, "ttft_p99=5s,tpot_p99=200ms");
    r.cap.sets = (const char *const[]){"model=llama-3.1-405b"};
    r.cap.nsets = 1;
    r.budget = 0;
    r.target = 2;
    su_recommend_run(&r);
    int pipelines = 0;
    for (int i = 0; i < r.nc; i++) {
        const study_rec_cand *k = &r.c[i];
        assert_int_equal(k->gpus, k->lay.tp * k->lay.dp * k->lay.pp);
        if (k->gpus <= 8)
            assert_int_equal(k->state, STUDY_REC_FIT);
        pipelines += k->lay.pp > 1 && k->gpus > 8;
    }
    assert_true(pipelines >= 2); /* TP 8 x PP 2 and x PP 4 */
    assert_true(r.best >= 0);
    int front = 0;
    char launch[2048];
    for (int i = 0; i < r.np; i++) {
        const study_rec_cand *k = &r.c[r.p[i].cand];
        if (!r.p[i].front)
            continue;
        front++;
        assert_int_equal(k->lay.tp, 8);
        assert_true(k->lay.pp == 2 || k->lay.pp == 4);
        assert_true(strstr(k->choice.name, "pp") != NULL);
        study_launch(k, "meta-llama/Llama-3.1-405B-Instruct", launch, sizeof launch);
        check_launch(k->engine, launch);
        assert_non_null(strstr(launch, "--pipeline-parallel-size"));
    }
    const study_rec_point *b = &r.p[r.best];
    print_message("%d pipelined candidates, %d front points; recommended %s: %d units of %d GPUs, "
                  "cluster %s\n",
                  pipelines, front, r.c[b->cand].choice.name, b->units, r.c[b->cand].gpus,
                  r.cluster_ok ? "meets" : "misses");
    assert_true(front >= 1);
    assert_int_equal(r.cluster_ok, 1);
    study_recommend_free(&r);
}

/* A model that fits one GPU is offered pipelines within the node too (TP x PP of 2 GPUs), and
 * each is launched with every engine's own pipeline flag. */
static void pipeline_within_node(void **state)
{
    (void)state;
    study_recommend r;
    setup(&r, "ttft_p99=2s,tpot_p99=100ms");
    r.no_disagg = 1;
    r.top = 1;
    su_recommend_run(&r);
    static const char *const pp_flag[][2] = {{"vllm", "--pipeline-parallel-size 2"},
                                             {"sglang", "--pp-size 2"},
                                             {"trtllm", "--pp_size 2"}};
    char launch[2048];
    for (size_t e = 0; e < 3; e++) {
        int found = 0;
        for (int i = 0; i < r.nc && !found; i++) {
            const study_rec_cand *k = &r.c[i];
            if (strcmp(k->engine, pp_flag[e][0]) != 0 || k->lay.pp != 2)
                continue;
            found = 1;
            assert_int_equal(k->gpus, 2);
            assert_int_equal(k->lay.tp, 1);
            study_launch(k, "meta-llama/Meta-Llama-3-8B-Instruct", launch, sizeof launch);
            check_launch(k->engine, launch);
            assert_non_null(strstr(launch, pp_flag[e][1]));
        }
        assert_true(found);
    }
    study_recommend_free(&r);
}

/* With a target rate: the point with the fewest GPUs, its units simulated as a cluster. */
static void target_rate_cluster(void **state)
{
    (void)state;
    study_recommend r;
    setup_vllm(&r, "ttft_p99=400ms,tpot_p99=25ms");
    r.budget = 0;
    r.target = 60;
    su_recommend_run(&r);
    assert_true(r.best >= 0);
    const study_rec_point *b = &r.p[r.best];
    print_message("recommended %s: %d units of %d GPUs at %.3g req/s each; cluster %s\n",
                  r.c[b->cand].choice.name, b->units, r.c[b->cand].gpus, b->rate,
                  r.cluster_ok ? "meets" : "misses");
    assert_true(b->front && b->units * b->rate >= 60 * (1 - 1e-9));
    assert_int_equal(r.cluster_ok, 1);
    assert_true(r.cluster.ok && r.cluster.completed > 0);
    /* the fewest GPUs of the front (before the cluster check added any units) */
    int gpus = (b->units - r.units_added) * r.c[b->cand].gpus;
    for (int i = 0; i < r.np; i++)
        if (r.p[i].front && &r.p[i] != b)
            assert_true(r.p[i].units * r.c[r.p[i].cand].gpus >= gpus);
    study_recommend_free(&r);
}

/* The screen cannot see seats or a token budget act as admission control: the best simulated
 * candidate's siblings in those settings are simulated too, whatever the screen thought. */
static void best_siblings_simulated(void **state)
{
    (void)state;
    study_recommend r;
    setup_vllm(&r, "ttft_p99=400ms,tpot_p99=25ms");
    r.no_knobs = 0;
    r.top = 2;
    su_recommend_run(&r);
    int best = -1;
    for (int i = 0; i < r.nc; i++)
        if (r.c[i].state == STUDY_REC_SIMULATED && r.c[i].ans.verdict == STUDY_FOUND &&
            (best < 0 || r.c[i].ans.rate / r.c[i].gpus > r.c[best].ans.rate / r.c[best].gpus))
            best = i;
    assert_true(best >= 0);
    const study_rec_cand *b = &r.c[best];
    int siblings = 0;
    for (int i = 0; i < r.nc; i++) {
        const study_rec_cand *k = &r.c[i];
        if (i == best || k->a_tps_gpu <= 0 || k->gpus != b->gpus || k->kv_fp8 != b->kv_fp8 ||
            memcmp(&k->lay, &b->lay, sizeof k->lay) != 0)
            continue;
        print_message("sibling of %s: %s, %s\n", b->choice.name, k->choice.name,
                      k->state == STUDY_REC_SIMULATED ? "simulated" : "not simulated");
        assert_int_equal(k->state, STUDY_REC_SIMULATED);
        siblings++;
    }
    print_message("%d simulated, %d of them siblings of the best\n", r.n_sim, r.n_refined);
    assert_true(siblings >= 1 && r.n_refined >= 1 && r.n_refined <= siblings);
    assert_int_equal(r.n_fit + r.n_roofline + r.n_screened + r.n_sim, r.nc);
    study_recommend_free(&r);
}

static void cli_prints_front(void **state)
{
    (void)state;
    char out[65536], err[65536], path[600];
    snprintf(path, sizeof path, "%s/front.png", e2e_dir);
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s recommend --model meta-llama/Meta-Llama-3-8B-Instruct --gpu h100 --gpus 2 "
                    "--engines vllm,sglang --isl 500 --osl 50 --requests 100 --no-knobs --top 3 "
                    "--precision 0.2 --slo ttft_p99=400ms,tps_per_user=40 --db %s/r.db -o %s",
                    LLMSIM_BINARY, e2e_dir, path);
    print_message("%s%s", err, out);
    assert_true(st == 0 || st == 3); /* 3: no gnuplot */
    assert_non_null(strstr(out, "Pareto front"));
    assert_non_null(strstr(out, "[1] "));
    assert_non_null(strstr(out, "--model-path meta-llama/Meta-Llama-3-8B-Instruct")
                        ?: strstr(out, "vllm serve meta-llama/Meta-Llama-3-8B-Instruct"));
    assert_non_null(strstr(out, "simulated candidates"));
    assert_non_null(strstr(out, "recommended: ["));
    /* the recommended point's validated error, on the line after it */
    assert_non_null(strstr(out, "]: TTFT validated to a median")
                        ?: strstr(out, "]: not validated"));
    assert_non_null(strstr(err, "recommend: "));
    snprintf(path, sizeof path, "%s/front.points", e2e_dir);
    e2e_sh(out, sizeof out, NULL, 0, "cat %s", path);
    assert_non_null(strstr(out, "# series: "));
    /* the store holds every probe as one capacity search */
    snprintf(path, sizeof path, "%s/r.db", e2e_dir);
    assert_true(e2e_query_int(path, "SELECT count(*) FROM capacity_probes") > 3);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s recommend --model llama-3-8b --gpu h100 --gpus 2 --isl 500 --osl 50 "
                "--requests 100 --no-knobs --no-disagg --top 2 --precision 0.3 "
                "--slo ttft_p99=400ms --engines vllm --db %s/r.db --json",
                LLMSIM_BINARY, e2e_dir);
    assert_int_equal(st, 0);
    expect_all(out,
               FRAGS("\"front\": [", "\"launch\": \"vllm serve meta-llama/Meta-Llama-3-8B-Instruct",
                     "\"recommended_validated\": \"TTFT validated to a median",
                     "vllm hopper dense rows"));
    /* a misspelt engine is named with the nearest */
    e2e_llmsim_says(err, sizeof err, 2, "nearest: sglang",
                    "recommend --model llama-3-8b --gpu h100 --gpus 2 --isl 5 --osl 5 --slo "
                    "ttft_p99=1s --engines sglan");
}

LLMSIM_TESTS(tests, front_meets_slos, pruned_by_fit, target_rate_cluster, best_siblings_simulated,
             cli_prints_front, pipeline_past_one_node, pipeline_within_node);

int main(void)
{
    return e2e_run_group(tests);
}
