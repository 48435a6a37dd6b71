/*
 * test_capacity.c: the capacity search's answers and verdicts.
 *  - rejections are failures: a policy that rejects a fifth of the requests never meets an SLO
 *    with --max-rejected 0, its probes say how many and why, and an allowance lets it pass;
 *  - an unreachable SLO stops at the unloaded case (Llama-3.1-70B TP2 on H100 with ShareGPT
 *    lengths and p99 TTFT 1 s, the case that once ran for minutes), counted in runs;
 *  - a noisy boundary never sends the search below the unloaded capacity;
 *  - a probe is decided by its interval: one straddling its limit runs more seeds;
 *  - --compare: named choices of several keys, the one-key form, the cross product of two,
 *    their errors; the CLI's table and JSON echo the choices and --set;
 *  - the cluster check respects --max-gpus (an "over budget" verdict, no simulation past it);
 *  - reports that scale: a long run's CDF and timeline are drawn from a bounded number of
 *    points, and a disaggregated run's report shows its pools, split and transfers;
 *  - names: GPU spellings and Hugging Face ids resolve to the catalogs, a folder's config.json
 *    is read, unknown names get the nearest valid ones; questions asked with options give
 *    what the scenario file saying the same gives.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "e2e_util.h"
#include "study_capacity.h"
#include "study_util.h"
#include "expect_text.h"
#include "test_main.h"

#define SHAREGPT                                                                                   \
    LLMSIM_SHARED_DIR                                                                              \
    "/data/traces/etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"

/* Llama-3-8B on one H100: TGI 2 turning away prompts over max_batch_prefill_tokens (uniform
 * prompts of 100-1000 tokens: 20% are over 820). */
