/*
 * test_scenarios_limits.c: the scenario loader's limits and time checks, each a defect found by
 * fuzzing or fault tests: YAML nested 40,000 levels deep (a stack overflow in the tree builder),
 * 20,000 nested maps in 100 KB (a 400 MB stored scenario), a file or an emitted text too large,
 * overrides too deep; arrivals past the simulated horizon (int64 nanoseconds) from a tiny rate,
 * a think time, a trace stretched by time_scale or rate; Azure timestamps after 2262-04-11;
 * /dev/zero given as a trace (an endless line read into memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "scenario.h"
#include "test_main.h"

extern const scn_resolver test_resolver;

/* a seed whose Poisson gaps at 2e-9/s carry the 3rd request past 10^9 s (found by trying) */
#define SEED 2

static char dir[64];

static const char *const HEAD = "model: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: orca}\n";
static const char *const WORK = "workload:\n  num_requests: 10\n  arrival: {process: burst}\n"
                                "  prompt_tokens: 10\n  output_tokens: 10\n";

/* HEAD + `description: ` + body + WORK, in a buffer the caller frees. */
static char *with_description(const char *body)
{
    size_t n = strlen(HEAD) + strlen(body) + strlen(WORK) + 32;
    char *t = malloc(n);
    snprintf(t, n, "%sdescription: %s\n%s", HEAD, body, WORK);
    return t;
}

