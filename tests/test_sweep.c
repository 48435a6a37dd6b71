/*
 * test_sweep.c: `llmsim sweep` and `llmsim capacity` end to end: the cross product is stored
 * once per (point, rep); a second start skips what is stored; a sweep killed mid-way and started
 * again ends with every point stored exactly once and no half runs; points with the same seed
 * see the same arrivals whatever the scheduler; a sweep point stores the same requests and
 * scheduled spans as `llmsim run` of that point (its rows travel through the worker's spool);
 * a worker reuses a cost model only for points it fits;
 * the capacity answer meets its SLOs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "test_main.h"

static const char scenario[] = "name: sw\n"
                               "seed: 5\n"
                               "model: llama-3-8b\n"
                               "gpu: h100-sxm\n"
                               "scheduler: {name: orca}\n"
                               "slo: {ttft_ms: 1000, tpot_ms: 50}\n"
                               "workload:\n"
                               "  num_requests: 150\n"
                               "  arrival: {process: poisson, rate: 4.0}\n"
                               "  prompt_tokens: {dist: uniform, min: 200, max: 1500}\n"
                               "  output_tokens: {dist: uniform, min: 20, max: 200}\n";

static void paths(char *scn, char *db, const char *dbname)
{
    snprintf(scn, 300, "%s/sw.yaml", e2e_dir);
    snprintf(db, 300, "%s/%s", e2e_dir, dbname);
    e2e_write(scn, scenario);
}

static void test_sweep_stores_each_point_once(void **state)
{
    char scn[300], db[300], out[16384], err[8192];
    paths(scn, db, "a.db");
    const char *args = "--vary scheduler.name=orca,vllm --vary workload.arrival.rate=2,6 "
                       "--reps 2 --jobs 2";
    int st = e2e_sh(out, sizeof out, err, sizeof err, "%s sweep %s --db %s %s", LLMSIM_BINARY, scn,
                    db, args);
    print_message("%s%s", err, out);
    assert_int_equal(st, 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweeps"), 1);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_points"), 8);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 8);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_params"), 8);
    assert_int_equal(e2e_query_int(db, "SELECT count(DISTINCT seed) FROM sweep_points"), 2);
    /* the sweep_curve view: one row per point and repetition, the varied rate as offered_rate */
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_curve WHERE sweep_id = 1 AND"
                                       " p99_ttft_ms > 0 AND output_throughput > 0"),
                     8);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_curve WHERE offered_rate IN"
                                       " (2, 6)"),
                     8);
    assert_non_null(strstr(out, "paired differences"));
    /* again: nothing to run, nothing added */
    e2e_llmsim_says(err, sizeof err, 0, "8 stored, 0 to run", "sweep %s --db %s %s", scn, db, args);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 8);
    /* common random numbers: rep 0 of orca and of vllm at rate 2 saw the same requests */
    assert_int_equal(
        e2e_query_int(db,
                      "SELECT count(*) FROM requests a JOIN requests b ON a.req_id = b.req_id"
                      " WHERE a.run_id = (SELECT run_id FROM sweep_points WHERE point = 0 AND rep"
                      " = 0) AND b.run_id = (SELECT run_id FROM sweep_points WHERE point = 2 AND"
                      " rep = 0) AND a.arrival_ns = b.arrival_ns AND a.prompt_tokens ="
                      " b.prompt_tokens AND a.output_tokens = b.output_tokens"),
        150);
    /* a range expands to its values */
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s sweep %s --db %s --vary workload.arrival.rate=1:3:0.5 --jobs 1 --store summary",
                LLMSIM_BINARY, scn, db);
    assert_int_equal(st, 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweeps"), 2);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_params WHERE sweep_id = 2"), 5);
    /* a bad value is refused before anything runs */
    e2e_llmsim_says(err, sizeof err, 1, "fifo", "sweep %s --db %s --vary scheduler.name=orca,fifo",
                    scn, db);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweeps"), 2);
}

/* A point that preempts: its requests and scheduled spans, spooled by the worker and written by
 * the sweep, are those `llmsim run` stores for the same scenario and seed. */
