/*
 * faults.c: `faults: [{at_s, replica, kind, duration_s, factor}, ...]`: the faults a run injects
 * into its replicas (engine/fault.c models them), each read through its settings table.
 */
#include <stdio.h>
#include <string.h>

#include "scn_int.h"

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
    for (const scn_node *n = list->first; n; n = n->next) {
        char ip[32];
        eng_fault *f = &fc->f[fc->n];
        snprintf(ip, sizeof ip, "faults[%d]", fc->n);
        if (n->kind != SCN_NODE_MAP)
            return scn_fail(c, n, ip, "expected a map {at_s: s, replica: N, kind: crash|slow}");
        memset(f, 0, sizeof *f);
        eng_keys_defaults(eng_fault_keys, f);
        if (scn_read_map(c, n, ip, eng_fault_keys, f, NULL))
            return -1;
        fc->n++;
    }
    return 0;
}
