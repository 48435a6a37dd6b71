/*
 * scn_int.h: declarations shared inside scenarios/ only (never included from another folder).
 *
 * tree.c   the YAML tree (maps, sequences, scalars with their line numbers), overrides, emit
 * trace.c  streaming trace readers (azure, mooncake, vidur, csv): one row at a time
 * dist.c   length distributions (fixed, uniform, normal, lognormal, zipf, empirical)
 * load.c   tree -> scn_scenario: the interpreter of the settings tables (the public scn_load*)
 * deploy.c the deployment: engine preset, scheduler, router, layout, pools and their link
 * speculative.c speculative decoding's drafter and acceptance
 * keys.c   the scenario's own tables (the top level, profile, slo, cost_model)
 * workload.c the workload's tables and the checks between its keys
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
/* Does it read content ids (mooncake hash_ids, asked for by the spec)? */
int scn_trace_has_hashes(const scn_trace_reader *r);
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
struct sim_mt; /* rng.h */
/* The reader spec of a lengths file: its (prompt, output) columns, lengths only. */
scn_trace_spec scn_lengths_spec_of(const scn_lengths *l);
/* The trace reader's view of empirical distribution d: its file, read for the output lengths
 * (is_out) or the prompt lengths, from its column (the format's own without one). */
scn_trace_spec scn_empirical_spec(const scn_dist *d, int is_out);
scn_pairs *scn_pairs_new(const scn_lengths *l, scn_cache *cache, sim_err *err);
void scn_pairs_draw(const scn_pairs *p, gsl_rng *rng, int64_t *prompt, int64_t *output);
/* The same draw from the stream drawn inline (sim_mt, rng.h): the pair scn_pairs_draw gives with
 * the GSL generator of that stream. */
void scn_pairs_draw_mt(const scn_pairs *p, struct sim_mt *g, int64_t *prompt, int64_t *output);
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
/* The folder of path ("." for none) into out. */
void scn_base_dir(const char *path, char *out, size_t len);

/* A load in progress: where messages point, what resolves names, where notes go. */
typedef struct scn_lctx {
    const char *file;       /* the scenario's name in messages */
    const char *const *ovr; /* the overrides, for messages */
    const scn_resolver *res;
    sim_err *err;
    scn_scenario *out;               /* notes go to out->notes */
    const struct eng_preset *preset; /* the `engine:` preset in force, or NULL */
    int in_pool;                     /* reading a prefill or decode pool (ENG_KEY_TOP refused) */
} scn_lctx;

/* "pre.key" (or "key" at the top), in a buffer the caller holds by value. */
typedef struct scn_kpath {
    char s[160];
} scn_kpath;
scn_kpath scn_kp(const char *pre, const char *key);

/* Sets the error `file:line: path: message` (the line of node n; an override names itself
 * instead). Returns -1. */
int scn_fail(scn_lctx *c, const scn_node *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "pre.key: missing why" at map's line; returns -1. */
int scn_missing(scn_lctx *c, const scn_node *map, const char *pre, const char *key,
                const char *why);
/* Appends "file:line: note: ..." about node n to the scenario's notes. */
void scn_note(scn_lctx *c, const scn_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The interpreter. Reads map m (path pre) by the table keys into obj (the table's struct):
 * refuses a key the table lacks (naming the valid ones), checks and stores each row's value,
 * reads the maps the table places (MAP rows not ENG_KEY_CODE) into obj at their offsets, and
 * refuses a required row that is absent. Rows marked ENG_KEY_CODE are left to the caller. sel:
 * the value of the section's selector (arrival.process, a dist's dist), for rows' `when`.
 * 0, or -1 with the error set. */
int scn_read_map(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *keys, void *obj,
                 const char *sel);
/* Checks the child `key` of map m against row: 1 with *v filled, 0 when absent (-1 when the
 * row is required), -1 on a bad value. */
int scn_check(scn_lctx *c, const scn_node *m, const char *pre, const char *key, const eng_key *row,
              eng_key_val *v);
/* scn_check with the row named name in keys. */
int scn_get(scn_lctx *c, const scn_node *m, const char *pre, const eng_key *keys, const char *name,
            eng_key_val *v);
/* The child `key` of parent, which must be a map when present: 0 with *out (NULL when absent),
 * or -1. */
int scn_get_map(scn_lctx *c, const scn_node *parent, const char *pre, const char *key,
                const scn_node **out);
/* A file path key, required, resolved against the scenario's folder into out. 0, or -1. */
int scn_get_path(scn_lctx *c, const scn_node *m, const char *pre, const char *key, char *out,
                 size_t len);

/* ---------------- keys.c, deploy.c, workload.c, speculative.c ---------------- */

extern const eng_key scn_root_keys[];
extern const eng_key scn_workload_keys[];
/* workload: {...} of root into w. 0, or -1 with the error set. */
int scn_load_workload(scn_lctx *c, const scn_node *root, scn_workload *w);
/* A length (or turn, or think-time) distribution `key` of map w, whose path is parent: a number
 * (a fixed value) or {dist: ..., ...}. 0, or -1. */
int scn_load_dist(scn_lctx *c, const scn_node *w, const char *parent, const char *key, scn_dist *d);
/* `engine:` under root (pre "" or a pool's): the preset, applied to e before the scenario's
 * own keys are read over it; c->preset gets it. 0, or -1. */
int scn_load_engine(scn_lctx *c, const scn_node *root, const char *pre, eng_config *e);
/* The deployment's layout (checked against the model), router, max_model_len, scheduler and
 * the async CPU overlap its policy asks for, into e. 0, or -1. */
int scn_load_deployment(scn_lctx *c, const scn_node *root, eng_config *e);
/* `prefill:` and `decode:` (both or neither) and `kv_transfer:`. 0, or -1. */
int scn_load_pools(scn_lctx *c, const scn_node *root, scn_scenario *s);
/* `replicas: [{gpu, count, ...}, ...]`: a mixed pool's groups, each from the deployment's
 * settings (nothing for a count). 0, or -1 with the error set. */
int scn_load_groups(scn_lctx *c, const scn_node *root, eng_config *e);
/* kv_offload: {...} of root into e->offload (nothing when absent); after the pools (refused
 * with them). 0, or -1. */
int scn_load_offload(scn_lctx *c, const scn_node *root, eng_config *e);
/* faults: the list of faults a run injects into its replicas (fault.c). 0, or -1. */
int scn_load_faults(scn_lctx *c, const scn_node *root, eng_config *e);
/* autoscale.behavior's policy lists and the pools' autoscale maps (autoscale.c), after the top
 * level and the pools are read. 0, or -1. */
int scn_load_behavior(scn_lctx *c, const scn_node *root, eng_config *e);
/* speculative: {...} of root into e->spec (the drafter resolved and checked against the model
 * and the scheduler, the acceptance read). 0, or -1 with the error set. */
int scn_load_spec(scn_lctx *c, const scn_node *root, eng_config *e);

/* curve.c: the mean acceptance length for k draft tokens in the acceptance curve at path, from
 * its series thinking_<thinking> (thinking NULL: the file's only series); *model gets the
 * curve's model name. 0, or -1 with err naming the file and what it has. */
int scn_curve_length(const char *path, const char *thinking, int32_t k, double *al, char *model,
                     size_t mlen, sim_err *err);

#endif