static void test_sweep_stores_what_run_stores(void **state)
{
    char scn[300], db[300], out[16384], err[8192];
    paths(scn, db, "spans.db");
    const char *sets = "--set scheduler.name=vllm-v0 --set memory.gpu_utilization=0.205 "
                       "--set workload.arrival.rate=6";
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s sweep %s --db %s %s --vary scheduler.preemption=swap --jobs 1 --quiet",
                    LLMSIM_BINARY, scn, db, sets);
    if (st != 0)
        fail_msg("%s", err);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s run %s --db %s %s --set scheduler.preemption=swap --quiet", LLMSIM_BINARY, scn,
                db, sets);
    if (st != 0)
        fail_msg("%s", err);
    int64_t spans = e2e_query_int(db, "SELECT count(*) FROM request_spans WHERE run_id = 1");
    assert_true(spans > 0); /* it preempts */
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM request_spans WHERE run_id = 2"),
                     spans);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM request_spans a JOIN request_spans b "
                                       "ON b.run_id = 2 AND a.req_id = b.req_id AND a.span = "
                                       "b.span WHERE a.run_id = 1 AND a.replica = b.replica AND "
                                       "a.start_ns = b.start_ns AND a.decode_ns IS b.decode_ns AND "
                                       "a.end_ns = b.end_ns AND a.end_reason = b.end_reason"),
                     spans);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM requests a JOIN requests b ON "
                                       "b.run_id = 2 AND a.req_id = b.req_id WHERE a.run_id = 1 "
                                       "AND a.first_token_ns IS b.first_token_ns AND a.finish_ns "
                                       "IS b.finish_ns AND a.preemptions = b.preemptions"),
                     150);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM iterations WHERE run_id = 1"),
                     e2e_query_int(db, "SELECT count(*) FROM iterations WHERE run_id = 2"));
    assert_int_equal(e2e_query_int(db, "SELECT count(DISTINCT kv_blocks) FROM runs WHERE "
                                       "kv_blocks > 0"),
                     1);
}

/* In db, runs 1 and 2 are a sweep's two points and run 3 is `llmsim run` of the second: the
 * second point has the plain run's mean TPOT, and not the first point's. */
static void assert_second_point_priced_as_run(const char *db)
{
    const char *same = "SELECT count(*) FROM metrics a JOIN metrics b ON b.name = a.name AND "
                       "b.value = a.value WHERE a.name = 'mean_tpot_ms' AND a.run_id = %d AND "
                       "b.run_id = %d";
    char q[300];
    snprintf(q, sizeof q, same, 2, 3);
    assert_int_equal(e2e_query_int(db, q), 1);
    snprintf(q, sizeof q, same, 1, 2);
    assert_int_equal(e2e_query_int(db, q), 0);
}

/* A worker keeps its cost model from point to point only while everything it was built from is
 * the same: a point that changes the KV dtype (not the weights') is priced as `llmsim run`
 * prices it, not with the previous point's model. */
static void test_sweep_cost_model_per_point(void **state)
{
    char scn[300], db[300], out[16384], err[8192];
    paths(scn, db, "kv.db");
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s sweep %s --db %s --vary kv_dtype=bf16,fp8 --jobs 1 --store summary --quiet",
                    LLMSIM_BINARY, scn, db);
    if (st != 0)
        fail_msg("%s", err);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s run %s --db %s --set kv_dtype=fp8 --store summary --quiet", LLMSIM_BINARY, scn,
                db);
    if (st != 0)
        fail_msg("%s", err);
    assert_second_point_priced_as_run(db); /* fp8: run 2; bf16: run 1 */
}

/* The same for a disaggregated deployment: a point that moves the decode pool to another GPU
 * prices its decode steps on that GPU, as `llmsim run` does. */
static void test_sweep_cost_model_per_pool(void **state)
{
    char scn[300], db[300], out[16384], err[8192];
    snprintf(scn, sizeof scn, "%s/pd.yaml", e2e_dir);
    snprintf(db, sizeof db, "%s/pd.db", e2e_dir);
    e2e_write(scn, "name: pd\nseed: 2\nmodel: llama-3-8b\ngpu: h100-sxm\nengine: vllm\n"
                   "prefill: {replicas: 1}\ndecode: {replicas: 1}\n"
                   "workload:\n  num_requests: 40\n  arrival: {process: poisson, rate: 4}\n"
                   "  prompt_tokens: 500\n  output_tokens: 50\n");
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s sweep %s --db %s --vary decode.gpu=h100-sxm,h200 --jobs 1 --store summary "
                    "--quiet",
                    LLMSIM_BINARY, scn, db);
    if (st != 0)
        fail_msg("%s", err);
    st = e2e_sh(out, sizeof out, err, sizeof err,
                "%s run %s --db %s --set decode.gpu=h200 --store summary --quiet", LLMSIM_BINARY,
                scn, db);
    if (st != 0)
        fail_msg("%s", err);
    assert_second_point_priced_as_run(db);
}

/* Saturation with repetitions: a point saturated in some repetitions says "in k of n" in the
 * table, and the curve draws and reports it so. */
