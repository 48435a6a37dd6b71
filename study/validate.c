/*
 * validate.c: validation sets (see study_validate.h): reading a set file, expanding a serving
 * set's rows into scenario overrides, running them in worker processes, the error statistics,
 * and storing the result. Operator sets are read and predicted in validate_ops.c.
 *
 * A serving set maps each row of its table to overrides of a base scenario:
 *   set:   {KEY: TEMPLATE, ...}            applied to every row, first
 *   rules: [{column: C, cases: {VALUE: ACTION, ...}, otherwise: ACTION}, ...]
 *          in order; the row's value of C picks its case (a value with no case and no
 *          `otherwise` makes the row inexpressible, naming the value and the rule's line);
 *   ACTION: {set: {KEY: TEMPLATE}, approx: TEXT, cannot: TEXT}: overrides, an approximation the
 *          row is predicted under, or the reason it cannot be expressed (its overrides are then
 *          kept, checked, and not applied: a mapping ready to switch on).
 * TEMPLATE is text with placeholders {COL}, {COL:KEY} (the value of KEY in a cell holding
 * "k=v; k=v"), {A|B} (the first non-empty alternative; a number stands for itself, {A|1}) and
 * {...*N} (the number times N); {{ and
 * }} stand for literal braces (a YAML flow map as a value: "{{dist: fixed, value: {isl}}}").
 * A template that begins with '=' is arithmetic once expanded (vexpr.c): an engine limit a
 * harness derives from a row, "=ceil(({batch_size} + {isl} + 1500) / 32) * 32".
 * Later overrides of a key win, as with --set. Every constant override is tried on the base
 * scenario when the set is read, so a misspelt key is an error naming the set's line; an
 * override made from a row's values that the scenario refuses makes that row inexpressible,
 * with the scenario's message.
 *
 * Worker processes write each row's prediction into a shared mapping (one slot per row), so
 * the parent needs no channel but the pool's; each worker spools its row's run (summary level
 * unless asked) through the pool, the parent keeps the spooled runs in a temporary file
 * (v->runs), and study_vset_store writes them with the validation in one transaction: a
 * validation stopped part way (killed) leaves no run behind, and no worker writes the database.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_validation.h"
#include "study_pool.h"
#include "validate_int.h"

#define MAX_TEMPLATE 1024
#define MAX_CONSTANTS 32 /* constant overrides in one action */

/* ---- rows, notes and messages ---- */

study_vrow *validate_row_add(study_vset *v, const char *id, const char *group, int line)
{
    if (v->nrows == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->rows = sim_xrealloc(v->rows, (size_t)v->cap * sizeof *v->rows);
    }
    study_vrow *r = &v->rows[v->nrows++];
    memset(r, 0, sizeof *r);
    r->id = sim_xstrdup(id);
    r->group = sim_xstrdup(group);
    r->line = line;
    r->count = 1;
    for (int m = 0; m < STUDY_VMAX_METRICS; m++)
        r->measured[m] = r->predicted[m] = NAN;
    return r;
}

void validate_row_fail(study_vrow *r, study_vstatus st, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(r->reason);
    r->reason = sim_xstrdup(buf);
    r->status = st;
}

void validate_row_approx(study_vrow *r, const char *text)
{
    if (!text || !*text || (r->approx && strstr(r->approx, text)))
        return;
    size_t old = r->approx ? strlen(r->approx) : 0, n = old + strlen(text) + 3;
    char *s = sim_xmalloc(n);
    snprintf(s, n, "%s%s%s", old ? r->approx : "", old ? "; " : "", text);
    free(r->approx);
    r->approx = s;
}

void validate_note(study_vset *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    eng_notes_vadd(v->notes, sizeof v->notes, fmt, ap);
    va_end(ap);
}

int validate_fail(sim_err *err, const char *file, const scn_node *n, const char *key,
                  const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n && scn_doc_line(n) > 0)
        return sim_errf(err, "%s:%d: %s: %s", file, scn_doc_line(n), key, msg);
    return sim_errf(err, "%s: %s: %s", file, key, msg);
}

int validate_scalar(const char *file, const scn_node *map, const char *key, const char **out,
                    sim_err *err)
{
    const scn_node *n = scn_doc_get(map, key);
    *out = NULL;
    if (!n)
        return 0;
    if (scn_doc_type(n) != SCN_DOC_SCALAR)
        return validate_fail(err, file, n, key, "expected a value, got a %s",
                             scn_doc_type(n) == SCN_DOC_MAP ? "map" : "list");
    *out = scn_doc_text(n);
    return 0;
}

int validate_keys(const char *file, const scn_node *map, const char *where,
                  const char *const *allowed, sim_err *err)
{
    for (const scn_node *c = scn_doc_first(map); c; c = scn_doc_next(c)) {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], scn_doc_key(c)) != 0)
            i++;
        if (allowed[i])
            continue;
        char list[600];
        size_t off = 0;
        list[0] = '\0';
        for (size_t k = 0; allowed[k] && off < sizeof list; k++)
            off +=
                (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", allowed[k]);
        char path[200];
        snprintf(path, sizeof path, "%s%s%s", where, *where ? "." : "", scn_doc_key(c));
        return validate_fail(err, file, c, path, "unknown key (valid: %s)", list);
    }
    return 0;
}

