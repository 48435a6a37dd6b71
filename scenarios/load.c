/*
 * load.c: a scenario tree -> scn_scenario, with every key, type and range checked.
 *
 * Each map is checked against the keys it allows before its values are read, so a misspelt
 * key is an error naming the valid ones. Messages read `file:line: key.path: what is wrong`;
 * a value that came from an override names the override instead of a line. The scenario's
 * text (scn_scenario.text) is the tree re-emitted after the overrides (comments dropped),
 * preceded by comment lines naming the file and the overrides: loading that text again gives
 * the same scenario. scn_scenario owns text; everything else in it is plain data.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"
#include "scn_int.h"

typedef struct lctx {
    const char *file;       /* the scenario's name in messages */
    const char *const *ovr; /* the overrides, for messages */
    const scn_resolver *res;
    sim_err *err;
    scn_scenario *out;        /* notes go to out->notes */
    const eng_preset *preset; /* the `engine:` preset, or NULL */
} lctx;

/* ---- messages ---- */

static int vfail(lctx *c, const scn_node *n, const char *path, const char *fmt, va_list ap)
{
    char loc[700], msg[700];
    if (n && n->ovr)
        snprintf(loc, sizeof loc, "%s: --set %s", c->file, c->ovr[n->ovr - 1]);
    else if (n && n->line)
        snprintf(loc, sizeof loc, "%s:%d", c->file, n->line);
    else
        snprintf(loc, sizeof loc, "%s", c->file);
    vsnprintf(msg, sizeof msg, fmt, ap);
    return sim_errf(c->err, "%s: %s: %s", loc, path, msg);
}

static int fail(lctx *c, const scn_node *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(lctx *c, const scn_node *n, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(c, n, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* "pre.key" (or "key" at the top) into a static-sized buffer owned by the caller. */
typedef struct kpath {
    char s[160];
} kpath;

static kpath kp(const char *pre, const char *key)
{
    kpath k;
    if (pre && *pre)
        snprintf(k.s, sizeof k.s, "%s.%s", pre, key);
    else
        snprintf(k.s, sizeof k.s, "%s", key);
    return k;
}

static void join_list(char *buf, size_t len, const char *const *items, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", items[i]);
}

/* ---- reading values ---- */

static const char *kind_name(scn_node_kind k)
{
    return k == SCN_NODE_MAP ? "a map" : k == SCN_NODE_SEQ ? "a list" : "a value";
}

/* Refuses any child of map not named in allowed (NULL-terminated). */
static int check_keys(lctx *c, const scn_node *map, const char *pre, const char *const *allowed)
{
    for (const scn_node *ch = map->first; ch; ch = ch->next) {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], ch->key) != 0)
            i++;
        if (!allowed[i]) {
            char list[600];
            join_list(list, sizeof list, allowed, i);
            return fail(c, ch, kp(pre, ch->key).s, "unknown key (valid: %s)", list);
        }
    }
    return 0;
}

/* The scalar child `key` of map: NULL when absent; *bad set on a map or list. */
static const scn_node *scalar(lctx *c, const scn_node *map, const char *pre, const char *key,
                              int *bad)
{
    const scn_node *n = scn_tree_get(map, key);
    *bad = 0;
    if (n && n->kind != SCN_NODE_SCALAR) {
        fail(c, n, kp(pre, key).s, "expected a value, got %s", kind_name(n->kind));
        *bad = 1;
        return NULL;
    }
    return n;
}

/* A child that must be a map when present. 0 with *out NULL when absent. */
static int get_map(lctx *c, const scn_node *map, const char *pre, const char *key,
                   const scn_node **out)
{
    const scn_node *n = scn_tree_get(map, key);
    *out = NULL;
    if (!n)
        return 0;
    if (n->kind != SCN_NODE_MAP)
        return fail(c, n, kp(pre, key).s, "expected a map ({key: value, ...}), got %s",
                    n->kind == SCN_NODE_SCALAR ? "a single value" : "a list");
    *out = n;
    return 0;
}

static int missing(lctx *c, const scn_node *map, const char *pre, const char *key, const char *why)
{
    return fail(c, map, kp(pre, key).s, "missing%s%s", why ? " " : "", why ? why : "");
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return -1;
    *out = v;
    return 0;
}

/* Reads an integer in [lo, hi]; absent leaves *out alone and returns 0. */
static int get_int(lctx *c, const scn_node *map, const char *pre, const char *key, int64_t lo,
                   int64_t hi, int64_t *out)
{
    int bad;
    const scn_node *n = scalar(c, map, pre, key, &bad);
    int64_t v;
    if (bad)
        return -1;
    if (!n)
        return 0;
    if (parse_i64(n->text, &v) || v < lo || v > hi) {
        if (hi == INT64_MAX)
            return fail(c, n, kp(pre, key).s, "expected an integer >= %lld, got '%s'",
                        (long long)lo, n->text);
        return fail(c, n, kp(pre, key).s, "expected an integer in [%lld, %lld], got '%s'",
                    (long long)lo, (long long)hi, n->text);
    }
    *out = v;
    return 0;
}

