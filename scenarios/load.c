/*
 * load.c: a scenario tree -> scn_scenario: the interpreter of the settings tables (keys.h).
 *
 * Every section's keys are rows of a table declared beside the code they configure (the
 * deployment's in engine/config.c, the pools' and the link's in engine/pd.c, the router's in
 * engine/router.c, the workload's in workload.c, the scenario's own in keys.c). A map is checked
 * against its table before its values are read, so a misspelt key is an error naming the valid
 * ones; each value is checked against its row's type and range and stored where the row says.
 * What the rows cannot say (a model or GPU to resolve, keys that depend on each other) is the
 * code below. Messages read `file:line: key.path: what is wrong`; a value that came from an
 * override names the override instead of a line. The scenario's text (scn_scenario.text) is the
 * tree re-emitted after the overrides (comments dropped), preceded by comment lines naming the
 * file and the overrides: loading that text again gives the same scenario. scn_scenario owns
 * text; everything else in it is plain data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"
#include "scn_int.h"

/* ---- messages ---- */

int scn_fail(scn_lctx *c, const scn_node *n, const char *path, const char *fmt, ...)
{
    char loc[700], msg[700];
    va_list ap;
    if (n && n->ovr)
        snprintf(loc, sizeof loc, "%s: --set %s", c->file, c->ovr[n->ovr - 1]);
    else if (n && n->line)
        snprintf(loc, sizeof loc, "%s:%d", c->file, n->line);
    else
        snprintf(loc, sizeof loc, "%s", c->file);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sim_errf(c->err, "%s: %s: %s", loc, path, msg);
    return -1;
}

scn_kpath scn_kp(const char *pre, const char *key)
{
    scn_kpath k;
    if (pre && *pre)
        snprintf(k.s, sizeof k.s, "%s.%s", pre, key);
    else
        snprintf(k.s, sizeof k.s, "%s", key);
    return k;
}

int scn_missing(scn_lctx *c, const scn_node *map, const char *pre, const char *key, const char *why)
{
    return scn_fail(c, map, scn_kp(pre, key).s, "missing%s%s", why ? " " : "", why ? why : "");
}

void scn_note(scn_lctx *c, const scn_node *n, const char *fmt, ...)
{
    char *notes = c->out->notes, msg[600];
    size_t off = strlen(notes), len = sizeof c->out->notes;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n && n->ovr)
        snprintf(notes + off, len - off, "%s: --set %s: note: %s\n", c->file, c->ovr[n->ovr - 1],
                 msg);
    else if (n)
        snprintf(notes + off, len - off, "%s:%d: note: %s\n", c->file, n->line, msg);
    else
        snprintf(notes + off, len - off, "%s: note: %s\n", c->file, msg);
}

static const char *kind_name(scn_node_kind k)
{
    return k == SCN_NODE_MAP ? "a map" : k == SCN_NODE_SEQ ? "a list" : "a value";
}

/* ---- the interpreter ---- */

/* A required row is missing: its doc (and what it takes, for a choice) says what to give. */
static int missing_row(scn_lctx *c, const scn_node *map, const char *pre, const eng_key *k)
{
    char want[300] = "";
    if (k->type == ENG_KEY_ENUM)
        eng_key_expects(k, want, sizeof want);
    return scn_fail(c, map, scn_kp(pre, k->name).s, "missing (%s%s%s)", k->doc, *want ? ": " : "",
                    want);
}

int scn_check(scn_lctx *c, const scn_node *m, const char *pre, const char *key, const eng_key *row,
              eng_key_val *v)
{
    const scn_node *n = scn_tree_get(m, key);
    char why[600];
    if (!n)
        return row->flags & ENG_KEY_REQUIRED ? missing_row(c, m, pre, row) : 0;
    if (n->kind != SCN_NODE_SCALAR)
        return scn_fail(c, n, scn_kp(pre, key).s, "expected a value, got %s", kind_name(n->kind));
    if (eng_key_parse(row, n->text, v, why, sizeof why))
        return scn_fail(c, n, scn_kp(pre, key).s, "%s", why);
    return 1;
}

int scn_get(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *keys, const char *name,
            eng_key_val *v)
{
    size_t off;
    const eng_key *row = eng_key_find(keys, name, NULL, &off);
    SIM_CHECK(NULL, row != NULL);
    return scn_check(c, m, pre, name, row, v);
}

