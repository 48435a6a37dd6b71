/*
 * list_keys.c: `llmsim list keys`: every scenario key, read from the settings tables the loader
 * interprets (scn_keys() and the policies' eng_param rows), as text, JSON or the Markdown of
 * docs/keys.md. A map whose keys were listed under another path (the decode pool's, which are
 * the prefill pool's; every length distribution's) is listed once and named where it recurs.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine.h"

enum { OUT_TEXT, OUT_MARKDOWN, OUT_JSON };

typedef struct keys_out {
    int fmt;
    sim_jsonw j;
    const eng_key *seen[64]; /* tables already listed, and where */
    char seen_at[64][200];
    int nseen;
} keys_out;

static const char *type_name(const eng_key *k)
{
    static const char *const names[] = {"integer", "number", "boolean", "choice", "text"};
    if (k->type == ENG_KEY_MAP)
        return k->flags & ENG_KEY_LIST     ? "list of maps"
               : k->flags & ENG_KEY_SCALAR ? "map or value"
                                           : "map";
    return names[k->type];
}

/* The doc with what a reader needs beyond it: required, and the selector values it needs. */
static void full_doc(const eng_key *k, const char *see, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s", k->doc);
    if (k->flags & ENG_KEY_REQUIRED && off < len)
        off += (size_t)snprintf(buf + off, len - off, "; required");
    if (k->when && off < len)
        off += (size_t)snprintf(buf + off, len - off, "; only with %s", k->when);
    if (k->flags & ENG_KEY_TOP && off < len)
        off += (size_t)snprintf(buf + off, len - off, "; the deployment's only (not a pool's)");
    if (see && off < len)
        snprintf(buf + off, len - off, "; its keys are %s's", see);
}

/* Markdown cells: a '|' escaped. */
static void md_cell(const char *s)
{
    printf("| ");
    for (; *s; s++)
        printf(*s == '|' ? "\\|" : "%c", *s);
    printf(" ");
}

static void row_out(keys_out *o, const char *path, const char *type, const char *unit,
                    const char *range, const char *def, const char *doc)
{
    if (o->fmt == OUT_JSON) {
        sim_jsonw_open(&o->j, NULL, '{');
        sim_jsonw_str(&o->j, "key", path);
        sim_jsonw_str(&o->j, "type", type);
        sim_jsonw_str(&o->j, "unit", unit);
        sim_jsonw_str(&o->j, "range", range);
        sim_jsonw_str(&o->j, "default", def);
        sim_jsonw_str(&o->j, "doc", doc);
        sim_jsonw_close(&o->j, '}');
    } else if (o->fmt == OUT_MARKDOWN) {
        char key[200];
        snprintf(key, sizeof key, "`%s`", path);
        md_cell(key), md_cell(type), md_cell(unit), md_cell(range), md_cell(def), md_cell(doc);
        printf("|\n");
    } else {
        printf("%-42s %-12s %-10s %-26s %-14s %s\n", path, type, unit, range, def, doc);
    }
}

/* The path table t is listed under: the first it was met at (path, when it is new). */
static const char *listed_at(keys_out *o, const eng_key *t, const char *path)
{
    for (int i = 0; i < o->nseen; i++)
        if (o->seen[i] == t)
            return o->seen_at[i];
    SIM_CHECK(NULL, o->nseen < (int)(sizeof o->seen / sizeof o->seen[0]));
    o->seen[o->nseen] = t;
    snprintf(o->seen_at[o->nseen], sizeof o->seen_at[0], "%s", path);
    return o->seen_at[o->nseen++];
}

static void section(keys_out *o, const char *path, const char *doc)
{
    if (o->fmt == OUT_MARKDOWN)
        printf("\n## %s\n\n%s%s%s%s.\n\n| key | type | unit | range | default | doc |\n"
               "|---|---|---|---|---|---|\n",
               *path ? path : "top level", *path ? "`" : "", *path ? path : "", *path ? "`: " : "",
               doc);
}

static void walk(keys_out *o, const eng_key *keys, const char *pre, const char *doc);

/* The rows of keys (INCLUDE'd ones in place), then each map's own section. */
static void rows(keys_out *o, const eng_key *keys, const char *pre, int maps)
{
    for (const eng_key *k = keys; k->name; k++) {
        char path[200], range[200], d[600];
        snprintf(path, sizeof path, "%s%s%s", pre, *pre ? "." : "", k->name);
        if (k->type == ENG_KEY_INCLUDE) {
            rows(o, k->sub, pre, maps);
            continue;
        }
        const char *at = k->type == ENG_KEY_MAP ? listed_at(o, k->sub, path) : path;
        if (maps && k->type == ENG_KEY_MAP && !strcmp(at, path)) {
            walk(o, k->sub, path, k->doc);
        } else if (!maps) {
            full_doc(k, strcmp(at, path) ? at : NULL, d, sizeof d);
            row_out(o, path, type_name(k), k->unit, eng_key_range(k, range, sizeof range),
                    k->def ? k->def : "", d);
        }
    }
}

static void policy_params(keys_out *o, const char *pre)
{
    size_t n;
    const eng_sched_ops *const *all = eng_sched_all(&n);
    static const char *const types[] = {"integer", "number", "choice", "boolean"};
    section(o, "scheduler parameters",
            "Each policy's own keys under `scheduler:` (llmsim list schedulers); a key another "
            "policy has is noted and not used");
    for (size_t i = 0; i < n; i++)
        for (const eng_param *p = all[i]->params; p && p->name; p++) {
            char path[200], range[200], doc[600];
            snprintf(path, sizeof path, "%s.%s", pre, p->name);
            if (p->type == ENG_PARAM_ENUM)
                snprintf(range, sizeof range, "%s", p->choices);
            else if (p->type == ENG_PARAM_BOOL)
                snprintf(range, sizeof range, "true|false");
            else
                snprintf(range, sizeof range, "[%g, %g]", p->min, p->max);
            snprintf(doc, sizeof doc, "%s: %s", all[i]->name, p->help);
            row_out(o, path, types[p->type], "", range, p->def, doc);
        }
}

static void walk(keys_out *o, const eng_key *keys, const char *pre, const char *doc)
{
    section(o, pre, doc);
    rows(o, keys, pre, 0);
    rows(o, keys, pre, 1);
    if (!strcmp(pre, "scheduler"))
        policy_params(o, pre);
}

void cli_list_keys(const cli_common *c, int markdown)
{
    keys_out o = {.fmt = c->json ? OUT_JSON : markdown ? OUT_MARKDOWN : OUT_TEXT};
    if (o.fmt == OUT_JSON) {
        sim_jsonw_begin(&o.j, stdout);
        sim_jsonw_open(&o.j, NULL, '[');
    } else if (o.fmt == OUT_MARKDOWN) {
        printf("# Scenario keys\n\nEvery key a scenario file (or `--set KEY=VALUE`) may give, "
               "generated by `llmsim list keys --markdown` from the settings tables the loader "
               "reads: edit the tables, not this file (a test compares the two).\n");
    } else {
        printf("%-42s %-12s %-10s %-26s %-14s %s\n", "key", "type", "unit", "range", "default",
               "doc");
    }
    walk(&o, scn_keys(), "", "The scenario's own keys and the deployment's");
    if (o.fmt == OUT_JSON)
        sim_jsonw_close(&o.j, ']');
}