static int get_i32(lctx *c, const scn_node *map, const char *pre, const char *key, int64_t lo,
                   int64_t hi, int32_t *out)
{
    int64_t v = *out;
    if (get_int(c, map, pre, key, lo, hi, &v))
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* Number ranges: lo/hi with open or closed ends; hi = INFINITY for none. */
typedef struct range {
    double lo, hi;
    int lo_open, hi_open;
} range;

static const range R_POS = {0, INFINITY, 1, 1};    /* > 0 */
static const range R_NONNEG = {0, INFINITY, 0, 1}; /* >= 0 */
static const range R_UNIT = {0, 1, 1, 0};          /* (0, 1] */
/* times that become int64 nanoseconds stay inside the simulated horizon */
static const range R_TIME_S = {0, SCN_HORIZON_S, 0, 0};        /* [0, horizon] s */
static const range R_SPAN_S = {0, SCN_HORIZON_S, 1, 0};        /* (0, horizon] s */
static const range R_TIME_MS = {0, SCN_HORIZON_S * 1e3, 0, 0}; /* [0, horizon] ms */
static const range R_CPU_US = {0, 1e9, 0, 0};                  /* [0, 1000 s] per iteration */
static const range R_GB = {0, 1e9, 0, 0};                      /* bytes stay in int64 */

static void describe(const range *r, char *buf, size_t len)
{
    if (isinf(r->hi))
        snprintf(buf, len, "a number %s %g", r->lo_open ? ">" : ">=", r->lo);
    else
        snprintf(buf, len, "a number in %c%g, %g%c", r->lo_open ? '(' : '[', r->lo, r->hi,
                 r->hi_open ? ')' : ']');
}

static int in_range(const range *r, double v)
{
    if (!isfinite(v))
        return 0;
    if (r->lo_open ? v <= r->lo : v < r->lo)
        return 0;
    if (isinf(r->hi))
        return 1;
    return r->hi_open ? v < r->hi : v <= r->hi;
}

static int get_num(lctx *c, const scn_node *map, const char *pre, const char *key, range r,
                   double *out)
{
    int bad;
    const scn_node *n = scalar(c, map, pre, key, &bad);
    if (bad)
        return -1;
    if (!n)
        return 0;
    char *end;
    double v = strtod(n->text, &end);
    if (!*n->text || *end || !in_range(&r, v)) {
        char want[80];
        describe(&r, want, sizeof want);
        return fail(c, n, kp(pre, key).s, "expected %s, got '%s'", want, n->text);
    }
    *out = v;
    return 0;
}

static int get_str(lctx *c, const scn_node *map, const char *pre, const char *key, char *out,
                   size_t len)
{
    int bad;
    const scn_node *n = scalar(c, map, pre, key, &bad);
    if (bad)
        return -1;
    if (!n)
        return 0;
    if (strlen(n->text) >= len)
        return fail(c, n, kp(pre, key).s, "longer than %zu characters", len - 1);
    snprintf(out, len, "%s", n->text);
    return 0;
}

static int get_bool(lctx *c, const scn_node *map, const char *pre, const char *key, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1", NULL};
    static const char *const no[] = {"false", "no", "off", "0", NULL};
    int bad;
    const scn_node *n = scalar(c, map, pre, key, &bad);
    if (bad)
        return -1;
    if (!n)
        return 0;
    for (int i = 0; yes[i]; i++) {
        if (strcmp(n->text, yes[i]) == 0)
            return *out = 1, 0;
        if (strcmp(n->text, no[i]) == 0)
            return *out = 0, 0;
    }
    return fail(c, n, kp(pre, key).s, "expected true or false, got '%s'", n->text);
}

/* One of choices (NULL-terminated); *idx is its index. Absent leaves *idx alone. */
static int get_choice(lctx *c, const scn_node *map, const char *pre, const char *key,
                      const char *what, const char *const *choices, int *idx)
{
    int bad;
    const scn_node *n = scalar(c, map, pre, key, &bad);
    if (bad)
        return -1;
    if (!n)
        return 0;
    size_t i = 0;
    for (; choices[i]; i++)
        if (strcmp(choices[i], n->text) == 0)
            return *idx = (int)i, 0;
    char list[400];
    join_list(list, sizeof list, choices, i);
    return fail(c, n, kp(pre, key).s, "unknown %s '%s' (valid: %s)", what, n->text, list);
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

static void base_dir(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == path)
        snprintf(out, len, "/");
    else
        snprintf(out, len, "%.*s", (int)(slash - path), path);
}

/* A file path key, resolved against the scenario's folder. */
static int get_path(lctx *c, const scn_node *map, const char *pre, const char *key, char *out,
                    size_t len)
{
    char raw[512] = "";
    if (get_str(c, map, pre, key, raw, sizeof raw))
        return -1;
    if (!*raw)
        return missing(c, map, pre, key, "(a file path, relative to the scenario's folder)");
    if (scn_resolve_path(c->file, raw, out, len))
        return fail(c, scn_tree_get(map, key), kp(pre, key).s, "path too long");
    return 0;
}

/* ---- sections ---- */

/* memory: {...} under root (the top level, pre "", or a pool, pre "prefill" / "decode";
 * max_model_len is the deployment's, so a pool may not set it). */
static int load_memory(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    static const char *const keys[] = {"gpu_utilization", "block_size", "activation_reserve_gb",
                                       "max_model_len", NULL};
    const scn_node *m;
    kpath mp = kp(pre, "memory");
    if (get_map(c, root, pre, "memory", &m))
        return -1;
    if (!m)
        return 0;
    double gb = (double)e->activation_reserve / (double)(INT64_C(1) << 30);
    if (check_keys(c, m, mp.s, keys) ||
        get_num(c, m, mp.s, "gpu_utilization", R_UNIT, &e->gpu_utilization) ||
        get_num(c, m, mp.s, "activation_reserve_gb", R_GB, &gb))
        return -1;
    const scn_node *ml = scn_tree_get(m, "max_model_len");
    if (ml && *pre)
        return fail(c, ml, kp(mp.s, "max_model_len").s,
                    "the deployment's, not a pool's: set memory.max_model_len at the top level");
    if (get_i32(c, m, mp.s, "max_model_len", 0, INT32_MAX, &e->max_model_len))
        return -1;
    e->activation_reserve = (int64_t)llround(gb * (double)(INT64_C(1) << 30));
    const scn_node *bs = scn_tree_get(m, "block_size");
    if (bs) {
        int64_t v = 0;
        if (bs->kind != SCN_NODE_SCALAR || parse_i64(bs->text, &v) || v < 1 || v > 256 ||
            (v & (v - 1)))
            return fail(c, bs, kp(mp.s, "block_size").s,
                        "expected a power of two in [1, 256], got '%s'",
                        bs->kind == SCN_NODE_SCALAR ? bs->text : kind_name(bs->kind));
        e->block_size = (int32_t)v;
    }
    int32_t ctx = e->model.max_context;
    if (e->max_model_len > 0 && ctx > 0 && e->max_model_len > ctx)
        return fail(c, ml, "memory.max_model_len", "%d is beyond %s's context of %d tokens",
                    e->max_model_len, e->model.name, ctx);
    return 0;
}

static void sched_names(char *buf, size_t len)
{
    size_t n, off = 0;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", all[i]->name);
}

/* Appends a note about node n to the scenario's notes. */
static void note(lctx *c, const scn_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(lctx *c, const scn_node *n, const char *fmt, ...)
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
    else
        snprintf(notes + off, len - off, "%s:%d: note: %s\n", c->file, n ? n->line : 0, msg);
}

/* Settings only vLLM V0 has: a scenario that gives them to `vllm` (V1 since the rename) most
 * likely meant V0. */
static int v0_only(const char *key)
{
    return !strcmp(key, "watermark") || !strcmp(key, "preemption") ||
           !strcmp(key, "num_scheduler_steps");
}

static int load_sched_key(lctx *c, const scn_node *kv, const char *pre, const eng_sched_ops *ops,
                          eng_sched_cfg *cfg)
{
    kpath path = kp(kp(pre, "scheduler").s, kv->key);
    if (kv->kind != SCN_NODE_SCALAR)
        return fail(c, kv, path.s, "expected a value, got %s", kind_name(kv->kind));
    const eng_param *p = eng_sched_param(ops, kv->key);
    if (!p) {
        if (!eng_sched_param_known(kv->key))
            return fail(c, kv, path.s, "unknown scheduler key (no registered policy has it)");
        if (!strcmp(ops->name, "vllm") && v0_only(kv->key))
            note(c, kv,
                 "scheduler key '%s' is a vLLM V0 setting, and 'vllm' is the V1 scheduler now "
                 "(no %s); name 'vllm-v0' for V0",
                 kv->key, kv->key);
        else
            note(c, kv, "scheduler key '%s' is not used by '%s'", kv->key, ops->name);
        return 0;
    }
    char why[256] = "";
    if (eng_param_validate(p, kv->text, why, sizeof why))
        return fail(c, kv, path.s, "%s", why);
    if (strlen(kv->key) >= sizeof cfg->kv[0].key || strlen(kv->text) >= sizeof cfg->kv[0].val ||
        eng_cfg_set(cfg, kv->key, kv->text))
        return fail(c, kv, path.s, "value too long or too many scheduler settings");
    return 0;
}

/* scheduler: {name, ...} under root (pre as for load_memory). A pool that names another
 * policy than the one it inherits starts from that policy's defaults. */
static int load_scheduler(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    const scn_node *m;
    char names[400], old[sizeof e->sched.name];
    kpath sp = kp(pre, "scheduler"), np = kp(sp.s, "name");
    snprintf(old, sizeof old, "%s", e->sched.name);
    if (get_map(c, root, pre, "scheduler", &m))
        return -1;
    if (m && get_str(c, m, sp.s, "name", e->sched.name, sizeof e->sched.name))
        return -1;
    const scn_node *given = m ? scn_tree_get(m, "name") : NULL;
    if (c->preset && given && strcmp(e->sched.name, c->preset->policy) != 0)
        return fail(c, given, np.s,
                    "engine %s %s runs the '%s' scheduler, not '%s' (drop one of the two)",
                    c->preset->engine, c->preset->version, c->preset->policy, e->sched.name);
    if (*pre && strcmp(old, e->sched.name) != 0)
        e->sched.n = 0;
    const eng_sched_ops *ops = eng_sched_find(e->sched.name);
    if (!ops) {
        sched_names(names, sizeof names);
        const scn_node *n = m ? scn_tree_get(m, "name") : NULL;
        if (!n)
            return missing(c, m ? m : root, m ? sp.s : pre, m ? "name" : "scheduler", names);
        return fail(c, n, np.s, "unknown scheduler '%s' (valid: %s)", n->text, names);
    }
    if (!m)
        return 0;
    for (const scn_node *kv = m->first; kv; kv = kv->next)
        if (strcmp(kv->key, "name") != 0 && load_sched_key(c, kv, pre, ops, &e->sched))
            return -1;
    return 0;
}

/* `engine: NAME` or `engine: {name: NAME, version: V}`: the preset's policy, its settings, its
 * memory defaults and CPU overhead, before the scenario's own keys override any of them. */
static int load_engine(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    static const char *const keys[] = {"name", "version", NULL};
    const scn_node *n = scn_tree_get(root, "engine"), *vn = NULL;
    char name[32] = "", version[32] = "", list[200];
    kpath ep = kp(pre, "engine");
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_MAP) {
        if (check_keys(c, n, ep.s, keys) || get_str(c, n, ep.s, "name", name, sizeof name) ||
            get_str(c, n, ep.s, "version", version, sizeof version))
            return -1;
        if (!*name)
            return missing(c, n, ep.s, "name", eng_preset_names(list, sizeof list));
        vn = scn_tree_get(n, "version");
    } else if (n->kind == SCN_NODE_SCALAR) {
        if (get_str(c, root, pre, "engine", name, sizeof name))
            return -1;
    } else {
        return fail(c, n, ep.s, "expected an engine name or {name, version}");
    }
    if (!eng_preset_find(name, NULL))
        return fail(c, n, ep.s, "unknown engine '%s' (valid: %s)", name,
                    eng_preset_names(list, sizeof list));
    const eng_preset *p = eng_preset_find(name, *version ? version : NULL);
    if (!p)
        return fail(c, vn, kp(ep.s, "version").s, "no preset of %s version '%s' (valid: %s)", name,
                    version, eng_preset_versions(name, list, sizeof list));
    c->preset = p;
    e->sched.n = 0; /* a pool's own engine starts from its preset alone */
    snprintf(e->sched.name, sizeof e->sched.name, "%s", p->policy);
    char params[256];
    snprintf(params, sizeof params, "%s", p->params);
    for (char *save = NULL, *kv = strtok_r(params, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            eng_cfg_set(&e->sched, kv, eq + 1);
        }
    }
    if (p->gpu_utilization > 0)
        e->gpu_utilization = p->gpu_utilization;
    if (p->block_size > 0)
        e->block_size = p->block_size;
    e->cpu = p->cpu;
    return 0;
}

