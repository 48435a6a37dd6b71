/*
 * print.c: what the commands print: the summary table of a run, a small JSON writer, and the
 * progress report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "study_validate.h"

/* ---- progress ---- */

void cli_progress_start(cli_progress *p, const char *what, int total, int quiet)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    p->quiet = quiet;
    p->tty = isatty(STDERR_FILENO);
    p->last_decile = -1;
    p->t0 = p->last = sim_wall_seconds();
}

/* A count without a known total: "1234 requests done, 12s elapsed". */
static void progress_count(cli_progress *p, int done, double t, double el, int final)
{
    if (!p->tty) {
        if (!final && p->shown && t - p->last < 10)
            return;
        fprintf(stderr, "%d %s done, %.0fs elapsed\n", done, p->what, el);
    } else {
        if (!final && t - p->last < 0.2)
            return;
        fprintf(stderr, "\r%d %s done, %.0fs elapsed ", done, p->what, el);
        if (final)
            fputc('\n', stderr);
    }
    p->last = t;
    p->shown = 1;
}

void cli_progress_finish(cli_progress *p, int done)
{
    if (!p->shown || p->quiet)
        return;
    if (p->total > 0 && done < p->total)
        done = p->total;
    if (p->total > 0)
        cli_progress_update(p, done);
    else
        progress_count(p, done, sim_wall_seconds(), sim_wall_seconds() - p->t0, 1);
}

/* Off a terminal: a line at each tenth of the work done. */
static void progress_decile(cli_progress *p, int done, double el, double eta)
{
    int decile = (int)((int64_t)done * 10 / p->total);
    if (decile <= p->last_decile)
        return;
    p->last_decile = decile;
    fprintf(stderr, "%d/%d %s done (%d%%), %.0fs elapsed, ~%.0fs left\n", done, p->total, p->what,
            decile * 10, el, eta);
}

/* On a terminal: the bar, redrawn at most five times a second and once when done. */
static void progress_bar(cli_progress *p, int done, double t, double el, double eta)
{
    int final = done >= p->total;
    if (!final && t - p->last < 0.2)
        return;
    p->last = t;
    int width = 30, fill = done * width / p->total;
    fprintf(stderr, "\r[%.*s%*s] %d/%d %s done, %d left, %.0fs elapsed, ~%.0fs left ", fill,
            "==============================", width - fill, "", done, p->total, p->what,
            p->total - done, el, eta);
    if (final)
        fputc('\n', stderr);
}

void cli_progress_update(cli_progress *p, int done)
{
    if (p->quiet)
        return;
    double t = sim_wall_seconds(), el = t - p->t0;
    if (el < p->delay_s)
        return;
    if (p->total <= 0) {
        progress_count(p, done, t, el, 0);
        return;
    }
    p->shown = 1;
    double eta = done ? el / done * (p->total - done) : 0;
    if (p->tty)
        progress_bar(p, done, t, el, eta);
    else
        progress_decile(p, done, el, eta);
}

/* ---- the summary of a run ---- */

const char *const cli_sweep_shown[CLI_SWEEP_SHOWN] = {"output_throughput", "median_ttft_ms",
                                                      "p99_ttft_ms",       "median_tpot_ms",
                                                      "p99_tpot_ms",       "p99_itl_ms"};
const char *const cli_sweep_loaded[CLI_SWEEP_LOADED] = {
    "output_throughput", "median_ttft_ms", "p99_ttft_ms",   "median_tpot_ms",
    "p99_tpot_ms",       "p99_itl_ms",     "completed",     "rejected",
    "rejected_context",  "rejected_kv",    "rejected_batch"};

/* One offload tier's line: its hit rate and the GB written to and read from it (nothing for a
 * tier the run did not have). */
static void print_tier(FILE *f, const study_result *r, const char *kind)
{
    char name[64], label[64];
    snprintf(name, sizeof name, "kv_offload_%s_hit_rate", kind);
    if (isnan(study_metric(r, name)))
        return;
    double hit = study_metric(r, name);
    snprintf(name, sizeof name, "kv_offload_%s_write_bytes", kind);
    double wr = study_metric(r, name);
    snprintf(name, sizeof name, "kv_offload_%s_read_bytes", kind);
    snprintf(label, sizeof label, "Loaded from %s (GB written, read):", kind);
    fprintf(f, "%-38s %11.2f%% (%.1f, %.1f)\n", label, 100 * hit, wr / 1e9,
            study_metric(r, name) / 1e9);
}

