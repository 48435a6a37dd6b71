/*
 * report.c: one self-contained HTML file from a results database: a title and the setting,
 * notes, the figures as inline SVG (each drawn by plt_plot with gnuplot's svg terminal into a
 * scratch folder, then copied into the page), the summary tables, and the scenario text.
 *
 * Self-contained: no script, no stylesheet, font or image is fetched; the page reads the same
 * with no network. Each figure's SVG ids are prefixed with "fN-" (N its number), so figures
 * whose gnuplot definitions share ids cannot resolve each other's. A figure that cannot be
 * drawn (a run stored without the rows it needs) is replaced by a paragraph saying why; the
 * report is still written. Without gnuplot no figure is drawn, the page says so, and the
 * result says how many were not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plt_int.h"

/* Text with the five HTML specials escaped. */
static void esc(FILE *f, const char *s)
{
    static const char *const entity[256] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;"};
    for (; s && *s; s++) {
        const char *e = entity[(unsigned char)*s];
        if (e)
            fputs(e, f);
        else
            fputc(*s, f);
    }
}

/* open, text with the HTML specials escaped, close. */
static void put_elem(FILE *f, const char *open, const char *text, const char *close)
{
    fputs(open, f);
    esc(f, text);
    fputs(close, f);
}

static char *slurp(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = plt_read_all(f);
    fclose(f);
    return buf;
}

/* The SVG document from its <svg element on, with every id and reference prefixed. */
static void put_svg(FILE *f, const char *svg, int fig)
{
    static const char *const marks[] = {"id='", "id=\"", "url(#", "href='#", "href=\"#"};
    const char *p = strstr(svg, "<svg");
    if (!p)
        return;
    while (*p) {
        size_t best = strlen(p), which = 0;
        for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
            const char *q = strstr(p, marks[k]);
            if (q && (size_t)(q - p) < best) {
                best = (size_t)(q - p);
                which = k;
            }
        }
        fwrite(p, 1, best, f);
        p += best;
        if (!*p)
            break;
        fprintf(f, "%sf%d-", marks[which], fig);
        p += strlen(marks[which]);
    }
}

void plt_table_start(plt_table *t, const char *title, int ncols, const char *const *names)
{
    memset(t, 0, sizeof *t);
    snprintf(t->title, sizeof t->title, "%s", title);
    t->ncols = ncols;
    t->cells = sim_xcalloc((size_t)ncols, sizeof *t->cells);
    for (int c = 0; c < ncols; c++)
        t->cells[c] = sim_xstrdup(names[c]);
}

void plt_table_row(plt_table *t, const char *const *cells)
{
    t->nrows++;
    t->cells = sim_xrealloc(t->cells, (size_t)((t->nrows + 1) * t->ncols) * sizeof *t->cells);
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] = sim_xstrdup(cells[c]);
}

void plt_table_free(plt_table *t)
{
    for (int c = 0; c < (t->nrows + 1) * t->ncols; c++)
        free(t->cells[c]);
    free(t->cells);
}

static void put_table(FILE *f, const plt_table *t)
{
    put_elem(f, "<h3>", t->title, "</h3>\n<table>\n<thead><tr>");
    for (int c = 0; c < t->ncols; c++)
        put_elem(f, "<th>", t->cells[c], "</th>");
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int r = 1; r <= t->nrows; r++) {
        fputs("<tr>", f);
        for (int c = 0; c < t->ncols; c++)
            put_elem(f, c ? "<td class=\"n\">" : "<td>", t->cells[r * t->ncols + c], "</td>");
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    if (t->note[0])
        put_elem(f, "<p class=\"note\">", t->note, "</p>\n");
}

/* Draws plot o (figure i) into pr and writes it as inline SVG to f, or why it is missing. */
static void draw(FILE *f, const plt_opts *o, int i, plt_result *pr, plt_report_result *res)
{
    sim_err err = {{0}};
    if (plt_plot(o, pr, &err) != 0) {
        put_elem(f, "<p class=\"missing\">Not drawn: ", err.msg, "</p>\n");
        res->failed++;
    } else if (!pr->rendered) {
        fputs("<p class=\"missing\">Not drawn: gnuplot is not installed (apt-get install "
              "gnuplot-nox).</p>\n",
              f);
        res->missing++;
    } else {
        char *svg = slurp(pr->image, &err);
        if (svg) {
            put_svg(f, svg, i + 1);
            free(svg);
            res->drawn++;
        }
    }
}