static const char reject_text[] = "name: rej\nseed: 3\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                                  "engine: {name: tgi, version: \"2\"}\n"
                                  "scheduler: {max_batch_prefill_tokens: 820}\n"
                                  "workload:\n  num_requests: 400\n"
                                  "  arrival: {process: poisson, rate: 2}\n"
                                  "  prompt_tokens: {dist: uniform, min: 100, max: 1000}\n"
                                  "  output_tokens: 20\n";

static const char small_text[] = "name: small\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                                 "engine: vllm\n"
                                 "workload:\n  num_requests: 200\n"
                                 "  arrival: {process: poisson, rate: 2}\n"
                                 "  prompt_tokens: {dist: uniform, min: 200, max: 1200}\n"
                                 "  output_tokens: {dist: uniform, min: 20, max: 120}\n";

/* The unreachable case: Llama-3.1-70B TP2 on H100, ShareGPT (prompt, output) pairs. */
static const char sharegpt_text[] = "name: l70tp2\nseed: 1\nmodel: llama-3.1-70b\ngpu: h100-sxm\n"
                                    "tensor_parallel: 2\nengine: vllm\n"
                                    "workload:\n  num_requests: 1000\n"
                                    "  arrival: {process: poisson, rate: 1}\n"
                                    "  lengths: {path: " SHAREGPT ", format: vidur}\n";

/* What a search's probes were: phase, rate, ok. */
typedef struct seen {
    int n;
    char phase[256][12];
    double rate[256];
    int ok[256], seeds[256];
    int64_t rejected[256];
} seen;

static void on_probe(void *arg, const char *choice, const char *phase, double rate, int replicas,
                     const study_trial *t)
{
    (void)choice;
    (void)replicas;
    seen *s = arg;
    if (s->n >= 256)
        return;
    snprintf(s->phase[s->n], sizeof s->phase[0], "%s", phase);
    s->rate[s->n] = rate;
    s->ok[s->n] = t->ok;
    s->seeds[s->n] = t->seeds;
    s->rejected[s->n++] = t->rejected;
}

/* A search on text (in memory, named path) with slo; probes into *s when s is given. */
static void setup(study_capacity *c, const char *text, const char *slo, seen *s)
{
    su_capacity_setup(c, "test.yaml", text, slo, 0.1);
    if (s) {
        memset(s, 0, sizeof *s);
        c->probe = on_probe;
        c->probe_arg = s;
    }
}

static void find(study_capacity *c, int i, study_answer *a)
{
    sim_err err;
    if (study_capacity_find(c, i, a, &err) != 0)
        fail_msg("%s", err.msg);
}

/* ---- rejections ---- */

static void rejecting_policy_never_meets(void **state)
{
    (void)state;
    study_capacity c;
    seen *s = calloc(1, sizeof *s);
    setup(&c, reject_text, "ttft_p99=10s,tpot_p99=1s", s);
    /* at any rate, however lenient the SLOs, the probe fails: a fifth were turned away */
    sim_err err;
    study_trial t;
    const double rates[] = {0.1, 1, 4};
    for (int k = 0; k < 3; k++) {
        if (study_capacity_probe(&c, -1, "search", STUDY_LOAD_RATE, rates[k], 1, NULL, &t, &err))
            fail_msg("%s", err.msg);
        double frac = (double)t.rejected / (double)t.arrived;
        print_message("at %g req/s: %lld of %lld rejected\n", rates[k], (long long)t.rejected,
                      (long long)t.arrived);
        assert_false(t.ok);
        assert_true(frac > 0.15 && frac < 0.25);
        assert_int_equal(t.rejected_by[ENG_REJECT_BATCH], t.rejected);
        assert_int_equal(t.completed + t.rejected, t.arrived);
    }
    /* the search: unreachable at once, saying how many and why */
    study_answer a;
    s->n = 0;
    find(&c, 0, &a);
    print_message("%s\n", a.why);
    assert_int_equal(a.verdict, STUDY_UNREACHABLE);
    assert_int_equal(s->n, 1);
    assert_false(s->ok[0]);
    assert_non_null(strstr(a.why, "rejected"));
    assert_non_null(strstr(a.why, eng_reject_reason_name(ENG_REJECT_BATCH)));
    assert_true(a.rate == 0 && a.replicas == 0);
    /* allowed a quarter, the same policy has a capacity */
    c.max_rejected = 0.25;
    find(&c, 0, &a);
    assert_int_equal(a.verdict, STUDY_FOUND);
    assert_true(a.rate > 0 && a.at_rate.ok && a.at_rate.rejected > 0);
    free(s);
}

/* Sweep tables, curve plots and reports show what was rejected and why. */
static void rejections_shown(void **state)
{
    (void)state;
    char scn[300], db[300], out[32768], err[32768], path[1024];
    snprintf(scn, sizeof scn, "%s/rej.yaml", e2e_dir);
    snprintf(db, sizeof db, "%s/rej.db", e2e_dir);
    e2e_write(scn, reject_text);
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s sweep %s --db %s --store summary --jobs 1 --quiet --vary "
                    "workload.arrival.rate=1,3 --set workload.num_requests=100",
                    LLMSIM_BINARY, scn, db);
    print_message("%s%s", err, out);
    assert_int_equal(st, 0);
    expect_all(out, FRAGS(" completed  rejected  saturated", "(workload.arrival.rate=1: ",
                          "rejected, not in its latencies: exceeds batch token limit: "));
    int64_t rej = e2e_query_int(db, "SELECT sum(value) FROM metrics WHERE name = 'rejected'");
    assert_int_equal(rej, e2e_query_int(db, "SELECT sum(value) FROM metrics WHERE name = "
                                            "'rejected_batch'"));
    assert_true(rej > 0);
    /* the curve marks both points and says so */
    snprintf(path, sizeof path, "%s/rej.png", e2e_dir);
    st = e2e_sh(out, sizeof out, err, sizeof err, "%s plot curve --sweep 1 --db %s -o %s",
                LLMSIM_BINARY, db, path);
    assert_true(st == 0 || st == 3);
    assert_non_null(strstr(err, "2 points rejected requests"));
    snprintf(path, sizeof path, "cat %s/rej.png.dat %s/rej.dat %s/rej.gp 2>/dev/null", e2e_dir,
             e2e_dir, e2e_dir);
    e2e_sh(out, sizeof out, NULL, 0, "%s", path);
    assert_non_null(strstr(out, "# points whose runs rejected requests"));
    assert_non_null(strstr(out, "nrej = 2"));
    /* a run's report names the reason */
    st = e2e_sh(out, sizeof out, err, sizeof err, "%s run %s --db %s --quiet", LLMSIM_BINARY, scn,
                db);
    assert_int_equal(st, 0);
    int64_t run = e2e_query_int(db, "SELECT max(id) FROM runs");
    snprintf(path, sizeof path, "%s/rej.html", e2e_dir);
    st = e2e_sh(out, sizeof out, err, sizeof err, "%s report --run %lld --db %s -o %s",
                LLMSIM_BINARY, (long long)run, db, path);
    assert_true(st == 0 || st == 3);
    e2e_sh(out, sizeof out, NULL, 0, "grep -o 'rejected: exceeds batch token limit: [0-9]*' %s",
           path);
    assert_non_null(strstr(out, "rejected: exceeds batch token limit: "));
}

