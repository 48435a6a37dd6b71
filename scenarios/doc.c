/*
 * doc.c: the read-only YAML document view of scn_doc.h, over tree.c's tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_doc.h"
#include "scn_int.h"

int scn_doc_read(const char *path, scn_node **root, sim_err *err)
{
    *root = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_errf(err, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0, got;
    char *buf = sim_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap)
            buf = sim_xrealloc(buf, cap *= 2);
    int bad = ferror(f);
    fclose(f);
    buf[n] = '\0';
    int rc = -1;
    if (bad || memchr(buf, '\0', n))
        sim_errf(err, "%s: cannot read (I/O error or binary file)", path);
    else
        rc = scn_tree_parse(path, buf, n, root, err);
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
