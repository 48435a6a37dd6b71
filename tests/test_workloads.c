/*
 * test_workloads.c: workloads where token identity matters, and the engine presets, end to end
 * through study/ as `llmsim run` runs them:
 *  - a shared system prompt: TTFT drops with prefix caching on;
 *  - sessions: turn k+1's prompt is turn k's context plus new tokens, after the think time;
 *  - closed-loop clients: fixed lengths stay in lock-step without a ramp and do not with one;
 *  - presets: what `engine:` sets, its errors, the note for V0-only keys, async_scheduling.
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

#include "preset.h"

#include "study.h"
#include "test_main.h"

static int load(const char *text, const char *const *sets, int nsets, scn_scenario *s)
{
    sim_err err;
    int rc = scn_load_text("test.yaml", text, sets, nsets, study_resolver(), s, &err);
    if (rc != 0)
        print_message("load: %s\n", err.msg);
    return rc;
}

static double metric(const scn_scenario *s, const study_hooks *hooks, const char *name)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    study_hooks h = hooks ? *hooks : (study_hooks){0};
    h.check_every = 4096;
    if (study_run(s, s->seed, NULL, NULL, &h, r, &err) != 0)
        fail_msg("run: %s", err.msg);
    double v = study_metric(r, name);
    free(r);
    return v;
}

/* ================= a shared system prompt ================= */

static const char shared_prompt[] = "name: sp\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                                    "workload:\n  num_requests: 400\n"
                                    "  arrival: {process: poisson, rate: 4}\n"
                                    "  prompt_tokens: {dist: uniform, min: 50, max: 200}\n"
                                    "  output_tokens: 100\n"
                                    "  shared_prefix: {tokens: 3000, groups: 4}\n";

static void test_shared_system_prompt_ttft(void **state)
{
    scn_scenario s;
    const char *off[] = {"scheduler.enable_prefix_caching=false"};
    assert_int_equal(load(shared_prompt, NULL, 0, &s), 0);
    double on_ttft = metric(&s, NULL, "mean_ttft_ms"), on_hit = metric(&s, NULL, "prefix_hit_rate");
    scn_free(&s);
    assert_int_equal(load(shared_prompt, off, 1, &s), 0);
    double off_ttft = metric(&s, NULL, "mean_ttft_ms"),
           off_hit = metric(&s, NULL, "prefix_hit_rate");
    scn_free(&s);
    print_message("shared 3000-token prompt: mean TTFT %.2f ms cached (hit rate %.3f), %.2f ms "
                  "without (%.3f)\n",
                  on_ttft, on_hit, off_ttft, off_hit);
    assert_true(on_hit > 0.9 && off_hit == 0);
    assert_true(on_ttft < 0.5 * off_ttft);
}

/* ================= sessions ================= */

static const char sessions[] =
    "name: s\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
    "workload:\n  num_requests: 300\n"
    "  arrival: {process: closed, concurrency: 8}\n"
    "  output_tokens: {dist: uniform, min: 20, max: 80}\n"
    "  sessions: {turns: {dist: uniform, min: 2, max: 6}, user_tokens: {dist: uniform, min: 10, "
    "max: 100}, system_prompt_tokens: 500, think_time_ms: 250}\n";

/* Turn k+1 of a session: its prompt is turn k's prompt, turn k's answer and new tokens, as the
 * same content: its segments start with turn k's. */
static void test_session_turns_grow_the_context(void **state)
{
    scn_scenario s;
    assert_int_equal(load(sessions, NULL, 0, &s), 0);
    sim_err err;
    scn_source *src = scn_source_new(&s, 1, &err);
    const eng_source_ops *ops = scn_source_ops();
    eng_arrival a;
    assert_int_equal(ops->next(src, 0, &a, &err), ENG_SRC_OK);
    assert_int_equal(a.t, 0);
    assert_true(a.nseg == 2 && a.seg[0].len == 500);
    eng_segment first[2];
    memcpy(first, a.seg, sizeof first);
    int32_t prompt = a.prompt, output = a.output;
    uint64_t tag = a.tag, out_id = a.out_id;
    /* the other seven clients start at 0 too; then nothing is due until a turn is answered */
    for (int i = 1; i < 8; i++)
        assert_int_equal(ops->next(src, 0, &a, &err), ENG_SRC_OK);
    assert_int_equal(ops->next(src, 0, &a, &err), ENG_SRC_LATER);
    eng_request done = {.tag = tag, .status = ENG_RQ_FINISHED, .output = output};
    ops->on_done(src, 1000, &done);
    /* nothing due before the think time; the engine is told when to ask again */
    assert_int_equal(ops->next(src, 1000, &a, &err), ENG_SRC_LATER);
    assert_int_equal(a.t, 1000 + 250 * SIM_NS_PER_MS);
    assert_int_equal(ops->next(src, a.t, &a, &err), ENG_SRC_OK);
    assert_int_equal(a.tag, tag);
    assert_true(a.nseg == 4 && !memcmp(a.seg, first, sizeof first));
    assert_true(a.seg[2].id == out_id && a.seg[2].len == output);
    assert_int_equal(a.prompt, prompt + output + a.seg[3].len);
    scn_source_free(src);
    scn_free(&s);
}

