/*
 * json.h: the one JSON reader and writer every folder shares.
 *
 * Reading: a small document model (config.json, hf_quant_config.json), and a scan of one JSON
 * object's top-level members in place, without allocating (JSON Lines traces, a row per line).
 * Writing: a streaming writer that places commas and keys, and escapes strings.
 *
 * sim_json_parse reads a whole text in one pass (O(n) in its length) into a tree of nodes that
 * keeps nesting, member order and the line each value starts on. Every node and string lives in
 * the document's arena: one sim_json_free releases them all, and nothing points into the text.
 * Nesting deeper than SIM_JSON_MAX_DEPTH is refused with a message, so a hostile file cannot
 * exhaust the stack. Member lookup is a scan of one object's members, which is what a reader
 * asking a fixed set of keys needs: the whole read stays linear in the file.
 */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_JSON_MAX_DEPTH 64

typedef enum sim_json_kind {
    SIM_JSON_NULL = 0,
    SIM_JSON_BOOL,
    SIM_JSON_NUM,
    SIM_JSON_STR,
    SIM_JSON_ARR,
    SIM_JSON_OBJ
} sim_json_kind;

typedef struct sim_json sim_json;
struct sim_json {
    sim_json_kind kind;
    int line;        /* 1-based line of the value's first character */
    const char *key; /* member name inside an object, else NULL */
    double num;      /* NUM; BOOL as 0 or 1 */
    const char *str; /* STR: unescaped, NUL-terminated (\u escapes as UTF-8) */
    sim_json *child; /* ARR, OBJ: first element or member */
    sim_json *next;  /* next sibling */
    int n;           /* ARR, OBJ: number of children */
};

typedef struct sim_json_doc sim_json_doc;

/* Parses text (NUL-terminated); `name` stands for the file in messages. Returns the document,
 * or NULL with "name:line:col: what" in why. Free with sim_json_free (NULL is allowed). */
sim_json_doc *sim_json_parse(const char *name, const char *text, char *why, size_t len);
const sim_json *sim_json_root(const sim_json_doc *d);
void sim_json_free(sim_json_doc *d);

/* The member `key` of object o (the last one when a key repeats, as Python's json does), or
 * NULL when o is not an object or has no such member. */
const sim_json *sim_json_get(const sim_json *o, const char *key);
/* Name of a kind for messages ("a number", "an object", ...). */
const char *sim_json_kind_name(sim_json_kind k);

/* The in-place scan: finds the top-level members of the object that line holds (one JSON
 * object, as a JSON Lines row) whose keys are in keys (n of them); vals[i] points at key i's
 * value, NUL-terminated in place (a string keeps its quotes; an array or object its brackets),
 * or stays NULL when absent. A scalar is the text up to the next comma, brace or blank. Returns
 * 0, or -1 when the line is not a JSON object. */
int sim_json_scan(char *line, const char *const *keys, int n, char **vals);
/* The first character at or after p that is not a space or tab. */
const char *sim_json_skip_blanks(const char *p);

/* ---- writing ---- */

/* A JSON writer: sim_jsonw_open writes '{' or '[', keys and values separate themselves with
 * ", " and ": "; numbers are written with %.17g (NaN and infinities as null). */
typedef struct sim_jsonw {
    FILE *f;
    int depth;
    int count[32]; /* items written at each depth */
} sim_jsonw;
void sim_jsonw_begin(sim_jsonw *j, FILE *f);
void sim_jsonw_open(sim_jsonw *j, const char *key, char bracket); /* key NULL inside an array */
void sim_jsonw_close(sim_jsonw *j, char bracket);                 /* '\n' after it at depth 0 */
void sim_jsonw_str(sim_jsonw *j, const char *key, const char *v);
void sim_jsonw_num(sim_jsonw *j, const char *key, double v);
void sim_jsonw_int(sim_jsonw *j, const char *key, int64_t v);
void sim_jsonw_bool(sim_jsonw *j, const char *key, int v);
/* s as a JSON string, quoted and escaped (NULL as ""), to f. */
void sim_json_write_str(FILE *f, const char *s);

/* A struct's member as a JSON member: its key, how it is written, where it lies in the struct
 * and its size. One table per struct lets one walker write the members a run of calls wrote. */
typedef enum sim_jfield_kind {
    SIM_JF_INT,   /* a signed integer of 4 or 8 bytes (sim_jsonw_int) */
    SIM_JF_NUM,   /* double (sim_jsonw_num) */
    SIM_JF_STR,   /* const char * (sim_jsonw_str) */
    SIM_JF_CHARS, /* char[] (sim_jsonw_str) */
} sim_jfield_kind;
typedef struct sim_jfield {
    const char *key;
    sim_jfield_kind kind;
    size_t offset, size;
} sim_jfield;
#define SIM_JFIELD(key, kind, type, member)                                                        \
    {                                                                                              \
        key, kind, offsetof(type, member), sizeof(((type *)0)->member)                             \
    }
/* Writes the n members f of obj, in order, into the open object. */
void sim_jsonw_fields(sim_jsonw *j, const sim_jfield *f, int n, const void *obj);
/* sim_jsonw_fields over a whole table (an array, not a pointer). */
#define SIM_JSONW_TABLE(j, table, obj)                                                             \
    sim_jsonw_fields(j, table, (int)(sizeof(table) / sizeof *(table)), obj)

#endif
