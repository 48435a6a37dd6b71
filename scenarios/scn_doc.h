/*
 * scn_doc.h: YAML documents other than scenarios (validation sets), read with the scenario
 * reader: a tree of maps, sequences and scalars in which every node knows its line, so a
 * caller's messages can name the file, the line and the key, as scenario errors do.
 *
 * The tree is read-only here; anchors, aliases and duplicate keys are refused as in scenarios.
 * The root owns every node; scn_doc_free releases it.
 */
#ifndef SCN_DOC_H
#define SCN_DOC_H

#include <stddef.h>

#include "sim.h"

typedef struct scn_node scn_node;

typedef enum scn_doc_kind { SCN_DOC_MAP = 0, SCN_DOC_SEQ, SCN_DOC_SCALAR } scn_doc_kind;

/* Reads the YAML file at path (one document whose root is a map; an empty file is an empty
 * map) into *root. 0, or -1 with err naming path and the line at fault. Free with
 * scn_doc_free (*root is NULL after a failure). */
int scn_doc_read(const char *path, scn_node **root, sim_err *err);
void scn_doc_free(scn_node *root);

/* The child of map named key; NULL when absent or when map is not a map. */
const scn_node *scn_doc_get(const scn_node *map, const char *key);
/* Children in document order: the first, and the one after n (NULL at the end). */
const scn_node *scn_doc_first(const scn_node *n);
const scn_node *scn_doc_next(const scn_node *n);
int scn_doc_count(const scn_node *n);

scn_doc_kind scn_doc_type(const scn_node *n);
int scn_doc_line(const scn_node *n); /* 1-based */
/* The node's key in its parent map (NULL in a sequence), and a scalar's text (NULL for a map or
 * a sequence; "" for an empty value). */
const char *scn_doc_key(const scn_node *n);
const char *scn_doc_text(const scn_node *n);

#endif
