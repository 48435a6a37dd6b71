/*
 * profile.c: the profile tables and their writer and readers.
 *
 * profiles: one row per profile (name unique; kind measured|imported; backend, model, GPU,
 * device, versions, source, the model's sizes, the tensor-parallel degree, the held-out seed and
 * overall errors, created). profile_points: every measured point with its spread and held-out
 * flag. profile_fits: per operator the chosen form, the roofline form's coefficients and hinge,
 * and the held-out errors of both forms. Points and fits go with their profile (ON DELETE
 * CASCADE). NaN errors (nothing held out) are stored as NULL.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_profile.h"

const char store_schema_profiles[] =
    "CREATE TABLE IF NOT EXISTS profiles ("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    " kind TEXT NOT NULL CHECK (kind IN ('measured', 'imported')), backend TEXT NOT NULL,"
    " model TEXT NOT NULL, gpu TEXT NOT NULL, device TEXT, versions TEXT, source TEXT,"
    " dtype TEXT, tp INTEGER NOT NULL, layers INTEGER, hidden INTEGER, heads INTEGER,"
    " kv_heads INTEGER, head_dim INTEGER, intermediate INTEGER, vocab INTEGER,"
    " max_context INTEGER, gated_mlp INTEGER, tied_embeddings INTEGER, qkv_bias INTEGER,"
    " seed INTEGER, med_ape REAL, p95_ape REAL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));"
    "CREATE TABLE IF NOT EXISTS profile_points ("
    " profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,"
    " op TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL, time_ns REAL NOT NULL,"
    " p10_ns REAL, p90_ns REAL, runs INTEGER, held_out INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS profile_points_by_profile ON profile_points(profile_id);"
    "CREATE TABLE IF NOT EXISTS profile_fits ("
    " profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,"
    " op TEXT NOT NULL, form TEXT NOT NULL, coefficients TEXT NOT NULL, knee REAL,"
    " n_train INTEGER NOT NULL, n_held INTEGER NOT NULL, med_ape REAL, p95_ape REAL,"
    " roofline_med_ape REAL, roofline_p95_ape REAL, interp_med_ape REAL, interp_p95_ape REAL,"
    " PRIMARY KEY (profile_id, op)) WITHOUT ROWID;";

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static void col_text(sqlite3_stmt *st, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

/* Runs a prepared statement to completion (no rows); finalizes it. 0, or -1 with err. */
static int step_done(store *s, sqlite3_stmt *st, sim_err *err, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_fail(s, err, what);
    return 0;
}

static int insert_meta(store *s, const cal_profile *p, int64_t *id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(
        s,
        "INSERT INTO profiles (name, kind, backend, model, gpu, device, versions, source, dtype,"
        " tp, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab, max_context,"
        " gated_mlp, tied_embeddings, qkv_bias, seed, med_ape, p95_ape, created)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
        " COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ','now')))",
        err);
    if (!st)
        return -1;
    const char *texts[] = {p->name,   p->kind,     p->backend, p->model, p->gpu,
                           p->device, p->versions, p->source,  p->dtype};
    for (int i = 0; i < 9; i++)
        sqlite3_bind_text(st, i + 1, texts[i], -1, SQLITE_STATIC);
    const eng_model *d = &p->dims;
    int ints[] = {p->tp,          d->layers,    d->hidden,          d->heads,
                  d->kv_heads,    d->head_dim,  d->intermediate,    d->vocab,
                  d->max_context, d->gated_mlp, d->tied_embeddings, d->qkv_bias};
    for (int i = 0; i < 12; i++)
        sqlite3_bind_int(st, 10 + i, ints[i]);
    sqlite3_bind_int64(st, 22, (sqlite3_int64)p->seed);
    bind_real(st, 23, p->med_ape);
    bind_real(st, 24, p->p95_ape);
    sqlite3_bind_text(st, 25, p->created, -1, SQLITE_STATIC); /* "": now */
    if (step_done(s, st, err, "inserting the profile"))
        return -1;
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

/* Steps a reset and bound INSERT statement once; finalizes it when that fails. 0, or -1 with
 * err naming what failed. */
static int insert_row(store *s, sqlite3_stmt *st, const char *what, sim_err *err)
{
    if (sqlite3_step(st) == SQLITE_DONE)
        return 0;
    sqlite3_finalize(st);
    return store_fail(s, err, what);
}

/* A profile_points row after its profile's id and the operator's name: written by bind_point,
 * read by read_point_row. */
#define POINT_FIELD(kind, member) STORE_FIELD(kind, cal_point, member)
static const store_field point_fields[] = {
    POINT_FIELD(STORE_F_REAL, x),       POINT_FIELD(STORE_F_REAL, y),
    POINT_FIELD(STORE_F_REAL, t_ns),    POINT_FIELD(STORE_F_REAL, p10_ns),
    POINT_FIELD(STORE_F_REAL, p90_ns),  POINT_FIELD(STORE_F_INT, runs),
    POINT_FIELD(STORE_F_INT, held_out),
};
#define N_POINT_FIELDS ((int)(sizeof point_fields / sizeof *point_fields))

static void bind_point(sqlite3_stmt *st, int64_t id, const cal_point *pt)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, cal_profile_op_name(pt->op), -1, SQLITE_STATIC);
    store_bind_fields(st, 3, point_fields, N_POINT_FIELDS, pt);
}