static int load_cpu(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    static const char *const keys[] = {"per_iteration_us", "per_seq_us", "async", NULL};
    const scn_node *m;
    kpath cp = kp(pre, "cpu_overhead");
    if (get_map(c, root, pre, "cpu_overhead", &m))
        return -1;
    if (!m)
        return 0;
    return check_keys(c, m, cp.s, keys) ||
                   get_num(c, m, cp.s, "per_iteration_us", R_CPU_US, &e->cpu.per_iteration_us) ||
                   get_num(c, m, cp.s, "per_seq_us", R_CPU_US, &e->cpu.per_seq_us) ||
                   get_bool(c, m, cp.s, "async", &e->cpu.async)
               ? -1
               : 0;
}

static int load_slo(lctx *c, const scn_node *root, scn_slo *slo)
{
    static const char *const keys[] = {"ttft_ms", "tpot_ms", "e2e_ms", NULL};
    const scn_node *m;
    if (get_map(c, root, "", "slo", &m))
        return -1;
    if (!m)
        return 0;
    return check_keys(c, m, "slo", keys) ||
                   get_num(c, m, "slo", "ttft_ms", R_NONNEG, &slo->ttft_ms) ||
                   get_num(c, m, "slo", "tpot_ms", R_NONNEG, &slo->tpot_ms) ||
                   get_num(c, m, "slo", "e2e_ms", R_NONNEG, &slo->e2e_ms)
               ? -1
               : 0;
}

static int resolve_model_gpu(lctx *c, const scn_node *root, scn_scenario *s)
{
    char why[1024], dir[512];
    int bad;
    const scn_node *mn = scalar(c, root, "", "model", &bad);
    if (bad)
        return -1;
    if (!mn)
        return missing(c, root, "", "model", "(a catalog name or a path to a config.json)");
    if (get_str(c, root, "", "model", s->model_name, sizeof s->model_name))
        return -1;
    if (!c->res || !c->res->model)
        return fail(c, mn, "model", "no model catalog was given to resolve '%s'", mn->text);
    base_dir(c->file, dir, sizeof dir);
    why[0] = '\0';
    if (c->res->model(c->res->st, s->model_name, dir, &s->engine.model, why, sizeof why))
        return fail(c, mn, "model", "%s", *why ? why : "unknown model");
    const scn_node *gn = scalar(c, root, "", "gpu", &bad);
    if (bad)
        return -1;
    if (!gn)
        return missing(c, root, "", "gpu", NULL);
    if (get_str(c, root, "", "gpu", s->gpu_name, sizeof s->gpu_name))
        return -1;
    if (!c->res || !c->res->gpu)
        return fail(c, gn, "gpu", "no GPU catalog was given to resolve '%s'", gn->text);
    why[0] = '\0';
    if (c->res->gpu(c->res->st, s->gpu_name, &s->engine.gpu, why, sizeof why))
        return fail(c, gn, "gpu", "%s", *why ? why : "unknown GPU");
    return 0;
}

/* Appends "file: note: ..." (one line) to the scenario's notes. */
static void add_note(lctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(lctx *c, const char *fmt, ...)
{
    char *notes = c->out->notes;
    size_t off = strlen(notes), len = sizeof c->out->notes;
    if (off + 1 >= len)
        return;
    int w = snprintf(notes + off, len - off, "%s: note: ", c->file);
    if (w < 0 || (size_t)w >= len - off)
        return;
    off += (size_t)w;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + off, len - off, fmt, ap);
    va_end(ap);
    off = strlen(notes);
    if (off + 1 < len) {
        notes[off] = '\n';
        notes[off + 1] = '\0';
    }
}

/* dtype (weights: default the checkpoint's) and kv_dtype (auto: the checkpoint's KV dtype,
 * else its activation dtype), checked against the GPU; notes from the model's reader and from
 * the precision rules. */
static int load_precision(lctx *c, const scn_node *root, eng_config *e)
{
    static const char *const dtypes[] = {"bf16",  "fp16", "fp8", "nvfp4",
                                         "mxfp4", "int4", "fp4", NULL};
    static const char *const kv_dtypes[] = {"auto", "bf16", "fp16", "fp8", NULL};
    int idx = -1, kidx = -1;
    if (get_choice(c, root, "", "dtype", "dtype", dtypes, &idx) ||
        get_choice(c, root, "", "kv_dtype", "kv_dtype", kv_dtypes, &kidx))
        return -1;
    const scn_node *dn = scn_tree_get(root, "dtype"), *kn = scn_tree_get(root, "kv_dtype");
    e->dtype = e->model.weight_dtype;
    if (idx >= 0 && eng_dtype_parse(dtypes[idx], &e->dtype) == 1)
        add_note(c, "dtype fp4 is read as nvfp4 (NVIDIA's 4-bit format; say mxfp4 for OCP MX)");
    e->kv_dtype = e->model.kv_dtype;
    if (kidx > 0 && eng_dtype_parse(kv_dtypes[kidx], &e->kv_dtype) != 0)
        return fail(c, kn, "kv_dtype", "not supported by the engine");
    for (const char *l = e->model.notes; *l;) {
        const char *nl = strchr(l, '\n');
        int n = nl ? (int)(nl - l) : (int)strlen(l);
        add_note(c, "%.*s", n, l);
        l += n + (nl != NULL);
    }
    char note[400], why[400];
    eng_compute comp;
    if (eng_precision(&e->gpu, e->dtype, e->kv_dtype, &comp, note, sizeof note, why, sizeof why))
        return fail(c,
                    dn   ? dn
                    : kn ? kn
                         : scn_tree_get(root, "gpu"),
                    dn || !kn ? "dtype" : "kv_dtype", "%s%s", why,
                    dn ? "" : " (the checkpoint's dtype)");
    if (*note)
        add_note(c, "%s", note);
    return 0;
}

/* tensor_parallel, expert_parallel, data_parallel_attention: they must divide the model. */
static int load_layout(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    if (get_i32(c, root, pre, "tensor_parallel", 1, 1024, &e->tensor_parallel) ||
        get_i32(c, root, pre, "expert_parallel", 1, 1024, &e->expert_parallel) ||
        get_i32(c, root, pre, "data_parallel_attention", 1, 1024, &e->data_parallel_attention))
        return -1;
    eng_layout l;
    char why[512];
    eng_config_layout(e, &l);
    if (eng_layout_check(&e->model, &l, why, sizeof why) == 0)
        return 0;
    const char *keys[] = {"expert_parallel", "data_parallel_attention", "tensor_parallel"};
    const scn_node *at = NULL;
    const char *key = "tensor_parallel";
    for (int i = 0; i < 3 && !at; i++)
        if (strstr(why, keys[i]) && (at = scn_tree_get(root, keys[i])))
            key = keys[i];
    return fail(c, at ? at : *pre ? root : scn_tree_get(root, "model"), kp(pre, key).s, "%s", why);
}

/* router: a name the engine's router registry knows, or {name, prefix_weight, queue_weight,
 * kv_weight, staleness_ms}. */
static int load_router(lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    static const char *const keys[] = {"name",      "prefix_weight", "queue_weight",
                                       "kv_weight", "staleness_ms",  NULL};
    const scn_node *n = scn_tree_get(root, "router"), *nn = n;
    char name[ENG_ROUTER_NAME_MAX] = "";
    kpath rp = kp(pre, "router");
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_MAP) {
        eng_router_params *p = &e->router_params;
        if (check_keys(c, n, rp.s, keys) || get_str(c, n, rp.s, "name", name, sizeof name) ||
            get_num(c, n, rp.s, "prefix_weight", R_NONNEG, &p->prefix_weight) ||
            get_num(c, n, rp.s, "queue_weight", R_NONNEG, &p->queue_weight) ||
            get_num(c, n, rp.s, "kv_weight", R_NONNEG, &p->kv_weight) ||
            get_num(c, n, rp.s, "staleness_ms", R_NONNEG, &p->staleness_ms))
            return -1;
        nn = scn_tree_get(n, "name");
        if (!nn)
            return missing(c, n, rp.s, "name", NULL);
    } else if (get_str(c, root, pre, "router", name, sizeof name)) {
        return -1;
    }
    if (!eng_router_find(name)) {
        char names[400];
        return fail(c, nn, rp.s, "unknown router '%s' (valid: %s)", name,
                    eng_router_names(names, sizeof names));
    }
    snprintf(e->router, sizeof e->router, "%s", name);
    return 0;
}

/* profile: NAME, or {name: NAME, borrow_from: GPU} to price this scenario's GPU with a
 * profile measured on another one (checked against the profile when it is loaded). */
static int load_profile(lctx *c, const scn_node *root, scn_scenario *s)
{
    static const char *const keys[] = {"name", "borrow_from", NULL};
    const scn_node *n = scn_tree_get(root, "profile");
    if (!n || n->kind == SCN_NODE_SCALAR)
        return get_str(c, root, "", "profile", s->profile, sizeof s->profile);
    if (n->kind != SCN_NODE_MAP)
        return fail(c, n, "profile", "expected a profile name or {name: NAME, borrow_from: GPU}");
    if (check_keys(c, n, "profile", keys) ||
        get_str(c, n, "profile", "name", s->profile, sizeof s->profile) ||
        get_str(c, n, "profile", "borrow_from", s->profile_borrow, sizeof s->profile_borrow))
        return -1;
    if (!s->profile[0])
        return fail(c, n, "profile", "missing key 'name' (the stored profile's name)");
    return 0;
}

/* speculative.acceptance: a measured curve (with the thinking series), a mean length or a
 * per-position rate; how it is drawn; the classes. */
