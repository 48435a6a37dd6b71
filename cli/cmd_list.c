/*
 * cmd_list.c: `llmsim list gpus|models|schedulers|routers|engines|keys`: the catalogs, the
 * registries and the scenario keys (list_keys.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "engine.h"
#include "preset.h"
#include "router.h"

static const cli_command list_cmd = {.name = "list",
                                     .args = "gpus|models|schedulers|routers|engines|keys",
                                     .summary = "Prints a catalog: the GPUs and models llmsim "
                                                "knows by name, the scheduling policies with "
                                                "their parameters, ranges and defaults, the "
                                                "routers, the engine presets with their "
                                                "settings and sources, or every scenario key "
                                                "with its type, unit, range, default and doc.",
                                     .min_pos = 1,
                                     .max_pos = 1,
                                     .common = CLI_JSON};

/* A datasheet quantity: "80 GB", "3.35 TB/s". */
static void qty(char *buf, size_t len, double v, const char *unit)
{
    snprintf(buf, len, "%g %s", v, unit);
}

/* Begins a JSON array on stdout in j when the listing is JSON; returns whether it is. */
static int json_list(const cli_common *c, sim_jsonw *j)
{
    if (!c->json)
        return 0;
    sim_jsonw_begin(j, stdout);
    sim_jsonw_open(j, NULL, '[');
    return 1;
}

/* Lists a table's n entries (entry i at base + i * size): a JSON array of json's objects with
 * --json, else header's line (when not NULL) and text's lines. */
static void list_entries(const cli_common *c, void (*header)(void), const void *base, size_t size,
                         size_t n, void (*json)(sim_jsonw *j, const void *e),
                         void (*text)(const void *e))
{
    sim_jsonw j;
    if (!json_list(c, &j) && header)
        header();
    for (size_t i = 0; i < n; i++) {
        const void *e = (const char *)base + i * size;
        if (c->json)
            json(&j, e);
        else
            text(e);
    }
    if (c->json)
        sim_jsonw_close(&j, ']');
}

/* "nvfp4,mxfp4", "mxfp4", "nvfp4" or "": the FP4 formats a GPU's tensor cores compute. */
static const char *fp4_formats(const eng_gpu *g)
{
    return g->fp4_formats == (ENG_FP4_NV | ENG_FP4_MX) ? "nvfp4,mxfp4"
           : g->fp4_formats == ENG_FP4_MX              ? "mxfp4"
           : g->fp4_formats == ENG_FP4_NV              ? "nvfp4"
                                                       : "";
}

static void gpu_row(const eng_gpu *g, const cal_gpu_sheet *d)
{
    char mem[32], bw[32];
    qty(mem, sizeof mem, d->mem, d->mem_unit);
    qty(bw, sizeof bw, d->bw, d->bw_unit);
    printf("%-13s %8s %11s %10.1f %10.1f %10.1f %10.1f %10.0f %9.0f %7.2f %6.0f\n", g->name, mem,
           bw, g->flops_bf16 / 1e12, g->flops_fp8 / 1e12, g->flops_fp4 / 1e12, g->link_bw / 1e9,
           g->pcie_bw / 1e9, g->nic_bw / 1e9, g->price_per_hour, g->max_w);
}

/* A GPU's datasheet: memory, bandwidths and tensor-core rates, as JSON fields. */
static void gpu_json_sheet(sim_jsonw *j, const eng_gpu *g, const cal_gpu_sheet *d)
{
    sim_jsonw_str(j, "name", g->name);
    sim_jsonw_num(j, "memory", d->mem);
    sim_jsonw_str(j, "memory_unit", d->mem_unit);
    sim_jsonw_int(j, "mem_bytes", g->mem_bytes);
    sim_jsonw_num(j, "bandwidth", d->bw);
    sim_jsonw_str(j, "bandwidth_unit", d->bw_unit);
    sim_jsonw_num(j, "mem_bw", g->mem_bw);
    sim_jsonw_num(j, "flops_bf16", g->flops_bf16);
    sim_jsonw_num(j, "flops_fp8", g->flops_fp8);
    sim_jsonw_num(j, "flops_fp4", g->flops_fp4);
    sim_jsonw_str(j, "fp4_formats", fp4_formats(g));
    sim_jsonw_num(j, "link_bw", g->link_bw);
    sim_jsonw_num(j, "pcie_bw", g->pcie_bw);
    sim_jsonw_num(j, "nic_bw", g->nic_bw);
    sim_jsonw_str(j, "source", d->source);
}

