/*
 * vidur.c: reading Vidur's profiling CSVs into profile points.
 *
 * The CSV reader handles what these files contain: a header row, comma-separated fields, no
 * embedded commas (a field in double quotes is unquoted). Raw medians are collected, sorted by
 * (operator, x, y) and repeated shapes averaged, so a duplicated row can never sit on both
 * sides of the held-out split.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "cal_int.h"
#include "csv.h"
#include "vidur.h"

/* Vidur's names of GPUs and models, and the catalog rows they are. */
static const cal_name_pair gpu_map[] = {{"a100", "a100-80gb"}, {"h100", "h100-sxm"}};

static const cal_name_pair model_map[] = {
    {"Meta-Llama-3-8B", "llama-3-8b"},
    {"Meta-Llama-3-70B", "llama-3-70b"},
    {"Llama-2-7b-hf", "llama-2-7b"},
    {"Llama-2-70b-hf", "llama-2-70b"},
};

const char *cal_vidur_gpu(const char *vidur_gpu)
{
    return CAL_NAME_LOOKUP(gpu_map, vidur_gpu);
}

const char *cal_vidur_model(const char *vidur_model)
{
    if (!vidur_model)
        return NULL;
    const char *base = strrchr(vidur_model, '/');
    base = base ? base + 1 : vidur_model;
    return CAL_NAME_LOOKUP(model_map, base);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Looks for <base>/compute/<gpu>/<model>/mlp.csv, and when model names no organisation, for
 * <base>/compute/<gpu>/<any org>/<model>/mlp.csv; writes the model directory into out. */
static int find_under(const char *base, const char *gpu, const char *model, char *out, size_t len)
{
    char path[2400];
    if (snprintf(path, sizeof path, "%s/compute/%s/%s/mlp.csv", base, gpu, model) >=
        (int)sizeof path)
        return -1;
    if (is_file(path))
        return snprintf(out, len, "%s/compute/%s/%s", base, gpu, model) < (int)len ? 0 : -1;
    if (strchr(model, '/'))
        return -1;
    char gdir[1024];
    if (snprintf(gdir, sizeof gdir, "%s/compute/%s", base, gpu) >= (int)sizeof gdir)
        return -1;
    DIR *d = opendir(gdir);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = -1;
    while (rc != 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s/%s/mlp.csv", gdir, e->d_name, model) >=
            (int)sizeof path)
            continue;
        if (is_file(path))
            rc = snprintf(out, len, "%s/%s/%s", gdir, e->d_name, model) < (int)len ? 0 : -1;
    }
    closedir(d);
    return rc;
}

int cal_vidur_find(const char *dir, const char *gpu, const char *model, char *out, size_t len,
                   sim_err *err)
{
    static const char *const prefixes[] = {"", "/data/profiling", "/profiling"};
    char base[1024];
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        if (snprintf(base, sizeof base, "%s%s", dir, prefixes[i]) >= (int)sizeof base)
            continue;
        if (find_under(base, gpu, model, out, len) == 0)
            return 0;
    }
    return sim_errf(err,
                    "%s: no compute/%s/%s/mlp.csv there (nor under data/profiling/); Vidur's "
                    "layout is data/profiling/compute/<gpu>/<org>/<model>/mlp.csv",
                    dir, gpu, model);
}

/* ---- CSV ---- */

typedef struct csv {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    int lineno;
    char **field;
    int nfield, fcap;
    const char *why; /* what is wrong with a malformed row */
} csv;

/* Reads the next row into c->field (split by sim_csv_split); 1 on a row, 0 at end of file, -1
 * on a malformed row (c->why says how). */
static int csv_row(csv *c)
{
    ssize_t n = getline(&c->line, &c->cap, c->f);
    if (n < 0)
        return 0;
    c->lineno++;
    while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
        c->line[--n] = '\0';
    int w = sim_csv_width(c->line);
    if (w > c->fcap) {
        c->fcap = w > 64 ? w : 64;
        c->field = sim_xrealloc(c->field, (size_t)c->fcap * sizeof *c->field);
    }
    c->nfield = sim_csv_split(c->line, 0, c->field, c->fcap, &c->why);
    return c->nfield < 0 ? -1 : 1;
}

/* A row that is malformed or has fewer fields than the header's nh: -1 with err, else 0. */
static int bad_row(const csv *c, int nh, sim_err *err)
{
    if (c->nfield < 0)
        return sim_errf(err, "%s:%d: %s", c->path, c->lineno, c->why);
    if (c->nfield < nh)
        return sim_errf(err, "%s:%d: %d fields, the header has %d", c->path, c->lineno, c->nfield,
                        nh);
    return 0;
}

