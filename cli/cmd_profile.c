/*
 * cmd_profile.c: `llmsim profile list|show NAME|export NAME|import FILE|import-vidur DIR`: the
 * profiles a database holds, one profile's metadata, fits and held-out errors, a profile as text
 * and back (study/proftext.c), and the import of Vidur's profiling tables as a fitted profile
 * (study/calibrate.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "store_profile.h"
#include "study_calibrate.h"

static const cli_command list_cmd = {
    .name = "profile list",
    .summary =
        "Lists the cost profiles a database holds (and the built-in roofline) with their held-out "
        "errors.",
    .common = CLI_DB | CLI_JSON};
static const cli_command show_cmd = {
    .name = "profile show",
    .args = "NAME",
    .summary =
        "Prints one stored profile: where it came from, the model and device it measured, each "
        "operator's fit and held-out errors, and the fit coefficients.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_JSON};
static const cli_command export_cmd = {
    .name = "profile export",
    .args = "NAME",
    .summary = "Prints a stored profile as text on stdout: its metadata (model, GPU, device, "
               "versions, the command that measured it, when) and every measured point, for "
               "`llmsim profile import` to fit and store in another database.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB};
static const cli_command import_text_cmd = {
    .name = "profile import",
    .args = "FILE",
    .summary = "Reads a profile text (as `llmsim profile export` writes it; profiles/ ships the "
               "measured ones), fits its points with the recorded seed and stores the profile.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_QUIET};
static const cli_command import_cmd = {
    .name = "profile import-vidur",
    .args = "DIR --gpu G --model M",
    .summary =
        "Reads Vidur's per-operator profiling tables (DIR/.../compute/<gpu>/<org>/<model>/mlp.csv, "
        "attention.csv when present) and fits and stores them as a profile; operators the tables "
        "lack are costed by the roofline of that GPU.",
    .min_pos = 1,
    .max_pos = 1,
    .common = CLI_DB | CLI_QUIET};

static void pct(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f%%", v);
}

typedef struct list_arg {
    int count;
    sim_jsonw *j; /* NULL: a table */
} list_arg;

/* A profile's metadata and held-out errors as JSON members. */
#define PROFILE(key, kind, member) SIM_JFIELD(key, kind, cal_profile, member)
static const sim_jfield list_fields[] = {
    PROFILE("name", SIM_JF_CHARS, name),       PROFILE("kind", SIM_JF_CHARS, kind),
    PROFILE("backend", SIM_JF_CHARS, backend), PROFILE("model", SIM_JF_CHARS, model),
    PROFILE("gpu", SIM_JF_CHARS, gpu),         PROFILE("tp", SIM_JF_INT, tp),
    PROFILE("points", SIM_JF_INT, npts),       PROFILE("median_ape", SIM_JF_NUM, med_ape),
    PROFILE("p95_ape", SIM_JF_NUM, p95_ape),   PROFILE("created", SIM_JF_CHARS, created),
};

/* Profile p's metadata and held-out errors as a JSON object. */
static void list_json_row(sim_jsonw *j, const cal_profile *p)
{
    sim_jsonw_open(j, NULL, '{');
    SIM_JSONW_TABLE(j, list_fields, p);
    sim_jsonw_close(j, '}');
}

/* Profile p's line of the text listing. */
static void list_text_row(const cal_profile *p)
{
    char med[16], p95[16];
    pct(med, sizeof med, p->med_ape);
    pct(p95, sizeof p95, p->p95_ape);
    printf("%-28s %-9s %-6s %-16s %-10s %3d %7d %8s %8s  %s\n", p->name, p->kind, p->backend,
           p->model, p->gpu, p->tp, p->npts, med, p95, p->created);
}

static void list_row(void *arg, const cal_profile *p)
{
    list_arg *a = arg;
    a->count++;
    if (a->j)
        list_json_row(a->j, p);
    else
        list_text_row(p);
}

/* The text listing's header and its first row, the built-in roofline. */
static void list_head(void)
{
    printf("%-28s %-9s %-6s %-16s %-10s %3s %7s %8s %8s  %s\n", "name", "kind", "from", "model",
           "gpu", "tp", "points", "med.err", "p95.err", "created");
    printf("%-28s %-9s %-6s %-16s %-10s %3s %7s %8s %8s  %s\n", "roofline (built in)", "roofline",
           "-", "any", "any", "any", "-", "-", "-", "not measured");
}

/* The text listing's last line: how many profiles db holds, and what the roofline covers. */
static void list_foot(int count, const char *db)
{
    char names[512];
    printf("\n%d stored profile%s in %s; the roofline covers every catalog GPU (%s); errors are "
           "held-out absolute percentage errors\n",
           count, count == 1 ? "" : "s", db, cal_gpu_names(names, sizeof names));
}

