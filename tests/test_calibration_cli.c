/* test_calibration_cli.c: the calibrate and profile commands end to end through the llmsim
 * binary: a CPU calibration of a tiny config.json model, profile list/show, the refusal to
 * overwrite a profile, a run driven by the profile, the replay validation, the Vidur import
 * (when ../shared/data/vidur is present) and the errors for unknown names. Nothing asserted
 * depends on how fast this machine runs the kernels: the profile's numbers (and so the
 * iterations of the run it drives) vary from one machine, and one moment, to the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"
#include "test_main.h"

static char tmpdir[256];
static char out[1 << 16];

/* Runs the shell command `prefix ARGS` in the scratch directory with stdout and stderr captured
 * into out; returns the exit status. */
__attribute__((format(printf, 2, 0))) static int vrun(const char *prefix, const char *fmt,
                                                      va_list ap)
{
    char args[2048], cmd[4096], path[300];
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s %s > out.txt 2>&1", tmpdir, prefix, args);
    int st = system(cmd);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `llmsim ARGS`, as vrun. */
__attribute__((format(printf, 1, 2))) static int llmsim(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = vrun("'" LLMSIM_BINARY "'", fmt, ap);
    va_end(ap);
    return st;
}

/* Runs a shell command, as vrun. */
__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = vrun("", fmt, ap);
    va_end(ap);
    return st;
}