int scn_get_map(scn_lctx *c, const scn_node *parent, const char *pre, const char *key,
                const scn_node **out)
{
    const scn_node *n = scn_tree_get(parent, key);
    *out = NULL;
    if (!n)
        return 0;
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, scn_kp(pre, key).s, "expected a map ({key: value, ...}), got %s",
                        n->kind == SCN_NODE_SCALAR ? "a single value" : "a list");
    *out = n;
    return 0;
}

/* One row of a table read from map m into obj; 0 or -1. */
static int read_row(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *k, void *obj)
{
    const scn_node *n = scn_tree_get(m, k->name), *sub;
    eng_key_val v;
    if (!n)
        return k->flags & ENG_KEY_REQUIRED ? missing_row(c, m, pre, k) : 0;
    if (k->flags & ENG_KEY_TOP && c->in_pool) {
        const char *dot = strchr(pre, '.');
        return scn_fail(c, n, scn_kp(pre, k->name).s,
                        "the deployment's, not a pool's: set %s at the top level",
                        scn_kp(dot ? dot + 1 : "", k->name).s);
    }
    if (k->flags & ENG_KEY_CODE)
        return 0;
    if (k->type == ENG_KEY_MAP)
        return scn_get_map(c, m, pre, k->name, &sub) ||
               scn_read_map(c, sub, scn_kp(pre, k->name).s, k->sub, (char *)obj + k->off, NULL);
    if (scn_check(c, m, pre, k->name, k, &v) < 0)
        return -1;
    eng_key_store(k, obj, &v);
    return 0;
}

static int read_rows(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *keys,
                     void *obj, const char *sel)
{
    for (const eng_key *k = keys; k->name; k++) {
        if (k->type == ENG_KEY_INCLUDE) {
            if (read_rows(c, m, pre, k->sub, (char *)obj + k->off, sel))
                return -1;
        } else if (eng_key_applies(k, sel) && read_row(c, m, pre, k, obj)) {
            return -1;
        }
    }
    return 0;
}

int scn_read_map(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *keys, void *obj,
                 const char *sel)
{
    for (const scn_node *ch = m->first; ch; ch = ch->next) {
        size_t off;
        if (!eng_key_find(keys, ch->key, sel, &off)) {
            char list[600];
            return scn_fail(c, ch, scn_kp(pre, ch->key).s, "unknown key (valid: %s)",
                            eng_key_names(keys, sel, list, sizeof list));
        }
    }
    return read_rows(c, m, pre, keys, obj, sel);
}

/* ---- paths ---- */