static int list(int argc, char **argv)
{
    cli_common c;
    int npos, st = cli_parse(&list_cmd, NULL, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    sim_err err = {{0}};
    store *s = store_open_readonly(c.db, &err);
    if (!s)
        return cli_fail("profile list", &err);
    sim_jsonw j;
    list_arg a = {0, c.json ? &j : NULL};
    if (c.json) {
        sim_jsonw_begin(&j, stdout);
        sim_jsonw_open(&j, NULL, '[');
    } else
        list_head();
    int rc = store_profile_list(s, list_row, &a, &err);
    store_close(s);
    if (rc)
        return cli_fail("profile list", &err);
    if (c.json)
        sim_jsonw_close(&j, ']');
    else
        list_foot(a.count, c.db);
    return 0;
}

/* Operator op's line of roofline-form coefficients (and its knee, when it has one). */
static void print_fit_line(int op, const cal_fit *f)
{
    printf("  %-13s", cal_profile_op_name(op));
    for (int k = 0; k < f->ncoef; k++)
        printf(" c%d=%.6g", k, f->coef[k]);
    if (f->knee > 0)
        printf(" knee=%g", f->knee);
    putchar('\n');
}

static void print_fit_coefficients(const cal_profile *p)
{
    printf("\nroofline-form coefficients (ns; see calibration/fit.c for each operator's "
           "features):\n");
    for (int op = 0; op < CAL_PROFILE_OPS; op++)
        if (p->has_fit[op])
            print_fit_line(op, &p->fits[op]);
}

/* Operator op's fit: its form, sizes, held-out errors and coefficients, as a JSON object. */
static void fit_json(sim_jsonw *j, int op, const cal_fit *f)
{
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "op", cal_profile_op_name(op));
    sim_jsonw_str(j, "form", cal_form_name(f->form));
    sim_jsonw_int(j, "train", f->n_train);
    sim_jsonw_int(j, "held_out", f->n_held);
    sim_jsonw_num(j, "median_ape", f->med_ape[f->form]);
    sim_jsonw_num(j, "p95_ape", f->p95_ape[f->form]);
    sim_jsonw_open(j, "coefficients", '[');
    for (int k = 0; k < f->ncoef; k++)
        sim_jsonw_num(j, NULL, f->coef[k]);
    sim_jsonw_close(j, ']');
    sim_jsonw_num(j, "knee", f->knee);
    sim_jsonw_close(j, '}');
}

/* A profile's names, sizes and overall errors, as JSON fields. */
static void meta_json(sim_jsonw *j, const cal_profile *p)
{
    static const char *const keys[] = {"name",   "kind",     "backend", "model",   "gpu",
                                       "device", "versions", "source",  "created", "dtype"};
    const char *vals[] = {p->name,   p->kind,     p->backend, p->model,   p->gpu,
                          p->device, p->versions, p->source,  p->created, p->dtype};
    for (int i = 0; i < 10; i++)
        sim_jsonw_str(j, keys[i], vals[i]);
    sim_jsonw_int(j, "tp", p->tp);
    sim_jsonw_int(j, "points", p->npts);
    sim_jsonw_num(j, "median_ape", p->med_ape);
    sim_jsonw_num(j, "p95_ape", p->p95_ape);
}

