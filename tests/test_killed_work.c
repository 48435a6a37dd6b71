/*
 * test_killed_work.c: a validate or capacity search killed part way (SIGKILL to its process
 * group, workers included) leaves nothing a rerun piles onto.
 *
 * - validate writes its runs with the validation in one transaction: after the kill the
 *   database holds no run without its validation, and a rerun stores exactly one validation
 *   whose rows hold every run.
 * - capacity resumes: the rerun of the same command takes up the unfinished search, reads its
 *   stored probes back instead of running them again, and ends with the answer and the probes
 *   of an uninterrupted search, and no run twice.
 * When to kill is decided by what the process has done (a stored run or probe, or CPU time
 * used), never by wall time.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "proc_util.h"

static char errbuf[8192];

/* Starts llmsim in a process group of its own with the NULL-terminated arguments; stderr to
 * e2e_dir/err.txt. Its pid (= its group). */
static pid_t start(const char *arg0, ...)
{
    char errpath[400];
    snprintf(errpath, sizeof errpath, "%s/err.txt", e2e_dir);
    va_list ap;
    va_start(ap, arg0);
    pid_t pid = proc_startv(LLMSIM_BINARY, errpath, 1, arg0, ap);
    va_end(ap);
    assert_true(pid > 0);
    return pid;
}

/* Waits for pid; its exit status (-1 when killed); stderr into errbuf. */
static int finish(pid_t pid)
{
    int rc = proc_finish(pid);
    char path[400];
    snprintf(path, sizeof path, "%s/err.txt", e2e_dir);
    proc_read_text(path, errbuf, sizeof errbuf);
    return rc;
}

static void nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int setup(void **state)
{
    return e2e_mkdir();
}

static int teardown(void **state)
{
    return e2e_rmdir();
}

static void test_validate_killed(void **state)
{
    char set[400], rows[400], db[400], sql[256];
    snprintf(set, sizeof set, "%s/killme.yaml", e2e_dir);
    snprintf(rows, sizeof rows, "%s/rows.csv", e2e_dir);
    snprintf(db, sizeof db, "%s/validate.db", e2e_dir);
    e2e_write(set, "name: killme\nkind: serving\ndescription: rows long enough to stop part way\n"
                   "source: made up for the tests\ntable: rows.csv\n"
                   "scenario: " LLMSIM_SOURCE_DIR "/tests/data_validate/base.yaml\n"
                   "id: id\ngroup: \"{backend}\"\nmeasured:\n  mean_ttft_ms: ttft_ms\nset:\n"
                   "  workload.arrival.concurrency: \"{conc}\"\n"
                   "  workload.num_requests: \"{conc*100}\"\n"
                   "  workload.prompt_tokens: \"{isl}\"\n  workload.output_tokens: \"{osl}\"\n");
    e2e_write(rows, "id,backend,conc,isl,osl,ttft_ms\nr1,chunked,8,512,256,20\n"
                    "r2,chunked,8,512,256,20\nr3,chunked,8,512,256,20\nr4,chunked,8,512,256,20\n"
                    "r5,chunked,8,512,256,20\nr6,chunked,8,512,256,20\n");
    static const char orphans[] = "SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id FROM"
                                  " validation_rows WHERE run_id IS NOT NULL)";
    /* stopped once a run is stored (every row's run at once, now) or a third of the work done */
    pid_t pid = start("validate", set, "--db", db, "--jobs", "2", "--quiet", NULL);
    double cpu;
    int64_t runs = 0;
    while ((cpu = proc_tree_cpu(pid)) >= 0 && cpu < 1.5 &&
           (runs = e2e_query_int(db, "SELECT count(*) FROM runs")) <= 0)
        nap();
    kill(-pid, SIGKILL);
    finish(pid);
    print_message("validate stopped after %.2f CPU s with %lld runs stored\n", cpu,
                  (long long)runs);
    int64_t left = e2e_query_int(db, orphans);
    if (left > 0)
        fail_msg("a killed validate left %lld runs attached to no validation", (long long)left);
    /* the rerun: one validation holding all six runs, no other run */
    assert_int_equal(finish(start("validate", set, "--db", db, "--jobs", "2", "--quiet", NULL)), 0);
    assert_int_equal(e2e_query_int(db, orphans), 0);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM validation_rows WHERE run_id IS NOT NULL AND"
             " validation_id = (SELECT max(id) FROM validations)");
    assert_int_equal(e2e_query_int(db, sql), 6);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"),
                     6 * e2e_query_int(db, "SELECT count(*) FROM validations"));
}

#define CAPACITY                                                                                   \
    "capacity", LLMSIM_SOURCE_DIR "/scenarios/capacity.yaml", "--slo", "ttft_p99=1000ms",          \
        "--target-rate", "4", "--precision", "0.1", "--set", "workload.num_requests=100",          \
        "--quiet", "--json"

static void test_capacity_killed(void **state)
{
    char ref[400], db[400];
    snprintf(ref, sizeof ref, "%s/capacity-ref.db", e2e_dir);
    snprintf(db, sizeof db, "%s/capacity.db", e2e_dir);
    assert_int_equal(finish(start(CAPACITY, "--db", ref, NULL)), 0);
    int64_t probes = e2e_query_int(ref, "SELECT count(*) FROM capacity_probes");
    assert_true(probes >= 6);
    /* stopped once two probes are stored */
    pid_t pid = start(CAPACITY, "--db", db, NULL);
    int64_t got = 0;
    while (proc_tree_cpu(pid) >= 0 &&
           (got = e2e_query_int(db, "SELECT count(*) FROM capacity_probes")) < 2)
        nap();
    kill(-pid, SIGKILL);
    finish(pid);
    got = e2e_query_int(db, "SELECT count(*) FROM capacity_probes");
    if (got >= probes || e2e_query_int(db, "SELECT count(*) FROM capacity_results") > 0)
        fail_msg("the search ended (%lld probes) before it could be stopped: make it longer",
                 (long long)got);
    print_message("capacity stopped with %lld of %lld probes stored\n", (long long)got,
                  (long long)probes);
    /* the rerun takes the search up: one search, the uninterrupted one's probes and answer */
    assert_int_equal(finish(start(CAPACITY, "--db", db, NULL)), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 1);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_probes"), probes);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), probes);
    assert_int_equal(e2e_query_int(db, "SELECT count(DISTINCT run_id) FROM capacity_probes"),
                     probes);
    static const char answer[] = "SELECT round(rate_per_replica * 1e6) * 1000 + replicas FROM"
                                 " capacity_results";
    assert_int_equal(e2e_query_int(db, answer), e2e_query_int(ref, answer));
    static const char seq[] = "SELECT sum(seq * 7 + replicas * 3 + ok + round(rate * 1e6))"
                              " FROM capacity_probes";
    assert_int_equal(e2e_query_int(db, seq), e2e_query_int(ref, seq));
    /* a finished search is not taken up again: the same command starts a new one */
    assert_int_equal(finish(start(CAPACITY, "--db", db, NULL)), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_validate_killed),
                                       cmocka_unit_test(test_capacity_killed)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
