/*
 * pool.c: worker processes for sweeps. Records on both pipes are at most PIPE_BUF bytes, so
 * each is written and read whole even with several writers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "study_pool.h"

typedef struct report {
    int32_t task;
    int32_t ok;
    char msg[1024];
} report;

static _Noreturn void worker(const study_pool_ops *ops, void *arg, int in, int out)
{
    sim_err err = {{0}};
    void *w = ops->open(arg, &err);
    sim_err open_err = err;
    int32_t t;
    while (read(in, &t, sizeof t) == (ssize_t)sizeof t) {
        report r = {t, 1, ""};
        if (!w) {
            r.ok = 0;
            snprintf(r.msg, sizeof r.msg, "%s", open_err.msg);
        } else if (ops->run(arg, w, t, &err) != 0) {
            r.ok = 0;
            snprintf(r.msg, sizeof r.msg, "%s", err.msg);
        }
        if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
            break;
    }
    if (w)
        ops->close(w);
    _exit(0);
}

static int send_task(int fd, int32_t t)
{
    return write(fd, &t, sizeof t) == (ssize_t)sizeof t ? 0 : -1;
}

int study_pool_run(const study_pool_ops *ops, void *arg, int jobs, const int32_t *tasks, int n)
{
    if (n <= 0)
        return 0;
    if (jobs > n)
        jobs = n;
    if (jobs < 1)
        jobs = 1;
    int task_pipe[2], done_pipe[2];
    if (pipe(task_pipe) || pipe(done_pipe)) {
        perror("llmsim: pipe");
        return n;
    }
    fflush(NULL);
    pid_t *pids = sim_xcalloc((size_t)jobs, sizeof *pids);
    for (int j = 0; j < jobs; j++) {
        pids[j] = fork();
        if (pids[j] == 0) {
            close(task_pipe[1]);
            close(done_pipe[0]);
            worker(ops, arg, task_pipe[0], done_pipe[1]);
        }
    }
    close(task_pipe[0]);
    close(done_pipe[1]);
    /* at most two tasks per worker wait in the pipe, so it never fills whatever n is; once the
     * last task is sent the pipe closes, so the workers exit when it is drained and a worker
     * that died cannot leave the parent waiting: reading ends at end of file */
    int sent = 0, done = 0, failed = 0, open_in = 1;
    report r;
    for (;;) {
        while (open_in && sent < n && sent - done < 2 * jobs) {
            if (send_task(task_pipe[1], tasks[sent]) != 0)
                break;
            sent++;
        }
        if (open_in && (sent == n || sent == done)) {
            close(task_pipe[1]);
            open_in = 0;
        }
        if (read(done_pipe[0], &r, sizeof r) != (ssize_t)sizeof r)
            break;
        done++;
        failed += !r.ok;
        if (ops->done)
            ops->done(arg, r.task, r.ok, r.msg, done, n);
    }
    if (open_in)
        close(task_pipe[1]);
    close(done_pipe[0]);
    for (int j = 0; j < jobs; j++)
        waitpid(pids[j], NULL, 0);
    free(pids);
    return failed + (n - done);
}