/* The KV offload tiers' lines (nothing without them). */
static void print_offload(FILE *f, const study_result *r)
{
    if (isnan(study_metric(r, "kv_offload_loads")))
        return;
    fprintf(f, "%-38s %11.2f%%\n",
            "Prefix hit rate (GPU and tiers):", 100 * study_metric(r, "prefix_hit_rate"));
    for (int k = 0; k < ENG_TIER_KINDS; k++)
        print_tier(f, r, eng_tier_kind_name((eng_tier_kind)k));
    fprintf(f, "%-38s %12.0f (mean %.2f ms, p99 %.2f ms)\n",
            "KV loads:", study_metric(r, "kv_offload_loads"),
            study_metric(r, "kv_offload_mean_load_ms"), study_metric(r, "kv_offload_p99_load_ms"));
}

/* GPU-hours, energy and cost, a line each; "-" where the GPU has no price or power figure. */
static void print_costs(FILE *f, const study_result *r)
{
    static const struct {
        const char *label, *metric, *fmt;
    } rows[] = {{"GPU-hours:", "gpu_hours", "%12.4f"},
                {"Energy (kWh):", "energy_kwh", "%12.4f"},
                {"Energy per output token (J):", "joules_per_output_token", "%12.3f"},
                {"Cost (USD):", "cost_usd", "%12.4f"},
                {"Cost per 1M tokens (USD):", "cost_per_mtok_usd", "%12.4f"},
                {"Cost per 1M output tokens (USD):", "cost_per_output_mtok_usd", "%12.4f"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double v = study_metric(r, rows[i].metric);
        fprintf(f, "%-38s ", rows[i].label);
        if (isnan(v))
            fprintf(f, "%12s\n", "-");
        else {
            fprintf(f, rows[i].fmt, v);
            fputc('\n', f);
        }
    }
}

/* The autoscalers' lines, one per autoscaled pool (the whole fleet, or prefill and decode):
 * mean and peak replicas, scalings, cold start (nothing without an autoscaler). */
static void print_autoscale(FILE *f, const study_result *r)
{
    static const char *const pools[3][2] = {{"", "Replicas (autoscaled, mean):"},
                                            {"prefill_", "Prefill replicas (autoscaled, mean):"},
                                            {"decode_", "Decode replicas (autoscaled, mean):"}};
    for (int k = 0; k < 3; k++) {
        char m[5][40];
        static const char *const names[] = {"replicas_mean", "replicas_max", "scale_ups",
                                            "scale_downs", "cold_start_s"};
        for (int i = 0; i < 5; i++)
            snprintf(m[i], sizeof m[i], "%s%s", pools[k][0], names[i]);
        if (isnan(study_metric(r, m[0])))
            continue;
        fprintf(f, "%-38s %12.2f (at most %.0f; %.0f up, %.0f down", pools[k][1],
                study_metric(r, m[0]), study_metric(r, m[1]), study_metric(r, m[2]),
                study_metric(r, m[3]));
        if (isnan(study_metric(r, m[4]))) /* a pool that keeps its replicas */
            fprintf(f, ")\n");
        else
            fprintf(f, "; cold start %.1f s)\n", study_metric(r, m[4]));
    }
}

/* The injected faults' line: crashes and what became of their requests (nothing without). */
static void print_faults(FILE *f, const study_result *r)
{
    if (!isnan(study_metric(r, "fault_crashes")))
        fprintf(f, "%-38s %12.0f (%.0f requests retried, %.0f lost, %.0f waited for a replica)\n",
                "Replica crashes:", study_metric(r, "fault_crashes"),
                study_metric(r, "fault_retried"), study_metric(r, "fault_lost"),
                study_metric(r, "fault_held"));
}

/* The class whose metrics start with prefix ("class.<name>.", len bytes): its completed and
 * rejected counts, SLO attainment (%), goodput and p99 latencies. */
static void print_class(FILE *f, const study_result *r, const char *prefix, size_t len)
{
    static const char *const cols[] = {"completed",       "rejected",    "slo_attainment",
                                       "request_goodput", "p99_ttft_ms", "p99_tpot_ms"};
    fprintf(f, "%-18.*s", (int)(len - 7), prefix + 6);
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        char k[64];
        snprintf(k, sizeof k, "%.*s%s", (int)len, prefix, cols[c]);
        double v = study_metric(r, k) * (c == 2 ? 100 : 1);
        fprintf(f, c < 2 ? " %10.0f" : " %10.2f", v);
    }
    fputc('\n', f);
}