int scn_resolve_path(const char *scenario_path, const char *path, char *out, size_t len)
{
    const char *slash = strrchr(scenario_path, '/');
    int n;
    if (path[0] == '/' || !slash)
        n = snprintf(out, len, "%s", path);
    else
        n = snprintf(out, len, "%.*s/%s", (int)(slash - scenario_path), scenario_path, path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

void scn_base_dir(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == path)
        snprintf(out, len, "/");
    else
        snprintf(out, len, "%.*s", (int)(slash - path), path);
}

int scn_get_path(scn_lctx *c, const scn_node *m, const char *pre, const char *key, char *out,
                 size_t len)
{
    const scn_node *n = scn_tree_get(m, key);
    eng_key row = {key, ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "", .size = 512};
    eng_key_val v;
    if (scn_check(c, m, pre, key, &row, &v) < 0)
        return -1;
    if (!n || !*n->text)
        return scn_missing(c, m, pre, key, "(a file path, relative to the scenario's folder)");
    if (scn_resolve_path(c->file, n->text, out, len))
        return scn_fail(c, n, scn_kp(pre, key).s, "path too long");
    return 0;
}

/* ---- the scenario's own sections ---- */

/* model: resolved by the scenario's model catalog (paths from the scenario's folder). */
static int resolve_model(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    char why[1024] = "", dir[512];
    const scn_node *mn = scn_tree_get(root, "model");
    if (!c->res || !c->res->model)
        return scn_fail(c, mn, "model", "no model catalog was given to resolve '%s'", mn->text);
    scn_base_dir(c->file, dir, sizeof dir);
    if (c->res->model(c->res->st, s->model_name, dir, &s->engine.model, why, sizeof why))
        return scn_fail(c, mn, "model", "%s", *why ? why : "unknown model");
    return 0;
}

/* gpu: resolved by the scenario's GPU catalog. */
static int resolve_gpu(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    char why[1024] = "";
    const scn_node *gn = scn_tree_get(root, "gpu");
    if (!c->res || !c->res->gpu)
        return scn_fail(c, gn, "gpu", "no GPU catalog was given to resolve '%s'", gn->text);
    if (c->res->gpu(c->res->st, s->gpu_name, &s->engine.gpu, why, sizeof why))
        return scn_fail(c, gn, "gpu", "%s", *why ? why : "unknown GPU");
    return 0;
}

/* The model reader's notes, one line each. */
static void model_notes(scn_lctx *c, const eng_model *m)
{
    for (const char *l = m->notes; *l;) {
        const char *nl = strchr(l, '\n');
        int n = nl ? (int)(nl - l) : (int)strlen(l);
        scn_note(c, NULL, "%.*s", n, l);
        l += n + (nl != NULL);
    }
}

/* The GPU cannot run the dtypes (why): the message names dtype or kv_dtype where the scenario
 * gives one, else the GPU with the checkpoint's dtype. */
static int precision_fail(scn_lctx *c, const scn_node *root, const char *why)
{
    const scn_node *dn = scn_tree_get(root, "dtype"), *kn = scn_tree_get(root, "kv_dtype");
    return scn_fail(c,
                    dn   ? dn
                    : kn ? kn
                         : scn_tree_get(root, "gpu"),
                    dn || !kn ? "dtype" : "kv_dtype", "%s%s", why,
                    dn ? "" : " (the checkpoint's dtype)");
}

/* dtype (weights: default the checkpoint's) and kv_dtype (auto: the checkpoint's KV dtype,
 * else its activation dtype), checked against the GPU; notes from the model's reader and from
 * the precision rules. */
static int load_precision(scn_lctx *c, const scn_node *root, eng_config *e)
{
    eng_key_val d, k;
    int hd = scn_get(c, root, "", scn_root_keys, "dtype", &d);
    int hk = hd < 0 ? -1 : scn_get(c, root, "", scn_root_keys, "kv_dtype", &k);
    if (hk < 0)
        return -1;
    const scn_node *kn = scn_tree_get(root, "kv_dtype");
    e->dtype = e->model.weight_dtype;
    if (hd && eng_dtype_parse(d.s, &e->dtype) == 1)
        scn_note(c, NULL,
                 "dtype fp4 is read as nvfp4 (NVIDIA's 4-bit format; say mxfp4 for OCP MX)");
    e->kv_dtype = e->model.kv_dtype;
    if (hk && k.num > 0 && eng_dtype_parse(k.s, &e->kv_dtype) != 0)
        return scn_fail(c, kn, "kv_dtype", "not supported by the engine");
    model_notes(c, &e->model);
    char note[400], why[400];
    eng_compute comp;
    if (eng_precision(&e->gpu, e->dtype, e->kv_dtype, &comp, note, sizeof note, why, sizeof why))
        return precision_fail(c, root, why);
    if (*note)
        scn_note(c, NULL, "%s", note);
    return 0;
}

/* profile: NAME, the shorthand: read by the profile map's name row. */
static int profile_name(scn_lctx *c, const scn_node *root, const eng_key *name, scn_scenario *s)
{
    eng_key_val v;
    if (scn_check(c, root, "", "profile", name, &v) < 0)
        return -1;
    eng_key_store(name, s, &v);
    return 0;
}

/* profile: NAME, or {name: NAME, borrow_from: GPU} to price this scenario's GPU with a
 * profile measured on another one (checked against the profile when it is loaded). */
static int load_profile(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    const eng_key *keys = eng_key_sub(scn_root_keys, "profile");
    const scn_node *n = scn_tree_get(root, "profile");
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_SCALAR)
        return profile_name(c, root, &keys[0], s);
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, "profile",
                        "expected a profile name or {name: NAME, borrow_from: GPU}");
    return scn_read_map(c, n, "profile", keys, s, NULL);
}

/* ---- the top level ---- */

/* cost_model.engine defaults to the `engine:` preset's kernels when the cost model knows them
 * (TGI's flash-attention kernels are priced as vLLM's). */
static void cost_defaults(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    size_t off;
    const eng_key *engine =
        eng_key_find(eng_key_sub(scn_root_keys, "cost_model"), "engine", NULL, &off);
    const scn_node *cm = scn_tree_get(root, "cost_model");
    if (c->preset && !(cm && scn_tree_get(cm, "engine")) &&
        eng_key_choice(engine->choices, c->preset->engine) >= 0)
        snprintf(s->cost.engine, sizeof s->cost.engine, "%s", c->preset->engine);
    if (c->preset) {
        s->cost.eager_launch_ns = c->preset->eager_launch_ns;
        memcpy(s->cost.act_quant, c->preset->act_quant, sizeof s->cost.act_quant);
    }
    if (s->cost.moe_skew > 0 && s->engine.model.moe_layers == 0)
        scn_note(c, NULL,
                 "cost_model.moe_skew: model %s has no routed experts; the skew does nothing",
                 s->engine.model.name);
}