/* Draws figure i into dir and writes it (or why it is missing) to f. */
static void put_figure(FILE *f, const plt_report *r, int i, const char *dir, plt_report_result *res)
{
    const plt_figure *fig = &r->figs[i];
    plt_opts o = fig->plot;
    char img[PLT_PATH_MAX];
    snprintf(img, sizeof img, "%s/fig%d.svg", dir, i + 1);
    o.db = r->db;
    o.out = img;
    plt_result pr;
    fprintf(f, "<figure id=\"figure-%d\">\n", i + 1);
    draw(f, &o, i, &pr, res);
    remove(pr.image);
    remove(pr.data);
    remove(pr.script);
    put_elem(f, "<figcaption>", fig->caption, "");
    if (pr.note[0])
        put_elem(f, " <span class=\"note\">", pr.note, "</span>");
    fputs("</figcaption>\n</figure>\n", f);
}

static const char style[] =
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
    ".setting{color:#555;margin-top:0}table{border-collapse:collapse;margin:.5em 0 1em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}th{background:#f2f2f2}figure{margin:1em 0}"
    "figure svg{max-width:100%;height:auto}figcaption{color:#444;font-size:.9em}"
    ".note{color:#8a5a00}.missing{color:#a00}pre{background:#f7f7f7;padding:.8em;"
    "overflow:auto;font-size:.85em}footer{color:#777;font-size:.8em;margin-top:2em}";

/* The page's head (title, style) and its heading, setting and notes. */
static void put_head(FILE *f, const plt_report *r)
{
    put_elem(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
             r->title, "</title>\n");
    fprintf(f, "<style>%s</style>\n</head>\n<body>\n", style);
    put_elem(f, "<h1>", r->title, "</h1>\n");
    put_elem(f, "<p class=\"setting\">", r->setting, "</p>\n");
    for (int i = 0; i < r->nnotes; i++)
        put_elem(f, "<p class=\"note\">", r->notes[i], "</p>\n");
}

static int write_page(FILE *f, const plt_report *r, const char *dir, plt_report_result *res)
{
    put_head(f, r);
    if (r->nfigs > 0) {
        fputs("<h2>Plots</h2>\n", f);
        for (int i = 0; i < r->nfigs; i++)
            put_figure(f, r, i, dir, res);
    }
    fputs("<h2>Summary</h2>\n", f);
    for (int i = 0; i < r->ntables; i++)
        put_table(f, &r->tables[i]);
    if (r->scenario)
        put_elem(f, "<h2>Scenario</h2>\n<pre>", r->scenario, "</pre>\n");
    put_elem(f, "<footer>", r->footer, "</footer>\n</body>\n</html>\n");
    return ferror(f) ? -1 : 0;
}

/* Writes the page into tmp (its figures drawn in dir), then renames it to r->out: the finished
 * page replaces any old one at once, never half a report. 0, or -1 with err (tmp removed). */
static int write_file(const plt_report *r, const char *tmp, const char *dir, plt_report_result *res,
                      sim_err *err)
{
    FILE *f = fopen(tmp, "w");
    if (!f)
        return sim_errf(err, "%s: cannot write: %s", tmp, strerror(errno));
    int bad = write_page(f, r, dir, res);
    if (fclose(f) != 0 || bad) {
        remove(tmp);
        return sim_errf(err, "%s: write error", tmp);
    }
    if (rename(tmp, r->out) != 0) {
        sim_errf(err, "%s: cannot write: %s", r->out, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

int plt_report_write(const plt_report *r, plt_report_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    if (r->db && plt_check_path(r->db, "--db", err) != 0)
        return -1;
    char dir[] = "/tmp/llmsim-report-XXXXXX", tmp[PLT_PATH_MAX];
    if (!mkdtemp(dir))
        return sim_errf(err, "cannot make a scratch folder for the figures: %s", strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.tmp", r->out);
    int rc = write_file(r, tmp, dir, res, err);
    rmdir(dir);
    return rc;
}
