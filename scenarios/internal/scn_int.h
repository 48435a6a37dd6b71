/*
 * scn_int.h: declarations shared inside scenarios/ only (never included from another folder).
 *
 * tree.c   the YAML tree (maps, sequences, scalars with their line numbers), overrides, emit
 * trace.c  streaming trace readers (azure, mooncake, vidur, csv): one row at a time
 * dist.c   length distributions (fixed, uniform, normal, lognormal, zipf, empirical)
 * load.c   tree -> scn_scenario with validation (the public scn_load*)
 * source.c the workload source the engine pulls arrivals from (the public scn_source_*)
 */
#ifndef SCN_INT_H
#define SCN_INT_H

#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "scenario.h"

/* ---------------- tree.c ---------------- */

/* A scenario tree's limits: levels (the root map is level 1, a scalar under it level 2), bytes
 * of the file, and bytes of the text emitted back (the scenario a run stores). */
#define SCN_MAX_DEPTH 64
#define SCN_MAX_TEXT (1 << 20)
#define SCN_MAX_EMITTED (4 << 20)

typedef enum scn_node_kind { SCN_NODE_MAP = 0, SCN_NODE_SEQ, SCN_NODE_SCALAR } scn_node_kind;

typedef struct scn_node scn_node;
struct scn_node {
    scn_node_kind kind;
    int line;   /* 1-based line in the file; 0 for a node an override created */
    int ovr;    /* 1-based index of the override that set it; 0 when from the file */
    char *key;  /* its key in the parent map; NULL in a sequence or at the root */
    char *text; /* scalar text ("" for an empty value); NULL for maps and sequences */
    scn_node *first, *last, *next; /* children in document order, and the next sibling */
    int n;                         /* number of children */
};

/* Parses YAML text (one document whose root is a map; an empty document is an empty map) into
 * a tree. Anchors, aliases, duplicate keys, text longer than SCN_MAX_TEXT and trees deeper
 * than SCN_MAX_DEPTH are refused. Returns 0, or -1 with err naming name:line. The caller frees *out
 * with scn_tree_free (*out is NULL after a failure). */
int scn_tree_parse(const char *name, const char *text, size_t len, scn_node **out, sim_err *err);
void scn_tree_free(scn_node *n);
/* The child of map with this key; NULL when absent (or when map is not a map). */
scn_node *scn_tree_get(const scn_node *map, const char *key);
/* Applies one override "a.b.c=value" (ovr_index is 1-based, recorded on the nodes it creates).
 * Missing maps on the path are created; a numeric segment indexes a sequence. The value is
 * parsed as YAML (so `{process: burst}` or `[1, 2]` work); a plain word stays a scalar. Returns
 * 0, or -1 with err naming the override. */
int scn_tree_set(scn_node *root, const char *override, int ovr_index, sim_err *err);
/* The tree as YAML text (block style). Returns a string the caller frees, or NULL with err
 * (also when the text would exceed SCN_MAX_EMITTED bytes). */
char *scn_tree_emit(const scn_node *root, sim_err *err);

/* ---------------- trace.c ---------------- */

/* The longest line a trace may have, in bytes. */
#define SCN_TRACE_MAX_LINE (1 << 20)

typedef enum scn_time_kind {
    SCN_TIME_NONE = 0, /* lengths only: no arrival column */
    SCN_TIME_NUMBER,   /* a number, times unit seconds */
    SCN_TIME_DATETIME  /* "YYYY-MM-DD HH:MM:SS.fffffff" (no time zone) */
} scn_time_kind;

/* Which columns a reader extracts. A NULL name leaves that field unread (its value is 0). */
typedef struct scn_trace_spec {
    const char *path;
    const char *format;           /* azure, mooncake, vidur, csv */
    const char *col_time;         /* NULL: the format's default (csv: no arrival column) */
    const char *col_prompt;       /* NULL: the format's default (csv: required) */
    const char *col_output;       /* NULL: the format's default (csv: required) */
    double time_unit_s;           /* seconds per unit of a numeric time column; 0: the format's */
    int lengths_only;             /* 1: do not read a time column even when there is one */
    int want_prompt, want_output; /* 0: that column is not required */
    int want_hash;                /* mooncake: read hash_ids when present */
} scn_trace_spec;

typedef struct scn_trace_row {
    int64_t t_ns;        /* arrival as read (not re-based); 0 without a time column */
    int64_t prompt;      /* >= 0 */
    int64_t output;      /* >= 0 */
    const int64_t *hash; /* mooncake hash_ids (reader-owned, valid until the next row) */
    int32_t nhash;       /* -1 when the row has none */
} scn_trace_row;

typedef struct scn_trace_reader scn_trace_reader;

