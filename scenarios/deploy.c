/*
 * deploy.c: the deployment's sections beyond what their rows say (engine/config.c's tables,
 * router.c's, pd.c's, read by load.c's interpreter): the engine preset the scenario's keys
 * override, the scheduler and its policy's own parameters, the router, the parallel layout
 * against the model, and the prefill and decode pools with the link between them.
 */
#include <stdio.h>
#include <string.h>

#include "preset.h"
#include "scn_int.h"

/* memory.max_model_len within the model's context. */
static int check_context(scn_lctx *c, const scn_node *root, eng_config *e)
{
    const scn_node *m = scn_tree_get(root, "memory");
    const scn_node *ml = m ? scn_tree_get(m, "max_model_len") : NULL;
    int32_t ctx = e->model.max_context;
    if (e->max_model_len > 0 && ctx > 0 && e->max_model_len > ctx)
        return scn_fail(c, ml, "memory.max_model_len", "%d is beyond %s's context of %d tokens",
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

/* Settings only vLLM V0 has: a scenario that gives them to `vllm` (V1 since the rename) most
 * likely meant V0. */
static int v0_only(const char *key)
{
    return !strcmp(key, "watermark") || !strcmp(key, "preemption") ||
           !strcmp(key, "num_scheduler_steps");
}

/* Key kv (at path) that policy ops has no parameter for: unknown to every policy, or a note
 * that it is not used (naming vLLM V0 for its settings given to V1). */
static int not_a_param(scn_lctx *c, const scn_node *kv, const char *path, const eng_sched_ops *ops)
{
    if (!eng_sched_param_known(kv->key))
        return scn_fail(c, kv, path, "unknown scheduler key (no registered policy has it)");
    if (!strcmp(ops->name, "vllm") && v0_only(kv->key))
        scn_note(c, kv,
                 "scheduler key '%s' is a vLLM V0 setting, and 'vllm' is the V1 scheduler "
                 "now (no %s); name 'vllm-v0' for V0",
                 kv->key, kv->key);
    else
        scn_note(c, kv, "scheduler key '%s' is not used by '%s'", kv->key, ops->name);
    return 0;
}

/* A policy parameter kv of the scheduler map m: the policy's own rows (eng_param) check it. */
static int load_sched_key(scn_lctx *c, const scn_node *m, const scn_node *kv, const char *pre,
                          const eng_sched_ops *ops, eng_sched_cfg *cfg)
{
    static const eng_key text = {"", ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_NOWHERE};
    scn_kpath sp = scn_kp(pre, "scheduler"), path = scn_kp(sp.s, kv->key);
    eng_key_val v;
    if (scn_check(c, m, sp.s, kv->key, &text, &v) < 0)
        return -1;
    const eng_param *p = eng_sched_param(ops, kv->key);
    if (!p)
        return not_a_param(c, kv, path.s, ops);
    char why[256] = "";
    if (eng_param_validate(p, kv->text, why, sizeof why))
        return scn_fail(c, kv, path.s, "%s", why);
    if (strlen(kv->key) >= sizeof cfg->kv[0].key || strlen(kv->text) >= sizeof cfg->kv[0].val ||
        eng_cfg_set(cfg, kv->key, kv->text))
        return scn_fail(c, kv, path.s, "value too long or too many scheduler settings");
    return 0;
}

/* No policy has the scheduler name: given at node given (of map m, under root at pre), or
 * missing; the message lists the policies. */
static int no_scheduler(scn_lctx *c, const scn_node *root, const scn_node *m, const scn_node *given,
                        const char *pre)
{
    char names[400];
    scn_kpath sp = scn_kp(pre, "scheduler");
    sched_names(names, sizeof names);
    if (!given)
        return scn_missing(c, m ? m : root, m ? sp.s : pre, m ? "name" : "scheduler", names);
    return scn_fail(c, given, scn_kp(sp.s, "name").s, "unknown scheduler '%s' (valid: %s)",
                    given->text, names);
}

/* scheduler: {name, ...} under root (the top level, pre "", or a pool, pre "prefill" /
 * "decode"): the policy's own parameters. A pool that names another policy than the one it
 * inherits starts from that policy's defaults. */
static int load_scheduler(scn_lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    const scn_node *m, *given;
    char old[sizeof e->sched.name];
    scn_kpath sp = scn_kp(pre, "scheduler"), np = scn_kp(sp.s, "name");
    eng_key_val v;
    snprintf(old, sizeof old, "%s", e->sched.name);
    if (scn_get_map(c, root, pre, "scheduler", &m))
        return -1;
    if (m && scn_get(c, m, sp.s, eng_key_sub(eng_deploy_keys, "scheduler"), "name", &v) > 0)
        snprintf(e->sched.name, sizeof e->sched.name, "%s", v.s);
    if ((given = m ? scn_tree_get(m, "name") : NULL) && c->preset &&
        strcmp(e->sched.name, c->preset->policy) != 0)
        return scn_fail(c, given, np.s,
                        "engine %s %s runs the '%s' scheduler, not '%s' (drop one of the two)",
                        c->preset->engine, c->preset->version, c->preset->policy, e->sched.name);
    if (*pre && strcmp(old, e->sched.name) != 0)
        e->sched.n = 0;
    const eng_sched_ops *ops = eng_sched_find(e->sched.name);
    if (!ops)
        return no_scheduler(c, root, m, given, pre);
    for (const scn_node *kv = m ? m->first : NULL; kv; kv = kv->next)
        if (strcmp(kv->key, "name") != 0 && load_sched_key(c, m, kv, pre, ops, &e->sched))
            return -1;
    return 0;
}

/* A preset's policy settings ("key=value,key=value") into cfg. */
static void set_params(eng_sched_cfg *cfg, const char *text)
{
    char params[256];
    snprintf(params, sizeof params, "%s", text);
    for (char *save = NULL, *kv = strtok_r(params, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            eng_cfg_set(cfg, kv, eq + 1);
        }
    }
}

/* The preset's policy, its settings, its memory defaults and CPU overhead, into e. */
static void apply_preset(const eng_preset *p, eng_config *e)
{
    e->sched.n = 0; /* a pool's own engine starts from its preset alone */
    snprintf(e->sched.name, sizeof e->sched.name, "%s", p->policy);
    set_params(&e->sched, p->params);
    if (p->gpu_utilization > 0)
        e->gpu_utilization = p->gpu_utilization;
    if (p->free_memory_fraction > 0)
        e->free_memory_fraction = p->free_memory_fraction;
    if (p->block_size > 0)
        e->block_size = p->block_size;
    e->cpu = p->cpu;
}

/* `engine: NAME` or `engine: {name: NAME, version: V}`: the preset, before the scenario's own
 * keys override any of its settings. */
int scn_load_engine(scn_lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    const eng_key *keys = eng_key_sub(eng_deploy_keys, "engine");
    const scn_node *n = scn_tree_get(root, "engine"), *vn = NULL;
    scn_kpath ep = scn_kp(pre, "engine");
    char list[200];
    eng_key_val name = {0}, version = {0};
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_MAP) {
        if (scn_read_map(c, n, ep.s, keys, NULL, NULL) ||
            scn_get(c, n, ep.s, keys, "name", &name) < 0 ||
            scn_get(c, n, ep.s, keys, "version", &version) < 0)
            return -1;
        vn = scn_tree_get(n, "version");
    } else if (n->kind == SCN_NODE_SCALAR) {
        if (scn_check(c, root, pre, "engine", &keys[0], &name) < 0)
            return -1;
    } else {
        return scn_fail(c, n, ep.s, "expected an engine name or {name, version}");
    }
    if (!eng_preset_find(name.s, NULL))
        return scn_fail(c, n, ep.s, "unknown engine '%s' (valid: %s)", name.s,
                        eng_preset_names(list, sizeof list));
    const eng_preset *p = eng_preset_find(name.s, version.s);
    if (!p)
        return scn_fail(c, vn, scn_kp(ep.s, "version").s,
                        "no preset of %s version '%s' (valid: %s)", name.s, version.s,
                        eng_preset_versions(name.s, list, sizeof list));
    c->preset = p;
    apply_preset(p, e);
    return 0;
}

/* tensor_parallel, expert_parallel, data_parallel_attention must divide the model. */
static int check_layout(scn_lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    static const char *const keys[] = {"expert_parallel", "data_parallel_attention",
                                       "tensor_parallel"};
    eng_layout l;
    char why[512];
    eng_config_layout(e, &l);
    if (eng_layout_check(&e->model, &l, why, sizeof why) == 0)
        return 0;
    const scn_node *at = NULL;
    const char *key = "tensor_parallel";
    if (strncmp(why, "moe", 3) == 0 && (at = scn_tree_get(root, "moe")))
        key = "moe";
    for (int i = 0; i < 3 && !at; i++)
        if (strstr(why, keys[i]) && (at = scn_tree_get(root, keys[i])))
            key = keys[i];
    return scn_fail(c,
                    at     ? at
                    : *pre ? root
                           : scn_tree_get(root, "model"),
                    scn_kp(pre, key).s, "%s", why);
}

/* router: a name the engine's router registry knows, or {name, prefix_weight, ...} (the
 * router's settings read by the table into e). */
static int load_router(scn_lctx *c, const scn_node *root, const char *pre, eng_config *e)
{
    const scn_node *n = scn_tree_get(root, "router"), *nn = n;
    scn_kpath rp = scn_kp(pre, "router");
    eng_key_val name;
    char names[400];
    if (!n)
        return 0;
    if (n->kind == SCN_NODE_MAP) {
        /* a router's own keys apply only to it (their rows' `when`) */
        if (scn_get(c, n, rp.s, eng_router_keys, "name", &name) < 0 ||
            scn_read_map(c, n, rp.s, eng_router_keys, e, name.s))
            return -1;
        nn = scn_tree_get(n, "name");
    } else if (scn_check(c, root, pre, "router", &eng_router_keys[0], &name) < 0) {
        return -1;
    }
    if (!eng_router_find(name.s))
        return scn_fail(c, nn, rp.s, "unknown router '%s' (valid: %s)", name.s,
                        eng_router_names(names, sizeof names));
    snprintf(e->router, sizeof e->router, "%s", name.s);
    return 0;
}

/* MODEL: vLLM --async-scheduling schedules step n+1 while step n runs: the engine's
 * overlapped CPU model. The policy's setting (on by default from vLLM 0.14, its preset) decides
 * unless the scenario gives cpu_overhead.async itself, in `own` (a pool) or `root`. */
static void async_from_scheduler(const scn_node *own, const scn_node *root, eng_config *e)
{
    const eng_sched_ops *ops = eng_sched_find(e->sched.name);
    for (int i = 0; i < 2; i++) {
        const scn_node *m = i ? root : own, *cpu = m ? scn_tree_get(m, "cpu_overhead") : NULL;
        if (cpu && scn_tree_get(cpu, "async"))
            return;
    }
    if (eng_sched_param(ops, "async_scheduling"))
        e->cpu.async = eng_cfg_int(&e->sched, ops->params, "async_scheduling") != 0;
}

/* ---- prefill and decode pools ---- */

/* A pool's GPU, when it names its own: resolved, and checked against the deployment's dtypes. */
static int load_pool_gpu(scn_lctx *c, const scn_node *m, const char *pre, eng_config *t)
{
    char why[1024] = "", note[400];
    eng_key_val name;
    const scn_node *gn = scn_tree_get(m, "gpu");
    int rc = scn_get(c, m, pre, eng_pool_keys, "gpu", &name);
    if (rc <= 0)
        return rc;
    if (!c->res || !c->res->gpu || c->res->gpu(c->res->st, name.s, &t->gpu, why, sizeof why))
        return scn_fail(c, gn, scn_kp(pre, "gpu").s, "%s", *why ? why : "unknown GPU");
    eng_compute comp;
    if (eng_precision(&t->gpu, t->dtype, t->kv_dtype, &comp, note, sizeof note, why, sizeof why))
        return scn_fail(c, gn, scn_kp(pre, "gpu").s, "%s", why);
    if (*note)
        scn_note(c, NULL, "%s pool: %s", pre, note);
    return 0;
}

/* `replicas: N` in map m (the top level, or a pool, pre its name); a list of groups is
 * scn_load_groups's at the top level, load_pool_groups's in a pool. */
static int load_count(scn_lctx *c, const scn_node *m, const char *pre, eng_config *e)
{
    const scn_node *n = scn_tree_get(m, "replicas");
    eng_key_val v;
    if (n && n->kind == SCN_NODE_SEQ)
        return 0; /* a list of groups: scn_load_groups's, or a pool's (load_pool_groups) */
    int rc = scn_get(c, m, pre, eng_deploy_keys, "replicas", &v);
    if (rc > 0)
        e->replicas = (int32_t)v.i;
    return rc < 0 ? -1 : 0;
}

/* A pool's map m (`prefill: {...}`, `decode: {...}`, a group of `replicas: [...]`, read by
 * table keys): it starts from the deployment's settings (GPU, layout, engine, memory,
 * scheduler, router, CPU overhead) and its own keys replace them. */
static int load_pool_map(scn_lctx *c, const scn_node *root, const scn_node *m, const char *pre,
                         const eng_config *dep, const eng_key *keys, eng_pool_config *out)
{
    eng_config t = *dep;
    t.replicas = 1;
    const eng_preset *saved = c->preset;
    c->in_pool = 1;
    int rc = scn_load_engine(c, m, pre, &t) || scn_read_map(c, m, pre, keys, &t, NULL) ||
                     load_count(c, m, pre, &t) || load_pool_gpu(c, m, pre, &t) ||
                     check_layout(c, m, pre, &t) || load_router(c, m, pre, &t) ||
                     load_scheduler(c, m, pre, &t)
                 ? -1
                 : 0;
    c->preset = saved;
    c->in_pool = 0;
    if (rc)
        return -1;
    async_from_scheduler(m, root, &t);
    *out = t.pool;
    return 0;
}

/* `prefill: {...}` or `decode: {...}`. */
static int load_pool(scn_lctx *c, const scn_node *root, const char *pre, const eng_config *dep,
                     eng_pool_config *out)
{
    const scn_node *m;
    if (scn_get_map(c, root, "", pre, &m))
        return -1;
    return load_pool_map(c, root, m, pre, dep, eng_pool_keys, out);
}

/* What a group (map n at ip, in pool pre) does not take: replicas (its count is its size) and
 * a router (one routes the whole pool). */
static int group_refuses(scn_lctx *c, const scn_node *n, const char *ip, const char *pre)
{
    static const char *const deployment[] = {"replicas", "router"};
    for (int k = 0; k < 2; k++)
        if (scn_tree_get(n, deployment[k]))
            return scn_fail(c, scn_tree_get(n, deployment[k]), scn_kp(ip, deployment[k]).s,
                            "%s%s%s",
                            k ? "one router routes the whole pool: set router at the " : "",
                            k ? (*pre ? "pool's level" : "top level") : "",
                            k ? "" : "a group's size is its count");
    return 0;
}

/* Group i of `replicas: [...]` at node n (in pool pre: "" at the top level), starting from
 * dep's settings, into *out and its weight (0 when not given). */
static int load_group(scn_lctx *c, const scn_node *root, const scn_node *n, const char *pre, int i,
                      const eng_config *dep, eng_pool_config *out, double *weight)
{
    char ip[48];
    eng_key_val v;
    snprintf(ip, sizeof ip, "%s%sreplicas[%d]", pre, *pre ? "." : "", i);
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, ip, "expected a map {gpu, count, tensor_parallel, ...}");
    if (group_refuses(c, n, ip, pre))
        return -1;
    if (load_pool_map(c, root, n, ip, dep, eng_group_keys, out) ||
        scn_get(c, n, ip, eng_group_keys, "weight", &v) < 0)
        return -1;
    *weight = scn_tree_get(n, "weight") ? v.num : 0;
    return 0;
}

