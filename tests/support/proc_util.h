/*
 * proc_util.h: processes for the tests that run llmsim beside themselves (and for the test
 * watchdog): starting one with its arguments passed untouched (no shell), waiting for it, and
 * reading the CPU time it and its children used from /proc, which a loaded machine slows but
 * never stops (so a test decides when to look by work done, not by the wall clock).
 */
#ifndef LLMSIM_TESTS_PROC_UTIL_H
#define LLMSIM_TESTS_PROC_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* One process as /proc/PID/stat has it: its parent, state, and CPU ticks of itself and of its
 * children it has waited for. */
typedef struct proc_stat {
    long ppid;
    char state;
    unsigned long long self, children; /* ticks (sysconf(_SC_CLK_TCK) a second) */
} proc_stat;

/* 0 with *ps, or -1 when pid is gone or its stat cannot be read. */
static inline int proc_read(long pid, proc_stat *ps)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut, st;
    long cut, cst;
    /* after "pid (comm)": state, ppid, 9 fields, utime, stime, cutime, cstime (proc(5)) */
    if (!p || sscanf(p + 2, "%c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld",
                     &ps->state, &ps->ppid, &ut, &st, &cut, &cst) != 6)
        return -1;
    ps->self = (unsigned long long)ut + st;
    ps->children =
        (unsigned long long)(cut > 0 ? cut : 0) + (unsigned long long)(cst > 0 ? cst : 0);
    return 0;
}

/* CPU seconds used by pid and, recursively, its live children (/proc/PID/task/PID/children);
 * -1 once pid is gone or a zombie. */
static inline double proc_tree_cpu(long pid)
{
    proc_stat ps;
    if (proc_read(pid, &ps) != 0 || ps.state == 'Z')
        return -1;
    double cpu = (double)ps.self / (double)sysconf(_SC_CLK_TCK);
    char path[96];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
    FILE *f = fopen(path, "r");
    long child;
    while (f && fscanf(f, "%ld", &child) == 1) {
        double c = proc_tree_cpu(child);
        cpu += c > 0 ? c : 0;
    }
    if (f)
        fclose(f);
    return cpu;
}

/* Starts argv (argv[0] a path; NULL-terminated) with stdout to /dev/null and stderr to errpath,
 * in a process group of its own when own_group (so kill(-pid) reaches its workers too). Its pid,
 * or -1. */
static inline pid_t proc_start(const char *const *argv, const char *errpath, int own_group)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_init(&at);
    if (own_group) {
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&at, 0);
    }
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc == 0 ? pid : -1;
}

/* proc_start of `binary` with the arguments arg0, then ap's up to a NULL (at most 38). */
static inline pid_t proc_startv(const char *binary, const char *errpath, int own_group,
                                const char *arg0, va_list ap)
{
    const char *argv[40] = {binary, arg0};
    int n = 2;
    while (n < 39 && (argv[n] = va_arg(ap, const char *)))
        n++;
    argv[n] = NULL;
    return proc_start(argv, errpath, own_group);
}

/* Waits for pid: its exit status, or -1 when a signal ended it (or it cannot be waited for). */
static inline int proc_finish(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* path's first len - 1 bytes into buf, NUL-terminated ("" when it cannot be read). */
static inline void proc_read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

#endif