static void gpu_json(sim_jsonw *j, const eng_gpu *g, const cal_gpu_sheet *d)
{
    sim_jsonw_open(j, NULL, '{');
    gpu_json_sheet(j, g, d);
    sim_jsonw_num(j, "price_per_gpu_hour_usd", g->price_per_hour > 0 ? g->price_per_hour : NAN);
    sim_jsonw_str(j, "price_source", cal_gpu_price_source(g->name));
    sim_jsonw_num(j, "max_w", g->max_w > 0 ? g->max_w : NAN);
    sim_jsonw_num(j, "idle_w", g->max_w > 0 ? g->idle_w : NAN);
    sim_jsonw_str(j, "power_source", cal_gpu_power_source(g->name));
    sim_jsonw_close(j, '}');
}

static void gpu_header(void)
{
    printf("%-13s %8s %11s %10s %10s %10s %10s %10s %9s %7s %6s\n", "gpu", "memory", "bandwidth",
           "bf16_TF", "fp8_TF", "fp4_TF", "link_GB/s", "pcie_GB/s", "nic_GB/s", "usd/h", "max_W");
}

/* A catalog row (e: a const cal_gpu_sheet *) with the GPU it gives: a row of the table. */
static void gpu_text(const void *e)
{
    eng_gpu g;
    cal_gpu_find(((const cal_gpu_sheet *)e)->name, &g);
    gpu_row(&g, e);
}

/* The same as a JSON object. */
static void gpu_entry_json(sim_jsonw *j, const void *e)
{
    eng_gpu g;
    cal_gpu_find(((const cal_gpu_sheet *)e)->name, &g);
    gpu_json(j, &g, e);
}

static void gpus(const cli_common *c)
{
    list_entries(c, gpu_header, cal_gpu_sheet_at(0), sizeof(cal_gpu_sheet), (size_t)cal_gpu_count(),
                 gpu_entry_json, gpu_text);
}

/* A model's KV cache bytes per token in dtype, the windowed layers' included. */
static int64_t kv_per_token(const eng_model *m, eng_dtype dtype)
{
    return eng_model_kv_bytes_per_token(m, dtype) + eng_model_window_bytes_per_token(m, dtype);
}

static void model_row(const eng_model *m)
{
    char experts[16] = "-";
    if (m->moe_layers)
        snprintf(experts, sizeof experts, "%d/%d", m->experts_per_tok, m->experts);
    printf("%-17s %-13s %8.2fB %8.2fB %6d %6d %5d %4d %4d %8s %9d %8lld %s\n", m->name, m->arch,
           (double)eng_model_params(m) / 1e9, (double)eng_model_params_active(m) / 1e9, m->layers,
           m->hidden, m->heads, m->attn == ENG_ATTN_MLA ? 1 : m->kv_heads, m->moe_layers, experts,
           m->max_context, (long long)kv_per_token(m, m->kv_dtype),
           eng_dtype_name(m->weight_dtype));
}

/* A model's sizes, as JSON members named as its fields: those before "attention" and after. */
#define SIZE(member) SIM_JFIELD(#member, SIM_JF_INT, eng_model, member)
static const sim_jfield model_widths[] = {
    SIZE(layers), SIZE(hidden), SIZE(heads), SIZE(kv_heads), SIZE(head_dim),
};
static const sim_jfield model_sizes[] = {
    SIZE(intermediate),    SIZE(moe_layers),    SIZE(experts),
    SIZE(experts_per_tok), SIZE(window_layers), SIZE(window),
    SIZE(linear_layers),   SIZE(vocab),         SIZE(max_context),
};

/* A model's shape: layers, widths, attention, experts, windows, as JSON fields. */
static void model_json_shape(sim_jsonw *j, const eng_model *m)
{
    SIM_JSONW_TABLE(j, model_widths, m);
    sim_jsonw_str(j, "attention", m->attn == ENG_ATTN_MLA ? "mla" : "gqa");
    SIM_JSONW_TABLE(j, model_sizes, m);
}

static void model_json(sim_jsonw *j, const eng_model *m)
{
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "name", m->name);
    sim_jsonw_str(j, "arch", m->arch);
    sim_jsonw_int(j, "params", eng_model_params(m));
    sim_jsonw_int(j, "params_active", eng_model_params_active(m));
    model_json_shape(j, m);
    sim_jsonw_str(j, "dtype", eng_dtype_name(m->weight_dtype));
    sim_jsonw_str(j, "kv_dtype", eng_dtype_name(m->kv_dtype));
    sim_jsonw_int(j, "kv_bytes_per_token", kv_per_token(m, m->kv_dtype));
    sim_jsonw_int(j, "kv_bytes_per_token_bf16", kv_per_token(m, ENG_BF16));
    sim_jsonw_close(j, '}');
}

