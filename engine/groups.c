/*
 * groups.c: a mixed pool: `replicas: [{gpu, count, tensor_parallel, ...}, ...]`, groups of
 * replicas that differ in GPU or layout behind one router. Each group is a pool of the engine
 * (its own configuration, cost model, KV plan and policy state, and its own GPUs priced in the
 * fleet's cost and energy), and the first group's router routes over every group's replicas,
 * which lie one group after another in the engine's replica array. A disaggregated
 * deployment's prefill or decode pool may be such a list too (`decode: {replicas: [...]}`):
 * its groups lie after one another likewise, behind that pool's router.
 *
 * Routers see a replica's capacity (eng_replica_capacity): its group's weight, given in the
 * scenario or priced here by the group's own cost model, relative to the first group's.
 */
#include <math.h>
#include <stdio.h>

#include "engine_int.h"

/* A group starts from the deployment's settings; its keys replace them (`replicas` and the
 * router are the deployment's: refused in a group by the scenario loader). */
const eng_key eng_group_keys[] = {
    {"gpu", ENG_KEY_STR, ENG_KEY_CODE, 0, 0, "", "(the deployment's)", NULL,
     "the group's GPU (llmsim list gpus)", .size = 32},
    {"count", ENG_KEY_INT, ENG_KEY_REQUIRED, 1, 1 << 20, "", NULL, NULL, "replicas in the group",
     ENG_KEY_AT(eng_config, replicas)},
    {"weight", ENG_KEY_NUM, ENG_KEY_CODE | ENG_KEY_LO_OPEN, 0, INFINITY, "",
     "(priced by the group's cost model)", NULL,
     "a replica's capacity as routers weigh it, against the other groups' (any unit: only "
     "ratios matter)",
     ENG_KEY_NOWHERE},
    {"", ENG_KEY_INCLUDE, 0, 0, 0, "", NULL, NULL, "", ENG_KEY_NOWHERE, .sub = eng_deploy_keys},
    ENG_KEY_END};

/* Weights given for some of n groups from w on only: refused naming the list at `what`. */
static int check_weights(const double *w, int n, const char *what, sim_err *err)
{
    int given = 0;
    for (int k = 0; k < n; k++)
        given += w[k] > 0;
    if (given > 0 && given < n)
        return sim_errf(err,
                        "%s: weight given for %d of %d groups: give every group's or none "
                        "(priced by each group's cost model)",
                        what, given, n);
    return 0;
}

/* A disaggregated deployment whose prefill or decode pool is a list of groups. */
static int check_pd(const eng_config *c, sim_err *err)
{
    const int32_t *ng = c->pd.ngroups;
    if (ng[0] == 0 && ng[1] == 0)
        return 0;
    if (eng_config_pools(c) > ENG_POOLS_MAX)
        return sim_errf(err,
                        "prefill.replicas, decode.replicas: at most %d pools in all (each group "
                        "one, a pool of one kind of replica one)",
                        ENG_POOLS_MAX);
    const char *what = c->fleet.autoscale.enabled ? "autoscale"
                       : c->offload.ntiers > 0    ? "kv_offload"
                                                  : NULL;
    if (what)
        return sim_errf(err,
                        "a prefill or decode pool of groups (replicas: [...]) with %s is not "
                        "modelled yet",
                        what);
    return check_weights(c->groups.weight, ng[0], "prefill.replicas", err) ||
                   check_weights(c->groups.weight + ng[0], ng[1], "decode.replicas", err)
               ? -1
               : 0;
}

int eng_groups_check(const eng_config *c, sim_err *err)
{
    if (c->pd.enabled)
        return check_pd(c, err);
    if (c->groups.n == 0)
        return 0;
    if (c->groups.n > ENG_MAX_GROUPS)
        return sim_errf(err, "replicas: at most %d groups", ENG_MAX_GROUPS);
    const char *what = c->spec.method != ENG_SPEC_NONE ? "speculative decoding"
                       : c->fleet.autoscale.enabled    ? "autoscale"
                       : c->offload.ntiers > 0         ? "kv_offload"
                                                       : NULL;
    if (check_weights(c->groups.weight, c->groups.n, "replicas", err) != 0)
        return -1;
    if (what)
        return sim_errf(err,
                        "replicas: a mixed pool (a list of groups) with %s is not modelled "
                        "yet",
                        what);
    return 0;
}

/* MODEL: the reference iteration a group's capacity is priced on (an approximation of ours,
 * not a measurement: a replica's throughput depends on the workload): one prefill chunk of
 * 2048 tokens (vLLM V1's default max_num_batched_tokens for online serving) beside 32 decoding
 * sequences at 2048 tokens of context. A prefill pool's groups are priced on the chunk alone, a
 * decode pool's on the decoding sequences alone: the work each does. */
enum { REF_CHUNK = 2048, REF_SEQS = 32, REF_CTX = 2048 };

/* Tokens per ns of the reference iteration on pool p's replicas: its cost model's forward pass
 * and its CPU overhead (overlapped when async). */
static double priced(const eng_engine *e, const eng_pool *p)
{
    int32_t chunked, cap = eng_shape_cap(&p->cfg.model, &chunked);
    int64_t ctx = REF_CTX < e->max_len ? REF_CTX : e->max_len;
    int64_t capped = cap <= 0 ? ctx : chunked ? ctx % (cap + 1) : (ctx < cap ? ctx : cap);
    int32_t chunk = p->role == ENG_ROLE_DECODE ? 0 : REF_CHUNK,
            seqs = p->role == ENG_ROLE_PREFILL ? 0 : REF_SEQS;
    eng_shape s = {0};
    eng_shape_set_cap(&s, cap, chunked);
    if (chunk)
        eng_shape_add_prefill_capped(&s, chunk, 0);
    if (seqs)
        eng_shape_add_decodes_capped(&s, seqs, seqs * ctx, seqs * capped);
    s.emit_seqs = seqs + (chunk > 0);
    double gpu = (double)p->pred->ops->iteration_ns(p->pred->st, &s);
    double cpu = (p->cfg.cpu.per_iteration_us + p->cfg.cpu.per_seq_us * s.num_seqs) * 1e3;
    double t = p->cfg.cpu.async ? fmax(gpu, cpu) : gpu + cpu;
    return (double)(chunk + seqs) / t;
}

void eng_groups_weigh(eng_engine *e)
{
    double w[ENG_POOLS_MAX];
    for (int k = 0; k < e->npools; k++) {
        int g = eng_config_group(&e->cfg, k); /* -1: a pool of one kind of replica, weight 1 */
        w[k] = g < 0                         ? 1
               : e->cfg.groups.weight[g] > 0 ? e->cfg.groups.weight[g]
                                             : priced(e, &e->pools[k]);
    }
    for (int k = 0; k < e->npools; k++)
        e->pools[k].weight = w[k] / w[e->pools[k].route - e->pools];
}