static int load_acceptance(lctx *c, const scn_node *sp_node, eng_spec *sp, const char *dir)
{
    static const char *const keys[] = {"curve",        "thinking", "length", "rate",
                                       "distribution", "classes",  NULL};
    static const char *const dists[] = {"min_variance", "iid", NULL};
    static const char *const onoff[] = {"on", "off", NULL};
    const char *pre = "speculative.acceptance";
    const scn_node *a;
    if (get_map(c, sp_node, "speculative", "acceptance", &a))
        return -1;
    if (!a)
        return missing(c, sp_node, "speculative", "acceptance",
                       "({curve: NAME, thinking: on|off}, {length: AL} or {rate: R})");
    char curve[256] = "";
    double len = -1, rate = -1;
    int dist = -1, think = -1;
    if (check_keys(c, a, pre, keys) || get_str(c, a, pre, "curve", curve, sizeof curve) ||
        get_choice(c, a, pre, "thinking", "thinking", onoff, &think) ||
        get_num(c, a, pre, "length", R_NONNEG, &len) ||
        get_num(c, a, pre, "rate", R_NONNEG, &rate) ||
        get_choice(c, a, pre, "distribution", "distribution", dists, &dist) ||
        get_i32(c, a, pre, "classes", 1, ENG_SPEC_MAX_CLASSES, &sp->classes))
        return -1;
    int given = (*curve != '\0') + (len >= 0) + (rate >= 0);
    if (given != 1)
        return fail(c, a, pre, "give one of curve, length or rate (%d given)", given);
    if (think >= 0 && !*curve)
        return fail(c, scn_tree_get(a, "thinking"), kp(pre, "thinking").s,
                    "only a curve has thinking series");
    int32_t k = sp->k;
    if (*curve) {
        char path[1024], why[1024] = "", model[128];
        const scn_node *cn = scn_tree_get(a, "curve");
        if (!c->res || !c->res->curve)
            return fail(c, cn, kp(pre, "curve").s, "no curve folder was given to find '%s'", curve);
        if (c->res->curve(c->res->st, curve, dir, path, sizeof path, why, sizeof why))
            return fail(c, cn, kp(pre, "curve").s, "%s", why);
        sim_err e2;
        if (scn_curve_length(path, think >= 0 ? onoff[think] : NULL, k, &sp->al, model,
                             sizeof model, &e2))
            return fail(c, cn, kp(pre, "curve").s, "%s", e2.msg);
        add_note(c,
                 "speculative: acceptance length %.2f for %d draft tokens, measured on %s "
                 "(%s)",
                 sp->al, k, model, curve);
    } else if (len >= 0) {
        if (len < 1 || len > k + 1)
            return fail(c, scn_tree_get(a, "length"), kp(pre, "length").s,
                        "%g: a mean acceptance length is 1 (nothing accepted) to %d (all %d "
                        "drafts accepted)",
                        len, k + 1, k);
        sp->al = len;
    } else {
        if (rate > 1)
            return fail(c, scn_tree_get(a, "rate"), kp(pre, "rate").s,
                        "%g: a per-position acceptance rate is in [0, 1]", rate);
        sp->rate = rate;
        sp->al = eng_spec_length_of_rate(rate, k);
    }
    sp->dist = dist >= 0 ? (eng_spec_dist)dist : rate >= 0 ? ENG_SPEC_IID : ENG_SPEC_MIN_VARIANCE;
    if (sp->dist == ENG_SPEC_IID && rate < 0)
        sp->rate = eng_spec_rate_of_length(sp->al, k);
    return 0;
}

/* speculative: {method, num_speculative_tokens, draft_model, mtp_layers, acceptance,
 * disable_by_batch_size}. */
static int load_speculative(lctx *c, const scn_node *root, eng_config *e)
{
    static const char *const keys[] = {
        "method",     "num_speculative_tokens", "draft_model", "mtp_layers",
        "acceptance", "disable_by_batch_size",  NULL};
    static const char *const methods[] = {"draft", "eagle", "eagle3", "mtp", "ngram", NULL};
    const scn_node *m;
    if (get_map(c, root, "", "speculative", &m))
        return -1;
    if (!m)
        return 0;
    eng_spec *sp = &e->spec;
    int method = -1;
    int32_t mtp = 1;
    char draft[512] = "", dir[512], why[1024] = "";
    sp->classes = 8;
    if (check_keys(c, m, "speculative", keys) ||
        get_choice(c, m, "speculative", "method", "method", methods, &method) ||
        get_i32(c, m, "speculative", "num_speculative_tokens", 0, ENG_SPEC_MAX_K, &sp->k) ||
        get_str(c, m, "speculative", "draft_model", draft, sizeof draft) ||
        get_i32(c, m, "speculative", "mtp_layers", 1, 16, &mtp) ||
        get_i32(c, m, "speculative", "disable_by_batch_size", 0, 1 << 30, &sp->disable_batch))
        return -1;
    if (method < 0)
        return missing(c, m, "speculative", "method", "(draft, eagle, eagle3, mtp or ngram)");
    if (!scn_tree_get(m, "num_speculative_tokens"))
        return missing(c, m, "speculative", "num_speculative_tokens", "(draft tokens per step)");
    if (sp->k == 0) { /* off: a sweep's baseline */
        memset(sp, 0, sizeof *sp);
        return 0;
    }
    sp->method = (eng_spec_method)(method + 1);
    const scn_node *dn = scn_tree_get(m, "draft_model");
    if (*draft && sp->method != ENG_SPEC_DRAFT && sp->method != ENG_SPEC_EAGLE &&
        sp->method != ENG_SPEC_EAGLE3)
        return fail(c, dn, "speculative.draft_model", "method %s runs no draft model",
                    eng_spec_method_name(sp->method));
    if (scn_tree_get(m, "mtp_layers") && sp->method != ENG_SPEC_MTP)
        return fail(c, scn_tree_get(m, "mtp_layers"), "speculative.mtp_layers",
                    "only method mtp has MTP layers");
    base_dir(c->file, dir, sizeof dir);
    if (*draft) {
        if (!c->res || !c->res->model)
            return fail(c, dn, "speculative.draft_model", "no model catalog to resolve '%s'",
                        draft);
        if (c->res->model(c->res->st, draft, dir, &sp->draft, why, sizeof why))
            return fail(c, dn, "speculative.draft_model", "%s", *why ? why : "unknown model");
        sp->has_draft = 1;
    }
    if (eng_spec_drafter(sp, &e->model, mtp, why, sizeof why))
        return fail(c, *draft ? dn : scn_tree_get(m, "method"),
                    *draft ? "speculative.draft_model" : "speculative.method", "%s", why);
    if (sp->method == ENG_SPEC_MTP && !scn_tree_get(m, "mtp_layers"))
        add_note(c,
                 "speculative: %d MTP layer assumed (speculative.mtp_layers; DeepSeek-V3, "
                 "GLM and Qwen3.5 ship one)",
                 mtp);
    if (sp->method == ENG_SPEC_NGRAM)
        add_note(c, "speculative: n-gram drafting runs on the CPU; its time is not modelled");
    const char *sched = e->sched.name;
    const char *steps = eng_cfg_get(&e->sched, "num_scheduler_steps");
    if (steps && atoi(steps) > 1)
        return fail(c, m, "speculative",
                    "scheduler %s with num_scheduler_steps %s: vLLM's multi-step scheduling does "
                    "not support speculative decoding",
                    sched, steps);
    return load_acceptance(c, m, sp, dir);
}

/* Whether the map m (NULL: none) gives cpu_overhead.async itself. */
static int gives_cpu_async(const scn_node *m)
{
    const scn_node *cpu = m ? scn_tree_get(m, "cpu_overhead") : NULL;
    return cpu && scn_tree_get(cpu, "async") != NULL;
}

/* MODEL: vLLM --async-scheduling schedules step n+1 while step n runs: the engine's
 * overlapped CPU model. The policy's setting (on by default from vLLM 0.14, its preset) decides
 * unless the scenario gives cpu_overhead.async itself, in `own` (a pool) or `root`. */
static void async_from_scheduler(const scn_node *own, const scn_node *root, eng_config *e)
{
    const eng_sched_ops *ops = eng_sched_find(e->sched.name);
    if (!eng_sched_param(ops, "async_scheduling") || gives_cpu_async(own) || gives_cpu_async(root))
        return;
    e->cpu.async = eng_cfg_int(&e->sched, ops, "async_scheduling") != 0;
}

/* A pool's GPU, when it names its own: resolved, and checked against the deployment's dtypes. */
static int load_pool_gpu(lctx *c, const scn_node *m, const char *pre, eng_config *t)
{
    char name[32] = "", why[1024], note[400];
    const scn_node *gn = scn_tree_get(m, "gpu");
    if (!gn)
        return 0;
    if (get_str(c, m, pre, "gpu", name, sizeof name))
        return -1;
    why[0] = '\0';
    if (!c->res || !c->res->gpu || c->res->gpu(c->res->st, name, &t->gpu, why, sizeof why))
        return fail(c, gn, kp(pre, "gpu").s, "%s", *why ? why : "unknown GPU");
    eng_compute comp;
    if (eng_precision(&t->gpu, t->dtype, t->kv_dtype, &comp, note, sizeof note, why, sizeof why))
        return fail(c, gn, kp(pre, "gpu").s, "%s", why);
    if (*note)
        add_note(c, "%s pool: %s", pre, note);
    return 0;
}

