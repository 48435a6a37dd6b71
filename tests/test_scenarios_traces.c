/*
 * test_scenarios_traces.c: every real trace under ../shared/data/traces/ replayed through the
 * workload source (read in place, never copied), its request count, mean prompt and output
 * tokens and mean arrival rate checked against values this test computes from the file itself
 * with its own simple parsing; the replay options (time_scale, rate, window, limit,
 * lengths_only); empirical and joint length sampling. Exits 77 when the data is absent.
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

#include "scenario.h"
#include "test_main.h"

extern const scn_resolver test_resolver; /* support/scenarios_resolver.c */

#define TRACES LLMSIM_SHARED_DIR "/data/traces/"
#define AZ_CONV TRACES "azure-llm-2023/AzureLLMInferenceTrace_conv.csv"
#define AZ_CODE TRACES "azure-llm-2023/AzureLLMInferenceTrace_code.csv"
#define MC_CONV TRACES "mooncake-fast25/conversation_trace.jsonl"
#define MC_SYN TRACES "mooncake-fast25/synthetic_trace.jsonl"
#define VD_CONV TRACES "vidur-processed/splitwise_conv.csv"
#define VD_CODE TRACES "vidur-processed/splitwise_code.csv"
#define VD_ARXIV TRACES "vidur-processed/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"
#define SHAREGPT TRACES "etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"
#define BWB TRACES "etalon-processed/bwb_stats_llama2_tokenizer_filtered_v2.csv"

/* What a replay (or the independent reading) gives. */
typedef struct summary {
    int64_t n;
    double sum_prompt, sum_output;
    double t_first, t_last; /* s */
} summary;

static double rate_of(const summary *s)
{
    return (double)(s->n - 1) / (s->t_last - s->t_first);
}

/* ---- independent readings of the files ---- */

enum { AZURE, MOONCAKE, VIDUR_TIMED, LENGTHS };

/* Reads the whole file with sscanf patterns; rows with t (s since the first row) in
 * [from, to) count. */
static summary read_file(const char *path, int kind, double from, double to)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    summary s = {0};
    int first = 1, day0 = 0;
    double t0 = 0;
    if (kind != MOONCAKE)
        assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        long long p = 0, o = 0;
        double t = 0;
        if (kind == AZURE) {
            int y, mo, d, h, mi;
            double sec;
            assert_int_equal(
                sscanf(line, "%d-%d-%d %d:%d:%lf,%lld,%lld", &y, &mo, &d, &h, &mi, &sec, &p, &o),
                8);
            if (first)
                day0 = d;
            assert_int_equal(d, day0); /* both Azure files stay on one day */
            t = h * 3600.0 + mi * 60.0 + sec;
        } else if (kind == MOONCAKE) {
            long long ms;
            assert_int_equal(sscanf(line,
                                    "{\"timestamp\": %lld, \"input_length\": %lld, "
                                    "\"output_length\": %lld",
                                    &ms, &p, &o),
                             3);
            t = ms / 1000.0;
        } else if (kind == VIDUR_TIMED) {
            assert_int_equal(sscanf(line, "%lf,%lld,%lld", &t, &p, &o), 3);
        } else {
            assert_int_equal(sscanf(line, "%lld,%lld", &p, &o), 2);
        }
        if (first)
            t0 = t;
        first = 0;
        t -= t0;
        if (t < from || t >= to)
            continue;
        if (s.n == 0)
            s.t_first = t;
        s.t_last = t;
        s.n++;
        s.sum_prompt += (double)p;
        s.sum_output += (double)o;
    }
    fclose(f);
    return s;
}

/* ---- replays through the loader and the source ---- */

static summary replay_text(const char *workload, int64_t *clipped)
{
    char text[2048];
    scn_scenario sc;
    sim_err e;
    snprintf(text, sizeof text, "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n%s", workload);
    if (scn_load_text("t.yaml", text, NULL, 0, &test_resolver, &sc, &e))
        fail_msg("%s", e.msg);
    scn_source *src = scn_source_new(&sc, 1, &e);
    if (!src)
        fail_msg("%s", e.msg);
    summary s = {0};
    eng_arrival a;
    int rc;
    int64_t prev = 0;
    while ((rc = scn_source_ops()->next(src, prev, &a, &e)) == ENG_SRC_OK) {
        assert_true(a.t >= prev);
        assert_true(a.prompt >= 1 && a.output >= 1);
        if (s.n == 0)
            s.t_first = (double)a.t / 1e9;
        s.t_last = (double)a.t / 1e9;
        s.n++;
        s.sum_prompt += a.prompt;
        s.sum_output += a.output;
        prev = a.t;
    }
    if (rc != ENG_SRC_END)
        fail_msg("replay stopped with %d: %s", rc, e.msg);
    assert_int_equal(scn_source_skipped(src), 0);
    if (clipped)
        *clipped = scn_source_clipped(src);
    scn_source_free(src);
    scn_free(&sc);
    return s;
}

