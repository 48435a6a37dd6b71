/*
 * study_pool.h: a pool of worker processes running numbered tasks.
 *
 * The parent forks `jobs` workers, hands task numbers out through one pipe and reads one report
 * per task back through another. It never has more than two tasks per worker in the task pipe,
 * so neither pipe fills up however many tasks there are. A worker opens its own state once
 * (a database connection, say) and runs tasks until the pipe closes.
 */
#ifndef STUDY_POOL_H
#define STUDY_POOL_H

#include <stdint.h>

#include "sim.h"

typedef struct study_pool_ops {
    /* In a worker, once: its state (NULL with err set when it cannot start; every task then
     * fails with that message). */
    void *(*open)(void *arg, sim_err *err);
    /* In a worker: runs one task. 0, or -1 with err. */
    int (*run)(void *arg, void *worker, int32_t task, sim_err *err);
    void (*close)(void *worker);
    /* In the parent, for each finished task (msg is "" on success); optional. */
    void (*done)(void *arg, int32_t task, int ok, const char *msg, int finished, int total);
} study_pool_ops;

/* Runs the n tasks over min(jobs, n) worker processes. Returns the number of tasks that failed
 * or whose worker died before reporting them. */
int study_pool_run(const study_pool_ops *ops, void *arg, int jobs, const int32_t *tasks, int n);

#endif