/* Column index of name in the header row held in hdr (n names); -1 when absent. */
static int column(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(hdr[i], name) == 0)
            return i;
    return -1;
}

/* Parses field i of the current row as a finite number; -1 with err when empty, malformed,
 * out of range, infinite or NaN (strtod reads "inf" and "nan"; such a value would later be
 * converted to an integer or poison a fit). */
static int num(const csv *c, char **hdr, int i, double *out, sim_err *err)
{
    const char *s = i < c->nfield ? c->field[i] : "";
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
            *out = s[0] == 'T';
            return 0;
        }
        return sim_errf(err, "%s:%d: column %s: '%s' is not a number", c->path, c->lineno, hdr[i],
                        s);
    }
    *out = v;
    return 0;
}

/* Field i as a shape size: a whole number in [lo, INT32_MAX] (tokens, sequences, cached
 * tokens become integers in the cost model); -1 with err naming line and column. */
static int size_field(const csv *c, char **hdr, int i, double lo, double *out, sim_err *err)
{
    if (num(c, hdr, i, out, err))
        return -1;
    if (*out != floor(*out) || *out < lo || *out > INT32_MAX)
        return sim_errf(err, "%s:%d: column %s: %s is not a size (a whole number in %g .. %d)",
                        c->path, c->lineno, hdr[i], c->field[i], lo, INT32_MAX);
    return 0;
}

/* An operator time in ms, read as a number: usable when in (0, 1e12) (a longer one would not
 * stay finite in ns). */
static int usable_ms(double t)
{
    return t > 0 && t < 1e12;
}

/* ---- collected points ---- */

typedef struct raw {
    cal_point *v;
    int n, cap;
} raw;

static void raw_add(raw *r, int op, double x, double y, double t_ns)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->v = sim_xrealloc(r->v, (size_t)r->cap * sizeof *r->v);
    }
    r->v[r->n++] = (cal_point){.op = op, .x = x, .y = y, .t_ns = t_ns};
}

static int cmp_point(const void *a, const void *b)
{
    const cal_point *p = a, *q = b;
    if (p->op != q->op)
        return p->op - q->op;
    if (p->x != q->x)
        return (p->x > q->x) - (p->x < q->x);
    return (p->y > q->y) - (p->y < q->y);
}

/* Adds the points of r to p, repeated shapes averaged. */
static void raw_flush(raw *r, cal_profile *p)
{
    if (r->n == 0) /* r->v is NULL then, which qsort may not be given */
        return;
    qsort(r->v, (size_t)r->n, sizeof *r->v, cmp_point);
    for (int i = 0; i < r->n;) {
        int j = i;
        double sum = 0;
        while (j < r->n && cmp_point(&r->v[i], &r->v[j]) == 0)
            sum += r->v[j++].t_ns;
        cal_point pt = r->v[i];
        pt.t_ns = sum / (j - i);
        pt.runs = 0;
        cal_profile_add_point(p, &pt);
        i = j;
    }
}

/* The shape columns a file must have and the model sizes they must equal. */
typedef struct shape_col {
    const char *name;
    double want;
    int col;
} shape_col;

static int open_csv(csv *c, const char *path, sim_err *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f)
        return sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
    int rc = csv_row(c);
    if (rc <= 0) { /* getline allocated the line buffer even at end of file */
        fclose(c->f);
        free(c->line);
        free(c->field);
        return rc ? sim_errf(err, "%s:1: %s", path, c->why)
                  : sim_errf(err, "%s: empty file (no header row)", path);
    }
    return 0;
}

static void close_csv(csv *c, char **hdr)
{
    if (c->f)
        fclose(c->f);
    free(c->line);
    free(c->field);
    if (hdr) {
        for (int i = 0; hdr[i]; i++)
            free(hdr[i]);
        free(hdr);
    }
}

/* Copies the header row (NULL-terminated). */
static char **take_header(csv *c)
{
    char **h = sim_xcalloc((size_t)c->nfield + 1, sizeof *h);
    for (int i = 0; i < c->nfield; i++)
        h[i] = sim_xstrdup(c->field[i]);
    return h;
}

