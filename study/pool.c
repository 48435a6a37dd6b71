/*
 * pool.c: worker processes for sweeps. Records on both pipes are at most PIPE_BUF bytes, so
 * each is written and read whole even with several writers.
 *
 * Spools: before forking, the parent creates one temporary file per worker, opens it a second
 * time for reading (its own file offset) and unlinks it. Worker j appends each task's output
 * to spool j and reports (offset, length); the parent reads that range. `taken[j]`, in a small
 * shared mapping, counts the reports of worker j the parent has finished with: a worker all of
 * whose reports have been taken truncates its spool before its next task, so a spool holds only
 * the tasks in flight. A worker that keeps finding reports not taken yet (the parent writing
 * slower than the workers simulate) would never find that moment, so past spool_limit bytes it
 * waits for it: the reports it waits for are already in the report pipe, and the parent takes
 * them without waiting on any worker, so the wait ends. Counting reports rather than bytes
 * matters: offsets start over after a truncation, so an offset could come round to a value the
 * parent had already reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "study_pool.h"

typedef struct report {
    int32_t task, ok, worker;
    int64_t off, len; /* the task's output in the worker's spool */
    char msg[1024];
} report;

typedef struct pool {
    int jobs;
    int *wfd;               /* spool j, the worker's descriptor */
    int *rfd;               /* spool j, the parent's (its own file offset) */
    _Atomic int64_t *taken; /* shared: reports of worker j the parent has finished with */
    int task_pipe[2], done_pipe[2];
    pid_t *pids;
} pool;

/* A temporary file in $TMPDIR (or /tmp), unlinked; its descriptor, or -1 with err. *rd (when
 * not NULL) gets a second, read-only descriptor of it. */
static int temp_file(int *rd, sim_err *err)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/llmsim-spool-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return sim_errf(err, "cannot create a spool file in %s: %s", dir && *dir ? dir : "/tmp",
                        strerror(errno));
    if (rd && (*rd = open(path, O_RDONLY)) < 0) {
        sim_errf(err, "cannot reopen the spool file %s: %s", path, strerror(errno));
        close(fd);
        fd = -1;
    }
    unlink(path);
    return fd;
}

FILE *study_pool_tmpfile(sim_err *err)
{
    int fd = temp_file(NULL, err);
    FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (fd >= 0 && !f) {
        sim_errf(err, "cannot open a spool file: %s", strerror(errno));
        close(fd);
    }
    return f;
}

static void pool_free(pool *p)
{
    for (int j = 0; p->wfd && j < p->jobs; j++) {
        if (p->wfd[j] >= 0)
            close(p->wfd[j]);
        if (p->rfd[j] >= 0)
            close(p->rfd[j]);
    }
    if (p->taken)
        munmap((void *)p->taken, (size_t)p->jobs * sizeof *p->taken);
    free(p->wfd);
    free(p->rfd);
    free(p->pids);
}

/* The counters of taken reports, one per worker, in a mapping the workers share. 0, or -1 with
 * err. */
static int map_counters(pool *p, sim_err *err)
{
    size_t bytes = (size_t)p->jobs * sizeof *p->taken;
    int fd = temp_file(NULL, err);
    if (fd < 0)
        return -1;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0)
        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return sim_errf(err, "cannot map the spool counters: %s", strerror(errno));
    p->taken = m;
    for (int j = 0; j < p->jobs; j++)
        atomic_init(&p->taken[j], 0);
    return 0;
}

/* The spools and the shared counters. 0, or -1 with err. */
static int pool_open(pool *p, sim_err *err)
{
    p->wfd = sim_xmalloc((size_t)p->jobs * sizeof *p->wfd);
    p->rfd = sim_xmalloc((size_t)p->jobs * sizeof *p->rfd);
    p->pids = sim_xcalloc((size_t)p->jobs, sizeof *p->pids);
    for (int j = 0; j < p->jobs; j++)
        p->wfd[j] = p->rfd[j] = -1;
    for (int j = 0; j < p->jobs; j++)
        if ((p->wfd[j] = temp_file(&p->rfd[j], err)) < 0)
            return -1;
    return map_counters(p, err);
}