/* The groups of list n (`replicas: [...]` in pool pre, or at the top level) from
 * e->groups.group[first] on, each starting from dep's settings: their count, or -1. */
static int load_group_list(scn_lctx *c, const scn_node *root, const scn_node *n, const char *pre,
                           int first, const eng_config *dep, eng_config *e)
{
    char at[32];
    snprintf(at, sizeof at, "%s%sreplicas", pre, *pre ? "." : "");
    if (n->n < 1 || first + n->n > ENG_MAX_GROUPS)
        return scn_fail(c, n, at,
                        "expected a count, or a list of 1 to %d groups {gpu, count, "
                        "tensor_parallel, ...}%s",
                        ENG_MAX_GROUPS - first,
                        first ? " (at most 8 groups over the prefill and decode pools)" : "");
    int i = 0;
    for (const scn_node *g = n->first; g; g = g->next, i++)
        if (load_group(c, root, g, pre, i, dep, &e->groups.group[first + i],
                       &e->groups.weight[first + i]))
            return -1;
    return i;
}

/* The replicas of e's n groups from group first on. */
static int32_t group_replicas(const eng_config *e, int first, int n)
{
    int32_t r = 0;
    for (int i = 0; i < n; i++)
        r += e->groups.group[first + i].replicas;
    return r;
}