/* The spec that replays a scenario's workload.trace (both lengths required); borrows t's
 * strings. */
scn_trace_spec scn_trace_spec_of(const scn_trace *t);

/* Opens a trace and reads its header (csv-like formats). Returns NULL with err naming the file
 * (missing file, unknown format, missing column). The caller frees with scn_trace_close. */
scn_trace_reader *scn_trace_open(const scn_trace_spec *spec, sim_err *err);
/* Does the reader produce arrival times? */
int scn_trace_has_time(const scn_trace_reader *r);
/* Reads the next row: 1 with *row filled, 0 at the end, -1 for a bad row (missing field, not a
 * number, negative, time going backwards) with err naming file:line (the reader stays usable:
 * the next call reads the following line), -2 for an I/O error. Blank lines are ignored. */
int scn_trace_next(scn_trace_reader *r, scn_trace_row *row, sim_err *err);
/* The 1-based line of the row last returned. */
int64_t scn_trace_line(const scn_trace_reader *r);
void scn_trace_close(scn_trace_reader *r);
/* The format names, "a|b|c" style for messages; and whether f is one of them. */
const char *scn_trace_formats(void);
int scn_trace_format_known(const char *f);

/* ---------------- dist.c ---------------- */

typedef struct scn_sampler scn_sampler;

/* Whether length distribution d (its parameters as the loader read them) gives finite,
 * representable draws: 0, or -1 with why (len bytes) naming the parameter and the limit (a
 * normal with no mass in its window, a lognormal whose sigma^2 overflows). The loader refuses
 * what this refuses, so `scenario check` catches it before a run does. */
int scn_dist_check(const scn_dist *d, char *why, size_t len);
/* The same for an arrival process: rates whose gaps 1/rate are representable, a gamma process
 * whose shape 1/cv^2 and scale cv^2/rate are normal numbers (cv 1e300 gave NaN arrivals). */
int scn_arrival_check(const scn_arrival *a, char *why, size_t len);

/* Builds a sampler for d (empirical: reads the column into memory, 4 bytes a row, or borrows
 * it from cache when not NULL; zipf: a CDF table). `what` names the distribution in messages;
 * output_column: an empirical column defaults to the format's output column rather than its prompt
 * column. Returns NULL with err set. Free with scn_sampler_free. */
scn_sampler *scn_sampler_new(const scn_dist *d, const char *what, int output_column,
                             scn_cache *cache, sim_err *err);
/* One integer draw from rng, clipped to the distribution's [min, max] (and >= 1); *clipped is
 * set to 1 when a clip changed the value (left alone otherwise). */
int64_t scn_sampler_draw(scn_sampler *s, gsl_rng *rng, int *clipped);
void scn_sampler_free(scn_sampler *s);

/* Joint (prompt, output) pairs read from a trace (or borrowed from cache when not NULL),
 * sampled with replacement. */
typedef struct scn_pairs scn_pairs;
scn_pairs *scn_pairs_new(const scn_lengths *l, scn_cache *cache, sim_err *err);
void scn_pairs_draw(const scn_pairs *p, gsl_rng *rng, int64_t *prompt, int64_t *output);
int64_t scn_pairs_count(const scn_pairs *p);
void scn_pairs_free(scn_pairs *p);

/* ---------------- session.c ---------------- */

typedef struct scn_sessions_src scn_sessions_src;
/* Multi-turn sessions by w's arrival process (closed or a rate process) and w->sessions; ctx
 * limits a session's context (0: none). NULL with err set when a distribution cannot be built. */
scn_sessions_src *scn_sessions_new(const scn_workload *w, int32_t ctx, uint64_t seed,
                                   scn_cache *cache, sim_err *err);
/* The next turn due at or before now (an eng_source_ops next). */
int scn_sessions_next(scn_sessions_src *q, int64_t now, eng_arrival *out);
/* Request rq (a turn) left the system at now: its session goes on or ends. */
void scn_sessions_done(scn_sessions_src *q, int64_t now, const eng_request *rq);
int64_t scn_sessions_clipped(const scn_sessions_src *q);
void scn_sessions_free(scn_sessions_src *q);

/* ---------------- load.c ---------------- */

/* path resolved against the folder of `scenario_path` unless absolute; written to out. Returns
 * 0, or -1 when it does not fit. */
int scn_resolve_path(const char *scenario_path, const char *path, char *out, size_t len);

/* curve.c: the mean acceptance length for k draft tokens in the acceptance curve at path, from
 * its series thinking_<thinking> (thinking NULL: the file's only series); *model gets the
 * curve's model name. 0, or -1 with err naming the file and what it has. */
int scn_curve_length(const char *path, const char *thinking, int32_t k, double *al, char *model,
                     size_t mlen, sim_err *err);

#endif