/* open^n + leaf + close^n */
static char *nest(const char *open, const char *leaf, const char *close, int n)
{
    size_t lo = strlen(open), lc = strlen(close), ll = strlen(leaf);
    char *b = malloc((size_t)n * (lo + lc) + ll + 1), *p = b;
    for (int i = 0; i < n; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, leaf, ll);
    p += ll;
    for (int i = 0; i < n; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return b;
}

/* Loads text; returns the status and leaves the message in e. */
static int load(const char *text, const char *const *sets, int nsets, sim_err *e)
{
    scn_scenario s;
    int rc = scn_load_text("l.yaml", text, sets, nsets, &test_resolver, &s, e);
    scn_free(&s);
    return rc;
}

static void expect_error(const char *text, const char *const *sets, int nsets, const char *frag)
{
    sim_err e = {{0}};
    int rc = load(text, sets, nsets, &e);
    if (rc == 0)
        fail_msg("loaded, expected an error with '%s'", frag);
    if (!strstr(e.msg, frag))
        fail_msg("error '%s' lacks '%s'", e.msg, frag);
}

/* 40,000 `[` overflowed the stack of the recursive tree builder. */
static void deep_sequences(void **state)
{
    char *body = nest("[", "1", "]", 40000);
    char *text = with_description(body);
    expect_error(text, NULL, 0, "l.yaml:4: nested more than 64 levels deep");
    free(body);
    free(text);
}

/* 20,000 nested maps in about 100 KB came back as a 400 MB scenario text (each level indents
 * every line below it). */
static void deep_maps(void **state)
{
    char *body = nest("{a: ", "1", "}", 20000);
    char *text = with_description(body);
    assert_true(strlen(text) < 110000);
    expect_error(text, NULL, 0, "nested more than 64 levels deep");
    free(body);
    free(text);
}

/* Depth up to the limit loads, and the emitted text grows only by the indentation. */
static void deep_enough(void **state)
{
    char *body = nest("{a: ", "1", "}", 62); /* root 1, 62 maps (2..63), the scalar 64 */
    char *text = with_description(body);
    sim_err e = {{0}};
    scn_scenario s;
    int rc = scn_load_text("l.yaml", text, NULL, 0, &test_resolver, &s, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_true(strlen(s.text) < 8000);
    scn_free(&s);
    free(body);
    free(text);
    body = nest("{a: ", "1", "}", 63);
    text = with_description(body);
    expect_error(text, NULL, 0, "nested more than 64 levels deep");
    free(body);
    free(text);
}

/* Many leaves 60 levels down: 200 KB of flow style would be stored as ~12 MB. */
static void emitted_text_limit(void **state)
{
    int leaves = 100000;
    char *list = malloc((size_t)leaves * 2 + 3), *p = list;
    *p++ = '[';
    for (int i = 0; i < leaves; i++) {
        *p++ = i ? ',' : '1';
        if (i)
            *p++ = '1';
    }
    *p++ = ']';
    *p = '\0';
    char *body = nest("{a: ", list, "}", 58);
    char *text = with_description(body);
    expect_error(text, NULL, 0, "written back as YAML (what a run stores) would exceed 4194304");
    free(list);
    free(body);
    free(text);
}

static void file_size_limit(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(HEAD, f);
    for (int i = 0; i < 30000; i++)
        fputs("# a comment line that makes the file larger than any scenario needs to be\n", f);
    fputs(WORK, f);
    fclose(f);
    scn_scenario s;
    sim_err e = {{0}};
    assert_int_equal(scn_load(path, NULL, 0, &test_resolver, &s, &e), -1);
    scn_free(&s);
    assert_non_null(strstr(e.msg, "larger than a scenario file may be (1048576 bytes at most)"));
}

static void deep_overrides(void **state)
{
    char text[512];
    snprintf(text, sizeof text, "%s%s", HEAD, WORK);
    /* a path of 70 segments */
    char path[400] = "description";
    for (int i = 0; i < 69; i++)
        strcat(path, ".a");
    strcat(path, "=1");
    const char *sets[1] = {path};
    expect_error(text, sets, 1, "a key path of 63 segments or more");
    /* a value nested 70 deep */
    char *val = nest("[", "1", "]", 70);
    size_t n = strlen(val) + 32;
    char *set = malloc(n);
    snprintf(set, n, "description=%s", val);
    sets[0] = set;
    expect_error(text, sets, 1, "nested more than 64 levels deep");
    free(val);
    free(set);
}

/* ---- the simulated horizon ---- */

static scn_source *source_seeded(const char *workload, uint64_t seed, scn_scenario *s)
{
    char text[2048];
    snprintf(text, sizeof text, "%sworkload:\n%s", HEAD, workload);
    sim_err e = {{0}};
    int rc = scn_load_text("l.yaml", text, NULL, 0, &test_resolver, s, &e);
    if (rc)
        fail_msg("%s", e.msg);
    scn_source *src = scn_source_new(s, seed, &e);
    if (!src)
        fail_msg("%s", e.msg);
    return src;
}

static scn_source *source_of(const char *workload, scn_scenario *s)
{
    return source_seeded(workload, 1, s);
}

/* The workload line of the CSV trace at path (columns t, p and o), extra (", key: value"..., or
 * "") after its columns, into w (len bytes): w. */
static const char *csv_trace(char *w, size_t len, const char *path, const char *extra)
{
    snprintf(w, len,
             "  trace: {path: %s, format: csv, columns: {time: t, prompt: p, output: o}%s}\n", path,
             extra);
    return w;
}

/* A scenario (HEAD) whose workload is csv_trace's, into text (len bytes): text. */
static const char *csv_scenario(char *text, size_t len, const char *path, const char *extra)
{
    char w[512];
    snprintf(text, len, "%sworkload:\n%s", HEAD, csv_trace(w, sizeof w, path, extra));
    return text;
}

/* Pulls arrivals until the end or an error; returns the last status, e gets the message. */
static int drain(scn_source *src, int max, sim_err *e)
{
    eng_arrival a;
    int rc = ENG_SRC_OK;
    for (int i = 0; i < max && rc == ENG_SRC_OK; i++)
        rc = scn_source_ops()->next(src, 0, &a, e);
    return rc;
}

/* The source of workload (drawn at seed) must stop on an error whose message holds want, and
 * want2 too unless it is NULL. */
static void source_fails(const char *workload, uint64_t seed, const char *want, const char *want2)
{
    scn_scenario s;
    scn_source *src = source_seeded(workload, seed, &s);
    sim_err e = {{0}};
    assert_int_equal(drain(src, 10, &e), ENG_SRC_ERROR);
    if (!strstr(e.msg, want) || (want2 && !strstr(e.msg, want2)))
        fail_msg("expected '%s'%s%s in: %s", want, want2 ? " and " : "", want2 ? want2 : "", e.msg);
    scn_source_free(src);
    scn_free(&s);
}

/* `arrival.rate: 1e-9` put the 2nd request 10^9 s (and the 1000th 10^12 s) out: past int64 ns,
 * giving wrong metrics and exit 0. */
static void tiny_rate(void **state)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%sworkload:\n  num_requests: 1000\n  arrival: {process: poisson, rate: 1e-9}\n"
             "  prompt_tokens: 10\n  output_tokens: 10\n",
             HEAD);
    expect_error(text, NULL, 0, "l.yaml:6: workload.arrival.rate: 1000 requests at 1e-09/s span");
    expect_error(text, NULL, 0, "past its horizon of 1e+09 s");
    /* a random process whose nominal span fits but whose draws do not stops the run: with
     * seed SEED the two Poisson gaps add up to more than 10^9 s */
    const char *w = "  num_requests: 3\n  arrival: {process: poisson, rate: 2e-9}\n"
                    "  prompt_tokens: 10\n  output_tokens: 10\n";
    source_fails(w, SEED, "workload.arrival: request 3 would arrive at",
                 "past the simulated horizon of 1e+09 s");
    snprintf(text, sizeof text,
             "%sworkload:\n  num_requests: 10\n  arrival: {process: closed, concurrency: 1, "
             "think_time_ms: 1e300}\n  prompt_tokens: 10\n  output_tokens: 10\n",
             HEAD);
    expect_error(text, NULL, 0, "workload.arrival.think_time_ms: expected a number in [0, 1e+12]");
}

