/*
 * study_pool.h: a pool of worker processes running numbered tasks, whose results one process
 * (the parent) receives.
 *
 * The parent forks `jobs` workers, hands task numbers out through one pipe and reads one report
 * per task back through another. It never has more than two tasks per worker in the task pipe,
 * so neither pipe fills up however many tasks there are; once the last task is sent the pipe
 * closes, so a worker that dies cannot leave the parent waiting.
 *
 * Each worker writes what a task produced to its own spool file (an unlinked temporary file in
 * $TMPDIR, or /tmp), and its report says where: the parent reads it there, in `done`, before it
 * reads the next report. A worker starts its spool over whenever the parent has taken all of
 * its reports, and before a task it waits for that once its spool holds more than spool_limit
 * bytes: a spool never holds more than spool_limit plus one task's output. The files vanish
 * with the processes.
 */
#ifndef STUDY_POOL_H
#define STUDY_POOL_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct study_pool_ops {
    /* In a worker, once: its state (NULL with err set when it cannot start; every task then
     * fails with that message). */
    void *(*open)(void *arg, sim_err *err);
    /* In a worker: runs one task, writing its output to out (the worker's spool, positioned
     * after what it wrote before; flushed by the pool). 0, or -1 with err. */
    int (*run)(void *arg, void *worker, int32_t task, FILE *out, sim_err *err);
    void (*close)(void *worker);
    /* In the parent, in a worker's task order, optional: a task's report. ok: the task ran;
     * msg: its error ("" when ok); in/len: its output (in positioned at it; partial when the
     * task failed; NULL with ok 0 when the spool cannot be read). Returns 0, or -1 when the
     * parent could not use the output (counted as a failure; the callback reports it). */
    int (*done)(void *arg, int32_t task, int ok, const char *msg, FILE *in, int64_t len);
    /* In the parent before a task is sent, optional: 1 to skip it (counted in *skipped). */
    int (*skip)(void *arg, int32_t task);
    /* Bytes a worker's spool may hold before the worker waits for the parent (0: 64 MiB). */
    int64_t spool_limit;
} study_pool_ops;

typedef struct study_pool_stats {
    int done;    /* tasks run and accepted by done() */
    int failed;  /* tasks that failed, whose output done() refused, or whose worker died */
    int skipped; /* tasks skip() declined */
} study_pool_stats;

/* Runs the n tasks over min(jobs, n) worker processes. Returns 0 with *st filled, or -1 with
 * err when the pool cannot start (no spool file, no pipe, no fork): then nothing ran. */
int study_pool_run(const study_pool_ops *ops, void *arg, int jobs, const int32_t *tasks, int n,
                   study_pool_stats *st, sim_err *err);

/* A new, empty temporary file in $TMPDIR (or /tmp), already unlinked (it goes when closed),
 * open for writing and reading. NULL with err when it cannot be made. Close with fclose. */
FILE *study_pool_tmpfile(sim_err *err);

#endif
