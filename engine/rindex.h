/*
 * rindex.h: a router's index of (block hash, replica) pairs, each replica's pairs in a recency
 * list: what a cache-aware router believes each replica holds (llm-d's prefix indexer, SGLang
 * router's approximate radix tree, Dynamo's active blocks). Routers in router.c use it; a new
 * router may too.
 *
 * Open addressing over node numbers with linear probing, kept at most half full (the table
 * doubles first), and backward-shift deletion, so a lookup ends at an empty slot within a few
 * probes and never runs past the table's size. A pair leaves only when its router erases it:
 * the index never holds a pair no one put there, and a replica's count is its pairs exactly.
 * Memory: one node per pair (40 bytes) and two table slots (16 bytes each, the pair's key beside
 * its node's number: a probe reads the table alone); nothing is allocated per lookup.
 */
#ifndef ENG_RINDEX_H
#define ENG_RINDEX_H

#include <stdint.h>

typedef struct eng_rix_node {
    uint64_t hash;
    int32_t rep;        /* the replica (an index into the router's array); -1: unused */
    int32_t prev, next; /* the replica's recency list: prev toward older, next toward newer */
    int32_t aux;        /* the router's own use (a reference count, ...) */
    int64_t serial;     /* creation order: smaller was added earlier */
} eng_rix_node;

/* A table slot holds its pair's key beside the node's number, so a probe reads the table alone. */
typedef struct eng_rix_slot {
    uint64_t hash;
    int32_t rep;
    uint32_t node; /* node number + 1; 0: empty */
} eng_rix_slot;

typedef struct eng_rix {
    eng_rix_slot *slot;
    uint32_t mask; /* slots - 1 (a power of two) */
    eng_rix_node *node;
    int32_t nnode, capnode; /* nodes ever made (used or on the free list), room */
    int32_t freel;          /* free node list through .next, -1: none */
    int32_t nrep;
    int32_t *old, *young; /* per replica: its least and most recently touched node, -1 */
    int64_t *count;       /* per replica: its pairs */
    int64_t live;         /* pairs in all */
    int64_t serial;
} eng_rix;

/* An empty index for nrep replicas (nrep >= 1). Free with eng_rix_free. */
void eng_rix_init(eng_rix *x, int32_t nrep);
void eng_rix_free(eng_rix *x);
/* The node of (h, rep), or -1; O(1) expected, at most the table's size in probes. */
int32_t eng_rix_find(const eng_rix *x, uint64_t h, int32_t rep);
/* The node of (h, rep), made if absent (*made 1, aux 0) and made the replica's most recent
 * either way. */
int32_t eng_rix_touch(eng_rix *x, uint64_t h, int32_t rep, int *made);
/* eng_rix_touch of (h[j], rep) for j from to - 1 down to from, in that order. */
void eng_rix_touch_path(eng_rix *x, const uint64_t *h, int32_t from, int32_t to, int32_t rep);
/* The node of (h, rep), which must be absent, made (aux 0) and put on rep's recency list just
 * older than node at (a live node of rep). */
int32_t eng_rix_add_beside(eng_rix *x, uint64_t h, int32_t rep, int32_t at);
/* Makes node n (a live node) its replica's most recent. O(1). */
void eng_rix_refresh(eng_rix *x, int32_t n);
/* Removes node n (a live node). */
void eng_rix_erase(eng_rix *x, int32_t n);
/* Replica rep's least recently touched node, or -1 when it has none. */
int32_t eng_rix_oldest(const eng_rix *x, int32_t rep);
/* Walks the whole index: every live node found from its home slot, every list consistent with
 * the counts, the table at most half full. 0 when sound, else -1. O(size). */
int eng_rix_check(const eng_rix *x);

#endif
