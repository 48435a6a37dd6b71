/*
 * speculative.c: the `speculative:` section, read by engine/config.c's tables (eng_spec_keys,
 * eng_acceptance_keys) through load.c's interpreter, with the checks the rows cannot make: the
 * drafter each method runs (resolved and checked against the target model), the scheduler it
 * runs under, and the acceptance (a measured curve, a mean length or a per-position rate, one
 * of the three).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_int.h"

/* The acceptance length from the measured curve `curve` for sp->k drafts. */
static int load_curve(scn_lctx *c, const scn_node *a, const char *pre, const char *curve,
                      const char *thinking, eng_spec *sp, const char *dir)
{
    char path[1024], why[1024] = "", model[128];
    const scn_node *cn = scn_tree_get(a, "curve");
    scn_kpath cp = scn_kp(pre, "curve");
    sim_err e2;
    if (!c->res || !c->res->curve)
        return scn_fail(c, cn, cp.s, "no curve folder was given to find '%s'", curve);
    if (c->res->curve(c->res->st, curve, dir, path, sizeof path, why, sizeof why))
        return scn_fail(c, cn, cp.s, "%s", why);
    if (scn_curve_length(path, thinking, sp->k, &sp->al, model, sizeof model, &e2))
        return scn_fail(c, cn, cp.s, "%s", e2.msg);
    scn_note(c, NULL,
             "speculative: acceptance length %.2f for %d draft tokens, measured on %s (%s)", sp->al,
             sp->k, model, curve);
    return 0;
}

/* The keys of an acceptance map, as given. */
typedef struct acceptance {
    eng_key_val curve, think, len, rate, dist;
} acceptance;

/* Reads them (checked by their rows); one of curve, length and rate, thinking only with a
 * curve. */
static int read_acceptance(scn_lctx *c, const scn_node *a, const char *pre, eng_spec *sp,
                           acceptance *v)
{
    const eng_key *keys = eng_acceptance_keys;
    if (scn_read_map(c, a, pre, keys, sp, NULL) ||
        scn_get(c, a, pre, keys, "curve", &v->curve) < 0 ||
        scn_get(c, a, pre, keys, "thinking", &v->think) < 0 ||
        scn_get(c, a, pre, keys, "length", &v->len) < 0 ||
        scn_get(c, a, pre, keys, "rate", &v->rate) < 0 ||
        scn_get(c, a, pre, keys, "distribution", &v->dist) < 0)
        return -1;
    if (v->curve.s && !*v->curve.s)
        v->curve.s = NULL; /* an empty curve names none */
    int given = (v->curve.s != NULL) + (v->len.num >= 0) + (v->rate.num >= 0);
    if (given != 1)
        return scn_fail(c, a, pre, "give one of curve, length or rate (%d given)", given);
    if (v->think.num >= 0 && !v->curve.s)
        return scn_fail(c, scn_tree_get(a, "thinking"), scn_kp(pre, "thinking").s,
                        "only a curve has thinking series");
    return 0;
}

/* acceptance.length (of map a) as sp's mean acceptance length: 1 to k + 1. */
static int given_length(scn_lctx *c, const scn_node *a, double len, eng_spec *sp)
{
    int32_t k = sp->k;
    if (len < 1 || len > k + 1)
        return scn_fail(c, scn_tree_get(a, "length"), "speculative.acceptance.length",
                        "%g: a mean acceptance length is 1 (nothing accepted) to %d (all %d "
                        "drafts accepted)",
                        len, k + 1, k);
    sp->al = len;
    return 0;
}

/* How acceptance is drawn: as given, else independent per position for a rate and the least
 * variance for a length; an independent draw from a length gets the rate that gives it. */
static void pick_dist(eng_spec *sp, const acceptance *v)
{
    sp->dist = v->dist.num >= 0   ? (eng_spec_dist)v->dist.num
               : v->rate.num >= 0 ? ENG_SPEC_IID
                                  : ENG_SPEC_MIN_VARIANCE;
    if (sp->dist == ENG_SPEC_IID && v->rate.num < 0)
        sp->rate = eng_spec_rate_of_length(sp->al, sp->k);
}

/* speculative.acceptance: a measured curve (with the thinking series), a mean length or a
 * per-position rate; how it is drawn; the classes. */
static int load_acceptance(scn_lctx *c, const scn_node *sp_node, eng_spec *sp, const char *dir)
{
    const char *pre = "speculative.acceptance";
    const scn_node *a;
    acceptance v = {.think.num = -1, .len.num = -1, .rate.num = -1, .dist.num = -1};
    if (scn_get_map(c, sp_node, "speculative", "acceptance", &a))
        return -1;
    if (!a)
        return scn_missing(c, sp_node, "speculative", "acceptance",
                           "({curve: NAME, thinking: on|off}, {length: AL} or {rate: R})");
    if (read_acceptance(c, a, pre, sp, &v))
        return -1;
    if (v.curve.s) {
        if (load_curve(c, a, pre, v.curve.s, v.think.num >= 0 ? v.think.s : NULL, sp, dir))
            return -1;
    } else if (v.len.num >= 0) {
        if (given_length(c, a, v.len.num, sp))
            return -1;
    } else {
        sp->rate = v.rate.num;
        sp->al = eng_spec_length_of_rate(v.rate.num, sp->k);
    }
    pick_dist(sp, &v);
    return 0;
}