static void model_header(void)
{
    printf("%-17s %-13s %9s %9s %6s %6s %5s %4s %4s %8s %9s %8s %s\n", "model", "arch", "params",
           "active", "layers", "hidden", "heads", "kv", "moe", "experts", "context", "KV_B/tok",
           "dtype");
}

/* The catalog's i-th model: a JSON object into j, or a row of the table. */
static void model_entry(const cli_common *c, sim_jsonw *j, int i)
{
    eng_model m;
    cal_model_at(i, &m);
    if (c->json)
        model_json(j, &m);
    else
        model_row(&m);
}

static void models(const cli_common *c)
{
    sim_jsonw j;
    if (!json_list(c, &j))
        model_header();
    for (int i = 0; i < cal_model_count(); i++)
        model_entry(c, &j, i);
    if (c->json)
        sim_jsonw_close(&j, ']');
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

static void param_json(sim_jsonw *j, const eng_param *p)
{
    char range[96];
    param_range(p, range, sizeof range);
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "name", p->name);
    sim_jsonw_str(j, "default", p->def);
    sim_jsonw_str(j, "range", range);
    sim_jsonw_str(j, "help", p->help);
    sim_jsonw_close(j, '}');
}

/* A policy's parameters as a JSON array "params". */
static void params_json(sim_jsonw *j, const eng_param *params)
{
    sim_jsonw_open(j, "params", '[');
    for (const eng_param *p = params; p && p->name; p++)
        param_json(j, p);
    sim_jsonw_close(j, ']');
}

/* A policy of the registry (e: its entry, a const eng_sched_ops *) as a JSON object. */
static void scheduler_json(sim_jsonw *j, const void *e)
{
    const eng_sched_ops *ops = *(const eng_sched_ops *const *)e;
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "name", ops->name);
    sim_jsonw_str(j, "summary", ops->summary ? ops->summary : "");
    params_json(j, ops->params);
    sim_jsonw_close(j, '}');
}

/* A policy's line, then a line per parameter: default, range, help (e as scheduler_json's). */
static void scheduler_text(const void *e)
{
    const eng_sched_ops *ops = *(const eng_sched_ops *const *)e;
    printf("%s: %s\n", ops->name, ops->summary ? ops->summary : "");
    for (const eng_param *p = ops->params; p && p->name; p++) {
        char range[96];
        param_range(p, range, sizeof range);
        printf("    %-24s default %-8s [%s] %s\n", p->name, p->def, range, p->help);
    }
}

static void schedulers(const cli_common *c)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    list_entries(c, NULL, all, sizeof *all, n, scheduler_json, scheduler_text);
}

/* A router of the registry (e: its entry, a const eng_router_ops *): JSON, or its line. */
static void router_json(sim_jsonw *j, const void *e)
{
    const eng_router_ops *ops = *(const eng_router_ops *const *)e;
    sim_jsonw_open(j, NULL, '{');
    sim_jsonw_str(j, "name", ops->name);
    sim_jsonw_str(j, "summary", ops->summary);
    sim_jsonw_close(j, '}');
}

static void router_text(const void *e)
{
    const eng_router_ops *ops = *(const eng_router_ops *const *)e;
    printf("%-18s %s\n", ops->name, ops->summary);
}

static void routers(const cli_common *c)
{
    size_t n;
    const eng_router_ops *const *all = eng_router_all(&n);
    list_entries(c, NULL, all, sizeof *all, n, router_json, router_text);
}

/* The GEMM inputs of an ENG_AQ_* mask as "QKV, O, gate/up, down" ("none" when empty), in buf. */
static const char *act_quant_names(uint32_t aq, char *buf, size_t len)
{
    static const char *const names[] = {"QKV", "O", "gate/up", "down"};
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < 4; i++)
        if (aq & (1u << i) && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", names[i]);
    return off ? buf : "none";
}

