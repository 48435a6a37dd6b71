/*
 * cmd_bench.c: `llmsim bench [--quick] [--data DIR] [--cases A,B,...]`: how fast the simulator
 * is. Each case runs in its own process (so its peak resident memory is its own) and prints
 * wall seconds, simulated requests, iterations and events per wall second, and peak RSS.
 *
 * Workload: Llama-3-8B on one H100 SXM, lengths sampled jointly from the ShareGPT length table
 * when it is found (DIR/traces/etalon-processed/...), else lognormals fitted to that table,
 * Poisson arrivals at 90% of the policy's capacity; capacity is the request throughput of a
 * burst of 20,000 such requests (2,000 with --quick) through the same policy. Runs store
 * summaries only, so the figures measure the simulator; vllm-stored stores every request and
 * iteration, and sqlite-rows writes request rows alone through the run writer. Static batching
 * runs with batch_size 64 (its throughput grows with the batch). --quick runs a tenth of each.
 */
#define _DEFAULT_SOURCE /* wait4: the peak memory of one case's process */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_common.h"
#include "store_run.h"

#define SHAREGPT "traces/etalon-processed/sharegpt_8k_filtered_stats_llama2_tokenizer.csv"

/* MODEL: lognormals fitted to sharegpt_8k_filtered_stats_llama2_tokenizer.csv (30,731 rows):
 * prompt mean 2340 tokens, sigma of log 1.626; output mean 439, sigma 1.001; the table's own
 * maxima (8141 and 1024) as clips. Used only when the table is absent. */
static const char lognormal_lengths[] =
    "  prompt_tokens: {dist: lognormal, mean: 2340, sigma: 1.626, max: 8141}\n"
    "  output_tokens: {dist: lognormal, mean: 439, sigma: 1.001, max: 1024}\n";

typedef struct bench_case {
    const char *name, *policy;
    int64_t requests; /* full size; --quick divides by 10 */
    int replicas;
    int store; /* 0: summary only; 1: every request stored; 2: rows straight into SQLite */
} bench_case;

static const bench_case cases[] = {
    {"static", "static", 1000000, 1, 0},   {"orca", "orca", 1000000, 1, 0},
    {"vllm", "vllm", 1000000, 1, 0},       {"chunked", "chunked", 1000000, 1, 0},
    {"vllm-small", "vllm", 100000, 1, 0},  {"vllm-large", "vllm", 10000000, 1, 0},
    {"cluster16", "vllm", 1000000, 16, 0}, {"vllm-stored", "vllm", 1000000, 1, 1},
    {"sqlite-rows", NULL, 1000000, 1, 2},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

typedef struct bench_out {
    double wall, requests, iterations, events, rows_per_s, rate;
    int ok;
    char err[1024];
} bench_out;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int scenario_text(char *buf, size_t len, const char *data, const char *policy, int64_t n,
                         int replicas, const char *arrival)
{
    char lengths[1200];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data, SHAREGPT);
    if (access(path, R_OK) == 0)
        snprintf(lengths, sizeof lengths, "  lengths: {path: %s, format: vidur}\n", path);
    else
        snprintf(lengths, sizeof lengths, "%s", lognormal_lengths);
    int w = snprintf(buf, len,
                     "name: bench\nseed: 1\nmodel: llama-3-8b\ngpu: h100-sxm\n"
                     "scheduler: {name: %s%s}\nreplicas: %d\nrouter: least_outstanding\n"
                     "workload:\n  num_requests: %lld\n  arrival: %s\n%s",
                     policy, strcmp(policy, "static") ? "" : ", batch_size: 64", replicas,
                     (long long)n, arrival, lengths);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static int simulate_text(const char *text, store *s, cmd_result *res, sim_err *err)
{
    scn_scenario scn;
    cmd_cost cost = {.profile = NULL};
    int rc = -1;
    if (scn_load_text("bench.yaml", text, NULL, 0, cmd_resolver(), &scn, err) == 0 &&
        cmd_cost_new(&scn, NULL, &cost, err) == 0) {
        cmd_store_opts so = {.s = s, .level = STORE_REQUESTS};
        rc = cmd_simulate(&scn, scn.seed, &cost, s ? &so : NULL, res, err);
    }
    cmd_cost_free(&cost);
    scn_free(&scn);
    return rc;
}

/* Request throughput of a burst through the policy: the replica's capacity. Measured in a child
 * process, so the cases' peak memory is not inflated by it. */
static double capacity(const char *data, const char *policy, int64_t n, sim_err *err)
{
    int fd[2];
    double cap = -1;
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char text[4096];
        cmd_result *res = sim_xcalloc(1, sizeof *res);
        if (scenario_text(text, sizeof text, data, policy, n, 1, "burst") == 0 &&
            simulate_text(text, NULL, res, err) == 0)
            cap = cmd_metric(res, "request_throughput");
        else
            fprintf(stderr, "llmsim bench: %s\n", err->msg);
        ssize_t w = write(fd[1], &cap, sizeof cap);
        _exit(w == (ssize_t)sizeof cap ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], &cap, sizeof cap) != (ssize_t)sizeof cap) {
        cap = -1;
        sim_errf(err, "measuring the capacity of %s failed", policy);
    }
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return cap;
}

