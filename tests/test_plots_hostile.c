/*
 * test_plots_hostile.c: no text from a database or the command line reaches gnuplot as code.
 *
 * Runs, a sweep, a capacity search and a validation are stored with names holding backquotes
 * (gnuplot runs `...` as a shell command inside double quotes), quotes of both kinds,
 * system(...), ';', an @macro and a trailing backslash: first through --set, --vary and
 * --compare, then rewritten in the database (with newlines too) as a file someone sends would
 * hold them. Every plot kind and every report kind is then drawn with gnuplot, through a wrapper
 * ($LLMSIM_GNUPLOT) that keeps a copy of each script it is given. No command may run (the
 * marker file never appears), each script, read as gnuplot reads it, holds such text only inside
 * single-quoted strings (where gnuplot substitutes nothing), and each data file holds it only in
 * comment lines. A --db or -o path holding a newline is refused before anything is written.
 * Skipped (77) where gnuplot is not installed: the marker check needs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"
#include "gp_check.h"
#include "proc_util.h"

#define MARKER "PWNED"
/* Each way out of a gnuplot string or comment, and each substitution gnuplot makes (short: a
 * scenario name is at most 63 characters); the database gets a longer one with newlines. */
#define HOSTILE "x`touch " MARKER "`'\";system('touch " MARKER "')@m\\"
/* A --vary value cannot hold ';' (it separates the keys in the stored sweep), nor a --compare
 * value (it separates named choices) */
#define HOSTILE_VARY "x`touch " MARKER "`'\"system('touch " MARKER "')@m\\"
#define HOSTILE_DB                                                                                 \
    "x`touch " MARKER "`'\"; system(\"touch " MARKER "\"); y='; system('touch " MARKER             \
    "'); @m ;print `touch " MARKER "` \\\nsystem('touch " MARKER "')\n#"

static char db[320], errbuf[1 << 15];

/* Runs llmsim with the NULL-terminated arguments (no shell: names pass untouched); stderr into
 * errbuf; returns the exit status. */
static int llmsim(const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    pid_t pid = e2e_startv(NULL, 0, arg0, ap);
    va_end(ap);
    return e2e_finish(pid, NULL, errbuf, sizeof errbuf);
}

static void exec_sql(const char *sql)
{
    sim_err e = {{0}};
    store *s = store_open(db, &e);
    if (!s || store_exec(s, sql, &e) != 0)
        fail_msg("%s (%.200s)", e.msg, sql);
    store_close(s);
}

/* s as an SQL expression: quotes doubled, each newline as char(10). */
static void sql_text(char *out, size_t len, const char *s)
{
    size_t o = (size_t)snprintf(out, len, "'");
    for (; *s && o + 16 < len; s++) {
        if (*s == '\'')
            o += (size_t)snprintf(out + o, len - o, "''");
        else if (*s == '\n')
            o += (size_t)snprintf(out + o, len - o, "' || char(10) || '");
        else
            out[o++] = *s;
    }
    snprintf(out + o, len - o, "'");
}

static char *slurp(const char *path)
{
    char *b = e2e_slurp(path, 1 << 22);
    if (!b)
        fail_msg("cannot read %s", path);
    return b;
}

static void assert_no_marker(const char *what)
{
    if (access(MARKER, F_OK) == 0)
        fail_msg("%s ran a command from the data: %s/%s exists", what, e2e_dir, MARKER);
}

/* The script read as gnuplot reads it (gp_check.h): the marker, backquotes and @macros only
 * in single-quoted strings, every string closed on its line, no comment continued. */
static void check_script(const char *path, const char *text)
{
    int line;
    const char *why = gp_check(text, MARKER, &line);
    if (why)
        fail_msg("%s:%d: %s", path, line, why);
}

/* Every line of a data file that holds the marker is a comment. */
static void check_data(const char *path)
{
    char *text = slurp(path);
    int line = 1;
    for (char *l = text; *l; line++) {
        char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char *hit = strstr(l, MARKER);
        if (hit && (size_t)(hit - l) < len && l[0] != '#')
            fail_msg("%s:%d: the marker in a data line: %.*s", path, line, (int)len, l);
        l += len + (nl != NULL);
    }
    free(text);
}