/* `prefill: {...}` or `decode: {...}`: a pool starts from the deployment's settings (GPU,
 * layout, engine, memory, scheduler, router, CPU overhead) and its own keys replace them. */
static int load_pool(lctx *c, const scn_node *root, const char *pre, const eng_config *dep,
                     eng_pool_config *out)
{
    static const char *const keys[] = {
        "replicas", "gpu",    "tensor_parallel", "expert_parallel", "data_parallel_attention",
        "engine",   "memory", "scheduler",       "router",          "cpu_overhead",
        NULL};
    const scn_node *m;
    if (get_map(c, root, "", pre, &m))
        return -1;
    eng_config t = *dep;
    t.replicas = 1;
    const eng_preset *saved = c->preset;
    int rc = check_keys(c, m, pre, keys) ||
                     get_i32(c, m, pre, "replicas", 1, 1 << 20, &t.replicas) ||
                     load_pool_gpu(c, m, pre, &t) || load_layout(c, m, pre, &t) ||
                     load_router(c, m, pre, &t) || load_engine(c, m, pre, &t) ||
                     load_memory(c, m, pre, &t) || load_scheduler(c, m, pre, &t) ||
                     load_cpu(c, m, pre, &t)
                 ? -1
                 : 0;
    c->preset = saved;
    if (rc)
        return -1;
    async_from_scheduler(m, root, &t);
    eng_pool_config_of(&t, out);
    return 0;
}

/* MODEL: default latency per transfer, by link: RDMA 2 us (one-way InfiniBand RC latency,
 * ib_send_lat, 0.8-2.3 us for 32 B-4 KB messages: D. Potter, master's thesis, table
 * mtu_performance); PCIe 4.1 us (GPU peer reads over PCIe 5.0, best pair, p2pmark,
 * github.com/lukealonso/p2pmark); NVLink: no measured figure was found, taken as RDMA's. These
 * are the wires'; a transfer library's handshakes and notifications add their own (set
 * kv_transfer.latency_us from a measurement). */
static double default_latency_us(eng_link_kind k)
{
    return k == ENG_LINK_PCIE ? 4.1 : 2.0;
}

/* `kv_transfer: {link, bandwidth_gb_s, latency_us, discipline}` */
static int load_kv_transfer(lctx *c, const scn_node *root, eng_pd_config *pd)
{
    static const char *const keys[] = {"link", "bandwidth_gb_s", "latency_us", "discipline", NULL};
    static const char *const links[] = {"rdma", "nvlink", "pcie", NULL};
    static const char *const modes[] = {"after_prefill", "layerwise", NULL};
    const char *pre = "kv_transfer";
    const scn_node *m;
    int link = ENG_LINK_RDMA, mode = ENG_XFER_AFTER_PREFILL;
    double gbs = 0, lat = -1;
    if (get_map(c, root, "", pre, &m))
        return -1;
    if (m && (check_keys(c, m, pre, keys) || get_choice(c, m, pre, "link", "link", links, &link) ||
              get_num(c, m, pre, "bandwidth_gb_s", R_POS, &gbs) ||
              get_num(c, m, pre, "latency_us", R_NONNEG, &lat) ||
              get_choice(c, m, pre, "discipline", "discipline", modes, &mode)))
        return -1;
    pd->link = (eng_link_kind)link;
    pd->mode = (eng_xfer_mode)mode;
    pd->link_bw = gbs * 1e9;
    pd->latency_ns = (lat >= 0 ? lat : default_latency_us(pd->link)) * 1e3;
    for (int k = 0; k < 2 && gbs == 0; k++) {
        const eng_gpu *g = &pd->pool[k].gpu;
        if (eng_link_gpu_bw(g, pd->link) <= 0)
            return fail(c, m ? m : root,
                        m   ? pre
                        : k ? "decode.gpu"
                            : "prefill.gpu",
                        "the GPU catalog gives %s no %s bandwidth; set "
                        "kv_transfer.bandwidth_gb_s (per GPU, each way)",
                        g->name, links[link]);
    }
    return 0;
}

/* `prefill:` and `decode:` pools (both or neither) and the link between them. */
static int load_pools(lctx *c, const scn_node *root, scn_scenario *s)
{
    const scn_node *pn = scn_tree_get(root, "prefill"), *dn = scn_tree_get(root, "decode");
    if (!pn && !dn) {
        const scn_node *kt = scn_tree_get(root, "kv_transfer");
        if (kt)
            return fail(c, kt, "kv_transfer",
                        "not used: there is no link without prefill and decode pools");
        return 0;
    }
    if (!pn || !dn)
        return missing(c, root, "", pn ? "decode" : "prefill",
                       "(a disaggregated deployment declares both pools, prefill and decode)");
    const scn_node *rn = scn_tree_get(root, "replicas");
    if (rn)
        return fail(c, rn, "replicas",
                    "with prefill and decode pools, replicas are per pool (prefill.replicas, "
                    "decode.replicas)");
    if (s->engine.spec.method != ENG_SPEC_NONE)
        return fail(c, scn_tree_get(root, "speculative"), "speculative",
                    "speculative decoding in a disaggregated deployment (prefill and decode "
                    "pools) is not modelled yet: use one or the other");
    eng_config *e = &s->engine;
    e->replicas = 1;
    if (load_pool(c, root, "prefill", e, &e->pd.pool[ENG_POOL_PREFILL]) ||
        load_pool(c, root, "decode", e, &e->pd.pool[ENG_POOL_DECODE]) ||
        load_kv_transfer(c, root, &e->pd))
        return -1;
    e->pd.enabled = 1;
    const eng_sched_ops *ops = eng_sched_find(e->pd.pool[ENG_POOL_DECODE].sched.name);
    if (ops && !ops->pd_join)
        return fail(c, dn, "decode.scheduler",
                    "%s cannot take requests prefilled elsewhere (it forms its batches from its "
                    "own prefills); a decode pool runs vllm, vllm-v0, chunked, orca, sglang, "
                    "trtllm or tgi",
                    ops->name);
    return 0;
}

/* cost_model: {moe_skew, engine}: inputs of the cost model (see README "Cost model"). */
static int load_cost(lctx *c, const scn_node *root, scn_scenario *s)
{
    static const char *const keys[] = {"moe_skew", "engine", NULL};
    static const char *const engines[] = {"vllm", "sglang", "trtllm", NULL};
    static const range skew = {0, 10, 0, 0};
    const scn_node *m;
    int idx = -1;
    if (get_map(c, root, "", "cost_model", &m))
        return -1;
    if (m && (check_keys(c, m, "cost_model", keys) ||
              get_num(c, m, "cost_model", "moe_skew", skew, &s->cost.moe_skew) ||
              get_choice(c, m, "cost_model", "engine", "engine", engines, &idx)))
        return -1;
    /* the kernels default to the `engine:` preset's when the cost model knows them (TGI's
     * flash-attention kernels are priced as vLLM's) */
    for (int i = 0; idx < 0 && c->preset && engines[i]; i++)
        if (strcmp(c->preset->engine, engines[i]) == 0)
            idx = i;
    if (idx >= 0)
        snprintf(s->cost.engine, sizeof s->cost.engine, "%s", engines[idx]);
    if (s->cost.moe_skew > 0 && s->engine.model.moe_layers == 0)
        add_note(c, "cost_model.moe_skew: model %s has no routed experts; the skew does nothing",
                 s->engine.model.name);
    return 0;
}

static int load_top(lctx *c, const scn_node *root, scn_scenario *s)
{
    int bad;
    const scn_node *seed = scalar(c, root, "", "seed", &bad);
    if (bad)
        return -1;
    if (seed) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(seed->text, &end, 10);
        if (!*seed->text || *end || errno || seed->text[0] == '-')
            return fail(c, seed, "seed", "expected an integer >= 0, got '%s'", seed->text);
        s->seed = v;
    }
    if (get_str(c, root, "", "name", s->name, sizeof s->name) || load_profile(c, root, s) ||
        resolve_model_gpu(c, root, s) || load_precision(c, root, &s->engine) ||
        get_i32(c, root, "", "replicas", 1, 1 << 20, &s->engine.replicas) ||
        load_layout(c, root, "", &s->engine) || load_router(c, root, "", &s->engine))
        return -1;
    if (load_engine(c, root, "", &s->engine) || load_memory(c, root, "", &s->engine) ||
        load_scheduler(c, root, "", &s->engine) || load_cpu(c, root, "", &s->engine) ||
        load_slo(c, root, &s->slo) || load_speculative(c, root, &s->engine) ||
        load_cost(c, root, s))
        return -1;
    if (s->engine.model.linear_layers > 0)
        add_note(c,
                 "%s: linear-attention layers hold a fixed state per sequence; prefix "
                 "caching stays off for it (vLLM does not support it for such hybrid models)",
                 s->engine.model.name);
    async_from_scheduler(root, NULL, &s->engine);
    return load_pools(c, root, s);
}

/* ---- workload ---- */

static const char *const arrival_names[] = {"poisson", "gamma",    "constant", "burst",
                                            "closed",  "schedule", NULL};