static void write_file(const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A two-layer Llama-style model small enough to calibrate in seconds. */
static int mkdir_tiny(const char *dir)
{
    if (mkdir(dir, 0700) != 0)
        return -1;
    write_file("tiny/config.json",
               "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
               "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
               "\"intermediate_size\": 128, \"vocab_size\": 256, "
               "\"max_position_embeddings\": 4096}\n");
    return 0;
}

static int setup(void **state)
{
    if (scratch_make(tmpdir, sizeof tmpdir, "/tmp/llmsim-calcli-XXXXXX") != 0)
        return -1;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/tiny", tmpdir);
    if (mkdir_tiny(dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    return scratch_remove(tmpdir);
}

/* Runs llmsim and fails, showing its output, unless it exits with `status`. */
#define EXPECT(status, ...)                                                                        \
    do {                                                                                           \
        int got_ = llmsim(__VA_ARGS__);                                                            \
        if (got_ != (status))                                                                      \
            fail_msg("exit %d, expected %d:\n%s", got_, (status), out);                            \
    } while (0)
#define CONTAINS(s) assert_non_null_msg(strstr(out, (s)), (s))
#define assert_null_msg(p)                                                                         \
    do {                                                                                           \
        if (p)                                                                                     \
            fail_msg("output has what it should not:\n%s", out);                                   \
    } while (0)
#define assert_non_null_msg(p, what)                                                               \
    do {                                                                                           \
        if (!(p))                                                                                  \
            fail_msg("output lacks '%s':\n%s", (what), out);                                       \
    } while (0)

static void test_calibrate_cpu(void **state)
{
    /* the smoke grid, one timed call per shape: the test checks the workflow, not the medians
     * (which depend on this machine and how busy it is; a Debug build's kernels are slow, and
     * the quick grid took from 2.5 to 8 minutes here) */
    EXPECT(0, "calibrate --backend cpu --model tiny/config.json --grid smoke "
              "--out tiny-cpu --db t.db --seed 3 --runs 1");
    CONTAINS("(smoke grid)");
    CONTAINS("fit report: profile tiny-cpu");
    CONTAINS("attn_decode");
    CONTAINS("overall");
    CONTAINS("profile tiny-cpu saved to t.db");
    CONTAINS("calibrate: ");
    /* the same name again is refused before measuring */
    EXPECT(1, "calibrate --backend cpu --model tiny/config.json --out tiny-cpu "
              "--db t.db");
    CONTAINS("already exists");
    EXPECT(0, "profile list --db t.db");
    CONTAINS("tiny-cpu");
    CONTAINS("measured");
    CONTAINS("roofline (built in)");
    EXPECT(0, "profile show tiny-cpu --db t.db");
    CONTAINS("kind      measured (cpu)");
    CONTAINS("unmeasured embed, sample");
    CONTAINS("roofline-form coefficients");
    EXPECT(1, "profile show nope --db t.db");
    CONTAINS("no profile named 'nope' (profiles there: tiny-cpu)");
    EXPECT(2, "calibrate --backend gpu --model tiny/config.json");
    EXPECT(1, "calibrate --backend cpu --model nosuch --db t.db");
    CONTAINS("unknown model 'nosuch'");
}

static void test_run_and_validate(void **state)
{
    write_file("tiny.yaml", "name: tiny\nseed: 1\nmodel: tiny/config.json\ngpu: l4\n"
                            "scheduler: {name: orca, max_num_seqs: 16}\n"
                            "workload:\n  num_requests: 20\n"
                            "  arrival: {process: poisson, rate: 50.0}\n"
                            "  prompt_tokens: {dist: uniform, min: 20, max: 200}\n"
                            "  output_tokens: {dist: uniform, min: 5, max: 30}\n");
    write_file("tiny_profiled.yaml",
               "name: tiny\nseed: 1\nmodel: tiny/config.json\ngpu: l4\nprofile: tiny-cpu\n"
               "scheduler: {name: orca, max_num_seqs: 16}\n"
               "workload:\n  num_requests: 20\n"
               "  arrival: {process: poisson, rate: 50.0}\n"
               "  prompt_tokens: {dist: uniform, min: 20, max: 200}\n"
               "  output_tokens: {dist: uniform, min: 5, max: 30}\n");
    EXPECT(0, "run tiny.yaml --db t.db");
    /* run 1 used the roofline: validation needs a profile named */
    EXPECT(1, "calibrate validate --run 1 --backend cpu --db t.db");
    CONTAINS("pass --profile NAME");
    EXPECT(0, "calibrate validate --run 1 --backend cpu --max-iters 8 "
              "--profile tiny-cpu --db t.db");
    CONTAINS("iteration time error over 8 iterations: median");
    EXPECT(1, "calibrate validate --run 99 --backend cpu --db t.db");
    CONTAINS("no run 99");
    /* the profile was measured on the CPU, the scenario runs on an L4: refused by run and by
     * scenario check alike, unless the scenario says it borrows the profile */
    EXPECT(1, "run tiny_profiled.yaml --db t.db");
    CONTAINS("measured on cpu, but the scenario runs on l4");
    CONTAINS("profile: {name: tiny-cpu, borrow_from: cpu}");
    EXPECT(1, "scenario check tiny_profiled.yaml --db t.db");
    CONTAINS("measured on cpu, but the scenario runs on l4");
    EXPECT(0, "scenario check tiny_profiled.yaml");
    CONTAINS("not looked up (give --db");
    write_file("tiny_wrong.yaml",
               "name: tiny\nseed: 1\nmodel: tiny/config.json\ngpu: l4\n"
               "profile: {name: tiny-cpu, borrow_from: a100-80gb}\n"
               "workload:\n  num_requests: 20\n  arrival: {process: poisson, rate: 50.0}\n"
               "  prompt_tokens: 50\n  output_tokens: 5\n");
    EXPECT(1, "run tiny_wrong.yaml --db t.db");
    CONTAINS("measured on cpu, not a100-80gb");
    write_file("tiny_borrowed.yaml", "name: tiny\nseed: 1\nmodel: tiny/config.json\ngpu: l4\n"
                                     "profile: {name: tiny-cpu, borrow_from: cpu}\n"
                                     "scheduler: {name: orca, max_num_seqs: 16}\n"
                                     "workload:\n  num_requests: 20\n"
                                     "  arrival: {process: poisson, rate: 50.0}\n"
                                     "  prompt_tokens: {dist: uniform, min: 20, max: 200}\n"
                                     "  output_tokens: {dist: uniform, min: 5, max: 30}\n");
    EXPECT(0, "scenario check tiny_borrowed.yaml --db t.db");
    EXPECT(0, "run tiny_borrowed.yaml --db t.db");
    CONTAINS("borrowed for l4");
    CONTAINS("profile tiny-cpu");
    EXPECT(0, "calibrate validate --run 2 --backend cpu --max-iters 8 --db t.db");
    CONTAINS("against profile tiny-cpu");
    CONTAINS("iteration time error over 8 iterations");
}

static void test_import_vidur(void **state)
{
    char dir[512];
    const char *base = getenv("LLMSIM_SHARED_DIR");
    snprintf(dir, sizeof dir, "%s/data/vidur", base ? base : LLMSIM_SHARED_DIR);
    if (access(dir, R_OK) != 0) {
        print_message("skipped: no Vidur tables at %s\n", dir);
        skip();
    }
    EXPECT(0,
           "profile import-vidur '%s' --gpu a100 --model Meta-Llama-3-8B "
           "--db t.db",
           dir);
    CONTAINS("fit report: profile vidur-a100-llama-3-8b");
    CONTAINS("not in the tables (costed by the roofline of a100-80gb): attn_prefill, "
             "attn_decode, lm_head, sample");
    EXPECT(0, "profile show vidur-a100-llama-3-8b --db t.db");
    CONTAINS("kind      imported (vidur)");
    EXPECT(1, "profile import-vidur '%s' --gpu a100 --model phi-2 --db t.db", dir);
    CONTAINS("pass --as NAME");
    EXPECT(1,
           "profile import-vidur '%s' --gpu h100 --model Meta-Llama-3-8B "
           "--db t.db",
           dir);
    CONTAINS("no compute/h100/Meta-Llama-3-8B/mlp.csv");
}

#define SHIPPED LLMSIM_SOURCE_DIR "/profiles/cuda-h100-llama-3.1-8b.csv"

/* A shipped measured profile imports with its provenance and creation time, exports back to
 * the same bytes, and validate --ops prices each of its operators, the LM head too. */
static void test_profile_text(void **state)
{
    (void)state;
    EXPECT(0, "profile import '%s' --db p.db", SHIPPED);
    CONTAINS("profile cuda-h100-llama-3.1-8b saved to p.db: 537 points");
    EXPECT(0, "profile show cuda-h100-llama-3.1-8b --db p.db");
    CONTAINS("device    cuda: NVIDIA H100 80GB HBM3, sm_90");
    CONTAINS("created   2026-11-27T21:39:19Z");
    assert_int_equal(
        shell("('%s' profile export cuda-h100-llama-3.1-8b --db p.db > x.csv)", LLMSIM_BINARY), 0);
    assert_int_equal(shell("cmp x.csv '%s'", SHIPPED), 0);
    EXPECT(1, "profile import '%s' --db p.db", SHIPPED);
    CONTAINS("already exists");
    EXPECT(0, "profile import '%s' --db p.db --out other --quiet", SHIPPED);
    CONTAINS("profile other saved to p.db");
    /* every shipped profile imports */
    assert_int_equal(
        shell("for f in '%s'/profiles/*.csv; do '%s' profile import \"$f\" --db all.db "
              "--quiet || exit 1; done",
              LLMSIM_SOURCE_DIR, LLMSIM_BINARY),
        0);
    EXPECT(0, "validate --ops --profile cuda-h100-llama-3.1-8b --db p.db");
    CONTAINS("measurements: 537: 537 predicted");
    assert_null_msg(strstr(out, "      0.000   -100.0% | llama-3.1-8b tp1 lm_head"));
}

/* A profile text that is not one, or is cut or spoiled, is refused naming the file and line,
 * and no database is written. */
static void test_profile_text_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"op,x\n", "bad.csv:1: not a profile text"},
        {"# llmsim profile, text format 1\n# name: n\n", "bad.csv:2: no columns line"},
        {"# llmsim profile, text format 1\n# colour: red\n", "bad.csv:2: unknown key 'colour'"},
        {"# llmsim profile, text format 1\n# tp: 0\n", "bad.csv:2: '0' is not an integer"},
        {"# llmsim profile, text format 1\nop,x,y,t_ns,p10_ns,p90_ns,runs\n",
         "bad.csv: no '# name:' line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file("bad.csv", bad[i].text);
        EXPECT(1, "profile import bad.csv --db bad.db");
        CONTAINS(bad[i].says);
        assert_int_equal(shell("test -e bad.db"), 1);
    }
    /* the shipped file with one point spoiled, then with its model unknown */
    assert_int_equal(
        shell("(sed '15s/^rmsnorm,1,0,[0-9]*/rmsnorm,1,0,-5/' '%s' > bad.csv)", SHIPPED), 0);
    EXPECT(1, "profile import bad.csv --db bad.db");
    CONTAINS("bad.csv:15: t_ns '-5' is not a number");
    assert_int_equal(
        shell("(sed 's/^# model: .*/# model: no-such-model/' '%s' > bad.csv)", SHIPPED), 0);
    EXPECT(1, "profile import bad.csv --db bad.db");
    CONTAINS("bad.csv: ");
    CONTAINS("no-such-model");
    assert_int_equal(shell("test -e bad.db"), 1);
}

LLMSIM_TESTS(tests, test_calibrate_cpu, test_run_and_validate, test_import_vidur, test_profile_text,
             test_profile_text_refused);

int main(void)
{
    if (access(LLMSIM_BINARY, X_OK) != 0) {
        fprintf(stderr, "skipped: %s not built\n", LLMSIM_BINARY);
        return 77;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "'%s' calibrate --help 2>&1 | grep -q 'unknown command'",
             LLMSIM_BINARY);
    if (system(cmd) == 0) {
        fprintf(stderr, "skipped: %s does not dispatch 'calibrate' and 'profile' yet\n",
                LLMSIM_BINARY);
        return 77;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
