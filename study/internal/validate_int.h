/*
 * validate_int.h: what the validation files of study/ share (validate.c, validate_ops.c,
 * vcsv.c): the measurement-table reader, the rows of a set, and the operator sets. Included
 * only by the .c files of study/.
 */
#ifndef STUDY_VALIDATE_INT_H
#define STUDY_VALIDATE_INT_H

#include <stdio.h>

#include "scn_doc.h"
#include "study_validate.h"

/* ---- vcsv.c: a measurement table (CSV with a header row) read one row at a time ---- */

#define VCSV_DERIVED 4

/* Fields are comma-separated; a field in double quotes may hold commas and doubled quotes ("")
 * but no line break. Every row must have as many fields as the header. */
typedef struct vcsv {
    FILE *f;
    char path[512];
    char *line, *buf; /* the raw line, and the unquoted fields it was split into */
    size_t cap, bcap;
    int lineno;   /* the line of the current row (1 = the header) */
    char **field; /* the current row's fields */
    int nfield, fcap;
    char **hdr; /* the header's names (owned) */
    int nhdr;
    /* derived columns, after the header's: names (static strings) and the current row's values,
     * set by whoever derives them (the id's layout: vlayout_derive) */
    const char *dname[VCSV_DERIVED];
    char dval[VCSV_DERIVED][32];
    int nderived;
} vcsv;

/* Opens path and reads its header. 0, or -1 with err naming the file. Close with vcsv_close
 * (also after a failure). */
int vcsv_open(vcsv *c, const char *path, sim_err *err);
/* Reads the next row: 1, 0 at the end of the file, -1 with err naming file:line (a field
 * count that differs from the header's, an unbalanced quote, an I/O error). Blank lines are
 * skipped. */
int vcsv_next(vcsv *c, sim_err *err);
/* The index of column name (a header's, else a derived column's), or -1. */
int vcsv_col(const vcsv *c, const char *name);
/* Adds a derived column name (a static string; its value "" until set in c->dval): its index.
 * Templates read it as any column; repeats and the header's listings do not see it. */
int vcsv_derive(vcsv *c, const char *name);
/* Field i of the current row, a header's or a derived column's ("" when out of range). */
const char *vcsv_get(const vcsv *c, int i);
/* The header's names as "a, b, c" into buf; returns buf. */
const char *vcsv_names(const vcsv *c, char *buf, size_t len);
void vcsv_close(vcsv *c);

/* ---- vrepeat.c: repeated measurements ---- */

/* Rows of a table equal in every column but a few (`repeats: {except: [...]}`) are one
 * measurement published twice; with `measured: {digits: N, same: [...]}` so are rows whose
 * measured values agree to N significant digits and whose `same` columns are equal, whatever
 * their other columns say (listed with the columns they differ in). */
typedef struct vrepeats {
    char *skip;       /* per header column: 1 when it may differ between repeats (owned) */
    char except[512]; /* those columns' names, ", "-separated */
    char **key;       /* per row read: its other cells joined (owned) */
    char **mkey;      /* per row read: its measured values and `same` cells (owned; NULL: none) */
    int32_t *row;     /* per row read: its index in the set's rows */
    int n, cap;
    int digits;                       /* 0: no `measured` criterion */
    int mcol[STUDY_VMAX_METRICS], nm; /* the measured columns */
    int same[64], nsame;              /* the `same` columns */
    char same_names[512];             /* their names, ", "-separated */
    const char *const *hdr;           /* the header's names (the table's, borrowed) */
    int nhdr;
} vrepeats;
/* Reads the set's `repeats` map against c's header and v's measured columns into *rp (zeroed
 * when absent). 0, or -1 with err naming the set file, line and column. */
int vrepeats_read(vrepeats *rp, const study_vset *v, const scn_node *root, const vcsv *c,
                  sim_err *err);
