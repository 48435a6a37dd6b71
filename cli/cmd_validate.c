/*
 * cmd_validate.c: `llmsim validate SET [--json] [-o plot.png]`, `validate --list`, `validate
 * --ops [--profile NAME]`: replays a validation set's measurements (study/validate.c), prints
 * the error per row and per group, stores the validation, and draws predicted against measured.
 *
 * Exit status: 0 when the set was replayed (whatever its errors) and, with -o, drawn; 1 on a
 * user error (an unknown or malformed set, a missing table, a database error); 2 on bad usage;
 * 3 when the plot could not be drawn because gnuplot is not installed (the data and script
 * files are written).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plots.h"
#include "store_profile.h"
#include "study_validate.h"

#define DEFAULT_OPS_SET "vidur-a100-ops"
/* Above this many rows the per-row table is left out unless --rows asks for it. */
#define ROWS_SHOWN 1000

static const cli_command validate_cmd = {
    .name = "validate",
    .args = "[SET]",
    .summary = "Replays the measurements of a validation set (a shipped set's name, as `--list` "
               "shows, or a set file) and prints how far llmsim's predictions are from them: per "
               "row and per group, the median, 90th percentile and worst |error| and the signed "
               "median (error = predicted / measured - 1). Rows the set's mapping or the cost "
               "model cannot express are counted and listed with the reason.",
    .details = "Serving sets run each row as a scenario (in --jobs worker processes; each run is "
               "stored, at --store level) and compare its summary metrics with the measured ones; "
               "operator sets (--ops) compare the roofline's time of each kernel with each "
               "measured point of a profiling table (the shipped set: Vidur's A100 tables) or of "
               "a stored profile (--profile NAME). The validation is stored in --db (tables "
               "validations, validation_rows, validation_values, validation_stats); -o draws "
               "predicted against measured (also later: llmsim plot validation --validation ID).",
    .min_pos = 0,
    .max_pos = 1,
    .common = CLI_DB | CLI_STORE | CLI_JSON | CLI_QUIET,
    .def_level = "summary"};

typedef struct vopts {
    int list, ops, rows, jobs, residuals;
    const char *out, *profile, *match, *errors;
} vopts;

/* ---- --list ---- */

static void list_one(void *arg, const study_vset_brief *b)
{
    sim_jsonw *j = arg;
    if (j->f) {
        sim_jsonw_open(j, NULL, '{');
        sim_jsonw_str(j, "name", b->name);
        sim_jsonw_str(j, "kind", b->kind == STUDY_V_SERVING ? "serving" : "operators");
        sim_jsonw_str(j, "description", b->description);
        sim_jsonw_str(j, "source", b->source);
        sim_jsonw_str(j, "path", b->path);
        sim_jsonw_close(j, '}');
        return;
    }
    printf("%-24s %-10s %s\n%-35s set file: %s\n", b->name,
           b->kind == STUDY_V_SERVING ? "serving" : "operators", b->description, "", b->path);
}

static int list_sets(const cli_common *c)
{
    sim_jsonw j;
    memset(&j, 0, sizeof j);
    sim_err err = {{0}};
    if (c->json) {
        sim_jsonw_begin(&j, stdout);
        sim_jsonw_open(&j, NULL, '[');
    } else {
        printf("%-24s %-10s %s\n", "set", "kind", "what it holds");
    }
    int n = study_vset_list(list_one, &j, &err);
    if (c->json)
        sim_jsonw_close(&j, ']');
    if (n < 0)
        return cli_fail("validate", &err);
    if (!c->json)
        printf("(%d sets in %s; run one with: llmsim validate NAME)\n", n, study_validation_dir());
    return 0;
}

/* ---- the text report ---- */

static const char *status_name(study_vstatus s)
{
    return s == STUDY_V_OK       ? "ok"
           : s == STUDY_V_CANNOT ? "cannot"
           : s == STUDY_V_REPEAT ? "repeat"
                                 : "failed";
}

static void print_num(double x)
{
    if (!isfinite(x))
        printf("%10s ", "-");
    else if (fabs(x) >= 1e5 || (x != 0 && fabs(x) < 0.01))
        printf("%10.3g ", x);
    else
        printf("%10.3f ", x);
}

