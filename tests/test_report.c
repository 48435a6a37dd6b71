/*
 * test_report.c: `llmsim report` end to end, looked at in a real browser.
 *
 * One database gets a run with preemptions, a sweep and a capacity search; each report is
 * written, then headless Chromium (Debian's chromium) loads it from the file system with every
 * network feature off and dumps the DOM it built, and takes a screenshot (kept beside the test
 * binary: report-run.png, report-sweep.png, report-capacity.png). The page must have the
 * expected headings, one figure per plot with a non-empty SVG inline (no "not drawn" in its
 * place), and nothing that would need the network (no script, stylesheet or image fetched).
 * Skipped (77) with a message when chromium or gnuplot is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

static char out[65536], err[65536];
static const char *chromium;

static const char *find_prog(const char *const *names)
{
    static char buf[512];
    const char *path = getenv("PATH");
    for (int i = 0; names[i]; i++)
        for (const char *p = path ? path : ""; *p;) {
            size_t n = strcspn(p, ":");
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, names[i]);
            if (access(buf, X_OK) == 0)
                return buf;
            p += n + (p[n] == ':');
        }
    return NULL;
}

/* Runs `llmsim ARGS --db DB`; the test fails unless it succeeds. */
#define llmsim(fmt, ...)                                                                           \
    do {                                                                                           \
        int rc_ =                                                                                  \
            e2e_llmsim(out, sizeof out, err, sizeof err, fmt " --db %s", __VA_ARGS__, e2e_db);     \
        if (rc_ != 0)                                                                              \
            fail_msg("llmsim " fmt ": status %d: %s", __VA_ARGS__, rc_, err);                      \
    } while (0)

static int count(const char *s, const char *what, const char *end)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) && (!end || p < end); p += strlen(what))
        n++;
    return n;
}

/* Chromium renders html: the DOM it built, and a screenshot saved as shot. */
static char *render(const char *html, const char *shot)
{
    static const char flags[] =
        "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
        " --disable-background-networking --disable-component-update --disable-sync";
    char profile[320], dom[320];
    snprintf(profile, sizeof profile, "%s/chromium-profile", e2e_dir);
    snprintf(dom, sizeof dom, "%s/dom.html", e2e_dir);
    assert_int_equal(e2e_sh(NULL, 0, NULL, 0, "rm -rf %s && mkdir %s", profile, profile), 0);
    int rc =
        e2e_sh(NULL, 0, err, sizeof err, "(%s %s --user-data-dir=%s --dump-dom file://%s > %s)",
               chromium, flags, profile, html, dom);
    if (rc != 0)
        fail_msg("chromium --dump-dom %s: status %d: %s", html, rc, err);
    assert_int_equal(e2e_sh(NULL, 0, NULL, 0, "rm -rf %s && mkdir %s", profile, profile), 0);
    rc = e2e_sh(NULL, 0, err, sizeof err,
                "%s %s --user-data-dir=%s --hide-scrollbars --window-size=1200,2400"
                " --screenshot=%s file://%s",
                chromium, flags, profile, shot, html);
    if (rc != 0)
        fail_msg("chromium --screenshot %s: status %d: %s", html, rc, err);
    struct stat sb;
    assert_int_equal(stat(shot, &sb), 0);
    assert_true(sb.st_size > 20000); /* a page with tables and figures, not a blank one */
    uint32_t w, h;
    e2e_png_size(shot, &w, &h);
    assert_int_equal(w, 1200);
    print_message("screenshot: %s\n", shot);
    return e2e_read_all(dom);
}

/* The rendered page has these headings, nfigs figures each holding a drawn SVG, and asks for
 * nothing over the network. */
static void check_page(const char *html_path, const char *dom, const char *const *headings,
                       int nfigs)
{
    for (int i = 0; headings[i]; i++)
        if (!strstr(dom, headings[i]))
            fail_msg("%s: no heading %s", html_path, headings[i]);
    assert_int_equal(count(dom, "<figure", NULL), nfigs);
    for (const char *fig = strstr(dom, "<figure"); fig; fig = strstr(fig + 1, "<figure")) {
        const char *end = strstr(fig, "</figure>");
        assert_non_null(end);
        if (count(fig, "class=\"missing\"", end))
            fail_msg("%s: a figure was not drawn: %.300s", html_path, fig);
        assert_int_equal(count(fig, "<svg", end), 1);
        /* drawn: axes, ticks, lines or boxes: many path elements with data */
        int paths = count(fig, "<path", end) + count(fig, "<polyline", end);
        if (paths < 20)
            fail_msg("%s: a figure's SVG has only %d drawing elements", html_path, paths);
    }
    char *html = e2e_read_all(html_path);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "src="));
    assert_int_equal(count(html, "http", NULL),
                     count(html, "http://www.w3.org/", NULL)); /* only SVG namespaces */
    free(html);
}

