/*
 * cmd_recommend.c: `llmsim recommend [FILE] --model M --gpu G[,G2] (--gpus N | --target-rate R)
 * --slo ...`: the Pareto front of layouts, engines and settings (study/recommend.c) as a table
 * with each point's launch command, JSON, a plot (-o) and a report (--report).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plots.h"
#include "study_recommend.h"

static const cli_command recommend_cmd = {
    .name = "recommend",
    .args = "[FILE] --slo METRIC_PCT=VALUE,...",
    .summary = "Recommends deployments for a model on GPU types within a GPU budget (--gpus) or "
               "for a target rate: the Pareto front of output tokens/s per GPU against tokens/s "
               "per user over layouts (TP, PP, EP, attention DP), aggregated or disaggregated "
               "splits, engines, seats, token budget and KV dtype, each point confirmed by "
               "simulation and given with the real engine's launch command.",
    .details =
        "Candidates are pruned by memory fit and roofline bounds, screened analytically (decode "
        "steps priced by the cost model), and the best --top are simulated: a capacity search "
        "each on the same seeds, then 0.9, 0.75, 0.5 and 0.25 of the rate found; the front's "
        "points "
        "are run again at fresh seeds and leave the front if they miss. --exhaustive simulates "
        "every candidate that fits. --minimise cost weighs each unit's GPUs at their price per "
        "GPU-hour (the catalog's, or the scenario's price:): the front is output tokens per USD "
        "against tokens/s per user, and the recommended point the cheapest for the target rate "
        "(or the most tokens per USD); a GPU type without a price is refused. "
        "Pipeline parallelism is searched with aggregated units: TP x PP within a node, and "
        "units of 2 or 4 nodes with TP 8 in each and a stage a node. The "
        "probes are stored as a capacity search (llmsim report --capacity ID). Without FILE, "
        "--model, --gpu and --isl/--osl (or --lengths sharegpt) describe the workload.",
    CLI_SIMULATES(0, "summary")};

typedef struct rec_state {
    cli_common c;
    study_recommend r;
    cli_quick q;
    char slo_text[1024];
    char gpu_list[256];
    char engine_list[128];
    const char *engines_arg, *plot, *report;
    char validated[512]; /* the recommended point's validated error ("" when none) */
} rec_state;

static int take_objective(void *arg, const char *v)
{
    if (study_objective_parse(v, arg) == 0)
        return 0;
    fprintf(stderr, "llmsim recommend: --minimise expects gpus or cost; got '%s'\n", v);
    return -1;
}

static int add_slo(void *arg, const char *v)
{
    rec_state *s = arg;
    return cli_slo_add("recommend", &s->r.cap, s->slo_text, sizeof s->slo_text, v);
}

static void on_note(void *arg, const char *line)
{
    cli_note(&((rec_state *)arg)->c, "%s\n", line);
}

/* Splits list (in place) on commas into out[max]; the count, or -1 when too many. */
static int split(char *list, const char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max)
            return -1;
        out[n++] = t;
    }
    return n;
}

static int check_engines(rec_state *s)
{
    static const char *const known[] = {"vllm", "sglang", "trtllm"};
    snprintf(s->engine_list, sizeof s->engine_list, "%s",
             s->engines_arg ? s->engines_arg : "vllm,sglang,trtllm");
    s->r.nengines = split(s->engine_list, s->r.engines, STUDY_REC_MAX_ENGINES);
    for (int i = 0; i < s->r.nengines; i++) {
        int ok = 0;
        for (int k = 0; k < 3; k++)
            ok |= strcmp(s->r.engines[i], known[k]) == 0;
        if (!ok) {
            char near[64];
            sim_nearest(s->r.engines[i], known, 3, 2, near, sizeof near);
            fprintf(stderr,
                    "llmsim recommend: engine '%s' has no launch command here%s%s; valid: vllm, "
                    "sglang, trtllm\n",
                    s->r.engines[i], near[0] ? "; nearest: " : "", near);
            return 2;
        }
    }
    return s->r.nengines > 0 ? CLI_GO : 2;
}

