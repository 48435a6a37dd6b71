/*
 * test_merge_output_race.c: a merge into a new output while another process opens the same path.
 *
 * study_sweep_merge once created a missing OUT in place and, when a later input failed, removed
 * it as its own: a process that had opened OUT meanwhile (a second merge, a sweep writing there)
 * lost its database. The output is now built under a private name and linked into place only
 * when every input merged. The interleaving is made, not waited for: the merge's own report of
 * its first input has a child process open OUT and store a run there.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_info.h"
#include "scratch.h"
#include "store_util.h"
#include "study_sweep.h"
#include "test_main.h"

static char dir[64], out[128], in1[128], in2[128];
static int drop_second; /* the report of the first input removes the second (it then fails) */

/* Stores one run named name in the database at path (created when missing). */
static void write_run(const char *path, const char *name)
{
    sim_err e = {{0}};
    store *s = tstore_open(path, 0);
    store_run_info info = test_run_info(name, STORE_SUMMARY);
    store_run *w = store_run_begin(s, &info, 0, &e);
    eng_metric m = {"completed", 3};
    if (!w || store_run_finish(w, &m, 1, NULL, NULL, NULL, &e) != 0)
        fail_msg("%s: %s", path, e.msg);
    store_close(s);
}

/* After the first input merged: another process opens OUT and stores its run "other". */
static void on_input(void *arg, const char *in, const store_merge_stats *st)
{
    (void)arg, (void)st;
    if (strcmp(in, in1) != 0)
        return;
    if (drop_second)
        assert_int_equal(unlink(in2), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        write_run(out, "other");
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The files in dir named OUT.something (OUT.merge-PID-N, OUT.new-PID-N): private files a merge
 * left beside OUT. */
static int leftovers(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, "out.db.", strlen("out.db.")) == 0;
    closedir(d);
    return n;
}

static int64_t runs_named(const char *name)
{
    store *s = tstore_open(out, 1);
    int64_t n = tstore_intf(s, "SELECT count(*) FROM runs WHERE name = '%s'", name);
    store_close(s);
    return n;
}

static int setup(void **state)
{
    (void)state;
    if (scratch_make(dir, sizeof dir, "/tmp/llmsim-mrace-XXXXXX") != 0)
        return -1;
    snprintf(out, sizeof out, "%s/out.db", dir);
    snprintf(in1, sizeof in1, "%s/in1.db", dir);
    snprintf(in2, sizeof in2, "%s/in2.db", dir);
    write_run(in1, "first");
    write_run(in2, "second");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return scratch_remove(dir);
}

static void test_failed_merge_keeps_what_another_opened(void **state)
{
    (void)state;
    drop_second = 1;
    static const study_sweep_merge_ops ops = {on_input, NULL};
    const char *in[] = {in1, in2};
    sim_err e = {{0}};
    assert_int_equal(study_sweep_merge(out, in, 2, &ops, NULL, &e), -1);
    assert_non_null(strstr(e.msg, "in2.db"));
    /* the other process's database is where it left it, without the failed merge's runs */
    assert_int_equal(runs_named("other"), 1);
    assert_int_equal(runs_named("first"), 0);
    assert_int_equal(leftovers(), 0);
}

static void test_merge_adds_to_an_output_made_meanwhile(void **state)
{
    (void)state;
    drop_second = 0;
    write_run(in2, "second"); /* the first test removed it */
    store_remove_files(out);
    static const study_sweep_merge_ops ops = {on_input, NULL};
    const char *in[] = {in1, in2};
    sim_err e = {{0}};
    assert_int_equal(study_sweep_merge(out, in, 2, &ops, NULL, &e), 0);
    assert_int_equal(runs_named("other"), 1);
    assert_int_equal(runs_named("first"), 1);
    assert_int_equal(runs_named("second"), 1);
    assert_int_equal(leftovers(), 0);
}

LLMSIM_TEST_MAIN(setup, teardown, test_failed_merge_keeps_what_another_opened,
                 test_merge_adds_to_an_output_made_meanwhile)