int scn_load_groups(scn_lctx *c, const scn_node *root, eng_config *e)
{
    const scn_node *n = scn_tree_get(root, "replicas");
    if (!n || n->kind != SCN_NODE_SEQ)
        return 0;
    if (e->spec.method != ENG_SPEC_NONE)
        return scn_fail(c, scn_tree_get(root, "speculative"), "speculative",
                        "speculative decoding in a mixed pool (a list of replica groups) is not "
                        "modelled yet");
    eng_config dep = *e;
    int n_groups = load_group_list(c, root, n, "", 0, &dep, e);
    if (n_groups < 0)
        return -1;
    e->replicas = group_replicas(e, 0, n_groups);
    e->groups.n = n_groups;
    return 0;
}

/* Pool k's groups (`prefill: {replicas: [...]}`, pre its name), each starting from the pool's
 * settings, after the groups of the pools before it; the pool's replicas are their sum. */
static int load_pool_groups(scn_lctx *c, const scn_node *root, const char *pre, int k,
                            eng_config *e)
{
    const scn_node *n = scn_tree_get(scn_tree_get(root, pre), "replicas");
    if (!n || n->kind != SCN_NODE_SEQ)
        return 0;
    eng_config dep = *e;
    dep.pool = e->pd.pool[k];
    int first = k ? e->pd.ngroups[0] : 0;
    int n_groups = load_group_list(c, root, n, pre, first, &dep, e);
    if (n_groups < 0)
        return -1;
    e->pd.pool[k].replicas = group_replicas(e, first, n_groups);
    e->pd.ngroups[k] = n_groups;
    return 0;
}

