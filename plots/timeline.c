/*
 * timeline.c: batch occupancy and KV blocks in use per iteration, over simulated time, one
 * panel per run (stacked, same time axis), so static batching's idle slots and continuous
 * batching's full batches can be seen side by side.
 *
 * Data file: one block per run ("# series: run N (scheduler)" first, two blank lines between),
 * one row per stored iteration "start_s end_s replica num_seqs kv_blocks prefill_tokens
 * decode_tokens", ordered by replica then iteration, a single blank line between replicas.
 */
#include <string.h>

#include "plt_int.h"

/* Writes run's iterations as one block; returns the rows written or -1 with err. */
static int64_t write_run(plt_db *d, int64_t run, FILE *dat, double *tmax, sim_err *err)
{
    sqlite3_stmt *st = plt_db_prepare(
        d,
        "SELECT start_ns, start_ns + duration_ns, replica, num_seqs, kv_blocks_used,"
        " prefill_tokens, decode_tokens FROM iterations WHERE run_id = ? ORDER BY replica, iter",
        err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run);
    int64_t n = 0, prev_replica = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t replica = sqlite3_column_int64(st, 2);
        double end = (double)sqlite3_column_int64(st, 1) / 1e9;
        if (n > 0 && replica != prev_replica)
            fputc('\n', dat);
        prev_replica = replica;
        fprintf(dat, "%.9f %.9f %lld %lld %lld %lld %lld\n",
                (double)sqlite3_column_int64(st, 0) / 1e9, end, (long long)replica,
                (long long)sqlite3_column_int64(st, 3), (long long)sqlite3_column_int64(st, 4),
                (long long)sqlite3_column_int64(st, 5), (long long)sqlite3_column_int64(st, 6));
        *tmax = end > *tmax ? end : *tmax;
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return plt_db_fail(d, "reading iterations", err);
    if (n == 0)
        return sim_errf(err,
                        "%s: run %lld has no iteration rows (stored with --store summary); run "
                        "it again with --store iterations or requests",
                        d->path, (long long)run);
    return n;
}

int plt_timeline_write(plt_db *d, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err)
{
    char names[PLT_MAX_RUNS][96];
    const char *titles[PLT_MAX_RUNS];
    double tmax = 0;
    int maxrep = 1;
    fprintf(dat, "# llmsim timeline: one row per iteration\n");
    for (int i = 0; i < o->nruns; i++) {
        char sched[64];
        int replicas;
        if (plt_db_run(d, o->runs[i], sched, sizeof sched, &replicas, err) != 0)
            return -1;
        maxrep = replicas > maxrep ? replicas : maxrep;
        snprintf(names[i], sizeof names[i], "run %lld (%s)", (long long)o->runs[i], sched);
        titles[i] = names[i];
        fprintf(dat,
                "%s# series: %s\n"
                "# start_s end_s replica num_seqs kv_blocks prefill_tokens decode_tokens\n",
                i ? "\n\n" : "", names[i]);
        if (write_run(d, o->runs[i], dat, &tmax, err) < 0)
            return -1;
    }
    plt_gp_str(gp, "plot_title", "batch occupancy per iteration and KV blocks in use");
    fprintf(gp, "nseries = %d\ntmax = %.9g\nreplicas = %d\n", o->nruns, tmax, maxrep);
    plt_gp_array(gp, "titles", titles, o->nruns);
    res->series = o->nruns;
    if (!res->width)
        res->width = 1000;
    if (!res->height)
        res->height = 200 + 300 * o->nruns;
    return 0;
}