/* Whether a pool of e before pool k runs GPU name. */
static int gpu_seen(const eng_config *e, int k, const char *name)
{
    for (int j = 0; j < k; j++) {
        eng_config pc;
        eng_config_pool(e, j, &pc);
        if (!strcmp(pc.gpu.name, name))
            return 1;
    }
    return 0;
}

/* The notes on gpu when neither the catalog nor the scenario (e) gives its price or power. */
static void gpu_notes(scn_lctx *c, const eng_config *e, const eng_gpu *gpu)
{
    if (gpu->price_per_hour <= 0 && e->fleet.price_per_hour <= 0)
        scn_note(c, NULL,
                 "gpu %s has no list price in the catalog: cost_usd and cost_per_mtok_usd are "
                 "not reported (set price.per_gpu_hour_usd)",
                 gpu->name);
    if (gpu->max_w <= 0 && e->fleet.max_w <= 0)
        scn_note(c, NULL,
                 "gpu %s has no board power in the catalog: energy_kwh is not reported (set "
                 "power.max_w)",
                 gpu->name);
}

/* A GPU without a list price or a power figure: what the run then leaves out, and how to give
 * it. Always 0. */
static int fleet_notes(scn_lctx *c, const scn_scenario *s)
{
    const eng_config *e = &s->engine;
    for (int k = 0; k < eng_config_pools(e); k++) {
        eng_config pc;
        eng_config_pool(e, k, &pc);
        if (!gpu_seen(e, k, pc.gpu.name))
            gpu_notes(c, e, &pc.gpu);
    }
    return 0;
}

/* cost_model.moe_skew, the old name of moe.skew: read as moe.skew (static placement unless
 * moe.placement says otherwise) on an MoE model; a dense model keeps cost_defaults' note. */
static void legacy_skew(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    const scn_node *moe = scn_tree_get(root, "moe");
    if (!(s->cost.moe_skew > 0) || s->engine.model.moe_layers == 0)
        return;
    if (moe && scn_tree_get(moe, "skew")) {
        scn_note(c, NULL,
                 "cost_model.moe_skew: an old name of moe.skew, which the scenario "
                 "also sets; moe.skew is used");
        return;
    }
    s->engine.moe.skew = s->cost.moe_skew;
    scn_note(c, NULL, "cost_model.moe_skew: an old name; read as moe.skew");
}

/* memory.mamba_cache_mode align: the blocks raised to hold a layer's state, said in a note. */
static int hybrid_align(scn_lctx *c, eng_config *e)
{
    int32_t was = e->block_size;
    if (eng_kv_hybrid_apply(e, c->err) != 0)
        return sim_err_prefix(c->err, "%s", c->file);
    if (e->mamba_cache_mode == ENG_MAMBA_ALIGN)
        scn_note(c, NULL,
                 "%s: mamba_cache_mode align: prefix caching on, attention blocks of %d tokens "
                 "(from %d) so that one holds a layer's linear-attention state; each cached "
                 "block keeps its state",
                 e->model.name, e->block_size, was);
    return 0;
}

/* A model with linear-attention layers and no mamba_cache_mode: no prefix caching for it. */
static void linear_note(scn_lctx *c, const eng_config *e)
{
    if (e->model.linear_layers > 0 && e->mamba_cache_mode == ENG_MAMBA_NONE)
        scn_note(c, NULL,
                 "%s: linear-attention layers hold a fixed state per sequence; prefix "
                 "caching stays off for it (vLLM's is opt-in: memory.mamba_cache_mode: align)",
                 e->model.name);
}

static int load_top(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    eng_config *e = &s->engine;
    if (scn_load_engine(c, root, "", e) || scn_read_map(c, root, "", scn_root_keys, s, NULL) ||
        load_profile(c, root, s) || resolve_model(c, root, s) || resolve_gpu(c, root, s) ||
        load_precision(c, root, e))
        return -1;
    legacy_skew(c, root, s);
    if (scn_load_deployment(c, root, e) || scn_load_spec(c, root, e))
        return -1;
    cost_defaults(c, root, s);
    linear_note(c, e);
    if (scn_load_pools(c, root, s) || scn_load_groups(c, root, e) || scn_load_offload(c, root, e) ||
        scn_load_faults(c, root, e) || scn_load_behavior(c, root, e) || fleet_notes(c, s))
        return -1;
    return hybrid_align(c, e);
}

