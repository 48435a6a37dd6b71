/*
 * merge.c: one llmsim database merged into another (store_merge.h says what counts as already
 * there).
 *
 * IN is attached as `src` and read with SQL only. Parent tables (runs, sweeps, profiles,
 * capacity_searches: those other tables' foreign keys reference) are mapped first: for each,
 * a temporary table m_<parent>(old, new, copy) gives every IN id its OUT id, copy = 1 for the
 * rows to insert, whose new id is the old one plus OUT's largest id (so new ids never collide).
 * Then every other table is copied through its foreign keys: the parent it belongs to decides
 * which rows go (a run's requests go when the run is copied; a sweep's points and parameters
 * go when OUT lacks them: INSERT OR IGNORE on their primary key), and every foreign key column
 * is rewritten through its parent's map. Columns are matched by name, so an older IN (a
 * version-1 runs table without offered_rate) merges too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"
#include "store_merge.h"

/* The parents, in the order they are mapped; a table belongs to its first parent in this
 * order among those it references (a capacity probe to its search, not to its run). */
enum { P_SEARCH = 0, P_PROFILE, P_SWEEP, P_VALIDATION, P_RUN, P_COUNT };
static const char *const parents[P_COUNT] = {"capacity_searches", "profiles", "sweeps",
                                             "validations", "runs"};

typedef struct names {
    char **v;
    int n;
} names;

static void names_free(names *n)
{
    for (int i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
    n->v = NULL;
    n->n = 0;
}

static int has(const names *n, const char *x)
{
    return sim_name_index(x, (const char *const *)n->v, n->n) >= 0;
}

/* The first column of every row of sql (with ?1 and ?2 bound to a and b when not NULL). */
static int column_of(store *s, const char *sql, const char *a, const char *b, names *out,
                     sim_err *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st = store_prepare(s, sql, err);
    if (!st)
        return -1;
    if (a)
        sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    if (b)
        sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        out->v = sim_xrealloc(out->v, sizeof *out->v * (size_t)(out->n + 1));
        const unsigned char *t = sqlite3_column_text(st, 0);
        out->v[out->n++] = sim_xstrdup(t ? (const char *)t : "");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        names_free(out);
        return store_fail(s, err, "reading the schema");
    }
    return 0;
}

static int columns(store *s, const char *schema, const char *table, names *out, sim_err *err)
{
    return column_of(s, "SELECT name FROM pragma_table_info(?1, ?2) ORDER BY cid", table, schema,
                     out, err);
}

/* The columns of table in both main and src, without `skip` (may be NULL). */
static int common(store *s, const char *table, const char *skip, names *out, sim_err *err)
{
    names m, r;
    if (columns(s, "main", table, &m, err))
        return -1;
    if (columns(s, "src", table, &r, err)) {
        names_free(&m);
        return -1;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < m.n; i++)
        if (has(&r, m.v[i]) && (!skip || strcmp(m.v[i], skip) != 0)) {
            out->v = sim_xrealloc(out->v, sizeof *out->v * (size_t)(out->n + 1));
            out->v[out->n++] = sim_xstrdup(m.v[i]);
        }
    names_free(&m);
    names_free(&r);
    return 0;
}

