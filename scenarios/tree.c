/*
 * tree.c: scenario YAML as a small tree of maps, sequences and scalars, each with its line.
 *
 * libyaml's event parser builds the tree; `--set` overrides edit it; libyaml's emitter writes it
 * back as the text stored with a run. Every node owns its key, its text and its children; the
 * root owns the whole tree (scn_tree_free). Scalars keep their text as written: the loader
 * decides what a value means, so a quoted "5" and a plain 5 read the same.
 *
 * Limits (a scenario is a small file): a tree is at most SCN_MAX_DEPTH levels deep, counting
 * the root map and the scalars (the builder, the walkers and the emitter recurse once per
 * level, so the limit also bounds their stack), and its emitted text is at most
 * SCN_MAX_EMITTED bytes (block style indents every line by its depth, so a deep tree written
 * in a few bytes of flow style would otherwise come back many times larger).
 */
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "scn_int.h"

static scn_node *node_new(scn_node_kind kind, int line)
{
    scn_node *n = sim_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->line = line;
    return n;
}

void scn_tree_free(scn_node *n)
{
    while (n) {
        scn_node *next = n->next;
        scn_tree_free(n->first);
        SIM_FREE_ALL(n->key, n->text, n);
        n = next;
    }
}

static void append(scn_node *parent, scn_node *child)
{
    if (parent->last)
        parent->last->next = child;
    else
        parent->first = child;
    parent->last = child;
    parent->n++;
}

scn_node *scn_tree_get(const scn_node *map, const char *key)
{
    if (!map || map->kind != SCN_NODE_MAP)
        return NULL;
    for (scn_node *c = map->first; c; c = c->next)
        if (strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

/* ---- parsing ---- */

typedef struct parse_ctx {
    yaml_parser_t p;
    const char *name;
    sim_err *err;
    int max_depth; /* levels the document may use (the root is level 1) */
} parse_ctx;

static int parse_fail(parse_ctx *c)
{
    const char *what = c->p.problem ? c->p.problem : "malformed YAML";
    size_t line = c->p.problem_mark.line + 1;
    if (c->p.context)
        return sim_errf(c->err, "%s:%zu: %s %s", c->name, line, c->p.context, what);
    return sim_errf(c->err, "%s:%zu: %s", c->name, line, what);
}

static int next_event(parse_ctx *c, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&c->p, ev))
        return parse_fail(c);
    return 0;
}

static int build(parse_ctx *c, yaml_event_t *ev, int depth, scn_node **out);

static int build_map(parse_ctx *c, scn_node *map, int depth)
{
    for (;;) {
        yaml_event_t kev, vev;
        if (next_event(c, &kev))
            return -1;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            return 0;
        }
        int line = (int)kev.start_mark.line + 1;
        if (kev.type != YAML_SCALAR_EVENT) {
            yaml_event_delete(&kev);
            return sim_errf(c->err, "%s:%d: a map key must be a plain word", c->name, line);
        }
        char *key = sim_xstrdup((const char *)kev.data.scalar.value);
        yaml_event_delete(&kev);
        if (scn_tree_get(map, key)) {
            sim_errf(c->err, "%s:%d: duplicate key '%s'", c->name, line, key);
            free(key);
            return -1;
        }
        scn_node *child = NULL;
        if (next_event(c, &vev) || build(c, &vev, depth + 1, &child)) {
            free(key);
            return -1;
        }
        child->key = key;
        append(map, child);
    }
}

static int build_seq(parse_ctx *c, scn_node *seq, int depth)
{
    for (;;) {
        yaml_event_t ev;
        if (next_event(c, &ev))
            return -1;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        scn_node *child = NULL;
        if (build(c, &ev, depth + 1, &child))
            return -1;
        append(seq, child);
    }
}

/* Why the node that starts with ev at level depth cannot be built: too deep, an alias, not a
 * node; 0 when it can. */
