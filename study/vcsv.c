/*
 * vcsv.c: measurement tables (CSV with a header row), one row at a time, with file:line
 * messages. The row's fields point into c->buf, which the next row reuses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "validate_int.h"

/* Splits c->line into c->field (a copy in c->buf, unquoted by sim_csv_split). 0, or -1 with
 * err. */
static int split(vcsv *c, sim_err *err)
{
    size_t n = strlen(c->line);
    int w = sim_csv_width(c->line);
    const char *why;
    if (c->bcap < n + 1) {
        c->bcap = n + 1;
        c->buf = sim_xrealloc(c->buf, c->bcap);
    }
    if (w > c->fcap) {
        c->fcap = w > 64 ? w : 64;
        c->field = sim_xrealloc(c->field, (size_t)c->fcap * sizeof *c->field);
    }
    memcpy(c->buf, c->line, n + 1);
    c->nfield = sim_csv_split(c->buf, 0, c->field, c->fcap, &why);
    if (c->nfield < 0)
        return sim_errf(err, "%s:%d: %s", c->path, c->lineno, why);
    return 0;
}

/* Reads the next non-blank line into c->line: 1, 0 at the end, -1 with err. */
static int read_line(vcsv *c, sim_err *err)
{
    for (;;) {
        errno = 0;
        ssize_t n = getline(&c->line, &c->cap, c->f);
        if (n < 0)
            return ferror(c->f) ? sim_errf(err, "%s:%d: read error: %s", c->path, c->lineno + 1,
                                           strerror(errno))
                                : 0;
        c->lineno++;
        while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
            c->line[--n] = '\0';
        if (n > 0)
            return 1;
    }
}

int vcsv_open(vcsv *c, const char *path, sim_err *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    if (!(c->f = fopen(path, "r")))
        return sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
    int rc = read_line(c, err);
    if (rc == 0)
        return sim_errf(err, "%s: empty file (no header row)", path);
    if (rc < 0 || split(c, err))
        return -1;
    c->nhdr = c->nfield;
    c->hdr = sim_xcalloc((size_t)c->nhdr, sizeof *c->hdr);
    for (int i = 0; i < c->nhdr; i++)
        c->hdr[i] = sim_xstrdup(c->field[i]);
    c->nfield = 0;
    return 0;
}

int vcsv_next(vcsv *c, sim_err *err)
{
    int rc = read_line(c, err);
    if (rc <= 0)
        return rc;
    if (split(c, err))
        return -1;
    if (c->nfield != c->nhdr)
        return sim_errf(err, "%s:%d: %d fields, the header has %d", c->path, c->lineno, c->nfield,
                        c->nhdr);
    return 1;
}

int vcsv_col(const vcsv *c, const char *name)
{
    for (int i = 0; i < c->nhdr; i++)
        if (strcmp(c->hdr[i], name) == 0)
            return i;
    return -1;
}

const char *vcsv_get(const vcsv *c, int i)
{
    return i >= 0 && i < c->nfield ? c->field[i] : "";
}

const char *vcsv_names(const vcsv *c, char *buf, size_t len)
{
    size_t off = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < c->nhdr && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", c->hdr[i]);
    return buf;
}

void vcsv_close(vcsv *c)
{
    if (c->f)
        fclose(c->f);
    for (int i = 0; c->hdr && i < c->nhdr; i++)
        free(c->hdr[i]);
    free(c->hdr);
    free(c->line);
    free(c->buf);
    free(c->field);
    memset(c, 0, sizeof *c);
}