static int parse(int argc, char **argv, rec_state *s)
{
    study_recommend *r = &s->r;
    r->cap.precision = 0.05;
    r->cap.max_seeds = 3;
    cli_option opts[14 + CLI_QUICK_NOPTS] = {
        {"--slo", "LIST", CLI_CALL, NULL,
         "service-level objectives: ttft_p99=1000ms, tpot_p99=50ms, tps_per_user=N (repeatable)",
         NULL, 0, 0, add_slo, s},
        {"--gpus", "N", CLI_INT, &r->budget, "the GPU budget: units fit in N GPUs", NULL, 1, 1e6,
         NULL, NULL},
        {"--target-rate", "R", CLI_DOUBLE, &r->target,
         "requests/s the deployment must serve (units sized for it)", NULL, 0, 1e9, NULL, NULL},
        {"--engines", "LIST", CLI_STRING, &s->engines_arg, "engines searched", "vllm,sglang,trtllm",
         0, 0, NULL, NULL},
        {"--top", "K", CLI_INT, &r->top, "candidates simulated after the screen", "8", 1, 4096,
         NULL, NULL},
        {"--exhaustive", NULL, CLI_FLAG, &r->exhaustive,
         "simulate every candidate that fits (no analytic screen)", NULL, 0, 0, NULL, NULL},
        {"--no-disagg", NULL, CLI_FLAG, &r->no_disagg, "aggregated deployments only", NULL, 0, 0,
         NULL, NULL},
        {"--no-knobs", NULL, CLI_FLAG, &r->no_knobs,
         "each engine's default seats and token budget only", NULL, 0, 0, NULL, NULL},
        {"--precision", "F", CLI_DOUBLE, &r->cap.precision,
         "relative width at which each rate search stops", "0.05", 1e-6, 0.999999, NULL, NULL},
        {"--max-rejected", "F", CLI_DOUBLE, &r->cap.max_rejected,
         "fraction of requests a probe may reject", "0", 0, 1, NULL, NULL},
        {"-o", "FILE", CLI_STRING, &s->plot, "draw the front (.png, .svg or .pdf)", NULL, 0, 0,
         NULL, NULL},
        {"--report", "FILE", CLI_STRING, &s->report, "write an HTML report", NULL, 0, 0, NULL,
         NULL},
        {"--minimise", "WHAT", CLI_CALL, NULL,
         "gpus or cost (each unit's GPUs at their price per GPU-hour): the front and the pick",
         "gpus", 0, 0, take_objective, &r->cap.minimise}};
    opts[cli_quick_options(&s->q, opts, 13)] = (cli_option)CLI_END;
    const char *file = NULL;
    int npos, st = cli_parse(&recommend_cmd, opts, &s->c, argc, argv, &file, &npos);
    if (st != CLI_GO)
        return st;
    if (r->cap.nslo == 0) {
        fprintf(stderr, "llmsim recommend: give the SLOs with --slo, e.g. ttft_p99=1000ms\n");
        return 2;
    }
    if (!s->q.gpu && !file) {
        fprintf(stderr, "llmsim recommend: give the GPU types with --gpu G[,G2...]\n");
        return 2;
    }
    if (s->q.gpu) { /* a list: the scenario loads with the first, the search tries each */
        snprintf(s->gpu_list, sizeof s->gpu_list, "%s", s->q.gpu);
        r->ngpus = split(s->gpu_list, r->gpus, STUDY_REC_MAX_GPU_KINDS);
        if (r->ngpus < 1) {
            fprintf(stderr, "llmsim recommend: at most %d GPU types\n", STUDY_REC_MAX_GPU_KINDS);
            return 2;
        }
        s->q.gpu = r->gpus[0];
    }
    r->model_id = s->q.model;
    st = cli_quick_apply("recommend", &s->q, &s->c, &file, &r->cap.text);
    if (st != CLI_GO)
        return st;
    cli_capacity_take(&r->cap, file, &s->c);
    r->note = on_note;
    r->note_arg = s;
    return check_engines(s);
}

/* ---- output ---- */

static int by_user(const void *a, const void *b)
{
    const study_rec_point *p = *(const study_rec_point *const *)a;
    const study_rec_point *q = *(const study_rec_point *const *)b;
    return p->tps_user < q->tps_user ? -1 : p->tps_user > q->tps_user;
}

/* The front's points, by tokens/s per user (*n of them; free the array). */
static const study_rec_point **front(const study_recommend *r, int *n)
{
    const study_rec_point **v = sim_xcalloc((size_t)(r->np > 0 ? r->np : 1), sizeof *v);
    *n = 0;
    for (int i = 0; i < r->np; i++)
        if (r->p[i].front)
            v[(*n)++] = &r->p[i];
    qsort(v, (size_t)*n, sizeof *v, by_user);
    return v;
}