static int refuse(parse_ctx *c, const yaml_event_t *ev, int depth, int line)
{
    if (depth > c->max_depth)
        return sim_errf(c->err, "%s:%d: nested more than %d levels deep (a scenario needs a few)",
                        c->name, line, SCN_MAX_DEPTH);
    if (ev->type == YAML_ALIAS_EVENT)
        return sim_errf(c->err, "%s:%d: YAML aliases (*name) are not supported", c->name, line);
    if (ev->type != YAML_SCALAR_EVENT && ev->type != YAML_MAPPING_START_EVENT &&
        ev->type != YAML_SEQUENCE_START_EVENT)
        return sim_errf(c->err, "%s:%d: unexpected YAML structure", c->name, line);
    return 0;
}

/* Builds the node that starts with *ev (consumed) at level depth (the root is 1). On failure
 * *out is NULL. */
static int build(parse_ctx *c, yaml_event_t *ev, int depth, scn_node **out)
{
    int line = (int)ev->start_mark.line + 1, map = ev->type == YAML_MAPPING_START_EVENT;
    *out = NULL;
    if (refuse(c, ev, depth, line)) {
        yaml_event_delete(ev);
        return -1;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        *out = node_new(SCN_NODE_SCALAR, line);
        (*out)->text = sim_xstrdup((const char *)ev->data.scalar.value);
        yaml_event_delete(ev);
        return 0;
    }
    yaml_event_delete(ev);
    *out = node_new(map ? SCN_NODE_MAP : SCN_NODE_SEQ, line);
    if ((map ? build_map(c, *out, depth) : build_seq(c, *out, depth)) == 0)
        return 0;
    scn_tree_free(*out);
    *out = NULL;
    return -1;
}

/* The parser's events to the stream's end: at most one document's node into *out. */
static int parse_documents(parse_ctx *c, scn_node **out)
{
    yaml_event_t ev;
    for (;;) {
        if (next_event(c, &ev))
            return -1;
        yaml_event_type_t t = ev.type;
        int line = (int)ev.start_mark.line + 1;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (*out) {
            yaml_event_delete(&ev);
            return sim_errf(c->err, "%s:%d: only one YAML document is allowed", c->name, line);
        }
        if (build(c, &ev, 1, out))
            return -1;
    }
}

/* Parses one document whose root may be any node and whose tree is at most max_depth levels
 * deep; an empty document gives NULL. */
static int parse_any(const char *name, const char *text, size_t len, int max_depth, scn_node **out,
                     sim_err *err)
{
    parse_ctx c = {.name = name, .err = err, .max_depth = max_depth};
    *out = NULL;
    if (!yaml_parser_initialize(&c.p))
        return sim_errf(err, "%s: cannot initialise the YAML parser", name);
    yaml_parser_set_input_string(&c.p, (const unsigned char *)text, len);
    int rc = parse_documents(&c, out);
    yaml_parser_delete(&c.p);
    if (rc) {
        scn_tree_free(*out);
        *out = NULL;
    }
    return rc;
}

int scn_tree_parse(const char *name, const char *text, size_t len, scn_node **out, sim_err *err)
{
    if (len > SCN_MAX_TEXT)
        return sim_errf(err, "%s: larger than a scenario file may be (%d bytes at most)", name,
                        SCN_MAX_TEXT);
    if (parse_any(name, text, len, SCN_MAX_DEPTH, out, err))
        return -1;
    if (!*out) {
        *out = node_new(SCN_NODE_MAP, 1);
        return 0;
    }
    if ((*out)->kind != SCN_NODE_MAP) {
        int line = (*out)->line;
        scn_tree_free(*out);
        *out = NULL;
        return sim_errf(err, "%s:%d: a scenario must be a map of keys (name: ..., model: ...)",
                        name, line);
    }
    return 0;
}

/* ---- overrides ---- */

static void mark_override(scn_node *n, int ovr)
{
    for (; n; n = n->next) {
        n->line = 0;
        n->ovr = ovr;
        mark_override(n->first, ovr);
    }
}

/* Replaces old (a child of parent) by repl, which takes old's key. */
static void replace_child(scn_node *parent, scn_node *old, scn_node *repl)
{
    scn_node **pp = &parent->first;
    while (*pp != old)
        pp = &(*pp)->next;
    repl->key = old->key;
    old->key = NULL;
    repl->next = old->next;
    *pp = repl;
    if (parent->last == old)
        parent->last = repl;
    old->next = NULL;
    scn_tree_free(old);
}