/* The worker's report for one task: runs it and flushes its output. */
static void run_one(const study_pool_ops *ops, void *arg, void *w, const sim_err *open_err,
                    FILE *out, report *r)
{
    sim_err err = {{0}};
    int64_t start = r->off;
    if (!w) {
        r->ok = 0;
        snprintf(r->msg, sizeof r->msg, "%s", open_err->msg);
    } else if (ops->run(arg, w, r->task, out, &err) != 0) {
        r->ok = 0;
        snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    }
    if (fflush(out) != 0 && r->ok) {
        r->ok = 0;
        snprintf(r->msg, sizeof r->msg, "writing the spool file: %s", strerror(errno));
    }
    off_t end = ftello(out);
    r->len = end > start ? (int64_t)end - start : 0;
}

/* Waits until the parent has taken `reports` reports of worker j. */
static void wait_taken(pool *p, int j, int64_t reports)
{
    while (atomic_load(&p->taken[j]) != reports)
        nanosleep(&(struct timespec){0, 200000}, NULL);
}

/* The parent is done with every report of this worker: its spool starts over. The new end of
 * the spool (0, or end when it cannot be truncated). */
static int64_t spool_restart(FILE *out, int64_t end)
{
    if (ftruncate(fileno(out), 0) != 0)
        return end;
    rewind(out);
    return 0;
}

static _Noreturn void worker(const study_pool_ops *ops, void *arg, pool *p, int j)
{
    sim_err open_err = {{0}};
    void *w = ops->open(arg, &open_err);
    FILE *out = fdopen(p->wfd[j], "w+b");
    int64_t end = 0, reports = 0; /* the end of what this worker has reported; how many */
    int32_t t;
    int64_t limit = ops->spool_limit > 0 ? ops->spool_limit : INT64_C(64) << 20;
    while (out && read(p->task_pipe[0], &t, sizeof t) == (ssize_t)sizeof t) {
        if (end > limit)
            wait_taken(p, j, reports);
        if (end > 0 && atomic_load(&p->taken[j]) == reports)
            end = spool_restart(out, end);
        report r = {.task = t, .ok = 1, .worker = j, .off = end};
        run_one(ops, arg, w, &open_err, out, &r);
        end = r.off + r.len;
        reports++;
        if (write(p->done_pipe[1], &r, sizeof r) != (ssize_t)sizeof r)
            break;
    }
    if (w)
        ops->close(w);
    _exit(0);
}

/* In worker j's process: closes the parent's pipe ends and the other spools, then works. */
static _Noreturn void worker_child(const study_pool_ops *ops, void *arg, pool *p, int j)
{
    close(p->task_pipe[1]);
    close(p->done_pipe[0]);
    for (int k = 0; k < p->jobs; k++) {
        close(p->rfd[k]);
        if (k != j)
            close(p->wfd[k]);
    }
    worker(ops, arg, p, j);
}

/* Forks the workers; 0, or -1 with err (the ones already started are stopped by the caller
 * closing the task pipe). */
static int start_workers(const study_pool_ops *ops, void *arg, pool *p, sim_err *err)
{
    fflush(NULL);
    for (int j = 0; j < p->jobs; j++) {
        p->pids[j] = fork();
        if (p->pids[j] < 0)
            return sim_errf(err, "cannot start a worker process: %s", strerror(errno));
        if (p->pids[j] == 0)
            worker_child(ops, arg, p, j);
    }
    return 0;
}

/* A fresh stream on a duplicate of spool j's reader, at off (its buffer cannot hold bytes a
 * worker has since overwritten); NULL when that fails. */
