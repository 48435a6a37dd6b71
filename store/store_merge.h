/*
 * store_merge.h: merging llmsim databases: the shards of a sweep run on many machines, or any
 * llmsim databases (runs, requests, iterations, metrics, sweeps with their points and
 * parameters, profiles with their points and fits, capacity searches with their probes and
 * results, validations with their rows, values and statistics), without duplicates.
 *
 * What is "already there" in OUT, and so not copied again:
 *   a sweep:            one with the same key (the digest of its scenario, varied values,
 *                       repetitions, base seed and store level); the same key with another
 *                       definition is refused: they are not shards of one sweep
 *   a sweep point's run: OUT has that (sweep, point, repetition); its seed depends on the point
 *                       and repetition only, so it is the same run. Only so: a run of another
 *                       sweep's point with an equal row (the same scenario and seed) stays that
 *                       sweep's, and this point gets its own copy
 *   any other run:      a run with every column of its row equal but the id (the same run
 *                       merged twice)
 *   a profile:          one with the same name and an equal row; the same name with another
 *                       row is refused (rename one with `profile import-vidur --as`)
 *   a capacity search:  one with every column of its row equal but the id
 *   a validation:       one with every column of its row equal but the id
 * Everything else is copied with new ids. Rows that belong to a row (a run's requests, a
 * sweep's points) are found through the schema's foreign keys, so a table added later that
 * references runs(id) is merged with its runs. An input with a table this llmsim does not know
 * how to merge, or a newer schema, is refused.
 */
#ifndef LLMSIM_STORE_MERGE_H
#define LLMSIM_STORE_MERGE_H

#include <stdint.h>

#include "store.h"

typedef struct store_merge_stats {
    int64_t runs_copied;  /* runs added to OUT */
    int64_t runs_present; /* runs of IN that OUT already had */
    int64_t points_added; /* sweep points added */
    int64_t sweeps_added, profiles_added, searches_added, validations_added;
} store_merge_stats;

/* Whether the database at path `in` can be merged into the one at path `out` (which need not
 * exist yet): an llmsim database no newer than this llmsim, and not out itself. 0, or -1 with
 * err naming the file and what is wrong. Reads only, so a merge can check every input before
 * it creates its output. */
int store_merge_check(const char *out, const char *in, sim_err *err);
/* Merges the database at path `in` into out, in one transaction: all of it or nothing. *st
 * gets what was added. 0, or -1 with err naming the file and what is wrong (not an llmsim
 * database, a newer schema, out itself, a conflicting sweep or profile). */
int store_merge(store *out, const char *in, store_merge_stats *st, sim_err *err);

#endif
