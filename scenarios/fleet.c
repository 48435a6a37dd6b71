/*
 * fleet.c: the fleet's lists: `faults: [{at_s, replica, kind, duration_s, factor}, ...]`, the
 * faults a run injects into its replicas (engine/fault.c models them), and the autoscaler's
 * rate policies, `autoscale.behavior.scale_up.policies: [{type, value, period_s}, ...]` and
 * scale_down's (engine/autoscale.c), each entry read through its settings table; and the
 * autoscale map of a prefill or decode pool (prefill.autoscale, decode.autoscale).
 */
#include <stdio.h>
#include <string.h>

#include "scn_int.h"

/* List item n as fault fc->n (its defaults, then its keys). 0, or -1 naming faults[i]. */
static int read_fault(scn_lctx *c, const scn_node *n, eng_faults_cfg *fc)
{
    char ip[32];
    eng_fault *f = &fc->f[fc->n];
    snprintf(ip, sizeof ip, "faults[%d]", fc->n);
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, ip, "expected a map {at_s: s, replica: N, kind: crash|slow}");
    memset(f, 0, sizeof *f);
    eng_keys_defaults(eng_fault_keys, f);
    return scn_read_map(c, n, ip, eng_fault_keys, f, NULL);
}

int scn_load_faults(scn_lctx *c, const scn_node *root, eng_config *e)
{
    eng_faults_cfg *fc = &e->fleet.faults;
    const scn_node *list = scn_tree_get(root, "faults");
    fc->n = 0;
    if (!list)
        return 0;
    if (list->kind != SCN_NODE_SEQ || list->n > ENG_MAX_FAULTS)
        return scn_fail(c, list, "faults",
                        "expected a list of at most %d {at_s, replica, kind: crash|slow, "
                        "duration_s, factor} maps",
                        ENG_MAX_FAULTS);
    for (const scn_node *n = list->first; n; n = n->next, fc->n++)
        if (read_fault(c, n, fc))
            return -1;
    return 0;
}

/* List item n of path as policy ru->n. 0, or -1 naming path[i]. */
static int read_policy(scn_lctx *c, const scn_node *n, const char *path, eng_as_rules *ru)
{
    char ip[80];
    snprintf(ip, sizeof ip, "%s[%d]", path, ru->n);
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, ip, "expected a map {type: pods|percent, value, period_s}");
    memset(&ru->p[ru->n], 0, sizeof ru->p[ru->n]);
    return scn_read_map(c, n, ip, eng_as_policy_keys, &ru->p[ru->n], NULL);
}

/* The policies list of autoscale.behavior.<dir> into ru (none: no limit); 0 or -1. */
static int load_policies(scn_lctx *c, const scn_node *beh, const char *dir, eng_as_rules *ru)
{
    const scn_node *m = scn_tree_get(beh, dir), *list = m ? scn_tree_get(m, "policies") : NULL;
    char path[64];
    ru->n = 0;
    if (!list)
        return 0;
    snprintf(path, sizeof path, "autoscale.behavior.%s.policies", dir);
    if (list->kind != SCN_NODE_SEQ || list->n < 1 || list->n > ENG_AS_MAX_POLICIES)
        return scn_fail(c, list, path,
                        "expected a list of 1 to %d {type: pods|percent, value, period_s} maps",
                        ENG_AS_MAX_POLICIES);
    for (const scn_node *n = list->first; n; n = n->next, ru->n++)
        if (read_policy(c, n, path, ru))
            return -1;
    return 0;
}

/* prefill.autoscale and decode.autoscale: each pool's planner settings over the defaults of
 * its pool (eng_fleet_defaults); 0 or -1. */
static int load_pool_autoscale(scn_lctx *c, const scn_node *root, eng_config *e)
{
    static const char *const pool[2] = {"prefill", "decode"};
    for (int k = 0; k < 2; k++) {
        const scn_node *m = scn_tree_get(root, pool[k]), *as;
        char pre[32];
        snprintf(pre, sizeof pre, "%s.autoscale", pool[k]);
        if (!m || m->kind != SCN_NODE_MAP)
            continue;
        if (scn_get_map(c, m, pool[k], "autoscale", &as))
            return -1;
        if (as &&
            scn_read_map(c, as, pre, eng_pool_autoscale_keys, &e->fleet.pool_autoscale[k], NULL))
            return -1;
    }
    return 0;
}

int scn_load_behavior(scn_lctx *c, const scn_node *root, eng_config *e)
{
    if (load_pool_autoscale(c, root, e))
        return -1;
    const scn_node *as = scn_tree_get(root, "autoscale");
    const scn_node *beh = as && as->kind == SCN_NODE_MAP ? scn_tree_get(as, "behavior") : NULL;
    eng_as_behavior *b = &e->fleet.autoscale.behavior;
    b->up.n = b->down.n = 0;
    if (!beh || beh->kind != SCN_NODE_MAP)
        return 0;
    return load_policies(c, beh, "scale_up", &b->up) ||
                   load_policies(c, beh, "scale_down", &b->down)
               ? -1
               : 0;
}
