/*
 * test_killed_work.c: a validate or capacity search killed part way (SIGKILL to its process
 * group, workers included) leaves nothing a rerun piles onto.
 *
 * - validate writes its runs with the validation in one transaction: after the kill the
 *   database holds no run without its validation, and a rerun stores exactly one validation
 *   whose rows hold every run.
 * - capacity resumes: the rerun of the same command takes up the unfinished search, reads its
 *   stored probes back instead of running them again, and ends with the answer, the probes and
 *   the runs (a probe's seeds) of an uninterrupted search, and no run twice.
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

/* Waits for pid (started in a process group of its own by e2e_start); its exit status (-1 when
 * killed); stderr into errbuf. */
static int finish(pid_t pid)
{
    return e2e_finish(pid, NULL, errbuf, sizeof errbuf);
}

static void nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
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
    pid_t pid = e2e_start(NULL, 1, "validate", set, "--db", db, "--jobs", "2", "--quiet", NULL);
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
    assert_int_equal(
        finish(e2e_start(NULL, 1, "validate", set, "--db", db, "--jobs", "2", "--quiet", NULL)), 0);
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
    assert_int_equal(finish(e2e_start(NULL, 1, CAPACITY, "--db", ref, NULL)), 0);
    int64_t probes = e2e_query_int(ref, "SELECT count(*) FROM capacity_probes");
    assert_true(probes >= 6);
    /* stopped once two probes are stored */
    pid_t pid = e2e_start(NULL, 1, CAPACITY, "--db", db, NULL);
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
    assert_int_equal(finish(e2e_start(NULL, 1, CAPACITY, "--db", db, NULL)), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 1);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_probes"), probes);
    /* a probe runs seed after seed until its intervals decide it (runs together with its row):
     * the runs are the uninterrupted search's, none lost or made twice */
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"),
                     e2e_query_int(ref, "SELECT count(*) FROM runs"));
    assert_int_equal(e2e_query_int(db, "SELECT sum(seed) FROM runs"),
                     e2e_query_int(ref, "SELECT sum(seed) FROM runs"));
    assert_int_equal(e2e_query_int(db, "SELECT count(DISTINCT run_id) FROM capacity_probes"),
                     probes);
    static const char answer[] = "SELECT round(rate_per_replica * 1e6) * 1000 + replicas FROM"
                                 " capacity_results";
    assert_int_equal(e2e_query_int(db, answer), e2e_query_int(ref, answer));
    static const char seq[] = "SELECT sum(seq * 7 + replicas * 3 + ok + round(rate * 1e6))"
                              " FROM capacity_probes";
    assert_int_equal(e2e_query_int(db, seq), e2e_query_int(ref, seq));
    /* a finished search is not taken up again: the same command starts a new one */
    assert_int_equal(finish(e2e_start(NULL, 1, CAPACITY, "--db", db, NULL)), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 2);
}

/* What a kill leaves (a probe is stored whole with its runs or not at all), made exactly from a
 * finished search: its answers and probes from `seq` on removed with their runs. */
static void cut_search(const char *from, const char *to, int64_t seq)
{
    char sql[1024], out[64], errs[256];
    assert_int_equal(e2e_sh(out, sizeof out, errs, sizeof errs, "cp '%s' '%s'", from, to), 0);
    snprintf(sql, sizeof sql, "SELECT min(run_id) FROM capacity_probes WHERE seq >= %lld",
             (long long)seq);
    int64_t first = e2e_query_int(to, sql);
    assert_true(first > 0);
    snprintf(sql, sizeof sql,
             "DELETE FROM capacity_results; DELETE FROM capacity_probes WHERE seq >= %lld;"
             " DELETE FROM metrics WHERE run_id >= %lld; DELETE FROM runs WHERE id >= %lld",
             (long long)seq, (long long)first, (long long)first);
    sim_err err = {{0}};
    store *s = store_open(to, &err);
    assert_non_null(s);
    assert_int_equal(store_exec(s, sql, &err), 0);
    store_close(s);
}

/* The progress line (in errbuf) of the last probe that took several seeds: its means over them
 * and their interval. */