static void print_err(double e)
{
    if (isfinite(e))
        printf("%+8.1f%%", 100 * e);
    else
        printf("%9s", "-");
}

static void print_rows(const study_vset *v)
{
    printf("\n");
    for (int m = 0; m < v->nmetrics; m++)
        printf("%-10s %-10s %9s | ", v->metric[m].label, v->metric[m].unit, "");
    printf("row (* = predicted under an approximation, listed below)\n");
    for (int m = 0; m < v->nmetrics; m++)
        printf("%10s %10s %9s | ", "measured", "predicted", "error");
    printf("\n");
    for (int i = 0; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        if (r->status != STUDY_V_OK)
            continue;
        for (int m = 0; m < v->nmetrics; m++) {
            print_num(r->measured[m]);
            print_num(r->predicted[m]);
            print_err(study_vrow_error(r, m));
            printf(" |");
        }
        printf(" %s%s\n", r->id, r->approx ? " *" : "");
    }
}

static void print_stats_as(const study_vset *v, const study_vstat *st, int n, const char *title,
                           const char *col)
{
    int w = 12;
    for (int k = 0; k < n; k++) {
        int l = (int)strlen(st[k].group);
        w = l > w ? l : w;
    }
    w = w > 60 ? 60 : w;
    printf("\n%s\n", title);
    printf("%-*s %-6s %6s %10s %10s %10s %14s\n", w, col, "metric", "n", "median|e|", "p90|e|",
           "worst|e|", "signed median");
    for (int k = 0; k < n; k++) {
        const study_vstat *s = &st[k];
        if (k > 0 && strcmp(s->group, "all") == 0 && strcmp(st[k - 1].group, "all") != 0)
            printf("\n");
        printf("%-*.*s %-6s %6d %9.1f%% %9.1f%% %9.1f%% %+13.1f%%\n", w, w, s->group,
               v->metric[s->metric].label, s->n, 100 * s->median_abs, 100 * s->p90_abs,
               100 * s->worst_abs, 100 * s->signed_median);
    }
    if (n == 0)
        printf("(no row was predicted)\n");
}

static void print_stats(const study_vset *v, const study_vstat *st, int n)
{
    print_stats_as(
        v, st, n, "error by group (error = predicted / measured - 1; the worst rows are in --json)",
        "group");
}

/* By the set's regimes (when it has some), and by validated group (engine, GPU generation,
 * dense or MoE: the figures `llmsim run` quotes from validation/errors.csv). */
static void print_more_stats(const study_vset *v)
{
    study_vstat *st = NULL;
    int n = study_vset_stats_by(v, STUDY_VBY_REGIME, &st);
    if (n > 0)
        print_stats_as(v, st, n, "error by regime (the set's regimes, first that holds)", "regime");
    free(st);
    n = study_vset_stats_by(v, STUDY_VBY_VALIDATED, &st);
    if (n > 0)
        print_stats_as(
            v, st, n,
            "error by validated group (engine, GPU generation, dense or MoE, aggregated or pd)",
            "validated group");
    free(st);
}

/* The median TTFT residual per group at each prompt length, or with life that of the request's
 * whole time (--residuals). */
static void print_by_prompt(const study_vresid *rs, int n, int life)
{
    for (int k = 0; k < n; k++) {
        const study_vresid *r = &rs[k];
        if (k > 0 && strcmp(r->group, "all") == 0)
            printf("\n");
        printf("%-40.40s", r->group);
        for (int i = 0; i < r->nprompt; i++) {
            double ms = life ? r->by_prompt[i].life_median_ms : r->by_prompt[i].median_ms;
            int rows = life ? r->by_prompt[i].nlife : r->by_prompt[i].n;
            if (isfinite(ms))
                printf("  %d: %+.1f (%d)", r->by_prompt[i].tokens, ms, rows);
            else
                printf("  %d: - (0)", r->by_prompt[i].tokens);
        }
        if (r->nprompt == 0)
            printf("  -");
        if (r->prompt_more)
            printf("  (%d rows at longer prompts)", r->prompt_more);
        printf("\n");
    }
}

