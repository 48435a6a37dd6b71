/*
 * cmd_export.c: `llmsim export trace --run ID [--db PATH] [-o FILE.json]`: a stored run in the
 * Chrome trace event format (plots/trace.c), for chrome://tracing or https://ui.perfetto.dev.
 * Exit status: 0, 1 on a user error (unknown run, a run stored without iterations, an
 * unwritable file), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plots.h"

static int usage(void)
{
    fprintf(stderr, "usage: llmsim export trace --run ID [--db PATH] [-o FILE.json|-]\n");
    return 2;
}

int cmd_export(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "trace") != 0) {
        if (argc >= 2)
            fprintf(stderr, "llmsim export: unknown format '%s'; valid: trace\n", argv[1]);
        return usage();
    }
    const char *db = "llmsim.db", *out = NULL, *v;
    long long run = 0;
    for (int i = 2; i < argc; i++) {
        if ((v = cli_opt(argc, argv, &i, "--db")))
            db = v;
        else if ((v = cli_opt(argc, argv, &i, "-o")) || (v = cli_opt(argc, argv, &i, "--output")))
            out = v;
        else if ((v = cli_opt(argc, argv, &i, "--run"))) {
            char *end;
            run = strtoll(v, &end, 10);
            if (end == v || *end || run <= 0) {
                fprintf(stderr, "llmsim export: --run expects a run id; got '%s'\n", v);
                return 2;
            }
        } else
            return usage();
    }
    if (run <= 0)
        return usage();
    char name[64];
    if (!out) {
        snprintf(name, sizeof name, "trace-run%lld.json", run);
        out = name;
    }
    sim_err err = {{0}};
    int64_t n = plt_trace_export(db, run, out, &err);
    if (n < 0) {
        fprintf(stderr, "llmsim export: %s\n", err.msg);
        return 1;
    }
    if (strcmp(out, "-") != 0)
        fprintf(stderr,
                "llmsim: wrote %s (%lld iterations); open it in https://ui.perfetto.dev or "
                "chrome://tracing\n",
                out, (long long)n);
    return 0;
}
