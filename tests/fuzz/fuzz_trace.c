/*
 * fuzz_trace.c: libFuzzer harness for every trace format (azure, mooncake, vidur, csv) and
 * every way a scenario reads one: a timed replay (with on_bad_row, a rescaled rate, a time
 * scale, a window), a lengths-only replay, joint (prompt, output) pairs and empirical length
 * distributions.
 *
 * Input: one byte of options, then the file's contents, written to a temporary file that a
 * scenario names. Options: bits 0-1 the format; bit 2 on_bad_row: skip; bits 3-4 the use
 * (timed trace, lengths-only trace, joint pairs, empirical columns); bit 5 rate: 10; bit 6
 * time_scale: 0.001; bit 7 a window (start_s 1, duration_s 5). Up to 512 arrivals are drawn.
 *
 * Speed (about 5M executions in 10 minutes): the file lives in memory (memfd_create, named
 * /proc/self/fd/N), rewritten in place, never on a disk whose filesystem flushes a truncated
 * file on close; and the scenario of each options byte is loaded once (against a well-formed
 * file of its format) and kept: every execution opens the fuzzed file through
 * scn_source_new, whose trace reader is the one the loader probes with.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scenario.h"

extern const scn_resolver test_resolver;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static const char *const formats[] = {"azure", "mooncake", "vidur", "csv"};

/* The scenario text for options o. */
static void scenario_of(unsigned o, char *text, size_t len)
{
    const char *fmt = formats[o & 3];
    char extra[160] = "";
    if ((o & 3) == 3)
        snprintf(extra, sizeof extra, ", columns: {time: t, prompt: p, output: o}");
    const char *arrival = "  arrival: {process: poisson, rate: 50}\n";
    int off = snprintf(text, len,
                       "model: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: orca}\n"
                       "workload:\n  num_requests: 400\n");
    switch ((o >> 3) & 3) {
    case 0: /* timed */
        snprintf(text + off, len - (size_t)off, "  trace: {path: %s, format: %s%s%s%s%s%s}\n", path,
                 fmt, extra, o & 4 ? ", on_bad_row: skip" : "", o & 32 ? ", rate: 10" : "",
                 o & 64 && !(o & 32) ? ", time_scale: 0.001" : "",
                 o & 128 ? ", start_s: 1, duration_s: 5" : "");
        break;
    case 1: /* lengths only */
        snprintf(text + off, len - (size_t)off,
                 "%s  trace: {path: %s, format: %s%s%s, "
                 "lengths_only: true}\n",
                 arrival, path, fmt, extra, o & 4 ? ", on_bad_row: skip" : "");
        break;
    case 2: /* joint pairs */
        if ((o & 3) == 3)
            snprintf(extra, sizeof extra, ", columns: {prompt: p, output: o}");
        snprintf(text + off, len - (size_t)off, "%s  lengths: {path: %s, format: %s%s}\n", arrival,
                 path, fmt, extra);
        break;
    default: /* empirical columns */
        snprintf(text + off, len - (size_t)off,
                 "%s  prompt_tokens: {dist: empirical, path: %s, format: %s%s}\n"
                 "  output_tokens: {dist: empirical, path: %s, format: %s%s, max: 4096}\n",
                 arrival, path, fmt, (o & 3) == 3 ? ", column: p" : "", path, fmt,
                 (o & 3) == 3 ? ", column: o" : "");
        break;
    }
}

static int fd = -1;

/* The file's contents become data[0..n). */
static void put(const void *data, size_t n)
{
    if (ftruncate(fd, 0) != 0 || (n && pwrite(fd, data, n, 0) != (ssize_t)n))
        abort();
}

/* A well-formed file of each format, for loading a scenario once. */
static const char *const sample[] = {
    "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n",
    "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]}\n",
    "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,10,5\n", "t,p,o\n0,10,5\n"};

/* The scenario of options o, loaded once; NULL when it does not load (then no content could
 * make it load: the options contradict each other). */
static const scn_scenario *scenario(unsigned o)
{
    static scn_scenario cache[256];
    static signed char state[256]; /* 0 not tried, 1 loaded, -1 failed */
    if (!state[o]) {
        char text[1024];
        sim_err err = {{0}};
        scenario_of(o, text, sizeof text);
        put(sample[o & 3], strlen(sample[o & 3]));
        state[o] =
            scn_load_text("fuzz/trace.yaml", text, NULL, 0, &test_resolver, &cache[o], &err) == 0
                ? 1
                : -1;
        if (state[o] < 0)
            scn_free(&cache[o]);
    }
    return state[o] > 0 ? &cache[o] : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (fd < 0) {
        if ((fd = memfd_create("llmsim-fuzz-trace", 0)) < 0)
            abort();
        snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)getpid(), fd);
    }
    const scn_scenario *s = scenario(data[0]);
    if (!s)
        return 0;
    put(data + 1, size - 1);
    sim_err err = {{0}};
    scn_source *src = scn_source_new(s, 1, &err);
    eng_arrival a;
    memset(&a, 0, sizeof a);
    for (int i = 0; src && i < 512; i++)
        if (scn_source_ops()->next(src, a.t, &a, &err) != ENG_SRC_OK)
            break;
    scn_source_free(src);
    return 0;
}