/* Checks one row's shape columns against the model; 0 when it matches. */
static int row_matches(const csv *c, char **hdr, shape_col *sc, int nsc, sim_err *err)
{
    for (int k = 0; k < nsc; k++) {
        double v;
        if (num(c, hdr, sc[k].col, &v, err))
            return -1;
        if (v != sc[k].want)
            return sim_errf(err, "%s:%d: column %s is %g but the model has %g", c->path, c->lineno,
                            sc[k].name, v, sc[k].want);
    }
    return 0;
}

static int find_cols(const csv *c, char **hdr, shape_col *sc, int nsc, sim_err *err)
{
    for (int k = 0; k < nsc; k++) {
        sc[k].col = column(hdr, c->nfield, sc[k].name);
        if (sc[k].col < 0)
            return sim_errf(err, "%s:1: missing column %s", c->path, sc[k].name);
    }
    return 0;
}

/* The columns of need, in order, into col; -1 with err naming the first one missing. */
static int need_cols(const csv *c, char **hdr, const char *const *need, int n, int *col,
                     sim_err *err)
{
    for (int k = 0; k < n; k++)
        if ((col[k] = column(hdr, c->nfield, need[k])) < 0)
            return sim_errf(err, "%s:1: missing column %s", c->path, need[k]);
    return 0;
}

static const struct {
    const char *vidur;
    int op;
} mlp_ops[] = {
    {"emb", CAL_OP_EMBED},
    {"input_layernorm", KERN_OP_RMSNORM},
    {"attn_pre_proj", KERN_OP_QKV_PROJ},
    {"attn_rope", KERN_OP_ROPE},
    {"attn_post_proj", KERN_OP_O_PROJ},
    {"post_attention_layernorm", KERN_OP_RMSNORM},
    {"mlp_up_proj", KERN_OP_MLP_UP_GATE},
    {"mlp_act", KERN_OP_MLP_ACT},
    {"mlp_down_proj", KERN_OP_MLP_DOWN},
    {"add", KERN_OP_ADD},
};
#define N_MLP_OPS ((int)(sizeof mlp_ops / sizeof mlp_ops[0]))

/* The usable times of an MLP row's operators (columns tcol; -1 absent) as points at tokens. */
static void mlp_row_times(const csv *c, char **hdr, const int *tcol, double tokens, raw *r,
                          sim_err *err)
{
    double t;
    for (int k = 0; k < N_MLP_OPS; k++)
        if (tcol[k] >= 0 && c->field[tcol[k]][0] && num(c, hdr, tcol[k], &t, err) == 0 &&
            usable_ms(t))
            raw_add(r, mlp_ops[k].op, tokens, 0, t * 1e6);
}

/* 0 when a table had rows of tensor parallelism tp, else -1 with err saying it had none. */
static int tp_rows_found(const char *path, int tp, int rows, sim_err *err)
{
    return rows ? 0 : sim_errf(err, "%s: no rows with num_tensor_parallel_workers = %d", path, tp);
}

static int read_mlp(const char *path, const eng_model *m, int tp, raw *r, int *rows, sim_err *err)
{
    csv c;
    if (open_csv(&c, path, err))
        return -1;
    char **hdr = take_header(&c);
    int nh = c.nfield, rc = -1, tcol[N_MLP_OPS];
    shape_col sc[] = {{"n_embd", m->hidden, 0},
                      {"n_head", m->heads, 0},
                      {"n_kv_head", m->kv_heads, 0},
                      {"n_expanded_embd", m->intermediate, 0},
                      {"vocab_size", m->vocab, 0}};
    static const char *const need[] = {"num_tokens", "num_tensor_parallel_workers"};
    int ncol[2];
    if (find_cols(&c, hdr, sc, 5, err) || need_cols(&c, hdr, need, 2, ncol, err))
        goto done;
    int ntok = ncol[0], ntp = ncol[1];
    for (int k = 0; k < N_MLP_OPS; k++) {
        char name[96];
        snprintf(name, sizeof name, "time_stats.%s.median", mlp_ops[k].vidur);
        tcol[k] = column(hdr, nh, name);
    }
    *rows = 0;
    while (csv_row(&c)) {
        double tokens, workers;
        if (bad_row(&c, nh, err) || num(&c, hdr, ntp, &workers, err))
            goto done;
        if (workers != (double)tp) /* compared as read: a cast of 1e20 or a fraction lies */
            continue;
        if (size_field(&c, hdr, ntok, 1, &tokens, err) || row_matches(&c, hdr, sc, 5, err))
            goto done;
        (*rows)++;
        mlp_row_times(&c, hdr, tcol, tokens, r, err);
    }
    rc = tp_rows_found(path, tp, *rows, err);
done:
    close_csv(&c, hdr);
    return rc;
}