/* Data lines (not comments, not blank) of a file. */
static int64_t data_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int64_t n = 0;
    while (f && fgets(line, sizeof line, f))
        n += line[0] != '#' && line[0] != '\n';
    if (f)
        fclose(f);
    return f ? n : -1;
}

/* `llmsim run SCENARIO --db DB --quiet SETS` (a shipped scenario), which must succeed. */
static void stored_run(const char *db, const char *scenario, const char *sets)
{
    char err[16384];
    int st = e2e_llmsim(NULL, 0, err, sizeof err, "run %s/scenarios/%s --db %s --quiet %s",
                        LLMSIM_SOURCE_DIR, scenario, db, sets);
    if (st != 0)
        fail_msg("run %s: status %d: %s", scenario, st, err);
}

/* `llmsim plot KIND --run 1 --db DB -o (scratch)/STEM.png` (drawn, or not for want of gnuplot):
 * the lines of data STEM.dat holds; stderr into err (errlen bytes). */
static int64_t drawn_lines(const char *db, const char *kind, const char *stem, char *err,
                           size_t errlen)
{
    int st = e2e_llmsim(NULL, 0, err, errlen, "plot %s --run 1 --db %s -o %s/%s.png", kind, db,
                        e2e_dir, stem);
    assert_true(st == 0 || st == 3);
    char path[600];
    snprintf(path, sizeof path, "%s/%s.dat", e2e_dir, stem);
    return data_lines(path);
}

/* A run's plots and report stay small however long the run: the CDF keeps 2,000 order
 * statistics and the top 0.1% of values, the timeline 10,000 bars of grouped iterations. A
 * disaggregated run's report shows its pools, split and transfers. */
static void reports_scale(void **state)
{
    (void)state;
    char out[16384], err[16384], db[400], path[600];
    snprintf(db, sizeof db, "%s/big.db", e2e_dir);
    stored_run(db, "demo.yaml",
               "--set scheduler.name=vllm --set workload.num_requests=2200 --set "
               "workload.arrival.rate=10 --set workload.output_tokens=40");
    int64_t iters = e2e_query_int(db, "SELECT count(*) FROM iterations");
    print_message("2,200 requests, %lld iterations\n", (long long)iters);
    assert_true(iters > 10000);
    int64_t n = drawn_lines(db, "cdf", "cdf", err, sizeof err);
    print_message("cdf: %lld points for 2,200 requests\n", (long long)n);
    assert_true(n >= 2000 && n <= 2000 + 3);
    n = drawn_lines(db, "timeline", "tl", err, sizeof err);
    assert_non_null(strstr(err, "drawn in groups"));
    print_message("timeline: %lld rows for %lld iterations\n", (long long)n, (long long)iters);
    assert_true(n > 5000 && n <= 10000);
    /* a disaggregated run's report */
    snprintf(db, sizeof db, "%s/pd.db", e2e_dir);
    stored_run(db, "pd_llama70b.yaml", "--set workload.num_requests=150");
    snprintf(path, sizeof path, "%s/pd.html", e2e_dir);
    int st = e2e_llmsim(out, sizeof out, err, sizeof err, "report --run 1 --db %s -o %s", db, path);
    assert_true(st == 0 || st == 3);
    e2e_sh(out, sizeof out, NULL, 0,
           "grep -o 'Disaggregated pools\\|prefill 1 x h200 tp4, decode 2 x b200 tp2\\|split "
           "(GPUs)\\|4 prefill : 4 decode\\|KV transfer latency' %s | sort -u",
           path);
    print_message("%s", out);
    expect_all(out, FRAGS("Disaggregated pools", "prefill 1 x h200 tp4, decode 2 x b200 tp2",
                          "4 prefill : 4 decode", "KV transfer latency"));
}

