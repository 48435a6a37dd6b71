/*
 * json_int.h: a small JSON document model for calibration/'s readers (config.json,
 * hf_quant_config.json).
 *
 * cal_json_parse reads a whole text in one pass (O(n) in its length) into a tree of nodes that
 * keeps nesting, member order and the line each value starts on. Every node and string lives in
 * the document's arena: one cal_json_free releases them all, and nothing points into the text.
 * Nesting deeper than CAL_JSON_MAX_DEPTH is refused with a message, so a hostile file cannot
 * exhaust the stack. Member lookup is a scan of one object's members, which is what a reader
 * asking a fixed set of keys needs: the whole read stays linear in the file.
 */
#ifndef CAL_JSON_INT_H
#define CAL_JSON_INT_H

#include <stddef.h>

#define CAL_JSON_MAX_DEPTH 64

typedef enum cal_json_kind {
    CAL_JSON_NULL = 0,
    CAL_JSON_BOOL,
    CAL_JSON_NUM,
    CAL_JSON_STR,
    CAL_JSON_ARR,
    CAL_JSON_OBJ
} cal_json_kind;

typedef struct cal_json cal_json;
struct cal_json {
    cal_json_kind kind;
    int line;        /* 1-based line of the value's first character */
    const char *key; /* member name inside an object, else NULL */
    double num;      /* NUM; BOOL as 0 or 1 */
    const char *str; /* STR: unescaped, NUL-terminated (\u escapes as UTF-8) */
    cal_json *child; /* ARR, OBJ: first element or member */
    cal_json *next;  /* next sibling */
    int n;           /* ARR, OBJ: number of children */
};

typedef struct cal_json_doc cal_json_doc;

/* Parses text (NUL-terminated); `name` stands for the file in messages. Returns the document,
 * or NULL with "name:line:col: what" in why. Free with cal_json_free (NULL is allowed). */
cal_json_doc *cal_json_parse(const char *name, const char *text, char *why, size_t len);
const cal_json *cal_json_root(const cal_json_doc *d);
void cal_json_free(cal_json_doc *d);

/* The member `key` of object o (the last one when a key repeats, as Python's json does), or
 * NULL when o is not an object or has no such member. */
const cal_json *cal_json_get(const cal_json *o, const char *key);
/* Name of a kind for messages ("a number", "an object", ...). */
const char *cal_json_kind_name(cal_json_kind k);

#endif