static void print_residuals_by_prompt(const study_vresid *rs, int n)
{
    printf("\nTTFT residual by prompt length: median ms (rows) at each workload.prompt_tokens\n");
    print_by_prompt(rs, n, 0);
    printf(
        "\nrequest time residual by prompt length: median ms (rows) of measured - predicted TTFT "
        "+ (output tokens - 1) x TPOT,\n"
        "  arrival to last token (where the decode steps are priced right, a TTFT residual "
        "that this one does not carry is the order\n"
        "  of the closed loop's prefills, which come before a request's first token and which "
        "during its decode, not time left out)\n");
    print_by_prompt(rs, n, 1);
}

/* The TTFT residual per group in decode steps and closed-loop gaps (--residuals). */
static void print_residuals(const study_vresid *rs, int n)
{
    printf(
        "\nTTFT residual (measured - predicted) by group: in ms, and in decode steps of the "
        "row's measured TPOT (quartiles)\n"
        "near whole: of the rows 0.75 to 8.5 steps off, those within a quarter step of a whole "
        "number (half would be, by chance)\n"
        "gaps: in output tokens x measured TPOT / clients, the closed loop's mean time between "
        "completions (median)\n"
        "mixed: how much longer a mixed step (prefill with decodes) is than predicted, in ms "
        "(median over rows with a sibling\n"
        "  differing only in a longer output: (measured - predicted TPOT difference) / "
        "((clients - 1) x (1/(OSL1-1) - 1/(OSL2-1))))\n"
        "decode, rest: the same pairs split the closed loop's cycle, TTFT + (OSL-1) x TPOT, into "
        "a decode step of the full batch\n"
        "  (cycle difference / OSL difference) and the rest (prefills, time per request): "
        "predicted / measured - 1 (median)\n"
        "seats: the same pairs' TTFT residual growth / (measured cycle growth / clients): the "
        "places to run the loop is short of its\n"
        "  clients (1: one client always waits for another to finish; 0: none, or a wait that "
        "does not grow with the output) (median)\n");
    printf("%-40s %5s %10s %8s %8s %8s %12s %8s %8s %8s %8s %6s\n", "group", "n", "median ms",
           "p25", "steps", "p75", "near whole", "gaps", "mixed", "decode", "rest", "seats");
    for (int k = 0; k < n; k++) {
        const study_vresid *r = &rs[k];
        char near[32];
        snprintf(near, sizeof near, "%d of %d", r->near_whole, r->few);
        if (k > 0 && strcmp(r->group, "all") == 0)
            printf("\n");
        char gaps[32] = "-";
        if (isfinite(r->gaps_median))
            snprintf(gaps, sizeof gaps, "%.2f", r->gaps_median);
        char mixed[32] = "-";
        if (isfinite(r->mixed_median))
            snprintf(mixed, sizeof mixed, "%.1f", r->mixed_median);
        char dec[32] = "-", rest[32] = "-";
        if (isfinite(r->decode_error))
            snprintf(dec, sizeof dec, "%+.1f%%", 100 * r->decode_error);
        if (isfinite(r->rest_error))
            snprintf(rest, sizeof rest, "%+.1f%%", 100 * r->rest_error);
        char seats[32] = "-";
        if (isfinite(r->seats_median))
            snprintf(seats, sizeof seats, "%.2f", r->seats_median);
        printf("%-40.40s %5d %10.1f %8.2f %8.2f %8.2f %12s %8s %8s %8s %8s %6s\n", r->group, r->n,
               r->median_ms, r->steps_p25, r->steps_median, r->steps_p75, near, gaps, mixed, dec,
               rest, seats);
    }
    if (n == 0)
        printf("(no row has a measured and predicted TTFT and a measured TPOT)\n");
    else
        print_residuals_by_prompt(rs, n);
}

/* The distinct texts of one field over the rows of one status, with their counts. */
typedef struct tally {
    const char *text;
    int64_t n;
    int first; /* the first row with it */
} tally;