/* Checks, then removes, every script the wrapper kept; returns how many there were. */
static int check_kept_scripts(void)
{
    int n = 0;
    for (;; n++) {
        char path[400];
        snprintf(path, sizeof path, "%s/kept/%d.gp", e2e_dir, n);
        if (access(path, F_OK) != 0)
            break;
        char *text = slurp(path);
        check_script(path, text);
        free(text);
        remove(path);
    }
    return n;
}

static int setup(void **state)
{
    if (e2e_mkdir() != 0 || chdir(e2e_dir) != 0 || mkdir("kept", 0755) != 0)
        return -1;
    snprintf(db, sizeof db, "%s/hostile.db", e2e_dir);
    /* the wrapper keeps the script (numbered 0, 1, ...) and runs the real gnuplot on it */
    char wrap[400], text[1200];
    snprintf(wrap, sizeof wrap, "%s/gnuplot-wrap", e2e_dir);
    snprintf(
        text, sizeof text,
        "#!/bin/sh\nn=$(ls '%s/kept' | wc -l)\ncp \"$1\" '%s/kept/'$n.gp\nexec gnuplot \"$1\"\n",
        e2e_dir, e2e_dir);
    e2e_write(wrap, text);
    if (chmod(wrap, 0755) != 0 || setenv("LLMSIM_GNUPLOT", wrap, 1) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    return chdir("/") == 0 && e2e_rmdir() == 0 ? 0 : -1;
}

/* The database: two runs, a sweep varying the name, a capacity search comparing names, a
 * validation; hostile names put in through the command line. */
static void make_db(void)
{
    const char *demo = LLMSIM_SOURCE_DIR "/scenarios/demo.yaml";
    if (llmsim("run", demo, "--db", db, "--quiet", "--set", "workload.num_requests=30", "--set",
               "name=" HOSTILE, NULL) != 0 ||
        llmsim("run", demo, "--db", db, "--quiet", "--set", "workload.num_requests=30", "--set",
               "workload.arrival.rate=3", "--set", "scheduler.name=vllm", NULL) != 0)
        fail_msg("llmsim run: %s", errbuf);
    /* --vary splits at commas: the hostile text has none */
    if (llmsim("sweep", demo, "--db", db, "--quiet", "--jobs", "1", "--store", "summary", "--vary",
               "name=" HOSTILE_VARY ",plain", "--vary", "scheduler.name=orca,vllm", "--set",
               "workload.num_requests=20", NULL) != 0)
        fail_msg("llmsim sweep: %s", errbuf);
    if (llmsim("capacity", LLMSIM_SOURCE_DIR "/scenarios/capacity.yaml", "--db", db, "--quiet",
               "--slo", "ttft_p99=1000ms", "--target-rate", "4", "--precision", "0.3", "--set",
               "workload.num_requests=40", "--compare", "name=" HOSTILE_VARY ",plain", NULL) != 0)
        fail_msg("llmsim capacity: %s", errbuf);
    if (llmsim("validate", LLMSIM_SOURCE_DIR "/tests/data_validate/small.yaml", "--db", db,
               "--quiet", NULL) != 0)
        fail_msg("llmsim validate: %s", errbuf);
    assert_no_marker("storing the runs");
    assert_int_equal(check_kept_scripts(), 0);
}

/* Every text a plot or report shows, rewritten as a hostile database would hold it. */
static void poison_db(void)
{
    char h[1024], sql[20000];
    sql_text(h, sizeof h, HOSTILE_DB);
    snprintf(sql, sizeof sql,
             "UPDATE runs SET name = %s || id, scheduler = %s || id, model = %s, gpu = %s,"
             " dtype = %s, profile = %s, scenario = scenario || char(10) || '# --set evil.key='"
             " || replace(%s, char(10), ' ') || id;"
             "UPDATE sweep_params SET value = %s || point WHERE key = 'name';"
             "UPDATE sweep_points SET params = %s || point;"
             "UPDATE capacity_probes SET choice = %s || length(choice);"
             "UPDATE capacity_results SET choice = %s || length(choice);"
             "UPDATE validations SET name = %s, description = %s, source = %s;"
             "UPDATE validation_rows SET grp = %s || grp, row_id = %s || row_id;",
             h, h, h, h, h, h, h, h, h, h, h, h, h, h, h, h);
    exec_sql(sql);
}

static void test_every_kind(void **state)
{
    make_db();
    for (int poisoned = 0; poisoned < 2; poisoned++) {
        if (poisoned)
            poison_db();
        static const char *const plots[][4] = {{"cdf", "--run", "1,2", NULL},
                                               {"timeline", "--run", "1,2", NULL},
                                               {"gantt", "--run", "1", NULL},
                                               {"curve", "--sweep", "1", "--by"},
                                               {"curve", "--sweep", "1", NULL},
                                               {"probes", "--capacity", "1", NULL},
                                               {"validation", "--validation", "1", NULL}};
        for (size_t i = 0; i < sizeof plots / sizeof plots[0]; i++) {
            char img[400], path[400];
            snprintf(img, sizeof img, "%s/p%d-%zu.png", e2e_dir, poisoned, i);
            int rc = plots[i][3] ? llmsim("plot", plots[i][0], plots[i][1], plots[i][2], "--by",
                                          "name,scheduler.name", "--db", db, "-o", img, NULL)
                                 : llmsim("plot", plots[i][0], plots[i][1], plots[i][2], "--db", db,
                                          "-o", img, NULL);
            if (rc != 0)
                fail_msg("plot %s (%s): status %d: %s", plots[i][0],
                         poisoned ? "hostile database" : "hostile arguments", rc, errbuf);
            assert_no_marker(plots[i][0]);
            assert_int_equal(check_kept_scripts(), 1);
            snprintf(path, sizeof path, "%s/p%d-%zu.dat", e2e_dir, poisoned, i);
            check_data(path);
        }
        static const char *const reports[] = {"--run", "--sweep", "--capacity"};
        for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
            char html[400];
            snprintf(html, sizeof html, "%s/r%d-%zu.html", e2e_dir, poisoned, i);
            int rc = llmsim("report", reports[i], "1", "--db", db, "-o", html, "--quiet", NULL);
            if (rc != 0)
                fail_msg("report %s: status %d: %s", reports[i], rc, errbuf);
            assert_no_marker(reports[i]);
            if (check_kept_scripts() < 1)
                fail_msg("report %s drew no figure", reports[i]);
            char *page = slurp(html);
            assert_null(strstr(page, "class=\"missing\"")); /* every figure drawn */
            /* the hostile names are in the page's own text with their quotes escaped (the
             * figures' SVG has them as gnuplot writes them) */
            assert_non_null(strstr(page, MARKER "`&#39;&quot;"));
            free(page);
        }
    }
}

