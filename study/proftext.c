/*
 * proftext.c: a stored profile as text, and back (see study_calibrate.h). The text keeps what
 * the database keeps of a profile but its fits: the metadata as "# key: value" lines, then one
 * CSV row per measured point, numbers in %.17g so they read back to the bit. Importing refits
 * the points with the recorded seed, which gives the fits the profile was stored with, so a
 * profile measured on one machine can be shipped and used on another.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "store_profile.h"
#include "study_calibrate.h"

#define PT_MAGIC "# llmsim profile, text format 1"
#define PT_COLUMNS "op,x,y,t_ns,p10_ns,p90_ns,runs"

typedef struct pt_key {
    const char *key;
    size_t off, len;
} pt_key;

#define PT_KEY(k, member)                                                                          \
    {                                                                                              \
        k, offsetof(cal_profile, member), sizeof(((cal_profile *)0)->member)                       \
    }
static const pt_key pt_keys[] = {
    PT_KEY("name", name),         PT_KEY("kind", kind),     PT_KEY("backend", backend),
    PT_KEY("model", model),       PT_KEY("gpu", gpu),       PT_KEY("device", device),
    PT_KEY("versions", versions), PT_KEY("source", source), PT_KEY("created", created),
    PT_KEY("dtype", dtype),
};
#define PT_NKEYS ((int)(sizeof pt_keys / sizeof pt_keys[0]))

/* A metadata text on one line: line breaks become spaces. */
static void put_line(FILE *f, const char *key, const char *v)
{
    fprintf(f, "# %s: ", key);
    for (; *v; v++)
        fputc(*v == '\n' || *v == '\r' ? ' ' : *v, f);
    fputc('\n', f);
}