static void print_head(const rec_state *s, const scn_scenario *scn)
{
    const study_recommend *r = &s->r;
    printf("recommend: %s | GPUs", scn->engine.model.name);
    for (int g = 0; g < r->ngpus; g++)
        printf("%s%s", g ? "," : " ", r->c && r->nc ? r->gpus[g] : r->gpus[g]);
    if (r->budget > 0)
        printf(" | budget %d GPUs", r->budget);
    if (r->target > 0)
        printf(" | target %g req/s", r->target);
    printf(" | SLO");
    for (int i = 0; i < r->cap.nslo; i++)
        printf(" %s<=%gms", r->cap.slo[i].label, r->cap.slo[i].limit_ms);
    printf(" | prompts %.0f (p99 %.0f), outputs %.0f tokens\n", r->isl, r->isl_p99, r->osl);
    const char *x = cli_extrapolated(scn);
    if (x)
        printf("note: %s\n", x);
}

/* The front's heading and column names (the cost columns when minimising cost). */
static void front_heading(const study_recommend *r, int cost)
{
    printf("Pareto front: %s against tokens/s per user (each point met the SLOs, and again at "
           "fresh seeds):\n",
           cost ? "output tokens per USD" : "output tokens/s per GPU");
    printf("%-3s %-36s %5s %10s %6s %11s %10s %10s", "#", "candidate", "GPUs", "rate/unit", "units",
           "total req/s", "tok/s/GPU", "tok/s/user");
    if (cost)
        printf(" %8s %9s", "USD/h", "tok/USD");
    for (int i = 0; i < r->cap.nslo; i++)
        printf(" %12s", r->cap.slo[i].label);
    printf("\n");
}

/* Point p's row, numbered i + 1: candidate, size, rates, cost, SLO values. */
static void front_row(const study_recommend *r, int i, const study_rec_point *p, int cost)
{
    char a[32];
    const study_rec_cand *k = &r->c[p->cand];
    printf("%-3d %-36s %5d %10.4g %6d %11.4g %10s %10.1f", i + 1, k->choice.name, k->gpus, p->rate,
           p->units, p->total_rate, study_fmt_num(p->tps_gpu, a, sizeof a), p->tps_user);
    if (cost)
        printf(" %8.2f %9s", p->usd_h, study_fmt_num(p->tok_usd, a, sizeof a));
    for (int j = 0; j < r->cap.nslo; j++)
        printf(" %12s", study_fmt_num(p->t.value[j], a, sizeof a));
    printf("\n");
}

/* Why the recommended point was picked, in words. */
static const char *best_because(const study_recommend *r, int cost)
{
    return r->target > 0 && cost ? "the cheapest for the target rate"
           : r->target > 0       ? "the fewest GPUs for the target rate"
           : r->budget > 0       ? "the most requests/s within the budget"
           : cost                ? "the most output tokens per USD"
                                 : "the most tokens/s per GPU";
}

/* The recommended point p, numbered i + 1: its size, rate, cost, the cluster's check, why it
 * was picked and its validated error. */
static void print_best(const rec_state *s, int i, const study_rec_point *p, int cost)
{
    const study_recommend *r = &s->r;
    const study_rec_cand *k = &r->c[p->cand];
    printf("recommended: [%d] %s, %d unit%s of %d GPU%s (%d GPUs), %.4g req/s in all", i + 1,
           k->choice.name, p->units, p->units == 1 ? "" : "s", k->gpus, k->gpus == 1 ? "" : "s",
           p->units * k->gpus, p->total_rate);
    if (cost)
        printf(", %.2f USD/h", p->usd_h);
    if (r->cluster_ok >= 0)
        printf("; as a cluster at %g req/s: %s", r->target,
               r->cluster_ok ? "meets the SLOs" : "misses them (more units needed)");
    printf(" (%s)\n", best_because(r, cost));
    if (s->validated[0])
        printf("[%d]: %s\n", i + 1, s->validated);
}