static void write_file(const char *name, const char *text, char *path)
{
    snprintf(path, 128, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* time_scale and rate multiply re-based trace times: a huge factor overflowed int64 ns. */
static void stretched_trace(void **state)
{
    char path[128], w[512];
    write_file("t.csv", "t,p,o\n0,10,10\n1000,10,10\n2000,10,10\n", path);
    source_fails(csv_trace(w, sizeof w, path, ", time_scale: 1e300"), 1,
                 "t.csv:3: workload.trace.time_scale: request 2 would arrive at",
                 "past the simulated horizon");
    source_fails(csv_trace(w, sizeof w, path, ", rate: 1e-20"), 1,
                 "workload.trace.rate (rescaled): request 2", NULL);
    /* a window start past the horizon is refused at load time */
    char text[1024];
    expect_error(csv_scenario(text, sizeof text, path, ", start_s: 1e20"), NULL, 0,
                 "workload.trace.start_s: expected a number in [0, 1e+09]");
}

/* Azure timestamps after 2262-04-11 overflowed int64 ns in parse_datetime: a false "time goes
 * backwards" in Release, undefined behaviour in Debug. */
static void azure_far_future(void **state)
{
    char path[128], w[512];
    write_file("az.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2262-04-11 23:47:16.000000,10,10\n"
               "2262-04-11 23:47:16.854775807,10,10\n"
               "2262-04-11 23:47:17.0000000,10,10\n"
               "9999-12-31 23:59:59.9999999,10,10\n"
               "1969-12-31 23:59:59.0000000,10,10\n",
               path);
    snprintf(w, sizeof w, "  trace: {path: %s, format: azure, on_bad_row: skip}\n", path);
    scn_scenario s;
    scn_source *src = source_of(w, &s);
    sim_err e = {{0}};
    eng_arrival a[2];
    assert_int_equal(scn_source_ops()->next(src, 0, &a[0], &e), ENG_SRC_OK);
    assert_int_equal(scn_source_ops()->next(src, 0, &a[1], &e), ENG_SRC_OK);
    assert_int_equal(a[1].t - a[0].t, 854775807);
    assert_int_equal(scn_source_ops()->next(src, 0, &a[0], &e), ENG_SRC_END);
    assert_int_equal(scn_source_skipped(src), 3);
    scn_source_free(src);
    scn_free(&s);
    snprintf(w, sizeof w, "  trace: {path: %s, format: azure}\n", path);
    source_fails(w, 1,
                 "az.csv:4: bad row: field 'TIMESTAMP' is outside 1970-01-01 .. 2262-04-11 (int64 "
                 "nanoseconds): '2262-04-11 23:47:17.0000000'",
                 NULL);
}

/* /dev/zero as a trace was one endless line read into memory; a device, a directory or a pipe
 * is refused, and so is a line longer than 1 MiB. */
static void not_a_trace_file(void **state)
{
    char text[1024];
    const char *paths[] = {"/dev/zero", "/tmp"};
    for (int i = 0; i < 2; i++) {
        expect_error(csv_scenario(text, sizeof text, paths[i], ""), NULL, 0, "not a regular file");
    }
    char path[128];
    size_t n = (1 << 20) + 10;
    char *line = malloc(n + 8);
    memset(line, 'x', n);
    strcpy(line + n, "\n");
    write_file("long.csv", line, path);
    free(line);
    expect_error(csv_scenario(text, sizeof text, path, ""), NULL, 0,
                 "long.csv:1: a line longer than 1048576 bytes (the limit)");
}

/* A line over the limit was read whole before it was refused: 1 GB of line took 1 GB. A 64 MiB
 * line (a sparse file) must be refused having grown the process's peak memory by little more
 * than the limit; measured in a child, whose peak starts where this process stands. */
static void huge_line_not_read_whole(void **state)
{
    char path[128], text[1024];
    snprintf(path, sizeof path, "%s/huge.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)64 << 20), 0);
    fclose(f);
    csv_scenario(text, sizeof text, path, "");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        sim_err e = {{0}};
        int rc = load(text, NULL, 0, &e);
        getrusage(RUSAGE_SELF, &after);
        if (rc == 0 || !strstr(e.msg, "huge.csv:1: a line "))
            _exit(2);
        _exit(after.ru_maxrss - before.ru_maxrss > 16 * 1024 ? 1 : 0); /* kB */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 1)
        fail_msg("refusing a 64 MiB line grew the peak memory by more than 16 MiB");
    assert_int_equal(WEXITSTATUS(st), 0);
    remove(path);
}

/* A header and no rows replayed as no requests with exit status 0; said empty, at load time. */
static void empty_traces(void **state)
{
    char path[128], text[1024];
    static const struct {
        const char *name, *body, *format, *frag;
    } cases[] = {
        {"header.csv", "t,p,o\n", "csv", "header.csv: no rows after the header line"},
        {"blank.csv", "t,p,o\n\n  \n", "csv", "blank.csv: no rows after the header line"},
        {"empty.jsonl", "", "mooncake", "empty.jsonl: no rows: the trace is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(cases[i].name, cases[i].body, path);
        snprintf(text, sizeof text,
                 "%sworkload:\n  trace: {path: %s, format: %s, columns: {time: t, prompt: p, "
                 "output: o}}\n",
                 HEAD, path, cases[i].format);
        if (strcmp(cases[i].format, "mooncake") == 0)
            snprintf(text, sizeof text, "%sworkload:\n  trace: {path: %s, format: mooncake}\n",
                     HEAD, path);
        expect_error(text, NULL, 0, cases[i].frag);
    }
}

/* A CSV saved by a spreadsheet starts with a UTF-8 byte-order mark: "no column 't'". */
static void byte_order_mark(void **state)
{
    char path[128], w[512];
    write_file("bom.csv", "\xEF\xBB\xBFt,p,o\n0,10,10\n1,20,20\n", path);
    csv_trace(w, sizeof w, path, "");
    scn_scenario s;
    scn_source *src = source_of(w, &s);
    sim_err e = {{0}};
    eng_arrival a;
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.prompt, 10);
    assert_int_equal(scn_source_ops()->next(src, 0, &a, &e), ENG_SRC_OK);
    assert_int_equal(a.prompt, 20);
    scn_source_free(src);
    scn_free(&s);
}

/* 2023-02-30 was accepted as an Azure time (as 2023-03-02); leap days are calendar ones. */
static void calendar_dates(void **state)
{
    char path[128], w[512];
    static const struct {
        const char *date;
        int ok;
    } cases[] = {{"2023-02-30", 0}, {"2023-02-29", 0}, {"2100-02-29", 0}, {"2023-04-31", 0},
                 {"2024-02-29", 1}, {"2000-02-29", 1}, {"2023-12-31", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n%s 00:00:00.0000000,10,10\n",
                 cases[i].date);
        write_file("az-date.csv", body, path);
        snprintf(w, sizeof w, "  trace: {path: %s, format: azure}\n", path);
        scn_scenario s;
        scn_source *src = source_of(w, &s);
        sim_err e = {{0}};
        eng_arrival a;
        int rc = scn_source_ops()->next(src, 0, &a, &e);
        if (cases[i].ok)
            assert_int_equal(rc, ENG_SRC_OK);
        else if (rc != ENG_SRC_ERROR || !strstr(e.msg, "a day the calendar does not have"))
            fail_msg("%s: accepted or the wrong error: %s", cases[i].date, e.msg);
        scn_source_free(src);
        scn_free(&s);
    }
}

/* Distribution parameters whose draws are no numbers: gamma cv 1e300 passed `scenario check`
 * and every arrival was NaN ("arrives at -nan s" in run); a lognormal sigma whose square
 * overflows; a normal with no mass in its window failed only when the run built its sampler. */
static void unrepresentable_params(void **state)
{
    char text[1024];
    static const struct {
        const char *arrival, *prompt, *frag;
    } bad[] = {
        {"{process: gamma, rate: 2, cv: 1e300}", "10",
         "l.yaml:6: workload.arrival: gamma {rate: 2, cv: 1e+300}: shape 1/cv^2 = 0"},
        {"{process: gamma, rate: 1e-300, cv: 1e10}", "10", "workload.arrival: gamma"},
        {"{process: poisson, rate: 2}", "{dist: lognormal, mean: 100, sigma: 1e200}",
         "l.yaml:7: workload.prompt_tokens: lognormal {mean: 100, sigma: 1e+200}"},
        {"{process: poisson, rate: 2}", "{dist: normal, mean: 1e9, std: 1, max: 100}",
         "workload.prompt_tokens: normal {mean: 1e+09, std: 1} has no mass in [1, 100]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "%sworkload:\n  num_requests: 10\n  arrival: %s\n  prompt_tokens: %s\n"
                 "  output_tokens: 10\n",
                 HEAD, bad[i].arrival, bad[i].prompt);
        expect_error(text, NULL, 0, bad[i].frag);
    }
    /* an override is checked as the file is */
    snprintf(text, sizeof text,
             "%sworkload:\n  num_requests: 10\n  arrival: {process: gamma, rate: 2, cv: 1}\n"
             "  prompt_tokens: 10\n  output_tokens: 10\n",
             HEAD);
    const char *sets[] = {"workload.arrival.cv=1e300"};
    expect_error(text, sets, 1, "shape 1/cv^2 = 0");
    /* a large but representable cv loads and draws numbers */
    scn_scenario s;
    scn_source *src = source_of("  num_requests: 10\n  arrival: {process: gamma, rate: 2, cv: "
                                "1e100}\n  prompt_tokens: 10\n  output_tokens: 10\n",
                                &s);
    sim_err e = {{0}};
    assert_int_equal(drain(src, 10, &e), ENG_SRC_OK);
    scn_source_free(src);
    scn_free(&s);
}

LLMSIM_TESTS(tests, deep_sequences, deep_maps, deep_enough, emitted_text_limit, file_size_limit,
             deep_overrides, tiny_rate, stretched_trace, azure_far_future, not_a_trace_file,
             unrepresentable_params, huge_line_not_read_whole, empty_traces, byte_order_mark,
             calendar_dates);

int main(void)
{
    return scratch_run_group(tests, dir, "/tmp/llmsim-limits-XXXXXX");
}