/* ---- unreachable ---- */

/* A p99 TTFT limit under what the deployment gives unloaded (about 0.91 s for these prompts on
 * 70B TP2: the longest ShareGPT prompts' prefill) is unreachable at any rate. */
static void unreachable_stops_at_unloaded(void **state)
{
    (void)state;
    if (access(SHAREGPT, R_OK) != 0) {
        print_message("skipped: %s is absent\n", SHAREGPT);
        skip();
    }
    study_capacity c;
    seen *s = calloc(1, sizeof *s);
    setup(&c, sharegpt_text, "ttft_p99=700ms", s);
    c.target = 10;
    study_answer a;
    find(&c, 0, &a);
    print_message("%s (%lld runs, %d probes)\n", a.why, (long long)c.runs, s->n);
    assert_true(a.verdict == STUDY_UNREACHABLE || a.verdict == STUDY_UNREACHABLE_LOAD);
    assert_non_null(strstr(a.why, "unreachable"));
    assert_non_null(strstr(a.why, "p99 TTFT"));
    /* the work done: the unloaded case and at most the one rate after it, three seeds each;
     * no cluster was simulated */
    assert_true(s->n <= 2 && c.runs <= 6);
    for (int k = 0; k < s->n; k++)
        assert_string_not_equal(s->phase[k], "cluster");
    assert_true(a.replicas == 0);
    free(s);
}

/* A boundary the noise decides: p99 TTFT of ShareGPT prompts on 70B TP2 hardly moves with the
 * rate and sits near the limit; no probe may go below the unloaded capacity. */
static void noisy_boundary_stays_above_unloaded(void **state)
{
    (void)state;
    if (access(SHAREGPT, R_OK) != 0) {
        print_message("skipped: %s is absent\n", SHAREGPT);
        skip();
    }
    const char *slos[] = {"ttft_p99=1050ms", "ttft_p99=1100ms", "ttft_p99=1200ms"};
    for (int k = 0; k < 3; k++) {
        study_capacity c;
        seen *s = calloc(1, sizeof *s);
        setup(&c, sharegpt_text, slos[k], s);
        study_answer a;
        find(&c, 0, &a);
        print_message("%s: %s, %g req/s (unloaded %g), %d probes\n", slos[k],
                      study_verdict_name(a.verdict), a.rate, a.unloaded_rate, s->n);
        for (int i = 1; i < s->n; i++)
            assert_true(s->rate[i] >= a.unloaded_rate * (1 - 1e-9));
        if (a.verdict == STUDY_FOUND)
            assert_true(a.rate >= a.unloaded_rate * (1 - 1e-9));
        else
            assert_true(a.verdict == STUDY_UNREACHABLE || a.verdict == STUDY_UNREACHABLE_LOAD);
        free(s);
    }
}

/* ---- intervals ---- */

