/*
 * test_keys.c: the settings tables (engine/keys.h) every scenario key is declared in.
 *
 *  - every row reachable from the scenario's top level is sound: a doc, a type with what it
 *    needs (choices, a sub-table, lo <= hi), a default that its own row accepts (or a
 *    description in parentheses), no name twice in a table for the same selector;
 *  - a row checks and stores values as the loader relies on (ranges open and closed, powers of
 *    two, choices stored as an index or as the word, setters);
 *  - the defaults every scenario starts from are the tables' (the figures engine.c used to set
 *    by hand);
 *  - a pool's settings go in and out of a configuration whole;
 *  - docs/keys.md is exactly what `llmsim list keys --markdown` prints;
 *  - the metric vocabulary is one table: the summary's names, capacity's SLOs and the older
 *    spelling `e2e` all come from it;
 *  - an arrival process the workload source does not know stops the run (it used to be drawn
 *    as Poisson).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "engine.h"
#include "scenario.h"
#include "study_capacity.h"
#include "test_main.h"

/* The rows of keys (INCLUDE'd ones in place) checked, then each sub-table once. */
static void check_table(const eng_key *keys, const char *where, const eng_key **seen, int *nseen)
{
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == keys)
            return;
    assert_true(*nseen < 64);
    seen[(*nseen)++] = keys;
    for (const eng_key *k = keys; k->name; k++) {
        eng_key_val v;
        char why[300];
        if (k->type == ENG_KEY_INCLUDE) {
            assert_non_null(k->sub);
            check_table(k->sub, where, seen, nseen);
            continue;
        }
        if (!*k->name || !k->doc || !*k->doc || !k->unit)
            fail_msg("%s: a row without a name, a doc or a unit", where);
        if (k->type == ENG_KEY_ENUM && !k->choices)
            fail_msg("%s.%s: a choice without choices", where, k->name);
        if ((k->type == ENG_KEY_INT || k->type == ENG_KEY_NUM) && !(k->lo <= k->hi))
            fail_msg("%s.%s: an empty range", where, k->name);
        if (k->type == ENG_KEY_MAP) {
            assert_non_null(k->sub);
            check_table(k->sub, k->name, seen, nseen);
        } else if (k->def && k->def[0] != '(' && eng_key_parse(k, k->def, &v, why, sizeof why)) {
            fail_msg("%s.%s: its default '%s' is refused: %s", where, k->name, k->def, why);
        }
        size_t off;
        if (!k->when && eng_key_find(keys, k->name, NULL, &off) != k)
            fail_msg("%s.%s: declared twice", where, k->name);
    }
}

static void tables_are_sound(void **state)
{
    const eng_key *seen[64];
    int nseen = 0;
    check_table(scn_keys(), "(top)", seen, &nseen);
    assert_true(nseen > 15); /* the walk reached every section */
}

typedef struct probe {
    int32_t i32;
    int64_t i64;
    double d;
    int idx;
    char word[8];
    double set;
} probe;

static void set_twice(void *obj, double v)
{
    ((probe *)obj)->set = 2 * v;
}

static const eng_key probe_keys[] = {
    {"p2", ENG_KEY_INT, ENG_KEY_POW2, 1, 256, "", "16", NULL, "a power of two",
     ENG_KEY_AT(probe, i32)},
    {"big", ENG_KEY_INT, 0, 1, INFINITY, "", "1", NULL, "no upper bound", ENG_KEY_AT(probe, i64)},
    {"frac", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1, "", "0.5", NULL, "(0, 1]", ENG_KEY_AT(probe, d)},
    {"pick", ENG_KEY_ENUM, 0, 0, 0, "", "b", "a|b|c", "an index", ENG_KEY_AT(probe, idx)},
    {"word", ENG_KEY_ENUM, ENG_KEY_TEXT, 0, 0, "", "c", "a|b|c", "the word",
     ENG_KEY_AT(probe, word)},
    {"twice", ENG_KEY_NUM, 0, 0, 10, "", "3", NULL, "a setter", .set = set_twice},
    ENG_KEY_END};

