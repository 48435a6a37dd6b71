/*
 * cmd_profile.c: `llmsim profile list|show NAME|import-vidur DIR`: the profiles a database
 * holds, one profile's metadata, fits and held-out errors, and the import of Vidur's profiling
 * tables as a fitted profile.
 */
#include <gsl/gsl_version.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "cmd_common.h"
#include "profile.h"
#include "store_profile.h"
#include "vidur.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: llmsim profile list [--db PATH]\n"
            "       llmsim profile show NAME [--db PATH]\n"
            "       llmsim profile import-vidur DIR --gpu G --model M [--as MODEL] [--tp N]\n"
            "                  [--attention FILE] [--out NAME] [--seed N] [--replace] "
            "[--db PATH]\n");
    return 2;
}

static void pct(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f%%", v);
}

static void list_row(void *arg, const cal_profile *p)
{
    char med[16], p95[16];
    pct(med, sizeof med, p->med_ape);
    pct(p95, sizeof p95, p->p95_ape);
    printf("%-28s %-9s %-6s %-16s %-10s %3d %7d %8s %8s  %s\n", p->name, p->kind, p->backend,
           p->model, p->gpu, p->tp, p->npts, med, p95, p->created);
    (*(int *)arg)++;
}

static int list(int argc, char **argv)
{
    const char *db = "llmsim.db";
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            db = v;
        else
            return usage();
    }
    sim_err err = {{0}};
    int count = 0;
    printf("%-28s %-9s %-6s %-16s %-10s %3s %7s %8s %8s  %s\n", "name", "kind", "from", "model",
           "gpu", "tp", "points", "med.err", "p95.err", "created");
    char names[512];
    printf("%-28s %-9s %-6s %-16s %-10s %3s %7s %8s %8s  %s\n", "roofline (built in)", "roofline",
           "-", "any", "any", "any", "-", "-", "-", "not measured");
    store *s = store_open_readonly(db, &err);
    if (!s) {
        fprintf(stderr, "llmsim profile list: %s\n", err.msg);
        return 1;
    }
    int rc = store_profile_list(s, list_row, &count, &err);
    store_close(s);
    if (rc) {
        fprintf(stderr, "llmsim profile list: %s\n", err.msg);
        return 1;
    }
    printf("\n%d stored profile%s in %s; the roofline covers every catalog GPU (%s); errors are "
           "held-out absolute percentage errors\n",
           count, count == 1 ? "" : "s", db, cal_gpu_names(names, sizeof names));
    return 0;
}

static void print_fit_coefficients(const cal_profile *p)
{
    printf("\nroofline-form coefficients (ns; see calibration/fit.c for each operator's "
           "features):\n");
    for (int op = 0; op < CAL_PROFILE_OPS; op++) {
        if (!p->has_fit[op])
            continue;
        const cal_fit *f = &p->fits[op];
        printf("  %-13s", cal_profile_op_name(op));
        for (int k = 0; k < f->ncoef; k++)
            printf(" c%d=%.6g", k, f->coef[k]);
        if (f->knee > 0)
            printf(" knee=%g", f->knee);
        putchar('\n');
    }
}

static int show(int argc, char **argv)
{
    const char *db = "llmsim.db", *name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            db = v;
        else if (argv[i][0] != '-' && !name)
            name = argv[i];
        else
            return usage();
    }
    if (!name)
        return usage();
    sim_err err = {{0}};
    store *s = store_open_readonly(db, &err);
    cal_profile *p = s ? store_profile_load(s, name, &err) : NULL;
    store_close(s);
    if (!p) {
        fprintf(stderr, "llmsim profile show: %s\n", err.msg);
        return 1;
    }
    char un[256];
    const eng_model *d = &p->dims;
    printf("profile   %s\nkind      %s (%s)\nmodel     %s: hidden %d, heads %d/%d, head_dim %d, "
           "intermediate %d, vocab %d; tensor parallel %d\n",
           p->name, p->kind, p->backend, p->model, d->hidden, d->heads, d->kv_heads, d->head_dim,
           d->intermediate, d->vocab, p->tp);
    printf("gpu       %s\ndevice    %s\ndtype     %s\nversions  %s\nsource    %s\ncreated   "
           "%s\npoints    %d\n",
           p->gpu, p->device, p->dtype, p->versions, p->source, p->created, p->npts);
    cal_profile_unmeasured(p, un, sizeof un);
    eng_gpu g;
    printf("unmeasured %s%s\n\n", un[0] ? un : "none",
           un[0] ? (cal_gpu_find(p->gpu, &g) == 0 ? " (costed by the roofline of this GPU)"
                                                  : " (costed 0: no catalog GPU to roofline)")
                 : "");
    cal_profile_report(p, stdout);
    print_fit_coefficients(p);
    cal_profile_free(p);
    return 0;
}

/* ---- import-vidur ---- */

typedef struct imp_opts {
    const char *dir, *gpu, *model, *as, *attention, *out, *db;
    long long tp, seed;
    int replace;
} imp_opts;