/* A newline in --db or -o would end the script's comment line and start a command. */
static void test_paths(void **state)
{
    const char *evil = "evil\nsystem('touch " MARKER "')\n#";
    char evil_db[400], cmd[1200];
    snprintf(evil_db, sizeof evil_db, "%s.db", evil);
    /* a copy of the database under that name, so only the path is hostile */
    FILE *in = fopen(db, "rb"), *out = fopen(evil_db, "wb");
    assert_non_null(in);
    assert_non_null(out);
    size_t n;
    while ((n = fread(cmd, 1, sizeof cmd, in)) > 0)
        assert_int_equal(fwrite(cmd, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(llmsim("plot", "cdf", "--run", "1", "--db", evil_db, "-o", "a.png", NULL), 1);
    assert_non_null(strstr(errbuf, "control character"));
    assert_no_marker("plot --db");
    assert_int_not_equal(access("a.gp", F_OK), 0);
    char evil_png[400];
    snprintf(evil_png, sizeof evil_png, "%s.png", evil);
    assert_int_equal(llmsim("plot", "cdf", "--run", "1", "--db", db, "-o", evil_png, NULL), 1);
    assert_non_null(strstr(errbuf, "control character"));
    assert_no_marker("plot -o");
    assert_int_equal(llmsim("report", "--run", "1", "--db", evil_db, "-o", "r.html", NULL), 1);
    assert_non_null(strstr(errbuf, "control character"));
    assert_no_marker("report --db");
    assert_int_not_equal(access("r.html", F_OK), 0);
    assert_int_equal(check_kept_scripts(), 0);
}

int main(void)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_plots_hostile: skipped: gnuplot is not installed (apt-get install "
                        "gnuplot-nox): the check that no command runs needs it\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_kind),
                                       cmocka_unit_test(test_paths)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
