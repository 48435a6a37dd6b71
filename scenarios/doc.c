/*
 * doc.c: the read-only YAML document view of scn_doc.h, over tree.c's tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_doc.h"
#include "scn_int.h"

int scn_doc_read(const char *path, scn_node **root, sim_err *err)
{
    *root = NULL;
    char *buf = scn_read_text(path, err);
    if (!buf)
        return -1;
    int rc = scn_tree_parse(path, buf, strlen(buf), root, err);
    free(buf);
    return rc;
}

void scn_doc_free(scn_node *root)
{
    scn_tree_free(root);
}

const scn_node *scn_doc_get(const scn_node *map, const char *key)
{
    return scn_tree_get(map, key);
}

const scn_node *scn_doc_first(const scn_node *n)
{
    return n && n->kind != SCN_NODE_SCALAR ? n->first : NULL;
}

const scn_node *scn_doc_next(const scn_node *n)
{
    return n ? n->next : NULL;
}

int scn_doc_count(const scn_node *n)
{
    return n && n->kind != SCN_NODE_SCALAR ? n->n : 0;
}

scn_doc_kind scn_doc_type(const scn_node *n)
{
    return n->kind == SCN_NODE_MAP   ? SCN_DOC_MAP
           : n->kind == SCN_NODE_SEQ ? SCN_DOC_SEQ
                                     : SCN_DOC_SCALAR;
}

int scn_doc_line(const scn_node *n)
{
    return n ? n->line : 0;
}

const char *scn_doc_key(const scn_node *n)
{
    return n ? n->key : NULL;
}

const char *scn_doc_text(const scn_node *n)
{
    return n && n->kind == SCN_NODE_SCALAR ? n->text : NULL;
}
