/*
 * fuzz_db.c: see fuzz_db.h.
 */
#include <string.h>

#include "fuzz_db.h"
#include "fuzz_mem.h"
#include "run_info.h"
#include "store.h"
#include "store_run.h"
#include "store_sweep.h"

void fuzz_db_template(const char *path)
{
    sim_err err = {{0}};
    store *s = store_open(path, &err);
    fuzz_must(s != NULL);
    for (int r = 0; r < 2; r++) {
        store_run_info info = test_run_info("t", STORE_REQUESTS);
        info.scenario_text = "name: t\n# --set scheduler.name=orca\n";
        info.scheduler = r ? "vllm" : "orca";
        info.offered_rate = 2;
        info.num_requests = 3;
        info.kv_blocks = 100;
        store_run *w = store_run_begin(s, &info, 1, &err);
        fuzz_must(w != NULL);
        for (int i = 0; i < 3; i++) {
            eng_request rq;
            memset(&rq, 0, sizeof rq);
            rq.id = i;
            rq.status = ENG_RQ_FINISHED;
            rq.t_arrival = i * 1000;
            rq.t_first_sched = rq.t_last_sched = rq.t_arrival + 10;
            rq.t_first_token = rq.t_arrival + 500;
            rq.t_finish = rq.t_arrival + 5000;
            rq.prompt = 10;
            rq.output = 4;
            rq.scheduled = 1;
            store_run_request(w, &rq);
            eng_iter_rec it = {.iter = i, .start_ns = i * 100, .duration_ns = 90, .num_seqs = 1};
            store_run_iteration(w, &it);
        }
        eng_span_rec sp = {.req = 1, .span = 0, .start_ns = 10, .decode_ns = 500, .end_ns = 700};
        store_run_span(w, &sp);
        eng_metric m[3] = {{"p99_ttft_ms", 1.5}, {"output_throughput", 10}, {"saturated", 0}};
        fuzz_must(store_run_finish(w, m, 3, NULL, NULL, NULL, &err) == 0);
    }
    int64_t id;
    fuzz_must(store_sweep_open(s, "k", "t.yaml", "name: t\n", "scheduler.name=orca,vllm", 1, 1, &id,
                               &err) == 0);
    const char *keys[1] = {"scheduler.name"}, *vals[2] = {"orca", "vllm"};
    for (int p = 0; p < 2; p++)
        fuzz_must(store_sweep_set_params(s, id, p, 1, keys, &vals[p], &err) == 0 &&
                  store_sweep_add(s, id, p, 0, 1, p + 1, vals[p], 0, &err) == 0);
    fuzz_must(
        store_exec(s,
                   "INSERT INTO capacity_searches (file, scenario, slo, base_seed) VALUES "
                   "('c.yaml', 'name: c', 'ttft_p99=1000ms', 1);"
                   "INSERT INTO capacity_probes VALUES (1, 0, '', 'search', 0.25, 1, 1, 0, 2);"
                   "INSERT INTO capacity_results VALUES (1, '', 0.25, 1, 1);"
                   "INSERT INTO validations (name, kind, version, total_rows, ok, cannot, failed)"
                   " VALUES ('v', 'serving', 'fuzz', 1, 1, 0, 0);"
                   "INSERT INTO validation_rows VALUES (1, 0, 'r1', 'g', 2, 1, 'ok', NULL, NULL,"
                   " 1);"
                   "INSERT INTO validation_values VALUES (1, 0, 'mean_ttft_ms', 0, 2, 1.5, -0.25);"
                   "INSERT INTO validation_stats VALUES (1, 'g', 'mean_ttft_ms', 1, 0.25, 0.25,"
                   " 0.25, -0.25, 'r1')",
                   &err) == 0);
    store_close(s);
    /* one file, no -wal beside it */
    s = store_open(path, &err);
    fuzz_must(s && store_exec(s, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE",
                              &err) == 0);
    store_close(s);
}
