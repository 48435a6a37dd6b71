/*
 * fuzz_plot.c: libFuzzer harness for the plot and report writers: arbitrary names and labels
 * from a database through to the gnuplot script and the HTML page, checked for code.
 *
 * Input: one byte choosing what to draw (its value modulo 8: one of the seven plots below, or
 * 7 for the report), then texts separated by NUL bytes. They become, in turn, the runs' names,
 * schedulers, models and GPUs, a `# --set` value in the runs' scenario text, the sweep's two values
 * of scheduler.name (kept apart by a suffix: one line each), the capacity search's choice, the
 * validation's name, group, row and metric, and the report's title, setting, note, table cells,
 * caption, scenario and footer (a text missing reads as ""). The database (fuzz_db.h's template) is
 * rewritten with them, then the plot chosen writes its script and data (gnuplot itself is not run:
 * $LLMSIM_GNUPLOT names no program), or the report is written. One drawing per input: each opens
 * the database, which costs more than the rest. Checked, each failure an abort:
 *   - the script, read as gnuplot reads it (gp_check.h), holds a backquote or @ only in single
 *     quotes, closes every string on its line and continues no comment;
 *   - the script and the data file have as many lines as with plain names (a newline from a
 *     name would have started a command or a data row);
 *   - the page has as many '<' as with plain texts (every text escaped).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_db.h"
#include "gp_check.h"
#include "plots.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NTEXT 19

static char db[192], img[192], page[192];
static uint8_t *tmpl;
static size_t ntmpl;

/* Every plot kind, over the template's ids. */
static const plt_opts kinds[] = {
    {.kind = PLT_CDF, .runs = {1, 2}, .nruns = 2},
    {.kind = PLT_TIMELINE, .runs = {1, 2}, .nruns = 2},
    {.kind = PLT_GANTT, .runs = {1}, .nruns = 1},
    {.kind = PLT_CURVE, .sweep = 1},
    {.kind = PLT_CURVE, .sweep = 1, .by = "scheduler.name", .x = PLT_X_RATE},
    {.kind = PLT_PROBES, .sweep = 1},
    {.kind = PLT_VALIDATION, .validation = 1}};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

/* Lines of each script and data file, and '<' of the page, with plain texts. */
static int ref_gp[NKINDS], ref_dat[NKINDS], ref_lt;

