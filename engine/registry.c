/*
 * registry.c: the scheduling policies llmsim knows, by name. Adding a policy: one file
 * (sched_<name>.c defining its ops table) and one line here.
 */
#include <stdio.h>
#include <string.h>

#include "registry_int.h"
#include "scheduler.h"

extern const eng_sched_ops eng_sched_static, eng_sched_orca, eng_sched_vllm_v0, eng_sched_chunked,
    eng_sched_tgi, eng_sched_vllm, eng_sched_sglang, eng_sched_trtllm;

static const eng_sched_ops *const registry[] = {
    &eng_sched_static, &eng_sched_orca, &eng_sched_vllm_v0, &eng_sched_chunked,
    &eng_sched_tgi,    &eng_sched_vllm, &eng_sched_sglang,  &eng_sched_trtllm,
};

const eng_sched_ops *const *eng_sched_all(size_t *n)
{
    *n = sizeof registry / sizeof registry[0];
    return registry;
}

ptrdiff_t eng_registry_index(const void *all, size_t n, eng_registry_name_fn name_at,
                             const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name_at(all, i), name) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static const char *sched_name(const void *all, size_t i)
{
    return ((const eng_sched_ops *const *)all)[i]->name;
}

const eng_sched_ops *eng_sched_find(const char *name)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    ptrdiff_t i = eng_registry_index(all, n, sched_name, name);
    return i < 0 ? NULL : all[i];
}

int eng_sched_registry_check(char *buf, size_t len)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    for (size_t i = 0; i < n; i++) {
        const eng_sched_ops *o = all[i];
        if (!o->name || !o->on_arrival || !o->next_batch || !o->on_finish) {
            snprintf(buf, len, "scheduler #%zu (%s) lacks a required op", i,
                     o->name ? o->name : "?");
            return -1;
        }
        if (o->on_run && !o->run_steps) {
            snprintf(buf, len, "scheduler %s declares on_run without run_steps", o->name);
            return -1;
        }
        if (o->abi != ENG_SCHED_ABI) {
            snprintf(buf, len, "scheduler %s has ABI %d, engine has %d", o->name, o->abi,
                     ENG_SCHED_ABI);
            return -1;
        }
        if (eng_registry_index(all, i, sched_name, o->name) >= 0) {
            snprintf(buf, len, "scheduler name %s registered twice", o->name);
            return -1;
        }
    }
    return 0;
}