/* Runs b's text (freed) with no result rows; 0, or -1 with err saying what. */
static int run(store *s, store_sql *b, const char *what, sim_err *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, b->p, NULL, NULL, &msg);
    free(b->p);
    memset(b, 0, sizeof *b);
    if (rc != SQLITE_OK) {
        sim_errf(err, "%s: merging: %s: %s", s->path, what, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int64_t one(store *s, const char *text, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, text, err);
    if (!st)
        return -1;
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

/* " AND m.c IS s.c" for each column. */
static void same_row(store_sql *b, const names *c)
{
    for (int i = 0; i < c->n; i++)
        store_sql_add(b, " AND m.\"%s\" IS s.\"%s\"", c->v[i], c->v[i]);
}

/* ---- parents ---- */

/* Whether IN has table t (an older llmsim's database may lack some). */
static int src_has(store *s, const char *t)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND name = ?1", -1,
                           &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
    int yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* Maps IN's rows of parent p: first the rows OUT already has (`known`, a SELECT of (old, new)
 * pairs), then the rest to copy with new ids. */
static int map_rest(store *s, int p, sim_err *err)
{
    if (!src_has(s, parents[p]))
        return 0;
    store_sql b = {0};
    store_sql_add(
        &b,
        "INSERT OR IGNORE INTO temp.m_%s SELECT id, id + (SELECT coalesce(max(id), 0) FROM "
        "main.%s), 1 FROM src.%s",
        parents[p], parents[p], parents[p]);
    return run(s, &b, parents[p], err);
}

/* The columns of parent p that both databases have, but id, into c (free with names_free): 0;
 * 1 when IN has no such table (nothing to do); -1 with err. */
static int parent_columns(store *s, int p, names *c, sim_err *err)
{
    if (!src_has(s, parents[p]))
        return 1;
    return common(s, parents[p], "id", c, err) ? -1 : 0;
}

/* Inserts the rows of parent p marked copy, with their new ids. */
static int copy_parent(store *s, int p, sim_err *err)
{
    names c;
    int rc = parent_columns(s, p, &c, err);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    store_sql b = {0};
    store_sql_add(&b, "INSERT INTO main.%s (id", parents[p]);
    for (int i = 0; i < c.n; i++)
        store_sql_add(&b, ", \"%s\"", c.v[i]);
    store_sql_add(&b, ") SELECT m.new");
    for (int i = 0; i < c.n; i++)
        store_sql_add(&b, ", s.\"%s\"", c.v[i]);
    store_sql_add(&b, " FROM src.%s s JOIN temp.m_%s m ON m.old = s.id AND m.copy = 1", parents[p],
                  parents[p]);
    names_free(&c);
    return run(s, &b, parents[p], err);
}

/* A parent whose rows are "already there" when OUT has a row with every column equal. */
static int map_identical(store *s, int p, const char *lead, sim_err *err)
{
    names c;
    int rc = parent_columns(s, p, &c, err);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    store_sql b = {0};
    store_sql_add(
        &b,
        "INSERT OR IGNORE INTO temp.m_%s SELECT s.id, min(m.id), 0 FROM src.%s s JOIN main.%s m "
        "ON %s",
        parents[p], parents[p], parents[p], lead);
    same_row(&b, &c);
    store_sql_add(&b, " GROUP BY s.id");
    names_free(&c);
    return run(s, &b, parents[p], err);
}

/* Runs query q and copies its first row's first column into buf. 1 when there was a row, 0
 * when none, -1 with err. */
static int first_row(store *s, const char *q, char *buf, size_t len, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, q, err);
    if (!st)
        return -1;
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return found;
}

/* Maps IN's rows of parent p to OUT's rows of the same `key` column, then the rest (map_rest). */
static int map_by_key(store *s, int p, const char *key, sim_err *err)
{
    store_sql b = {0};
    store_sql_add(&b,
                  "INSERT INTO temp.m_%s SELECT s.id, m.id, 0 FROM src.%s s JOIN main.%s m ON "
                  "m.%s = s.%s",
                  parents[p], parents[p], parents[p], key, key);
    return run(s, &b, parents[p], err) || map_rest(s, p, err) ? -1 : 0;
}

/* Sweeps: by key; a key whose definition differs is refused. */
static int map_sweeps(store *s, const char *in, sim_err *err)
{
    if (!src_has(s, "sweeps"))
        return 0;
    char key[1024];
    int differs = first_row(s,
                            "SELECT s.key FROM src.sweeps s JOIN main.sweeps m ON m.key = s.key "
                            "WHERE NOT (m.scenario IS s.scenario AND m.varied IS s.varied AND "
                            "m.reps IS s.reps AND m.base_seed IS s.base_seed) LIMIT 1",
                            key, sizeof key, err);
    if (differs)
        return differs < 0 ? -1
                           : sim_errf(err,
                                      "%s: sweep %s is defined differently here and in %s "
                                      "(scenario, values, repetitions or seed): they are not "
                                      "shards of one sweep",
                                      in, key, s->path);
    return map_by_key(s, P_SWEEP, "key", err);
}

