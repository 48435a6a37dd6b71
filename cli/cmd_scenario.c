/*
 * cmd_scenario.c: `llmsim scenario check FILE [--set K=V]...`: validate without running.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_common.h"

int cmd_scenario(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "check") != 0) {
        fprintf(stderr, "usage: llmsim scenario check FILE [--set KEY=VALUE]...\n");
        return 2;
    }
    const char *sets[CMD_MAX_SETS];
    int nsets = 0;
    for (int i = 3; i < argc; i++) {
        const char *v = cli_opt(argc, argv, &i, "--set");
        if (!v || nsets == CMD_MAX_SETS) {
            fprintf(stderr, "usage: llmsim scenario check FILE [--set KEY=VALUE]...\n");
            return 2;
        }
        sets[nsets++] = v;
    }
    scn_scenario scn;
    sim_err err = {{0}};
    int rc = 0;
    eng_kv_plan plan;
    if (scn_load(argv[2], sets, nsets, cmd_resolver(), &scn, &err) != 0 ||
        eng_kv_plan_compute(&scn.engine, &plan, &err) != 0) {
        fprintf(stderr, "llmsim: %s\n", err.msg);
        rc = 1;
    } else {
        fputs(scn.notes, stderr);
        printf("%s: ok (%s on %s %s, scheduler %s, KV cache %lld blocks = %lld tokens)\n", argv[2],
               scn.engine.model.name, scn.engine.gpu.name, eng_dtype_name(scn.engine.dtype),
               scn.engine.sched.name, (long long)plan.blocks, (long long)plan.tokens);
    }
    scn_free(&scn);
    return rc;
}
