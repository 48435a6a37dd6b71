/*
 * vrepeat.c: repeated measurements in a serving set's table (`repeats`). A measurement
 * published twice (the same run in two source files) is compared once: rows equal in every
 * column but `except`, and, with `measured: {digits, same}`, rows whose measured values agree
 * to that many significant digits and whose `same` columns are equal, whatever else they say.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

/* The column of name t in c, or -1 with err naming the set's line. */
static int column_of(const char *file, const scn_node *t, const char *where, const vcsv *c,
                     sim_err *err)
{
    int col = scn_doc_type(t) == SCN_DOC_SCALAR ? vcsv_col(c, scn_doc_text(t)) : -1;
    if (col < 0 || col >= c->nhdr) {
        char names[2048];
        validate_fail(err, file, t, where, "no column '%s' (columns: %s)",
                      scn_doc_type(t) == SCN_DOC_SCALAR ? scn_doc_text(t) : "",
                      vcsv_names(c, names, sizeof names));
        return -1;
    }
    return col;
}

/* `measured: {digits: N, same: [columns]}`: 0, or -1 with err. */
static int read_measured(vrepeats *rp, const study_vset *v, const scn_node *m, const vcsv *c,
                         sim_err *err)
{
    static const char *const keys[] = {"digits", "same", NULL};
    const char *digits = NULL;
    const scn_node *same = scn_doc_type(m) == SCN_DOC_MAP ? scn_doc_get(m, "same") : NULL;
    if (scn_doc_type(m) != SCN_DOC_MAP)
        return validate_fail(err, v->path, m, "repeats.measured",
                             "expected {digits: N, same: [columns]}");
    if (validate_keys(v->path, m, "repeats.measured", keys, err) ||
        validate_scalar(v->path, m, "digits", &digits, err))
        return -1;
    char *end = NULL;
    long d = digits ? strtol(digits, &end, 10) : 0;
    if (!digits || *end || d < 6 || d > 17)
        return validate_fail(err, v->path, m, "repeats.measured.digits",
                             "expected the significant digits measured values agree to, 6 to 17");
    if (!same || scn_doc_type(same) != SCN_DOC_SEQ || scn_doc_count(same) > 64)
        return validate_fail(err, v->path, m, "repeats.measured.same",
                             "expected a list of up to 64 columns the rows must agree in");
    rp->digits = (int)d;
    for (const scn_node *t = scn_doc_first(same); t; t = scn_doc_next(t)) {
        int col = column_of(v->path, t, "repeats.measured.same", c, err);
        if (col < 0)
            return -1;
        rp->same[rp->nsame++] = col;
        size_t off = strlen(rp->same_names);
        snprintf(rp->same_names + off, sizeof rp->same_names - off, "%s%s", off ? ", " : "",
                 scn_doc_text(t));
    }
    for (int k = 0; k < v->nmetrics; k++)
        rp->mcol[rp->nm++] = vcsv_col(c, v->metric[k].column);
    return 0;
}

int vrepeats_read(vrepeats *rp, const study_vset *v, const scn_node *root, const vcsv *c,
                  sim_err *err)
{
    memset(rp, 0, sizeof *rp);
    const scn_node *m = scn_doc_get(root, "repeats");
    if (!m)
        return 0;
    const scn_node *ex = scn_doc_type(m) == SCN_DOC_MAP ? scn_doc_get(m, "except") : NULL,
                   *meas = ex ? scn_doc_get(m, "measured") : NULL;
    if (!ex || scn_doc_type(ex) != SCN_DOC_SEQ || scn_doc_count(m) != 1 + (meas != NULL))
        return validate_fail(err, v->path, m, "repeats",
                             "expected {except: [columns]}: the columns repeats may differ in "
                             "(and optionally measured: {digits: N, same: [columns]})");
    rp->skip = sim_xcalloc((size_t)c->nhdr + 1, 1);
    rp->hdr = (const char *const *)c->hdr;
    rp->nhdr = c->nhdr;
    for (const scn_node *t = scn_doc_first(ex); t; t = scn_doc_next(t)) {
        int col = column_of(v->path, t, "repeats.except", c, err);
        if (col < 0)
            goto fail;
        rp->skip[col] = 1;
        size_t off = strlen(rp->except);
        snprintf(rp->except + off, sizeof rp->except - off, "%s%s", off ? ", " : "",
                 scn_doc_text(t));
    }
    if (meas && read_measured(rp, v, meas, c, err))
        goto fail;
    return 0;
fail:
    free(rp->skip);
    memset(rp, 0, sizeof *rp);
    return -1;
}

/* The row's measured values to rp->digits and its `same` cells, joined; NULL when a measured
 * value is missing or not a number. */
static char *measured_key(const vrepeats *rp, const vcsv *c)
{
    char buf[2048];
    size_t off = 0;
    for (int k = 0; k < rp->nm; k++) {
        char *end;
        const char *cell = vcsv_get(c, rp->mcol[k]);
        double x = strtod(cell, &end);
        if (!*cell || *end || !isfinite(x))
            return NULL;
        off += (size_t)snprintf(buf + off, off < sizeof buf ? sizeof buf - off : 0, "%.*g\x1f",
                                rp->digits, x);
    }
    for (int k = 0; k < rp->nsame; k++)
        off += (size_t)snprintf(buf + off, off < sizeof buf ? sizeof buf - off : 0, "%s\x1f",
                                vcsv_get(c, rp->same[k]));
    return off < sizeof buf ? sim_xstrdup(buf) : NULL;
}