int study_profile_write(const cal_profile *p, FILE *f)
{
    fprintf(f, "%s\n", PT_MAGIC);
    for (int i = 0; i < PT_NKEYS; i++)
        put_line(f, pt_keys[i].key, (const char *)p + pt_keys[i].off);
    fprintf(f, "# tp: %d\n# seed: %llu\n%s\n", p->tp, (unsigned long long)p->seed, PT_COLUMNS);
    for (int i = 0; i < p->npts; i++) {
        const cal_point *q = &p->pts[i];
        fprintf(f, "%s,%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", cal_profile_op_name(q->op), q->x, q->y,
                q->t_ns, q->p10_ns, q->p90_ns, q->runs);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- reading ---- */

typedef struct pt_reader {
    const char *path;
    int line;
    unsigned seen; /* bit i: pt_keys[i] given; bits PT_NKEYS, +1: tp, seed */
} pt_reader;

static int bad(const pt_reader *r, sim_err *err, const char *what)
{
    return sim_errf(err, "%s:%d: %s", r->path, r->line, what);
}

static int read_int(const pt_reader *r, const char *v, long long lo, long long hi, long long *out,
                    sim_err *err)
{
    char *end;
    errno = 0;
    *out = strtoll(v, &end, 10);
    if (!*v || *end || errno || *out < lo || *out > hi)
        return sim_errf(err, "%s:%d: '%s' is not an integer in %lld..%lld", r->path, r->line, v, lo,
                        hi);
    return 0;
}

/* One "# key: value" line into p. */
static int read_meta(pt_reader *r, char *line, cal_profile *p, sim_err *err)
{
    char *colon = strstr(line, ": ");
    if (strncmp(line, "# ", 2) != 0 || !colon)
        return bad(r, err, "expected a '# key: value' line or the columns " PT_COLUMNS);
    *colon = '\0';
    const char *key = line + 2, *v = colon + 2;
    long long n;
    for (int i = 0; i < PT_NKEYS; i++) {
        if (strcmp(key, pt_keys[i].key) != 0)
            continue;
        if (strlen(v) >= pt_keys[i].len)
            return sim_errf(err, "%s:%d: %s is longer than %zu characters", r->path, r->line, key,
                            pt_keys[i].len - 1);
        snprintf((char *)p + pt_keys[i].off, pt_keys[i].len, "%s", v);
        r->seen |= 1u << i;
        return 0;
    }
    if (strcmp(key, "tp") == 0) {
        if (read_int(r, v, 1, 1024, &n, err))
            return -1;
        p->tp = (int)n;
        r->seen |= 1u << PT_NKEYS;
        return 0;
    }
    if (strcmp(key, "seed") == 0) {
        if (read_int(r, v, 0, (long long)9e18, &n, err))
            return -1;
        p->seed = (uint64_t)n;
        r->seen |= 1u << (PT_NKEYS + 1);
        return 0;
    }
    return sim_errf(err, "%s:%d: unknown key '%s'", r->path, r->line, key);
}

static int read_num(const pt_reader *r, const char *field, const char *v, double lo, double *out,
                    sim_err *err)
{
    char *end;
    *out = strtod(v, &end);
    if (!*v || *end || !isfinite(*out) || *out < lo)
        return sim_errf(err, "%s:%d: %s '%s' is not a number of at least %g", r->path, r->line,
                        field, v, lo);
    return 0;
}

/* One point row into p. */
static int read_point(const pt_reader *r, char *line, cal_profile *p, sim_err *err)
{
    char *f[8];
    const char *why = NULL;
    int n = sim_csv_split(line, SIM_CSV_TRIM, f, 8, &why);
    if (n != 7)
        return bad(r, err, why ? why : "expected 7 fields: " PT_COLUMNS);
    cal_point q = {0};
    long long runs;
    q.op = cal_profile_op_parse(f[0]);
    if (q.op < 0)
        return sim_errf(err, "%s:%d: unknown operator '%s'", r->path, r->line, f[0]);
    if (read_num(r, "x", f[1], 1e-9, &q.x, err) || read_num(r, "y", f[2], 0, &q.y, err) ||
        read_num(r, "t_ns", f[3], 1e-9, &q.t_ns, err) ||
        read_num(r, "p10_ns", f[4], 0, &q.p10_ns, err) ||
        read_num(r, "p90_ns", f[5], 0, &q.p90_ns, err) || read_int(r, f[6], 0, 1 << 30, &runs, err))
        return -1;
    q.runs = (int)runs;
    cal_profile_add_point(p, &q);
    return 0;
}

/* The line without its line break; 0 at the end of the file. */
static int next_line(FILE *f, pt_reader *r, char *buf, size_t len, sim_err *err)
{
    if (!fgets(buf, (int)len, f))
        return 0;
    r->line++;
    size_t n = strcspn(buf, "\r\n");
    if (buf[n] == '\0' && n + 1 == len) { /* full: too long unless the file ends here */
        int c = fgetc(f);
        if (c != EOF)
            return bad(r, err, "line too long");
    }
    buf[n] = '\0';
    return 1;
}

/* The whole text: magic line, metadata, columns, points. */
static int read_text(FILE *f, pt_reader *r, cal_profile *p, sim_err *err)
{
    char buf[2048];
    int rc = next_line(f, r, buf, sizeof buf, err);
    if (rc < 0)
        return -1;
    if (rc == 0 || strcmp(buf, PT_MAGIC) != 0)
        return bad(r, err, "not a profile text (expected '" PT_MAGIC "')");
    while ((rc = next_line(f, r, buf, sizeof buf, err)) > 0 && strcmp(buf, PT_COLUMNS) != 0)
        if (read_meta(r, buf, p, err))
            return -1;
    if (rc <= 0)
        return rc < 0 ? -1 : bad(r, err, "no columns line " PT_COLUMNS);
    for (int i = 0; i < PT_NKEYS + 2; i++)
        if (!(r->seen & (1u << i)))
            return sim_errf(err, "%s: no '# %s:' line", r->path,
                            i < PT_NKEYS    ? pt_keys[i].key
                            : i == PT_NKEYS ? "tp"
                                            : "seed");
    while ((rc = next_line(f, r, buf, sizeof buf, err)) > 0)
        if (buf[0] && read_point(r, buf, p, err))
            return -1;
    if (rc == 0 && p->npts == 0)
        return bad(r, err, "no points");
    return rc;
}

int study_profile_read(const char *path, cal_profile **out, sim_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return sim_errf(err, "%s: %s", path, strerror(errno));
    pt_reader r = {path, 0, 0};
    cal_profile *p = cal_profile_new("");
    int rc = read_text(f, &r, p, err);
    fclose(f);
    if (rc < 0) {
        cal_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

/* The model a profile text names: a catalog model, else the config.json folder of that name
 * beside the text (a layer measured from a config.json travels with it). */
static int text_model(const char *path, const char *model, eng_model *m, sim_err *err)
{
    if (study_model(model, m, NULL) == 0)
        return 0;
    const char *slash = strrchr(path, '/');
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, model);
    if (!strchr(model, '/') && study_model(dir, m, NULL) == 0)
        return 0;
    return sim_errf(err,
                    "model '%s' is neither in the catalog nor a config.json folder beside the "
                    "profile (%s)",
                    model, dir);
}

int study_profile_import(const study_profile_in *in, cal_profile **out, sim_err *err)
{
    cal_profile *p;
    *out = NULL;
    if (study_profile_read(in->path, &p, err))
        return -1;
    if (in->out)
        snprintf(p->name, sizeof p->name, "%s", in->out);
    store *s = NULL;
    /* the points are read and fitted before the database is opened: a bad file writes nothing */
    if (text_model(in->path, p->model, &p->dims, err) || cal_profile_fit(p, p->seed, err) ||
        !(s = store_open(in->db, err)) || store_profile_save(s, p, in->replace, err)) {
        sim_err_prefix(err, "%s", in->path);
        store_close(s);
        cal_profile_free(p);
        return -1;
    }
    store_close(s);
    *out = p;
    return 0;
}