static summary replay(const char *trace_opts)
{
    char w[1024];
    snprintf(w, sizeof w, "  trace: {%s}\n", trace_opts);
    return replay_text(w, NULL);
}

static void same(const summary *got, const summary *want, int timed, const char *what)
{
    printf("  %-28s n=%lld  mean prompt %.2f  mean output %.2f", what, (long long)got->n,
           got->sum_prompt / (double)got->n, got->sum_output / (double)got->n);
    if (timed)
        printf("  rate %.4f/s over %.1f s", rate_of(got), got->t_last - got->t_first);
    printf("\n");
    assert_int_equal(got->n, want->n);
    assert_true(got->sum_prompt == want->sum_prompt); /* sums of integers: exact */
    assert_true(got->sum_output == want->sum_output);
    if (timed) {
        assert_true(got->t_first == 0);
        assert_true(fabs(rate_of(got) / rate_of(want) - 1) < 1e-6);
    }
}

/* The whole trace at path replayed in its own format gives, timed, what reading it does: the
 * replay, and what was read into *read (when not NULL). */
static summary replays_whole(const char *path, int kind, const char *format, const char *what,
                             summary *read)
{
    char opts[512];
    snprintf(opts, sizeof opts, "path: %s, format: %s", path, format);
    summary w = read_file(path, kind, -1, INFINITY), g = replay(opts);
    same(&g, &w, 1, what);
    if (read)
        *read = w;
    return g;
}

static void azure(void **state)
{
    replays_whole(AZ_CONV, AZURE, "azure", "azure conv", NULL);
    replays_whole(AZ_CODE, AZURE, "azure", "azure code", NULL);
}

static void mooncake(void **state)
{
    replays_whole(MC_CONV, MOONCAKE, "mooncake", "mooncake conversation", NULL);
    replays_whole(MC_SYN, MOONCAKE, "mooncake", "mooncake synthetic", NULL);
}

static void vidur(void **state)
{
    summary g = replays_whole(VD_CONV, VIDUR_TIMED, "vidur", "vidur splitwise_conv", NULL);
    /* the same requests as the Azure original, re-based to seconds */
    summary az = read_file(AZ_CONV, AZURE, -1, INFINITY);
    assert_int_equal(g.n, az.n);
    assert_true(g.sum_prompt == az.sum_prompt && g.sum_output == az.sum_output);
    assert_true(fabs(rate_of(&g) / rate_of(&az) - 1) < 1e-6);
    summary w;
    replays_whole(VD_CODE, VIDUR_TIMED, "vidur", "vidur splitwise_code", &w);
    /* the same columns through the generic csv mapping */
    g = replay("path: " VD_CODE ", format: csv, columns: {time: arrived_at, prompt: "
               "num_prefill_tokens, output: num_decode_tokens}");
    same(&g, &w, 1, "csv mapping of splitwise_code");
}

/* Length-only files take arrivals from the process and their lengths in file order. */
static void lengths_only(void **state)
{
    const char *const files[] = {VD_ARXIV, SHAREGPT, BWB};
    const char *const names[] = {"vidur arxiv (lengths)", "sharegpt (lengths)", "bwb (lengths)"};
    for (int i = 0; i < 3; i++) {
        char wl[1024];
        snprintf(wl, sizeof wl,
                 "  trace: {path: %s, format: vidur}\n  arrival: {process: poisson, rate: 5}\n",
                 files[i]);
        summary w = read_file(files[i], LENGTHS, -1, INFINITY), g = replay_text(wl, NULL);
        same(&g, &w, 0, names[i]);
        assert_true(fabs(rate_of(&g) / 5 - 1) < 0.05);
    }
    /* a timed trace read for its lengths only */
    summary w = read_file(AZ_CONV, AZURE, -1, INFINITY);
    summary g = replay_text("  trace: {path: " AZ_CONV ", format: azure, lengths_only: true}\n"
                            "  arrival: {process: constant, rate: 2}\n",
                            NULL);
    same(&g, &w, 0, "azure conv, lengths only");
    assert_true(fabs(rate_of(&g) - 2) < 1e-9);
}