static void probe_decided_by_interval(void **state)
{
    (void)state;
    study_capacity c;
    setup(&c, small_text, "ttft_p99=1000ms", NULL);
    sim_err err;
    study_trial t;
    /* far from the limit: one seed decides, with an interval */
    if (study_capacity_probe(&c, -1, "search", STUDY_LOAD_RATE, 2, 1, NULL, &t, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(t.ok && t.seeds == 1 && !t.uncertain);
    assert_true(t.half[0] > 0 && t.value[0] + t.half[0] < 1000);
    /* a limit inside that interval: more seeds (the same base seed first, so paired) */
    double v = t.value[0], h = t.half[0];
    c.nslo = 0;
    char slo[64];
    snprintf(slo, sizeof slo, "ttft_p99=%.3fms", v + h / 4);
    assert_int_equal(study_slo_parse(slo, c.slo, STUDY_MAX_SLO, &c.nslo, &err), 0);
    if (study_capacity_probe(&c, -1, "search", STUDY_LOAD_RATE, 2, 1, NULL, &t, &err) != 0)
        fail_msg("%s", err.msg);
    print_message("p99 TTFT %g +- %g, limit %g: %d seeds, ok %d, uncertain %d\n", t.value[0],
                  t.half[0], c.slo[0].limit_ms, t.seeds, t.ok, t.uncertain);
    assert_true(t.seeds > 1);
    if (t.value[0] + t.half[0] > c.slo[0].limit_ms && t.value[0] - t.half[0] <= c.slo[0].limit_ms)
        assert_true(!t.ok && t.uncertain && t.seeds == 3); /* still held: a miss */
    assert_int_equal(c.runs, 1 + t.seeds);
}

/* ---- choices ---- */

static void choices_named_and_crossed(void **state)
{
    (void)state;
    study_choice ch[STUDY_MAX_CHOICES];
    int n = 0;
    sim_err err;
    assert_int_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n,
                                       "tp8: tensor_parallel=8; dp8ep8: "
                                       "data_parallel_attention=8,expert_parallel=8",
                                       &err),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(ch[0].name, "tp8");
    assert_int_equal(ch[0].nsets, 1);
    assert_string_equal(ch[0].set[0], "tensor_parallel=8");
    assert_string_equal(ch[1].name, "dp8ep8");
    assert_int_equal(ch[1].nsets, 2);
    assert_string_equal(ch[1].set[0], "data_parallel_attention=8");
    assert_string_equal(ch[1].set[1], "expert_parallel=8");
    /* a second --compare: the cross product, named A/B, A's keys then B's */
    assert_int_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n, "gpu=h100-sxm,h200", &err), 0);
    assert_int_equal(n, 4);
    assert_string_equal(ch[0].name, "tp8/h100-sxm");
    assert_string_equal(ch[3].name, "dp8ep8/h200");
    assert_int_equal(ch[3].nsets, 3);
    assert_string_equal(ch[3].set[2], "gpu=h200");
    /* the one-key form, its shorthands */
    n = 0;
    assert_int_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n, "scheduler=vllm,orca", &err), 0);
    assert_true(n == 2 && strcmp(ch[1].set[0], "scheduler.name=orca") == 0);
    n = 0;
    assert_int_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n, "a: pd=1:2; b: pd=2:3", &err), 0);
    assert_true(n == 2 && ch[1].nsets == 2 && strcmp(ch[1].set[1], "decode.replicas=3") == 0);
    /* an unnamed choice of several keys is named by its text */
    n = 0;
    assert_int_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n,
                                       "tensor_parallel=2,replicas=2; tensor_parallel=4", &err),
                     0);
    assert_true(n == 2 && strcmp(ch[1].name, "tensor_parallel=4") == 0 && ch[0].nsets == 2);
    /* errors name what is wrong */
    const char *bad[] = {
        "tp8",        "a: tensor_parallel; b: x=1", "a: x=1; a: x=2", ": x=1; b: x=2", "pd=1-2",
        "a: ; b: x=1"};
    const char *why[] = {"expects",    "expected KEY=VALUE", "two choices are named",
                         "empty name", "prefill:decode",     "sets no key"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        n = 0;
        err.msg[0] = '\0';
        assert_int_not_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n, bad[k], &err), 0);
        print_message("'%s': %s\n", bad[k], err.msg);
        assert_non_null(strstr(err.msg, why[k]));
    }
    /* a cross product past the limit is refused */
    n = 0;
    assert_int_equal(
        study_choices_add(ch, STUDY_MAX_CHOICES, &n, "replicas=1,2,3,4,5,6,7,8,9", &err), 0);
    assert_int_not_equal(study_choices_add(ch, STUDY_MAX_CHOICES, &n, "seed=1,2,3,4,5,6,7,8", &err),
                         0);
    assert_non_null(strstr(err.msg, "cross product"));
}