int validate_path(const char *set_path, const char *path, char *out, size_t len)
{
    const char *slash = strrchr(set_path, '/');
    int n = path[0] == '/' || !slash
                ? snprintf(out, len, "%s", path)
                : snprintf(out, len, "%.*s/%s", (int)(slash - set_path), set_path, path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ---- where the sets are ---- */

const char *study_validation_dir(void)
{
    const char *env = getenv("LLMSIM_VALIDATION_DIR");
    return env && *env ? env : LLMSIM_VALIDATION_DIR;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shipped sets' file names (*.yaml), sorted; count, or -1 with err. Free each and *out. */
static int set_files(char ***out, sim_err *err)
{
    const char *dir = study_validation_dir();
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d)
        return sim_errf(err, "%s: cannot read the validation sets' folder: %s", dir,
                        strerror(errno));
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            *out = sim_xrealloc(*out, (size_t)cap * sizeof **out);
        }
        (*out)[n++] = sim_xstrdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(*out, (size_t)n, sizeof **out, cmp_str);
    return n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int study_vset_path(const char *name, char *out, size_t len, sim_err *err)
{
    if (is_file(name)) {
        snprintf(out, len, "%s", name);
        return 0;
    }
    if (!strchr(name, '/')) {
        snprintf(out, len, "%s/%s.yaml", study_validation_dir(), name);
        if (is_file(out))
            return 0;
    }
    char **names, list[1024] = "";
    int n = set_files(&names, err);
    size_t off = 0;
    for (int i = 0; i < n && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%.*s", i ? ", " : "",
                                (int)(strlen(names[i]) - 5), names[i]);
    free_names(names, n > 0 ? n : 0);
    return sim_errf(err, "no validation set '%s': not a file, and not one of the shipped sets (%s)",
                    name, n > 0 ? list : "none found");
}

/* ---- the heading every set has ---- */

static const char *const kind_names[] = {"serving", "operators", NULL};

/* A required scalar into out (len bytes). */
static int need_str(const char *file, const scn_node *root, const char *key, char *out, size_t len,
                    sim_err *err)
{
    const char *t;
    if (validate_scalar(file, root, key, &t, err))
        return -1;
    if (!t || !*t)
        return validate_fail(err, file, root, key, "missing");
    if (strlen(t) >= len)
        return validate_fail(err, file, scn_doc_get(root, key), key, "longer than %zu characters",
                             len - 1);
    snprintf(out, len, "%s", t);
    return 0;
}

static int read_heading(const char *path, const scn_node *root, study_vset_brief *b, sim_err *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->path, sizeof b->path, "%s", path);
    const char *kind;
    if (need_str(path, root, "name", b->name, sizeof b->name, err) ||
        need_str(path, root, "description", b->description, sizeof b->description, err) ||
        need_str(path, root, "source", b->source, sizeof b->source, err) ||
        validate_scalar(path, root, "kind", &kind, err))
        return -1;
    if (!kind)
        return validate_fail(err, path, root, "kind", "missing (serving or operators)");
    for (int i = 0; kind_names[i]; i++)
        if (strcmp(kind, kind_names[i]) == 0) {
            b->kind = (study_vkind)i;
            return 0;
        }
    return validate_fail(err, path, scn_doc_get(root, "kind"), "kind",
                         "unknown kind '%s' (valid: serving, operators)", kind);
}

int study_vset_list(void (*fn)(void *arg, const study_vset_brief *b), void *arg, sim_err *err)
{
    char **names;
    int n = set_files(&names, err);
    if (n < 0)
        return -1;
    int rc = n;
    for (int i = 0; i < n && rc >= 0; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", study_validation_dir(), names[i]);
        scn_node *root = NULL;
        study_vset_brief b;
        if (scn_doc_read(path, &root, err) || read_heading(path, root, &b, err))
            rc = -1;
        else if (fn)
            fn(arg, &b);
        scn_doc_free(root);
    }
    free_names(names, n);
    return rc;
}

/* ---- templates ---- */

/* The value of key in a cell of "k=v; k=v" items into out; "" when absent. */
static void cell_key(const char *cell, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    for (const char *p = cell; *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        size_t item = strcspn(p, ";");
        if (item > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t vl = item - kl - 1;
            while (vl > 0 && v[vl - 1] == ' ')
                vl--;
            snprintf(out, len, "%.*s", (int)vl, v);
            return;
        }
        p += item;
    }
}

/* One placeholder's text (between the braces) against the current row of c: its value into
 * out. 0; 1 when every alternative is empty (why says which); -1 on a syntax error or an unknown
 * column (why). With check set, only the syntax and the columns are checked. */
static int placeholder(const char *ph, const vcsv *c, int check, char *out, size_t len, char *why,
                       size_t wlen, int empty_ok)
{
    char body[256], cells[256] = "";
    double mult = 1;
    snprintf(body, sizeof body, "%s", ph);
    char *star = strchr(body, '*');
    if (star) {
        char *end;
        *star = '\0';
        mult = strtod(star + 1, &end);
        if (star[1] == '\0' || *end || !isfinite(mult))
            return snprintf(why, wlen, "{%s}: expected a number after '*'", ph), -1;
    }
    out[0] = '\0';
    char *save = NULL;
    for (char *alt = strtok_r(body, "|", &save); alt; alt = strtok_r(NULL, "|", &save)) {
        char *colon = strchr(alt, ':'), *end;
        if (colon)
            *colon = '\0';
        double lit = strtod(alt, &end);
        if (!colon && end != alt && !*end && isfinite(lit)) { /* a number: its own value */
            if (!check)
                snprintf(out, len, "%s", alt);
            break;
        }
        int col = vcsv_col(c, alt);
        if (col < 0 || (colon && !colon[1]))
            return snprintf(why, wlen, "{%s}: %s '%s'", ph,
                            col < 0 ? "no column" : "an empty key after", alt),
                   -1;
        if (check)
            continue;
        size_t off = strlen(cells);
        snprintf(cells + off, sizeof cells - off, "%s%s", off ? ", " : "", alt);
        if (colon)
            cell_key(vcsv_get(c, col), colon + 1, out, len);
        else
            snprintf(out, len, "%s", vcsv_get(c, col));
        if (*out)
            break;
    }
    if (check) /* a stand-in value, so that an expression's syntax can be checked */
        return snprintf(out, len, "1"), 0;
    if (!*out && empty_ok)
        return 0;
    if (!*out)
        return snprintf(why, wlen, "{%s}: empty (%s)", ph, cells), 1;
    if (star) {
        char *end;
        double x = strtod(out, &end);
        if (*end || !isfinite(x))
            return snprintf(why, wlen, "{%s}: '%s' is not a number", ph, out), 1;
        snprintf(out, len, "%.10g", x * mult);
    }
    return 0;
}

/* Expands tmpl for c's current row into out (see placeholder for the return values; with
 * empty_ok an empty placeholder reads as ""). */
static int expand_as(const char *tmpl, const vcsv *c, int check, char *out, size_t len, char *why,
                     size_t wlen, int empty_ok)
{
    size_t off = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) { /* a literal brace */
            if (off + 1 < len)
                out[off++] = *p;
            out[off] = '\0';
            p += 2;
            continue;
        }
        if (*p == '}')
            return snprintf(why, wlen, "'}' without '{'"), -1;
        if (*p != '{') {
            if (off + 1 < len)
                out[off++] = *p;
            out[off] = '\0';
            p++;
            continue;
        }
        const char *close = strchr(p, '}');
        if (!close || close == p + 1 || (size_t)(close - p) > 200)
            return snprintf(why, wlen, "'{' without a column name and '}'"), -1;
        char ph[256], val[512];
        snprintf(ph, sizeof ph, "%.*s", (int)(close - p - 1), p + 1);
        if (strchr(ph, '{') || strchr(ph, ' '))
            return snprintf(why, wlen, "malformed placeholder {%s}", ph), -1;
        int rc = placeholder(ph, c, check, val, sizeof val, why, wlen, empty_ok);
        if (rc)
            return rc;
        off += (size_t)snprintf(out + off, off < len ? len - off : 0, "%s", val);
        p = close + 1;
    }
    return off < len ? 0 : (snprintf(why, wlen, "longer than %zu characters", len - 1), -1);
}

/* expand_as without empty placeholders; a template beginning with '=' is an expression
 * (vexpr.c), evaluated once expanded: its value is printed as %.10g. */
static int expand(const char *tmpl, const vcsv *c, int check, char *out, size_t len, char *why,
                  size_t wlen)
{
    int rc = expand_as(tmpl, c, check, out, len, why, wlen, 0);
    if (rc || tmpl[0] != '=')
        return rc;
    double x;
    if (validate_expr(out + 1, &x, why, wlen) != 0) {
        if (check) { /* name the template, not its stand-in expansion */
            char inner[256];
            snprintf(inner, sizeof inner, "%s", why);
            snprintf(why, wlen, "%s (its placeholders read as 1: %s)", tmpl, inner);
        }
        return check ? -1 : 1;
    }
    snprintf(out, len, "%.10g", x);
    return 0;
}

/* ---- a serving set's mapping ---- */

typedef struct vaction {
    int line;
    char **keys, **vals; /* overrides: KEY=TEMPLATE */
    int nset;
    char *approx, *cannot;
} vaction;

typedef struct vcase {
    char *value;
    vaction act;
} vcase;

typedef struct vrule {
    char value[256]; /* the template whose value picks the case: {COLUMN} for `column:` */
    int line;
    vcase *cases;
    int ncases;
    int has_otherwise;
    vaction otherwise;
} vrule;

/* A regime the rows are also summarised by: the first whose `when` holds (no `when`: every
 * row left). */
typedef struct vregime {
    char name[64];
    char when[MAX_TEMPLATE]; /* "=EXPR" ("" = always) */
} vregime;

typedef struct serving {
    const char *file; /* the set file */
    int idcol;
    char group[256];  /* template */
    char warmup[256]; /* template: the first arrivals left out of the metrics ("" = none) */
    vaction all;      /* `set`: every row */
    vrule *rules;
    int nrules;
    vregime *regimes;
    int nregimes;
    vlayout layout;    /* `id_layout`: the layout the ids encode, checked against the columns */
    int layout_mapped; /* a rule reads {id_layout}: the rules map contradictory rows */
} serving;

static void take_regime(const serving *sv, const vcsv *c, study_vrow *r);

static void action_free(vaction *a)
{
    for (int i = 0; i < a->nset; i++) {
        free(a->keys[i]);
        free(a->vals[i]);
    }
    free(a->keys);
    free(a->vals);
    free(a->approx);
    free(a->cannot);
    memset(a, 0, sizeof *a);
}

static void serving_free(serving *s)
{
    action_free(&s->all);
    for (int r = 0; r < s->nrules; r++) {
        for (int k = 0; k < s->rules[r].ncases; k++) {
            free(s->rules[r].cases[k].value);
            action_free(&s->rules[r].cases[k].act);
        }
        free(s->rules[r].cases);
        action_free(&s->rules[r].otherwise);
    }
    free(s->rules);
    free(s->regimes);
}

