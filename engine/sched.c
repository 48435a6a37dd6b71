/*
 * sched.c: scheduler settings: typed parameters declared by each policy, read with defaults.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "keys.h"
#include "scheduler.h"

static const eng_param *param_in(const eng_param *params, const char *key)
{
    for (const eng_param *p = params; p && p->name; p++)
        if (strcmp(p->name, key) == 0)
            return p;
    return NULL;
}

const eng_param *eng_sched_param(const eng_sched_ops *ops, const char *key)
{
    return param_in(ops->params, key);
}

int eng_sched_param_known(const char *key)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    for (size_t i = 0; i < n; i++)
        if (eng_sched_param(all[i], key))
            return 1;
    return 0;
}

static int parse_number(const char *s, int integer, double *out)
{
    char *end;
    errno = 0;
    if (integer) {
        long long v = strtoll(s, &end, 10);
        *out = (double)v;
    } else {
        *out = strtod(s, &end);
    }
    return (errno == 0 && end != s && *end == '\0') ? 0 : -1;
}

int eng_param_validate(const eng_param *p, const char *val, char *buf, size_t len)
{
    double v;
    switch (p->type) {
    case ENG_PARAM_BOOL:
        if (eng_key_bool(val) >= 0)
            return 0;
        snprintf(buf, len, "expected true or false, got '%s'", val);
        return -1;
    case ENG_PARAM_ENUM:
        if (eng_key_choice(p->choices, val) >= 0)
            return 0;
        snprintf(buf, len, "expected one of %s, got '%s'", p->choices, val);
        return -1;
    case ENG_PARAM_INT:
    case ENG_PARAM_DOUBLE:
        if (parse_number(val, p->type == ENG_PARAM_INT, &v) < 0) {
            snprintf(buf, len, "expected %s, got '%s'",
                     p->type == ENG_PARAM_INT ? "an integer" : "a number", val);
            return -1;
        }
        if (v < p->min || v > p->max) {
            snprintf(buf, len, "expected a value in [%g, %g], got %s", p->min, p->max, val);
            return -1;
        }
        return 0;
    }
    snprintf(buf, len, "unknown parameter type");
    return -1;
}

const char *eng_cfg_get(const eng_sched_cfg *cfg, const char *key)
{
    for (int i = 0; i < cfg->n; i++)
        if (strcmp(cfg->kv[i].key, key) == 0)
            return cfg->kv[i].val;
    return NULL;
}

int eng_cfg_set(eng_sched_cfg *cfg, const char *key, const char *val)
{
    for (int i = 0; i < cfg->n; i++)
        if (strcmp(cfg->kv[i].key, key) == 0) {
            snprintf(cfg->kv[i].val, sizeof cfg->kv[i].val, "%s", val);
            return 0;
        }
    if (cfg->n == ENG_SCHED_MAX_PARAMS)
        return -1;
    snprintf(cfg->kv[cfg->n].key, sizeof cfg->kv[cfg->n].key, "%s", key);
    snprintf(cfg->kv[cfg->n].val, sizeof cfg->kv[cfg->n].val, "%s", val);
    cfg->n++;
    return 0;
}

/* The name of the policy that declares params, for messages. */
static const char *owner(const eng_param *params)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    for (size_t i = 0; i < n; i++)
        if (all[i]->params == params)
            return all[i]->name;
    return "?";
}

/* The value a policy sees: the scenario's if given, else the declared default. A key the policy
 * does not declare is a programming error in the policy. */
static const char *value_of(const eng_sched_cfg *cfg, const eng_param *params, const char *key)
{
    const eng_param *p = param_in(params, key);
    if (!p) {
        fprintf(stderr, "llmsim: policy '%s' reads undeclared parameter '%s'\n", owner(params),
                key);
        abort();
    }
    const char *v = cfg ? eng_cfg_get(cfg, key) : NULL;
    return v ? v : p->def;
}

int64_t eng_cfg_int(const eng_sched_cfg *cfg, const eng_param *params, const char *key)
{
    const char *v = value_of(cfg, params, key);
    if (param_in(params, key)->type == ENG_PARAM_BOOL)
        return eng_key_bool(v) == 1;
    return strtoll(v, NULL, 10);
}

double eng_cfg_double(const eng_sched_cfg *cfg, const eng_param *params, const char *key)
{
    return strtod(value_of(cfg, params, key), NULL);
}

const char *eng_cfg_str(const eng_sched_cfg *cfg, const eng_param *params, const char *key)
{
    return value_of(cfg, params, key);
}

int64_t eng_sched_runs_unbounded(const void *st, const eng_replica *r)
{
    return INT64_MAX;
}

/* Stores row p's value v at its field in st. */
static void store_param(const eng_param *p, void *st, const char *v)
{
    char *at = (char *)st + p->off;
    switch (p->type) {
    case ENG_PARAM_INT:
        assert(p->size == sizeof(int64_t) || p->size == sizeof(int32_t));
        if (p->size == sizeof(int64_t))
            *(int64_t *)at = strtoll(v, NULL, 10);
        else
            *(int32_t *)at = (int32_t)strtoll(v, NULL, 10);
        return;
    case ENG_PARAM_DOUBLE:
        assert(p->size == sizeof(double));
        *(double *)at = strtod(v, NULL);
        return;
    case ENG_PARAM_BOOL:
        assert(p->size == sizeof(int));
        *(int *)at = eng_key_bool(v) == 1;
        return;
    case ENG_PARAM_ENUM:
        assert(p->size == sizeof(int));
        *(int *)at = eng_key_choice(p->choices, v);
        return;
    }
    assert(!"unknown parameter type");
}

void eng_cfg_load(const eng_sched_cfg *cfg, const eng_param *params, void *st)
{
    for (const eng_param *p = params; p && p->name; p++)
        if (p->size > 0)
            store_param(p, st, value_of(cfg, params, p->name));
}

int64_t eng_cfg_watermark_blocks(const eng_sched_cfg *cfg, const eng_param *params,
                                 const eng_replica *r)
{
    /* MODEL: vLLM v0 BlockSpaceManager: watermark_blocks = watermark x num_gpu_blocks */
    return (int64_t)(eng_cfg_double(cfg, params, "watermark") * eng_kv_total(r));
}

int eng_sched_start(const eng_sched_ops *ops, void *st, const eng_sched_cfg *cfg, eng_replica *r)
{
    eng_cfg_load(cfg, ops->params, st);
    return ops->init ? ops->init(st, cfg, r) : 0;
}