/* Engine runs: never more than `concurrency` turns in flight, each next turn a think time after
 * the previous answer, and most of each prompt cached. */
typedef struct turns {
    eng_request rq[400];
    int n;
} turns;

static void keep_turn(void *st, const eng_request *rq)
{
    turns *t = st;
    t->rq[t->n++] = *rq;
}

static const eng_recorder_ops turn_rec = {keep_turn, NULL, NULL, NULL};

static void test_sessions_closed_loop(void **state)
{
    scn_scenario s;
    assert_int_equal(load(sessions, NULL, 0, &s), 0);
    turns *t = calloc(1, sizeof *t);
    study_hooks h = {.rec = &turn_rec, .rec_st = t};
    double hit = metric(&s, &h, "prefix_hit_rate");
    assert_int_equal(t->n, 300);
    for (int i = 0; i < t->n; i++) {
        int inflight = 0;
        for (int j = 0; j < t->n; j++)
            inflight +=
                t->rq[j].t_arrival <= t->rq[i].t_arrival && t->rq[j].t_finish > t->rq[i].t_arrival;
        assert_true(inflight <= 8);
    }
    print_message("300 turns of 8 concurrent sessions: prefix hit rate %.3f\n", hit);
    assert_true(hit > 0.6);
    free(t);
    scn_free(&s);
}

/* A closed loop whose sessions' first turns never fit the context: each first turn is sent and
 * turned away by the engine, so the run ends with every request rejected (found by fuzzing: the
 * source started sessions forever at one instant, never emitting a turn). */
static void test_sessions_first_turn_too_long(void **state)
{
    static const char text[] =
        "name: long\nseed: 4\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
        "workload:\n  num_requests: 60\n  arrival: {process: closed, concurrency: 4}\n"
        "  output_tokens: 20\n"
        "  sessions: {turns: 4, user_tokens: {dist: lognormal, mean: 91596, sigma: 0.4}}\n";
    scn_scenario s;
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_true(metric(&s, NULL, "rejected") == 60);
    assert_true(metric(&s, NULL, "completed") == 0);
    scn_free(&s);
}

/* Agents add tool output after the first turn (tool_tokens), not user tokens; sessions started
 * by a rate process (2 per second) overlap and still send each turn after its predecessor's
 * answer. */
static void test_agent_and_open_sessions(void **state)
{
    static const char agent[] =
        "name: a\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
        "workload:\n  num_requests: 200\n  arrival: {process: poisson, rate: 2}\n"
        "  output_tokens: 30\n"
        "  sessions: {kind: agent, turns: 3, user_tokens: 50, tool_tokens: 300, "
        "think_time_ms: 100}\n";
    scn_scenario s;
    assert_int_equal(load(agent, NULL, 0, &s), 0);
    sim_err err;
    scn_source *src = scn_source_new(&s, 1, &err);
    eng_arrival a;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &err), ENG_SRC_OK);
    assert_true(a.nseg == 1 && a.seg[0].len == 50 && a.prompt == 50);
    eng_request done = {.tag = a.tag, .status = ENG_RQ_FINISHED, .output = 30};
    scn_source_ops()->on_done(src, 5000, &done);
    int64_t now = 5000;
    int rc;
    do { /* the next turn (or another session's first) */
        while ((rc = scn_source_ops()->next(src, now, &a, &err)) == ENG_SRC_LATER)
            now = a.t;
        now = a.t;
    } while (a.tag != done.tag);
    assert_true(a.nseg == 3 && a.seg[2].len == 300 && a.prompt == 50 + 30 + 300);
    scn_source_free(src);
    turns *t = calloc(1, sizeof *t);
    study_hooks h = {.rec = &turn_rec, .rec_st = t};
    metric(&s, &h, "completed");
    assert_int_equal(t->n, 200);
    int overlap = 0;
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->n; j++)
            overlap |= t->rq[i].tag != t->rq[j].tag && t->rq[j].t_arrival > t->rq[i].t_arrival &&
                       t->rq[j].t_arrival < t->rq[i].t_finish;
    assert_true(overlap);
    free(t);
    scn_free(&s);
}