/* Notes c's current row as the set's row `row` (a no-op without `repeats`). */
void vrepeats_add(vrepeats *rp, const vcsv *c, int32_t row);
/* Marks each row that repeats another's measurement STUDY_V_REPEAT (counted as no
 * measurement, its reason naming the row it is compared through: of each measurement's rows
 * the first that can be expressed, else the first) and frees rp. Call before closing the
 * table (the header's names are borrowed). */
void vrepeats_mark(vrepeats *rp, study_vset *v);

/* The layout a row's id encodes (`id_layout: {tp: [...], attention_dp: [...], ep: [...]}`):
 * aiconfigurator's names end in _tp<N>[_0]_ep<M|none>[_0]_<n>. Each list names, per role (the
 * row's own, prefill's, decode's), the column of that reading; a role is stated when its tp
 * cell is not empty. */
#define VLAYOUT_ROLES 4
typedef struct vlayout {
    int nroles;                                                  /* 0: the set has no id_layout */
    int tp[VLAYOUT_ROLES], dp[VLAYOUT_ROLES], ep[VLAYOUT_ROLES]; /* columns (dp: -1 = none) */
    int cell; /* the first of the derived columns id_layout, id_tp, id_ep (-1: none) */
} vlayout;
/* Reads the set's `id_layout` map against c's header into *l (zeroed when absent) and adds the
 * derived columns templates may read: id_layout ("contradicts", "agrees", or "" when the id
 * names no layout or no role is stated), id_tp and id_ep (the id's counts; id_ep "none" for
 * epnone). 0, or -1 with err naming the set file, line and column. */
int vlayout_read(vlayout *l, const char *file, const scn_node *root, vcsv *c, sim_err *err);
/* 1 when c's current row's id (column idcol) encodes a tp (and ep, unless "none") that no
 * stated role's columns agree with, with why naming both readings; 0 when the id encodes no
 * layout, no role is stated, or one role agrees (an id cannot say which role it names). */
int vlayout_contradicts(const vlayout *l, const vcsv *c, int idcol, char *why, size_t len);
/* vlayout_contradicts, also setting c's current row's derived id_layout, id_tp and id_ep. */
int vlayout_derive(const vlayout *l, vcsv *c, int idcol, char *why, size_t len);

/* ---- validate.c: rows ---- */

/* Appends a row (count 1, nothing measured or predicted) with copies of id and group. */
study_vrow *validate_row_add(study_vset *v, const char *id, const char *group, int line);
/* Marks r as not expressible (CANNOT) or failed (FAILED) with a formatted reason. */
void validate_row_fail(study_vrow *r, study_vstatus st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends an approximation to r's list. */
void validate_row_approx(study_vrow *r, const char *text);
/* Appends a line to the set's notes. */
void validate_note(study_vset *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "set.yaml:12: key: " messages: fails with err and returns -1. */
int validate_fail(sim_err *err, const char *file, const scn_node *n, const char *key,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A scalar child of map (NULL when absent); -1 with err when it is a map or a list. */
int validate_scalar(const char *file, const scn_node *map, const char *key, const char **out,
                    sim_err *err);
/* Refuses any key of map not in allowed (NULL-terminated), naming the valid ones. */
int validate_keys(const char *file, const scn_node *map, const char *where,
                  const char *const *allowed, sim_err *err);
/* path resolved against the folder of the set file. 0, or -1 when it does not fit. */
int validate_path(const char *set_path, const char *path, char *out, size_t len);

/* ---- vexpr.c: template arithmetic ---- */

/* Evaluates text, an expression over numbers (+ - * /, parentheses, ceil, floor, min, max,
 * comparisons and && || giving 1 or 0), into *out. 0, or -1 with why quoting the text and
 * where it went wrong. */
int validate_expr(const char *text, double *out, char *why, size_t wlen);

/* ---- validate_ops.c: operator sets ---- */

/* Reads the operator part of a set (gpu, compute, network) from root and expands and predicts
 * its rows. 0, or -1 with err naming the set file, line and key, or a table's file and line. */
int validate_ops_load(study_vset *v, const scn_node *root, const char *match, sim_err *err);

#endif