/* Tries an action's constant overrides, together, on the base scenario (a preset's version
 * is only valid with its engine's name). 0, or -1 with err naming the set's line. */
static int try_overrides(const study_vset *v, const scn_node *n, const char *key,
                         const char *const *sets, int nsets, sim_err *err)
{
    scn_scenario scn;
    sim_err e = {{0}};
    if (nsets == 0)
        return 0;
    int rc = study_load(v->scenario, sets, nsets, &scn, &e);
    scn_free(&scn);
    if (rc == 0)
        return 0;
    return validate_fail(err, v->path, n, key, "the base scenario refuses it: %s", e.msg);
}

/* Whether a `set` value is a template (has placeholders) rather than a constant. */
static int is_template(const char *t)
{
    return t[0] == '=' || strchr(t, '{') != NULL || strchr(t, '}') != NULL;
}

/* The constant overrides of the map `where`, tried together on the base scenario (a preset's
 * version is only valid with its engine's name); when they fail, the key the scenario refuses
 * on its own is named, where one is. */
static int try_constants(const study_vset *v, const scn_node *map, const char *where, sim_err *err)
{
    char *sets[MAX_CONSTANTS];
    const scn_node *nodes[MAX_CONSTANTS];
    int n = 0, rc = 0;
    for (const scn_node *kv = scn_doc_first(map); kv && rc == 0; kv = scn_doc_next(kv)) {
        if (is_template(scn_doc_text(kv)))
            continue;
        if (n == MAX_CONSTANTS) {
            rc = validate_fail(err, v->path, map, where, "more than %d constant overrides",
                               MAX_CONSTANTS);
            break;
        }
        size_t len = strlen(scn_doc_key(kv)) + strlen(scn_doc_text(kv)) + 2;
        sets[n] = sim_xmalloc(len);
        snprintf(sets[n], len, "%s=%s", scn_doc_key(kv), scn_doc_text(kv));
        nodes[n++] = kv;
    }
    if (rc == 0 && try_overrides(v, map, where, (const char *const *)sets, n, err) != 0) {
        rc = -1;
        for (int k = 0; k < n; k++) {
            char path[256];
            snprintf(path, sizeof path, "%s.%s", where, scn_doc_key(nodes[k]));
            sim_err one = {{0}};
            if (try_overrides(v, nodes[k], path, (const char *const *)&sets[k], 1, &one)) {
                *err = one;
                break;
            }
        }
    }
    for (int k = 0; k < n; k++)
        free(sets[k]);
    return rc;
}

/* `set: {KEY: TEMPLATE, ...}` into a. Templates are checked against the table's columns (c may
 * be NULL for transcribed rows: then no placeholder is allowed), constants on the scenario. */
static int read_sets(const study_vset *v, const scn_node *map, const char *where, const vcsv *c,
                     int try_consts, vaction *a, sim_err *err)
{
    if (scn_doc_type(map) != SCN_DOC_MAP)
        return validate_fail(err, v->path, map, where, "expected a map of scenario keys");
    for (const scn_node *kv = scn_doc_first(map); kv; kv = scn_doc_next(kv)) {
        char path[256], why[256], val[MAX_TEMPLATE];
        snprintf(path, sizeof path, "%s.%s", where, scn_doc_key(kv));
        if (scn_doc_type(kv) != SCN_DOC_SCALAR)
            return validate_fail(err, v->path, kv, path, "expected a value (a template)");
        const char *t = scn_doc_text(kv);
        int templ = is_template(t);
        if (templ && !c)
            return validate_fail(err, v->path, kv, path,
                                 "placeholders need a table (transcribed rows give values)");
        if (templ && expand(t, c, 1, val, sizeof val, why, sizeof why) != 0)
            return validate_fail(err, v->path, kv, path, "%s (columns: %s)", why,
                                 vcsv_names(c, val, sizeof val));
        if (strlen(t) + strlen(scn_doc_key(kv)) + 2 > MAX_TEMPLATE)
            return validate_fail(err, v->path, kv, path, "too long");
        a->keys = sim_xrealloc(a->keys, (size_t)(a->nset + 1) * sizeof *a->keys);
        a->vals = sim_xrealloc(a->vals, (size_t)(a->nset + 1) * sizeof *a->vals);
        a->keys[a->nset] = sim_xstrdup(scn_doc_key(kv));
        a->vals[a->nset++] = sim_xstrdup(t);
    }
    return try_consts ? try_constants(v, map, where, err) : 0;
}

/* ACTION: {set, approx, cannot}. An action's overrides are only checked when the action is
 * taken as it stands (a `cannot` keeps them for later, unapplied). */
static int action_fields(const study_vset *v, const scn_node *n, const char *where, const vcsv *c,
                         vaction *a, sim_err *err)
{
    const char *approx, *cannot;
    a->line = scn_doc_line(n);
    char p1[256], p2[256], p3[256];
    snprintf(p1, sizeof p1, "%s.approx", where);
    snprintf(p2, sizeof p2, "%s.cannot", where);
    snprintf(p3, sizeof p3, "%s.set", where);
    if (validate_scalar(v->path, n, "approx", &approx, err) ||
        validate_scalar(v->path, n, "cannot", &cannot, err))
        return -1;
    if ((approx && !*approx) || (cannot && !*cannot))
        return validate_fail(err, v->path, scn_doc_get(n, approx && !*approx ? "approx" : "cannot"),
                             approx && !*approx ? p1 : p2, "empty: say what it is");
    a->approx = approx ? sim_xstrdup(approx) : NULL;
    a->cannot = cannot ? sim_xstrdup(cannot) : NULL;
    const scn_node *sets = scn_doc_get(n, "set");
    return sets ? read_sets(v, sets, p3, c, !cannot, a, err) : 0;
}

static int read_action(const study_vset *v, const scn_node *n, const char *where, const vcsv *c,
                       vaction *a, sim_err *err)
{
    static const char *const keys[] = {"set", "approx", "cannot", NULL};
    if (scn_doc_type(n) != SCN_DOC_MAP)
        return validate_fail(err, v->path, n, where,
                             "expected a map ({set: {...}, approx: TEXT, cannot: TEXT} or {})");
    return validate_keys(v->path, n, where, keys, err) || action_fields(v, n, where, c, a, err) ? -1
                                                                                                : 0;
}

static int read_rule(const study_vset *v, const scn_node *n, int i, const vcsv *c, vrule *r,
                     sim_err *err)
{
    static const char *const keys[] = {"column", "value", "cases", "otherwise", NULL};
    char where[64], names[2048], why[256], out[512];
    snprintf(where, sizeof where, "rules.%d", i);
    r->line = scn_doc_line(n);
    if (scn_doc_type(n) != SCN_DOC_MAP)
        return validate_fail(err, v->path, n, where,
                             "expected a map {column or value, cases, otherwise}");
    const char *col, *val;
    if (validate_keys(v->path, n, where, keys, err) ||
        validate_scalar(v->path, n, "column", &col, err) ||
        validate_scalar(v->path, n, "value", &val, err))
        return -1;
    char path[96];
    snprintf(path, sizeof path, "%s.%s", where, val ? "value" : "column");
    if ((!col || !*col) == (!val || !*val))
        return validate_fail(err, v->path, n, path,
                             col ? "give column or value, not both"
                                 : "missing (the table's column this rule maps, or a value "
                                   "template such as \"{backend} {model_path}\")");
    if (col && vcsv_col(c, col) < 0)
        return validate_fail(err, v->path, scn_doc_get(n, "column"), path,
                             "no column '%s' in %s (columns: %s)", col, c->path,
                             vcsv_names(c, names, sizeof names));
    if (col ? snprintf(r->value, sizeof r->value, "{%s}", col) >= (int)sizeof r->value
            : snprintf(r->value, sizeof r->value, "%s", val) >= (int)sizeof r->value)
        return validate_fail(err, v->path, n, path, "too long");
    if (val && expand(val, c, 1, out, sizeof out, why, sizeof why) != 0)
        return validate_fail(err, v->path, scn_doc_get(n, "value"), path, "%s (columns: %s)", why,
                             vcsv_names(c, names, sizeof names));
    const scn_node *cases = scn_doc_get(n, "cases"), *other = scn_doc_get(n, "otherwise");
    snprintf(path, sizeof path, "%s.cases", where);
    if (!cases && !other)
        return validate_fail(err, v->path, n, path, "missing (a map from values to actions)");
    if (cases && scn_doc_type(cases) != SCN_DOC_MAP)
        return validate_fail(err, v->path, cases, path, "expected a map from values to actions");
    r->cases = sim_xcalloc((size_t)scn_doc_count(cases) + 1, sizeof *r->cases);
    for (const scn_node *k = scn_doc_first(cases); k; k = scn_doc_next(k)) {
        char p[256];
        snprintf(p, sizeof p, "%s.%s", path, scn_doc_key(k));
        r->cases[r->ncases].value = sim_xstrdup(scn_doc_key(k));
        if (read_action(v, k, p, c, &r->cases[r->ncases++].act, err))
            return -1;
    }
    snprintf(path, sizeof path, "%s.otherwise", where);
    r->has_otherwise = other != NULL;
    return other ? read_action(v, other, path, c, &r->otherwise, err) : 0;
}