/* ================= closed-loop ramp =================
 * vLLM V1 mixes prefill chunks with decodes, so a client admitted a few steps after another
 * finishes a few steps earlier and stays apart. (Under a prefill-first policy such as vllm-v0,
 * clients that arrive while the first prompts prefill all start decoding in the same step and
 * fall back into lock-step; the ramp must then be longer than a request.) */

typedef struct iters {
    int64_t all_together; /* iterations after the ramp that prefill every client's prompt */
    int64_t after;        /* iterations after the ramp that prefill at all */
    int64_t ramp_end;
} iters;

static void count_iter(void *st, const eng_iter_rec *it)
{
    iters *c = st;
    if (it->start_ns < c->ramp_end || it->prefill_tokens == 0)
        return;
    c->after++;
    c->all_together += it->prefill_tokens == 4 * 1000;
}

static const eng_recorder_ops iter_rec = {NULL, count_iter, NULL, NULL};

static void test_closed_loop_ramp(void **state)
{
    static const char text[] = "name: c\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                               "engine: vllm\n"
                               "workload:\n  num_requests: 400\n"
                               "  arrival: {process: closed, concurrency: 4}\n"
                               "  prompt_tokens: 1000\n  output_tokens: 50\n";
    for (int ramp = 0; ramp < 2; ramp++) {
        const char *set[] = {"workload.arrival.ramp_up_s=0.05"};
        scn_scenario s;
        assert_int_equal(load(text, set, ramp, &s), 0);
        if (!ramp)
            assert_non_null(strstr(s.notes, "lock-step"));
        iters c = {.ramp_end = ramp ? 50 * SIM_NS_PER_MS : 0};
        study_hooks h = {.rec = &iter_rec, .rec_st = &c};
        metric(&s, &h, "completed");
        print_message("ramp %s: %lld of %lld prefill iterations prefill all four clients\n",
                      ramp ? "0.05 s" : "none", (long long)c.all_together, (long long)c.after);
        if (ramp)
            assert_int_equal(c.all_together, 0);
        else
            assert_int_equal(c.all_together, c.after);
        scn_free(&s);
    }
}

/* ================= presets ================= */