static int tally_of(const study_vset *v, study_vstatus st, int approx, tally *t, int max)
{
    int n = 0;
    for (int i = 0; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        const char *text = approx ? r->approx : r->reason;
        if (r->status != st || !text)
            continue;
        int k = 0;
        while (k < n && strcmp(t[k].text, text) != 0)
            k++;
        if (k == n && n < max)
            t[n++] = (tally){text, 0, i};
        if (k < n)
            t[k].n += r->count;
    }
    return n;
}

/* The ids of the rows of status st that give reason t, wrapped at 100 columns. */
static void print_reason_rows(const study_vset *v, study_vstatus st, const tally *t)
{
    int col = 15;
    for (int i = t->first; i < v->nrows; i++) {
        const study_vrow *r = &v->rows[i];
        if (r->status != st || strcmp(r->reason, t->text) != 0)
            continue;
        char item[200];
        int l = r->count > 1 ? snprintf(item, sizeof item, " %s (%lld)", r->id, (long long)r->count)
                             : snprintf(item, sizeof item, " %s", r->id);
        if (col + l > 100) {
            printf("\n               ");
            col = 15;
        }
        fputs(item, stdout);
        col += l;
    }
}

static void print_listing(const study_vset *v, study_vstatus st, const char *title)
{
    int64_t total = 0;
    for (int i = 0; i < v->nrows; i++)
        total += v->rows[i].status == st ? v->rows[i].count : 0;
    if (total == 0)
        return;
    tally *t = sim_xcalloc((size_t)v->nrows, sizeof *t);
    int n = tally_of(v, st, 0, t, v->nrows);
    printf("\n%s: %lld measurements, by reason\n", title, (long long)total);
    for (int k = 0; k < n; k++) {
        printf("  %6lld  %s\n          rows:", (long long)t[k].n, t[k].text);
        print_reason_rows(v, st, &t[k]);
        printf("\n");
    }
    free(t);
}

/* The rows that repeat an earlier row's measurement, each with the row it repeats. */
static void print_repeats(const study_vset *v)
{
    int n = 0;
    for (int i = 0; i < v->nrows; i++)
        n += v->rows[i].status == STUDY_V_REPEAT;
    if (n == 0)
        return;
    printf("\nrepeated measurements: %d rows, each compared once, as the row it repeats\n", n);
    for (int i = 0; i < v->nrows; i++)
        if (v->rows[i].status == STUDY_V_REPEAT)
            printf("  %s\n      repeats %s\n", v->rows[i].id, v->rows[i].reason);
}

static void print_approx(const study_vset *v)
{
    tally *t = sim_xcalloc((size_t)v->nrows + 1, sizeof *t);
    int n = tally_of(v, STUDY_V_OK, 1, t, v->nrows);
    if (n > 0)
        printf("\napproximations the predicted rows ran under (rows marked *)\n");
    for (int k = 0; k < n; k++)
        printf("  %6lld  %s\n", (long long)t[k].n, t[k].text);
    free(t);
}

static void print_heading(const study_vset *v)
{
    int64_t ok, cannot, failed;
    study_vset_counts(v, &ok, &cannot, &failed);
    printf("validate %s (%s): %s\n", v->name, v->kind == STUDY_V_SERVING ? "serving" : "operators",
           v->description);
    printf("set: %s\nmeasured: %s\ncost model: %s\n", v->path, v->source, v->cost_model);
    printf("measurements: %lld: %lld predicted, %lld cannot be expressed, %lld failed",
           (long long)(ok + cannot + failed), (long long)ok, (long long)cannot, (long long)failed);
    if (v->skipped)
        printf(" (%lld more not selected by --match)", (long long)v->skipped);
    printf("\n");
    if (v->notes[0]) {
        printf("notes:\n");
        for (const char *l = v->notes; *l;) {
            size_t n = strcspn(l, "\n");
            printf("  - %.*s\n", (int)n, l);
            l += n + (l[n] == '\n');
        }
    }
}

