/*
 * main.c: the llmsim command: dispatch to subcommands.
 */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", cmd_run, "run FILE: simulate a scenario, store the run, print its summary"},
    {"scenario", cmd_scenario, "scenario check FILE: validate a scenario without running it"},
    {"list", cmd_list, "list gpus|models|schedulers|routers|engines: print the catalogs"},
    {"sweep", cmd_sweep, "sweep FILE --vary KEY=V1,V2: runs over the cross product, resumable"},
    {"merge", cmd_merge, "merge OUT.db IN.db...: combine databases (sweep shards), no duplicates"},
    {"capacity", cmd_capacity, "capacity FILE --slo ...: highest rate per replica, GPUs needed"},
    {"recommend", cmd_recommend,
     "recommend --model M --gpu G --gpus N --slo ...: a Pareto front of deployments, launch "
     "commands"},
    {"calibrate", cmd_calibrate,
     "calibrate --backend cpu|cuda --model M: measure, fit and store a profile; calibrate "
     "validate --run ID"},
    {"profile", cmd_profile,
     "profile list|show|export NAME|import FILE|import-vidur DIR: stored cost profiles"},
    {"plot", cmd_plot,
     "plot curve|cdf|timeline|gantt|probes|validation|fleet (--sweep|--run|--capacity|--validation "
     "ID): gnuplot charts"},
    {"validate", cmd_validate,
     "validate SET | --ops | --list: replay measurements, print the prediction error"},
    {"bench", cmd_bench, "bench [--quick]: how fast the simulator is (a table of cases)"},
    {"export", cmd_export, "export trace --run ID -o FILE.json: Chrome/Perfetto trace of a run"},
    {"report", cmd_report,
     "report --run|--sweep|--capacity ID -o FILE.html: one self-contained page to share"},
};

static int usage(FILE *f)
{
    /* the release alone: which build this is, --version says */
    const char *v = study_version();
    fprintf(f,
            "llmsim %.*s: discrete-event simulator of LLM serving schedulers\n\n"
            "usage: llmsim COMMAND [ARGS]   (llmsim COMMAND --help: its options and defaults)\n\n",
            (int)strcspn(v, "+"), v);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nEvery command that touches results takes --db PATH (default llmsim.db).\n");
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
        return usage(stdout);
    if (!strcmp(argv[1], "--version")) {
        /* what runs stored by this build record as their version, then its parts in full */
        printf("llmsim %s\ncommit %s%s\ncost model inputs sha256 %s\n", study_version(),
               study_build_commit(), study_build_modified() ? " (tree modified)" : "",
               study_cost_model_hash());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "llmsim: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
