/*
 * validate_ops.c: operator sets: each measured point of a per-operator profiling table against
 * the roofline's time for that one kernel at that shape.
 *
 * The roofline is asked through its public per-operator call (cal_roofline_op_ns), which sums
 * an operator class over a whole pass. One kernel's time comes from two passes that differ by
 * one layer: per layer = op(2 layers) - op(1 layer), divided by the times the operator runs in
 * a layer (MODEL: calibration/layer.c's pre-norm Llama layer: two RMSNorms and two residual adds
 * per layer, one each of the projections, RoPE, attention, activation; two all-reduces under
 * tensor parallelism); the token embedding runs once per pass: op(1) - per layer. That the
 * final norm (once per pass) equals one per-layer norm is checked on every predictor, so a
 * change to the layer's structure is an error here rather than a silent factor of two.
 * A collective of `size` bytes (Vidur's unit) is priced by cal_roofline_allreduce_ns as NCCL
 * runs it (the ring), the way Vidur's network tables were measured.
 *
 * Set keys: gpu (catalog), dtype (optional; default each model's), compute: [{model, dir, tp,
 * attention, cannot}], network: [{table, cannot}]. Paths are relative to the set file.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "kernels.h"
#include "roofline.h"
#include "store_profile.h"
#include "validate_int.h"
#include "vidur.h"

/* The roofline of one model, GPU, dtype and tensor parallelism, at 1 and 2 layers. */
typedef struct kroof {
    eng_predictor p[2];
    int tp;
} kroof;

static void kroof_free(kroof *k)
{
    cal_predictor_free(&k->p[0]);
    cal_predictor_free(&k->p[1]);
}

/* The pass whose walk gives operator op its shape (x, y) (see profile.h's coordinates). */
static eng_shape shape_of(int op, double x, double y)
{
    eng_shape s;
    memset(&s, 0, sizeof s);
    int64_t n = (int64_t)llround(x), c = (int64_t)llround(y);
    if (op == KERN_OP_ATTN_DECODE) /* x sequences, y cached tokens each, the new one included */
        eng_shape_add_decodes(&s, n, n * (c > 0 ? c - 1 : 0));
    else if (op == KERN_OP_ATTN_PREFILL) /* a chunk of x tokens after y cached ones */
        eng_shape_add_prefill(&s, n, c);
    else { /* x rows as decodes: a pass launched from a graph, whose kernels pay no host-side
              launch (the tables time kernels on the GPU; a pass with prefill would add
              roofline.c's eager launch floor to every kernel); each row goes through the LM
              head */
        eng_shape_add_decodes(&s, n, 0);
        s.emit_seqs = (int32_t)n;
    }
    return s;
}

/* Per-layer runs of an operator class in the roofline's walk (0: once per pass). */
static int per_layer(const char *op)
{
    if (!strcmp(op, "embed") || !strcmp(op, "lm_head"))
        return 0;
    return !strcmp(op, "rmsnorm") || !strcmp(op, "add") || !strcmp(op, "allreduce") ? 2 : 1;
}

/* One kernel of op at shape s, ns; -1 when the roofline does not know op. */
static double kroof_ns(const kroof *k, const char *op, const eng_shape *s)
{
    double t1 = cal_roofline_op_ns(&k->p[0], s, op), t2 = cal_roofline_op_ns(&k->p[1], s, op);
    if (t1 < 0 || t2 < 0)
        return -1;
    int runs = per_layer(op);
    return runs ? (t2 - t1) / runs : t1 - (t2 - t1);
}

static int kroof_new(const eng_model *m, const eng_gpu *g, eng_dtype dt, int tp, kroof *k,
                     sim_err *err)
{
    memset(k, 0, sizeof *k);
    k->tp = tp;
    for (int i = 0; i < 2; i++) {
        eng_model c = *m;
        c.layers = i + 1;
        cal_serving sv = cal_serving_tp(dt, tp);
        if (cal_roofline_new(&c, g, &sv, &k->p[i], err)) {
            kroof_free(k);
            return -1;
        }
    }
    eng_shape s = shape_of(KERN_OP_RMSNORM, 64, 0);
    double norm = kroof_ns(k, "rmsnorm", &s);
    double final = cal_roofline_op_ns(&k->p[0], &s, "rmsnorm") - norm * 2;
    if (!(norm > 0) || fabs(final - norm) > 1e-6 * norm) {
        kroof_free(k);
        return sim_errf(err,
                        "the roofline's pass no longer has two RMSNorms per layer and one after "
                        "the last (one norm %.6g ns, the final one %.6g ns): update "
                        "study/validate_ops.c's per-layer counts",
                        norm, final);
    }
    return 0;
}

