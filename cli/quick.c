/*
 * quick.c: questions without a scenario file: `llmsim run|capacity|recommend --model M --gpu G
 * --tp N --engine E --rate R --isl I --osl O` (or `--lengths sharegpt`). The options become
 * --set overrides, applied before the user's own --set; without FILE they apply to a small
 * scenario: vLLM (the engine most deployments run), 1,000 Poisson requests at 1 req/s unless
 * --engine, --requests and --rate say otherwise. Every answer is the one the same scenario file
 * would give.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "preset.h"

/* The ShareGPT (prompt, output) pairs the field's benchmarks sample (vidur's processed table,
 * Llama-2 tokenizer), in the shared data. */
#define SHAREGPT "traces/etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"

static const char base_text[] = "# a question asked with options, not a scenario file\n"
                                "name: question\n"
                                "seed: 1\n"
                                "engine: vllm\n"
                                "workload:\n"
                                "  num_requests: 1000\n"
                                "  arrival: {process: poisson, rate: 1}\n";

int cli_quick_options(cli_quick *q, cli_option *opts, int n)
{
    const cli_option add[] = {
        {"--model", "M", CLI_STRING, &q->model,
         "the model: a catalog name, a Hugging Face id of one, or a config.json (or its folder)",
         NULL, 0, 0, NULL, NULL},
        {"--gpu", "G", CLI_STRING, &q->gpu,
         "the GPU (catalog name or usual spelling: h100, b200-sxm)", NULL, 0, 0, NULL, NULL},
        {"--tp", "N", CLI_INT, &q->tp, "tensor parallel GPUs per replica", NULL, 1, 1024, NULL,
         NULL},
        {"--ep", "N", CLI_INT, &q->ep, "expert parallel (1 or tp x dp)", NULL, 1, 1024, NULL, NULL},
        {"--dp", "N", CLI_INT, &q->dp, "attention data parallel ranks per replica", NULL, 1, 1024,
         NULL, NULL},
        {"--engine", "E", CLI_STRING, &q->engine, "the engine preset: vllm, sglang, trtllm, tgi",
         NULL, 0, 0, NULL, NULL},
        {"--rate", "R", CLI_DOUBLE, &q->rate, "Poisson arrivals, requests/s", "1 without FILE",
         1e-9, 1e9, NULL, NULL},
        {"--isl", "I", CLI_INT, &q->isl, "prompt tokens of every request", NULL, 1, 100000000, NULL,
         NULL},
        {"--osl", "O", CLI_INT, &q->osl, "output tokens of every request", NULL, 1, 100000000, NULL,
         NULL},
        {"--lengths", "L", CLI_STRING, &q->lengths,
         "(prompt, output) pairs sampled from a table: sharegpt, or a vidur-format CSV", NULL, 0, 0,
         NULL, NULL},
        {"--requests", "N", CLI_INT64, &q->requests, "requests per run", "1000 without FILE", 1,
         1e12, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++)
        opts[n++] = add[i];
    return n;
}

static void put(cli_quick *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(cli_quick *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->buf[q->nbuf], sizeof q->buf[0], fmt, ap);
    va_end(ap);
    q->nbuf++;
}

/* Appends " NAME VALUE" to q->shown when value is given. */
static void show(cli_quick *q, const char *name, const char *value)
{
    size_t n = strlen(q->shown);
    if (value && n < sizeof q->shown)
        snprintf(q->shown + n, sizeof q->shown - n, "%s%s %s", n ? " " : "", name, value);
}

static void show_num(cli_quick *q, const char *name, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.10g", v);
    if (v > 0)
        show(q, name, b);
}

/* An engine preset name, or an error naming the nearest. */
static int check_engine(const char *cmd, const char *e)
{
    size_t n;
    const eng_preset *all = eng_preset_all(&n);
    const char *names[32];
    int k = 0;
    for (size_t i = 0; i < n && k < 32; i++) {
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= strcmp(names[j], all[i].engine) == 0;
        if (!seen)
            names[k++] = all[i].engine;
        if (strcmp(all[i].engine, e) == 0)
            return 0;
    }
    char near[128], list[256];
    sim_nearest(e, names, k, 3, near, sizeof near);
    fprintf(stderr, "llmsim %s: unknown engine '%s'%s%s; valid: %s\n", cmd, e,
            near[0] ? "; nearest: " : "", near, eng_preset_names(list, sizeof list));
    return -1;
}

/* --lengths: sharegpt, or a path to a vidur-format table. */
static int add_lengths(const char *cmd, cli_quick *q)
{
    static const char *const named[] = {"sharegpt"};
    if (strcmp(q->lengths, "sharegpt") == 0) {
        put(q, "workload.lengths={path: '%s/%s', format: vidur}", study_shared_data(), SHAREGPT);
        return 0;
    }
    if (!strchr(q->lengths, '/') && !strchr(q->lengths, '.')) {
        char near[64];
        sim_nearest(q->lengths, named, 1, 1, near, sizeof near);
        fprintf(stderr,
                "llmsim %s: unknown lengths '%s'%s%s; valid: sharegpt, or a path to a "
                "vidur-format CSV\n",
                cmd, q->lengths, near[0] ? "; nearest: " : "", near);
        return -1;
    }
    put(q, "workload.lengths={path: '%s', format: vidur}", q->lengths);
    return 0;
}

/* Whether the options ask a question without a scenario file: model, GPU and lengths. 0, or 2
 * after a message. */
static int check_without_file(const char *cmd, const cli_quick *q)
{
    if (!q->model) {
        fprintf(stderr,
                "llmsim %s: give a scenario FILE, or --model (with --gpu and --isl/--osl "
                "or --lengths) to ask without one\n",
                cmd);
        return 2;
    }
    if (!q->gpu) {
        fprintf(stderr, "llmsim %s: --model without a FILE needs --gpu\n", cmd);
        return 2;
    }
    if (!q->lengths && !(q->isl && q->osl)) {
        fprintf(stderr, "llmsim %s: give --isl and --osl, or --lengths sharegpt\n", cmd);
        return 2;
    }
    return 0;
}

/* The options given, as the command line wrote them, into q->shown. */
static void show_options(cli_quick *q)
{
    show(q, "--model", q->model);
    show(q, "--gpu", q->gpu);
    show(q, "--engine", q->engine);
    show(q, "--lengths", q->lengths);
    show_num(q, "--tp", q->tp);
    show_num(q, "--ep", q->ep);
    show_num(q, "--dp", q->dp);
    show_num(q, "--rate", q->rate);
    show_num(q, "--isl", q->isl);
    show_num(q, "--osl", q->osl);
    show_num(q, "--requests", (double)q->requests);
}

/* "KEY=VALUE" when the text option was given (value not NULL). */
static void put_text(cli_quick *q, const char *key, const char *value)
{
    if (value)
        put(q, "%s=%s", key, value);
}

/* "KEY=N" when the number option was given (not 0). */
static void put_int(cli_quick *q, const char *key, int n)
{
    if (n)
        put(q, "%s=%d", key, n);
}

/* The deployment options as --set overrides. */
static void put_deployment(cli_quick *q)
{
    put_text(q, "model", q->model);
    put_text(q, "gpu", q->gpu);
    put_int(q, "tensor_parallel", q->tp);
    put_int(q, "expert_parallel", q->ep);
    put_int(q, "data_parallel_attention", q->dp);
    put_text(q, "engine", q->engine);
}

/* The workload options as --set overrides. */
static void put_workload(cli_quick *q)
{
    if (q->rate > 0)
        put(q, "workload.arrival.rate=%.10g", q->rate);
    if (q->requests > 0)
        put(q, "workload.num_requests=%lld", (long long)q->requests);
    put_int(q, "workload.prompt_tokens", q->isl);
    put_int(q, "workload.output_tokens", q->osl);
}

/* Puts the options' overrides before the user's --set (an explicit --set wins). 0, or 2 after a
 * message (too many). */
static int prepend_sets(const char *cmd, const cli_quick *q, cli_common *c)
{
    if (c->nsets + q->nbuf > STUDY_MAX_SETS) {
        fprintf(stderr, "llmsim %s: at most %d --set overrides with the options\n", cmd,
                STUDY_MAX_SETS);
        return 2;
    }
    memmove(c->sets + q->nbuf, c->sets, (size_t)c->nsets * sizeof c->sets[0]);
    for (int i = 0; i < q->nbuf; i++)
        c->sets[i] = q->buf[i];
    c->nsets += q->nbuf;
    return 0;
}

int cli_quick_apply(const char *cmd, cli_quick *q, cli_common *c, const char **file,
                    const char **text)
{
    *text = NULL;
    q->nbuf = 0;
    q->shown[0] = '\0';
    if (!*file && check_without_file(cmd, q) != 0)
        return 2;
    if (q->engine && check_engine(cmd, q->engine) != 0)
        return 2;
    show_options(q);
    put_deployment(q);
    put_workload(q);
    if (q->lengths && add_lengths(cmd, q) != 0)
        return 2;
    if (prepend_sets(cmd, q, c) != 0)
        return 2;
    if (!*file) {
        *file = "(options)";
        *text = base_text;
    }
    return CLI_GO;
}
