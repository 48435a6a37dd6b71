/*
 * offload.c: `kv_offload: {tiers: [{kind, capacity_gb, bandwidth_gb_s, latency_us}, ...],
 * policy, min_load_tokens}`: the KV offload tiers behind each replica's GPU cache
 * (engine/offload.c models them), read through their settings tables.
 */
#include <stdio.h>
#include <string.h>

#include "scn_int.h"

/* Tier i of the list, at node n (path ip), into tc; 0 or -1. */
static int load_tier(scn_lctx *c, const scn_node *n, const char *ip, const eng_gpu *gpu,
                     unsigned *seen, eng_tier_config *tc)
{
    eng_key_val v;
    if (n->kind != SCN_NODE_MAP)
        return scn_fail(c, n, ip, "expected a map {kind: cpu|ssd|remote, capacity_gb: GB, ...}");
    eng_keys_defaults(eng_tier_keys, tc);
    if (scn_read_map(c, n, ip, eng_tier_keys, tc, NULL))
        return -1;
    if (*seen & (1u << tc->kind))
        return scn_fail(c, n, ip, "a second %s tier: each kind appears once",
                        eng_tier_kind_name(tc->kind));
    *seen |= 1u << tc->kind;
    if (scn_tree_get(n, "bandwidth_gb_s")) {
        if (scn_get(c, n, ip, eng_tier_keys, "bandwidth_gb_s", &v) < 0)
            return -1;
        tc->bandwidth_gb_s = v.num;
    } else if (tc->kind != ENG_TIER_CPU) {
        return scn_missing(c, n, ip, "bandwidth_gb_s",
                           "(GB/s per GPU, each way: a disk or a remote store has no catalog "
                           "figure)");
    } else if (gpu->pcie_bw <= 0) {
        return scn_missing(c, n, ip, "bandwidth_gb_s",
                           "(the GPU catalog gives no host link for this GPU)");
    }
    return 0;
}

int scn_load_offload(scn_lctx *c, const scn_node *root, eng_config *e)
{
    const scn_node *m, *tiers;
    memset(&e->offload, 0, sizeof e->offload);
    if (scn_get_map(c, root, "", "kv_offload", &m) || !m)
        return m ? -1 : 0;
    eng_keys_defaults(eng_offload_keys, &e->offload);
    if (scn_read_map(c, m, "kv_offload", eng_offload_keys, &e->offload, NULL))
        return -1;
    if (e->pd.enabled)
        return scn_fail(c, m, "kv_offload",
                        "offload tiers with prefill and decode pools are not modelled yet");
    tiers = scn_tree_get(m, "tiers");
    if (tiers->kind != SCN_NODE_SEQ || tiers->n < 1 || tiers->n > ENG_MAX_TIERS)
        return scn_fail(c, tiers, "kv_offload.tiers",
                        "expected a list of 1 to %d {kind, capacity_gb, bandwidth_gb_s} maps, "
                        "fastest first",
                        ENG_MAX_TIERS);
    unsigned seen = 0;
    int i = 0;
    for (const scn_node *t = tiers->first; t; t = t->next, i++) {
        char ip[64];
        snprintf(ip, sizeof ip, "kv_offload.tiers[%d]", i);
        if (load_tier(c, t, ip, &e->gpu, &seen, &e->offload.tier[i]))
            return -1;
    }
    e->offload.ntiers = i;
    return 0;
}