/* ---- entry points ---- */

/* Room for the stored text: a header line naming the file, a line per override, the YAML. */
static size_t text_length(const scn_lctx *c, const char *yaml, int novr)
{
    size_t len = strlen(yaml) + strlen(c->file) + 64;
    for (int i = 0; i < novr; i++)
        len += strlen(c->ovr[i]) + 16;
    return len;
}

/* The scenario's text as a run stores it: its file and overrides in comments, then the tree
 * (overrides applied) written back as YAML. */
static int emit_text(scn_lctx *c, const scn_node *root, int novr, scn_scenario *s)
{
    char *yaml = scn_tree_emit(root, c->err);
    if (!yaml)
        return -1;
    size_t len = text_length(c, yaml, novr);
    s->text = sim_xmalloc(len);
    size_t off = (size_t)snprintf(s->text, len, "# scenario: %s\n", c->file);
    for (int i = 0; i < novr; i++)
        off += (size_t)snprintf(s->text + off, len - off, "# --set %s\n", c->ovr[i]);
    snprintf(s->text + off, len - off, "%s", yaml);
    free(yaml);
    return 0;
}

static void default_name(const char *file, char *out, size_t len)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    const char *dot = strrchr(b, '.');
    int n = dot && dot != b ? (int)(dot - b) : (int)strlen(b);
    snprintf(out, len, "%.*s", n, b);
}

/* What a scenario is before its file is read: named after the file, seed 1, the engine's
 * defaults. */
static void scenario_defaults(scn_scenario *out, const char *name)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    out->seed = 1;
    default_name(name, out->name, sizeof out->name);
    eng_config_defaults(&out->engine);
}

/* The --set overrides, in order, on the tree of file name. 0, or -1 with err naming the file. */
static int apply_overrides(scn_node *root, const char *name, const char *const *overrides,
                           int noverrides, sim_err *err)
{
    for (int i = 0; i < noverrides; i++)
        if (scn_tree_set(root, overrides[i], i + 1, err))
            return sim_err_prefix(err, "%s", name);
    return 0;
}

int scn_load_text(const char *name, const char *text, const char *const *overrides, int noverrides,
                  const scn_resolver *res, scn_scenario *out, sim_err *err)
{
    scn_lctx c = {.file = name, .ovr = overrides, .res = res, .err = err, .out = out};
    scn_node *root = NULL;
    scenario_defaults(out, name);
    if (scn_tree_parse(name, text, strlen(text), &root, err))
        return -1;
    int rc = -1;
    if (apply_overrides(root, name, overrides, noverrides, err))
        goto done;
    if (load_top(&c, root, out) || scn_load_workload(&c, root, &out->workload) ||
        emit_text(&c, root, noverrides, out))
        goto done;
    rc = 0;
done:
    scn_tree_free(root);
    return rc;
}

/* f's bytes to its end or just past SCN_MAX_TEXT (which scn_tree_parse refuses), NUL-ended,
 * *n of them (the caller frees them). */
static char *read_stream(FILE *f, size_t *n)
{
    size_t cap = 4096;
    char *buf = sim_xmalloc(cap);
    *n = 0;
    for (;;) {
        *n += fread(buf + *n, 1, cap - *n - 1, f);
        if (*n + 1 < cap || *n > SCN_MAX_TEXT)
            break;
        cap *= 2;
        buf = sim_xrealloc(buf, cap);
    }
    buf[*n] = '\0';
    return buf;
}

char *scn_read_text(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t n;
    char *buf = read_stream(f, &n);
    int bad = ferror(f);
    fclose(f);
    if (bad || memchr(buf, '\0', n)) {
        free(buf);
        sim_errf(err, "%s: cannot read (I/O error or binary file)", path);
        return NULL;
    }
    return buf;
}

int scn_load(const char *path, const char *const *overrides, int noverrides,
             const scn_resolver *res, scn_scenario *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    char *buf = scn_read_text(path, err);
    if (!buf)
        return -1;
    int rc = scn_load_text(path, buf, overrides, noverrides, res, out, err);
    free(buf);
    return rc;
}

void scn_free(scn_scenario *s)
{
    if (!s)
        return;
    free(s->text);
    s->text = NULL;
}
