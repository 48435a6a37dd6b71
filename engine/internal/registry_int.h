/*
 * registry_int.h: the lookup the engine's registries (policies in registry.c, routers in
 * router.c) share: a registry is an array of entries, each with a name.
 */
#ifndef ENG_REGISTRY_INT_H
#define ENG_REGISTRY_INT_H

#include <stddef.h>

/* The name of entry i of the registry all. */
typedef const char *(*eng_registry_name_fn)(const void *all, size_t i);

/* The index of the first of the n entries of all called name, or -1. */
ptrdiff_t eng_registry_index(const void *all, size_t n, eng_registry_name_fn name_at,
                             const char *name);

#endif