static FILE *spool_at(const pool *p, int j, int64_t off)
{
    int fd = dup(p->rfd[j]);
    if (fd < 0)
        return NULL;
    FILE *f = lseek(fd, (off_t)off, SEEK_SET) < 0 ? NULL : fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

/* A report's output handed to ops->done, read from its spool; whether the task succeeded. */
static int hand_over(const study_pool_ops *ops, void *arg, pool *p, const report *r)
{
    int ok = r->ok;
    FILE *in = spool_at(p, r->worker, r->off);
    const char *msg = in || !ok ? r->msg : "cannot read the spool file";
    if (!in)
        ok = 0;
    if (ops->done(arg, r->task, ok, msg, in, in ? r->len : 0) != 0)
        ok = 0;
    if (in)
        fclose(in);
    return ok;
}

/* One report read in the parent: its output handed to done, then marked as read. */
static void take(const study_pool_ops *ops, void *arg, pool *p, const report *r,
                 study_pool_stats *st)
{
    int ok = r->ok;
    if (r->worker < 0 || r->worker >= p->jobs) {
        st->failed++;
        return;
    }
    if (ops->done)
        ok = hand_over(ops, arg, p, r);
    atomic_fetch_add(&p->taken[r->worker], 1);
    if (ok)
        st->done++;
    else
        st->failed++;
}

/* The pool's spools and its two pipes; -1 with err (and nothing left open) when one cannot be
 * made. */
static int pool_make(pool *p, sim_err *err)
{
    if (pool_open(p, err) != 0) {
        pool_free(p);
        return -1;
    }
    if (pipe(p->task_pipe) || pipe(p->done_pipe)) {
        pool_free(p);
        return sim_errf(err, "cannot create the worker pipes: %s", strerror(errno));
    }
    return 0;
}

/* Where the parent is in handing out the tasks. */
typedef struct feed {
    int next;     /* the next task to send */
    int inflight; /* tasks sent whose report has not come back */
    int open_in;  /* the task pipe is still open */
} feed;

/* Sends tasks while fewer than two per worker are in flight (skipping those ops->skip
 * passes over), and closes the task pipe once the last is sent or none is in flight. */
static void feed_tasks(const study_pool_ops *ops, void *arg, pool *p, const int32_t *tasks, int n,
                       feed *f, study_pool_stats *st)
{
    while (f->open_in && f->next < n && f->inflight < 2 * p->jobs) {
        if (ops->skip && ops->skip(arg, tasks[f->next])) {
            st->skipped++;
            f->next++;
            continue;
        }
        if (write(p->task_pipe[1], &tasks[f->next], sizeof tasks[f->next]) !=
            (ssize_t)sizeof tasks[f->next])
            break;
        f->next++;
        f->inflight++;
    }
    if (f->open_in && (f->next == n || f->inflight == 0)) {
        close(p->task_pipe[1]);
        f->open_in = 0;
    }
}

/* Closes the parent's pipe ends and waits for every worker. */
static void pool_reap(pool *p, const feed *f)
{
    if (f->open_in)
        close(p->task_pipe[1]);
    close(p->done_pipe[0]);
    for (int j = 0; j < p->jobs; j++)
        if (p->pids[j] > 0)
            waitpid(p->pids[j], NULL, 0);
}

/* Feeds the tasks to the workers and takes their reports until none is in flight or the workers
 * are gone. At most two tasks per worker wait in the pipe, so it never fills whatever n is; once
 * the last task is sent the pipe closes, so the workers exit when it is drained and a worker that
 * died cannot leave the parent waiting: reading ends at end of file. */
static void run_tasks(const study_pool_ops *ops, void *arg, pool *p, const int32_t *tasks, int n,
                      feed *f, study_pool_stats *st)
{
    report r;
    for (;;) {
        feed_tasks(ops, arg, p, tasks, n, f, st);
        if ((f->inflight == 0 && !f->open_in) ||
            read(p->done_pipe[0], &r, sizeof r) != (ssize_t)sizeof r)
            break;
        f->inflight--;
        take(ops, arg, p, &r, st);
    }
}

int study_pool_run(const study_pool_ops *ops, void *arg, int jobs, const int32_t *tasks, int n,
                   study_pool_stats *st, sim_err *err)
{
    memset(st, 0, sizeof *st);
    if (n <= 0)
        return 0;
    pool p = {.jobs = jobs > n ? n : jobs < 1 ? 1 : jobs};
    if (pool_make(&p, err) != 0)
        return -1;
    /* a write to the task pipe after every worker died must fail, not kill this process */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    int rc = start_workers(ops, arg, &p, err);
    close(p.task_pipe[0]);
    close(p.done_pipe[1]);
    feed f = {.open_in = rc == 0};
    run_tasks(ops, arg, &p, tasks, n, &f, st);
    pool_reap(&p, &f);
    signal(SIGPIPE, old_pipe);
    st->failed += f.inflight + (n - f.next); /* lost with a worker, or never sent */
    pool_free(&p);
    return rc;
}