static void print_front(const rec_state *s)
{
    const study_recommend *r = &s->r;
    int n, cost = r->cap.minimise == STUDY_MIN_COST;
    const study_rec_point **v = front(r, &n);
    char launch[2048];
    front_heading(r, cost);
    for (int i = 0; i < n; i++)
        front_row(r, i, v[i], cost);
    if (n == 0)
        printf("(no candidate met the SLOs)\n");
    for (int i = 0; i < n; i++)
        printf("[%d] %s\n", i + 1,
               study_launch(&r->c[v[i]->cand], r->launch_model, launch, sizeof launch));
    for (int i = 0; i < n; i++)
        if (r->best >= 0 && v[i] == &r->p[r->best])
            print_best(s, i, v[i], cost);
    free(v);
}

static void print_simulated(const study_recommend *r)
{
    printf("simulated candidates (screen: the analytic estimate; rate: the capacity search's):\n");
    printf("%-36s %14s %11s %12s  %s\n", "candidate", "screen tok/s/GPU", "tok/s/user", "rate/unit",
           "verdict");
    for (int i = 0; i < r->nc; i++) {
        const study_rec_cand *k = &r->c[i];
        if (k->state != STUDY_REC_SIMULATED)
            continue;
        printf("%-36s %14.0f %11.1f %12.4g  %s\n", k->choice.name, k->a_tps_gpu, k->a_tps_user,
               k->ans.rate, k->ans.why[0] ? k->ans.why : study_verdict_name(k->ans.verdict));
    }
}

/* The search's counts (stdout: the same question gives the same table) and its time (stderr). */
static void print_counts(const rec_state *s)
{
    const study_recommend *r = &s->r;
    printf("(%d candidates: %d do not fit, %d miss a roofline bound, %d screened out, %d simulated "
           "(%d of them the best's siblings in seats and budget) in %lld runs; %d front points "
           "failed confirmation)\n",
           r->nc, r->n_fit, r->n_roofline, r->n_screened, r->n_sim, r->n_refined,
           (long long)r->cap.runs, r->n_unconfirmed);
    fflush(stdout);
    cli_note(&s->c, "llmsim recommend: screen %.2f s, simulation %.1f s\n", r->screen_s, r->sim_s);
}

/* Each SLO's label with its value in v, into the open object. */
static void json_slo_values(sim_jsonw *j, const study_recommend *r, const double *v)
{
    for (int i = 0; i < r->cap.nslo; i++)
        sim_jsonw_num(j, r->cap.slo[i].label, v[i]);
}

static void json_point(sim_jsonw *j, const study_recommend *r, const study_rec_point *p)
{
    const study_rec_cand *k = &r->c[p->cand];
    char launch[2048];
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "candidate", k->choice.name);
    sim_jsonw_open(j, "sets", '[');
    for (int s = 0; s < k->choice.nsets; s++)
        sim_jsonw_str(j, NULL, k->choice.set[s]);
    sim_jsonw_close(j, ']');
    sim_jsonw_str(j, "gpu", k->gpu);
    sim_jsonw_str(j, "engine", k->engine);
    sim_jsonw_bool(j, "disaggregated", k->disagg);
    sim_jsonw_int(j, "gpus_per_unit", k->gpus);
    sim_jsonw_num(j, "rate_per_unit", p->rate);
    sim_jsonw_int(j, "units", p->units);
    sim_jsonw_num(j, "total_rate", p->total_rate);
    sim_jsonw_num(j, "output_tps_per_gpu", p->tps_gpu);
    sim_jsonw_num(j, "tps_per_user", p->tps_user);
    if (r->cap.minimise == STUDY_MIN_COST) {
        sim_jsonw_num(j, "usd_per_hour", p->usd_h);
        sim_jsonw_num(j, "output_tokens_per_usd", p->tok_usd);
    }
    sim_jsonw_open(j, "slo_values", '{');
    json_slo_values(j, r, p->t.value);
    sim_jsonw_close(j, '}');
    sim_jsonw_open(j, "confirm", '{');
    json_slo_values(j, r, p->confirm.value);
    sim_jsonw_bool(j, "ok", p->confirm.ok);
    sim_jsonw_close(j, '}');
    sim_jsonw_str(j, "launch", study_launch(k, r->launch_model, launch, sizeof launch));
    sim_jsonw_close(j, '}');
}