static const char *const dist_names[] = {"fixed", "uniform",   "normal", "lognormal",
                                         "zipf",  "empirical", NULL};
static const char *const formats[] = {"azure", "mooncake", "vidur", "csv", NULL};

static int need_num(lctx *c, const scn_node *m, const char *pre, const char *key, range r,
                    double *out, const char *why)
{
    if (!scn_tree_get(m, key))
        return missing(c, m, pre, key, why);
    return get_num(c, m, pre, key, r, out);
}

static int load_steps(lctx *c, const scn_node *m, const char *pre, scn_arrival *a)
{
    static const char *const keys[] = {"start_s", "rate", NULL};
    const scn_node *steps = scn_tree_get(m, "steps");
    kpath sp = kp(pre, "steps");
    if (!steps)
        return missing(c, m, pre, "steps", "(a list of {start_s, rate})");
    if (steps->kind != SCN_NODE_SEQ || steps->n < 1 || steps->n > SCN_MAX_SCHEDULE)
        return fail(c, steps, sp.s, "expected a list of 1 to %d {start_s, rate} maps",
                    SCN_MAX_SCHEDULE);
    int any = 0, i = 0;
    for (const scn_node *st = steps->first; st; st = st->next, i++) {
        char ip[200];
        snprintf(ip, sizeof ip, "%s[%d]", sp.s, i);
        if (st->kind != SCN_NODE_MAP)
            return fail(c, st, ip, "expected a map {start_s: S, rate: R}");
        double start = -1, rate = -1;
        if (check_keys(c, st, ip, keys) ||
            need_num(c, st, ip, "start_s", R_TIME_S, &start, "(seconds)") ||
            need_num(c, st, ip, "rate", R_NONNEG, &rate, "(requests/s)"))
            return -1;
        if (i == 0 && start != 0)
            return fail(c, st, ip, "the first step must start at start_s: 0");
        if (i > 0 && start <= a->step_start_s[i - 1])
            return fail(c, st, ip, "start_s must increase from one step to the next");
        a->step_start_s[i] = start;
        a->step_rate[i] = rate;
        any |= rate > 0;
    }
    a->nsteps = i;
    if (!any)
        return fail(c, steps, sp.s, "every step has rate 0: no request would ever arrive");
    return 0;
}

static int read_arrival(lctx *c, const scn_node *w, scn_arrival *a)
{
    static const char *const keys[SCN_ARR_COUNT][5] = {
        {"process", "rate", NULL},
        {"process", "rate", "cv", NULL},
        {"process", "rate", NULL},
        {"process", NULL},
        {"process", "concurrency", "think_time_ms", "ramp_up_s", NULL},
        {"process", "steps", NULL}};
    const char *pre = "workload.arrival";
    const scn_node *m = scn_tree_get(w, "arrival");
    int idx = -1;
    if (!m)
        return missing(c, w, "workload", "arrival",
                       "(process: poisson, gamma, constant, burst, "
                       "closed or schedule)");
    if (m->kind == SCN_NODE_SCALAR) { /* shorthand: `arrival: burst` */
        if (get_choice(c, w, "workload", "arrival", "arrival process", arrival_names, &idx))
            return -1;
        if (idx != SCN_ARR_BURST)
            return fail(c, m, pre, "process '%s' needs parameters: write {process: %s, ...}",
                        m->text, m->text);
        a->kind = SCN_ARR_BURST;
        return 0;
    }
    if (get_map(c, w, "workload", "arrival", &m))
        return -1;
    if (!scn_tree_get(m, "process"))
        return missing(c, m, pre, "process", "(poisson, gamma, constant, burst, closed, schedule)");
    if (get_choice(c, m, pre, "process", "arrival process", arrival_names, &idx))
        return -1;
    a->kind = (scn_arrival_kind)idx;
    if (check_keys(c, m, pre, keys[idx]))
        return -1;
    switch (a->kind) {
    case SCN_ARR_GAMMA:
        if (need_num(c, m, pre, "cv", R_POS, &a->cv, "(coefficient of variation of the gaps)"))
            return -1;
        /* fall through */
    case SCN_ARR_POISSON:
    case SCN_ARR_CONSTANT:
        return need_num(c, m, pre, "rate", R_POS, &a->rate, "(requests per second)");
    case SCN_ARR_CLOSED:
        if (!scn_tree_get(m, "concurrency"))
            return missing(c, m, pre, "concurrency", "(number of clients)");
        return get_i32(c, m, pre, "concurrency", 1, 1 << 24, &a->concurrency) ||
                       get_num(c, m, pre, "think_time_ms", R_TIME_MS, &a->think_time_ms) ||
                       get_num(c, m, pre, "ramp_up_s", R_TIME_S, &a->ramp_up_s)
                   ? -1
                   : 0;
    case SCN_ARR_SCHEDULE:
        return load_steps(c, m, pre, a);
    default:
        return 0;
    }
}

/* An arrival process, read, then checked for representable gaps (scenarios/dist.c). */
static int load_arrival(lctx *c, const scn_node *w, scn_arrival *a)
{
    char why[256];
    if (read_arrival(c, w, a) != 0)
        return -1;
    return scn_arrival_check(a, why, sizeof why)
               ? fail(c, scn_tree_get(w, "arrival"), "workload.arrival", "%s", why)
               : 0;
}

/* Opens a trace file once to check that it exists and has the columns asked for. */
static int probe_trace(lctx *c, const scn_node *at, const char *path, const scn_trace_spec *sp,
                       int *has_time)
{
    sim_err e;
    scn_trace_reader *r = scn_trace_open(sp, &e);
    if (!r)
        return fail(c, at, path, "%s", e.msg);
    if (has_time)
        *has_time = scn_trace_has_time(r);
    scn_trace_close(r);
    return 0;
}

static int load_dist_bounds(lctx *c, const scn_node *m, const char *pre, scn_dist *d, int req)
{
    int64_t lo = 0, hi = 0;
    if (req && !scn_tree_get(m, "min"))
        return missing(c, m, pre, "min", NULL);
    if (req && !scn_tree_get(m, "max"))
        return missing(c, m, pre, "max", NULL);
    if (get_int(c, m, pre, "min", 1, INT32_MAX, &lo) ||
        get_int(c, m, pre, "max", 1, INT32_MAX, &hi))
        return -1;
    if (lo && hi && lo > hi)
        return fail(c, scn_tree_get(m, "min"), kp(pre, "min").s, "min %lld > max %lld",
                    (long long)lo, (long long)hi);
    d->min = (double)lo;
    d->max = (double)hi;
    return 0;
}

static int load_empirical(lctx *c, const scn_node *m, const char *pre, scn_dist *d, int is_out)
{
    int fi = -1;
    if (get_path(c, m, pre, "path", d->path, sizeof d->path))
        return -1;
    if (!scn_tree_get(m, "format"))
        return missing(c, m, pre, "format", "(azure, mooncake, vidur or csv)");
    if (get_choice(c, m, pre, "format", "trace format", formats, &fi) ||
        get_str(c, m, pre, "column", d->column, sizeof d->column))
        return -1;
    snprintf(d->format, sizeof d->format, "%s", formats[fi]);
    if (!strcmp(d->format, "csv") && !*d->column)
        return missing(c, m, pre, "column", "(format csv names the column to sample)");
    scn_trace_spec sp = {.path = d->path, .format = d->format, .lengths_only = 1};
    if (is_out) {
        sp.col_output = *d->column ? d->column : NULL;
        sp.want_output = 1;
    } else {
        sp.col_prompt = *d->column ? d->column : NULL;
        sp.want_prompt = 1;
    }
    return probe_trace(c, scn_tree_get(m, "path"), kp(pre, "path").s, &sp, NULL);
}

