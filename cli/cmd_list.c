/*
 * cmd_list.c: `llmsim list gpus|models|schedulers`: the catalogs and the scheduler registry.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "engine.h"
#include "preset.h"
#include "router.h"

static const cli_command list_cmd = {.name = "list",
                                     .args = "gpus|models|schedulers|routers|engines",
                                     .summary = "Prints a catalog: the GPUs and models llmsim "
                                                "knows by name, the scheduling policies with "
                                                "their parameters, ranges and defaults, the "
                                                "routers, or the engine presets with their "
                                                "settings and sources.",
                                     .min_pos = 1,
                                     .max_pos = 1,
                                     .common = CLI_JSON};

static void gpus(const cli_common *c)
{
    cli_json j;
    if (c->json) {
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '[');
    } else
        printf("%-12s %8s %10s %12s %12s %10s\n", "gpu", "mem_GB", "bw_TB/s", "bf16_TFLOPS",
               "fp8_TFLOPS", "link_GB/s");
    for (int i = 0; i < cal_gpu_count(); i++) {
        const eng_gpu *g = cal_gpu_at(i);
        if (!c->json) {
            printf("%-12s %8.1f %10.2f %12.1f %12.1f %10.0f\n", g->name, (double)g->mem_bytes / 1e9,
                   g->mem_bw / 1e12, g->flops_bf16 / 1e12, g->flops_fp8 / 1e12, g->link_bw / 1e9);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", g->name);
        cli_json_int(&j, "mem_bytes", g->mem_bytes);
        cli_json_num(&j, "mem_bw", g->mem_bw);
        cli_json_num(&j, "flops_bf16", g->flops_bf16);
        cli_json_num(&j, "flops_fp8", g->flops_fp8);
        cli_json_num(&j, "link_bw", g->link_bw);
        cli_json_num(&j, "pcie_bw", g->pcie_bw);
        cli_json_close(&j, '}');
    }
    if (c->json)
        cli_json_close(&j, ']');
}

static void models(const cli_common *c)
{
    cli_json j;
    if (c->json) {
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '[');
    } else
        printf("%-14s %7s %6s %6s %6s %6s %7s %8s %8s %9s\n", "model", "params", "layers", "hidden",
               "heads", "kv", "inter", "vocab", "context", "KV_B/tok");
    for (int i = 0; i < cal_model_count(); i++) {
        const eng_model *m = cal_model_at(i);
        int64_t kvb = eng_model_kv_bytes_per_token(m, ENG_BF16);
        if (!c->json) {
            printf("%-14s %6.2fB %6d %6d %6d %6d %7d %8d %8d %9lld\n", m->name,
                   (double)eng_model_params(m) / 1e9, m->layers, m->hidden, m->heads, m->kv_heads,
                   m->intermediate, m->vocab, m->max_context, (long long)kvb);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", m->name);
        cli_json_int(&j, "params", eng_model_params(m));
        cli_json_int(&j, "layers", m->layers);
        cli_json_int(&j, "hidden", m->hidden);
        cli_json_int(&j, "heads", m->heads);
        cli_json_int(&j, "kv_heads", m->kv_heads);
        cli_json_int(&j, "head_dim", m->head_dim);
        cli_json_int(&j, "intermediate", m->intermediate);
        cli_json_int(&j, "vocab", m->vocab);
        cli_json_int(&j, "max_context", m->max_context);
        cli_json_int(&j, "kv_bytes_per_token_bf16", kvb);
        cli_json_close(&j, '}');
    }
    if (c->json)
        cli_json_close(&j, ']');
}

static void param_range(const eng_param *p, char *buf, size_t len)
{
    if (p->type == ENG_PARAM_ENUM)
        snprintf(buf, len, "%s", p->choices);
    else if (p->type == ENG_PARAM_BOOL)
        snprintf(buf, len, "true|false");
    else
        snprintf(buf, len, "%g..%g", p->min, p->max);
}

static void schedulers_json(void)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    cli_json j;
    cli_json_begin(&j, stdout);
    cli_json_open(&j, NULL, '[');
    for (size_t i = 0; i < n; i++) {
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", all[i]->name);
        cli_json_str(&j, "summary", all[i]->summary ? all[i]->summary : "");
        cli_json_open(&j, "params", '[');
        for (const eng_param *p = all[i]->params; p && p->name; p++) {
            char range[96];
            param_range(p, range, sizeof range);
            cli_json_open(&j, NULL, '{');
            cli_json_str(&j, "name", p->name);
            cli_json_str(&j, "default", p->def);
            cli_json_str(&j, "range", range);
            cli_json_str(&j, "help", p->help);
            cli_json_close(&j, '}');
        }
        cli_json_close(&j, ']');
        cli_json_close(&j, '}');
    }
    cli_json_close(&j, ']');
}

static void schedulers(const cli_common *c)
{
    if (c->json) {
        schedulers_json();
        return;
    }
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    for (size_t i = 0; i < n; i++) {
        printf("%s: %s\n", all[i]->name, all[i]->summary ? all[i]->summary : "");
        for (const eng_param *p = all[i]->params; p && p->name; p++) {
            char range[96];
            param_range(p, range, sizeof range);
            printf("    %-24s default %-8s [%s] %s\n", p->name, p->def, range, p->help);
        }
    }
}

static void routers(const cli_common *c)
{
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    cli_json j;
    if (c->json) {
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '[');
    }
    for (size_t i = 0; i < n; i++) {
        if (!c->json) {
            printf("%-18s %s\n", all[i]->name, all[i]->summary);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", all[i]->name);
        cli_json_str(&j, "summary", all[i]->summary);
        cli_json_close(&j, '}');
    }
    if (c->json)
        cli_json_close(&j, ']');
}

static void engines(const cli_common *c)
{
    size_t n;
    const eng_preset *all = eng_preset_all(&n);
    cli_json j;
    if (c->json) {
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '[');
    }
    for (size_t i = 0; i < n; i++) {
        const eng_preset *p = &all[i];
        if (!c->json) {
            printf("%s %s%s: %s\n", p->engine, p->version, p->is_default ? " (default)" : "",
                   p->summary);
            printf("    scheduler %s%s%s; gpu_utilization %.2f; block_size %d\n", p->policy,
                   *p->params ? ", " : "", p->params, p->gpu_utilization, p->block_size);
            printf("    cpu_overhead %.0f us + %.1f us per sequence, %s; from %s\n",
                   p->cpu.per_iteration_us, p->cpu.per_seq_us,
                   p->cpu.async ? "overlapped with the GPU" : "before the GPU work", p->cpu_source);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "engine", p->engine);
        cli_json_str(&j, "version", p->version);
        cli_json_int(&j, "default", p->is_default);
        cli_json_str(&j, "scheduler", p->policy);
        cli_json_str(&j, "params", p->params);
        cli_json_num(&j, "gpu_utilization", p->gpu_utilization);
        cli_json_int(&j, "block_size", p->block_size);
        cli_json_num(&j, "cpu_per_iteration_us", p->cpu.per_iteration_us);
        cli_json_num(&j, "cpu_per_seq_us", p->cpu.per_seq_us);
        cli_json_int(&j, "cpu_async", p->cpu.async);
        cli_json_str(&j, "cpu_source", p->cpu_source);
        cli_json_str(&j, "summary", p->summary);
        cli_json_close(&j, '}');
    }
    if (c->json)
        cli_json_close(&j, ']');
}

int cmd_list(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(const cli_common *c);
    } what[] = {{"gpus", gpus},
                {"models", models},
                {"schedulers", schedulers},
                {"routers", routers},
                {"engines", engines}};
    cli_common c;
    const char *name;
    int npos, st = cli_parse(&list_cmd, NULL, &c, argc, argv, &name, &npos);
    if (st != CLI_GO)
        return st;
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++)
        if (strcmp(name, what[i].name) == 0) {
            what[i].fn(&c);
            return 0;
        }
    fprintf(stderr,
            "llmsim list: unknown catalog '%s'; valid: gpus, models, schedulers, routers, "
            "engines\n",
            name);
    return 2;
}