/* attention.csv's columns the reader uses, in need_cols order. */
enum { AT_TP, AT_BATCH, AT_CHUNK, AT_KV, AT_PREFILL, AT_T_PREFILL, AT_T_DECODE, AT_NCOLS };
static const char *const attention_cols[AT_NCOLS] = {"num_tensor_parallel_workers",
                                                     "batch_size",
                                                     "prefill_chunk_size",
                                                     "kv_cache_size",
                                                     "is_prefill",
                                                     "time_stats.attn_prefill.median",
                                                     "time_stats.attn_decode.median"};

/* One attention.csv row: 1 when it is one of tp's with a usable time (its point added to r),
 * 0 when skipped, -1 with err. */
static int attention_row(const csv *c, char **hdr, const int *col, shape_col *sc, int tp, raw *r,
                         sim_err *err)
{
    double v[AT_T_PREFILL], t;
    if (num(c, hdr, col[AT_TP], &v[AT_TP], err) ||
        num(c, hdr, col[AT_PREFILL], &v[AT_PREFILL], err))
        return -1;
    if (v[AT_TP] != (double)tp)
        return 0;
    if (size_field(c, hdr, col[AT_BATCH], 1, &v[AT_BATCH], err) ||
        size_field(c, hdr, col[AT_CHUNK], 0, &v[AT_CHUNK], err) ||
        size_field(c, hdr, col[AT_KV], 0, &v[AT_KV], err) || row_matches(c, hdr, sc, 3, err))
        return -1;
    int prefill = v[AT_PREFILL] != 0;
    int tc = prefill ? col[AT_T_PREFILL] : col[AT_T_DECODE];
    if (!c->field[tc][0])
        return 0;
    if (num(c, hdr, tc, &t, err))
        return -1;
    if (!usable_ms(t))
        return 0;
    if (!prefill) /* one sequence per row: chunk after kv_cache_size cached tokens */
        raw_add(r, KERN_OP_ATTN_DECODE, v[AT_BATCH], v[AT_KV], t * 1e6);
    else if (v[AT_BATCH] == 1)
        raw_add(r, KERN_OP_ATTN_PREFILL, v[AT_CHUNK], v[AT_KV], t * 1e6);
    return 1;
}

static int read_attention(const char *path, const eng_model *m, int tp, raw *r, int *rows,
                          sim_err *err)
{
    csv c;
    if (open_csv(&c, path, err))
        return -1;
    char **hdr = take_header(&c);
    int nh = c.nfield, rc = -1, col[AT_NCOLS], got = 0;
    shape_col sc[] = {
        {"n_embd", m->hidden, 0}, {"n_q_head", m->heads, 0}, {"n_kv_head", m->kv_heads, 0}};
    if (find_cols(&c, hdr, sc, 3, err) || need_cols(&c, hdr, attention_cols, AT_NCOLS, col, err))
        goto done;
    *rows = 0;
    while (csv_row(&c)) {
        if (bad_row(&c, nh, err) || (got = attention_row(&c, hdr, col, sc, tp, r, err)) < 0)
            goto done;
        *rows += got;
    }
    rc = tp_rows_found(path, tp, *rows, err);
done:
    close_csv(&c, hdr);
    return rc;
}

/* Reads one network table (all_reduce.csv or send_recv.csv): the rows of `workers` GPUs all in
 * one node (devices_per_node == num_workers), as points of op with x = size in bytes (Vidur's
 * predictor reads `size` as bytes: tokens = size / hidden / 2). Returns the rows read (0 when
 * none match), or -1 with err. */
static int read_network(const char *path, const char *name, int op, int workers, raw *r,
                        sim_err *err)
{
    csv c;
    if (open_csv(&c, path, err))
        return -1;
    char **hdr = take_header(&c);
    int nh = c.nfield, rows = -1;
    char tcol[64];
    snprintf(tcol, sizeof tcol, "time_stats.%s.median", name);
    const char *need[4] = {"num_workers", "devices_per_node", "size", tcol};
    int col[4];
    if (need_cols(&c, hdr, need, 4, col, err))
        goto done;
    rows = 0;
    while (csv_row(&c)) {
        double v[4];
        if (bad_row(&c, nh, err)) {
            rows = -1;
            goto done;
        }
        for (int k = 0; k < 4; k++)
            if (num(&c, hdr, col[k], &v[k], err)) {
                rows = -1;
                goto done;
            }
        if ((int)v[0] != workers || (int)v[1] != workers || !(v[2] > 0) || !(v[3] > 0))
            continue;
        raw_add(r, op, v[2], 0, v[3] * 1e6);
        rows++;
    }
done:
    close_csv(&c, hdr);
    return rows;
}