/* Writes n request rows through the streaming run writer into a fresh database. */
static int store_rows(const char *db, int64_t n, double *rows_per_s, sim_err *err)
{
    unlink(db);
    store *s = store_open(db, err);
    if (!s)
        return -1;
    store_run_info info = {.name = "rows",
                           .scenario_text = "",
                           .scheduler = "-",
                           .version = LLMSIM_VERSION,
                           .profile = "-",
                           .level = STORE_REQUESTS};
    double t0 = now_s();
    store_run *w = store_run_begin(s, &info, 0, err);
    if (!w) {
        store_close(s);
        return -1;
    }
    eng_request rq;
    memset(&rq, 0, sizeof rq);
    rq.status = ENG_RQ_FINISHED;
    for (int64_t i = 0; i < n; i++) {
        rq.id = i;
        rq.t_arrival = i * 1000;
        rq.t_first_sched = rq.t_last_sched = rq.t_arrival + 10;
        rq.t_first_token = rq.t_arrival + 5000;
        rq.t_finish = rq.t_arrival + 90000;
        rq.prompt = 100 + (int32_t)(i % 900);
        rq.output = 10 + (int32_t)(i % 300);
        rq.scheduled = 1;
        store_run_request(w, &rq);
    }
    int rc = store_run_finish(w, NULL, 0, NULL, NULL, NULL, err);
    *rows_per_s = (double)n / (now_s() - t0);
    store_close(s);
    unlink(db);
    return rc;
}

static void run_case(const bench_case *c, int64_t n, double cap, const char *data,
                     const char *tmpdb, bench_out *o)
{
    sim_err err = {{0}};
    if (c->store == 2) {
        o->ok = store_rows(tmpdb, n, &o->rows_per_s, &err) == 0;
        o->requests = (double)n;
        snprintf(o->err, sizeof o->err, "%s", err.msg);
        return;
    }
    char text[4096], arrival[128];
    o->rate = 0.9 * cap * c->replicas;
    snprintf(arrival, sizeof arrival, "{process: poisson, rate: %.6g}", o->rate);
    store *s = NULL;
    if (c->store == 1) {
        unlink(tmpdb);
        if (!(s = store_open(tmpdb, &err))) {
            snprintf(o->err, sizeof o->err, "%s", err.msg);
            return;
        }
    }
    cmd_result *res = sim_xcalloc(1, sizeof *res);
    double t0 = now_s();
    if (scenario_text(text, sizeof text, data, c->policy, n, c->replicas, arrival) == 0 &&
        simulate_text(text, s, res, &err) == 0) {
        o->wall = now_s() - t0;
        o->requests = cmd_metric(res, "completed") + cmd_metric(res, "rejected");
        o->iterations = (double)res->tot.iterations;
        o->events = (double)res->events;
        o->ok = 1;
    }
    snprintf(o->err, sizeof o->err, "%s", err.msg);
    free(res);
    store_close(s);
    if (c->store == 1)
        unlink(tmpdb);
}

static int usage(void)
{
    fprintf(stderr, "usage: llmsim bench [--quick] [--data DIR] [--cases NAME,...]\ncases:");
    for (int i = 0; i < NCASES; i++)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}

