/*
 * fuzz_argv.c: libFuzzer harness for the llmsim command line: the program's own main (cli/,
 * compiled in) given argument vectors.
 *
 * Input: one byte choosing the command (run, scenario, list, sweep, merge, capacity, plot,
 * export, report, profile, validate; bench and calibrate measure for minutes and are left
 * out), then its arguments separated by NUL bytes (at most 24). Everything happens in a folder
 * of its own (in memory where /dev/shm is a tmpfs) holding s.yaml (four requests), d.db (an
 * llmsim database with two runs, a sweep, a capacity search and a validation) and v.yaml (a
 * one-row validation set); files a command writes there are removed after it, and the harness
 * returns to the folder it was started in (libFuzzer reads corpus paths relative to it).
 *
 * So that no input runs for minutes or writes outside that folder, an input is skipped when an
 * argument holds '/' (every path is the folder's), when it names a key that sets the size of a
 * workload or a sweep (num_requests, rate, duration, concurrency, turns, limit, replicas,
 * --reps, --jobs, --target-rate, --precision, time_scale) or holds a number of three digits or
 * more. gnuplot is not run ($LLMSIM_GNUPLOT names no program); the shipped validation sets are
 * replaced by the folder ($LLMSIM_VALIDATION_DIR). stdout and stderr are closed by the CTest
 * command (-close_fd_mask=3).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the program's main, as llmsim_main */
#define main llmsim_main
int llmsim_main(int argc, char **argv);
#include "main.c"
#undef main

#define MAX_ARGS 24

static const char *const cmds[] = {"run",  "scenario", "list",   "sweep",   "merge",   "capacity",
                                   "plot", "export",   "report", "profile", "validate"};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* The folder's own files: everything else is removed after each input. */
static const char *const keep[] = {"s.yaml", "d.db", "v.yaml", "v.csv", NULL};

static const char *const scenario =
    "name: s\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\nscheduler: {name: vllm}\n"
    "slo: {ttft_ms: 1000, tpot_ms: 50}\nworkload:\n  num_requests: 4\n  arrival: burst\n"
    "  prompt_tokens: 20\n  output_tokens: 4\n";

static const char *const vset =
    "name: v\nkind: serving\ndescription: d\nsource: s\ntable: v.csv\nscenario: s.yaml\n"
    "id: id\ngroup: \"{g}\"\nmeasured:\n  mean_ttft_ms: ttft\nset:\n"
    "  workload.output_tokens: \"{osl}\"\n";

static void put_text(const char *name, const char *text)
{
    char path[256];
    fuzz_put(fuzz_file(path, sizeof path, name), text, strlen(text));
}

/* The folder libFuzzer was started in (its corpus and artifact paths may be relative to it)
 * and the harness's own; each input runs in the latter and returns to the former. */
static int home_fd = -1, work_fd = -1;

static void setup(void)
{
    char path[256];
    home_fd = open(".", O_RDONLY | O_DIRECTORY);
    work_fd = open(fuzz_dir("argv"), O_RDONLY | O_DIRECTORY);
    fuzz_must(home_fd >= 0 && work_fd >= 0);
    put_text("s.yaml", scenario);
    put_text("v.yaml", vset);
    put_text("v.csv", "id,g,osl,ttft\nr1,a,4,20\n");
    fuzz_db_template(fuzz_file(path, sizeof path, "d.db"));
    fuzz_file(path, sizeof path, "llmsim.db");
    setenv("LLMSIM_GNUPLOT", "/nonexistent/gnuplot", 1);
    setenv("LLMSIM_VALIDATION_DIR", ".", 1);
    setenv("LLMSIM_DB_TIMEOUT", "0", 1);
}

/* Whether an argument could make the command run for long or write elsewhere. */
static int too_much(const char *a)
{
    static const char *const sizes[] = {"num_requests", "rate",        "duration",   "concurrency",
                                        "turns",        "limit",       "replicas",   "--reps",
                                        "--jobs",       "--precision", "time_scale", NULL};
    if (strchr(a, '/'))
        return 1;
    for (int i = 0; sizes[i]; i++)
        if (strstr(a, sizes[i]))
            return 1;
    int run = 0;
    for (const char *c = a; *c; c++) {
        run = *c >= '0' && *c <= '9' ? run + 1 : 0;
        if (run >= 3)
            return 1;
    }
    return 0;
}

/* Removes what the command wrote into the folder. */
static void tidy(void)
{
    DIR *d = opendir(".");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int kept = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        for (int i = 0; keep[i] && !kept; i++)
            kept = strcmp(e->d_name, keep[i]) == 0 ||
                   (strncmp(e->d_name, keep[i], strlen(keep[i])) == 0 &&
                    e->d_name[strlen(keep[i])] == '-'); /* d.db-wal, d.db-shm */
        if (!kept)
            unlink(e->d_name);
    }
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size < 1 || size > 2048)
        return 0;
    char *buf = malloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    char *argv[MAX_ARGS + 3] = {"llmsim", (char *)cmds[data[0] % NCMDS]};
    int argc = 2, skip = 0;
    for (char *p = buf; p < buf + size - 1 && argc < MAX_ARGS + 2; p += strlen(p) + 1) {
        skip |= too_much(p);
        argv[argc++] = p;
    }
    argv[argc] = NULL;
    if (!skip) {
        fuzz_must(fchdir(work_fd) == 0);
        llmsim_main(argc, argv);
        tidy();
        fuzz_must(fchdir(home_fd) == 0);
    }
    free(buf);
    return 0;
}