/* The question: model, GPU types, budget, target rate, objective and SLOs. */
static void json_question(sim_jsonw *j, const study_recommend *r, const scn_scenario *scn)
{
    sim_jsonw_str(j, "model", scn->engine.model.name);
    const char *x = cli_extrapolated(scn);
    if (x)
        sim_jsonw_str(j, "extrapolated", x);
    sim_jsonw_open(j, "gpus", '[');
    for (int g = 0; g < r->ngpus; g++)
        sim_jsonw_str(j, NULL, r->gpus[g]);
    sim_jsonw_close(j, ']');
    if (r->budget > 0)
        sim_jsonw_int(j, "budget_gpus", r->budget);
    if (r->target > 0)
        sim_jsonw_num(j, "target_rate", r->target);
    sim_jsonw_str(j, "minimise", r->cap.minimise == STUDY_MIN_COST ? "cost" : "gpus");
    sim_jsonw_open(j, "slo_ms", '{');
    for (int i = 0; i < r->cap.nslo; i++)
        sim_jsonw_num(j, r->cap.slo[i].label, r->cap.slo[i].limit_ms);
    sim_jsonw_close(j, '}');
}

/* "search": how many candidates each stage pruned or simulated, runs, and its time. */
static void json_search(sim_jsonw *j, const study_recommend *r)
{
    sim_jsonw_open(j, "search", '{');
    sim_jsonw_int(j, "candidates", r->nc);
    sim_jsonw_int(j, "pruned_fit", r->n_fit);
    sim_jsonw_int(j, "pruned_roofline", r->n_roofline);
    sim_jsonw_int(j, "screened_out", r->n_screened);
    sim_jsonw_int(j, "simulated", r->n_sim);
    sim_jsonw_int(j, "runs", r->cap.runs);
    sim_jsonw_int(j, "refined", r->n_refined);
    sim_jsonw_int(j, "unconfirmed", r->n_unconfirmed);
    sim_jsonw_num(j, "screen_s", r->screen_s);
    sim_jsonw_num(j, "simulation_s", r->sim_s);
    sim_jsonw_close(j, '}');
}

/* "front": its points; then the recommended one's index and validated error. */
static void json_front(sim_jsonw *j, const rec_state *s)
{
    const study_recommend *r = &s->r;
    int n, best = -1;
    const study_rec_point **v = front(r, &n);
    sim_jsonw_open(j, "front", '[');
    for (int i = 0; i < n; i++) {
        json_point(j, r, v[i]);
        if (r->best >= 0 && v[i] == &r->p[r->best])
            best = i;
    }
    sim_jsonw_close(j, ']');
    if (best >= 0)
        sim_jsonw_int(j, "recommended", best);
    if (best >= 0 && s->validated[0])
        sim_jsonw_str(j, "recommended_validated", s->validated);
    free(v);
}

static void print_json(const rec_state *s, const scn_scenario *scn)
{
    const study_recommend *r = &s->r;
    sim_jsonw j;
    sim_jsonw_begin(&j, stdout);
    sim_jsonw_open(&j, NULL, '{');
    if (r->cap.search_id)
        sim_jsonw_int(&j, "search_id", r->cap.search_id);
    json_question(&j, r, scn);
    json_search(&j, r);
    json_front(&j, s);
    if (r->cluster_ok >= 0)
        sim_jsonw_bool(&j, "cluster_meets_slos", r->cluster_ok);
    sim_jsonw_close(&j, '}');
}

/* The points file the front plot reads (plots/front.c), beside the image. */
static int write_points(const study_recommend *r, const char *title, const char *path, sim_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_errf(err, "%s: cannot write", path);
    int cost = r->cap.minimise == STUDY_MIN_COST;
    fprintf(f,
            "# llmsim recommend: x = output tokens/s per user, y = output %s, "
            "front = on the confirmed Pareto front\n# title: %s\n",
            cost ? "tokens per USD" : "tokens/s per GPU", title);
    if (cost)
        fprintf(f, "# ylabel: output tokens per USD (GPUs at their price per GPU-hour)\n");
    int blocks = 0;
    for (int i = 0; i < r->nc; i++) {
        int any = 0;
        for (int k = 0; k < r->np; k++)
            if (r->p[k].cand == i && r->p[k].t.ok) {
                if (!any++)
                    fprintf(f, "%s# series: %s\n", blocks++ ? "\n\n" : "", r->c[i].choice.name);
                fprintf(f, "%.6g %.6g %d\n", r->p[k].tps_user, r->p[k].x, r->p[k].front);
            }
    }
    return fclose(f) == 0 && blocks ? 0 : sim_errf(err, "%s: no point met the SLOs", path);
}