static int count(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* x as an SQL text: CAST(X'hex' AS TEXT) holds any bytes (but NUL) without quoting. */
static void hex(char *out, size_t len, const char *x)
{
    size_t o = (size_t)snprintf(out, len, "CAST(X'");
    for (const unsigned char *c = (const unsigned char *)x; *c && o + 16 < len; c++)
        o += (size_t)snprintf(out + o, len - o, "%02x", *c);
    snprintf(out + o, len - o, "' AS TEXT)");
}

/* The database rewritten with the texts t[0..NTEXT). */
static void poison(const char *const *t)
{
    static char h[NTEXT][2 * 4096 + 32];
    for (int i = 0; i < 11; i++)
        hex(h[i], sizeof h[i], t[i]);
    size_t len = 16 * sizeof h[0] + 2048;
    char *sql = malloc(len);
    snprintf(sql, len,
             "UPDATE runs SET name = %s, scheduler = %s, model = %s, gpu = %s, scenario ="
             " 'name: t' || char(10) || '# --set evil.key=' || %s || id || char(10);"
             "UPDATE sweep_params SET value = %s || ' 0' WHERE point = 0;"
             "UPDATE sweep_params SET value = %s || ' 1' WHERE point = 1;"
             "UPDATE capacity_probes SET choice = %s; UPDATE capacity_results SET choice = %s;"
             "UPDATE validations SET name = %s; UPDATE validation_rows SET grp = %s,"
             " row_id = %s; UPDATE validation_values SET metric = %s;"
             "UPDATE validation_stats SET grp = %s, metric = %s",
             h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[7], h[8], h[9], h[10], h[10], h[9],
             h[10]);
    sim_err err = {{0}};
    fuzz_put(db, tmpl, ntmpl);
    store *s = store_open(db, &err);
    fuzz_must(s != NULL);
    store_exec(s, sql, &err); /* refused (a foreign key, two equal choices): the plain ones stay */
    store_close(s);
    free(sql);
}

static int lines_of(const char *path)
{
    size_t n;
    uint8_t *b = fuzz_slurp(path, &n);
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += b[i] == '\n';
    free(b);
    return lines;
}

static void fail(const char *what, const char *path, int line)
{
    fprintf(stderr, "fuzz_plot: %s:%d: %s\n", path, line, what);
    abort();
}

/* Plots kind k; with ref, records its line counts, else checks them and the script. */
static void plot(int k, int ref)
{
    plt_opts o = kinds[k];
    o.db = db;
    o.out = img;
    plt_result res;
    sim_err err = {{0}};
    if (plt_plot(&o, &res, &err) != 0) {
        if (ref)
            fail(err.msg, plt_kind_name(o.kind), 0);
        return;
    }
    size_t n;
    char *text = (char *)fuzz_slurp(res.script, &n);
    int line, gp = count(text, '\n'), dat = lines_of(res.data);
    const char *why = gp_check(text, NULL, &line);
    free(text);
    if (why)
        fail(why, res.script, line);
    if (ref) {
        ref_gp[k] = gp;
        ref_dat[k] = dat;
    } else if (gp != ref_gp[k] || dat != ref_dat[k]) {
        fail(gp != ref_gp[k] ? "the script's lines differ from plain names'"
                             : "the data file's lines differ from plain names'",
             gp != ref_gp[k] ? res.script : res.data, 0);
    }
}

/* A report of texts t[11..18] (each after a letter: an empty note or caption is left out, which
 * would change the page's shape); with ref, records its '<' count, else checks it. */
static void report(const char *const *t, int ref)
{
    static char x[8][4200];
    for (int i = 0; i < 8; i++)
        snprintf(x[i], sizeof x[i], "x%s", t[11 + i]);
    plt_table tb = {.ncols = 2, .nrows = 1};
    char *cells[4] = {x[3], x[4], x[4], x[3]};
    snprintf(tb.title, sizeof tb.title, "%s", x[3]);
    snprintf(tb.note, sizeof tb.note, "%s", x[2]);
    tb.cells = cells;
    plt_figure fig = {.plot = kinds[0]};
    snprintf(fig.caption, sizeof fig.caption, "%s", x[5]);
    plt_report r = {.db = db,
                    .out = page,
                    .scenario = x[6],
                    .tables = &tb,
                    .ntables = 1,
                    .figs = &fig,
                    .nfigs = 1,
                    .nnotes = 1};
    snprintf(r.title, sizeof r.title, "%s", x[0]);
    snprintf(r.setting, sizeof r.setting, "%s", x[1]);
    snprintf(r.notes[0], sizeof r.notes[0], "%s", x[2]);
    snprintf(r.footer, sizeof r.footer, "%s", x[7]);
    plt_report_result res;
    sim_err err = {{0}};
    if (plt_report_write(&r, &res, &err) != 0) {
        if (ref)
            fail(err.msg, page, 0);
        return;
    }
    size_t n;
    char *html = (char *)fuzz_slurp(page, &n);
    int lt = count(html, '<');
    free(html);
    if (ref)
        ref_lt = lt;
    else if (lt != ref_lt)
        fail("the page has another count of '<' than with plain texts", page, 0);
}

static void setup(void)
{
    char path[192];
    fuzz_dir("plot");
    fuzz_file(db, sizeof db, "p.db");
    fuzz_file(img, sizeof img, "p.svg");
    fuzz_file(page, sizeof page, "p.html");
    fuzz_file(path, sizeof path, "p.dat");
    fuzz_file(path, sizeof path, "p.gp");
    fuzz_db_template(fuzz_file(path, sizeof path, "tmpl.db"));
    tmpl = fuzz_slurp(path, &ntmpl);
    setenv("LLMSIM_GNUPLOT", "/nonexistent/gnuplot", 1); /* scripts only */
    const char *plain[NTEXT] = {"run", "orca",         "m", "g", "v", "orca", "vllm", "c", "val",
                                "grp", "mean_ttft_ms", "T", "S", "N", "a",    "b",    "C", "s",
                                "F"};
    poison(plain);
    for (int k = 0; k < NKINDS; k++)
        plot(k, 1);
    report(plain, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db[0])
        setup();
    if (size < 1 || size > 4096)
        return 0;
    int what = data[0] % 8;
    data++;
    size--;
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *t[NTEXT];
    const char *p = buf, *end = buf + size;
    for (int i = 0; i < NTEXT; i++) {
        t[i] = p < end ? p : "";
        p += p < end ? strlen(p) + 1 : 0;
    }
    poison(t);
    if (what < NKINDS)
        plot(what, 0);
    else
        report(t, 0);
    free(buf);
    return 0;
}