static void test_sweep_saturated_in_k_of_n(void **state)
{
    char db[300], out[16384], err[8192];
    snprintf(db, sizeof db, "%s/sat.db", e2e_dir);
    /* the demo under orca with 300 requests: at 10.8 req/s two of the four seeds saturate, at
     * 12 all four do (rates follow the roofline's capacity: they moved with its constants) */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s sweep %s/scenarios/demo.yaml --db %s --store summary --jobs 2"
                            " --quiet --set scheduler.name=orca --set workload.num_requests=300"
                            " --vary workload.arrival.rate=10.8,12 --reps 4",
                            LLMSIM_BINARY, LLMSIM_SOURCE_DIR, db),
                     0);
    int64_t k = e2e_query_int(db, "SELECT sum(saturated) FROM sweep_points WHERE point = 0");
    print_message("%s", out);
    assert_true(k > 0 && k < 4);
    char want[32];
    snprintf(want, sizeof want, "  in %lld of 4\n", (long long)k);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "  in 4 of 4\n"));
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s plot curve --sweep 1 --db %s -o %s/sat.png", LLMSIM_BINARY, db,
                            e2e_dir),
                     access("/usr/bin/gnuplot", X_OK) == 0 ? 0 : 3);
    snprintf(want, sizeof want, "%lld of 4", (long long)k);
    assert_non_null(strstr(err, "saturated in only some repetitions"));
    assert_non_null(strstr(err, want));
}

static void test_sweep_resumes_after_kill(void **state)
{
    char scn[300], db[300], out[16384], err[8192];
    paths(scn, db, "k.db");
    const char *args = "--vary workload.arrival.rate=1:12:1 --vary scheduler.name=orca,chunked "
                       "--jobs 2";
    /* start the sweep in its own process group; kill the whole group once a few points are
     * stored, while others are in flight */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setsid();
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "exec %s sweep %s --db %s %s >/dev/null 2>&1", LLMSIM_BINARY, scn,
                 db, args);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* no limit on the wait but the sweep's own end: a loaded machine only makes it longer */
    int64_t before = 0;
    while (before < 3 && waitpid(pid, NULL, WNOHANG) == 0) {
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        before = e2e_query_int(db, "SELECT count(*) FROM sweep_points");
    }
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    before = e2e_query_int(db, "SELECT count(*) FROM sweep_points");
    print_message("stored when killed: %lld of 24\n", (long long)before);
    assert_true(before >= 3 && before < 24);
    int st = e2e_sh(out, sizeof out, err, sizeof err, "%s sweep %s --db %s %s", LLMSIM_BINARY, scn,
                    db, args);
    assert_int_equal(st, 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM sweep_points"), 24);
    /* no half runs: every run belongs to a point, and every point has its metrics */
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), 24);
    assert_int_equal(e2e_query_int(db, "SELECT count(DISTINCT run_id) FROM metrics"), 24);
}

static void test_capacity_answer_meets_slos(void **state)
{
    char scn[300], db[300], out[16384], err[16384];
    paths(scn, db, "c.db");
    int st = e2e_sh(out, sizeof out, err, sizeof err,
                    "%s capacity %s --slo ttft_p99=1000ms,tpot_p99=50ms --target-rate 12",
                    LLMSIM_BINARY, scn);
    print_message("%s", out);
    assert_int_equal(st, 0);
    double rate = 0;
    int replicas = 0, gpus = 0;
    const char *row = strstr(out, "\n-");
    assert_non_null(row);
    assert_int_equal(sscanf(row + 2, "%lf %d %d", &rate, &replicas, &gpus), 3);
    assert_true(rate > 0);
    assert_true(replicas >= (int)(12 / rate));
    /* an independent run at the rate found meets both SLOs */
    char json[8192];
    st =
        e2e_sh(json, sizeof json, err, sizeof err,
               "%s run %s --no-db --json --set workload.arrival.rate=%g", LLMSIM_BINARY, scn, rate);
    assert_int_equal(st, 0);
    double ttft = atof(strstr(json, "\"p99_ttft_ms\": ") + 15);
    double tpot = atof(strstr(json, "\"p99_tpot_ms\": ") + 15);
    print_message("at %.3f req/s: p99 TTFT %.1f ms, p99 TPOT %.2f ms\n", rate, ttft, tpot);
    assert_true(ttft <= 1000 && tpot <= 50);
    /* bad SLO syntax is a usage error */
    assert_int_equal(
        e2e_sh(NULL, 0, err, sizeof err, "%s capacity %s --slo ttft=fast", LLMSIM_BINARY, scn), 2);
}

LLMSIM_TESTS(tests, test_sweep_stores_each_point_once, test_sweep_stores_what_run_stores,
             test_sweep_cost_model_per_point, test_sweep_cost_model_per_pool,
             test_sweep_saturated_in_k_of_n, test_sweep_resumes_after_kill,
             test_capacity_answer_meets_slos);

int main(void)
{
    return e2e_run_group(tests);
}