static void points_path(const char *image, char *buf, size_t len)
{
    const char *slash = strrchr(image, '/'), *dot = strrchr(image, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - image) : strlen(image);
    snprintf(buf, len, "%.*s.points", (int)stem, image);
}

/* "deepseek-v3 on h200, 8 GPUs: ..." */
static const char *front_title(const rec_state *s, const scn_scenario *scn, char *buf, size_t len)
{
    const study_recommend *r = &s->r;
    size_t n = (size_t)snprintf(buf, len, "%s on", scn->engine.model.name);
    for (int g = 0; g < r->ngpus && n < len; g++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", g ? "," : " ", r->gpus[g]);
    if (r->budget > 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", %d GPUs", r->budget);
    if (n < len)
        snprintf(buf + n, len - n, ": %s",
                 r->cap.minimise == STUDY_MIN_COST ? "output tokens per USD vs tokens/s per user"
                                                   : "output tokens/s per GPU vs per user");
    return buf;
}

static int draw(rec_state *s, const scn_scenario *scn, const char *image, sim_err *err)
{
    char points[1100], title[256];
    points_path(image, points, sizeof points);
    if (write_points(&s->r, front_title(s, scn, title, sizeof title), points, err) != 0)
        return -1;
    plt_opts o = {.kind = PLT_FRONT, .out = image, .data = points};
    plt_result res;
    if (plt_plot(&o, &res, err) != 0)
        return -1;
    cli_note(&s->c, "llmsim: %s %s (data %s, script %s)\n", res.rendered ? "wrote" : "no gnuplot:",
             res.rendered ? res.image : "draw it with gnuplot", res.data, res.script);
    return res.rendered ? 0 : 3;
}

static int write_report(rec_state *s, const scn_scenario *scn, sim_err *err);

int cmd_recommend(int argc, char **argv)
{
    rec_state *s = sim_xcalloc(1, sizeof *s);
    study_recommend *r = &s->r;
    int st = parse(argc, argv, s), rc = 1;
    if (st != CLI_GO) {
        free(s);
        return st;
    }
    sim_err err = {{0}};
    scn_scenario scn;
    if (study_capacity_load(&r->cap, &scn, &err) != 0)
        goto fail;
    cli_note(&s->c, "%s", scn.notes);
    if (!(r->cap.db = store_open(s->c.db, &err)) ||
        study_capacity_begin(&r->cap, &scn, s->slo_text, &err) != 0 ||
        study_recommend_run(r, &err) != 0)
        goto fail;
    if (r->best >= 0)
        study_recommend_validated(r, r->p[r->best].cand, s->validated, sizeof s->validated);
    if (s->c.json) {
        print_json(s, &scn);
    } else {
        print_head(s, &scn);
        print_front(s);
        print_simulated(r);
        print_counts(s);
    }
    fflush(stdout);
    rc = 0;
    if (s->plot && (st = draw(s, &scn, s->plot, &err)) != 0)
        rc = st < 0 ? (cli_fail(NULL, &err), 1) : st;
    if (rc == 0 && s->report && (st = write_report(s, &scn, &err)) != 0)
        rc = st < 0 ? (cli_fail(NULL, &err), 1) : st;
    goto out;
fail:
    cli_fail(NULL, &err);
out:
    store_close(r->cap.db);
    scn_free(&scn);
    study_recommend_free(r);
    free(s);
    return rc;
}

/* ---- the report ---- */

/* The confirmed Pareto front, one row per point, with its launch command. */
static void front_table(plt_table *t, const study_recommend *r)
{
    static const char *const fh[] = {"#",         "candidate",  "GPUs",  "rate/unit (req/s)",
                                     "tok/s/GPU", "tok/s/user", "launch"};
    plt_table_start(t, "Pareto front (confirmed at fresh seeds)", 7, fh);
    int n;
    const study_rec_point **v = front(r, &n);
    for (int i = 0; i < n; i++) {
        char c[6][64], launch[2048];
        const study_rec_cand *k = &r->c[v[i]->cand];
        snprintf(c[0], sizeof c[0], "%d", i + 1);
        snprintf(c[1], sizeof c[1], "%d", k->gpus);
        snprintf(c[2], sizeof c[2], "%.4g", v[i]->rate);
        snprintf(c[3], sizeof c[3], "%.0f", v[i]->tps_gpu);
        snprintf(c[4], sizeof c[4], "%.1f", v[i]->tps_user);
        const char *row[] = {c[0],
                             k->choice.name,
                             c[1],
                             c[2],
                             c[3],
                             c[4],
                             study_launch(k, r->launch_model, launch, sizeof launch)};
        plt_table_row(t, row);
    }
    free(v);
}

/* Every simulated candidate with its screen estimate, its rate and its verdict. */
static void simulated_table(plt_table *t, const study_recommend *r)
{
    static const char *const sh[] = {"candidate", "screen tok/s/GPU", "rate/unit (req/s)",
                                     "verdict"};
    plt_table_start(t, "Simulated candidates", 4, sh);
    for (int i = 0; i < r->nc; i++) {
        const study_rec_cand *k = &r->c[i];
        if (k->state != STUDY_REC_SIMULATED)
            continue;
        char a[32], b[32], why[400];
        snprintf(a, sizeof a, "%.0f", k->a_tps_gpu);
        snprintf(b, sizeof b, "%.4g", k->ans.rate);
        snprintf(why, sizeof why, "%s",
                 k->ans.why[0] ? k->ans.why : study_verdict_name(k->ans.verdict));
        const char *row[] = {k->choice.name, a, b, why};
        plt_table_row(t, row);
    }
}

/* The report's title, setting line, footer and the recommended point's validation note. */
static void report_heading(plt_report *rep, const rec_state *s, const scn_scenario *scn)
{
    const study_recommend *r = &s->r;
    snprintf(rep->title, sizeof rep->title, "Recommendation for %s", scn->engine.model.name);
    snprintf(rep->setting, sizeof rep->setting,
             "%d candidates, %d simulated (%lld runs, capacity search %lld); SLOs %.*s", r->nc,
             r->n_sim, (long long)r->cap.runs, (long long)r->cap.search_id,
             (int)(sizeof rep->setting / 2), s->slo_text);
    snprintf(rep->footer, sizeof rep->footer, "llmsim %s recommend", study_version());
    if (r->best >= 0 && s->validated[0])
        snprintf(rep->notes[rep->nnotes++], sizeof rep->notes[0],
                 "Validation of the recommended %.96s: %.380s.",
                 r->c[r->p[r->best].cand].choice.name, s->validated);
}

/* Writes the report with tables t and the front drawn from the points file. 0, 3 when the
 * figure could not be drawn, or -1 with err. */
static int write_page(rec_state *s, const scn_scenario *scn, plt_table *t, const char *points,
                      sim_err *err)
{
    plt_figure f = {.plot = {.kind = PLT_FRONT, .data = points}};
    snprintf(f.caption, sizeof f.caption,
             "Output tokens/s per GPU against tokens/s per user of every simulated point that met "
             "the SLOs; the line joins the confirmed Pareto front.");
    plt_report rep = {.db = s->c.db,
                      .out = s->report,
                      .scenario = scn->text,
                      .tables = t,
                      .ntables = 2,
                      .figs = &f,
                      .nfigs = 1};
    report_heading(&rep, s, scn);
    plt_report_result res = {0};
    if (plt_report_write(&rep, &res, err) != 0)
        return -1;
    cli_note(&s->c, "llmsim: wrote %s (%d figure%s drawn)\n", s->report, res.drawn,
             res.drawn == 1 ? "" : "s");
    return res.missing ? 3 : 0;
}

static int write_report(rec_state *s, const scn_scenario *scn, sim_err *err)
{
    plt_table t[2];
    front_table(&t[0], &s->r);
    simulated_table(&t[1], &s->r);
    char points[1100], title[256], dir[] = "/tmp/llmsim-rec-XXXXXX";
    int rc = mkdtemp(dir) ? 0 : sim_errf(err, "cannot make a scratch folder");
    snprintf(points, sizeof points, "%s/front.points", dir);
    if (rc == 0)
        rc = write_points(&s->r, front_title(s, scn, title, sizeof title), points, err);
    if (rc == 0)
        rc = write_page(s, scn, t, points, err);
    remove(points);
    rmdir(dir);
    plt_table_free(&t[0]);
    plt_table_free(&t[1]);
    return rc;
}