/* A length distribution `key` of map w, whose path is `parent`; `parent` names it in messages. */
static int read_dist_in(lctx *c, const scn_node *w, const char *parent, const char *key,
                        scn_dist *d)
{
    static const char *const keys[SCN_DIST_COUNT][7] = {
        {"dist", "value", "min", "max", NULL},
        {"dist", "min", "max", NULL},
        {"dist", "mean", "std", "min", "max", NULL},
        {"dist", "mean", "sigma", "min", "max", NULL},
        {"dist", "min", "max", "s", NULL},
        {"dist", "path", "format", "column", "min", "max", NULL}};
    kpath pre = kp(parent, key);
    const scn_node *m = scn_tree_get(w, key);
    int idx = -1, is_out = !strcmp(key, "output_tokens");
    memset(d, 0, sizeof *d);
    if (!m)
        return missing(c, w, parent, key,
                       "({dist: fixed|uniform|normal|lognormal|zipf|"
                       "empirical, ...} or a number of tokens)");
    if (m->kind == SCN_NODE_SCALAR) { /* shorthand: `output_tokens: 500` */
        int64_t v = 0;
        if (get_int(c, w, parent, key, 1, INT32_MAX, &v))
            return -1;
        d->kind = SCN_DIST_FIXED;
        d->value = (double)v;
        return 0;
    }
    if (get_map(c, w, parent, key, &m))
        return -1;
    if (!scn_tree_get(m, "dist"))
        return missing(c, m, pre.s, "dist", "(fixed, uniform, normal, lognormal, zipf, empirical)");
    if (get_choice(c, m, pre.s, "dist", "distribution", dist_names, &idx))
        return -1;
    d->kind = (scn_dist_kind)idx;
    if (check_keys(c, m, pre.s, keys[idx]) ||
        load_dist_bounds(c, m, pre.s, d, d->kind == SCN_DIST_UNIFORM || d->kind == SCN_DIST_ZIPF))
        return -1;
    int64_t v = 0;
    switch (d->kind) {
    case SCN_DIST_FIXED:
        if (!scn_tree_get(m, "value"))
            return missing(c, m, pre.s, "value", "(tokens)");
        if (get_int(c, m, pre.s, "value", 1, INT32_MAX, &v))
            return -1;
        d->value = (double)v;
        return 0;
    case SCN_DIST_NORMAL:
        return need_num(c, m, pre.s, "mean", R_POS, &d->mean, "(tokens)") ||
                       need_num(c, m, pre.s, "std", R_POS, &d->std, "(tokens)")
                   ? -1
                   : 0;
    case SCN_DIST_LOGNORMAL:
        return need_num(c, m, pre.s, "mean", R_POS, &d->mean, "(tokens)") ||
                       need_num(c, m, pre.s, "sigma", R_POS, &d->sigma,
                                "(standard deviation of the underlying normal)")
                   ? -1
                   : 0;
    case SCN_DIST_ZIPF:
        if (need_num(c, m, pre.s, "s", R_POS, &d->s, "(exponent)"))
            return -1;
        if (d->max - d->min >= (double)(1 << 24))
            return fail(c, m, pre.s, "zipf range max - min must be below %d", 1 << 24);
        return 0;
    case SCN_DIST_EMPIRICAL:
        return load_empirical(c, m, pre.s, d, is_out);
    default:
        return 0;
    }
}

/* A length distribution, read, then checked for representable draws (scenarios/dist.c). */
static int load_dist_in(lctx *c, const scn_node *w, const char *parent, const char *key,
                        scn_dist *d)
{
    char why[256];
    if (read_dist_in(c, w, parent, key, d) != 0)
        return -1;
    return scn_dist_check(d, why, sizeof why)
               ? fail(c, scn_tree_get(w, key), kp(parent, key).s, "%s", why)
               : 0;
}

static int load_dist(lctx *c, const scn_node *w, const char *key, scn_dist *d)
{
    return load_dist_in(c, w, "workload", key, d);
}

/* `columns: {time, prompt, output, time_unit_s}` of a trace or lengths section. */
static int load_columns(lctx *c, const scn_node *m, const char *pre, char *time, char *prompt,
                        char *output, double *unit)
{
    static const char *const tkeys[] = {"time", "prompt", "output", "time_unit_s", NULL};
    static const char *const lkeys[] = {"prompt", "output", NULL};
    const scn_node *cm;
    kpath cp = kp(pre, "columns");
    if (get_map(c, m, pre, "columns", &cm))
        return -1;
    if (!cm)
        return 0;
    if (check_keys(c, cm, cp.s, time ? tkeys : lkeys) ||
        get_str(c, cm, cp.s, "prompt", prompt, 64) || get_str(c, cm, cp.s, "output", output, 64))
        return -1;
    if (time && (get_str(c, cm, cp.s, "time", time, 64) ||
                 get_num(c, cm, cp.s, "time_unit_s", R_POS, unit)))
        return -1;
    return 0;
}

static int load_lengths(lctx *c, const scn_node *w, scn_lengths *l)
{
    static const char *const keys[] = {"path", "format", "columns", NULL};
    const char *pre = "workload.lengths";
    const scn_node *m;
    int fi = -1;
    if (get_map(c, w, "workload", "lengths", &m))
        return -1;
    if (!m)
        return 0;
    l->present = 1;
    if (check_keys(c, m, pre, keys) || get_path(c, m, pre, "path", l->path, sizeof l->path))
        return -1;
    if (!scn_tree_get(m, "format"))
        return missing(c, m, pre, "format", "(azure, mooncake, vidur or csv)");
    if (get_choice(c, m, pre, "format", "trace format", formats, &fi) ||
        load_columns(c, m, pre, NULL, l->col_prompt, l->col_output, NULL))
        return -1;
    snprintf(l->format, sizeof l->format, "%s", formats[fi]);
    if (!strcmp(l->format, "csv") && (!*l->col_prompt || !*l->col_output))
        return missing(c, m, pre, "columns", "(format csv needs columns: {prompt, output})");
    scn_trace_spec sp = {.path = l->path,
                         .format = l->format,
                         .col_prompt = *l->col_prompt ? l->col_prompt : NULL,
                         .col_output = *l->col_output ? l->col_output : NULL,
                         .lengths_only = 1,
                         .want_prompt = 1,
                         .want_output = 1};
    return probe_trace(c, scn_tree_get(m, "path"), kp(pre, "path").s, &sp, NULL);
}

static int load_trace(lctx *c, const scn_node *w, scn_trace *t, int *has_time)
{
    static const char *const keys[] = {
        "path",  "format",     "time_scale", "rate",         "start_s",           "duration_s",
        "limit", "on_bad_row", "columns",    "lengths_only", "hash_block_tokens", NULL};
    static const char *const bad_row[] = {"error", "skip", NULL};
    const char *pre = "workload.trace";
    const scn_node *m;
    int fi = -1, br = 0;
    if (get_map(c, w, "workload", "trace", &m))
        return -1;
    if (!m)
        return 0;
    t->present = 1;
    t->time_scale = 1;
    if (check_keys(c, m, pre, keys) || get_path(c, m, pre, "path", t->path, sizeof t->path))
        return -1;
    if (!scn_tree_get(m, "format"))
        return missing(c, m, pre, "format", "(azure, mooncake, vidur or csv)");
    if (get_choice(c, m, pre, "format", "trace format", formats, &fi) ||
        get_num(c, m, pre, "time_scale", R_POS, &t->time_scale) ||
        get_num(c, m, pre, "rate", R_POS, &t->rate) ||
        get_num(c, m, pre, "start_s", R_TIME_S, &t->start_s) ||
        get_num(c, m, pre, "duration_s", R_SPAN_S, &t->duration_s) ||
        get_int(c, m, pre, "limit", 1, INT64_MAX, &t->limit) ||
        get_choice(c, m, pre, "on_bad_row", "on_bad_row action", bad_row, &br) ||
        get_bool(c, m, pre, "lengths_only", &t->lengths_only) ||
        load_columns(c, m, pre, t->col_time, t->col_prompt, t->col_output, &t->time_unit_s))
        return -1;
    snprintf(t->format, sizeof t->format, "%s", formats[fi]);
    t->skip_bad_rows = br == 1;
    /* MODEL: Mooncake FAST'25 traces: one hash id per 512-token prompt block (SOURCE.md) */
    const scn_node *hb = scn_tree_get(m, "hash_block_tokens");
    t->hash_block = !strcmp(t->format, "mooncake") ? 512 : 0;
    if (hb && strcmp(t->format, "mooncake"))
        return fail(c, hb, kp(pre, "hash_block_tokens").s, "only mooncake traces carry hash_ids");
    if (get_i32(c, m, pre, "hash_block_tokens", 0, 1 << 20, &t->hash_block))
        return -1;
    if (scn_tree_get(m, "rate") && scn_tree_get(m, "time_scale"))
        return fail(c, scn_tree_get(m, "rate"), kp(pre, "rate").s,
                    "give rate or time_scale, not both");
    if (!strcmp(t->format, "csv") && (!*t->col_prompt || !*t->col_output))
        return missing(c, m, pre, "columns",
                       "(format csv needs columns: {time, prompt, output}; time is optional)");
    scn_trace_spec sp = scn_trace_spec_of(t);
    if (probe_trace(c, scn_tree_get(m, "path"), kp(pre, "path").s, &sp, has_time))
        return -1;
    if (!*has_time &&
        (t->rate > 0 || t->start_s > 0 || t->duration_s > 0 || scn_tree_get(m, "time_scale")))
        return fail(c, m, pre,
                    "rate, time_scale, start_s and duration_s need arrival times, and this "
                    "trace is read for its lengths only");
    return 0;
}

/* A renewal process's nominal span, (num_requests - 1) / rate, must end inside the simulated
 * horizon (time is int64 ns); a random one that goes past it anyway fails in the source. */
static int check_span(lctx *c, const scn_node *w, const scn_workload *wl)
{
    const scn_arrival *a = &wl->arrival;
    if (a->kind != SCN_ARR_POISSON && a->kind != SCN_ARR_GAMMA && a->kind != SCN_ARR_CONSTANT)
        return 0;
    double span = (double)(wl->num_requests - 1) / a->rate;
    if (span <= SCN_HORIZON_S)
        return 0;
    const scn_node *am = scn_tree_get(w, "arrival");
    return fail(c, scn_tree_get(am, "rate"), "workload.arrival.rate",
                "%lld requests at %g/s span %.3g s of simulated time, past its horizon of %.0e s "
                "(time is int64 nanoseconds); raise the rate or lower num_requests",
                (long long)wl->num_requests, a->rate, span, SCN_HORIZON_S);
}