static void test_reports(void **state)
{
    /* a run with preemptions, a sweep, a capacity search */
    llmsim("run %s/scenarios/demo.yaml --set scheduler.name=vllm --set memory.gpu_utilization=0.22"
           " --set workload.arrival.rate=6 --set workload.num_requests=60 --quiet",
           LLMSIM_SOURCE_DIR);
    llmsim("sweep %s/scenarios/demo.yaml --vary scheduler.name=orca,vllm"
           " --vary workload.arrival.rate=2,6 --set workload.num_requests=40 --reps 2 --jobs 2"
           " --store summary --quiet",
           LLMSIM_SOURCE_DIR);
    llmsim("capacity %s/scenarios/capacity.yaml --slo ttft_p99=1000ms,tpot_p99=50ms"
           " --target-rate 12 --precision 0.2 --set workload.num_requests=100 --quiet",
           LLMSIM_SOURCE_DIR);
    static const struct {
        const char *what, *name;
        const char *headings[8];
        int figs;
    } cases[] = {
        {"--run 1",
         "run",
         {"<h1>Run 1: demo</h1>", "<h2>Summary</h2>", "<h3>Latency (ms)</h3>",
          "<h3>Throughput</h3>", "<h2>Plots</h2>", "<h2>Scenario</h2>", NULL},
         4},
        {"--sweep 1",
         "sweep",
         {"<h1>Sweep 1: ", "<h2>Summary</h2>",
          "<h3>Points (2 repetitions each; mean ± 95% CI)</h3>",
          "<h3>Paired differences against scheduler orca (same seeds)</h3>", "<h2>Plots</h2>",
          "<h2>Scenario</h2>", NULL},
         2},
        {"--capacity 1",
         "capacity",
         {"<h1>Capacity search 1</h1>", "<h3>Question</h3>", "<h3>Answer</h3>",
          "<h3>Probes (every probe the search made; its first seed's run)</h3>", "<h2>Plots</h2>",
          "<h2>Scenario</h2>", NULL},
         1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char html[320], shot[512];
        snprintf(html, sizeof html, "%s/report-%s.html", e2e_dir, cases[i].name);
        snprintf(shot, sizeof shot, "%s/report-%s.png", LLMSIM_TEST_DIR, cases[i].name);
        llmsim("report %s -o %s", cases[i].what, html);
        assert_non_null(strstr(err, "figure"));
        char *dom = render(html, shot);
        check_page(html, dom, cases[i].headings, cases[i].figs);
        free(dom);
    }
    /* the run's report holds its preemptions: the gantt's legend names the waits */
    char path[320];
    snprintf(path, sizeof path, "%s/report-run.html", e2e_dir);
    char *html = e2e_read_all(path);
    assert_non_null(strstr(html, "waiting after a preemption"));
    assert_non_null(strstr(html, "KV capacity"));
    free(html);
    /* one of the three, not two; an unknown run names it */
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err, "%s report --run 1 --sweep 1 --db %s",
                            LLMSIM_BINARY, e2e_db),
                     2);
    assert_int_equal(e2e_sh(out, sizeof out, err, sizeof err,
                            "%s report --run 999 --db %s -o %s/x.html", LLMSIM_BINARY, e2e_db,
                            e2e_dir),
                     1);
    assert_non_null(strstr(err, "no run 999"));
    snprintf(path, sizeof path, "%s/x.html", e2e_dir);
    assert_int_not_equal(access(path, F_OK), 0);
}

int main(void)
{
    static const char *const chromes[] = {"chromium", "chromium-browser", NULL};
    static const char *const gnuplots[] = {"gnuplot", NULL};
    static char chrome[512];
    if (!find_prog(gnuplots)) {
        fprintf(stderr, "test_report: skipped: gnuplot is not installed (apt-get install "
                        "gnuplot-nox)\n");
        return 77;
    }
    if (!find_prog(chromes)) {
        fprintf(stderr, "test_report: skipped: chromium is not installed (apt-get install "
                        "chromium; scripts/setup.sh installs it)\n");
        return 77;
    }
    snprintf(chrome, sizeof chrome, "%s", find_prog(chromes));
    chromium = chrome;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reports)};
    return cmocka_run_group_tests(tests, e2e_group_setup_db, e2e_group_teardown);
}