static int parse_index(const char *s, int n, int *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v >= n)
        return -1;
    *out = (int)v;
    return 0;
}

/* Item seg (an index) of sequence seq, whose path is `done`; NULL with err when seg is not an
 * index in it. */
static scn_node *seq_item(scn_node *seq, const char *seg, const char *done, const char *o,
                          sim_err *err)
{
    int idx;
    if (parse_index(seg, seq->n, &idx)) {
        sim_errf(err, "override '%s': '%s' is a list of %d; '%s' is not an index in it", o, done,
                 seq->n, seg);
        return NULL;
    }
    scn_node *c = seq->first;
    while (idx--)
        c = c->next;
    return c;
}

/* A new empty map, made by override ovr, as map's child `key`. */
static scn_node *new_child_map(scn_node *map, const char *key, int ovr)
{
    scn_node *c = node_new(SCN_NODE_MAP, 0);
    c->ovr = ovr;
    c->key = sim_xstrdup(key);
    append(map, c);
    return c;
}

/* The child of cur (whose path is `done`) named by seg (a key in a map, an index in a
 * sequence), creating a map for a missing key when create is set. NULL with err set when seg
 * cannot be followed (a missing key without create returns NULL with err untouched). */
static scn_node *step(scn_node *cur, const char *seg, const char *done, int create, int ovr,
                      const char *o, sim_err *err)
{
    if (cur->kind == SCN_NODE_SEQ)
        return seq_item(cur, seg, done, o, err);
    if (cur->kind != SCN_NODE_MAP) {
        sim_errf(err, "override '%s': '%s' is a value, not a map", o, done);
        return NULL;
    }
    scn_node *c = scn_tree_get(cur, seg);
    return c || !create ? c : new_child_map(cur, seg, ovr);
}

/* Walks override o's key path (path: its first klen bytes, split here at '.') to the parent of
 * the last segment, making maps on the way; *last is that segment, done the path walked.
 * NULL with err. */
static scn_node *walk_override(scn_node *root, const char *o, size_t klen, char *path, char *done,
                               int ovr, char **last, sim_err *err)
{
    scn_node *cur = root;
    char *seg = path;
    for (;;) {
        char *dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        if (!*seg) {
            sim_errf(err, "override '%s': empty key in '%.*s'", o, (int)klen, o);
            return NULL;
        }
        if (!dot)
            break;
        cur = step(cur, seg, done, 1, ovr, o, err);
        if (!cur)
            return NULL;
        if (*done)
            strcat(done, ".");
        strcat(done, seg);
        seg = dot + 1;
    }
    if (cur->kind == SCN_NODE_SCALAR) {
        sim_errf(err, "override '%s': '%s' is a value, not a map", o, done);
        return NULL;
    }
    *last = seg;
    return cur;
}

/* Puts val as cur's child seg, replacing one there; -1 with err (val not taken). */
static int put_override(scn_node *cur, const char *seg, scn_node *val, const char *done, int ovr,
                        const char *o, sim_err *err)
{
    scn_node *old =
        cur->kind == SCN_NODE_MAP ? scn_tree_get(cur, seg) : step(cur, seg, done, 0, ovr, o, err);
    if (cur->kind == SCN_NODE_SEQ && !old)
        return -1;
    if (old) {
        replace_child(cur, old, val);
    } else {
        val->key = sim_xstrdup(seg);
        append(cur, val);
    }
    return 0;
}

int scn_tree_set(scn_node *root, const char *o, int ovr, sim_err *err)
{
    const char *eq = strchr(o, '=');
    if (!eq || eq == o)
        return sim_errf(err, "override '%s': expected KEY.PATH=VALUE", o);
    size_t klen = (size_t)(eq - o);
    int levels = 1; /* the value's level under the root: one per segment */
    for (size_t i = 0; i < klen; i++)
        levels += o[i] == '.';
    if (levels >= SCN_MAX_DEPTH)
        return sim_errf(err, "override '%.40s...': a key path of %d segments or more", o,
                        SCN_MAX_DEPTH - 1);
    char *path = sim_xmalloc(klen + 1), *done = sim_xmalloc(klen + 1), *seg = NULL;
    memcpy(path, o, klen);
    path[klen] = '\0';
    done[0] = '\0';
    scn_node *val = NULL, *cur = walk_override(root, o, klen, path, done, ovr, &seg, err);
    int rc = -1;
    if (!cur)
        goto out;
    if (parse_any("override value", eq + 1, strlen(eq + 1), SCN_MAX_DEPTH - levels, &val, err)) {
        sim_err_prefix(err, "override '%s'", o);
        goto out;
    }
    if (!val) {
        val = node_new(SCN_NODE_SCALAR, 0);
        val->text = sim_xstrdup("");
    }
    mark_override(val, ovr);
    if (put_override(cur, seg, val, done, ovr, o, err) == 0) {
        val = NULL;
        rc = 0;
    }
out:
    scn_tree_free(val);
    free(path);
    free(done);
    return rc;
}