/* ---- reading the set ---- */

typedef struct opsctx {
    study_vset *v;
    const char *match;
    eng_gpu gpu;
    eng_dtype dtype; /* ENG_DTYPE_AUTO: each model's */
    sim_err *err;
} opsctx;

static int want(const opsctx *o, const char *id)
{
    if (!o->match || !*o->match || strstr(id, o->match))
        return 1;
    o->v->skipped++;
    return 0;
}

/* tp: an integer or a list of them, into tps (at most max); the count, or -1 with err. */
static int read_tps(const opsctx *o, const scn_node *n, const char *where, int *tps, int max)
{
    const scn_node *one = n && scn_doc_type(n) == SCN_DOC_SEQ ? scn_doc_first(n) : n;
    int k = 0;
    if (!n)
        return validate_fail(o->err, o->v->path, n, where, "missing (1, or a list such as [1, 2])");
    for (; one && k < max; one = scn_doc_type(n) == SCN_DOC_SEQ ? scn_doc_next(one) : NULL) {
        const char *t = scn_doc_text(one);
        char *end;
        long v = t ? strtol(t, &end, 10) : 0;
        if (!t || !*t || *end || v < 1 || v > 1024)
            return validate_fail(o->err, o->v->path, one, where,
                                 "expected an integer in [1, 1024] or a list of them");
        tps[k++] = (int)v;
    }
    return k;
}

/* The measurements of a Vidur compute table at tensor parallelism tp, as the import counts
 * them: each row's operator medians, its two norms as one. */