void vrepeats_add(vrepeats *rp, const vcsv *c, int32_t row)
{
    if (!rp->skip)
        return;
    size_t len = 1;
    for (int i = 0; i < c->nhdr; i++)
        len += rp->skip[i] ? 0 : strlen(vcsv_get(c, i)) + 1;
    char *k = sim_xmalloc(len), *p = k;
    for (int i = 0; i < c->nhdr; i++) {
        if (rp->skip[i])
            continue;
        size_t l = strlen(vcsv_get(c, i));
        memcpy(p, vcsv_get(c, i), l);
        p += l;
        *p++ = '\x1f'; /* the unit separator: no cell of a table holds it */
    }
    *p = '\0';
    if (rp->n == rp->cap) {
        rp->cap = rp->cap ? 2 * rp->cap : 256;
        rp->key = sim_xrealloc(rp->key, (size_t)rp->cap * sizeof *rp->key);
        rp->mkey = sim_xrealloc(rp->mkey, (size_t)rp->cap * sizeof *rp->mkey);
        rp->row = sim_xrealloc(rp->row, (size_t)rp->cap * sizeof *rp->row);
    }
    rp->key[rp->n] = k;
    rp->mkey[rp->n] = rp->digits ? measured_key(rp, c) : NULL;
    rp->row[rp->n++] = row;
}

typedef struct vrep_item {
    const char *key;
    int32_t i; /* the entry in rp's arrays (rows are added in table order) */
} vrep_item;

static int by_key_then_entry(const void *a, const void *b)
{
    const vrep_item *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int32_t find(int32_t *parent, int32_t i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* Joins the entries whose keys (NULL: none) are equal into one set of parent. */
static void join_equal(char **keys, int32_t n, int32_t *parent, vrep_item *it)
{
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (keys[i])
            it[m++] = (vrep_item){keys[i], i};
    qsort(it, (size_t)m, sizeof *it, by_key_then_entry);
    for (int32_t i = 1; i < m; i++)
        if (strcmp(it[i].key, it[i - 1].key) == 0) {
            int32_t a = find(parent, it[i - 1].i), b = find(parent, it[i].i);
            parent[a > b ? a : b] = a < b ? a : b; /* the earlier entry roots the set */
        }
}

/* The names of the columns (but `except`) whose cells differ between keys a and b, into out. */
static void differing(const vrepeats *rp, const char *a, const char *b, char *out, size_t len)
{
    size_t off = 0;
    out[0] = '\0';
    for (int col = 0; col < rp->nhdr && *a && *b; col++) {
        if (rp->skip[col])
            continue;
        size_t la = strcspn(a, "\x1f"), lb = strcspn(b, "\x1f");
        if ((la != lb || memcmp(a, b, la) != 0) && off < len)
            off += (size_t)snprintf(out + off, len - off, "%s%s", off ? ", " : "", rp->hdr[col]);
        a += la + (a[la] != '\0');
        b += lb + (b[lb] != '\0');
    }
}

void vrepeats_mark(vrepeats *rp, study_vset *v)
{
    int32_t *parent = sim_xmalloc(((size_t)rp->n + 1) * sizeof *parent),
            *via = sim_xmalloc(((size_t)rp->n + 1) * sizeof *via);
    vrep_item *it = sim_xmalloc(((size_t)rp->n + 1) * sizeof *it);
    for (int32_t i = 0; i < rp->n; i++)
        parent[i] = i, via[i] = -1;
    join_equal(rp->key, rp->n, parent, it);
    join_equal(rp->mkey, rp->n, parent, it);
    /* each measurement is compared through its first row that can be expressed, else its
     * first */
    for (int32_t i = 0; i < rp->n; i++) {
        int32_t root = find(parent, i);
        if (via[root] < 0 || (v->rows[rp->row[via[root]]].status != STUDY_V_OK &&
                              v->rows[rp->row[i]].status == STUDY_V_OK))
            via[root] = i;
    }
    int32_t same = 0, measured = 0;
    for (int32_t i = 0; i < rp->n; i++) {
        int32_t first = via[find(parent, i)];
        if (first == i)
            continue;
        const study_vrow *o = &v->rows[rp->row[first]];
        study_vrow *r = &v->rows[rp->row[i]];
        if (strcmp(rp->key[i], rp->key[first]) == 0) {
            validate_row_fail(r, STUDY_V_REPEAT, "%s (line %d)", o->id, o->line);
            same++;
        } else {
            char cols[1024];
            differing(rp, rp->key[i], rp->key[first], cols, sizeof cols);
            validate_row_fail(r, STUDY_V_REPEAT,
                              "%s (line %d): the same measured values to %d digits; the columns "
                              "differ in %s",
                              o->id, o->line, rp->digits, cols);
            measured++;
        }
        r->count = 0;
    }
    if (same > 0)
        validate_note(v,
                      "%d rows repeat an earlier row's measurement (every column equal but %s): "
                      "each measurement is compared once; the repeats are listed with the row "
                      "they repeat",
                      same, rp->except);
    if (measured > 0)
        validate_note(v,
                      "%d rows repeat another row's measured values to %d significant digits with "
                      "the same %s, their other columns differing: each such measurement is "
                      "compared once, through its first row that can be expressed; they are "
                      "listed with it and the columns they differ in",
                      measured, rp->digits, rp->same_names);
    for (int32_t i = 0; i < rp->n; i++) {
        free(rp->key[i]);
        free(rp->mkey[i]);
    }
    free(rp->key);
    free(rp->mkey);
    free(rp->row);
    free(rp->skip);
    free(it);
    free(parent);
    free(via);
    memset(rp, 0, sizeof *rp);
}