/* Two layouts of two keys each, compared by name: each choice's search runs with both keys. */
static void two_key_layouts_by_name(void **state)
{
    (void)state;
    study_capacity c;
    setup(&c, small_text, "ttft_p99=1000ms,tpot_p99=50ms", NULL);
    sim_err err;
    assert_int_equal(study_capacity_compare(&c,
                                            "small: tensor_parallel=1,scheduler.max_num_seqs=4; "
                                            "big: tensor_parallel=2,scheduler.max_num_seqs=256",
                                            &err),
                     0);
    assert_int_equal(c.ncmp, 2);
    for (int i = 0; i < 2; i++) {
        scn_scenario scn;
        if (study_capacity_load_choice(&c, i, &scn, &err) != 0)
            fail_msg("%s", err.msg);
        assert_int_equal(scn.engine.tensor_parallel, i ? 2 : 1);
        assert_non_null(strstr(scn.text, i ? "max_num_seqs: 256" : "max_num_seqs: 4"));
        scn_free(&scn);
    }
    study_answer small, big;
    find(&c, 0, &small);
    find(&c, 1, &big);
    print_message("small %g req/s, big %g req/s\n", small.rate, big.rate);
    assert_true(small.verdict == STUDY_FOUND && big.verdict == STUDY_FOUND);
    assert_int_equal(small.tp, 1);
    assert_int_equal(big.tp, 2);
    /* four seats cap the small layout well below the large one */
    assert_true(big.rate > 2 * small.rate);
}

/* The CLI: names and --set in the table and the JSON, the cross product's names. */
static void cli_echoes_choices(void **state)
{
    (void)state;
    char scn[300], db[300], out[32768], err[32768];
    snprintf(scn, sizeof scn, "%s/small.yaml", e2e_dir);
    snprintf(db, sizeof db, "%s/c.db", e2e_dir);
    e2e_write(scn, small_text);
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s capacity %s --db %s --slo ttft_p99=1000ms --precision 0.3 --set "
                    "workload.num_requests=100 --compare 'one: scheduler.max_num_seqs=8; two: "
                    "scheduler.max_num_seqs=64' --compare gpu=h100-sxm,h200 --json",
                    LLMSIM_BINARY, scn, db);
    print_message("%s%s", err, out);
    assert_int_equal(st, 0);
    const char *names[] = {"one/h100-sxm", "one/h200", "two/h100-sxm", "two/h200"};
    for (int k = 0; k < 4; k++) {
        char key[64];
        snprintf(key, sizeof key, "\"choice\": \"%s\"", names[k]);
        assert_non_null(strstr(out, key));
    }
    expect_all(out,
               FRAGS("\"sets\": [\"workload.num_requests=100\"]",
                     "[\"scheduler.max_num_seqs=64\", \"gpu=h200\"]", "\"verdict\": \"found\""));
    /* the scenario's validated error; both GPUs are Hopper: no choice has one of its own */
    assert_non_null(strstr(out, "\"validated\": \"TTFT validated to a median"));
    const char *v = strstr(out, "\"validated\": ");
    assert_null(strstr(v + 1, "\"validated\": "));
    /* progress names the phases */
    assert_non_null(strstr(err, "[unloaded]"));
    assert_non_null(strstr(err, "[search]"));
    /* the table: the header echoes --set, a row per name, the legend each choice's keys */
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s capacity %s --db %s --slo ttft_p99=1000ms --precision 0.3 --target-rate 8 "
                "--set workload.num_requests=100 --compare 'one: scheduler.max_num_seqs=8; two: "
                "scheduler.max_num_seqs=64'",
                LLMSIM_BINARY, scn, db);
    print_message("%s%s", err, out);
    assert_int_equal(st, 0);
    expect_all(out, FRAGS("--set: workload.num_requests=100", "\none ", "\ntwo ",
                          "(two: scheduler.max_num_seqs=64)", "completed"));
    assert_non_null(strstr(err, "[cluster] checking"));
    /* the old one-key form still works; stored probes include the unloaded case */
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s capacity %s --db %s --slo ttft_p99=1000ms --precision 0.3 --compare "
                "scheduler=vllm",
                LLMSIM_BINARY, scn, db);
    assert_int_equal(st, 0);
    assert_true(e2e_query_int(db, "SELECT count(*) FROM capacity_probes WHERE choice = 'vllm'") >=
                2);
    /* a choice on another engine says its own validated error (the heading's is the scenario's) */
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s capacity %s --db %s --slo ttft_p99=1000ms --precision 0.3 --set "
                "workload.num_requests=100 --compare engine=vllm,tgi",
                LLMSIM_BINARY, scn, db);
    print_message("%s", out);
    assert_int_equal(st, 0);
    expect_all(out, FRAGS("\nTTFT validated to a median", "(vllm: engine=vllm)\n",
                          "(tgi: engine=tgi; not validated: no validated tgi rows"));
    /* bad --compare: a usage error naming the part */
    e2e_llmsim_says(err, sizeof err, 2, "two choices are named 'a'",
                    "capacity %s --db %s --slo ttft_p99=1s --compare 'a: x=1; a: y=2'", scn, db);
    /* an unknown --set key: its message and status 1, and no scenario freed that was never
     * loaded (it aborted in free() after the message) */
    e2e_llmsim_says(err, sizeof err, 1, "nosuch: unknown key",
                    "capacity %s --db %s --slo ttft_p99=1s --set nosuch.key=1", scn, db);
    assert_null(strstr(err, "Sanitizer"));
}