/* An engine preset (e: a const eng_preset *): its lines, or a JSON object. */
static void engine_text(const void *e)
{
    const eng_preset *p = e;
    printf("%s %s%s: %s\n", p->engine, p->version, p->is_default ? " (default)" : "", p->summary);
    printf("    scheduler %s%s%s; gpu_utilization %.2f", p->policy, *p->params ? ", " : "",
           p->params, p->gpu_utilization);
    if (p->free_memory_fraction > 0)
        printf(", the KV cache %.2f of what weights and activations leave",
               p->free_memory_fraction);
    printf("; block_size %d\n", p->block_size);
    printf("    cpu_overhead %.0f us + %.1f us per sequence, %s%s; from %s\n",
           p->cpu.per_iteration_us, p->cpu.per_seq_us,
           p->cpu.async ? "overlapped with the GPU" : "before the GPU work",
           p->cpu.async && p->cpu.form_ahead ? " (each step formed as the one before starts)" : "",
           p->cpu_source);
    if (p->eager_launch_ns > 0)
        printf("    eager passes (no CUDA graph) %.2f us host time per kernel; from %s\n",
               p->eager_launch_ns / 1000, p->eager_source);
    if (p->act_quant_source) {
        char t[64], b[64];
        printf("    fp8 GEMM inputs quantized by a kernel of their own: per tensor %s, per group "
               "%s; from %s\n",
               act_quant_names(p->act_quant[ENG_AQ_TENSOR], t, sizeof t),
               act_quant_names(p->act_quant[ENG_AQ_BLOCK], b, sizeof b), p->act_quant_source);
    }
}

/* An engine preset as JSON members: those before free_gpu_memory_fraction; its block size and
 * CPU figures after it. */
#define PRESET(key, kind, member) SIM_JFIELD(key, kind, eng_preset, member)
static const sim_jfield preset_head[] = {
    PRESET("engine", SIM_JF_STR, engine),
    PRESET("version", SIM_JF_STR, version),
    PRESET("default", SIM_JF_INT, is_default),
    PRESET("scheduler", SIM_JF_STR, policy),
    PRESET("params", SIM_JF_STR, params),
    PRESET("gpu_utilization", SIM_JF_NUM, gpu_utilization),
};
static const sim_jfield preset_cpu[] = {
    PRESET("block_size", SIM_JF_INT, block_size),
    PRESET("cpu_per_iteration_us", SIM_JF_NUM, cpu.per_iteration_us),
    PRESET("cpu_per_seq_us", SIM_JF_NUM, cpu.per_seq_us),
    PRESET("cpu_async", SIM_JF_INT, cpu.async),
    PRESET("cpu_own_step", SIM_JF_INT, cpu.own_step),
    PRESET("cpu_form_ahead", SIM_JF_INT, cpu.form_ahead),
    PRESET("cpu_source", SIM_JF_STR, cpu_source),
};

static void engine_json(sim_jsonw *j, const void *e)
{
    const eng_preset *p = e;
    sim_jsonw_open(j, NULL, '{');
    SIM_JSONW_TABLE(j, preset_head, p);
    sim_jsonw_num(j, "free_gpu_memory_fraction",
                  p->free_memory_fraction > 0 ? p->free_memory_fraction : 1);
    SIM_JSONW_TABLE(j, preset_cpu, p);
    /* 0: the cost model's own figure */
    sim_jsonw_num(j, "eager_launch_us", p->eager_launch_ns / 1000);
    if (p->eager_launch_ns > 0)
        sim_jsonw_str(j, "eager_source", p->eager_source);
    if (p->act_quant_source) {
        char t[64], b[64];
        sim_jsonw_str(j, "fp8_act_quant_tensor",
                      act_quant_names(p->act_quant[ENG_AQ_TENSOR], t, sizeof t));
        sim_jsonw_str(j, "fp8_act_quant_block",
                      act_quant_names(p->act_quant[ENG_AQ_BLOCK], b, sizeof b));
        sim_jsonw_str(j, "fp8_act_quant_source", p->act_quant_source);
    }
    sim_jsonw_str(j, "summary", p->summary);
    sim_jsonw_close(j, '}');
}

static void engines(const cli_common *c)
{
    size_t n;
    const eng_preset *all = eng_preset_all(&n);
    list_entries(c, NULL, all, sizeof *all, n, engine_json, engine_text);
}

static int markdown;

static void keys(const cli_common *c)
{
    cli_list_keys(c, markdown);
}

int cmd_list(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(const cli_common *c);
    } what[] = {{"gpus", gpus},       {"models", models},   {"schedulers", schedulers},
                {"routers", routers}, {"engines", engines}, {"keys", keys}};
    const cli_option opts[] = {{"--markdown", NULL, CLI_FLAG, &markdown,
                                "keys: as the Markdown of docs/keys.md (a table per section)", NULL,
                                0, 0, NULL, NULL},
                               CLI_END};
    cli_common c;
    const char *name;
    int npos, st = cli_parse(&list_cmd, opts, &c, argc, argv, &name, &npos);
    if (st != CLI_GO)
        return st;
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++)
        if (strcmp(name, what[i].name) == 0) {
            what[i].fn(&c);
            return 0;
        }
    fprintf(stderr,
            "llmsim list: unknown catalog '%s'; valid: gpus, models, schedulers, routers, "
            "engines, keys\n",
            name);
    return 2;
}