static void print_report(const study_vset *v, const study_vstat *st, int nst, const vopts *o)
{
    print_heading(v);
    int64_t ok, cannot, failed;
    study_vset_counts(v, &ok, &cannot, &failed);
    if (o->rows || ok <= ROWS_SHOWN)
        print_rows(v);
    else
        printf("\n(%lld predicted rows: --rows lists them, --json gives them all)\n",
               (long long)ok);
    print_stats(v, st, nst);
    if (v->kind == STUDY_V_SERVING)
        print_more_stats(v);
    if (o->residuals) {
        study_vresid *rs = NULL;
        int n = study_vset_residuals(v, &rs);
        print_residuals(rs, n > 0 ? n : 0);
        free(rs);
    }
    print_approx(v);
    print_listing(v, STUDY_V_CANNOT, "cannot be expressed");
    print_listing(v, STUDY_V_FAILED, "failed");
    print_repeats(v);
}

/* ---- JSON ---- */

static void json_values(sim_jsonw *j, const study_vset *v, const study_vrow *r, const char *key,
                        int which)
{
    sim_jsonw_open(j, key, '{');
    for (int m = 0; m < v->nmetrics; m++) {
        double x = which == 0   ? r->measured[m]
                   : which == 1 ? r->predicted[m]
                                : study_vrow_error(r, m);
        if (isfinite(x))
            sim_jsonw_num(j, v->metric[m].name, x);
    }
    sim_jsonw_close(j, '}');
}

static void json_row(sim_jsonw *j, const study_vset *v, const study_vrow *r)
{
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "id", r->id);
    sim_jsonw_str(j, "group", r->group);
    if (r->line > 0)
        sim_jsonw_int(j, "line", r->line);
    if (r->count != 1)
        sim_jsonw_int(j, "measurements", r->count);
    sim_jsonw_str(j, "status", status_name(r->status));
    if (r->regime)
        sim_jsonw_str(j, "regime", r->regime);
    if (r->reason)
        sim_jsonw_str(j, "reason", r->reason);
    if (r->approx)
        sim_jsonw_str(j, "approx", r->approx);
    if (r->run_id > 0)
        sim_jsonw_int(j, "run_id", r->run_id);
    json_values(j, v, r, "measured", 0);
    json_values(j, v, r, "predicted", 1);
    json_values(j, v, r, "error", 2);
    sim_jsonw_close(j, '}');
}

static void json_stats(sim_jsonw *j, const study_vset *v, const char *key, const study_vstat *st,
                       int nst)
{
    sim_jsonw_open(j, key, '[');
    for (int k = 0; k < nst; k++) {
        sim_jsonw_open(j, NULL, '{');
        sim_jsonw_str(j, "group", st[k].group);
        sim_jsonw_str(j, "metric", v->metric[st[k].metric].name);
        sim_jsonw_int(j, "n", st[k].n);
        sim_jsonw_num(j, "median_abs_error", st[k].median_abs);
        sim_jsonw_num(j, "p90_abs_error", st[k].p90_abs);
        sim_jsonw_num(j, "worst_abs_error", st[k].worst_abs);
        sim_jsonw_num(j, "signed_median_error", st[k].signed_median);
        if (st[k].worst_row >= 0)
            sim_jsonw_str(j, "worst_row", v->rows[st[k].worst_row].id);
        sim_jsonw_close(j, '}');
    }
    sim_jsonw_close(j, ']');
}

