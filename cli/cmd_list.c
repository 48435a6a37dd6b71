/*
 * cmd_list.c: `llmsim list gpus|models|schedulers`: the catalogs and the scheduler registry.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "engine.h"

static void list_gpus(void)
{
    printf("%-12s %8s %10s %12s %12s %10s\n", "gpu", "mem_GB", "bw_TB/s", "bf16_TFLOPS",
           "fp8_TFLOPS", "link_GB/s");
    for (int i = 0; i < cal_gpu_count(); i++) {
        const eng_gpu *g = cal_gpu_at(i);
        printf("%-12s %8.1f %10.2f %12.1f %12.1f %10.0f\n", g->name, (double)g->mem_bytes / 1e9,
               g->mem_bw / 1e12, g->flops_bf16 / 1e12, g->flops_fp8 / 1e12, g->link_bw / 1e9);
    }
}

static void list_models(void)
{
    printf("%-14s %7s %6s %6s %6s %6s %7s %8s %8s %9s\n", "model", "params", "layers", "hidden",
           "heads", "kv", "inter", "vocab", "context", "KV_B/tok");
    for (int i = 0; i < cal_model_count(); i++) {
        const eng_model *m = cal_model_at(i);
        printf("%-14s %6.2fB %6d %6d %6d %6d %7d %8d %8d %9lld\n", m->name,
               (double)eng_model_params(m) / 1e9, m->layers, m->hidden, m->heads, m->kv_heads,
               m->intermediate, m->vocab, m->max_context,
               (long long)eng_model_kv_bytes_per_token(m, ENG_BF16));
    }
}

static void list_schedulers(void)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    for (size_t i = 0; i < n; i++) {
        printf("%s: %s\n", all[i]->name, all[i]->summary ? all[i]->summary : "");
        for (const eng_param *p = all[i]->params; p && p->name; p++) {
            char range[96];
            if (p->type == ENG_PARAM_ENUM)
                snprintf(range, sizeof range, "%s", p->choices);
            else
                snprintf(range, sizeof range, "%g..%g", p->min, p->max);
            printf("    %-24s default %-8s [%s] %s\n", p->name, p->def, range, p->help);
        }
    }
}

int cmd_list(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: llmsim list gpus|models|schedulers\n");
        return 2;
    }
    if (!strcmp(argv[1], "gpus"))
        list_gpus();
    else if (!strcmp(argv[1], "models"))
        list_models();
    else if (!strcmp(argv[1], "schedulers"))
        list_schedulers();
    else {
        fprintf(stderr, "llmsim list: unknown catalog '%s'; valid: gpus, models, schedulers\n",
                argv[1]);
        return 2;
    }
    return 0;
}