/* `shared_prefix: {tokens, groups}` */
static int load_prefix(lctx *c, const scn_node *w, scn_workload *wl, int32_t ctx)
{
    static const char *const keys[] = {"tokens", "groups", NULL};
    const char *pre = "workload.shared_prefix";
    const scn_node *m;
    if (get_map(c, w, "workload", "shared_prefix", &m))
        return -1;
    if (!m)
        return 0;
    scn_prefix *p = &wl->prefix;
    p->present = 1;
    p->groups = 1;
    if (check_keys(c, m, pre, keys))
        return -1;
    if (!scn_tree_get(m, "tokens"))
        return missing(c, m, pre, "tokens", "(tokens every request of a group starts with)");
    if (get_i32(c, m, pre, "tokens", 1, ctx > 1 ? ctx - 1 : INT32_MAX, &p->tokens) ||
        get_i32(c, m, pre, "groups", 1, 1 << 30, &p->groups))
        return -1;
    if (wl->trace.present)
        return fail(c, m, pre,
                    "a trace replays its own prompts; shared_prefix needs drawn lengths");
    return 0;
}

/* A think time: a number of ms (may be 0), or a distribution of whole ms. */
static int load_think(lctx *c, const scn_node *m, const char *pre, scn_sessions *ss)
{
    const scn_node *n = scn_tree_get(m, "think_time_ms");
    ss->think_fixed_ms = 0;
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_SCALAR)
        return get_num(c, m, pre, "think_time_ms", R_TIME_MS, &ss->think_fixed_ms);
    ss->think_fixed_ms = -1;
    return load_dist_in(c, m, pre, "think_time_ms", &ss->think);
}

/* `sessions: {turns, user_tokens, system_prompt_tokens, think_time_ms, kind, tool_tokens}` */
static int load_sessions(lctx *c, const scn_node *w, scn_workload *wl)
{
    static const char *const keys[] = {
        "turns",       "user_tokens", "system_prompt_tokens", "think_time_ms", "kind",
        "tool_tokens", NULL};
    static const char *const kinds[] = {"chat", "agent", NULL};
    const char *pre = "workload.sessions";
    const scn_node *m;
    if (get_map(c, w, "workload", "sessions", &m))
        return -1;
    if (!m)
        return 0;
    scn_sessions *ss = &wl->sessions;
    int kind = 0;
    ss->present = 1;
    if (check_keys(c, m, pre, keys) ||
        get_choice(c, m, pre, "kind", "session kind", kinds, &kind) ||
        load_dist_in(c, m, pre, "turns", &ss->turns) ||
        load_dist_in(c, m, pre, "user_tokens", &ss->user) ||
        get_i32(c, m, pre, "system_prompt_tokens", 0, INT32_MAX, &ss->system_tokens) ||
        load_think(c, m, pre, ss))
        return -1;
    ss->agent = kind == 1;
    if (ss->agent && load_dist_in(c, m, pre, "tool_tokens", &ss->tool))
        return -1;
    if (!ss->agent && scn_tree_get(m, "tool_tokens"))
        return fail(c, scn_tree_get(m, "tool_tokens"), kp(pre, "tool_tokens").s,
                    "not used: only kind: agent sessions add tool output");
    for (int i = 0; i < 4; i++) {
        static const char *const clash[] = {"prompt_tokens", "lengths", "trace", "shared_prefix"};
        const scn_node *n = scn_tree_get(w, clash[i]);
        if (n)
            return fail(c, n, kp("workload", clash[i]).s,
                        "not used with sessions: their prompts are the context so far plus "
                        "sessions.user_tokens (a shared prefix is sessions.system_prompt_tokens)");
    }
    return 0;
}

static int load_workload(lctx *c, const scn_node *root, scn_workload *w)
{
    static const char *const keys[] = {"num_requests",  "arrival",  "prompt_tokens",
                                       "output_tokens", "lengths",  "trace",
                                       "shared_prefix", "sessions", NULL};
    const scn_node *m;
    int has_time = 0;
    if (get_map(c, root, "", "workload", &m))
        return -1;
    if (!m)
        return missing(c, root, "", "workload", "(num_requests, arrival, prompt_tokens, ...)");
    if (check_keys(c, m, "workload", keys) || load_trace(c, m, &w->trace, &has_time) ||
        load_lengths(c, m, &w->lengths) || load_sessions(c, m, w))
        return -1;
    int timed = w->trace.present && has_time;
    int lengths_given = w->trace.present || w->lengths.present;
    if (w->sessions.present) {
        if (!scn_tree_get(m, "num_requests"))
            return missing(c, m, "workload", "num_requests", "(turns to send, over all sessions)");
        if (get_int(c, m, "workload", "num_requests", 1, INT64_MAX, &w->num_requests) ||
            load_dist(c, m, "output_tokens", &w->output) || load_arrival(c, m, &w->arrival))
            return -1;
        if (w->arrival.kind == SCN_ARR_BURST || w->arrival.kind == SCN_ARR_SCHEDULE)
            return fail(c, scn_tree_get(m, "arrival"), "workload.arrival",
                        "sessions start by a closed loop (concurrent sessions) or by poisson, "
                        "gamma or constant (sessions per second)");
        return 0;
    }
    if (w->trace.present && w->lengths.present)
        return fail(c, scn_tree_get(m, "lengths"), "workload.lengths",
                    "a trace already gives the lengths; use trace or lengths, not both");
    if (!scn_tree_get(m, "num_requests") && !w->trace.present)
        return missing(c, m, "workload", "num_requests", "(an integer >= 1)");
    if (get_int(c, m, "workload", "num_requests", w->trace.present ? 0 : 1, INT64_MAX,
                &w->num_requests))
        return -1;
    for (int i = 0; i < 2; i++) {
        const char *k = i ? "output_tokens" : "prompt_tokens";
        const scn_node *n = scn_tree_get(m, k);
        if (lengths_given && n)
            return fail(c, n, kp("workload", k).s, "not used: the %s gives the lengths",
                        w->trace.present ? "trace" : "lengths file");
        if (!lengths_given && load_dist(c, m, k, i ? &w->output : &w->prompt))
            return -1;
    }
    const scn_node *an = scn_tree_get(m, "arrival");
    if (timed && an)
        return fail(c, an, "workload.arrival",
                    "not used: the trace gives the arrival times (set trace.lengths_only: "
                    "true to use the trace's lengths with this arrival process)");
    if (!timed && load_arrival(c, m, &w->arrival))
        return -1;
    int32_t ctx = c->out->engine.max_model_len > 0 ? c->out->engine.max_model_len
                                                   : c->out->engine.model.max_context;
    if (load_prefix(c, m, w, ctx))
        return -1;
    const scn_arrival *a = &w->arrival;
    if (!timed && !lengths_given && a->kind == SCN_ARR_CLOSED && a->concurrency > 1 &&
        a->ramp_up_s == 0 && w->prompt.kind == SCN_DIST_FIXED && w->output.kind == SCN_DIST_FIXED)
        note(c, an,
             "closed-loop clients with fixed lengths all start at 0 and stay in lock-step "
             "(they prefill together every round); arrival.ramp_up_s staggers their starts");
    return timed ? 0 : check_span(c, m, w);
}

/* ---- entry points ---- */

static int emit_text(lctx *c, const scn_node *root, int novr, scn_scenario *s)
{
    char *yaml = scn_tree_emit(root, c->err);
    if (!yaml)
        return -1;
    size_t len = strlen(yaml) + strlen(c->file) + 64;
    for (int i = 0; i < novr; i++)
        len += strlen(c->ovr[i]) + 16;
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

int scn_load_text(const char *name, const char *text, const char *const *overrides, int noverrides,
                  const scn_resolver *res, scn_scenario *out, sim_err *err)
{
    static const char *const keys[] = {"name",
                                       "description",
                                       "seed",
                                       "model",
                                       "gpu",
                                       "dtype",
                                       "kv_dtype",
                                       "profile",
                                       "engine",
                                       "memory",
                                       "scheduler",
                                       "cpu_overhead",
                                       "replicas",
                                       "router",
                                       "tensor_parallel",
                                       "expert_parallel",
                                       "data_parallel_attention",
                                       "prefill",
                                       "decode",
                                       "kv_transfer",
                                       "slo",
                                       "speculative",
                                       "cost_model",
                                       "workload",
                                       NULL};
    lctx c = {.file = name, .ovr = overrides, .res = res, .err = err, .out = out};
    scn_node *root = NULL;
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    out->seed = 1;
    default_name(name, out->name, sizeof out->name);
    eng_config_defaults(&out->engine);
    if (scn_tree_parse(name, text, strlen(text), &root, err))
        return -1;
    int rc = -1;
    for (int i = 0; i < noverrides; i++)
        if (scn_tree_set(root, overrides[i], i + 1, err)) {
            sim_err_prefix(err, "%s", name);
            goto done;
        }
    if (check_keys(&c, root, "", keys) || load_top(&c, root, out) ||
        load_workload(&c, root, &out->workload) || emit_text(&c, root, noverrides, out))
        goto done;
    rc = 0;
done:
    scn_tree_free(root);
    return rc;
}

char *scn_read_text(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap || n > SCN_MAX_TEXT) /* past the limit: scn_tree_parse refuses it */
            break;
        cap *= 2;
        buf = sim_xrealloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    buf[n] = '\0';
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
