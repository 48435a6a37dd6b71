/*
 * otier.h: one KV offload tier's store on its own (offload.c keeps a replica's tiers; the
 * engine makes them from kv_offload). A tier holds blocks by content hash in an open-addressing
 * table of 8-byte slots, a 32-bit tag of the hash (eng_otier_tag) beside the node's number; the
 * node keeps the whole hash and a lookup confirms against it, so two hashes with one tag are
 * two blocks. Its blocks are in a recency list, the least recently used first.
 */
#ifndef ENG_OTIER_H
#define ENG_OTIER_H

#include <stdint.h>

typedef struct eng_otier eng_otier;

/* An empty host-memory tier of cap blocks (cap >= 1). Free with eng_otier_free. */
eng_otier *eng_otier_new(int64_t cap);
void eng_otier_free(eng_otier *t);
/* The 32-bit tag the table keeps for hash h (its home slot's bits and a filter). */
uint32_t eng_otier_tag(uint64_t h);
/* The node holding the block of hash h, or -1. */
int32_t eng_otier_find(const eng_otier *t, uint64_t h);
/* Adds the block of hash h (absent; the tier below its capacity) as the most recently used;
 * returns its node. */
int32_t eng_otier_add(eng_otier *t, uint64_t h);
/* The tier's least recently used node (the one it evicts next), or -1 when it is empty. */
int32_t eng_otier_oldest(const eng_otier *t);
/* Removes node i (a live node), as an eviction does. */
void eng_otier_remove(eng_otier *t, int32_t i);
/* The blocks the tier holds. */
int64_t eng_otier_count(const eng_otier *t);

#endif
