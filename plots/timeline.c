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
 * replicas; a run of more than MAX_ROWS iterations has a row per group of consecutive
 * iterations instead (the most sequences and blocks, the sums of the rest).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plt_int.h"
#include "store_query.h"

/* Rows of a run's iterations: MAX_ROWS at most; past that, each row is `group` consecutive
 * iterations of one replica (first start to last end, the most sequences and KV blocks, the
 * tokens and preemptions summed), so the plot of an hour-long run stays small. */
#define MAX_ROWS 10000

typedef struct row {
    int64_t n, start, end, replica, seqs, kv, pre, dec, preempted;
} row;

static void put_row(FILE *dat, const row *r)
{
    fprintf(dat, "%.9f %.9f %lld %lld %lld %lld %lld %lld\n", (double)r->start / 1e9,
            (double)r->end / 1e9, (long long)r->replica, (long long)r->seqs, (long long)r->kv,
            (long long)r->pre, (long long)r->dec, (long long)r->preempted);
}

static void add_iter(row *r, const eng_iter_rec *it)
{
    if (r->n++ == 0) {
        memset(r, 0, sizeof *r);
        r->n = 1;
        r->start = it->start_ns;
        r->replica = it->replica;
    }
    r->end = it->start_ns + it->duration_ns;
    r->seqs = it->num_seqs > r->seqs ? it->num_seqs : r->seqs;
    r->kv = it->kv_blocks_used > r->kv ? it->kv_blocks_used : r->kv;
    r->pre += it->prefill_tokens;
    r->dec += it->decode_tokens;
    r->preempted += it->preempted;
}

/* Writes run's iterations as one block, `group` to a row; returns the iterations read or -1
 * with err. */
/* When an iteration ends, in s. */
static double iteration_end(const eng_iter_rec *it)
{
    return (double)(it->start_ns + it->duration_ns) / 1e9;
}

static int64_t write_run(store *s, int64_t run, int64_t group, FILE *dat, double *tmax,
                         int64_t *npre, sim_err *err)
{
    store_iter_cursor *c = store_iterations_open(s, run, err);
    if (!c)
        return -1;
    eng_iter_rec it;
    int64_t n = 0, prev_replica = -1;
    row r = {0};
    int rc;
    while ((rc = store_iterations_next(c, &it, err)) == 1) {
        if (r.n > 0 && (it.replica != r.replica || r.n == group)) {
            put_row(dat, &r);
            r.n = 0;
        }
        if (n > 0 && it.replica != prev_replica)
            fputc('\n', dat);
        prev_replica = it.replica;
        add_iter(&r, &it);
        *npre += it.preempted;
        *tmax = fmax(*tmax, iteration_end(&it));
        n++;
    }
    if (r.n > 0)
        put_row(dat, &r);
    store_iterations_close(c);
    if (rc < 0)
        return -1;
    if (n == 0)
        return plt_no_iterations(s, run, err);
    return n;
}

/* What the script needs of the runs drawn. */
typedef struct timeline {
    char names[PLT_MAX_RUNS][PLT_LABEL_MAX];
    const char *titles[PLT_MAX_RUNS];
    double tmax;         /* s: the last iteration's end */
    int maxrep, unknown; /* the most replicas of a run; runs without their KV capacity */
    int64_t grouped;     /* the first run drawn in groups of iterations: its group size */
    int64_t kvcap[PLT_MAX_RUNS], npre[PLT_MAX_RUNS];
} timeline;

/* Writes run i of o (its block of rows) into dat and what the script needs of it into t. */
static int write_series(store *s, const plt_opts *o, int i, FILE *dat, timeline *t, sim_err *err)
{
    store_run_meta m;
    if (store_run_get(s, o->runs[i], &m, err) != 0)
        return -1;
    int replicas = m.replicas > 0 ? m.replicas : 1;
    t->maxrep = replicas > t->maxrep ? replicas : t->maxrep;
    t->kvcap[i] = m.kv_blocks;
    t->unknown += m.kv_blocks <= 0;
    t->npre[i] = 0;
    t->titles[i] = t->names[i];
    fprintf(dat,
            "%s# series: %s\n"
            "# start_s end_s replica num_seqs kv_blocks prefill_tokens decode_tokens "
            "preempted\n",
            i ? "\n\n" : "", t->names[i]);
    int64_t total = store_run_count_iterations(s, o->runs[i], err);
    if (total < 0)
        return -1;
    int64_t group = total > MAX_ROWS ? (total + MAX_ROWS - 1) / MAX_ROWS : 1;
    if (group > 1 && t->grouped == 0)
        t->grouped = group;
    return write_run(s, o->runs[i], group, dat, &t->tmax, &t->npre[i], err) < 0 ? -1 : 0;
}

/* The note on runs without their KV capacity and on runs drawn in groups, into res->note. */
static void write_note(const timeline *t, plt_result *res)
{
    size_t nn = 0;
    if (t->unknown)
        nn = (size_t)snprintf(res->note, sizeof res->note,
                              "%d of the runs were stored before schema 3, without their KV "
                              "capacity: no capacity line on their panels. ",
                              t->unknown);
    if (t->grouped && nn < sizeof res->note)
        snprintf(res->note + nn, sizeof res->note - nn,
                 "Over %d iterations a run is drawn in groups (%lld iterations a bar at the "
                 "first such run): each bar is the most sequences and KV blocks of its group.",
                 MAX_ROWS, (long long)t->grouped);
}

int plt_timeline_write(store *s, const plt_opts *o, FILE *dat, FILE *gp, plt_result *res,
                       sim_err *err)
{
    timeline *t = sim_xcalloc(1, sizeof *t);
    int rc = -1;
    t->maxrep = 1;
    if (plt_run_labels(s, o->runs, o->nruns, t->names, err) != 0)
        goto out;
    fprintf(dat, "# llmsim timeline: one row per iteration (or group of iterations)\n");
    for (int i = 0; i < o->nruns; i++)
        if (write_series(s, o, i, dat, t, err) != 0)
            goto out;
    write_note(t, res);
    plt_gp_str(gp, "plot_title",
               "batch occupancy per iteration, KV blocks in use against the KV capacity, "
               "preemptions");
    fprintf(gp, "nseries = %d\ntmax = %.9g\nreplicas = %d\n", o->nruns, t->tmax, t->maxrep);
    plt_gp_array(gp, "titles", t->titles, o->nruns);
    fprintf(gp, "array kvcap[%d]\narray npre[%d]\n", o->nruns, o->nruns);
    for (int i = 0; i < o->nruns; i++)
        fprintf(gp, "kvcap[%d] = %lld\nnpre[%d] = %lld\n", i + 1, (long long)t->kvcap[i], i + 1,
                (long long)t->npre[i]);
    res->series = o->nruns;
    plt_default_size(res, 1000, 200 + 300 * o->nruns);
    rc = 0;
out:
    free(t);
    return rc;
}