static int64_t count_table(const char *path, int tp, sim_err *err)
{
    vcsv c;
    int64_t n = 0;
    if (vcsv_open(&c, path, err)) {
        vcsv_close(&c);
        return -1;
    }
    int tcol = vcsv_col(&c, "num_tensor_parallel_workers");
    int norm2 = vcsv_col(&c, "time_stats.post_attention_layernorm.median");
    int got;
    while ((got = vcsv_next(&c, err)) > 0) {
        if (tcol >= 0 && atoi(vcsv_get(&c, tcol)) != tp)
            continue;
        for (int i = 0; i < c.nhdr; i++) {
            size_t l = strlen(c.hdr[i]);
            if (i != norm2 && !strncmp(c.hdr[i], "time_stats.", 11) && l > 7 &&
                !strcmp(c.hdr[i] + l - 7, ".median") && vcsv_get(&c, i)[0])
                n++;
        }
    }
    vcsv_close(&c);
    return got < 0 ? -1 : n;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* A point's row: id names the model, layout, operator and shape. */
static void point_row(opsctx *o, const kroof *k, const char *model, const cal_point *pt)
{
    const char *op = cal_profile_op_name(pt->op);
    char id[256];
    if (pt->op == KERN_OP_ATTN_PREFILL)
        snprintf(id, sizeof id, "%s tp%d %s chunk=%.0f ctx=%.0f", model, k->tp, op, pt->x, pt->y);
    else if (pt->op == KERN_OP_ATTN_DECODE)
        snprintf(id, sizeof id, "%s tp%d %s seqs=%.0f ctx=%.0f", model, k->tp, op, pt->x, pt->y);
    else
        snprintf(id, sizeof id, "%s tp%d %s tokens=%.0f", model, k->tp, op, pt->x);
    if (!want(o, id))
        return;
    study_vrow *r = validate_row_add(o->v, id, op, 0);
    r->measured[0] = pt->t_ns / 1e3;
    eng_shape s = shape_of(pt->op, pt->x, pt->y);
    double ns = kroof_ns(k, op, &s);
    if (ns < 0)
        validate_row_fail(r, STUDY_V_CANNOT, "the roofline has no operator '%s'", op);
    else
        r->predicted[0] = ns / 1e3;
}

/* A table that cannot be expressed: one row standing for its measurements. */
static void cannot_row(opsctx *o, const char *id, const char *group, int line, int64_t count,
                       const char *why)
{
    if (!want(o, id))
        return;
    study_vrow *r = validate_row_add(o->v, id, group, line);
    r->count = count > 0 ? count : 1;
    validate_row_fail(r, STUDY_V_CANNOT, "%s", why);
}

/* The points of one profile against the roofline of its model. */
static void profile_rows(opsctx *o, const cal_profile *p, const eng_model *m, int tp, int line)
{
    kroof k;
    sim_err e = {{0}};
    char id[256];
    eng_dtype dt = o->dtype == ENG_DTYPE_AUTO ? m->weight_dtype : o->dtype;
    if (kroof_new(m, &o->gpu, dt, tp, &k, &e)) {
        snprintf(id, sizeof id, "%s tp%d", m->name, tp);
        cannot_row(o, id, "compute", line, p->npts, e.msg);
        return;
    }
    /* a compute table's profile also carries the network tables beside it (allreduce,
     * send_recv); the set compares those through its own network entries */
    for (int i = 0; i < p->npts; i++)
        if (p->pts[i].op < CAL_PROFILE_OP_ALLREDUCE)
            point_row(o, &k, m->name, &p->pts[i]);
    kroof_free(&k);
}

/* The optional vocab key of a compute entry: the table's vocabulary size into *vsize (0 when
 * absent); -1 with an error naming where when it is not a positive integer. */
static int read_vocab(opsctx *o, const scn_node *n, const char *where, const char *vocab,
                      long *vsize)
{
    *vsize = 0;
    if (!vocab)
        return 0;
    char *end, p[96];
    *vsize = strtol(vocab, &end, 10);
    snprintf(p, sizeof p, "%s.vocab", where);
    if (!*vocab || *end || *vsize < 1 || *vsize > 100000000)
        return validate_fail(o->err, o->v->path, scn_doc_get(n, "vocab"), p,
                             "expected the table's vocabulary size (an integer)");
    return 0;
}

/* A compute table that cannot be expressed at tensor parallelism tp: one row counting its MLP
 * table's rows. */
static int compute_cannot(opsctx *o, const scn_node *n, const char *where, const char *dir, int tp,
                          const char *cannot)
{
    char id[256], csv[1100];
    snprintf(id, sizeof id, "%.200s tp%d", base_name(dir), tp);
    snprintf(csv, sizeof csv, "%s/mlp.csv", dir);
    int64_t cnt = count_table(csv, tp, o->err);
    if (cnt < 0)
        return sim_err_prefix(o->err, "%s:%d: %s", o->v->path, scn_doc_line(n), where);
    cannot_row(o, id, "compute", scn_doc_line(n), cnt, cannot);
    return 0;
}

/* The rows of one compute table at tensor parallelism tp: the catalog's model (with the
 * table's vocabulary where it names one; noted once, on the first tp) read through the Vidur
 * import and compared point by point. */
static int compute_tp(opsctx *o, const scn_node *n, const char *where, const char *model,
                      const char *dir, const char *attn, long vsize, int tp, int first)
{
    eng_model m;
    cal_profile *prof = cal_profile_new(base_name(dir));
    char note[2048];
    int bad = study_model(model, &m, o->err);
    if (!bad && vsize > 0 && vsize != m.vocab && first)
        validate_note(o->v,
                      "%s: the table's vocabulary is %ld, the catalog's %s has %d; the "
                      "table's is used (only the embedding depends on it)",
                      base_name(dir), vsize, m.name, m.vocab);
    if (vsize > 0)
        m.vocab = (int32_t)vsize;
    if (bad || cal_vidur_read(dir, attn, &m, tp, prof, note, sizeof note, o->err)) {
        cal_profile_free(prof);
        return sim_err_prefix(o->err, "%s:%d: %s", o->v->path, scn_doc_line(n), where);
    }
    profile_rows(o, prof, &m, tp, scn_doc_line(n));
    cal_profile_free(prof);
    return 0;
}

/* A compute entry's folder d (and attention table a, when given) resolved against the set
 * file into dir and attn (1024 bytes each); -1 with an error when d, or a model or the reason
 * it `cannot` be expressed (named), is missing, or a path is too long. */
static int compute_paths(opsctx *o, const scn_node *n, const char *where, int named, const char *d,
                         const char *a, char *dir, char *attn)
{
    const char *path = o->v->path;
    char p[96];
    snprintf(p, sizeof p, "%s.%s", where, !d ? "dir" : "model");
    if (!d || !named)
        return validate_fail(o->err, path, n, p,
                             !d ? "missing (the model's folder of Vidur tables)"
                                : "missing (a catalog model, or `cannot` with the reason)");
    if (validate_path(path, d, dir, 1024) || (a && validate_path(path, a, attn, 1024)))
        return validate_fail(o->err, path, n, where, "path too long");
    return 0;
}

static int compute_entry(opsctx *o, const scn_node *n, int i)
{
    static const char *const keys[] = {"model", "dir", "tp", "attention", "vocab", "cannot", NULL};
    study_vset *v = o->v;
    char where[64], dir[1024], attn[1024], p[96];
    snprintf(where, sizeof where, "compute.%d", i);
    const char *model, *d, *a, *cannot, *vocab;
    long vsize;
    if (scn_doc_type(n) != SCN_DOC_MAP)
        return validate_fail(o->err, v->path, n, where, "expected a map {model, dir, tp, ...}");
    if (validate_keys(v->path, n, where, keys, o->err) ||
        validate_scalar(v->path, n, "model", &model, o->err) ||
        validate_scalar(v->path, n, "dir", &d, o->err) ||
        validate_scalar(v->path, n, "attention", &a, o->err) ||
        validate_scalar(v->path, n, "cannot", &cannot, o->err) ||
        validate_scalar(v->path, n, "vocab", &vocab, o->err) ||
        read_vocab(o, n, where, vocab, &vsize))
        return -1;
    if (compute_paths(o, n, where, model || cannot, d, a, dir, attn))
        return -1;
    int tps[16];
    snprintf(p, sizeof p, "%s.tp", where);
    int ntp = read_tps(o, scn_doc_get(n, "tp"), p, tps, 16);
    for (int t = 0; t < ntp; t++)
        if (cannot ? compute_cannot(o, n, where, dir, tps[t], cannot)
                   : compute_tp(o, n, where, model, dir, a ? attn : NULL, vsize, tps[t], t == 0))
            return -1;
    return ntp < 0 ? -1 : 0;
}

/* ---- network tables ---- */

typedef struct netcols {
    int t, workers, size, per_node, coll;
} netcols;

static int net_cols(const opsctx *o, const vcsv *c, const scn_node *n, const char *where,
                    netcols *k)
{
    const char *names[] = {"time_stats.all_reduce.median", "num_workers", "size",
                           "devices_per_node", "collective"};
    int *cols[] = {&k->t, &k->workers, &k->size, &k->per_node, &k->coll};
    char list[2048];
    for (int i = 0; i < 5; i++)
        if ((*cols[i] = vcsv_col(c, names[i])) < 0)
            return validate_fail(o->err, o->v->path, n, where, "%s: no column '%s' (columns: %s)",
                                 c->path, names[i], vcsv_names(c, list, sizeof list));
    return 0;
}

/* Multi-node rows, counted per (workers, devices per node). */
typedef struct spread {
    int workers, per_node;
    int64_t n;
} spread;

static void count_spread(spread *sp, int *nsp, int workers, int per_node)
{
    for (int i = 0; i < *nsp; i++)
        if (sp[i].workers == workers && sp[i].per_node == per_node) {
            sp[i].n++;
            return;
        }
    if (*nsp < 64)
        sp[(*nsp)++] = (spread){workers, per_node, 1};
}

/* One all-reduce row in one node. */
static void allreduce_row(opsctx *o, kroof *k, int workers, double size, double ms, int line)
{
    char id[160];
    snprintf(id, sizeof id, "all_reduce %d GPUs %.0f bytes", workers, size);
    if (!want(o, id))
        return;
    study_vrow *r = validate_row_add(o->v, id, "allreduce", line);
    r->measured[0] = ms * 1e3;
    /* MODEL: Vidur's `size` is bytes (its predictor turns it into tokens as size / embedding
     * dim / 2), timed through NCCL: NCCL's ring, never the engines' custom all-reduce */
    r->predicted[0] = cal_roofline_allreduce_ns(&k->p[0], size, 1) / 1e3;
}

/* The roofline of an all-reduce over `workers` GPUs (a model whose activations are 1 wide). */
static int net_roof(opsctx *o, kroof *ks, int workers)
{
    if (ks[workers].p[0].ops)
        return 0;
    eng_model m;
    if (study_model("llama-3-8b", &m, o->err))
        return -1;
    m.hidden = 1;
    if (kroof_new(&m, &o->gpu, m.weight_dtype, workers, &ks[workers], o->err))
        return -1;
    return 0;
}

/* The multi-node all-reduces, one row a (workers, devices per node) spread: not expressed. */
static void spread_rows(opsctx *o, const spread *sp, int nsp, int line)
{
    for (int i = 0; i < nsp; i++) {
        char id[160], why[400];
        snprintf(id, sizeof id, "all_reduce %d GPUs on %d nodes", sp[i].workers,
                 (sp[i].workers + sp[i].per_node - 1) / sp[i].per_node);
        snprintf(why, sizeof why,
                 "an all-reduce across nodes (%d GPUs, %d per node): the roofline prices one "
                 "node's GPU links, not the network between nodes",
                 sp[i].workers, sp[i].per_node);
        cannot_row(o, id, "allreduce", line, sp[i].n, why);
    }
}

/* The all-reduce in the table's current row: compared when it runs in one node (its roofline
 * made on first use in ks), counted in sp when it spans nodes, passed over when the row is
 * another collective; -1 with an error naming the line when its numbers are out of range. */
static int network_row(opsctx *o, vcsv *c, const netcols *k, kroof *ks, spread *sp, int *nsp)
{
    int w = atoi(vcsv_get(c, k->workers)), pn = atoi(vcsv_get(c, k->per_node));
    double size = atof(vcsv_get(c, k->size)), ms = atof(vcsv_get(c, k->t));
    if (strcmp(vcsv_get(c, k->coll), "all_reduce") != 0)
        return 0;
    if (w < 2 || size <= 0 || !(ms > 0))
        return sim_errf(o->err, "%s:%d: expected num_workers >= 2, size > 0 and a time > 0",
                        c->path, c->lineno);
    if (pn != w || w > 8) {
        count_spread(sp, nsp, w, pn);
        return 0;
    }
    if (net_roof(o, ks, w))
        return -1;
    allreduce_row(o, &ks[w], w, size, ms, c->lineno);
    return 0;
}

static int read_network(opsctx *o, const char *path, const scn_node *n, const char *where)
{
    vcsv c;
    netcols k;
    kroof ks[9];
    memset(ks, 0, sizeof ks);
    spread sp[64];
    int nsp = 0, got, rc = -1;
    if (vcsv_open(&c, path, o->err) || net_cols(o, &c, n, where, &k))
        goto done;
    while ((got = vcsv_next(&c, o->err)) > 0)
        if (network_row(o, &c, &k, ks, sp, &nsp))
            goto done;
    if (got < 0)
        goto done;
    spread_rows(o, sp, nsp, scn_doc_line(n));
    rc = 0;
done:
    for (int w = 0; w < 9; w++)
        kroof_free(&ks[w]);
    vcsv_close(&c);
    return rc;
}

/* The rows of the CSV table at path, or -1 with an error when it cannot be read. */
static int64_t count_rows(const char *path, sim_err *err)
{
    vcsv c;
    int64_t rows = 0;
    int got;
    if (vcsv_open(&c, path, err) == 0)
        while ((got = vcsv_next(&c, err)) > 0)
            rows++;
    else
        got = -1;
    vcsv_close(&c);
    return got < 0 ? -1 : rows;
}

static int network_entry(opsctx *o, const scn_node *n, int i)
{
    static const char *const keys[] = {"table", "cannot", NULL};
    char where[64], path[1024];
    snprintf(where, sizeof where, "network.%d", i);
    const char *t, *cannot;
    if (scn_doc_type(n) != SCN_DOC_MAP)
        return validate_fail(o->err, o->v->path, n, where, "expected a map {table, cannot}");
    if (validate_keys(o->v->path, n, where, keys, o->err) ||
        validate_scalar(o->v->path, n, "table", &t, o->err) ||
        validate_scalar(o->v->path, n, "cannot", &cannot, o->err))
        return -1;
    if (!t || validate_path(o->v->path, t, path, sizeof path))
        return validate_fail(o->err, o->v->path, n, where,
                             !t ? "missing table (a Vidur all_reduce.csv)" : "path too long");
    if (!cannot)
        return read_network(o, path, n, where);
    int64_t rows = count_rows(path, o->err);
    if (rows < 0)
        return sim_err_prefix(o->err, "%s:%d: %s", o->v->path, scn_doc_line(n), where);
    char id[256];
    snprintf(id, sizeof id, "%s", t);
    cannot_row(o, id, "allreduce", scn_doc_line(n), rows, cannot);
    return 0;
}

static int read_list(opsctx *o, const scn_node *root, const char *key,
                     int (*entry)(opsctx *, const scn_node *, int))
{
    const scn_node *l = scn_doc_get(root, key);
    if (!l)
        return 0;
    if (scn_doc_type(l) != SCN_DOC_SEQ)
        return validate_fail(o->err, o->v->path, l, key, "expected a list of tables");
    int i = 0;
    for (const scn_node *n = scn_doc_first(l); n; n = scn_doc_next(n), i++)
        if (entry(o, n, i))
            return -1;
    return 0;
}

static void ops_metric(study_vset *v)
{
    v->nmetrics = 1;
    snprintf(v->metric[0].name, sizeof v->metric[0].name, "time_us");
    snprintf(v->metric[0].label, sizeof v->metric[0].label, "time");
    snprintf(v->metric[0].unit, sizeof v->metric[0].unit, "us");
}

int validate_ops_load(study_vset *v, const scn_node *root, const char *match, sim_err *err)
{
    static const char *const keys[] = {"name", "kind",  "description", "source",  "notes",
                                       "gpu",  "dtype", "compute",     "network", NULL};
    opsctx o = {.v = v, .match = match, .dtype = ENG_DTYPE_AUTO, .err = err};
    const char *gpu, *dt;
    if (validate_keys(v->path, root, "", keys, err) ||
        validate_scalar(v->path, root, "gpu", &gpu, err) ||
        validate_scalar(v->path, root, "dtype", &dt, err))
        return -1;
    if (!gpu || cal_gpu_find(gpu, &o.gpu) != 0) {
        char names[512];
        return validate_fail(err, v->path, gpu ? scn_doc_get(root, "gpu") : root, "gpu",
                             "%s (valid: %s)", gpu ? "unknown GPU" : "missing",
                             cal_gpu_names(names, sizeof names));
    }
    if (dt && eng_dtype_parse(dt, &o.dtype) < 0)
        return validate_fail(err, v->path, scn_doc_get(root, "dtype"), "dtype",
                             "unknown dtype '%s' (bf16, fp16, fp8, ...)", dt);
    ops_metric(v);
    snprintf(v->cost_model, sizeof v->cost_model,
             "roofline %s (built in, not measured), one kernel at a time", o.gpu.name);
    if (!scn_doc_get(root, "compute") && !scn_doc_get(root, "network"))
        return validate_fail(err, v->path, root, "compute", "missing (a list of tables)");
    return read_list(&o, root, "compute", compute_entry) ||
                   read_list(&o, root, "network", network_entry)
               ? -1
               : 0;
}

/* The set's path, name, description, source, kind and metric for profile p's points. */
static void profile_set_header(study_vset *v, const cal_profile *p, const char *path)
{
    snprintf(v->path, sizeof v->path, "%s", path);
    snprintf(v->name, sizeof v->name, "profile %.55s", p->name);
    snprintf(v->description, sizeof v->description,
             "the measured points of profile %s (%s %s, %s on %s, tp %d) against the roofline",
             p->name, p->kind, p->backend, p->model, p->device[0] ? p->device : p->gpu, p->tp);
    snprintf(v->source, sizeof v->source, "%s", p->source);
    v->kind = STUDY_V_OPERATORS;
    ops_metric(v);
}

int study_vset_from_profile(store *s, const char *profile, const char *match, study_vset *v,
                            sim_err *err)
{
    memset(v, 0, sizeof *v);
    cal_profile *p = store_profile_load(s, profile, err);
    if (!p)
        return -1;
    profile_set_header(v, p, store_path(s));
    opsctx o = {.v = v, .match = match, .dtype = ENG_DTYPE_AUTO, .err = err};
    eng_model m;
    int rc = -1;
    if (cal_gpu_find(p->gpu, &o.gpu) != 0) {
        sim_errf(err,
                 "profile %s was measured on '%s', which has no datasheet in the GPU catalog: "
                 "there is no roofline to compare it with",
                 p->name, p->gpu);
        goto done;
    }
    if (study_model(p->model, &m, err))
        goto done;
    snprintf(v->cost_model, sizeof v->cost_model,
             "roofline %s (built in, not measured), one kernel at a time", o.gpu.name);
    if (p->dtype[0] && eng_dtype_parse(p->dtype, &o.dtype) < 0)
        o.dtype = ENG_DTYPE_AUTO;
    profile_rows(&o, p, &m, p->tp > 0 ? p->tp : 1, 0);
    rc = 0;
done:
    cal_profile_free(p);
    return rc;
}
