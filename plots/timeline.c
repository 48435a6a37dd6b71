/*
 * timeline.c: batch occupancy and KV blocks in use per iteration, over simulated time, one
 * panel per run (stacked, same time axis), so static batching's idle slots and continuous
 * batching's full batches can be seen side by side. Each panel draws the KV cache's capacity
 * (the blocks of one replica, stored with the run since schema 3) as a dashed line, and marks
 * the iterations whose forming preempted requests.
 *
 * Data file: one block per run ("# series: run N (scheduler)" first, two blank lines between),
 * one row per stored iteration "start_s end_s replica num_seqs kv_blocks prefill_tokens
 * decode_tokens preempted", ordered by replica then iteration, a single blank line between
 * replicas.
 */
#include <stdio.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"

/* Writes run's iterations as one block; returns the rows written or -1 with err. */
static int64_t write_run(store *s, int64_t run, FILE *dat, double *tmax, int64_t *npre,
                         sim_err *err)
{
    store_iter_cursor *c = store_iterations_open(s, run, err);
    if (!c)
        return -1;
    eng_iter_rec it;
    int64_t n = 0, prev_replica = -1;
    int rc;
    while ((rc = store_iterations_next(c, &it, err)) == 1) {
        double end = (double)(it.start_ns + it.duration_ns) / 1e9;
        if (n > 0 && it.replica != prev_replica)
            fputc('\n', dat);
        prev_replica = it.replica;
        fprintf(dat, "%.9f %.9f %lld %lld %lld %lld %lld %lld\n", (double)it.start_ns / 1e9, end,
                (long long)it.replica, (long long)it.num_seqs, (long long)it.kv_blocks_used,
                (long long)it.prefill_tokens, (long long)it.decode_tokens, (long long)it.preempted);
        *npre += it.preempted;
        *tmax = end > *tmax ? end : *tmax;
        n++;
    }
    store_iterations_close(c);
    if (rc < 0)
        return -1;
    if (n == 0)
        return sim_errf(err,
                        "%s: run %lld has no iteration rows (stored with --store summary); run "
                        "it again with --store iterations or requests",
                        store_path(s), (long long)run);
    return n;
}

int plt_timeline_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err)
{
    char names[PLT_MAX_RUNS][PLT_LABEL_MAX];
    const char *titles[PLT_MAX_RUNS];
    double tmax = 0;
    int maxrep = 1, unknown = 0;
    int64_t kvcap[PLT_MAX_RUNS], npre[PLT_MAX_RUNS];
    if (plt_run_labels(s, o->runs, o->nruns, names, err) != 0)
        return -1;
    fprintf(dat, "# llmsim timeline: one row per iteration\n");
    for (int i = 0; i < o->nruns; i++) {
        store_run_meta m;
        if (store_run_get(s, o->runs[i], &m, err) != 0)
            return -1;
        int replicas = m.replicas > 0 ? m.replicas : 1;
        maxrep = replicas > maxrep ? replicas : maxrep;
        kvcap[i] = m.kv_blocks;
        unknown += m.kv_blocks <= 0;
        npre[i] = 0;
        titles[i] = names[i];
        fprintf(dat,
                "%s# series: %s\n"
                "# start_s end_s replica num_seqs kv_blocks prefill_tokens decode_tokens "
                "preempted\n",
                i ? "\n\n" : "", names[i]);
        if (write_run(s, o->runs[i], dat, &tmax, &npre[i], err) < 0)
            return -1;
    }
    if (unknown)
        snprintf(res->note, sizeof res->note,
                 "%d of the runs were stored before schema 3, without their KV capacity: no "
                 "capacity line on their panels",
                 unknown);
    plt_gp_str(gp, "plot_title",
               "batch occupancy per iteration, KV blocks in use against the KV capacity, "
               "preemptions");
    fprintf(gp, "nseries = %d\ntmax = %.9g\nreplicas = %d\n", o->nruns, tmax, maxrep);
    plt_gp_array(gp, "titles", titles, o->nruns);
    fprintf(gp, "array kvcap[%d]\narray npre[%d]\n", o->nruns, o->nruns);
    for (int i = 0; i < o->nruns; i++)
        fprintf(gp, "kvcap[%d] = %lld\nnpre[%d] = %lld\n", i + 1, (long long)kvcap[i], i + 1,
                (long long)npre[i]);
    res->series = o->nruns;
    if (!res->width)
        res->width = 1000;
    if (!res->height)
        res->height = 200 + 300 * o->nruns;
    return 0;
}