static void expect_refused(const char *name, const char *text, const char *msg)
{
    size_t off;
    eng_key_val v;
    char why[300];
    const eng_key *k = eng_key_find(probe_keys, name, NULL, &off);
    assert_non_null(k);
    assert_int_equal(eng_key_parse(k, text, &v, why, sizeof why), -1);
    if (strcmp(why, msg) != 0)
        fail_msg("%s='%s': '%s', not '%s'", name, text, why, msg);
}

static void rows_check_and_store(void **state)
{
    probe p;
    memset(&p, 0, sizeof p);
    eng_keys_defaults(probe_keys, &p);
    assert_int_equal(p.i32, 16);
    assert_int_equal(p.i64, 1);
    assert_true(p.d == 0.5);
    assert_int_equal(p.idx, 1);
    assert_string_equal(p.word, "c");
    assert_true(p.set == 6);
    expect_refused("p2", "24", "expected a power of two in [1, 256], got '24'");
    expect_refused("big", "0", "expected an integer >= 1, got '0'");
    expect_refused("big", "1.5", "expected an integer >= 1, got '1.5'");
    expect_refused("frac", "0", "expected a number in (0, 1], got '0'");
    expect_refused("frac", "nan", "expected a number in (0, 1], got 'nan'");
    expect_refused("pick", "d", "unknown pick 'd' (valid: a, b, c)");
    expect_refused("twice", "11", "expected a number in [0, 10], got '11'");
    char names[100];
    assert_string_equal(eng_key_names(probe_keys, NULL, names, sizeof names),
                        "p2, big, frac, pick, word, twice");
}

/* The defaults engine.c set by hand before the tables held them. */
static void defaults_are_the_tables(void **state)
{
    eng_config c;
    eng_config_defaults(&c);
    assert_true(c.gpu_utilization == 0.9);
    assert_int_equal(c.block_size, 16);
    assert_int_equal(c.activation_reserve, INT64_C(1) << 30);
    assert_int_equal(c.replicas, 1);
    assert_int_equal(c.tensor_parallel, 1);
    assert_int_equal(c.expert_parallel, 1);
    assert_int_equal(c.data_parallel_attention, 1);
    assert_string_equal(c.router, "round_robin");
    assert_true(c.router_params.prefix_weight == 3 && c.router_params.queue_weight == 2 &&
                c.router_params.kv_weight == 2 && c.router_params.staleness_ms == 50);
    assert_string_equal(c.sched.name, "orca");
    assert_int_equal(c.dtype, ENG_DTYPE_AUTO);
    assert_true(c.cpu.per_iteration_us == 0 && c.cpu.per_seq_us == 0 && c.cpu.async == 0);
}

static void pools_whole(void **state)
{
    eng_config c, out;
    eng_config_defaults(&c);
    c.max_model_len = 4096;
    c.pd.enabled = 1;
    for (int p = 0; p < 2; p++) {
        eng_config t = c;
        t.tensor_parallel = 2 + p;
        t.block_size = 32 << p;
        snprintf(t.router, sizeof t.router, "%s", p ? "least_tokens" : "power_of_two");
        snprintf(t.sched.name, sizeof t.sched.name, "%s", p ? "sglang" : "vllm");
        t.cpu.per_seq_us = 7 + p;
        c.pd.pool[p] = t.pool;
    }
    for (int p = 0; p < 2; p++) {
        eng_config_pool(&c, p, &out);
        assert_int_equal(out.tensor_parallel, 2 + p);
        assert_int_equal(out.block_size, 32 << p);
        assert_string_equal(out.router, p ? "least_tokens" : "power_of_two");
        assert_string_equal(out.sched.name, p ? "sglang" : "vllm");
        assert_true(out.cpu.per_seq_us == 7 + p);
        assert_int_equal(out.max_model_len, 4096); /* the deployment's */
    }
}

