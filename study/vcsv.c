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
    for (int k = 0; k < c->nderived; k++)
        if (strcmp(c->dname[k], name) == 0)
            return c->nhdr + k;
    return -1;
}

int vcsv_derive(vcsv *c, const char *name)
{
    SIM_CHECK(NULL, c->nderived < VCSV_DERIVED);
    c->dname[c->nderived] = name;
    c->dval[c->nderived][0] = '\0';
    return c->nhdr + c->nderived++;
}

const char *vcsv_get(const vcsv *c, int i)
{
    if (i >= c->nhdr && i < c->nhdr + c->nderived)
        return c->dval[i - c->nhdr];
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

/* ---- the layout a row's id encodes ---- */

/* The columns of list `key` of map m into col[] (-1 for the roles it does not give): 0, or -1
 * with err. */
static int layout_list(const char *file, const scn_node *m, const char *key, const vcsv *c,
                       int *col, int *n, sim_err *err)
{
    const scn_node *seq = scn_doc_get(m, key);
    char where[64];
    snprintf(where, sizeof where, "id_layout.%s", key);
    for (int i = 0; i < VLAYOUT_ROLES; i++)
        col[i] = -1;
    *n = 0;
    if (!seq)
        return 0;
    if (scn_doc_type(seq) != SCN_DOC_SEQ || scn_doc_count(seq) > VLAYOUT_ROLES)
        return validate_fail(err, file, seq, where,
                             "expected a list of up to %d columns, one a role", VLAYOUT_ROLES);
    for (const scn_node *t = scn_doc_first(seq); t; t = scn_doc_next(t)) {
        col[*n] = scn_doc_type(t) == SCN_DOC_SCALAR ? vcsv_col(c, scn_doc_text(t)) : -1;
        if (col[(*n)++] < 0) {
            char names[2048];
            return validate_fail(err, file, t, where, "no column '%s' (columns: %s)",
                                 scn_doc_type(t) == SCN_DOC_SCALAR ? scn_doc_text(t) : "",
                                 vcsv_names(c, names, sizeof names));
        }
    }
    return 0;
}

int vlayout_read(vlayout *l, const char *file, const scn_node *root, vcsv *c, sim_err *err)
{
    static const char *const keys[] = {"tp", "attention_dp", "ep", NULL};
    memset(l, 0, sizeof *l);
    l->cell = -1;
    const scn_node *m = scn_doc_get(root, "id_layout");
    if (!m)
        return 0;
    int ntp, ndp, nep;
    if (scn_doc_type(m) != SCN_DOC_MAP)
        return validate_fail(err, file, m, "id_layout",
                             "expected {tp: [columns], attention_dp: [columns], ep: [columns]}");
    if (validate_keys(file, m, "id_layout", keys, err) ||
        layout_list(file, m, "tp", c, l->tp, &ntp, err) ||
        layout_list(file, m, "attention_dp", c, l->dp, &ndp, err) ||
        layout_list(file, m, "ep", c, l->ep, &nep, err))
        return -1;
    if (ntp == 0 || nep != ntp || (ndp && ndp != ntp))
        return validate_fail(err, file, m, "id_layout",
                             "tp and ep (and attention_dp) need one column each per role, as many");
    l->nroles = ntp;
    l->cell = vcsv_derive(c, "id_layout");
    vcsv_derive(c, "id_tp");
    vcsv_derive(c, "id_ep");
    return 0;
}

/* Reads a count at s ("<digits>", then "_0" allowed) into *out: the text after it, or NULL. */
static const char *id_count(const char *s, long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return NULL;
    *out = strtol(s, &end, 10);
    return strncmp(end, "_0", 2) == 0 && (end[2] == '_' || !end[2]) ? end + 2 : end;
}

/* The layout id encodes, _tp<N>[_0]_ep<M|none>[_0] followed by '_' or the end: 1 with *tp and
 * *ep (-1 for "none"), or 0. */
static int id_layout(const char *id, long *tp, long *ep)
{
    for (const char *p = strstr(id, "_tp"); p; p = strstr(p + 1, "_tp")) {
        const char *q = id_count(p + 3, tp);
        if (!q || strncmp(q, "_ep", 3) != 0)
            continue;
        q += 3;
        if (strncmp(q, "none", 4) == 0) {
            *ep = -1;
            q += 4;
        } else if (!(q = id_count(q, ep))) {
            continue;
        }
        if (*q == '_' || !*q)
            return 1;
    }
    return 0;
}

/* A cell as a count: 1 with *out, 0 when empty or not a count. */
static int cell_count(const vcsv *c, int col, long *out)
{
    const char *s = vcsv_get(c, col);
    char *end;
    if (!*s)
        return 0;
    *out = strtol(s, &end, 10);
    return !*end;
}

int vlayout_contradicts(const vlayout *l, const vcsv *c, int idcol, char *why, size_t len)
{
    long tp, ep, v;
    int stated = 0;
    size_t off = 0;
    if (!l->nroles || !id_layout(vcsv_get(c, idcol), &tp, &ep))
        return 0;
    off += (size_t)snprintf(why, len, "its id says tp%ld ep", tp);
    off += (size_t)snprintf(why + off, len - off, ep < 0 ? "none" : "%ld", ep);
    for (int k = 0; k < l->nroles && off < len; k++) {
        long ctp, cep = -1;
        if (!cell_count(c, l->tp[k], &ctp))
            continue;
        int has_ep = cell_count(c, l->ep[k], &cep);
        if (ctp == tp && (ep < 0 || !has_ep || cep == ep))
            return 0;
        off += (size_t)snprintf(why + off, len - off, "%s %s %ld", stated++ ? ";" : ", its columns",
                                c->hdr[l->tp[k]], ctp);
        if (l->dp[k] >= 0 && cell_count(c, l->dp[k], &v) && off < len)
            off += (size_t)snprintf(why + off, len - off, " x %s %ld", c->hdr[l->dp[k]], v);
        if (has_ep && off < len)
            off += (size_t)snprintf(why + off, len - off, ", %s %ld", c->hdr[l->ep[k]], cep);
    }
    if (off < len)
        snprintf(why + off, len - off, ": the layout is contradictory");
    return stated > 0;
}

int vlayout_derive(const vlayout *l, vcsv *c, int idcol, char *why, size_t len)
{
    long tp, ep;
    int contra = vlayout_contradicts(l, c, idcol, why, len);
    if (l->cell < 0)
        return contra;
    char *st = c->dval[l->cell - c->nhdr], *t = c->dval[l->cell + 1 - c->nhdr],
         *e = c->dval[l->cell + 2 - c->nhdr];
    st[0] = t[0] = e[0] = '\0';
    if (!id_layout(vcsv_get(c, idcol), &tp, &ep))
        return contra;
    snprintf(t, sizeof c->dval[0], "%ld", tp);
    if (ep < 0)
        snprintf(e, sizeof c->dval[0], "none");
    else
        snprintf(e, sizeof c->dval[0], "%ld", ep);
    long ctp;
    for (int k = 0; k < l->nroles && !contra; k++)
        if (cell_count(c, l->tp[k], &ctp))
            snprintf(st, sizeof c->dval[0], "agrees");
    if (contra)
        snprintf(st, sizeof c->dval[0], "contradicts");
    return contra;
}
