/*
 * cmd_merge.c: `llmsim merge OUT.db IN.db...`: combines llmsim databases (the shards of a
 * sweep run on many machines, or any others) without duplicates (study_sweep_merge, store_merge.h),
 * and reports each sweep of the result: how many of its runs are there, and which sweeps vary
 * the same keys of the same file under different keys (shards run with different arguments);
 * and, when the result holds runs of different builds (their recorded versions differ: another
 * commit, a modified tree, another cost model), how many runs each build made.
 * Exit status: 0, 1 on a user error (an input that is not an llmsim database, a newer schema,
 * shards of different sweeps under one key), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store_query.h"
#include "study_sweep.h"

static const cli_command merge_cmd = {
    .name = "merge",
    .args = "OUT.db IN.db...",
    .summary = "Merges llmsim databases into OUT (created when missing): runs, requests, "
               "iterations, metrics, sweeps with their points and parameters, profiles and "
               "capacity searches, without duplicates.",
    .details =
        "A sweep is matched by its key (a digest of its scenario, values, repetitions, seed and "
        "store level); a sweep point OUT already has keeps OUT's run (the same seed gives the same "
        "run). Each input is merged in one transaction, so running the same command again adds "
        "nothing. Shards of one sweep (`llmsim sweep ... --shard I/N`) must be run with the same "
        "arguments, the same scenario path included, to share its key.",
    .min_pos = 2,
    .max_pos = 4096,
    .common = CLI_QUIET};

typedef struct seen {
    int64_t id;
    char *file, *varied;
} seen;

typedef struct report {
    const cli_common *c;
    seen *v;
    int n;
} report;

static void on_input(void *arg, const char *in, const store_merge_stats *st)
{
    report *r = arg;
    cli_note(r->c,
             "llmsim merge: %s: %lld runs added, %lld already there; %lld sweep points, %lld "
             "sweeps, %lld profiles, %lld capacity searches, %lld validations added\n",
             in, (long long)st->runs_copied, (long long)st->runs_present,
             (long long)st->points_added, (long long)st->sweeps_added,
             (long long)st->profiles_added, (long long)st->searches_added,
             (long long)st->validations_added);
}

/* A note for each sweep seen before that varies the same values of the same file as row: the
 * shards of one sweep run with different arguments. */
static void note_alike(const report *r, const store_sweep_row *row)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].file, row->file) && !strcmp(r->v[i].varied, row->varied))
            fprintf(stderr,
                    "llmsim merge: note: sweeps %lld and %lld vary the same values of %s but are "
                    "different sweeps (their scenario text, repetitions, seed or store level "
                    "differ): were their shards run with the same arguments?\n",
                    (long long)r->v[i].id, (long long)row->id, row->file);
}

static void on_sweep(void *arg, const store_sweep_row *row, int64_t expected)
{
    report *r = arg;
    if (expected > 0)
        printf("sweep %lld (%s): %lld of %lld runs%s\n", (long long)row->id, row->key,
               (long long)row->stored, (long long)expected,
               row->stored >= expected ? ", complete" : "");
    else
        printf("sweep %lld (%s): %lld runs\n", (long long)row->id, row->key,
               (long long)row->stored);
    note_alike(r, row);
    r->v = sim_xrealloc(r->v, sizeof *r->v * (size_t)(r->n + 1));
    r->v[r->n++] = (seen){row->id, sim_xstrdup(row->file), sim_xstrdup(row->varied)};
}

/* The distinct versions of a database's runs, with how many runs each. */
typedef struct builds {
    char (*version)[64];
    int64_t *runs;
    int n;
} builds;

static int count_build(void *arg, const store_run_meta *m)
{
    builds *b = arg;
    for (int i = 0; i < b->n; i++)
        if (!strcmp(b->version[i], m->version)) {
            b->runs[i]++;
            return 0;
        }
    b->version = sim_xrealloc(b->version, sizeof *b->version * (size_t)(b->n + 1));
    b->runs = sim_xrealloc(b->runs, sizeof *b->runs * (size_t)(b->n + 1));
    snprintf(b->version[b->n], sizeof b->version[b->n], "%s", m->version);
    b->runs[b->n++] = 1;
    return 0;
}

/* The note that out holds runs of the builds b, each with its number of runs. */
static void print_builds(const char *out, const builds *b)
{
    fprintf(stderr,
            "llmsim merge: note: %s holds runs of %d builds (a different commit, "
            "modified tree or cost model may price the same scenario differently):",
            out, b->n);
    for (int i = 0; i < b->n; i++)
        fprintf(stderr, "%s %s (%lld runs)", i ? "," : "", b->version[i], (long long)b->runs[i]);
    fprintf(stderr, "\n");
}

/* A note on stderr when out holds runs of more than one build: their figures may differ for
 * that alone. */
static void note_builds(const char *out)
{
    sim_err err = {{0}};
    store *s = store_open_readonly(out, &err);
    builds b = {0};
    if (s && store_run_list(s, count_build, &b, &err) == 0 && b.n > 1)
        print_builds(out, &b);
    if (s)
        store_close(s);
    free(b.version);
    free(b.runs);
}

int cmd_merge(int argc, char **argv)
{
    const char *pos[4096];
    int npos;
    cli_common c;
    int st = cli_parse(&merge_cmd, NULL, &c, argc, argv, pos, &npos);
    if (st != CLI_GO)
        return st;
    static const study_sweep_merge_ops ops = {on_input, on_sweep};
    report r = {&c, NULL, 0};
    sim_err err = {{0}};
    int rc = study_sweep_merge(pos[0], pos + 1, npos - 1, &ops, &r, &err);
    for (int i = 0; i < r.n; i++) {
        free(r.v[i].file);
        free(r.v[i].varied);
    }
    free(r.v);
    if (rc != 0)
        return cli_fail("merge", &err);
    note_builds(pos[0]);
    return 0;
}