/* MODEL: Vidur's network tables sit in data/profiling/network/<node>/ beside compute/, one
 * folder per node type of a GPU (a100_dgx: an 8-GPU NVSwitch node; a100_pairwise_nvlink: GPUs
 * joined in pairs). The first of <gpu>_dgx and <gpu>_pairwise_nvlink with all-reduce rows at
 * tp GPUs within a node is read, with its send_recv.csv (2 GPUs). Writes what was read into
 * note; 0 when nothing was found (the roofline then prices all-reduce), -1 with err. */
static int read_networks(const char *model_dir, int tp, raw *r, char *note, size_t notelen,
                         sim_err *err)
{
    static const char *const kinds[] = {"dgx", "pairwise_nvlink"};
    char base[1100], gpu[128];
    snprintf(base, sizeof base, "%s", model_dir);
    for (int up = 0; up < 3; up++) { /* <compute>/<gpu>/<org>/<model> -> <compute>/<gpu> */
        char *slash = strrchr(base, '/');
        if (!slash)
            return 0;
        *slash = '\0';
        if (up == 1) {
            const char *g = strrchr(base, '/');
            snprintf(gpu, sizeof gpu, "%.100s", g ? g + 1 : base);
        }
    }
    char *slash = strrchr(base, '/'); /* base is <profiling>/compute */
    if (!slash || strcmp(slash + 1, "compute") != 0)
        return 0;
    *slash = '\0';
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char ar[1400], sr[1400];
        snprintf(ar, sizeof ar, "%s/network/%s_%s/all_reduce.csv", base, gpu, kinds[k]);
        snprintf(sr, sizeof sr, "%s/network/%s_%s/send_recv.csv", base, gpu, kinds[k]);
        if (!is_file(ar))
            continue;
        int before = r->n, n = read_network(ar, "all_reduce", CAL_OP_ALLREDUCE, tp, r, err);
        if (n < 0)
            return -1;
        if (n == 0)
            continue;
        int ns = is_file(sr) ? read_network(sr, "send_recv", CAL_OP_SEND_RECV, 2, r, err) : 0;
        if (ns < 0) {
            r->n = before;
            return -1;
        }
        snprintf(note, notelen, "; %s: %d rows at %d GPUs; send_recv.csv: %d rows", ar, n, tp, ns);
        return 0;
    }
    snprintf(note, notelen, "; no network table for %d GPUs: the roofline prices all-reduce", tp);
    return 0;
}

int cal_vidur_read(const char *model_dir, const char *attention_csv, const eng_model *m, int tp,
                   cal_profile *p, char *note, size_t notelen, sim_err *err)
{
    char mlp[1100], attn[1100];
    if (snprintf(mlp, sizeof mlp, "%s/mlp.csv", model_dir) >= (int)sizeof mlp ||
        snprintf(attn, sizeof attn, attention_csv ? "%s" : "%s/attention.csv",
                 attention_csv ? attention_csv : model_dir) >= (int)sizeof attn)
        return sim_errf(err, "%s: path too long", model_dir);
    raw r = {0};
    char net[1600] = "";
    int mrows = 0, arows = 0, have_attn = attention_csv || is_file(attn);
    int rc = read_mlp(mlp, m, tp, &r, &mrows, err);
    if (rc == 0 && have_attn)
        rc = read_attention(attn, m, tp, &r, &arows, err);
    if (rc == 0 && r.n == 0)
        rc = sim_errf(err,
                      "%s: %d rows at tp %d but no operator time in them (time_stats.<operator>."
                      "median columns with a time in (0, 1e12) ms)",
                      mlp, mrows, tp);
    if (rc == 0 && tp > 1)
        rc = read_networks(model_dir, tp, &r, net, sizeof net, err);
    if (rc == 0) {
        p->dims = *m;
        p->tp = tp;
        int before = p->npts;
        raw_flush(&r, p);
        if (have_attn)
            snprintf(note, notelen, "%s: %d rows at tp %d; %s: %d rows%s; %d distinct points", mlp,
                     mrows, tp, attn, arows, net, p->npts - before);
        else
            snprintf(note, notelen,
                     "%s: %d rows at tp %d%s; %d distinct points; no attention.csv beside it", mlp,
                     mrows, tp, net, p->npts - before);
    }
    free(r.v);
    return rc;
}