static void docs_keys_md_is_generated(void **state)
{
    size_t cap = 1 << 18;
    char *got = malloc(cap), *want = e2e_slurp(LLMSIM_SOURCE_DIR "/docs/keys.md", 1 << 20);
    assert_int_equal(e2e_mkdir(), 0);
    assert_int_equal(e2e_sh(got, cap, NULL, 0, "%s list keys --markdown", LLMSIM_BINARY), 0);
    e2e_rmdir();
    int same = want && strlen(got) + 1 < cap && strcmp(got, want) == 0;
    int full = strstr(got, "`kv_transfer.latency_us`") && strstr(got, "`workload.arrival.rate`") &&
               strstr(got, "`scheduler.max_num_seqs`");
    free(got);
    free(want);
    if (!same)
        fail_msg("docs/keys.md differs from `llmsim list keys --markdown`; regenerate it: "
                 "build/llmsim list keys --markdown > docs/keys.md");
    assert_true(full);
}

static void metric_vocabulary(void **state)
{
    int n, nnames, npd;
    const eng_latency *lat = eng_latency_all(&n);
    const char *const *names = eng_metric_names(&nnames), *const *pd = eng_pd_metric_names(&npd);
    for (int i = 0; i < n; i++) {
        char want[64];
        int found = 0;
        assert_int_equal(lat[i].id, i);
        snprintf(want, sizeof want, "p99_%s", lat[i].stem);
        for (int k = 0; k < (lat[i].flags & ENG_LAT_PD ? npd : nnames); k++)
            found |= !strcmp((lat[i].flags & ENG_LAT_PD ? pd : names)[k], want);
        if (!found)
            fail_msg("%s is not a summary metric", want);
    }
    assert_ptr_equal(eng_latency_find("e2e", ENG_LAT_SLO), eng_latency_find("e2el", ENG_LAT_SLO));
    assert_null(eng_latency_find("waiting", ENG_LAT_SLO));
    study_slo slo[4];
    int nslo = 0;
    sim_err err;
    assert_int_equal(study_slo_parse("e2e_p99=1s,e2el_p50=500ms,itl_p90=30ms", slo, 4, &nslo, &err),
                     0);
    assert_int_equal(nslo, 3);
    assert_string_equal(slo[0].metric, "p99_e2el_ms");
    assert_true(slo[0].limit_ms == 1000);
    assert_string_equal(slo[1].metric, "median_e2el_ms");
    assert_string_equal(slo[2].metric, "p90_itl_ms");
    nslo = 0;
    assert_int_equal(study_slo_parse("waiting_p99=1s", slo, 4, &nslo, &err), -1);
    assert_non_null(strstr(err.msg, "ttft, tpot, itl, e2el (or e2e)"));
}

/* The first arrival of a workload whose process is kind (a fixed 100-token request). */
static void first_arrival(scn_arrival_kind kind)
{
    scn_scenario sc;
    sim_err err;
    eng_arrival a;
    memset(&sc, 0, sizeof sc);
    eng_config_defaults(&sc.engine);
    sc.workload.num_requests = 4;
    sc.workload.arrival.kind = kind;
    sc.workload.arrival.rate = 1;
    sc.workload.prompt = (scn_dist){.kind = SCN_DIST_FIXED, .value = 100};
    sc.workload.output = sc.workload.prompt;
    scn_source *src = scn_source_new(&sc, 1, &err);
    if (!src)
        fail_msg("%s", err.msg);
    scn_source_ops()->next(src, 0, &a, &err);
    scn_source_free(src);
}

static void unknown_arrival_stops(void **state)
{
    first_arrival(SCN_ARR_POISSON); /* the known one draws */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        fclose(stderr); /* the assertion's message is expected */
        first_arrival(SCN_ARR_COUNT);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st)); /* aborted by the check, not drawn as Poisson */
}

LLMSIM_TEST_MAIN(NULL, NULL, tables_are_sound, rows_check_and_store, defaults_are_the_tables,
                 pools_whole, docs_keys_md_is_generated, metric_vocabulary, unknown_arrival_stops)