/* Pool p's GPU (a group's, or the prefill or decode pool's), its key's path into at. */
static const eng_gpu *pool_gpu(const eng_config *e, int p, char *at, size_t len)
{
    const eng_pd_config *pd = &e->pd;
    int k = p >= eng_config_decode_pool(e), g = eng_config_group(e, p);
    if (g < 0) {
        snprintf(at, len, "%s.gpu", k ? "decode" : "prefill");
        return &pd->pool[k].gpu;
    }
    snprintf(at, len, "%s.replicas[%d].gpu", k ? "decode" : "prefill", k ? g - pd->ngroups[0] : g);
    return &e->groups.group[g].gpu;
}

/* `kv_transfer: {link, bandwidth_gb_s, latency_us, discipline}` (e's pools loaded) */
static int load_kv_transfer(scn_lctx *c, const scn_node *root, eng_config *e)
{
    eng_pd_config *pd = &e->pd;
    const scn_node *m;
    if (scn_get_map(c, root, "", "kv_transfer", &m))
        return -1;
    eng_keys_defaults(eng_kv_transfer_keys, pd);
    if (m && scn_read_map(c, m, "kv_transfer", eng_kv_transfer_keys, pd, NULL))
        return -1;
    if (!m || !scn_tree_get(m, "latency_us"))
        pd->latency_ns = eng_link_default_latency_us(pd->link) * 1e3;
    for (int p = 0; p < eng_config_pools(e) && pd->link_bw == 0; p++) {
        char at[48];
        const eng_gpu *gpu = pool_gpu(e, p, at, sizeof at);
        if (eng_link_gpu_bw(gpu, pd->link) <= 0)
            return scn_fail(c, m ? m : root, m ? "kv_transfer" : at,
                            "the GPU catalog gives %s%s%s%s no %s bandwidth; set "
                            "kv_transfer.bandwidth_gb_s (per GPU, each way)",
                            gpu->name, m ? " (" : "", m ? at : "", m ? ")" : "",
                            eng_link_kind_name(pd->link));
    }
    return 0;
}