/* The set's notes, a line a string, as the JSON array "notes". */
static void json_notes(sim_jsonw *j, const char *notes)
{
    sim_jsonw_open(j, "notes", '[');
    for (const char *l = notes; *l;) {
        size_t n = strcspn(l, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        sim_jsonw_str(j, NULL, line);
        l += n + (l[n] == '\n');
    }
    sim_jsonw_close(j, ']');
}

/* The set's statistics grouped by `by`, as the JSON array `name`. */
static void json_stats_by(sim_jsonw *j, const study_vset *v, study_vby by, const char *name)
{
    study_vstat *more = NULL;
    int n = study_vset_stats_by(v, by, &more);
    json_stats(j, v, name, more, n);
    free(more);
}

/* A group's residuals as JSON members (gaps_median follows when known). */
#define RESID(key, kind, member) SIM_JFIELD(key, kind, study_vresid, member)
static const sim_jfield resid_fields[] = {
    RESID("group", SIM_JF_CHARS, group),
    RESID("n", SIM_JF_INT, n),
    RESID("median_ms", SIM_JF_NUM, median_ms),
    RESID("steps_p25", SIM_JF_NUM, steps_p25),
    RESID("steps_median", SIM_JF_NUM, steps_median),
    RESID("steps_p75", SIM_JF_NUM, steps_p75),
    RESID("few_steps", SIM_JF_INT, few),
    RESID("near_whole_step", SIM_JF_INT, near_whole),
    RESID("n_gaps", SIM_JF_INT, ngap),
};

/* The residuals (--residuals) as the JSON array "ttft_residuals". */
static void json_residuals(sim_jsonw *j, const study_vset *v)
{
    study_vresid *rs = NULL;
    int n = study_vset_residuals(v, &rs);
    sim_jsonw_open(j, "ttft_residuals", '[');
    for (int k = 0; k < n; k++) {
        const study_vresid *r = &rs[k];
        sim_jsonw_open(j, NULL, '{');
        SIM_JSONW_TABLE(j, resid_fields, r);
        if (isfinite(r->gaps_median))
            sim_jsonw_num(j, "gaps_median", r->gaps_median);
        sim_jsonw_int(j, "n_pairs", r->npairs);
        if (isfinite(r->mixed_median))
            sim_jsonw_num(j, "mixed_step_excess_ms", r->mixed_median);
        sim_jsonw_int(j, "n_cycles", r->ncycles);
        if (isfinite(r->decode_error))
            sim_jsonw_num(j, "decode_step_error", r->decode_error);
        if (isfinite(r->rest_error))
            sim_jsonw_num(j, "cycle_rest_error", r->rest_error);
        sim_jsonw_int(j, "n_seat_pairs", r->nseats);
        if (isfinite(r->seats_median))
            sim_jsonw_num(j, "seats_short", r->seats_median);
        sim_jsonw_open(j, "by_prompt_tokens", '[');
        for (int i = 0; i < r->nprompt; i++) {
            sim_jsonw_open(j, NULL, '{');
            sim_jsonw_int(j, "prompt_tokens", r->by_prompt[i].tokens);
            sim_jsonw_int(j, "n", r->by_prompt[i].n);
            sim_jsonw_num(j, "median_ms", r->by_prompt[i].median_ms);
            sim_jsonw_int(j, "n_request_time", r->by_prompt[i].nlife);
            if (isfinite(r->by_prompt[i].life_median_ms))
                sim_jsonw_num(j, "request_time_median_ms", r->by_prompt[i].life_median_ms);
            sim_jsonw_close(j, '}');
        }
        sim_jsonw_close(j, ']');
        if (r->prompt_more)
            sim_jsonw_int(j, "rows_at_longer_prompts", r->prompt_more);
        sim_jsonw_close(j, '}');
    }
    sim_jsonw_close(j, ']');
    free(rs);
}

static void print_json(const study_vset *v, const study_vstat *st, int nst, int64_t id,
                       int residuals)
{
    int64_t ok, cannot, failed;
    study_vset_counts(v, &ok, &cannot, &failed);
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    sim_jsonw_int(&j, "validation_id", id);
    sim_jsonw_str(&j, "set", v->name);
    sim_jsonw_str(&j, "kind", v->kind == STUDY_V_SERVING ? "serving" : "operators");
    sim_jsonw_str(&j, "file", v->path);
    sim_jsonw_str(&j, "source", v->source);
    sim_jsonw_str(&j, "cost_model", v->cost_model);
    json_notes(&j, v->notes);
    sim_jsonw_open(&j, "measurements", '{');
    sim_jsonw_int(&j, "predicted", ok);
    sim_jsonw_int(&j, "cannot", cannot);
    sim_jsonw_int(&j, "failed", failed);
    sim_jsonw_int(&j, "not_selected", v->skipped);
    sim_jsonw_close(&j, '}');
    json_stats(&j, v, "groups", st, nst);
    if (v->kind == STUDY_V_SERVING) {
        json_stats_by(&j, v, STUDY_VBY_REGIME, "regimes");
        json_stats_by(&j, v, STUDY_VBY_VALIDATED, "validated_groups");
    }
    if (residuals)
        json_residuals(&j, v);
    sim_jsonw_open(&j, "rows", '[');
    for (int i = 0; i < v->nrows; i++)
        json_row(&j, v, &v->rows[i]);
    sim_jsonw_close(&j, ']');
    sim_jsonw_close(&j, '}');
}

/* ---- running ---- */

static void on_row(void *arg, int finished, int total)
{
    cli_progress *p = arg;
    if (p->total != total)
        cli_progress_start(p, "rows", total, p->quiet);
    cli_progress_update(p, finished);
}

/* Draws validation id of db into out; 0, 3 without gnuplot, 1 on an error. */
static int draw(const char *db, int64_t id, const char *out, const cli_common *c)
{
    plt_opts o = {.kind = PLT_VALIDATION, .db = db, .validation = id, .out = out};
    plt_result res;
    sim_err err = {{0}};
    if (plt_plot(&o, &res, &err) != 0)
        return cli_fail("validate", &err);
    if (!res.rendered) {
        fprintf(stderr,
                "llmsim validate: gnuplot is not installed, so no image was drawn; draw it "
                "later with: gnuplot %s (apt-get install gnuplot-nox)\n",
                res.script);
        return 3;
    }
    cli_note(c, "llmsim: wrote %s (data %s, script %s)\n", res.image, res.data, res.script);
    return 0;
}

/* The set to replay into v. 0, or 1 after a message. */
static int load_set(const vopts *o, const char *name, const cli_common *c, study_vset *v)
{
    sim_err err = {{0}};
    char path[1024];
    if (o->profile) {
        store *s = store_open_readonly(c->db, &err);
        int rc = s ? study_vset_from_profile(s, o->profile, o->match, v, &err) : -1;
        store_close(s);
        return rc ? cli_fail("validate", &err) : 0;
    }
    if (!name)
        name = DEFAULT_OPS_SET;
    if (study_vset_path(name, path, sizeof path, &err) || study_vset_load(path, o->match, v, &err))
        return cli_fail("validate", &err);
    if (o->ops && v->kind != STUDY_V_OPERATORS) {
        fprintf(stderr, "llmsim validate: --ops: %s is a serving set, not an operator set\n",
                v->path);
        return 1;
    }
    return 0;
}

/* Stores the replayed set v and its statistics in db as validation *id. 0, or -1 with err. */
static int store_set(const char *db, study_vset *v, const study_vstat *st, int nst, int64_t *id,
                     sim_err *err)
{
    store *s = store_open(db, err);
    int rc = s && study_vset_store(v, st, nst, s, id, err) == 0 ? 0 : -1;
    store_close(s);
    return rc;
}

/* The replayed set v's report (or JSON) with its nst statistics st, stored as validation id. */
static void print_result(const vopts *o, const cli_common *c, const study_vset *v,
                         const study_vstat *st, int nst, int64_t id)
{
    if (c->json) {
        print_json(v, st, nst, id, o->residuals);
        return;
    }
    print_report(v, st, nst, o);
    printf("\nstored as validation %lld in %s (llmsim plot validation --validation %lld)\n",
           (long long)id, c->db, (long long)id);
}

static int run_set(const vopts *o, const cli_common *c, study_vset *v)
{
    sim_err err = {{0}};
    cli_progress prog;
    memset(&prog, 0, sizeof prog);
    prog.quiet = c->quiet || c->json;
    if (study_vset_run(v, c->db, o->jobs, c->level, on_row, &prog, &err))
        return cli_fail("validate", &err);
    study_vstat *st = NULL;
    int nst = study_vset_stats(v, &st);
    int64_t id = 0;
    if (store_set(c->db, v, st, nst, &id, &err) != 0 ||
        (o->errors && study_verrors_write(v, o->errors, &err) != 0)) {
        free(st);
        return cli_fail("validate", &err);
    }
    print_result(o, c, v, st, nst, id);
    free(st);
    fflush(stdout);
    return o->out ? draw(c->db, id, o->out, c) : 0;
}

/* Whether the options go together: --profile with --ops alone, --errors with a serving set, a SET
 * or --ops. 0, or -1 after a message. */
static int check_options(const vopts *o, const char *set)
{
    if (o->profile && (!o->ops || set)) {
        fprintf(stderr, "llmsim validate: --profile NAME goes with --ops and no SET\n");
        return -1;
    }
    if (o->errors && o->ops) {
        fprintf(stderr, "llmsim validate: --errors FILE goes with a serving set, not --ops\n");
        return -1;
    }
    if (o->residuals && o->ops) {
        fprintf(stderr, "llmsim validate: --residuals goes with a serving set, not --ops\n");
        return -1;
    }
    if (!set && !o->ops) {
        fprintf(stderr, "llmsim validate: give a SET (llmsim validate --list shows them), or "
                        "--ops\n");
        return -1;
    }
    return 0;
}

int cmd_validate(int argc, char **argv)
{
    vopts o = {0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o.jobs = cores > 0 ? (int)cores : 1;
    char jobs_def[32];
    snprintf(jobs_def, sizeof jobs_def, "%d, the cores", o.jobs);
    const cli_option opts[] = {
        {"--list", NULL, CLI_FLAG, &o.list, "list the shipped sets and exit", NULL, 0, 0, NULL,
         NULL},
        {"--ops", NULL, CLI_FLAG, &o.ops,
         "per-operator validation: SET is an operator set (default " DEFAULT_OPS_SET
         ", Vidur's A100 tables), or --profile NAME",
         NULL, 0, 0, NULL, NULL},
        {"--profile", "NAME", CLI_STRING, &o.profile,
         "with --ops: a stored profile's measured points against the roofline", NULL, 0, 0, NULL,
         NULL},
        CLI_OUTPUT(&o.out, "draw predicted against measured into FILE (.png, .svg or .pdf)", NULL),
        {"--jobs", "N", CLI_INT, &o.jobs, "worker processes for a serving set's runs", jobs_def, 1,
         1024, NULL, NULL},
        {"--match", "TEXT", CLI_STRING, &o.match,
         "replay only the rows whose id contains TEXT (the others are counted as not selected)",
         NULL, 0, 0, NULL, NULL},
        {"--errors", "FILE", CLI_STRING, &o.errors,
         "write the error per validated group (engine, GPU generation, dense or MoE) as CSV to "
         "FILE: the table `run`, `capacity` and `report` quote (validation/errors.csv ships the "
         "development set's)",
         NULL, 0, 0, NULL, NULL},
        {"--residuals", NULL, CLI_FLAG, &o.residuals,
         "also print the TTFT residual (measured - predicted) per group in decode steps (the "
         "row's measured TPOT) and in closed-loop gaps (output tokens x TPOT / clients): the "
         "units a late-counted first token and a wait for another request's completion leave it "
         "in, how much longer a mixed step is than predicted and the error of a decode step "
         "and of the rest of the closed loop's cycle and the seats the loop is short of its "
         "clients, from rows that differ only in output length, and the residual's median at each "
         "prompt length beside that of the request's "
         "whole time, TTFT + (output tokens - 1) x TPOT (a serving set measuring TTFT and TPOT)",
         NULL, 0, 0, NULL, NULL},
        {"--rows", NULL, CLI_FLAG, &o.rows,
         "list every predicted row (by default only when there are at most 1000)", NULL, 0, 0, NULL,
         NULL},
        CLI_END};
    cli_common c;
    const char *set = NULL;
    int npos, st = cli_parse(&validate_cmd, opts, &c, argc, argv, &set, &npos);
    if (st != CLI_GO)
        return st;
    if (npos == 0)
        set = NULL;
    if (o.list)
        return list_sets(&c);
    if (check_options(&o, set) != 0)
        return 2;
    study_vset v;
    memset(&v, 0, sizeof v);
    int rc = load_set(&o, set, &c, &v);
    study_vresid *none = NULL;
    if (rc == 0 && o.residuals && study_vset_residuals(&v, &none) < 0) {
        fprintf(stderr,
                "llmsim validate: --residuals: %s measures no mean_ttft_ms or no mean_tpot_ms\n",
                v.path);
        rc = 1;
    }
    free(none);
    if (rc == 0)
        rc = run_set(&o, &c, &v);
    study_vset_free(&v);
    return rc;
}