static void replay_options(void **state)
{
    summary w = read_file(AZ_CONV, AZURE, -1, INFINITY);
    summary g = replay("path: " AZ_CONV ", format: azure, time_scale: 2");
    assert_int_equal(g.n, w.n);
    assert_true(fabs(rate_of(&g) / (rate_of(&w) / 2) - 1) < 1e-6);
    g = replay("path: " AZ_CONV ", format: azure, rate: 10");
    assert_int_equal(g.n, w.n);
    assert_true(fabs(rate_of(&g) / 10 - 1) < 1e-6);
    /* a window of ten minutes from minute 10, re-based to 0 */
    summary ww = read_file(AZ_CONV, AZURE, 600, 1200);
    g = replay("path: " AZ_CONV ", format: azure, start_s: 600, duration_s: 600");
    same(&g, &ww, 1, "azure conv [600 s, 1200 s)");
    assert_true(g.t_last < 600);
    /* the window rescaled to a rate: the pre-pass sees the same rows */
    g = replay("path: " AZ_CONV ", format: azure, start_s: 600, duration_s: 600, rate: 3");
    assert_int_equal(g.n, ww.n);
    assert_true(fabs(rate_of(&g) / 3 - 1) < 1e-6);
    g = replay("path: " AZ_CONV ", format: azure, limit: 100");
    assert_int_equal(g.n, 100);
    g = replay_text("  num_requests: 40\n  trace: {path: " MC_CONV ", format: mooncake, limit: "
                    "100}\n",
                    NULL);
    assert_int_equal(g.n, 40);
}

static void read_pairs(const char *path, int64_t **pairs, int64_t *n, double *mp, double *mo)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int64_t cap = 1 << 16;
    *pairs = malloc(sizeof **pairs * (size_t)cap);
    *n = 0;
    *mp = *mo = 0;
    assert_non_null(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        long long p, o;
        assert_int_equal(sscanf(line, "%lld,%lld", &p, &o), 2);
        assert_true(*n < cap);
        (*pairs)[(*n)++] = p << 32 | o;
        *mp += (double)p;
        *mo += (double)o;
    }
    fclose(f);
    *mp /= (double)*n;
    *mo /= (double)*n;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Empirical columns match the column means; joint pairs are rows of the file. */
static void empirical_and_joint(void **state)
{
    int64_t *pairs, n;
    double mp, mo;
    read_pairs(SHAREGPT, &pairs, &n, &mp, &mo);
    qsort(pairs, (size_t)n, sizeof *pairs, cmp64);
    summary g =
        replay_text("  num_requests: 200000\n  arrival: {process: burst}\n"
                    "  prompt_tokens: {dist: empirical, path: " SHAREGPT ", format: vidur}\n"
                    "  output_tokens: {dist: empirical, path: " SHAREGPT
                    ", format: vidur, column: num_decode_tokens}\n",
                    NULL);
    printf("  empirical sharegpt: mean prompt %.1f (file %.1f), output %.1f (file %.1f)\n",
           g.sum_prompt / 200000, mp, g.sum_output / 200000, mo);
    assert_true(fabs(g.sum_prompt / 200000 / mp - 1) < 0.02);
    assert_true(fabs(g.sum_output / 200000 / mo - 1) < 0.02);

    char text[1024];
    scn_scenario sc;
    sim_err e;
    snprintf(text, sizeof text,
             "model: llama-3-8b\ngpu: h100-sxm\nworkload:\n  num_requests: 100000\n"
             "  arrival: {process: poisson, rate: 2}\n"
             "  lengths: {path: %s, format: vidur}\n",
             SHAREGPT);
    if (scn_load_text("t.yaml", text, NULL, 0, &test_resolver, &sc, &e))
        fail_msg("%s", e.msg);
    scn_source *src = scn_source_new(&sc, 3, &e);
    assert_non_null(src);
    eng_arrival a;
    double sp = 0, so = 0;
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
        int64_t key = (int64_t)a.prompt << 32 | a.output;
        assert_non_null(bsearch(&key, pairs, (size_t)n, sizeof *pairs, cmp64));
        sp += a.prompt;
        so += a.output;
    }
    assert_int_equal(scn_source_clipped(src), 0); /* every ShareGPT row fits in 8192 */
    printf("  joint sharegpt: mean prompt %.1f, output %.1f\n", sp / 1e5, so / 1e5);
    assert_true(fabs(sp / 1e5 / mp - 1) < 0.02);
    assert_true(fabs(so / 1e5 / mo - 1) < 0.02);
    scn_source_free(src);
    scn_free(&sc);
    free(pairs);
}

LLMSIM_TESTS(tests, azure, mooncake, vidur, lengths_only, replay_options, empirical_and_joint);

int main(void)
{
    if (access(AZ_CONV, R_OK) || access(MC_CONV, R_OK) || access(VD_CONV, R_OK) ||
        access(SHAREGPT, R_OK)) {
        printf("skipped: the shared traces are not at %s\n", TRACES);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