/* One line per request class (workload.classes), found by its class.<name>.completed metric;
 * nothing without classes. */
static void print_classes(FILE *f, const study_result *r)
{
    int head = 0;
    for (int i = 0; i < r->n; i++) {
        const char *nm = r->m[i].name, *dot;
        if (strncmp(nm, "class.", 6) || !(dot = strchr(nm + 6, '.')) || strcmp(dot, ".completed"))
            continue;
        if (!head++)
            fprintf(f, "%-18s %10s %10s %10s %10s %10s %10s\n", "(class)", "completed", "rejected",
                    "SLO met %", "goodput/s", "p99 TTFT", "p99 TPOT");
        print_class(f, r, nm, (size_t)(dot - nm) + 1); /* "class.<name>." */
    }
}

/* The requests, tokens and throughputs of a run: a line each. */
static void print_counts(FILE *f, const study_result *r)
{
    static const struct {
        const char *label, *metric;
        int decimals;
    } rows[] = {
        {"Successful requests:", "completed", 0},
        {"Rejected requests:", "rejected", 0},
        {"Duration (s, simulated):", "duration", 2},
        {"Total input tokens:", "total_input_tokens", 0},
        {"Total generated tokens:", "total_output_tokens", 0},
        {"Request throughput (req/s):", "request_throughput", 2},
        {"Output token throughput (tok/s):", "output_throughput", 2},
        {"Total token throughput (tok/s):", "total_token_throughput", 2},
        {"Request goodput (req/s):", "request_goodput", 2},
        {"Peak output token throughput (tok/s):", "max_output_tokens_per_s", 0},
        {"Peak concurrent requests:", "max_concurrent_requests", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "%-38s %12.*f\n", rows[i].label, rows[i].decimals,
                study_metric(r, rows[i].metric));
}

/* A disaggregated run's pools and KV transfers. */
static void print_pools(FILE *f, const study_result *r)
{
    fprintf(f, "%-38s %7.0f GPUs %8.1f%% busy\n", "Prefill pool:", study_metric(r, "prefill_gpus"),
            100 * study_metric(r, "prefill_utilization"));
    fprintf(f, "%-38s %7.0f GPUs %8.1f%% busy\n", "Decode pool:", study_metric(r, "decode_gpus"),
            100 * study_metric(r, "decode_utilization"));
    fprintf(f, "%-38s %12.0f (%.0f held back by the decode pool)\n",
            "KV transfers:", study_metric(r, "kv_transfers"), study_metric(r, "kv_transfers_held"));
    fprintf(f, "%-38s %12.2f\n",
            "KV per request (MB):", study_metric(r, "kv_transfer_bytes_per_request") / 1e6);
}

/* One latency's line: its mean, percentiles and deviation ("-" where there is none). */
static void print_latency(FILE *f, const study_result *r, const eng_latency *l)
{
    static const char *const pre[6] = {"mean", "median", "p90", "p95", "p99", "std"};
    fprintf(f, "%-18s", l->label);
    for (int j = 0; j < 6; j++) {
        char k[48];
        snprintf(k, sizeof k, "%s_%s", pre[j], l->stem);
        double v = study_metric(r, k);
        if (j == 5 && isnan(v))
            fprintf(f, " %10s", "-");
        else
            fprintf(f, " %10.2f", v);
    }
    fputc('\n', f);
}

/* The latency table: a line per latency (those of disaggregation only when pd). */
static void print_latencies(FILE *f, const study_result *r, int pd)
{
    int nlat;
    const eng_latency *lat = eng_latency_all(&nlat);
    fprintf(f, "%-18s %10s %10s %10s %10s %10s %10s\n", "(ms)", "mean", "median", "p90", "p95",
            "p99", "std");
    for (int i = 0; i < nlat; i++)
        if (!(lat[i].flags & ENG_LAT_PD) || pd)
            print_latency(f, r, &lat[i]);
}

void cli_print_summary(FILE *f, const study_result *r)
{
    print_counts(f, r);
    print_costs(f, r);
    print_autoscale(f, r);
    print_faults(f, r);
    int pd = !isnan(study_metric(r, "kv_transfers"));
    if (pd)
        print_pools(f, r);
    print_offload(f, r);
    print_latencies(f, r, pd);
    print_classes(f, r);
}

const char *cli_saturation(const study_cell *cl, char *buf, size_t len)
{
    if (cl->saturated == 0)
        snprintf(buf, len, "no");
    else if (cl->n <= 1)
        snprintf(buf, len, "yes");
    else
        snprintf(buf, len, "in %d of %d", cl->saturated, cl->n);
    return buf;
}

/* Groups g[0..n) as "4 x a100-80gb tp1 + 2 x h200 tp2" at buf + off: the new offset. */
static size_t put_groups(const eng_pool_config *g, int n, char *buf, size_t off, size_t len)
{
    for (int k = 0; k < n && off < len; k++)
        off +=
            (size_t)snprintf(buf + off, len - off, "%s%d x %s tp%d", k ? " + " : "", g[k].replicas,
                             g[k].gpu.name, g[k].tensor_parallel * g[k].data_parallel_attention);
    return off;
}

const char *cli_deployment(const scn_scenario *scn, char *buf, size_t len)
{
    const eng_config *c = &scn->engine;
    buf[0] = '\0';
    if (c->groups.n > 0) { /* a mixed pool: each group's count, GPU and GPUs per replica */
        put_groups(c->groups.group, c->groups.n, buf, 0, len);
        return buf;
    }
    if (!c->pd.enabled) {
        snprintf(buf, len, "%s", c->gpu.name);
        return buf;
    }
    size_t off = 0;
    for (int k = 0; k < 2 && off < len; k++) { /* each pool: its groups, or its one kind */
        int ng = c->pd.ngroups[k];
        off += (size_t)snprintf(buf + off, len - off, "%s", k ? ", decode " : "prefill ");
        off = ng ? put_groups(&c->groups.group[k ? c->pd.ngroups[0] : 0], ng, buf, off, len)
                 : put_groups(&c->pd.pool[k], 1, buf, off, len);
    }
    if (off < len)
        snprintf(buf + off, len - off, " (%s, %s)", eng_link_kind_name(c->pd.link),
                 eng_xfer_mode_name(c->pd.mode));
    return buf;
}

const char *cli_extrapolated(const scn_scenario *scn)
{
    const eng_config *c = &scn->engine;
    const char *x = NULL;
    if (scn->profile[0]) /* a stored profile prices it, not the roofline */
        return NULL;
    for (int k = 0; k < eng_config_pools(c) && !x; k++) { /* each pool's or group's GPU */
        eng_config pc;
        eng_config_pool(c, k, &pc);
        x = cal_gpu_extrapolated(pc.gpu.name);
    }
    return x;
}

void cli_print_metrics_json(sim_jsonw *j, const char *key, const study_result *r)
{
    if (key)
        sim_jsonw_open(j, key, '{');
    for (int i = 0; i < r->n; i++)
        sim_jsonw_num(j, r->m[i].name, r->m[i].value);
    if (key)
        sim_jsonw_close(j, '}');
}

/* ---- the validated error of the nearest group ---- */

void cli_print_validated(FILE *f, const scn_scenario *scn)
{
    char buf[512];
    fprintf(f, "%s\n", study_verrors_describe(scn, buf, sizeof buf));
}

const char *cli_validated_of_text(const char *text, char *buf, size_t len)
{
    scn_scenario scn;
    sim_err err = {{0}};
    memset(&scn, 0, sizeof scn);
    buf[0] = '\0';
    if (text && study_load_text("(stored scenario)", text, NULL, 0, &scn, &err) == 0)
        study_verrors_describe(&scn, buf, len);
    scn_free(&scn);
    return buf;
}
