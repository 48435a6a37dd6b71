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
    for (; s && *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
}

static char *slurp(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = sim_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap)
            buf = sim_xrealloc(buf, cap *= 2);
    fclose(f);
    buf[n] = '\0';
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

static void put_table(FILE *f, const plt_table *t)
{
    fputs("<h3>", f);
    esc(f, t->title);
    fputs("</h3>\n<table>\n<thead><tr>", f);
    for (int c = 0; c < t->ncols; c++) {
        fputs("<th>", f);
        esc(f, t->cells[c]);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int r = 1; r <= t->nrows; r++) {
        fputs("<tr>", f);
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? "<td class=\"n\">" : "<td>", f);
            esc(f, t->cells[r * t->ncols + c]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    if (t->note[0]) {
        fputs("<p class=\"note\">", f);
        esc(f, t->note);
        fputs("</p>\n", f);
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
    sim_err err = {{0}};
    fprintf(f, "<figure id=\"figure-%d\">\n", i + 1);
    if (plt_plot(&o, &pr, &err) != 0) {
        fputs("<p class=\"missing\">Not drawn: ", f);
        esc(f, err.msg);
        fputs("</p>\n", f);
        res->failed++;
    } else if (!pr.rendered) {
        fputs("<p class=\"missing\">Not drawn: gnuplot is not installed (apt-get install "
              "gnuplot-nox).</p>\n",
              f);
        res->missing++;
    } else {
        char *svg = slurp(pr.image, &err);
        if (svg) {
            put_svg(f, svg, i + 1);
            free(svg);
            res->drawn++;
        }
    }
    remove(pr.image);
    remove(pr.data);
    remove(pr.script);
    fputs("<figcaption>", f);
    esc(f, fig->caption);
    if (pr.note[0]) {
        fputs(" <span class=\"note\">", f);
        esc(f, pr.note);
        fputs("</span>", f);
    }
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

static int write_page(FILE *f, const plt_report *r, const char *dir, plt_report_result *res)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    esc(f, r->title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
    esc(f, r->title);
    fputs("</h1>\n<p class=\"setting\">", f);
    esc(f, r->setting);
    fputs("</p>\n", f);
    for (int i = 0; i < r->nnotes; i++) {
        fputs("<p class=\"note\">", f);
        esc(f, r->notes[i]);
        fputs("</p>\n", f);
    }
    if (r->nfigs > 0) {
        fputs("<h2>Plots</h2>\n", f);
        for (int i = 0; i < r->nfigs; i++)
            put_figure(f, r, i, dir, res);
    }
    fputs("<h2>Summary</h2>\n", f);
    for (int i = 0; i < r->ntables; i++)
        put_table(f, &r->tables[i]);
    if (r->scenario) {
        fputs("<h2>Scenario</h2>\n<pre>", f);
        esc(f, r->scenario);
        fputs("</pre>\n", f);
    }
    fputs("<footer>", f);
    esc(f, r->footer);
    fputs("</footer>\n</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
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
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (!f) {
        sim_errf(err, "%s: cannot write: %s", tmp, strerror(errno));
        goto out;
    }
    int bad = write_page(f, r, dir, res);
    if (fclose(f) != 0 || bad) {
        sim_errf(err, "%s: write error", tmp);
        remove(tmp);
        goto out;
    }
    /* the finished page replaces any old one at once: never half a report */
    if (rename(tmp, r->out) != 0) {
        sim_errf(err, "%s: cannot write: %s", r->out, strerror(errno));
        remove(tmp);
        goto out;
    }
    rc = 0;
out:
    rmdir(dir);
    return rc;
}