static void several_seeds(char *out, size_t len)
{
    const char *at = NULL, *p = errbuf;
    while ((p = strstr(p, " seeds: ")) != NULL)
        at = p++;
    assert_non_null(at);
    const char *b = at, *e = strchr(at, '\n');
    while (b > errbuf && b[-1] != '\n')
        b--;
    snprintf(out, len, "%.*s", (int)(e ? e - b : (ptrdiff_t)strlen(b)), b);
}

/* A search whose probes take several seeds (an SLO the intervals straddle near the boundary):
 * cut before such a probe, the rerun reads every earlier probe back with all its seeds' runs
 * (those runs follow each other: a probe commits with them) and runs the rest, ending with the
 * uninterrupted search's runs, probes and answer. */
static void test_capacity_seeds_resumed(void **state)
{
    char ref[400], db[400];
    snprintf(ref, sizeof ref, "%s/seeds-ref.db", e2e_dir);
    snprintf(db, sizeof db, "%s/seeds.db", e2e_dir);
#define SEEDS                                                                                      \
    "capacity", LLMSIM_SOURCE_DIR "/scenarios/capacity.yaml", "--slo", "ttft_p99=500ms",           \
        "--target-rate", "4", "--precision", "0.1", "--set", "workload.num_requests=100", "--json"
    char line[512];
    assert_int_equal(finish(e2e_start(NULL, 1, SEEDS, "--db", ref, NULL)), 0);
    several_seeds(line, sizeof line);
    int64_t runs = e2e_query_int(ref, "SELECT count(*) FROM runs");
    int64_t probes = e2e_query_int(ref, "SELECT count(*) FROM capacity_probes");
    /* the last probe of several seeds, and the probe after it */
    int64_t multi = e2e_query_int(
        ref, "SELECT max(p.seq) FROM capacity_probes p WHERE (SELECT min(q.run_id) FROM"
             " capacity_probes q WHERE q.seq > p.seq) - p.run_id > 1");
    if (multi < 0 || multi + 1 >= probes)
        fail_msg("no probe of this search took several seeds (%lld runs, %lld probes): the test "
                 "needs an SLO nearer the boundary",
                 (long long)runs, (long long)probes);
    static const char answer[] = "SELECT round(rate_per_replica * 1e6) * 1000 + replicas FROM"
                                 " capacity_results";
    static const char seq[] = "SELECT sum(seq * 7 + replicas * 3 + ok + round(rate * 1e6))"
                              " FROM capacity_probes";
    static const char seeds[] = "SELECT sum(id * 3 + seed) FROM runs";
    /* cut after it (its seeds read back) and cut at it (its seeds run again, none twice) */
    for (int64_t at = multi; at <= multi + 1; at++) {
        cut_search(ref, db, at);
        assert_int_equal(finish(e2e_start(NULL, 1, SEEDS, "--db", db, NULL)), 0);
        assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 1);
        assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_probes"), probes);
        assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM runs"), runs);
        assert_int_equal(e2e_query_int(db, seeds), e2e_query_int(ref, seeds));
        assert_int_equal(e2e_query_int(db, seq), e2e_query_int(ref, seq));
        assert_int_equal(e2e_query_int(db, answer), e2e_query_int(ref, answer));
        /* read back (cut after it) or run again: the probe of several seeds says the same */
        char again[512];
        several_seeds(again, sizeof again);
        assert_string_equal(again, line);
    }
    /* the settings that judge a probe are part of the question: with other seeds the unfinished
     * search is not taken up (its verdicts are not this search's), a new one starts */
    cut_search(ref, db, multi + 1);
    assert_int_equal(finish(e2e_start(NULL, 1, SEEDS, "--seeds", "2", "--db", db, NULL)), 0);
    assert_int_equal(e2e_query_int(db, "SELECT count(*) FROM capacity_searches"), 2);
#undef SEEDS
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_validate_killed),
                                       cmocka_unit_test(test_capacity_killed),
                                       cmocka_unit_test(test_capacity_seeds_resumed)};
    return cmocka_run_group_tests(tests, e2e_group_setup, e2e_group_teardown);
}