/* ---- the measured metrics ---- */

static int known_metric(const char *name)
{
    int n;
    const char *const *names = eng_metric_names(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* Adds metric name (a summary metric) to the set; its index, or -1 with err. */
static int add_metric(study_vset *v, const scn_node *n, const char *where, const char *name,
                      sim_err *err)
{
    for (int m = 0; m < v->nmetrics; m++)
        if (strcmp(v->metric[m].name, name) == 0)
            return m;
    if (!known_metric(name))
        return validate_fail(err, v->path, n, where,
                             "'%s' is not a summary metric (mean_ttft_ms, median_tpot_ms, "
                             "p99_e2el_ms, ... as `llmsim run --json` names them)",
                             name);
    if (v->nmetrics == STUDY_VMAX_METRICS)
        return validate_fail(err, v->path, n, where, "at most %d metrics", STUDY_VMAX_METRICS);
    study_vmetric *m = &v->metric[v->nmetrics];
    snprintf(m->name, sizeof m->name, "%s", name);
    /* "mean_ttft_ms" -> "TTFT" */
    const char *us = strchr(name, '_');
    const char *what = us ? us + 1 : name;
    size_t l = strcspn(what, "_");
    for (size_t i = 0; i < l && i + 1 < sizeof m->label; i++)
        m->label[i] = (char)(what[i] >= 'a' && what[i] <= 'z' ? what[i] - 32 : what[i]);
    const char *unit = strrchr(name, '_');
    snprintf(m->unit, sizeof m->unit, "%s", unit && strcmp(unit, "_ms") == 0 ? "ms" : "");
    return v->nmetrics++;
}

/* ---- expanding one row ---- */

/* The overrides of one action for c's current row, appended to r->sets; 1 (with r CANNOT) when
 * a template is empty for this row. */
static int apply_sets(const vaction *a, const vcsv *c, study_vrow *r)
{
    for (int i = 0; i < a->nset; i++) {
        char val[MAX_TEMPLATE], why[512];
        if (c && expand(a->vals[i], c, 0, val, sizeof val, why, sizeof why) != 0) {
            validate_row_fail(r, STUDY_V_CANNOT, "%s: %s", a->keys[i], why);
            return 1;
        }
        if (!c)
            snprintf(val, sizeof val, "%s", a->vals[i]);
        size_t n = strlen(a->keys[i]) + strlen(val) + 2;
        char *s = sim_xmalloc(n);
        snprintf(s, n, "%s=%s", a->keys[i], val);
        r->sets = sim_xrealloc(r->sets, (size_t)(r->nsets + 1) * sizeof *r->sets);
        r->sets[r->nsets++] = s;
    }
    return 0;
}

/* Takes action a for r: 1 when r cannot be expressed. */
static int take(const vaction *a, const vcsv *c, study_vrow *r)
{
    if (a->cannot) {
        validate_row_fail(r, STUDY_V_CANNOT, "%s", a->cannot);
        return 1;
    }
    if (a->approx)
        validate_row_approx(r, a->approx);
    return apply_sets(a, c, r);
}

/* Runs the mapping over c's current row: the rules pick their actions (the first that cannot
 * be expressed, or a value with no case, stops it), then `set` and the actions' overrides are
 * applied in order. */
static void map_row(const study_vset *v, const serving *sv, const vcsv *c, study_vrow *r)
{
    const vaction **acts = sim_xmalloc(((size_t)sv->nrules + 1) * sizeof *acts);
    int n = 0;
    for (int i = 0; i < sv->nrules; i++) {
        const vrule *ru = &sv->rules[i];
        char val[512], why[256];
        if ((ru->value[0] == '='
                 ? expand(ru->value, c, 0, val, sizeof val, why, sizeof why)
                 : expand_as(ru->value, c, 0, val, sizeof val, why, sizeof why, 1)) != 0)
            val[0] = '\0';
        const vaction *a = ru->has_otherwise ? &ru->otherwise : NULL;
        for (int k = 0; k < ru->ncases; k++)
            if (strcmp(ru->cases[k].value, val) == 0)
                a = &ru->cases[k].act;
        if (!a) {
            validate_row_fail(r, STUDY_V_CANNOT, "%s = '%s' has no mapping (%s:%d)", ru->value, val,
                              v->path, ru->line);
            goto out;
        }
        if (a->cannot) {
            validate_row_fail(r, STUDY_V_CANNOT, "%s", a->cannot);
            goto out;
        }
        acts[n++] = a;
    }
    if (take(&sv->all, c, r))
        goto out;
    for (int i = 0; i < n; i++)
        if (take(acts[i], c, r))
            goto out;
    if (sv->warmup[0]) {
        char val[512], why[256], *end;
        if (expand(sv->warmup, c, 0, val, sizeof val, why, sizeof why) != 0)
            validate_row_fail(r, STUDY_V_CANNOT, "warmup: %s", why);
        else if ((r->warmup = strtoll(val, &end, 10)) < 0 || *end || end == val)
            validate_row_fail(r, STUDY_V_CANNOT, "warmup: '%s' is not a count of requests", val);
    }
out:
    free(acts);
}

/* The scenario's notes ("file: note: text" lines) as approximations of r. */
static void take_notes(const char *notes, study_vrow *r)
{
    for (const char *l = notes; *l;) {
        size_t n = strcspn(l, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        const char *t = strstr(line, "note: ");
        validate_row_approx(r, t ? t + 6 : line);
        l += n + (l[n] == '\n');
    }
}

/* Each pool's KV plan (the deployment's when it has no pools): 0, or -1 with the first that
 * cannot be made (the weights do not fit, ...). */
static int plans_fit(const eng_config *c, sim_err *err)
{
    for (int k = 0; k < eng_config_pools(c); k++) {
        eng_config pc;
        eng_kv_plan plan;
        eng_config_pool(c, k, &pc);
        if (eng_kv_plan_compute(&pc, &plan, err) != 0)
            return c->pd.enabled ? sim_err_prefix(err, "%s pool", k ? "decode" : "prefill") : -1;
    }
    return 0;
}

/* Loads r's scenario and checks that it can be run and priced; r becomes CANNOT with the
 * reason when not. */
static void check_row(const study_vset *v, study_vrow *r)
{
    scn_scenario scn;
    sim_err e = {{0}};
    const char *const *sets = (const char *const *)r->sets;
    if (study_load(v->scenario, sets, r->nsets, &scn, &e) != 0 || study_cost_check(&scn, &e) != 0 ||
        plans_fit(&scn.engine, &e) != 0) {
        size_t pl = strlen(v->scenario);
        const char *msg = e.msg;
        if (strncmp(msg, v->scenario, pl) == 0 && strncmp(msg + pl, ": ", 2) == 0)
            msg += pl + 2;
        validate_row_fail(r, STUDY_V_CANNOT, "%s", msg);
    } else {
        take_notes(scn.notes, r);
        study_vkey_of(&scn, &r->key);
    }
    scn_free(&scn);
}

static int parse_measured(const char *s, double *out)
{
    char *end;
    if (!*s)
        return 1;
    double x = strtod(s, &end);
    if (*end || !isfinite(x))
        return -1;
    *out = x;
    return 0;
}

/* One row of the table. */
static void table_row(study_vset *v, const serving *sv, vcsv *c)
{
    char group[512], why[256];
    if (expand(sv->group, c, 0, group, sizeof group, why, sizeof why) != 0)
        snprintf(group, sizeof group, "(no group: %s)", why);
    study_vrow *r = validate_row_add(v, vcsv_get(c, sv->idcol), group, c->lineno);
    int measured = 0;
    for (int m = 0; m < v->nmetrics; m++) {
        const char *cell = vcsv_get(c, vcsv_col(c, v->metric[m].column));
        int rc = parse_measured(cell, &r->measured[m]);
        if (rc < 0) {
            validate_row_fail(r, STUDY_V_CANNOT, "%s: '%s' is not a number", v->metric[m].column,
                              cell);
            return;
        }
        measured += rc == 0;
    }
    if (!measured) {
        validate_row_fail(r, STUDY_V_CANNOT, "nothing measured (the measured columns are empty)");
        return;
    }
    char layout[512];
    if (vlayout_derive(&sv->layout, c, sv->idcol, layout, sizeof layout) && !sv->layout_mapped)
        validate_row_fail(r, STUDY_V_CANNOT, "%s", layout);
    else
        map_row(v, sv, c, r);
    if (r->status == STUDY_V_OK)
        check_row(v, r);
    take_regime(sv, c, r);
}

static int matches(const char *match, const char *id)
{
    return !match || !*match || strstr(id, match) != NULL;
}

/* ---- reading a serving set ---- */

static int read_measured_columns(study_vset *v, const scn_node *root, const vcsv *c, sim_err *err)
{
    const scn_node *m = scn_doc_get(root, "measured");
    char names[2048];
    if (!m)
        return validate_fail(err, v->path, root, "measured",
                             "missing (a map from summary metrics to the table's columns)");
    if (scn_doc_type(m) != SCN_DOC_MAP || scn_doc_count(m) == 0)
        return validate_fail(err, v->path, m, "measured",
                             "expected a map from summary metrics to the table's columns");
    for (const scn_node *k = scn_doc_first(m); k; k = scn_doc_next(k)) {
        char where[128];
        snprintf(where, sizeof where, "measured.%s", scn_doc_key(k));
        const char *col = scn_doc_text(k);
        if (!col || vcsv_col(c, col) < 0)
            return validate_fail(err, v->path, k, where, "no column '%s' in %s (columns: %s)",
                                 col ? col : "(a map)", c->path,
                                 vcsv_names(c, names, sizeof names));
        int i = add_metric(v, k, where, scn_doc_key(k), err);
        if (i < 0)
            return -1;
        snprintf(v->metric[i].column, sizeof v->metric[i].column, "%s", col);
    }
    return 0;
}

/* `warmup: TEMPLATE` (or a number for transcribed rows) into out. The metrics it applies to
 * are the ones a request's times give: ITL gaps are not attributed to requests. */
static int read_warmup(const study_vset *v, const scn_node *root, const vcsv *c, char *out,
                       size_t len, sim_err *err)
{
    const char *w;
    char why[256], val[512];
    out[0] = '\0';
    if (validate_scalar(v->path, root, "warmup", &w, err))
        return -1;
    if (!w)
        return 0;
    const scn_node *n = scn_doc_get(root, "warmup");
    if (!*w || strlen(w) >= len)
        return validate_fail(err, v->path, n, "warmup", "expected a count of first arrivals");
    if (c ? expand(w, c, 1, val, sizeof val, why, sizeof why) != 0
          : (strtol(w, NULL, 10) < 0 || strspn(w, "0123456789") != strlen(w)))
        return validate_fail(err, v->path, n, "warmup", "%s",
                             c ? why : "expected a count of first arrivals");
    for (int m = 0; m < v->nmetrics; m++)
        if (strstr(v->metric[m].name, "_itl_") || strstr(v->metric[m].name, "sched_overhead"))
            return validate_fail(err, v->path, n, "warmup",
                                 "%s cannot leave a warm-up out: its samples are not "
                                 "attributed to requests",
                                 v->metric[m].name);
    snprintf(out, len, "%s", w);
    return 0;
}

/* `regimes: [{name, when: EXPR}, ...]`: EXPR is an expression over the row's columns (as a
 * template beginning with '=' is), checked against the table's columns here. */
static int read_regimes(study_vset *v, const scn_node *list, const vcsv *c, serving *sv,
                        sim_err *err)
{
    static const char *const keys[] = {"name", "when", NULL};
    if (!list)
        return 0;
    if (scn_doc_type(list) != SCN_DOC_SEQ)
        return validate_fail(err, v->path, list, "regimes", "expected a list of {name, when}");
    sv->regimes = sim_xcalloc((size_t)scn_doc_count(list) + 1, sizeof *sv->regimes);
    int i = 0;
    for (const scn_node *n = scn_doc_first(list); n; n = scn_doc_next(n), i++) {
        char where[64], why[256], out[MAX_TEMPLATE];
        const char *name, *when;
        snprintf(where, sizeof where, "regimes.%d", i);
        if (scn_doc_type(n) != SCN_DOC_MAP || validate_keys(v->path, n, where, keys, err) ||
            validate_scalar(v->path, n, "name", &name, err) ||
            validate_scalar(v->path, n, "when", &when, err))
            return scn_doc_type(n) != SCN_DOC_MAP
                       ? validate_fail(err, v->path, n, where, "expected {name, when}")
                       : -1;
        if (!name || !*name || strlen(name) >= sizeof sv->regimes[i].name)
            return validate_fail(err, v->path, n, where, "expected a name (under 64 characters)");
        vregime *g = &sv->regimes[sv->nregimes++];
        snprintf(g->name, sizeof g->name, "%s", name);
        if (when && snprintf(g->when, sizeof g->when, "=%s", when) >= (int)sizeof g->when)
            return validate_fail(err, v->path, n, where, "when: too long");
        if (when && expand(g->when, c, 1, out, sizeof out, why, sizeof why) != 0)
            return validate_fail(err, v->path, scn_doc_get(n, "when"), where, "when: %s", why);
    }
    return 0;
}

/* The first regime of sv whose condition holds for c's current row, into r (none: NULL). */
static void take_regime(const serving *sv, const vcsv *c, study_vrow *r)
{
    for (int i = 0; i < sv->nregimes; i++) {
        char out[MAX_TEMPLATE], why[256];
        const vregime *g = &sv->regimes[i];
        if (!g->when[0] ||
            (expand(g->when, c, 0, out, sizeof out, why, sizeof why) == 0 && atof(out) != 0)) {
            r->regime = sim_xstrdup(g->name);
            return;
        }
    }
}

static int read_mapping(study_vset *v, const scn_node *root, vcsv *c, serving *sv, sim_err *err)
{
    const char *id, *group;
    char names[2048];
    if (validate_scalar(v->path, root, "id", &id, err) ||
        validate_scalar(v->path, root, "group", &group, err))
        return -1;
    if (!id)
        return validate_fail(err, v->path, root, "id", "missing (the column naming each row)");
    if ((sv->idcol = vcsv_col(c, id)) < 0)
        return validate_fail(err, v->path, scn_doc_get(root, "id"), "id",
                             "no column '%s' in %s (columns: %s)", id, c->path,
                             vcsv_names(c, names, sizeof names));
    /* without a group every row is in one, named after the set ("all" is the whole set's) */
    snprintf(sv->group, sizeof sv->group, "%s", group ? group : v->name);
    char why[256], out[512];
    if (expand(sv->group, c, 1, out, sizeof out, why, sizeof why) != 0)
        return validate_fail(err, v->path, scn_doc_get(root, "group"), "group", "%s (columns: %s)",
                             why, vcsv_names(c, names, sizeof names));
    const scn_node *sets = scn_doc_get(root, "set"), *rules = scn_doc_get(root, "rules");
    if (read_measured_columns(v, root, c, err) ||
        read_warmup(v, root, c, sv->warmup, sizeof sv->warmup, err) ||
        vlayout_read(&sv->layout, v->path, root, c, err) ||
        (sets && read_sets(v, sets, "set", c, 1, &sv->all, err)))
        return -1;
    if (rules && scn_doc_type(rules) != SCN_DOC_SEQ)
        return validate_fail(err, v->path, rules, "rules", "expected a list of rules");
    sv->rules = sim_xcalloc((size_t)scn_doc_count(rules) + 1, sizeof *sv->rules);
    int i = 0;
    for (const scn_node *r = scn_doc_first(rules); r; r = scn_doc_next(r), i++)
        if (read_rule(v, r, i, c, &sv->rules[sv->nrules++], err))
            return -1;
    for (int k = 0; k < sv->nrules; k++)
        sv->layout_mapped |= strstr(sv->rules[k].value, "{id_layout") != NULL;
    return read_regimes(v, scn_doc_get(root, "regimes"), c, sv, err);
}

static int load_table(study_vset *v, const scn_node *root, const char *match, sim_err *err)
{
    const char *table;
    char path[1024];
    if (validate_scalar(v->path, root, "table", &table, err))
        return -1;
    if (validate_path(v->path, table, path, sizeof path))
        return validate_fail(err, v->path, scn_doc_get(root, "table"), "table", "path too long");
    vcsv c;
    serving sv = {.file = v->path};
    vrepeats rp = {0};
    int rc = -1;
    if (vcsv_open(&c, path, err)) {
        sim_err_prefix(err, "%s:%d: table", v->path, scn_doc_line(scn_doc_get(root, "table")));
        goto done;
    }
    if (read_mapping(v, root, &c, &sv, err) || vrepeats_read(&rp, v, root, &c, err))
        goto done;
    for (;;) {
        int got = vcsv_next(&c, err);
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        if (matches(match, vcsv_get(&c, sv.idcol))) {
            table_row(v, &sv, &c);
            vrepeats_add(&rp, &c, v->nrows - 1);
        } else {
            v->skipped++;
        }
    }
    rc = 0;
done:
    vrepeats_mark(&rp, v); /* and frees it */
    serving_free(&sv);
    vcsv_close(&c);
    return rc;
}

/* Transcribed rows: [{id, source, group, set, measured, approx, cannot}, ...]. */
static int transcribed_row(study_vset *v, const scn_node *n, int i, const vaction *all,
                           sim_err *err)
{
    static const char *const keys[] = {"id",       "source", "group",  "set",
                                       "measured", "approx", "cannot", NULL};
    char where[64], p[128];
    snprintf(where, sizeof where, "rows.%d", i);
    if (scn_doc_type(n) != SCN_DOC_MAP)
        return validate_fail(err, v->path, n, where, "expected a map {id, source, measured, ...}");
    const char *id, *src, *group;
    if (validate_keys(v->path, n, where, keys, err) ||
        validate_scalar(v->path, n, "id", &id, err) ||
        validate_scalar(v->path, n, "source", &src, err) ||
        validate_scalar(v->path, n, "group", &group, err))
        return -1;
    snprintf(p, sizeof p, "%s.%s", where, !id ? "id" : "source");
    if (!id || !*id || !src || !*src)
        return validate_fail(err, v->path, n, p,
                             !id ? "missing (the row's name)"
                                 : "missing: a transcribed row cites where it comes from");
    const scn_node *meas = scn_doc_get(n, "measured");
    snprintf(p, sizeof p, "%s.measured", where);
    if (!meas || scn_doc_type(meas) != SCN_DOC_MAP || scn_doc_count(meas) == 0)
        return validate_fail(err, v->path, meas ? meas : n, p,
                             "expected a map from summary metrics to measured values");
    vaction a = {0};
    snprintf(p, sizeof p, "%s", where);
    if (action_fields(v, n, p, NULL, &a, err)) { /* its set, approx and cannot */
        action_free(&a);
        return -1;
    }
    study_vrow *r = validate_row_add(v, id, group ? group : v->name, scn_doc_line(n));
    for (const scn_node *k = scn_doc_first(meas); k; k = scn_doc_next(k)) {
        snprintf(p, sizeof p, "%s.measured.%s", where, scn_doc_key(k));
        int m = add_metric(v, k, p, scn_doc_key(k), err);
        const char *t = scn_doc_text(k);
        if (m < 0 || !t || parse_measured(t, &r->measured[m]) != 0) {
            action_free(&a);
            return m < 0 ? -1 : validate_fail(err, v->path, k, p, "expected a number");
        }
    }
    if (!take(all, NULL, r) && !take(&a, NULL, r))
        check_row(v, r);
    action_free(&a);
    return 0;
}

static int load_rows(study_vset *v, const scn_node *root, const char *match, sim_err *err)
{
    const scn_node *rows = scn_doc_get(root, "rows"), *sets = scn_doc_get(root, "set");
    if (scn_doc_type(rows) != SCN_DOC_SEQ || scn_doc_count(rows) == 0)
        return validate_fail(err, v->path, rows, "rows", "expected a list of transcribed rows");
    if (scn_doc_get(root, "rules") || scn_doc_get(root, "id") || scn_doc_get(root, "measured") ||
        scn_doc_get(root, "id_layout"))
        return validate_fail(
            err, v->path, root, "rows",
            "rules, id, id_layout and measured map a table's columns; transcribed rows "
            "give their own values");
    vaction all = {0};
    char warm[64];
    int rc = sets ? read_sets(v, sets, "set", NULL, 1, &all, err) : 0, i = 0;
    int first = v->nrows;
    for (const scn_node *n = scn_doc_first(rows); n && rc == 0; n = scn_doc_next(n), i++) {
        const scn_node *idn = scn_doc_get(n, "id");
        const char *id = idn ? scn_doc_text(idn) : NULL;
        if (id && !matches(match, id))
            v->skipped++;
        else
            rc = transcribed_row(v, n, i, &all, err);
    }
    action_free(&all);
    /* the metrics are known once every row is read */
    if (rc == 0 && (rc = read_warmup(v, root, NULL, warm, sizeof warm, err)) == 0 && warm[0])
        for (int k = first; k < v->nrows; k++)
            v->rows[k].warmup = strtoll(warm, NULL, 10);
    return rc;
}

static int load_serving(study_vset *v, const scn_node *root, const char *match, sim_err *err)
{
    static const char *const keys[] = {"name",     "kind",      "description", "source", "notes",
                                       "scenario", "table",     "rows",        "id",     "group",
                                       "measured", "set",       "rules",       "warmup", "regimes",
                                       "repeats",  "id_layout", NULL};
    const char *scn;
    if (validate_keys(v->path, root, "", keys, err) ||
        validate_scalar(v->path, root, "scenario", &scn, err))
        return -1;
    if (!scn || !*scn)
        return validate_fail(err, v->path, root, "scenario",
                             "missing (the base scenario each row overrides)");
    if (validate_path(v->path, scn, v->scenario, sizeof v->scenario))
        return validate_fail(err, v->path, scn_doc_get(root, "scenario"), "scenario",
                             "path too long");
    scn_scenario base;
    int rc = study_load(v->scenario, NULL, 0, &base, err);
    if (rc == 0)
        snprintf(v->cost_model, sizeof v->cost_model, "%s",
                 base.profile[0] ? base.profile : "roofline (built in, not measured)");
    scn_free(&base);
    if (rc)
        return sim_err_prefix(err, "%s:%d: scenario", v->path,
                              scn_doc_line(scn_doc_get(root, "scenario")));
    int has_table = scn_doc_get(root, "table") != NULL,
        has_rows = scn_doc_get(root, "rows") != NULL;
    if (has_table == has_rows)
        return validate_fail(err, v->path, root, "table",
                             has_table ? "give a table or transcribed rows, not both"
                                       : "missing (a measurement table, or transcribed rows)");
    return has_table ? load_table(v, root, match, err) : load_rows(v, root, match, err);
}

static int read_notes(study_vset *v, const scn_node *root, sim_err *err)
{
    const scn_node *n = scn_doc_get(root, "notes");
    if (!n)
        return 0;
    if (scn_doc_type(n) != SCN_DOC_SEQ)
        return validate_fail(err, v->path, n, "notes", "expected a list of texts");
    for (const scn_node *t = scn_doc_first(n); t; t = scn_doc_next(t)) {
        if (scn_doc_type(t) != SCN_DOC_SCALAR)
            return validate_fail(err, v->path, t, "notes", "expected a text");
        validate_note(v, "%s", scn_doc_text(t));
    }
    return 0;
}

int study_vset_load(const char *path, const char *match, study_vset *v, sim_err *err)
{
    memset(v, 0, sizeof *v);
    snprintf(v->path, sizeof v->path, "%s", path);
    scn_node *root = NULL;
    study_vset_brief b;
    int rc = -1;
    if (scn_doc_read(path, &root, err) || read_heading(path, root, &b, err) ||
        read_notes(v, root, err))
        goto done;
    snprintf(v->name, sizeof v->name, "%s", b.name);
    snprintf(v->description, sizeof v->description, "%s", b.description);
    snprintf(v->source, sizeof v->source, "%s", b.source);
    v->kind = b.kind;
    rc = v->kind == STUDY_V_SERVING ? load_serving(v, root, match, err)
                                    : validate_ops_load(v, root, match, err);
done:
    scn_doc_free(root);
    return rc;
}

void study_vset_free(study_vset *v)
{
    for (int i = 0; i < v->nrows; i++) {
        study_vrow *r = &v->rows[i];
        free(r->id);
        free(r->group);
        free(r->reason);
        free(r->approx);
        free(r->regime);
        for (int k = 0; k < r->nsets; k++)
            free(r->sets[k]);
        free(r->sets);
    }
    free(v->rows);
    v->rows = NULL;
    v->nrows = v->cap = 0;
    if (v->runs)
        fclose(v->runs);
    v->runs = NULL;
}

/* ---- running the rows ---- */

/* A row's result, written by its worker into the shared mapping. */
typedef struct vslot {
    int ok;
    double predicted[STUDY_VMAX_METRICS];
    int64_t completed, rejected;
    char msg[512]; /* failure */
} vslot;

typedef struct vrun {
    study_vset *v;
    const char *db;
    store_level level;
    vslot *slots;
    const int32_t *tasks; /* task i -> row */
    void (*done)(void *arg, int finished, int total);
    void *done_arg;
    int finished, total; /* rows reported back so far; rows sent */
} vrun;

typedef struct vworker {
    store *s; /* NULL when runs are not stored */
} vworker;

/* The metrics of the requests after the warm-up (arrival order >= skip), by the engine's own
 * definitions. */
typedef struct steady {
    eng_metrics m;
    int64_t skip;
} steady;

static void steady_request(void *st, const eng_request *rq)
{
    steady *s = st;
    if (rq->id >= s->skip)
        eng_metrics_request(&s->m, rq);
}

static const eng_recorder_ops steady_ops = {steady_request, NULL, NULL, NULL};

static void *open_worker(void *arg, sim_err *err)
{
    vrun *a = arg;
    vworker *w = sim_xcalloc(1, sizeof *w);
    if (a->db && !(w->s = store_open(a->db, err))) {
        free(w);
        return NULL;
    }
    return w;
}

static void close_worker(void *worker)
{
    vworker *w = worker;
    store_close(w->s);
    free(w);
}

/* The row's results go to its slot in the shared mapping, not to out. */
static int run_row(void *arg, void *worker, int32_t task, FILE *out, sim_err *err)
{
    vrun *a = arg;
    vworker *w = worker;
    const study_vrow *r = &a->v->rows[task];
    vslot *sl = &a->slots[task];
    scn_scenario scn;
    study_result *res = sim_xcalloc(1, sizeof *res);
    study_sink sink = {.spool = out, .level = a->level};
    steady sd = {.skip = r->warmup};
    eng_metrics_init(&sd.m);
    study_hooks hooks = {.rec = &steady_ops, .rec_st = &sd};
    int rc = study_load(a->v->scenario, (const char *const *)r->sets, r->nsets, &scn, err);
    if (rc == 0)
        rc = study_run(&scn, scn.seed, w->s, w->s ? &sink : NULL, r->warmup > 0 ? &hooks : NULL,
                       res, err);
    if (rc == 0) {
        study_result *from = res;
        if (r->warmup > 0) { /* the compared metrics leave the warm-up out */
            from = sim_xcalloc(1, sizeof *from);
            from->n = eng_metrics_summary(&sd.m, from->m);
        }
        for (int m = 0; m < a->v->nmetrics; m++)
            sl->predicted[m] = study_metric(from, a->v->metric[m].name);
        sl->completed = r->warmup > 0 ? sd.m.completed : res->tot.finished;
        sl->rejected = r->warmup > 0 ? sd.m.rejected : res->tot.rejected;
        if (from != res)
            free(from);
        sl->ok = 1;
    } else {
        snprintf(sl->msg, sizeof sl->msg, "%.500s", err->msg);
    }
    eng_metrics_free(&sd.m);
    scn_free(&scn);
    free(res);
    return rc;
}

/* Copies the len bytes of row r's spooled run at in's position to the end of v->runs. 0, or -1
 * with err. */
static int keep_run(study_vset *v, study_vrow *r, FILE *in, int64_t len, sim_err *err)
{
    if (!v->runs && !(v->runs = study_pool_tmpfile(err)))
        return -1;
    char buf[65536];
    if (fseeko(v->runs, 0, SEEK_END) != 0 || (r->run_at = ftello(v->runs)) < 0)
        return sim_errf(err, "keeping the row's run: %s", strerror(errno));
    for (int64_t left = len; left > 0;) {
        size_t want = left < (int64_t)sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, want, in) != want || fwrite(buf, 1, want, v->runs) != want)
            return sim_errf(err, "keeping the row's run: %s", strerror(errno));
        left -= (int64_t)want;
    }
    r->run_len = len;
    return 0;
}

static int row_done(void *arg, int32_t task, int ok, const char *msg, FILE *in, int64_t len)
{
    vrun *a = arg;
    vslot *sl = &a->slots[task];
    sim_err err = {{0}};
    if (ok && sl->ok && a->db && len > 0 && keep_run(a->v, &a->v->rows[task], in, len, &err) != 0) {
        sl->ok = 0;
        snprintf(sl->msg, sizeof sl->msg, "%.500s", err.msg);
    }
    if (!ok && !a->slots[task].ok && !a->slots[task].msg[0])
        snprintf(a->slots[task].msg, sizeof a->slots[task].msg, "%s",
                 msg && *msg ? msg : "its worker process died");
    a->finished++;
    if (a->done)
        a->done(a->done_arg, a->finished, a->total);
    return 0;
}

/* Copies slot sl into row r. */
static void take_slot(study_vset *v, study_vrow *r, const vslot *sl)
{
    if (!sl->ok) {
        validate_row_fail(r, STUDY_V_FAILED, "%s", sl->msg[0] ? sl->msg : "not run");
        return;
    }
    if (sl->completed == 0) {
        validate_row_fail(r, STUDY_V_FAILED, "no request completed%s (%lld rejected)",
                          r->warmup > 0 ? " after the warm-up" : "", (long long)sl->rejected);
        return;
    }
    for (int m = 0; m < v->nmetrics; m++)
        r->predicted[m] = sl->predicted[m];
    if (sl->rejected > 0) {
        char t[160];
        snprintf(t, sizeof t, "%lld of %lld requests rejected (longer than the context or cache)",
                 (long long)sl->rejected, (long long)(sl->rejected + sl->completed));
        validate_row_approx(r, t);
    }
}

int study_vset_run(study_vset *v, const char *db, int jobs, store_level level,
                   void (*done)(void *arg, int finished, int total), void *arg, sim_err *err)
{
    if (v->kind != STUDY_V_SERVING)
        return 0;
    int32_t *tasks = sim_xmalloc(((size_t)v->nrows + 1) * sizeof *tasks);
    int n = 0;
    for (int i = 0; i < v->nrows; i++)
        if (v->rows[i].status == STUDY_V_OK)
            tasks[n++] = i;
    if (n == 0) {
        free(tasks);
        return 0;
    }
    /* the database is created (or upgraded) here, once, before workers open it side by side */
    store *s = db ? store_open(db, err) : NULL;
    if (db && !s) {
        free(tasks);
        return -1;
    }
    store_close(s);
    size_t bytes = (size_t)v->nrows * sizeof(vslot);
    FILE *tf = tmpfile();
    void *map = MAP_FAILED;
    if (tf && ftruncate(fileno(tf), (off_t)bytes) == 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(tf), 0);
    if (tf)
        fclose(tf);
    if (map == MAP_FAILED) {
        free(tasks);
        return sim_errf(err, "cannot map the rows' results: %s", strerror(errno));
    }
    vrun a = {v, db, level, map, tasks, done, arg, 0, n};
    memset(map, 0, bytes);
    static const study_pool_ops ops = {
        .open = open_worker, .run = run_row, .close = close_worker, .done = row_done};
    study_pool_stats st;
    if (study_pool_run(&ops, &a, jobs, tasks, n, &st, err) != 0) {
        munmap(map, bytes);
        free(tasks);
        return -1;
    }
    for (int i = 0; i < n; i++)
        take_slot(v, &v->rows[tasks[i]], &a.slots[tasks[i]]);
    munmap(map, bytes);
    free(tasks);
    return 0;
}

/* ---- statistics ---- */

double study_quantile(const double *sorted, int n, double p)
{
    if (n <= 0)
        return NAN;
    double pos = (n - 1) * (p < 0 ? 0 : p > 1 ? 1 : p);
    int lo = (int)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    return sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
}

double study_vrow_error(const study_vrow *r, int m)
{
    if (r->status != STUDY_V_OK || !isfinite(r->measured[m]) || !isfinite(r->predicted[m]) ||
        r->measured[m] == 0)
        return NAN;
    return r->predicted[m] / r->measured[m] - 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The name a row is summarised under by `by` (NULL: none). */
static const char *key_of(const study_vrow *r, study_vby by, char *buf, size_t len)
{
    if (by == STUDY_VBY_GROUP)
        return r->group;
    if (by == STUDY_VBY_REGIME)
        return r->regime;
    if (!r->key.engine[0])
        return NULL;
    snprintf(buf, len, "%s %s %s %s", r->key.engine, r->key.generation, r->key.kind,
             r->key.serving);
    return buf;
}

/* The statistics of metric m over the rows whose `by` key is g (NULL: every row). */
static int stat_of(const study_vset *v, study_vby by, const char *g, int m, double *abs_e,
                   double *sgn, study_vstat *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->group, sizeof st->group, "%s", g ? g : "all");
    st->metric = m;
    st->worst_row = -1;
    int n = 0;
    for (int i = 0; i < v->nrows; i++) {
        char buf[64];
        double e = study_vrow_error(&v->rows[i], m);
        const char *k = key_of(&v->rows[i], by, buf, sizeof buf);
        if (isnan(e) || (g && (!k || strcmp(k, g) != 0)))
            continue;
        sgn[n] = e;
        abs_e[n++] = fabs(e);
        if (st->worst_row < 0 || fabs(e) > st->worst_abs) {
            st->worst_abs = fabs(e);
            st->worst_row = i;
        }
    }
    qsort(abs_e, (size_t)n, sizeof *abs_e, cmp_double);
    qsort(sgn, (size_t)n, sizeof *sgn, cmp_double);
    st->n = n;
    st->median_abs = study_quantile(abs_e, n, 0.5);
    st->p90_abs = study_quantile(abs_e, n, 0.9);
    st->signed_median = study_quantile(sgn, n, 0.5);
    return n;
}

/* The statistics by `by`, its keys in order of first appearance, then every row when all. */
static int stats(const study_vset *v, study_vby by, int all, study_vstat **out)
{
    char(*keys)[64] = sim_xmalloc(((size_t)v->nrows + 1) * sizeof *keys);
    int ng = 0;
    for (int i = 0; i < v->nrows; i++) {
        char buf[64];
        const char *k = key_of(&v->rows[i], by, buf, sizeof buf);
        int seen = !k;
        for (int j = ng - 1; j >= 0 && !seen; j--)
            seen = strcmp(keys[j], k) == 0;
        if (!seen)
            snprintf(keys[ng++], sizeof keys[0], "%s", k);
    }
    double *a = sim_xmalloc(((size_t)v->nrows + 1) * sizeof *a);
    double *s = sim_xmalloc(((size_t)v->nrows + 1) * sizeof *s);
    *out = sim_xmalloc(((size_t)(ng + 1) * (size_t)(v->nmetrics + 1)) * sizeof **out);
    int n = 0;
    for (int g = 0; g < ng + all; g++)
        for (int m = 0; m < v->nmetrics; m++)
            if (stat_of(v, by, g < ng ? keys[g] : NULL, m, a, s, &(*out)[n]) > 0)
                n++;
    free(keys);
    free(a);
    free(s);
    return n;
}

int study_vset_stats(const study_vset *v, study_vstat **out)
{
    return stats(v, STUDY_VBY_GROUP, 1, out);
}

int study_vset_stats_by(const study_vset *v, study_vby by, study_vstat **out)
{
    return stats(v, by, 0, out);
}

void study_vset_counts(const study_vset *v, int64_t *ok, int64_t *cannot, int64_t *failed)
{
    *ok = *cannot = *failed = 0;
    for (int i = 0; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        if (r->status != STUDY_V_REPEAT) /* no measurement of its own */
            *(r->status == STUDY_V_OK       ? ok
              : r->status == STUDY_V_CANNOT ? cannot
                                            : failed) += r->count;
    }
}

/* ---- storing ---- */

int study_vset_store(study_vset *v, const study_vstat *st, int nst, store *s, int64_t *id,
                     sim_err *err)
{
    int64_t ok, cannot, failed;
    study_vset_counts(v, &ok, &cannot, &failed);
    store_validation_info info = {.name = v->name,
                                  .file = v->path,
                                  .kind = kind_names[v->kind],
                                  .description = v->description,
                                  .source = v->source,
                                  .cost_model = v->cost_model,
                                  .notes = v->notes,
                                  .version = study_version(),
                                  .rows = ok + cannot + failed,
                                  .ok = ok,
                                  .cannot = cannot,
                                  .failed = failed};
    store_vwriter *w = store_validation_begin(s, &info, err);
    if (!w)
        return -1;
    store_run_summary *sum = sim_xmalloc(sizeof *sum);
    for (int i = 0; i < v->nrows; i++) {
        study_vrow *r = &v->rows[i];
        if (r->status == STUDY_V_REPEAT) /* the set's notes count them; the first is stored */
            continue;
        /* the row's run, inside the validation's transaction */
        if (r->status == STUDY_V_OK && r->run_len > 0) {
            if (fseeko(v->runs, r->run_at, SEEK_SET) != 0 ||
                store_run_replay(s, v->runs, r->run_len, NULL, NULL, sum, err) != 0)
                goto fail;
            r->run_id = sum->run_id;
        }
        store_vrow row = {.seq = i,
                          .row_id = r->id,
                          .grp = r->group,
                          .line = r->line,
                          .measurements = r->count,
                          .status = (store_vstatus)r->status,
                          .reason = r->reason,
                          .approx = r->approx,
                          .run_id = r->run_id};
        if (store_validation_row(w, &row, err))
            goto fail;
        for (int m = 0; m < v->nmetrics; m++)
            if ((isfinite(r->measured[m]) || isfinite(r->predicted[m])) &&
                store_validation_value(w, i, v->metric[m].name, m, r->measured[m], r->predicted[m],
                                       err))
                goto fail;
    }
    for (int k = 0; k < nst; k++) {
        store_vstat sv = {.grp = st[k].group,
                          .metric = v->metric[st[k].metric].name,
                          .n = st[k].n,
                          .median_abs = st[k].median_abs,
                          .p90_abs = st[k].p90_abs,
                          .worst_abs = st[k].worst_abs,
                          .signed_median = st[k].signed_median,
                          .worst_row = st[k].worst_row >= 0 ? v->rows[st[k].worst_row].id : NULL};
        if (store_validation_stat(w, &sv, err))
            goto fail;
    }
    free(sum);
    return store_validation_finish(w, id, err);
fail:
    free(sum);
    store_validation_abort(w);
    return -1;
}