static int parse_import(int argc, char **argv, imp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->db = "llmsim.db";
    o->tp = 1;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        char *end;
        if ((v = cli_opt(argc, argv, &i, "--gpu")))
            o->gpu = v;
        else if ((v = cli_opt(argc, argv, &i, "--model")))
            o->model = v;
        else if ((v = cli_opt(argc, argv, &i, "--as")))
            o->as = v;
        else if ((v = cli_opt(argc, argv, &i, "--attention")))
            o->attention = v;
        else if ((v = cli_opt(argc, argv, &i, "--out")))
            o->out = v;
        else if ((v = cli_opt(argc, argv, &i, "--db")))
            o->db = v;
        else if ((v = cli_opt(argc, argv, &i, "--tp"))) {
            o->tp = strtoll(v, &end, 10);
            if (!*v || *end || o->tp < 1 || o->tp > 64)
                return fprintf(stderr, "llmsim profile import-vidur: --tp is 1..64\n"), 2;
        } else if ((v = cli_opt(argc, argv, &i, "--seed"))) {
            o->seed = strtoll(v, &end, 10);
            if (!*v || *end || o->seed < 0)
                return fprintf(stderr, "llmsim profile import-vidur: --seed is >= 0\n"), 2;
        } else if (strcmp(argv[i], "--replace") == 0)
            o->replace = 1;
        else if (argv[i][0] != '-' && !o->dir)
            o->dir = argv[i];
        else
            return usage();
    }
    if (!o->dir || !o->gpu || !o->model)
        return usage();
    return 0;
}

/* The llmsim model the import is for: --as, else the catalog's match of the Vidur name. */
static int import_model(const imp_opts *o, eng_model *m, sim_err *err)
{
    const char *name = o->as ? o->as : cal_vidur_model(o->model);
    char why[sizeof err->msg];
    if (!name)
        return sim_errf(err,
                        "model %s has no catalog match; pass --as NAME (a catalog model or a "
                        "config.json path) to say which model these tables measure",
                        o->model);
    if (cmd_resolver()->model(NULL, name, NULL, m, why, sizeof why) != 0)
        return sim_errf(err, "%s", why);
    return 0;
}

static void fill_meta(const imp_opts *o, const eng_model *m, const char *dir, int argc, char **argv,
                      cal_profile *p)
{
    const char *gpu = cal_vidur_gpu(o->gpu);
    snprintf(p->kind, sizeof p->kind, "imported");
    snprintf(p->backend, sizeof p->backend, "vidur");
    snprintf(p->model, sizeof p->model, "%s", m->name);
    snprintf(p->gpu, sizeof p->gpu, "%s", gpu ? gpu : o->gpu);
    snprintf(p->device, sizeof p->device, "Vidur profiling tables, GPU %s, model %s", o->gpu,
             o->model);
    snprintf(p->dtype, sizeof p->dtype, "fp16");
    snprintf(p->versions, sizeof p->versions, "llmsim %s, GSL %s", LLMSIM_VERSION, GSL_VERSION);
    size_t used = (size_t)snprintf(p->source, sizeof p->source, "%s;", dir);
    for (int i = 0; i < argc && used + 1 < sizeof p->source; i++) {
        int w = snprintf(p->source + used, sizeof p->source - used, " %s", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int import_vidur(int argc, char **argv)
{
    imp_opts o;
    int st = parse_import(argc, argv, &o);
    if (st)
        return st;
    sim_err err = {{0}};
    eng_model m;
    char dir[1024], name[64], note[2048];
    cal_profile *p = NULL;
    store *s = NULL;
    int rc = 1;
    if (import_model(&o, &m, &err) || cal_vidur_find(o.dir, o.gpu, o.model, dir, sizeof dir, &err))
        goto fail;
    if (o.out)
        snprintf(name, sizeof name, "%s", o.out);
    else if (o.tp > 1)
        snprintf(name, sizeof name, "vidur-%.12s-%.30s-tp%d", o.gpu, m.name, (int)o.tp);
    else
        snprintf(name, sizeof name, "vidur-%.12s-%.40s", o.gpu, m.name);
    p = cal_profile_new(name);
    fill_meta(&o, &m, dir, argc, argv, p);
    if (cal_vidur_read(dir, o.attention, &m, (int)o.tp, p, note, sizeof note, &err) ||
        cal_profile_fit(p, (uint64_t)o.seed, &err))
        goto fail;
    printf("import-vidur: %s\n", note);
    cal_profile_report(p, stdout);
    char un[256];
    cal_profile_unmeasured(p, un, sizeof un);
    if (un[0])
        printf("not in the tables (costed by the roofline of %s): %s\n", p->gpu, un);
    if (!(s = store_open(o.db, &err)) || store_profile_save(s, p, o.replace, &err))
        goto fail;
    printf("profile %s saved to %s: %d points\n", name, o.db, p->npts);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "llmsim profile import-vidur: %s\n", err.msg);
out:
    store_close(s);
    cal_profile_free(p);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "list") == 0)
        return list(argc - 1, argv + 1);
    if (strcmp(argv[1], "show") == 0)
        return show(argc - 1, argv + 1);
    if (strcmp(argv[1], "import-vidur") == 0)
        return import_vidur(argc - 1, argv + 1);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage();
        return 0;
    }
    fprintf(stderr, "llmsim profile: unknown subcommand '%s'\n", argv[1]);
    return usage();
}