static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    int quick = 0;
    const char *data = LLMSIM_SHARED_DATA, *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if ((v = cli_opt(argc, argv, &i, "--data")))
            data = v;
        else if ((v = cli_opt(argc, argv, &i, "--cases")))
            only = v;
        else
            return usage();
    }
    char path[1024], tmpdb[64];
    snprintf(path, sizeof path, "%s/%s", data, SHAREGPT);
    snprintf(tmpdb, sizeof tmpdb, "/tmp/llmsim-bench-%ld.db", (long)getpid());
    int have = access(path, R_OK) == 0;
    char hw[256];
    printf("llmsim bench%s: llama-3-8b on h100-sxm (roofline), lengths %s, Poisson arrivals at "
           "90%% of each policy's burst capacity\nmachine: %s\n",
           quick ? " --quick" : "", have ? "sampled from the ShareGPT table" : "lognormal fit",
           cmd_hardware(hw, sizeof hw));
    printf("%-15s %10s %8s %11s %13s %14s %14s %9s\n", "case", "requests", "wall_s", "rate_req/s",
           "req/wall_s", "iter/wall_s", "events/wall_s", "peak_MB");
    fflush(stdout);
    /* the peak memory of a process that runs no case: the libraries the binary maps (with CUDA
     * on, cuBLAS alone is most of it) and the parent's pages */
    fflush(NULL);
    pid_t base = fork();
    if (base == 0)
        _exit(0);
    struct rusage ru0;
    wait4(base, NULL, 0, &ru0);
    printf("%-15s %10s %8s %11s %13s %14s %14s %9.1f  (a process that runs nothing)\n", "baseline",
           "-", "-", "-", "-", "-", "-", (double)ru0.ru_maxrss / 1024.0);
    double caps[8] = {0};
    const char *capnames[8] = {0};
    int ncap = 0, failed = 0;
    for (int i = 0; i < NCASES; i++) {
        const bench_case *c = &cases[i];
        if (!selected(only, c->name))
            continue;
        int64_t n = quick ? c->requests / 10 : c->requests;
        double cap = 0;
        if (c->policy) {
            for (int k = 0; k < ncap; k++)
                if (strcmp(capnames[k], c->policy) == 0)
                    cap = caps[k];
            if (cap == 0) {
                sim_err err = {{0}};
                cap = capacity(data, c->policy, quick ? 2000 : 20000, &err);
                if (cap <= 0) {
                    fprintf(stderr, "llmsim bench: %s: %s\n", c->name, err.msg);
                    return 1;
                }
                capnames[ncap] = c->policy;
                caps[ncap++] = cap;
            }
        }
        int fd[2];
        if (pipe(fd) != 0)
            return 1;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            bench_out o;
            memset(&o, 0, sizeof o);
            run_case(c, n, cap, data, tmpdb, &o);
            ssize_t wr = write(fd[1], &o, sizeof o);
            _exit(wr == (ssize_t)sizeof o ? 0 : 1);
        }
        close(fd[1]);
        bench_out o;
        memset(&o, 0, sizeof o);
        ssize_t got = read(fd[0], &o, sizeof o);
        close(fd[0]);
        struct rusage ru;
        int status;
        wait4(pid, &status, 0, &ru);
        if (got != (ssize_t)sizeof o || !o.ok) {
            printf("%-15s failed: %s\n", c->name, got == (ssize_t)sizeof o ? o.err : "crashed");
            failed++;
            continue;
        }
        double mb = (double)ru.ru_maxrss / 1024.0;
        if (c->store == 2)
            printf("%-15s %10.0f %8s %11s %13.0f %14s %14s %9.1f  (request rows/s into SQLite)\n",
                   c->name, o.requests, "-", "-", o.rows_per_s, "-", "-", mb);
        else
            printf("%-15s %10.0f %8.2f %11.2f %13.0f %14.0f %14.0f %9.1f\n", c->name, o.requests,
                   o.wall, o.rate, o.requests / o.wall, o.iterations / o.wall, o.events / o.wall,
                   mb);
        fflush(stdout);
    }
    return failed ? 1 : 0;
}