static const char preset_base[] = "name: p\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                                  "workload: {num_requests: 10, arrival: burst, prompt_tokens: "
                                  "100, output_tokens: 10}\n";

/* cpu_overhead.async of preset_base with `extra` keys. */
static int cpu_async_of(const char *extra)
{
    char text[2048];
    scn_scenario s;
    snprintf(text, sizeof text, "%s%s", preset_base, extra);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    int async = s.engine.cpu.async;
    scn_free(&s);
    return async;
}

static void test_engine_presets(void **state)
{
    char text[2048];
    scn_scenario s;
    snprintf(text, sizeof text, "%sengine: vllm\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_string_equal(s.engine.sched.name, "vllm");
    assert_true(s.engine.cpu.per_iteration_us > 0 && s.engine.cpu.per_seq_us > 0);
    scn_free(&s);
    /* a version, and a scenario key over the preset's */
    snprintf(text, sizeof text,
             "%sengine: {name: vllm, version: 0.6}\ncpu_overhead: {per_iteration_us: 5}\n",
             preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_string_equal(s.engine.sched.name, "vllm-v0");
    assert_string_equal(eng_cfg_get(&s.engine.sched, "num_scheduler_steps"), "8");
    assert_true(s.engine.cpu.per_iteration_us == 5 && s.engine.cpu.per_seq_us > 0);
    scn_free(&s);
    snprintf(text, sizeof text, "%sengine: trtllm\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_int_equal(s.engine.block_size, 32);
    scn_free(&s);
    /* errors name what is wrong and the choices */
    sim_err err;
    snprintf(text, sizeof text, "%sengine: {name: vllm, version: '0.1'}\n", preset_base);
    assert_int_not_equal(scn_load_text("t.yaml", text, NULL, 0, study_resolver(), &s, &err), 0);
    assert_non_null(strstr(err.msg, "0.11, 0.14, 0.18, 0.6, 0.5"));
    scn_free(&s);
    snprintf(text, sizeof text, "%sengine: vllm\nscheduler: {name: orca}\n", preset_base);
    assert_int_not_equal(scn_load_text("t.yaml", text, NULL, 0, study_resolver(), &s, &err), 0);
    assert_non_null(strstr(err.msg, "scheduler.name"));
    scn_free(&s);
    snprintf(text, sizeof text, "%sengine: vlm\n", preset_base);
    assert_int_not_equal(scn_load_text("t.yaml", text, NULL, 0, study_resolver(), &s, &err), 0);
    assert_non_null(strstr(err.msg, "vllm, sglang, trtllm, tgi"));
    scn_free(&s);
    /* `vllm` is V1 now: a V0-only key is noted, pointing to vllm-v0 */
    snprintf(text, sizeof text, "%sscheduler: {name: vllm, watermark: 0.02}\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_non_null(strstr(s.notes, "vllm-v0"));
    scn_free(&s);
    /* async_scheduling overlaps the CPU work */
    snprintf(text, sizeof text, "%sscheduler: {name: vllm, async_scheduling: true}\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_int_equal(s.engine.cpu.async, 1);
    scn_free(&s);
    /* vLLM 0.14 schedules asynchronously by default; the policy's setting or the scenario's
     * own cpu_overhead.async turn it off */
    assert_int_equal(cpu_async_of("engine: {name: vllm, version: '0.14'}\n"), 1);
    assert_int_equal(cpu_async_of("engine: {name: vllm, version: '0.14'}\n"
                                  "scheduler: {async_scheduling: false}\n"),
                     0);
    assert_int_equal(cpu_async_of("engine: {name: vllm, version: '0.14'}\n"
                                  "cpu_overhead: {async: false}\n"),
                     0);
    assert_int_equal(cpu_async_of("engine: vllm\ncpu_overhead: {async: true}\n"), 1);
    /* TensorRT-LLM 1.0's overlap scheduler; 0.19 leaves its host time before the GPU work */
    snprintf(text, sizeof text, "%sengine: {name: trtllm, version: '1.0'}\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_true(s.engine.cpu.async == 1 && s.engine.cpu.per_iteration_us == 580);
    scn_free(&s);
    assert_int_equal(cpu_async_of("engine: trtllm\n"), 0);
    /* the versions the H100 measurements ran: vLLM 0.18 async, SGLang 0.5 overlapped, and
     * TensorRT-LLM 1.3's overlap scheduler holding a finished request's seat a step */
    assert_int_equal(cpu_async_of("engine: {name: vllm, version: '0.18'}\n"), 1);
    assert_int_equal(cpu_async_of("engine: {name: sglang, version: '0.5'}\n"), 1);
    snprintf(text, sizeof text, "%sengine: {name: trtllm, version: '1.3'}\n", preset_base);
    assert_int_equal(load(text, NULL, 0, &s), 0);
    assert_string_equal(eng_cfg_get(&s.engine.sched, "overlap_scheduler"), "true");
    assert_int_equal(s.engine.cpu.async, 1);
    scn_free(&s);
    /* each figure says where it comes from, and a borrowed one says so */
    size_t n;
    const eng_preset *all = eng_preset_all(&n);
    for (size_t i = 0; i < n; i++) {
        assert_true(all[i].cpu_source && *all[i].cpu_source);
        int recent = (strcmp(all[i].engine, "vllm") == 0 && strcmp(all[i].version, "0.18") == 0) ||
                     (strcmp(all[i].engine, "sglang") == 0 && strcmp(all[i].version, "0.5") == 0) ||
                     (strcmp(all[i].engine, "trtllm") == 0 && strcmp(all[i].version, "1.3") == 0);
        if (recent)
            assert_non_null(strstr(all[i].cpu_source, "borrowed"));
    }
}

LLMSIM_TEST_MAIN(NULL, NULL, test_shared_system_prompt_ttft, test_session_turns_grow_the_context,
                 test_sessions_closed_loop, test_sessions_first_turn_too_long,
                 test_agent_and_open_sessions, test_closed_loop_ramp, test_engine_presets)