/* ---- names and questions without YAML ---- */

static int load_with(const char *key, const char *val, scn_scenario *scn, sim_err *err)
{
    char set[600];
    snprintf(set, sizeof set, "%s=%s", key, val);
    const char *sets[] = {set};
    return study_load_text("names.yaml", small_text, sets, 1, scn, err);
}

static void names_resolve_and_suggest(void **state)
{
    (void)state;
    const char *gpus[][2] = {{"h100", "h100-sxm"}, {"H100-SXM5", "h100-sxm"}, {"h200-sxm", "h200"},
                             {"b200-sxm", "b200"}, {"rtx4090", "rtx-4090"},   {"H200", "h200"}};
    sim_err err;
    scn_scenario scn;
    for (size_t k = 0; k < sizeof gpus / sizeof gpus[0]; k++) {
        if (load_with("gpu", gpus[k][0], &scn, &err) != 0)
            fail_msg("%s: %s", gpus[k][0], err.msg);
        assert_string_equal(scn.engine.gpu.name, gpus[k][1]);
        scn_free(&scn);
    }
    const char *models[][2] = {{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
                               {"meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b"},
                               {"Qwen/Qwen3-8B", "qwen3-8b"},
                               {"google/gemma-2-9b-it", "gemma-2-9b"},
                               {"meta-llama/Llama-2-7b-hf", "llama-2-7b"}};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        if (load_with("model", models[k][0], &scn, &err) != 0)
            fail_msg("%s: %s", models[k][0], err.msg);
        assert_string_equal(scn.engine.model.name, models[k][1]);
        scn_free(&scn);
    }
    /* a folder holding a config.json is read (named by the folder) */
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/my-model", e2e_dir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/config.json", dir);
    e2e_write(path, cal_model_config_text(0));
    if (load_with("model", dir, &scn, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(scn.engine.model.name, "my-model");
    scn_free(&scn);
    /* unknown names: the nearest valid ones; an ambiguous spelling is not guessed */
    const char *bad[][3] = {{"gpu", "h10", "nearest: h100-sxm, h100-pcie"},
                            {"gpu", "a100", "nearest: a100-80gb, a100-40gb"},
                            {"gpu", "b2000", "nearest: b200"},
                            {"model", "llama-3.1-7b", "nearest: llama-3.1-8b"},
                            {"model", "Qwen/Qwen3-235B-A22B-FP8", "nearest: qwen3-235b-a22b"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_not_equal(load_with(bad[k][0], bad[k][1], &scn, &err), 0);
        print_message("%s\n", err.msg);
        assert_non_null(strstr(err.msg, bad[k][2]));
        scn_free(&scn);
    }
}

/* `run --model ... --gpu ... --isl --osl --rate` is the scenario file that says the same. */
static void question_without_yaml(void **state)
{
    (void)state;
    char scn[300], a[16384], b[16384], err[8192];
    e2e_file(scn, sizeof scn, "q.yaml",
             "name: question\nseed: 1\nengine: sglang\nmodel: llama-3.1-8b\n"
             "gpu: h100-sxm\ntensor_parallel: 2\n"
             "workload:\n  num_requests: 120\n  arrival: {process: poisson, rate: 6}\n"
             "  prompt_tokens: 700\n  output_tokens: 60\n");
    int st = e2e_sh(a, sizeof a, err, sizeof err,
                    "%s run --model meta-llama/Llama-3.1-8B-Instruct --gpu h100 --tp 2 --engine "
                    "sglang --isl 700 --osl 60 --rate 6 --requests 120 --no-db --json",
                    LLMSIM_BINARY);
    print_message("%s", err);
    assert_int_equal(st, 0);
    assert_int_equal(
        e2e_sh(b, sizeof b, err, sizeof err, "%s run %s --no-db --json", LLMSIM_BINARY, scn), 0);
    /* the same metrics, from "num_prompts" on (date and run_id differ) */
    assert_string_equal(strstr(a, "\"num_prompts\""), strstr(b, "\"num_prompts\""));
    /* capacity asks the same way; a file's keys yield to the options */
    st = e2e_sh(a, sizeof a, err, sizeof err,
                "%s capacity --model llama-3.1-8b --gpu h100 --isl 500 --osl 50 --requests 100 "
                "--slo ttft_p99=500ms --precision 0.3 --db %s/q.db --json",
                LLMSIM_BINARY, e2e_dir);
    assert_int_equal(st, 0);
    assert_non_null(strstr(a, "\"gpu\": \"h100-sxm\""));
    assert_non_null(strstr(a, "\"verdict\": \"found\""));
    /* what is missing or misspelt is named */
    e2e_llmsim_says(err, sizeof err, 2, "needs --gpu", "run --model llama-3.1-8b --isl 5 --osl 5");
    e2e_llmsim_says(err, sizeof err, 2, "--isl and --osl, or --lengths sharegpt",
                    "run --model llama-3.1-8b --gpu h100");
    e2e_llmsim_says(err, sizeof err, 2, "unknown engine 'vlm'; nearest: vllm",
                    "run --model llama-3.1-8b --gpu h100 --isl 5 --osl 5 --engine vlm");
    e2e_llmsim_says(err, sizeof err, 2, "nearest: sharegpt",
                    "run --model llama-3.1-8b --gpu h100 --lengths sharegtp");
    e2e_llmsim_says(err, sizeof err, 1, "nearest: h100-sxm",
                    "run --model llama-3.1-8b --gpu h10 --isl 5 --osl 5 --no-db");
}

/* ---- the GPU cap ---- */

static void cluster_over_budget(void **state)
{
    (void)state;
    study_capacity c;
    seen *s = calloc(1, sizeof *s);
    setup(&c, small_text, "ttft_p99=1000ms", s);
    c.target = 1000;
    c.max_gpus = 16;
    study_answer a;
    find(&c, 0, &a);
    print_message("%s\n", a.why);
    assert_int_equal(a.verdict, STUDY_OVER_BUDGET);
    assert_true(a.rate > 0 && a.replicas == 0);
    assert_non_null(strstr(a.why, "--max-gpus 16"));
    for (int k = 0; k < s->n; k++)
        assert_string_not_equal(s->phase[k], "cluster");
    free(s);
}

LLMSIM_TESTS(tests, rejecting_policy_never_meets, rejections_shown, reports_scale,
             unreachable_stops_at_unloaded, noisy_boundary_stays_above_unloaded,
             probe_decided_by_interval, choices_named_and_crossed, two_key_layouts_by_name,
             cli_echoes_choices, cluster_over_budget, names_resolve_and_suggest,
             question_without_yaml);

int main(void)
{
    return e2e_run_group(tests);
}