/* What pools do not take: a deployment-wide replica count, speculative decoding. */
static int pools_refuse(scn_lctx *c, const scn_node *root, const scn_node *rn, const eng_config *e)
{
    if (rn)
        return scn_fail(c, rn, "replicas",
                        "with prefill and decode pools, replicas are per pool (prefill.replicas, "
                        "decode.replicas)");
    if (e->spec.method != ENG_SPEC_NONE)
        return scn_fail(c, scn_tree_get(root, "speculative"), "speculative",
                        "speculative decoding in a disaggregated deployment (prefill and decode "
                        "pools) is not modelled yet: use one or the other");
    return 0;
}

/* Every decode pool's (or decode group's) policy takes requests prefilled elsewhere. */
static int check_decode_policies(scn_lctx *c, const scn_node *dn, const eng_config *e)
{
    int d = eng_config_decode_pool(e), ng = e->pd.ngroups[ENG_POOL_DECODE];
    for (int p = d; p < eng_config_pools(e); p++) {
        int g = eng_config_group(e, p);
        const char *name = g >= 0 ? e->groups.group[g].sched.name : e->pd.pool[1].sched.name;
        const eng_sched_ops *ops = eng_sched_find(name);
        char at[48];
        snprintf(at, sizeof at, ng ? "decode.replicas[%d].scheduler" : "decode.scheduler", p - d);
        if (ops && !ops->pd_join)
            return scn_fail(c, dn, at,
                            "%s cannot take requests prefilled elsewhere (it forms its batches "
                            "from its own prefills); a decode pool runs vllm, vllm-v0, chunked, "
                            "orca, sglang, trtllm or tgi",
                            ops->name);
    }
    return 0;
}