static void show_json(const cal_profile *p, const char *unmeasured)
{
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    meta_json(&j, p);
    sim_jsonw_str(&j, "unmeasured", unmeasured);
    sim_jsonw_open(&j, "fits", '[');
    for (int op = 0; op < CAL_PROFILE_OPS; op++)
        if (p->has_fit[op])
            fit_json(&j, op, &p->fits[op]);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

/* A profile's names, model shape, device and sources, a line each. */
static void show_heading(const cal_profile *p)
{
    const eng_model *d = &p->dims;
    printf("profile   %s\nkind      %s (%s)\nmodel     %s: hidden %d, heads %d/%d, head_dim %d, "
           "intermediate %d, vocab %d; tensor parallel %d\n",
           p->name, p->kind, p->backend, p->model, d->hidden, d->heads, d->kv_heads, d->head_dim,
           d->intermediate, d->vocab, p->tp);
    printf("gpu       %s\ndevice    %s\ndtype     %s\nversions  %s\nsource    %s\ncreated   "
           "%s\npoints    %d\n",
           p->gpu, p->device, p->dtype, p->versions, p->source, p->created, p->npts);
}

static void show_text(const cal_profile *p, const char *un)
{
    eng_gpu g;
    show_heading(p);
    printf("unmeasured %s%s\n\n", un[0] ? un : "none",
           un[0] ? (cal_gpu_find(p->gpu, &g) == 0 ? " (costed by the roofline of this GPU)"
                                                  : " (costed 0: no catalog GPU to roofline)")
                 : "");
    cal_profile_report(p, stdout);
    print_fit_coefficients(p);
}

/* Parses `cmd NAME` and loads the profile NAME from the database; *out NULL with the exit
 * status in *st when there is nothing to do or it failed. */
static cal_profile *load_named(const cli_command *cmd, int argc, char **argv, cli_common *c,
                               int *st)
{
    const char *name;
    int npos;
    *st = cli_parse(cmd, NULL, c, argc, argv, &name, &npos);
    if (*st != CLI_GO)
        return NULL;
    sim_err err = {{0}};
    store *s = store_open_readonly(c->db, &err);
    cal_profile *p = s ? store_profile_load(s, name, &err) : NULL;
    store_close(s);
    if (!p)
        *st = cli_fail(cmd->name, &err);
    return p;
}

static int show(int argc, char **argv)
{
    cli_common c;
    int st;
    cal_profile *p = load_named(&show_cmd, argc, argv, &c, &st);
    if (!p)
        return st;
    char un[256];
    cal_profile_unmeasured(p, un, sizeof un);
    if (c.json)
        show_json(p, un);
    else
        show_text(p, un);
    cal_profile_free(p);
    return 0;
}

static int export_text(int argc, char **argv)
{
    cli_common c;
    int st;
    cal_profile *p = load_named(&export_cmd, argc, argv, &c, &st);
    if (!p)
        return st;
    st = study_profile_write(p, stdout) || fflush(stdout) ? 1 : 0;
    if (st)
        fprintf(stderr, "llmsim profile export: writing to stdout failed\n");
    cal_profile_free(p);
    return st;
}

static int import_text(int argc, char **argv)
{
    study_profile_in in = {0};
    const cli_option opts[] = {{"--out", "NAME", CLI_STRING, &in.out, "the profile's name",
                                "the text's", 0, 0, NULL, NULL},
                               {"--replace", NULL, CLI_FLAG, &in.replace,
                                "replace a stored profile of the same name", NULL, 0, 0, NULL,
                                NULL},
                               CLI_END};
    cli_common c;
    int npos, st = cli_parse(&import_text_cmd, opts, &c, argc, argv, &in.path, &npos);
    if (st != CLI_GO)
        return st;
    in.db = c.db;
    sim_err err = {{0}};
    cal_profile *p = NULL;
    if (study_profile_import(&in, &p, &err) != 0)
        return cli_fail("profile import", &err);
    if (!c.quiet)
        cal_profile_report(p, stdout);
    printf("profile %s saved to %s: %d points, %s %s on %s, created %s\n", p->name, c.db, p->npts,
           p->kind, p->backend, p->device, p->created[0] ? p->created : "now");
    cal_profile_free(p);
    return 0;
}

/* Imports the tables im names as a profile stored in db, and prints its report. The exit status. */
static int run_import(study_import *im, const char *db)
{
    sim_err err = {{0}};
    char note[2048];
    cal_profile *p = NULL;
    if (study_import_vidur(im, db, &p, note, sizeof note, &err) != 0)
        return cli_fail("profile import-vidur", &err);
    printf("import-vidur: %s\n", note);
    cal_profile_report(p, stdout);
    char un[256];
    cal_profile_unmeasured(p, un, sizeof un);
    if (un[0])
        printf("not in the tables (costed by the roofline of %s): %s\n", p->gpu, un);
    printf("profile %s saved to %s: %d points\n", p->name, db, p->npts);
    cal_profile_free(p);
    return 0;
}

static int import_vidur(int argc, char **argv)
{
    study_import im;
    memset(&im, 0, sizeof im);
    int64_t seed = 1;
    im.tp = 1;
    const cli_option opts[] = {
        {"--gpu", "G", CLI_STRING, &im.gpu, "Vidur's GPU directory name (a100, h100, ...)", NULL, 0,
         0, NULL, NULL},
        {"--model", "M", CLI_STRING, &im.model, "Vidur's model directory name", NULL, 0, 0, NULL,
         NULL},
        {"--as", "MODEL", CLI_STRING, &im.as, "the llmsim model these tables measure",
         "the catalog's match of --model", 0, 0, NULL, NULL},
        {"--tp", "N", CLI_INT, &im.tp, "the tensor-parallel degree of the rows to read", "1", 1, 64,
         NULL, NULL},
        {"--attention", "FILE", CLI_STRING, &im.attention, "an attention.csv to read",
         "the model's own", 0, 0, NULL, NULL},
        {"--out", "NAME", CLI_STRING, &im.out, "the profile's name", "vidur-<gpu>-<model>[-tp<N>]",
         0, 0, NULL, NULL},
        {"--seed", "N", CLI_INT64, &seed, "the held-out selection", "1", 0, 9e18, NULL, NULL},
        {"--replace", NULL, CLI_FLAG, &im.replace, "replace a stored profile of the same name",
         NULL, 0, 0, NULL, NULL},
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&import_cmd, opts, &c, argc, argv, &im.dir, &npos);
    if (st != CLI_GO)
        return st;
    if (!im.gpu || !im.model) {
        fprintf(stderr, "llmsim profile import-vidur: give --gpu G and --model M\n");
        return 2;
    }
    char cmdline[512];
    cli_command_line("", argc, argv, cmdline, sizeof cmdline);
    im.seed = (uint64_t)seed;
    im.command = cmdline;
    return run_import(&im, c.db);
}

int cmd_profile(int argc, char **argv)
{
    static const cli_sub subs[] = {
        {"list", list, "the profiles a database holds"},
        {"show", show, "one profile's metadata, fits and held-out errors"},
        {"export", export_text, "a stored profile as text"},
        {"import", import_text, "a profile text, fitted and stored"},
        {"import-vidur", import_vidur, "Vidur's profiling tables as a fitted profile"},
    };
    return cli_dispatch("profile", subs, 5, argc, argv);
}
