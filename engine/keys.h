/*
 * keys.h: settings tables. Each room declares the scenario keys it reads once, beside the code
 * they configure: the key's name, type, range, unit, default, one line of doc, and where its
 * value goes (an offset into the section's struct, or a setter). The scenario loader
 * (scenarios/load.c) interprets the tables; its messages, `llmsim list keys`, docs/keys.md and
 * `--set` all read the same rows (as Redis's config.c and SQLite's pragma table work).
 * Scheduler parameters have their own rows (eng_param, scheduler.h), declared by each policy.
 *
 * A table is an array of eng_key ending with a row whose name is NULL. Adding a key to a
 * section is one row; ENG_KEY_AT names the field it fills.
 */
#ifndef ENG_KEYS_H
#define ENG_KEYS_H

#include <stddef.h>
#include <stdint.h>

typedef enum eng_key_type {
    ENG_KEY_INT,     /* an integer (int32_t or int64_t by the field's size; see the flags) */
    ENG_KEY_NUM,     /* a number (double) */
    ENG_KEY_BOOL,    /* true|false (also yes/no, on/off, 1/0): int 1 or 0 */
    ENG_KEY_ENUM,    /* one of choices "a|b|c": int, its index (ENG_KEY_TEXT: the word) */
    ENG_KEY_STR,     /* text: char[size] */
    ENG_KEY_MAP,     /* a map whose keys are the table sub (at off in the struct, if stored) */
    ENG_KEY_INCLUDE, /* not a key: the rows of sub belong to this map too, their struct at off */
} eng_key_type;

enum {
    ENG_KEY_LO_OPEN = 1 << 0,  /* INT, NUM: lo itself is out of range */
    ENG_KEY_HI_OPEN = 1 << 1,  /* INT, NUM: hi itself is out of range */
    ENG_KEY_POW2 = 1 << 2,     /* INT: a power of two */
    ENG_KEY_REQUIRED = 1 << 3, /* absent is an error (where `when` applies) */
    ENG_KEY_SCALAR = 1 << 4,   /* MAP: a single value is accepted too (a shorthand, see doc) */
    ENG_KEY_LIST = 1 << 5,     /* MAP: a list of such maps */
    ENG_KEY_TOP = 1 << 6,      /* the deployment's: refused inside a prefill or decode pool */
    ENG_KEY_CODE = 1 << 7,     /* read by its section's code, which asks the row to check it */
    ENG_KEY_U64 = 1 << 8,      /* INT: a uint64_t (lo 0, no upper bound) */
    ENG_KEY_DOUBLE = 1 << 9,   /* INT: stored as a double */
    ENG_KEY_TEXT = 1 << 10,    /* ENUM: stored as the word itself, in char[size] */
};

typedef struct eng_key eng_key;
struct eng_key {
    const char *name;
    eng_key_type type;
    unsigned flags;
    double lo, hi;       /* INT, NUM: the range (hi INFINITY: no upper bound) */
    const char *unit;    /* "GB", "us", "tokens", ... ("" for none) */
    const char *def;     /* the default as text; "(...)" when described rather than a value */
    const char *choices; /* ENUM: "a|b|c" */
    const char *doc;     /* one line */
    size_t off, size;    /* the field the value goes to, in the section's struct (size 0: none);
                            a CODE row with no field may give size alone, the longest text it
                            takes (plus one): it has then no default to store */
    /* instead of a field: gets the checked number (ENUM, BOOL: the index, 1 or 0) */
    void (*set)(void *obj, double v);
    const eng_key *sub; /* MAP, INCLUDE: the map's rows */
    const char *when;   /* "a|b": the key belongs to the section only where its selector (a key
                           such as arrival.process) is one of these; NULL: always */
};

/* The field f of struct T, for a row: .off and .size. */
#define ENG_KEY_AT(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)
/* A row whose value goes nowhere by itself (its section's code reads it, or it documents). */
#define ENG_KEY_NOWHERE .size = 0
/* The row ending a table. */
#define ENG_KEY_END                                                                                \
    {                                                                                              \
        .name = NULL                                                                               \
    }

/* A checked value. */
typedef struct eng_key_val {
    double num;    /* INT, NUM; ENUM: the index; BOOL: 1 or 0 */
    int64_t i;     /* INT */
    uint64_t u;    /* INT with ENG_KEY_U64 */
    const char *s; /* STR, ENUM: the text (borrowed from the input) */
} eng_key_val;

/* Checks text against row k: its type, range, choices. 0 with *out filled, or -1 with the
 * reason ("expected a number in (0, 1], got '1.5'") in why. MAP and INCLUDE rows refuse. */
int eng_key_parse(const eng_key *k, const char *text, eng_key_val *out, char *why, size_t len);
/* Writes a checked value into obj (the section's struct) at k's field or through its setter;
 * nothing for a row with neither. */
void eng_key_store(const eng_key *k, void *obj, const eng_key_val *v);
/* What k accepts, for messages and docs: "a number in (0, 1]", "an integer >= 1", "one of
 * rdma, nvlink, pcie", "true or false", "text", "a map". Into buf; returns buf. */
const char *eng_key_expects(const eng_key *k, char *buf, size_t len);
/* The range alone, as the key reference shows it: "(0, 1]", ">= 1", "rdma|nvlink|pcie". */
const char *eng_key_range(const eng_key *k, char *buf, size_t len);
/* Writes every row's default (those with a field or setter and a default that is a value, not
 * a description) into obj, INCLUDE'd tables and maps the interpreter reads (not CODE) included. */
void eng_keys_defaults(const eng_key *keys, void *obj);

/* Whether row k belongs to a section whose selector is sel (NULL: no selector). */
int eng_key_applies(const eng_key *k, const char *sel);
/* The row named name in keys (through INCLUDE rows) that applies under sel, or NULL; *off gets
 * the offset of the struct it writes into from the table's own (0 outside an INCLUDE). */
const eng_key *eng_key_find(const eng_key *keys, const char *name, const char *sel, size_t *off);
/* The table of the MAP row named name in keys (checked: the row exists). */
const eng_key *eng_key_sub(const eng_key *keys, const char *name);
/* The names of the rows applying under sel as "a, b, c" into buf (truncated to len). */
const char *eng_key_names(const eng_key *keys, const char *sel, char *buf, size_t len);

/* true|yes|on|1 -> 1, false|no|off|0 -> 0, else -1. */
int eng_key_bool(const char *s);
/* The index of word in choices "a|b|c", or -1. */
int eng_key_choice(const char *choices, const char *word);

#endif