/* `prefill:` and `decode:` pools (both or neither) and the link between them. */
int scn_load_pools(scn_lctx *c, const scn_node *root, scn_scenario *s)
{
    const scn_node *pn = scn_tree_get(root, "prefill"), *dn = scn_tree_get(root, "decode");
    const scn_node *kt = scn_tree_get(root, "kv_transfer"), *rn = scn_tree_get(root, "replicas");
    eng_config *e = &s->engine;
    if (!pn && !dn)
        return kt ? scn_fail(c, kt, "kv_transfer",
                             "not used: there is no link without prefill and decode pools")
                  : 0;
    if (!pn || !dn)
        return scn_missing(c, root, "", pn ? "decode" : "prefill",
                           "(a disaggregated deployment declares both pools, prefill and decode)");
    if (pools_refuse(c, root, rn, e))
        return -1;
    e->replicas = 1;
    e->pd.enabled = 1;
    if (load_pool(c, root, "prefill", e, &e->pd.pool[ENG_POOL_PREFILL]) ||
        load_pool(c, root, "decode", e, &e->pd.pool[ENG_POOL_DECODE]) ||
        load_pool_groups(c, root, "prefill", ENG_POOL_PREFILL, e) ||
        load_pool_groups(c, root, "decode", ENG_POOL_DECODE, e))
        return -1;
    if (eng_config_pools(e) > ENG_POOLS_MAX)
        return scn_fail(c, pn, "prefill.replicas",
                        "at most %d pools in all: each group of the prefill and decode pools "
                        "one, a pool of one kind of replica one",
                        ENG_POOLS_MAX);
    if (load_kv_transfer(c, root, e))
        return -1;
    return check_decode_policies(c, dn, e);
}

int scn_load_deployment(scn_lctx *c, const scn_node *root, eng_config *e)
{
    if (load_count(c, root, "", e) || check_layout(c, root, "", e) || load_router(c, root, "", e) ||
        check_context(c, root, e) || load_scheduler(c, root, "", e))
        return -1;
    async_from_scheduler(root, NULL, e);
    return 0;
}