/* The draft model named at node dn, resolved by the scenario's model catalog into sp. */
static int resolve_draft(scn_lctx *c, const scn_node *dn, const char *name, const char *dir,
                         eng_spec *sp)
{
    char why[1024] = "";
    if (!c->res || !c->res->model)
        return scn_fail(c, dn, "speculative.draft_model", "no model catalog to resolve '%s'", name);
    if (c->res->model(c->res->st, name, dir, &sp->draft, why, sizeof why))
        return scn_fail(c, dn, "speculative.draft_model", "%s", *why ? why : "unknown model");
    sp->has_draft = 1;
    return 0;
}

/* draft_model (node dn) only for the methods that run one, mtp_layers (mn) only for mtp. */
static int check_drafter_keys(scn_lctx *c, const scn_node *dn, const scn_node *mn,
                              eng_spec_method method)
{
    if (dn && method != ENG_SPEC_DRAFT && method != ENG_SPEC_EAGLE && method != ENG_SPEC_EAGLE3)
        return scn_fail(c, dn, "speculative.draft_model", "method %s runs no draft model",
                        eng_spec_method_name(method));
    if (mn && method != ENG_SPEC_MTP)
        return scn_fail(c, mn, "speculative.mtp_layers", "only method mtp has MTP layers");
    return 0;
}

/* The drafter: a draft model (or head) resolved by name, checked against the method and the
 * target by eng_spec_drafter. */
static int load_drafter(scn_lctx *c, const scn_node *m, eng_config *e, const char *dir)
{
    eng_spec *sp = &e->spec;
    eng_key_val draft = {0}, mtp = {.i = 1};
    char why[1024] = "";
    const scn_node *dn = scn_tree_get(m, "draft_model"), *mn = scn_tree_get(m, "mtp_layers");
    if (scn_get(c, m, "speculative", eng_spec_keys, "draft_model", &draft) < 0 ||
        scn_get(c, m, "speculative", eng_spec_keys, "mtp_layers", &mtp) < 0)
        return -1;
    if (!draft.s || !*draft.s)
        dn = NULL; /* an empty draft_model names none */
    if (check_drafter_keys(c, dn, mn, sp->method))
        return -1;
    if (dn && resolve_draft(c, dn, draft.s, dir, sp))
        return -1;
    if (eng_spec_drafter(sp, &e->model, (int32_t)mtp.i, why, sizeof why))
        return scn_fail(c, dn ? dn : scn_tree_get(m, "method"),
                        dn ? "speculative.draft_model" : "speculative.method", "%s", why);
    if (sp->method == ENG_SPEC_MTP && !mn)
        scn_note(c, NULL,
                 "speculative: %d MTP layer assumed (speculative.mtp_layers; DeepSeek-V3, "
                 "GLM and Qwen3.5 ship one)",
                 (int)mtp.i);
    return 0;
}

/* vLLM's multi-step scheduling (num_scheduler_steps > 1) does not speculate. */
static int check_multi_step(scn_lctx *c, const scn_node *m, const eng_sched_cfg *sched)
{
    const char *steps = eng_cfg_get(sched, "num_scheduler_steps");
    if (steps && atoi(steps) > 1)
        return scn_fail(c, m, "speculative",
                        "scheduler %s with num_scheduler_steps %s: vLLM's multi-step scheduling "
                        "does not support speculative decoding",
                        sched->name, steps);
    return 0;
}

int scn_load_spec(scn_lctx *c, const scn_node *root, eng_config *e)
{
    const scn_node *m;
    eng_spec *sp = &e->spec;
    char dir[512];
    if (scn_get_map(c, root, "", "speculative", &m))
        return -1;
    if (!m)
        return 0;
    eng_keys_defaults(eng_acceptance_keys, sp);
    if (scn_read_map(c, m, "speculative", eng_spec_keys, sp, NULL))
        return -1;
    if (sp->k == 0) { /* off: a sweep's baseline */
        memset(sp, 0, sizeof *sp);
        return 0;
    }
    scn_base_dir(c->file, dir, sizeof dir);
    if (load_drafter(c, m, e, dir))
        return -1;
    if (sp->method == ENG_SPEC_NGRAM)
        scn_note(c, NULL, "speculative: n-gram drafting runs on the CPU; its time is not modelled");
    if (check_multi_step(c, m, &e->sched))
        return -1;
    return load_acceptance(c, m, sp, dir);
}