/* Runs: those of a sweep point OUT has, those with an equal row, then the rest. A run of one
 * of IN's sweep points is the same run only through its point: were it mapped by its row onto a
 * run that is another sweep's point (the same scenario and seed, `created` in the same second),
 * its own point could not be inserted (sweep_points.run_id is UNIQUE) and the sweep would lose
 * it, or not, depending on the clock when the runs were made. */
static int map_runs(store *s, sim_err *err)
{
    const char *lead = "m.seed = s.seed AND m.created = s.created";
    if (src_has(s, "sweep_points")) {
        lead = "m.seed = s.seed AND m.created = s.created AND s.id NOT IN (SELECT run_id FROM "
               "src.sweep_points)";
        store_sql b = {0};
        store_sql_add(&b,
                      "INSERT OR IGNORE INTO temp.m_runs SELECT p.run_id, q.run_id, 0 FROM "
                      "src.sweep_points p JOIN temp.m_sweeps w ON w.old = p.sweep_id JOIN "
                      "main.sweep_points q ON q.sweep_id = w.new AND q.point = p.point AND q.rep = "
                      "p.rep");
        if (run(s, &b, "runs of sweep points", err))
            return -1;
    }
    return map_identical(s, P_RUN, lead, err) || map_rest(s, P_RUN, err) ? -1 : 0;
}

/* Profiles: by name; the same name with another row is refused. */
static int map_profiles(store *s, const char *in, sim_err *err)
{
    if (!src_has(s, "profiles"))
        return 0;
    names c;
    if (common(s, "profiles", "id", &c, err))
        return -1;
    store_sql b = {0};
    store_sql_add(
        &b, "SELECT s.name FROM src.profiles s JOIN main.profiles m ON m.name = s.name WHERE NOT "
            "(1");
    same_row(&b, &c);
    store_sql_add(&b, ") LIMIT 1");
    names_free(&c);
    char name[1024];
    int differs = first_row(s, b.p, name, sizeof name, err);
    free(b.p);
    if (differs)
        return differs < 0 ? -1
                           : sim_errf(err,
                                      "%s: profile '%s' differs here and in %s; import one under "
                                      "another name (profile import-vidur --as NAME) before "
                                      "merging",
                                      in, name, s->path);
    return map_by_key(s, P_PROFILE, "name", err);
}

/* ---- children ---- */

/* Copies table t's rows through its foreign keys (fk_from[i] references parents[fk_to[i]]). */
static int copy_child(store *s, const char *t, const names *from, const int *to, sim_err *err)
{
    int owner = P_COUNT, ocol = -1;
    for (int i = 0; i < from->n; i++)
        if (to[i] < owner) {
            owner = to[i];
            ocol = i;
        }
    names c;
    if (common(s, t, NULL, &c, err))
        return -1;
    store_sql b = {0};
    /* a sweep's points and parameters are keyed by what they describe: OUT keeps its own */
    store_sql_add(&b, "INSERT %sINTO main.\"%s\" (", owner == P_SWEEP ? "OR IGNORE " : "", t);
    for (int i = 0; i < c.n; i++)
        store_sql_add(&b, "%s\"%s\"", i ? ", " : "", c.v[i]);
    store_sql_add(&b, ") SELECT ");
    for (int i = 0; i < c.n; i++) {
        int k = 0;
        while (k < from->n && strcmp(from->v[k], c.v[i]) != 0)
            k++;
        if (k < from->n)
            store_sql_add(&b, "%sf%d.new", i ? ", " : "", k);
        else
            store_sql_add(&b, "%ss.\"%s\"", i ? ", " : "", c.v[i]);
    }
    store_sql_add(&b, " FROM src.\"%s\" s", t);
    for (int k = 0; k < from->n; k++) {
        store_sql_add(&b, " %sJOIN temp.m_%s f%d ON f%d.old = s.\"%s\"", k == ocol ? "" : "LEFT ",
                      parents[to[k]], k, k, from->v[k]);
        if (k == ocol && owner != P_SWEEP) /* the rows of the owners copied */
            store_sql_add(&b, " AND f%d.copy = 1", k);
    }
    names_free(&c);
    return run(s, &b, t, err);
}