static int insert_points(store *s, const cal_profile *p, int64_t id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s,
                                     "INSERT INTO profile_points (profile_id, op, x, y, time_ns,"
                                     " p10_ns, p90_ns, runs, held_out) VALUES (?,?,?,?,?,?,?,?,?)",
                                     err);
    if (!st)
        return -1;
    for (int i = 0; i < p->npts; i++) {
        bind_point(st, id, &p->pts[i]);
        if (insert_row(s, st, "inserting profile points", err))
            return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

/* "c0 c1 ...": a fit's coefficients, each to 17 significant digits. */
static void format_coef(const cal_fit *f, char *coef, size_t cap)
{
    size_t used = 0;
    coef[0] = '\0';
    for (int k = 0; k < f->ncoef && k < CAL_MAX_COEF; k++)
        used += (size_t)snprintf(coef + used, cap - used, "%s%.17g", k ? " " : "", f->coef[k]);
}

static void bind_fit(sqlite3_stmt *st, int64_t id, int op, const cal_fit *f)
{
    char coef[CAL_MAX_COEF * 26 + 1];
    format_coef(f, coef, sizeof coef);
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, cal_profile_op_name(op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cal_form_name(f->form), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, coef, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 5, f->knee);
    sqlite3_bind_int(st, 6, f->n_train);
    sqlite3_bind_int(st, 7, f->n_held);
    bind_real(st, 8, f->med_ape[f->form]);
    bind_real(st, 9, f->p95_ape[f->form]);
    bind_real(st, 10, f->med_ape[CAL_FORM_ROOFLINE]);
    bind_real(st, 11, f->p95_ape[CAL_FORM_ROOFLINE]);
    bind_real(st, 12, f->med_ape[CAL_FORM_INTERP]);
    bind_real(st, 13, f->p95_ape[CAL_FORM_INTERP]);
}

static int insert_fits(store *s, const cal_profile *p, int64_t id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(
        s,
        "INSERT INTO profile_fits (profile_id, op, form, coefficients, knee, n_train, n_held,"
        " med_ape, p95_ape, roofline_med_ape, roofline_p95_ape, interp_med_ape, interp_p95_ape)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    if (!st)
        return -1;
    for (int op = 0; op < CAL_PROFILE_OPS; op++) {
        if (!p->has_fit[op])
            continue;
        bind_fit(st, id, op, &p->fits[op]);
        if (insert_row(s, st, "inserting profile fits", err))
            return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

int store_profile_exists(store *s, const char *name, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT 1 FROM profiles WHERE name = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return store_fail(s, err, "looking up a profile");
}

int store_profile_save(store *s, const cal_profile *p, int replace, sim_err *err)
{
    int64_t id;
    if (store_begin(s, err))
        return -1;
    int exists = store_profile_exists(s, p->name, err);
    if (exists < 0)
        goto fail;
    if (exists && !replace) {
        sim_errf(err,
                 "%s: a profile named '%s' already exists (choose another --out, or pass "
                 "--replace)",
                 s->path, p->name);
        goto fail;
    }
    if (exists) {
        sqlite3_stmt *st = store_prepare(s, "DELETE FROM profiles WHERE name = ?", err);
        if (!st)
            goto fail;
        sqlite3_bind_text(st, 1, p->name, -1, SQLITE_STATIC);
        if (step_done(s, st, err, "replacing the profile"))
            goto fail;
    }
    if (insert_meta(s, p, &id, err) || insert_points(s, p, id, err) || insert_fits(s, p, id, err) ||
        store_commit(s, err))
        goto fail;
    return 0;
fail:
    store_rollback(s);
    return -1;
}

#define META_COLS                                                                                  \
    "id, name, kind, backend, model, gpu, device, versions, source, dtype, tp, layers, hidden,"    \
    " heads, kv_heads, head_dim, intermediate, vocab, max_context, gated_mlp, tied_embeddings,"    \
    " qkv_bias, seed, med_ape, p95_ape, created,"                                                  \
    " (SELECT count(*) FROM profile_points WHERE profile_id = profiles.id)"

/* Fills p's metadata from a row of META_COLS; returns the profile id. */
static int64_t read_meta(sqlite3_stmt *st, cal_profile *p)
{
    col_text(st, 1, p->name, sizeof p->name);
    col_text(st, 2, p->kind, sizeof p->kind);
    col_text(st, 3, p->backend, sizeof p->backend);
    col_text(st, 4, p->model, sizeof p->model);
    col_text(st, 5, p->gpu, sizeof p->gpu);
    col_text(st, 6, p->device, sizeof p->device);
    col_text(st, 7, p->versions, sizeof p->versions);
    col_text(st, 8, p->source, sizeof p->source);
    col_text(st, 9, p->dtype, sizeof p->dtype);
    p->tp = sqlite3_column_int(st, 10);
    eng_model *d = &p->dims;
    snprintf(d->name, sizeof d->name, "%s", p->model);
    int32_t *f[] = {&d->layers,    &d->hidden,          &d->heads,   &d->kv_heads,
                    &d->head_dim,  &d->intermediate,    &d->vocab,   &d->max_context,
                    &d->gated_mlp, &d->tied_embeddings, &d->qkv_bias};
    for (int i = 0; i < 11; i++)
        *f[i] = sqlite3_column_int(st, 11 + i);
    p->seed = (uint64_t)sqlite3_column_int64(st, 22);
    p->med_ape = col_real(st, 23);
    p->p95_ape = col_real(st, 24);
    col_text(st, 25, p->created, sizeof p->created);
    p->npts = sqlite3_column_int(st, 26);
    return sqlite3_column_int64(st, 0);
}

/* A profile_fits row (columns 2-9 of read_fits' query) as operator op's fit of form. */
static void column_fit(sqlite3_stmt *st, int op, int form, cal_fit *f)
{
    memset(f, 0, sizeof *f);
    f->op = op;
    f->form = (cal_form)form;
    const char *c = (const char *)sqlite3_column_text(st, 2);
    char *end;
    while (c && f->ncoef < CAL_MAX_COEF) {
        double v = strtod(c, &end);
        if (end == c)
            break;
        f->coef[f->ncoef++] = v;
        c = end;
    }
    f->knee = sqlite3_column_double(st, 3);
    f->n_train = sqlite3_column_int(st, 4);
    f->n_held = sqlite3_column_int(st, 5);
    f->med_ape[CAL_FORM_ROOFLINE] = col_real(st, 6);
    f->p95_ape[CAL_FORM_ROOFLINE] = col_real(st, 7);
    f->med_ape[CAL_FORM_INTERP] = col_real(st, 8);
    f->p95_ape[CAL_FORM_INTERP] = col_real(st, 9);
}

/* What a profile's row readers need: the store (for its path), the profile, the error. */
typedef struct {
    store *s;
    cal_profile *p;
    sim_err *err;
} profile_read;

/* A profile_fits row into the profile's fits; -1 with err for an unknown operator or form. */
static int read_fit_row(void *ctx, sqlite3_stmt *st)
{
    profile_read *r = ctx;
    int op = cal_profile_op_parse((const char *)sqlite3_column_text(st, 0));
    int form = cal_form_parse((const char *)sqlite3_column_text(st, 1));
    if (op < 0 || form < 0)
        return sim_errf(r->err, "%s: profile %s: unknown operator or form in profile_fits",
                        r->s->path, r->p->name);
    column_fit(st, op, form, &r->p->fits[op]);
    r->p->has_fit[op] = 1;
    return 0;
}

static int read_fits(store *s, int64_t id, cal_profile *p, sim_err *err)
{
    sqlite3_stmt *st =
        store_prepare_id(s,
                         "SELECT op, form, coefficients, knee, n_train, n_held, roofline_med_ape,"
                         " roofline_p95_ape, interp_med_ape, interp_p95_ape FROM profile_fits"
                         " WHERE profile_id = ?",
                         id, err);
    profile_read r = {s, p, err};
    return store_each_row(s, st, read_fit_row, &r, "reading profile fits", err);
}

/* A profile_points row added to the profile; -1 with err for an unknown operator. */
static int read_point_row(void *ctx, sqlite3_stmt *st)
{
    profile_read *r = ctx;
    cal_point pt = {0};
    pt.op = cal_profile_op_parse((const char *)sqlite3_column_text(st, 0));
    if (pt.op < 0)
        return sim_errf(r->err, "%s: profile %s: unknown operator in profile_points", r->s->path,
                        r->p->name);
    store_read_fields(st, 1, point_fields, N_POINT_FIELDS, &pt);
    cal_profile_add_point(r->p, &pt);
    return 0;
}

static int read_points(store *s, int64_t id, cal_profile *p, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(s,
                                        "SELECT op, x, y, time_ns, p10_ns, p90_ns, runs, held_out"
                                        " FROM profile_points WHERE profile_id = ? ORDER BY rowid",
                                        id, err);
    if (!st)
        return -1;
    p->npts = 0;
    profile_read r = {s, p, err};
    return store_each_row(s, st, read_point_row, &r, "reading profile points", err);
}

/* "a, b, c": the names of the stored profiles, for a not-found message. */
static void known_names(store *s, char *buf, size_t len)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT name FROM profiles ORDER BY name", NULL);
    size_t used = 0;
    buf[0] = '\0';
    while (st && sqlite3_step(st) == SQLITE_ROW && used + 1 < len) {
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                         (const char *)sqlite3_column_text(st, 0));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    sqlite3_finalize(st);
}

cal_profile *store_profile_load(store *s, const char *name, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT " META_COLS " FROM profiles WHERE name = ?", err);
    if (!st)
        return NULL;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) {
            store_fail(s, err, "reading profiles");
            return NULL;
        }
        char names[512];
        known_names(s, names, sizeof names);
        sim_errf(err, "%s: no profile named '%s' (profiles there: %s)", s->path, name,
                 names[0] ? names : "none; make one with llmsim calibrate or profile import-vidur");
        return NULL;
    }
    cal_profile *p = cal_profile_new(name);
    int64_t id = read_meta(st, p);
    sqlite3_finalize(st);
    if (read_fits(s, id, p, err) || read_points(s, id, p, err)) {
        cal_profile_free(p);
        return NULL;
    }
    return p;
}

/* store_profile_list's store, error and caller's function and argument. */
typedef struct {
    store *s;
    sim_err *err;
    void (*fn)(void *arg, const cal_profile *meta);
    void *arg;
} profile_visit;

/* A profile's row and its fits (not its points: npts is their count) shown to the caller. */
static int visit_profile(void *ctx, sqlite3_stmt *st)
{
    profile_visit *v = ctx;
    cal_profile *p = cal_profile_new("");
    int64_t id = read_meta(st, p);
    int npts = p->npts;
    int rc = read_fits(v->s, id, p, v->err);
    p->npts = npts;
    if (rc == 0)
        v->fn(v->arg, p);
    cal_profile_free(p);
    return rc;
}

int store_profile_list(store *s, void (*fn)(void *arg, const cal_profile *meta), void *arg,
                       sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT " META_COLS " FROM profiles ORDER BY name", err);
    profile_visit v = {s, err, fn, arg};
    return store_each_row(s, st, visit_profile, &v, "listing profiles", err);
}

static int read_run_info(store *s, int64_t run_id, store_replay_run *info, sim_err *err)
{
    sqlite3_stmt *st = store_prepare_id(
        s,
        "SELECT profile, model, dtype, tensor_parallel,"
        " (SELECT count(*) FROM iterations WHERE run_id = runs.id) FROM runs WHERE id = ?",
        run_id, err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        col_text(st, 0, info->profile, sizeof info->profile);
        col_text(st, 1, info->model, sizeof info->model);
        col_text(st, 2, info->dtype, sizeof info->dtype);
        info->tensor_parallel = sqlite3_column_int(st, 3);
        info->iterations = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return sim_errf(err, "%s: no run %lld", s->path, (long long)run_id);
    if (rc != SQLITE_ROW)
        return store_fail(s, err, "reading the run");
    if (info->iterations == 0)
        return sim_errf(err,
                        "%s: run %lld has no stored iterations (run it with --store iterations "
                        "or requests)",
                        s->path, (long long)run_id);
    return 0;
}

/* An iteration row's shape (columns 0-8 of the replay query). */
static void column_shape(sqlite3_stmt *st, eng_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    sh->num_seqs = sqlite3_column_int(st, 0);
    sh->prefill_tokens = sqlite3_column_int64(st, 1);
    sh->decode_seqs = sqlite3_column_int(st, 2);
    store_col_shape(st, 3, sh);
}

/* Where store_profile_replay_shapes puts the shapes (and GPU times, when wanted) it reads. */
typedef struct {
    store *s;
    int64_t run_id;
    eng_shape *shapes;
    int64_t *gpu_ns; /* NULL: not wanted */
    int *n;
    sim_err *err;
} replay_read;

/* A replay row's shape (and GPU time); -1 with err when the row lacks the shape columns. */
static int read_replay_row(void *ctx, sqlite3_stmt *st)
{
    replay_read *r = ctx;
    if (sqlite3_column_type(st, 3) == SQLITE_NULL || sqlite3_column_type(st, 7) == SQLITE_NULL)
        return sim_errf(r->err, "%s: run %lld's iterations lack the shape columns", r->s->path,
                        (long long)r->run_id);
    column_shape(st, &r->shapes[*r->n]);
    if (r->gpu_ns)
        r->gpu_ns[*r->n] = sqlite3_column_int64(st, 9);
    (*r->n)++;
    return 0;
}

int store_profile_replay_shapes(store *s, int64_t run_id, int max, store_replay_run *info,
                                eng_shape *shapes, int64_t *gpu_ns, int *n, sim_err *err)
{
    memset(info, 0, sizeof *info);
    *n = 0;
    if (read_run_info(s, run_id, info, err))
        return -1;
    /* every stride-th iteration, stride = floor(iterations / max): exactly max of them when the
     * run has that many (a rounded-up stride could give fewer, as many as the run's length
     * allowed, so the count depended on it) */
    int64_t stride = info->iterations / max;
    sqlite3_stmt *st = store_prepare_id(
        s,
        "SELECT num_seqs, prefill_tokens, decode_tokens, prefill_seqs, prefill_pairs,"
        " prefill_kv, prefill_q2, decode_ctx, emit_seqs, gpu_ns FROM ("
        "  SELECT *, row_number() OVER (ORDER BY replica, iter) - 1 AS k FROM iterations"
        "  WHERE run_id = ?) WHERE k % ? = 0 ORDER BY k LIMIT ?",
        run_id, err);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 2, stride > 0 ? stride : 1);
    sqlite3_bind_int(st, 3, max);
    replay_read r = {s, run_id, shapes, gpu_ns, n, err};
    return store_each_row(s, st, read_replay_row, &r, "reading the run's iterations", err);
}