/* ---- emitting ---- */

typedef struct outbuf {
    char *s;
    size_t n, cap;
    int full; /* the text went past SCN_MAX_EMITTED */
} outbuf;

static int write_out(void *data, unsigned char *buf, size_t size)
{
    outbuf *o = data;
    if (o->n + size > SCN_MAX_EMITTED) {
        o->full = 1;
        return 0;
    }
    if (o->n + size + 1 > o->cap) {
        o->cap = (o->n + size + 1) * 2;
        o->s = sim_xrealloc(o->s, o->cap);
    }
    memcpy(o->s + o->n, buf, size);
    o->n += size;
    o->s[o->n] = '\0';
    return 1;
}

static int emit_scalar(yaml_emitter_t *em, const char *s)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                 YAML_ANY_SCALAR_STYLE);
    return yaml_emitter_emit(em, &ev);
}

/* The start of map or sequence n, in block style; 0 when the emitter fails. */
static int emit_start(yaml_emitter_t *em, const scn_node *n)
{
    yaml_event_t ev;
    if (n->kind == SCN_NODE_MAP)
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
    else
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
    return yaml_emitter_emit(em, &ev);
}

/* The end of map or sequence n; 0 when the emitter fails. */
static int emit_end(yaml_emitter_t *em, const scn_node *n)
{
    yaml_event_t ev;
    if (n->kind == SCN_NODE_MAP)
        yaml_mapping_end_event_initialize(&ev);
    else
        yaml_sequence_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev);
}

static int emit_node(yaml_emitter_t *em, const scn_node *n)
{
    if (n->kind == SCN_NODE_SCALAR)
        return emit_scalar(em, n->text);
    if (!emit_start(em, n))
        return 0;
    for (const scn_node *c = n->first; c; c = c->next)
        if ((n->kind == SCN_NODE_MAP && !emit_scalar(em, c->key)) || !emit_node(em, c))
            return 0;
    return emit_end(em, n);
}

/* One stream of one document holding root; 0 when the emitter fails. */
static int emit_document(yaml_emitter_t *em, const scn_node *root)
{
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (!yaml_emitter_emit(em, &ev))
        return 0;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if (!yaml_emitter_emit(em, &ev) || !emit_node(em, root))
        return 0;
    yaml_document_end_event_initialize(&ev, 1);
    if (!yaml_emitter_emit(em, &ev))
        return 0;
    yaml_stream_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev);
}

/* Why emitter em failed: its text grew past the limit, or its own problem. */
static void emit_failed(const yaml_emitter_t *em, const outbuf *o, sim_err *err)
{
    if (o->full)
        sim_errf(err, "the scenario written back as YAML (what a run stores) would exceed %d bytes",
                 SCN_MAX_EMITTED);
    else
        sim_errf(err, "cannot write the scenario as YAML: %s",
                 em->problem ? em->problem : "emitter error");
}

char *scn_tree_emit(const scn_node *root, sim_err *err)
{
    yaml_emitter_t em;
    outbuf o = {0};
    if (!yaml_emitter_initialize(&em)) {
        sim_errf(err, "cannot initialise the YAML emitter");
        return NULL;
    }
    yaml_emitter_set_output(&em, write_out, &o);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    if (!emit_document(&em, root)) {
        emit_failed(&em, &o, err);
        free(o.s);
        o.s = NULL;
    }
    yaml_emitter_delete(&em);
    return o.s;
}
