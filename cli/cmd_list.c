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

/* A datasheet quantity: "80 GB", "3.35 TB/s". */
static void qty(char *buf, size_t len, double v, const char *unit)
{
    snprintf(buf, len, "%g %s", v, unit);
}

static void gpus(const cli_common *c)
{
    cli_json j;
    if (c->json) {
        cli_json_begin(&j, stdout);
        cli_json_open(&j, NULL, '[');
    } else
        printf("%-13s %8s %11s %10s %10s %10s %10s %10s %9s\n", "gpu", "memory", "bandwidth",
               "bf16_TF", "fp8_TF", "fp4_TF", "link_GB/s", "pcie_GB/s", "nic_GB/s");
    for (int i = 0; i < cal_gpu_count(); i++) {
        eng_gpu gpu, *g = &gpu;
        const cal_gpu_sheet *d = cal_gpu_sheet_at(i);
        cal_gpu_at(i, &gpu);
        char mem[32], bw[32];
        qty(mem, sizeof mem, d->mem, d->mem_unit);
        qty(bw, sizeof bw, d->bw, d->bw_unit);
        if (!c->json) {
            printf("%-13s %8s %11s %10.1f %10.1f %10.1f %10.1f %10.0f %9.0f\n", g->name, mem, bw,
                   g->flops_bf16 / 1e12, g->flops_fp8 / 1e12, g->flops_fp4 / 1e12, g->link_bw / 1e9,
                   g->pcie_bw / 1e9, g->nic_bw / 1e9);
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", g->name);
        cli_json_num(&j, "memory", d->mem);
        cli_json_str(&j, "memory_unit", d->mem_unit);
        cli_json_int(&j, "mem_bytes", g->mem_bytes);
        cli_json_num(&j, "bandwidth", d->bw);
        cli_json_str(&j, "bandwidth_unit", d->bw_unit);
        cli_json_num(&j, "mem_bw", g->mem_bw);
        cli_json_num(&j, "flops_bf16", g->flops_bf16);
        cli_json_num(&j, "flops_fp8", g->flops_fp8);
        cli_json_num(&j, "flops_fp4", g->flops_fp4);
        cli_json_str(&j, "fp4_formats",
                     g->fp4_formats == (ENG_FP4_NV | ENG_FP4_MX) ? "nvfp4,mxfp4"
                     : g->fp4_formats == ENG_FP4_MX              ? "mxfp4"
                     : g->fp4_formats == ENG_FP4_NV              ? "nvfp4"
                                                                 : "");
        cli_json_num(&j, "link_bw", g->link_bw);
        cli_json_num(&j, "pcie_bw", g->pcie_bw);
        cli_json_num(&j, "nic_bw", g->nic_bw);
        cli_json_str(&j, "source", d->source);
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
        printf("%-17s %-13s %9s %9s %6s %6s %5s %4s %4s %8s %9s %8s %s\n", "model", "arch",
               "params", "active", "layers", "hidden", "heads", "kv", "moe", "experts", "context",
               "KV_B/tok", "dtype");
    for (int i = 0; i < cal_model_count(); i++) {
        eng_model mm;
        cal_model_at(i, &mm);
        const eng_model *m = &mm;
        int64_t kvb = eng_model_kv_bytes_per_token(m, m->kv_dtype) +
                      eng_model_window_bytes_per_token(m, m->kv_dtype);
        if (!c->json) {
            char experts[16] = "-";
            if (m->moe_layers)
                snprintf(experts, sizeof experts, "%d/%d", m->experts_per_tok, m->experts);
            printf("%-17s %-13s %8.2fB %8.2fB %6d %6d %5d %4d %4d %8s %9d %8lld %s\n", m->name,
                   m->arch, (double)eng_model_params(m) / 1e9,
                   (double)eng_model_params_active(m) / 1e9, m->layers, m->hidden, m->heads,
                   m->attn == ENG_ATTN_MLA ? 1 : m->kv_heads, m->moe_layers, experts,
                   m->max_context, (long long)kvb, eng_dtype_name(m->weight_dtype));
            continue;
        }
        cli_json_open(&j, NULL, '{');
        cli_json_str(&j, "name", m->name);
        cli_json_str(&j, "arch", m->arch);
        cli_json_int(&j, "params", eng_model_params(m));
        cli_json_int(&j, "params_active", eng_model_params_active(m));
        cli_json_int(&j, "layers", m->layers);
        cli_json_int(&j, "hidden", m->hidden);
        cli_json_int(&j, "heads", m->heads);
        cli_json_int(&j, "kv_heads", m->kv_heads);
        cli_json_int(&j, "head_dim", m->head_dim);
        cli_json_str(&j, "attention", m->attn == ENG_ATTN_MLA ? "mla" : "gqa");
        cli_json_int(&j, "intermediate", m->intermediate);
        cli_json_int(&j, "moe_layers", m->moe_layers);
        cli_json_int(&j, "experts", m->experts);
        cli_json_int(&j, "experts_per_tok", m->experts_per_tok);
        cli_json_int(&j, "window_layers", m->window_layers);
        cli_json_int(&j, "window", m->window);
        cli_json_int(&j, "linear_layers", m->linear_layers);
        cli_json_int(&j, "vocab", m->vocab);
        cli_json_int(&j, "max_context", m->max_context);
        cli_json_str(&j, "dtype", eng_dtype_name(m->weight_dtype));
        cli_json_str(&j, "kv_dtype", eng_dtype_name(m->kv_dtype));
        cli_json_int(&j, "kv_bytes_per_token", kvb);
        cli_json_int(&j, "kv_bytes_per_token_bf16",
                     eng_model_kv_bytes_per_token(m, ENG_BF16) +
                         eng_model_window_bytes_per_token(m, ENG_BF16));
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