/* The parent index of name, or -1. */
static int parent_of(const char *name)
{
    for (int p = 0; p < P_COUNT; p++)
        if (strcmp(parents[p], name) == 0)
            return p;
    return -1;
}

/* A child table another child may reference (validation_values -> validation_rows). */
static int known_child(const char *t)
{
    return strcmp(t, "validation_rows") == 0;
}

/* The parent that column col of child table t maps to (validation_rows.validation_id ->
 * validations), -1 when col is not a mapped key there, -2 with err on a read failure. */
static int through(store *s, const char *t, const char *col, sim_err *err)
{
    names to;
    if (column_of(s,
                  "SELECT \"table\" FROM pragma_foreign_key_list(?1, 'main') WHERE \"from\" = ?2",
                  t, col, &to, err))
        return -2;
    int p = to.n == 1 ? parent_of(to.v[0]) : -1;
    names_free(&to);
    return p;
}

/* Table t of IN: copied through its foreign keys, or refused when it references a table this
 * merge does not map (or none, and it is no parent: then llmsim does not know it). */
static int copy_table(store *s, const char *in, const char *t, sim_err *err)
{
    if (parent_of(t) >= 0 || strcmp(t, "schema_version") == 0)
        return 0;
    names from, to;
    if (column_of(s, "SELECT \"from\" FROM pragma_foreign_key_list(?1, 'main') ORDER BY id, seq", t,
                  NULL, &from, err))
        return -1;
    if (column_of(s, "SELECT \"table\" FROM pragma_foreign_key_list(?1, 'main') ORDER BY id, seq",
                  t, NULL, &to, err)) {
        names_free(&from);
        return -1;
    }
    names tocol;
    if (column_of(s, "SELECT \"to\" FROM pragma_foreign_key_list(?1, 'main') ORDER BY id, seq", t,
                  NULL, &tocol, err)) {
        names_free(&from);
        names_free(&to);
        return -1;
    }
    int *idx = sim_xcalloc((size_t)to.n + 1, sizeof *idx), rc = 0, kept = 0;
    for (int i = 0; i < to.n && rc == 0; i++) {
        int p = parent_of(to.v[i]);
        if (p < 0 && !known_child(to.v[i]))
            rc = sim_errf(err, "%s: table %s references %s, which this llmsim cannot merge", in, t,
                          to.v[i]);
        else if (p < 0 && (p = through(s, to.v[i], tocol.v[i], err)) == -2)
            rc = -1;
        if (rc == 0 && p >= 0) { /* a key mapped through its parent; others are plain columns */
            char *f = from.v[i];
            from.v[i] = from.v[kept];
            from.v[kept] = f;
            idx[kept++] = p;
        }
    }
    for (int i = kept; i < from.n; i++)
        free(from.v[i]);
    from.n = kept;
    names_free(&tocol);
    if (rc == 0 && from.n == 0)
        rc = sim_errf(err, "%s: table %s is not one this llmsim knows how to merge", in, t);
    if (rc == 0)
        rc = copy_child(s, t, &from, idx, err);
    free(idx);
    names_free(&from);
    names_free(&to);
    return rc;
}

/* ---- the whole ---- */

