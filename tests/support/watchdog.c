/*
 * watchdog.c: runs one test and stops it only when it hangs, judged by progress, not by the
 * wall clock, so a test on a machine loaded sixteen-fold passes as it does on an idle one.
 *
 *   llmsim_watchdog [--stall S] [--cpu S] -- COMMAND [ARGS...]
 *
 * Progress is CPU time: the user and system time of the test and every process below it (the
 * live ones, and what their reaped children used), read from /proc each second. A loaded
 * machine slows a test's CPU time down but never stops it; a test waiting forever (a deadlock,
 * a read nothing will answer) stops it. So:
 *   --stall S  the tree used no CPU time for S seconds of waiting: a hang (default 300);
 *   --cpu S    the tree used more than S CPU seconds: a loop (default 0, none). CPU time is
 *              about what the test needs however busy the machine is.
 * Either kills the whole tree (the test runs in a process group of its own), prints why on
 * stderr and exits 124. Otherwise the exit status is the test's (128 + N for signal N), so
 * CTest's SKIP_RETURN_CODE and pass/fail read as they would without it. Where /proc cannot be
 * read, no hang is detected and the test runs to its end.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_util.h"

#define MAX_PROCS 65536

/* CPU ticks of root and every process below it; -1 when /proc cannot be read. */
static long long tree_ticks(long root)
{
    static long pids[MAX_PROCS], parents[MAX_PROCS];
    static unsigned long long t[MAX_PROCS];
    static char in[MAX_PROCS];
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_PROCS) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        proc_stat ps;
        if (*end || pid <= 0 || proc_read(pid, &ps) != 0)
            continue;
        parents[n] = ps.ppid;
        t[n] = ps.self + ps.children;
        pids[n] = pid;
        in[n] = pid == root;
        n++;
    }
    closedir(d);
    /* mark descendants: repeat until no change (a tree is a few levels deep) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; !in[i] && j < n; j++)
                if (in[j] && parents[i] == pids[j])
                    in[i] = changed = 1;
    }
    long long sum = 0;
    int found = 0;
    for (int i = 0; i < n; i++)
        if (in[i]) {
            sum += (long long)t[i];
            found = 1;
        }
    return found ? sum : -1;
}

static int usage(void)
{
    fprintf(stderr, "usage: llmsim_watchdog [--stall S] [--cpu S] -- COMMAND [ARGS...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    double stall = 300, cpu = 0;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (i + 1 >= argc)
            return usage();
        if (strcmp(argv[i], "--stall") == 0)
            stall = atof(argv[++i]);
        else if (strcmp(argv[i], "--cpu") == 0)
            cpu = atof(argv[++i]);
        else
            return usage();
    }
    if (i + 1 >= argc)
        return usage();
    char **cmd = argv + i + 1;
    pid_t pid = fork();
    if (pid < 0) {
        perror("llmsim_watchdog: fork");
        return 2;
    }
    if (pid == 0) {
        setpgid(0, 0);
        execvp(cmd[0], cmd);
        fprintf(stderr, "llmsim_watchdog: %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    double hz = (double)sysconf(_SC_CLK_TCK), idle = 0;
    long long last = -1;
    struct timespec second = {1, 0};
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            kill(-pid, SIGKILL); /* what the test left running */
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (w < 0 && errno != EINTR) {
            perror("llmsim_watchdog: waitpid");
            return 2;
        }
        long long now = tree_ticks(pid);
        const char *why = NULL;
        if (now >= 0 && now > last) {
            last = now;
            idle = 0;
        } else if (now >= 0 && (idle += 1) >= stall) {
            why = "used no CPU time";
        }
        if (now >= 0 && cpu > 0 && now / hz > cpu)
            why = "used more CPU time than its limit";
        if (why) {
            fprintf(stderr,
                    "llmsim_watchdog: %s %s (%.0f CPU s used, idle %.0f s, limits: --stall %.0f "
                    "--cpu %.0f): stopped as hung\n",
                    cmd[0], why, last / hz, idle, stall, cpu);
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 124;
        }
        nanosleep(&second, NULL);
    }
}
