/*
 * cmd_export.c: `llmsim export trace --run ID [-o FILE.json]`: a stored run in the Chrome trace
 * event format (plots/trace.c), for chrome://tracing or https://ui.perfetto.dev.
 * Exit status: 0, 1 on a user error (unknown run, a run stored without iterations, an
 * unwritable file), 2 on bad usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plots.h"

static const cli_command trace_cmd = {
    .name = "export trace",
    .args = "--run ID",
    .summary = "Writes a stored run in the Chrome trace event format (microseconds of simulated "
               "time), for chrome://tracing or https://ui.perfetto.dev: a track per replica with "
               "an event per iteration, counters of sequences and KV blocks, and a span per "
               "request with its queueing, prefill, decode and the waits after preemptions.",
    .details = "--from/--to keep only a window of the run: the iterations that overlap it, and the "
               "requests alive in it, cut to its edges.",
    .common = CLI_DB | CLI_QUIET};

/* Writes run's trace in the window [from, to] s (a bound below 0: the run's own) to out
 * (NULL: trace-run<ID>.json; "-": stdout). The exit status. */
static int export(const cli_common *c, int64_t run, double from, double to, const char *out)
{
    char name[64];
    if (!out) {
        snprintf(name, sizeof name, "trace-run%lld.json", (long long)run);
        out = name;
    }
    int64_t from_ns = from >= 0 ? (int64_t)(from * 1e9 + 0.5) : INT64_MIN;
    int64_t to_ns = to >= 0 ? (int64_t)(to * 1e9 + 0.5) : INT64_MAX;
    sim_err err = {{0}};
    int64_t n = plt_trace_export(c->db, run, from_ns, to_ns, out, &err);
    if (n < 0)
        return cli_fail("export", &err);
    if (strcmp(out, "-") != 0)
        cli_note(c,
                 "llmsim: wrote %s (%lld iterations); open it in https://ui.perfetto.dev or "
                 "chrome://tracing\n",
                 out, (long long)n);
    return 0;
}

static int trace(int argc, char **argv)
{
    const char *out = NULL;
    int64_t run = 0;
    double from = -1, to = -1;
    const cli_option opts[] = {
        {"--run", "ID", CLI_INT64, &run, "the run to export", NULL, 1, 9e18, NULL, NULL},
        {"--from", "S", CLI_DOUBLE, &from,
         "only what overlaps the window from S seconds of simulated time", "the run's start", 0,
         9e9, NULL, NULL},
        {"--to", "S", CLI_DOUBLE, &to, "... to S seconds (requests are cut to the window)",
         "the run's end", 0, 9e9, NULL, NULL},
        CLI_OUTPUT(&out, "the JSON file (- for stdout)", "trace-run<ID>.json"),
        CLI_END};
    cli_common c;
    int npos, st = cli_parse(&trace_cmd, opts, &c, argc, argv, NULL, &npos);
    if (st != CLI_GO)
        return st;
    if (run <= 0) {
        fprintf(stderr, "llmsim export trace: give the run with --run ID\n");
        return 2;
    }
    if (from >= 0 && to >= 0 && to < from) {
        fprintf(stderr, "llmsim export trace: --to %g is before --from %g\n", to, from);
        return 2;
    }
    return export(&c, run, from, to, out);
}

int cmd_export(int argc, char **argv)
{
    static const cli_sub subs[] = {{"trace", trace, "a run as a Chrome/Perfetto trace (JSON)"}};
    if (argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "trace") != 0) {
        fprintf(stderr, "llmsim export: unknown format '%s'; valid: trace\n", argv[1]);
        return 2;
    }
    return cli_dispatch("export", subs, 1, argc, argv);
}