int store_merge_check(const char *out, const char *in, sim_err *err)
{
    struct stat a, b;
    if (stat(in, &b) != 0)
        return sim_errf(err, "%s: cannot open: no such file", in);
    if (stat(out, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return sim_errf(err, "%s: is the output database itself", in);
    store *s = store_open_readonly(in, err);
    if (!s)
        return -1;
    int v = store_schema_version(s);
    store_close(s);
    if (v > STORE_SCHEMA_VERSION)
        return sim_errf(err,
                        "%s: schema version %d is newer than this llmsim's (%d); merge with the "
                        "llmsim that wrote it",
                        in, v, STORE_SCHEMA_VERSION);
    return 0;
}

static const char maps[] = "CREATE TEMP TABLE IF NOT EXISTS m_%s (old INTEGER PRIMARY KEY, new "
                           "INTEGER NOT NULL, copy INTEGER NOT NULL); DELETE FROM temp.m_%s;";

static int64_t count_of(store *s, const char *t, sim_err *err)
{
    char q[160];
    snprintf(q, sizeof q, "SELECT count(*) FROM main.%s", t);
    return one(s, q, err);
}

/* Inside the transaction: maps, parents, children. */
static int merge_all(store *s, const char *in, store_merge_stats *st, sim_err *err)
{
    store_sql b = {0};
    for (int p = 0; p < P_COUNT; p++)
        store_sql_add(&b, maps, parents[p], parents[p]);
    if (run(s, &b, "temporary maps", err) || map_sweeps(s, in, err) || map_runs(s, err) ||
        map_profiles(s, in, err) || map_identical(s, P_SEARCH, "m.base_seed IS s.base_seed", err) ||
        map_rest(s, P_SEARCH, err) ||
        map_identical(s, P_VALIDATION, "m.created = s.created AND m.name = s.name", err) ||
        map_rest(s, P_VALIDATION, err))
        return -1;
    int64_t points = count_of(s, "sweep_points", err);
    for (int p = 0; p < P_COUNT; p++)
        if (copy_parent(s, p, err))
            return -1;
    names tables;
    if (column_of(s,
                  "SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                  "'sqlite_%' ORDER BY name",
                  NULL, NULL, &tables, err))
        return -1;
    int rc = 0;
    for (int i = 0; i < tables.n && rc == 0; i++)
        rc = copy_table(s, in, tables.v[i], err);
    names_free(&tables);
    if (rc)
        return -1;
    st->points_added = count_of(s, "sweep_points", err) - points;
    st->runs_copied = one(s, "SELECT count(*) FROM temp.m_runs WHERE copy = 1", err);
    st->runs_present = one(s, "SELECT count(*) FROM temp.m_runs WHERE copy = 0", err);
    st->sweeps_added = one(s, "SELECT count(*) FROM temp.m_sweeps WHERE copy = 1", err);
    st->profiles_added = one(s, "SELECT count(*) FROM temp.m_profiles WHERE copy = 1", err);
    st->searches_added =
        one(s, "SELECT count(*) FROM temp.m_capacity_searches WHERE copy = 1", err);
    st->validations_added = one(s, "SELECT count(*) FROM temp.m_validations WHERE copy = 1", err);
    return 0;
}

int store_merge(store *out, const char *in, store_merge_stats *st, sim_err *err)
{
    memset(st, 0, sizeof *st);
    if (store_merge_check(store_path(out), in, err))
        return -1;
    sqlite3_stmt *at = store_prepare(out, "ATTACH DATABASE ?1 AS src", err);
    if (!at)
        return -1;
    sqlite3_bind_text(at, 1, in, -1, SQLITE_STATIC);
    if (store_step_once(out, at, "attaching the input", err))
        return -1;
    int rc = -1;
    if (store_begin(out, err) == 0) {
        rc = merge_all(out, in, st, err);
        if (rc == 0)
            rc = store_commit(out, err);
        if (rc != 0)
            store_rollback(out);
    }
    sqlite3_exec(out->db, "DETACH DATABASE src", NULL, NULL, NULL);
    return rc;
}
