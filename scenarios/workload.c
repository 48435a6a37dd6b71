/*
 * workload.c: the `workload:` section: its settings tables (keys.h) beside the checks that
 * tie its keys together (a trace or lengths file or sessions in place of drawn lengths, an
 * arrival process or a trace's own times), read through load.c's interpreter into a
 * scn_workload for source.c, dist.c, trace.c and session.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scn_int.h"

#define FORMATS "azure|mooncake|vidur|csv"

/* ---- tables ---- */

typedef struct step_val {
    double start_s, rate;
} step_val;

static const eng_key step_keys[] = {
    {"start_s", ENG_KEY_NUM, ENG_KEY_REQUIRED, 0, SCN_HORIZON_S, "s", NULL, NULL,
     "when the step's rate starts (the first step at 0)", ENG_KEY_AT(step_val, start_s)},
    {"rate", ENG_KEY_NUM, ENG_KEY_REQUIRED, 0, INFINITY, "requests/s", NULL, NULL,
     "the arrival rate from start_s on", ENG_KEY_AT(step_val, rate)},
    ENG_KEY_END};

#define RENEWAL "poisson|gamma|constant"
static const eng_key arrival_keys[] = {
    {"process", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL,
     "poisson|gamma|constant|burst|closed|schedule", "the arrival process; burst: all at 0",
     ENG_KEY_AT(scn_arrival, kind)},
    {"rate", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "requests/s", NULL, NULL,
     "mean arrival rate", ENG_KEY_AT(scn_arrival, rate), .when = RENEWAL},
    {"cv", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "", NULL, NULL,
     "coefficient of variation of the gaps", ENG_KEY_AT(scn_arrival, cv), .when = "gamma"},
    {"concurrency", ENG_KEY_INT, ENG_KEY_REQUIRED, 1, 1 << 24, "clients", NULL, NULL,
     "clients, each sending its next request when its last one finishes",
     ENG_KEY_AT(scn_arrival, concurrency), .when = "closed"},
    {"think_time_ms", ENG_KEY_NUM, 0, 0, SCN_HORIZON_S * 1e3, "ms", "0", NULL,
     "a client's pause between a finish and its next request",
     ENG_KEY_AT(scn_arrival, think_time_ms), .when = "closed"},
    {"ramp_up_s", ENG_KEY_NUM, 0, 0, SCN_HORIZON_S, "s", "0", NULL,
     "client i of N starts at i x ramp_up_s / N (0: all at 0)", ENG_KEY_AT(scn_arrival, ramp_up_s),
     .when = "closed"},
    {"steps", ENG_KEY_MAP, ENG_KEY_LIST | ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "a list of {start_s, rate}: a piecewise-constant rate", ENG_KEY_NOWHERE, .sub = step_keys,
     .when = "schedule"},
    ENG_KEY_END};

#define CLIPPED "fixed|normal|lognormal|empirical"
static const eng_key dist_keys[] = {
    {"dist", ENG_KEY_ENUM, ENG_KEY_REQUIRED, 0, 0, "", NULL,
     "fixed|uniform|normal|lognormal|zipf|empirical", "the distribution",
     ENG_KEY_AT(scn_dist, kind)},
    {"value", ENG_KEY_INT, ENG_KEY_DOUBLE | ENG_KEY_REQUIRED, 1, INT32_MAX, "", NULL, NULL,
     "the value every draw takes", ENG_KEY_AT(scn_dist, value), .when = "fixed"},
    {"min", ENG_KEY_INT, ENG_KEY_DOUBLE | ENG_KEY_REQUIRED, 1, INT32_MAX, "", NULL, NULL,
     "the smallest value", ENG_KEY_AT(scn_dist, min), .when = "uniform|zipf"},
    {"min", ENG_KEY_INT, ENG_KEY_DOUBLE, 1, INT32_MAX, "", "(none)", NULL,
     "draws below are raised to it (normal: truncated)", ENG_KEY_AT(scn_dist, min),
     .when = CLIPPED},
    {"max", ENG_KEY_INT, ENG_KEY_DOUBLE | ENG_KEY_REQUIRED, 1, INT32_MAX, "", NULL, NULL,
     "the largest value", ENG_KEY_AT(scn_dist, max), .when = "uniform|zipf"},
    {"max", ENG_KEY_INT, ENG_KEY_DOUBLE, 1, INT32_MAX, "", "(none)", NULL,
     "draws above are lowered to it (normal: truncated)", ENG_KEY_AT(scn_dist, max),
     .when = CLIPPED},
    {"mean", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "", NULL, NULL,
     "the mean", ENG_KEY_AT(scn_dist, mean), .when = "normal|lognormal"},
    {"std", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "", NULL, NULL,
     "the standard deviation", ENG_KEY_AT(scn_dist, std), .when = "normal"},
    {"sigma", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "", NULL, NULL,
     "standard deviation of the underlying normal", ENG_KEY_AT(scn_dist, sigma),
     .when = "lognormal"},
    {"s", ENG_KEY_NUM, ENG_KEY_LO_OPEN | ENG_KEY_REQUIRED, 0, INFINITY, "", NULL, NULL,
     "the exponent", ENG_KEY_AT(scn_dist, s), .when = "zipf"},
    {"path", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "a trace whose column is sampled, relative to the scenario's folder", .size = 512,
     .when = "empirical"},
    {"format", ENG_KEY_ENUM, ENG_KEY_TEXT | ENG_KEY_REQUIRED, 0, 0, "", NULL, FORMATS,
     "the trace's format", ENG_KEY_AT(scn_dist, format), .when = "empirical"},
    {"column", ENG_KEY_STR, 0, 0, 0, "", "(the format's)", NULL,
     "the column sampled (format csv: required)", ENG_KEY_AT(scn_dist, column),
     .when = "empirical"},
    ENG_KEY_END};

static const eng_key trace_column_keys[] = {
    {"time", ENG_KEY_STR, 0, 0, 0, "", "(none: lengths only)", NULL, "the arrival time column",
     ENG_KEY_AT(scn_trace, col_time)},
    {"prompt", ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "the prompt length column",
     ENG_KEY_AT(scn_trace, col_prompt)},
    {"output", ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "the output length column",
     ENG_KEY_AT(scn_trace, col_output)},
    {"time_unit_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, INFINITY, "s", "(the format's)", NULL,
     "seconds per unit of the time column", ENG_KEY_AT(scn_trace, time_unit_s)},
    ENG_KEY_END};

static const eng_key trace_keys[] = {
    {"path", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "the trace file, relative to the scenario's folder", .size = 512},
    {"format", ENG_KEY_ENUM, ENG_KEY_TEXT | ENG_KEY_REQUIRED, 0, 0, "", NULL, FORMATS,
     "the trace's format", ENG_KEY_AT(scn_trace, format)},
    {"time_scale", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, INFINITY, "", "1", NULL,
     "arrival times multiplied by this (2: twice as slow)", ENG_KEY_AT(scn_trace, time_scale)},
    {"rate", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, INFINITY, "requests/s", "(the trace's own)", NULL,
     "arrivals rescaled to this mean rate", ENG_KEY_AT(scn_trace, rate)},
    {"start_s", ENG_KEY_NUM, 0, 0, SCN_HORIZON_S, "s", "0", NULL,
     "the window starts this far into the trace", ENG_KEY_AT(scn_trace, start_s)},
    {"duration_s", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, SCN_HORIZON_S, "s", "(to the end)", NULL,
     "the window's length", ENG_KEY_AT(scn_trace, duration_s)},
    {"limit", ENG_KEY_INT, 0, 1, INFINITY, "requests", "(all)", NULL, "the first N requests only",
     ENG_KEY_AT(scn_trace, limit)},
    {"on_bad_row", ENG_KEY_ENUM, 0, 0, 0, "", "error", "error|skip",
     "a malformed row fails the run, or is skipped", ENG_KEY_AT(scn_trace, skip_bad_rows)},
    {"columns", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL, "format csv: the columns' names (required)",
     ENG_KEY_NOWHERE, .sub = trace_column_keys},
    {"lengths_only", ENG_KEY_BOOL, 0, 0, 0, "", "false", NULL,
     "ignore the trace's times: arrivals come from workload.arrival",
     ENG_KEY_AT(scn_trace, lengths_only)},
    {"hash_block_tokens", ENG_KEY_INT, ENG_KEY_CODE, 0, 1 << 20, "tokens", "(512 for mooncake)",
     NULL, "mooncake: prompt tokens per hash_ids entry (0: ignore them)",
     ENG_KEY_AT(scn_trace, hash_block)},
    {"repeat", ENG_KEY_INT, 0, 1, 1000000, "", "1", NULL,
     "replay the window N times back to back, each copy's content its own",
     ENG_KEY_AT(scn_trace, repeat)},
    ENG_KEY_END};

static const eng_key lengths_column_keys[] = {
    {"prompt", ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "the prompt length column",
     ENG_KEY_AT(scn_lengths, col_prompt)},
    {"output", ENG_KEY_STR, 0, 0, 0, "", NULL, NULL, "the output length column",
     ENG_KEY_AT(scn_lengths, col_output)},
    ENG_KEY_END};

static const eng_key lengths_keys[] = {
    {"path", ENG_KEY_STR, ENG_KEY_CODE | ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "a trace whose (prompt, output) pairs are drawn, relative to the scenario's folder",
     .size = 512},
    {"format", ENG_KEY_ENUM, ENG_KEY_TEXT | ENG_KEY_REQUIRED, 0, 0, "", NULL, FORMATS,
     "the trace's format", ENG_KEY_AT(scn_lengths, format)},
    {"columns", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL, "format csv: the columns' names (required)",
     ENG_KEY_NOWHERE, .sub = lengths_column_keys},
    ENG_KEY_END};

static const eng_key prefix_keys[] = {
    {"tokens", ENG_KEY_INT, ENG_KEY_CODE | ENG_KEY_REQUIRED, 1, INT32_MAX, "tokens", NULL, NULL,
     "tokens every request of a group starts with, below the context",
     ENG_KEY_AT(scn_prefix, tokens)},
    {"groups", ENG_KEY_INT, 0, 1, 1 << 30, "", "1", NULL, "distinct prefixes, drawn uniformly",
     ENG_KEY_AT(scn_prefix, groups)},
    ENG_KEY_END};

#define DIST_ROW(name, doc)                                                                        \
    {                                                                                              \
        name, ENG_KEY_MAP, ENG_KEY_SCALAR | ENG_KEY_CODE, 0, 0, "", NULL, NULL, doc,               \
            ENG_KEY_NOWHERE, .sub = dist_keys                                                      \
    }

static const eng_key session_keys[] = {
    DIST_ROW("turns", "turns per session: a number or {dist: ...}"),
    DIST_ROW("user_tokens", "new user tokens per turn: a number or {dist: ...}"),
    {"system_prompt_tokens", ENG_KEY_INT, 0, 0, INT32_MAX, "tokens", "0", NULL,
     "a system prompt every session starts with (shared)", ENG_KEY_AT(scn_sessions, system_tokens)},
    DIST_ROW("think_time_ms", "ms between an answer and the next turn: a number (0 by default) "
                              "or {dist: ...}"),
    {"kind", ENG_KEY_ENUM, 0, 0, 0, "", "chat", "chat|agent",
     "agent: turns after the first add tool output, not user tokens",
     ENG_KEY_AT(scn_sessions, agent)},
    DIST_ROW("tool_tokens", "kind agent: tool-output tokens per turn after the first"),
    ENG_KEY_END};

static const eng_key class_slo_keys[] = {
    {"ttft_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "(the run's slo)", NULL,
     "time to first token the class's good requests meet", ENG_KEY_AT(eng_class_slo, ttft_ms)},
    {"tpot_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "(the run's slo)", NULL,
     "time per output token the class's good requests meet", ENG_KEY_AT(eng_class_slo, tpot_ms)},
    {"e2e_ms", ENG_KEY_NUM, 0, 0, INFINITY, "ms", "(the run's slo)", NULL,
     "end-to-end latency the class's good requests meet", ENG_KEY_AT(eng_class_slo, e2e_ms)},
    ENG_KEY_END};

static const eng_key class_keys[] = {
    {"name", ENG_KEY_STR, ENG_KEY_REQUIRED, 0, 0, "", NULL, NULL,
     "the class's name in the results (letters, digits, _ and -; at most 16)",
     ENG_KEY_AT(eng_class, name)},
    {"share", ENG_KEY_NUM, ENG_KEY_REQUIRED | ENG_KEY_LO_OPEN, 0, 1, "", NULL, NULL,
     "the fraction of arrivals of this class (the shares sum to 1)", ENG_KEY_AT(eng_class, share)},
    {"priority", ENG_KEY_INT, 0, -1e6, 1e6, "", "0", NULL,
     "the priority its client sends (vLLM serves smaller values first; SGLang larger ones unless "
     "schedule_low_priority_values_first)",
     ENG_KEY_AT(eng_class, priority)},
    {"sheddable", ENG_KEY_BOOL, 0, 0, 0, "", "false", NULL,
     "admission control may shed it when every replica is saturated (the others pass)",
     ENG_KEY_AT(eng_class, sheddable)},
    {"slo", ENG_KEY_MAP, 0, 0, 0, "", NULL, NULL, "the class's own objectives for its goodput",
     ENG_KEY_AT(eng_class, slo), .sub = class_slo_keys},
    ENG_KEY_END};

const eng_key scn_workload_keys[] = {
    {"num_requests", ENG_KEY_INT, ENG_KEY_CODE, 0, INFINITY, "requests", NULL, NULL,
     "requests to send (a trace: at most this many, 0 or absent: all; sessions: turns in all)",
     ENG_KEY_AT(scn_workload, num_requests)},
    {"arrival", ENG_KEY_MAP, ENG_KEY_SCALAR | ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "the arrival process: {process: ..., ...} (or `burst`)", ENG_KEY_NOWHERE, .sub = arrival_keys},
    DIST_ROW("prompt_tokens", "prompt lengths: a number or {dist: ...}"),
    DIST_ROW("output_tokens", "output lengths: a number or {dist: ...}"),
    {"lengths", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "joint (prompt, output) pairs drawn from a trace's rows", ENG_KEY_NOWHERE,
     .sub = lengths_keys},
    {"trace", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "a trace replayed: its arrival times and lengths", ENG_KEY_NOWHERE, .sub = trace_keys},
    {"shared_prefix", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "a prefix shared by groups of requests (a system prompt)", ENG_KEY_NOWHERE,
     .sub = prefix_keys},
    {"sessions", ENG_KEY_MAP, ENG_KEY_CODE, 0, 0, "", NULL, NULL,
     "multi-turn sessions: each turn's prompt is the context so far plus new tokens",
     ENG_KEY_NOWHERE, .sub = session_keys},
    {"classes", ENG_KEY_MAP, ENG_KEY_LIST | ENG_KEY_CODE, 0, 0, "", "(none)", NULL,
     "a list of request classes {name, share, priority, sheddable, slo}, drawn per arrival",
     ENG_KEY_NOWHERE, .sub = class_keys},
    ENG_KEY_END};

/* ---- sections ---- */

static int load_steps(scn_lctx *c, const scn_node *m, const char *pre, scn_arrival *a)
{
    const scn_node *steps = scn_tree_get(m, "steps");
    scn_kpath sp = scn_kp(pre, "steps");
    if (steps->kind != SCN_NODE_SEQ || steps->n < 1 || steps->n > SCN_MAX_SCHEDULE)
        return scn_fail(c, steps, sp.s, "expected a list of 1 to %d {start_s, rate} maps",
                        SCN_MAX_SCHEDULE);
    int any = 0, i = 0;
    for (const scn_node *st = steps->first; st; st = st->next, i++) {
        char ip[200];
        step_val v = {-1, -1};
        snprintf(ip, sizeof ip, "%s[%d]", sp.s, i);
        if (st->kind != SCN_NODE_MAP)
            return scn_fail(c, st, ip, "expected a map {start_s: S, rate: R}");
        if (scn_read_map(c, st, ip, step_keys, &v, NULL))
            return -1;
        if (i == 0 && v.start_s != 0)
            return scn_fail(c, st, ip, "the first step must start at start_s: 0");
        if (i > 0 && v.start_s <= a->step_start_s[i - 1])
            return scn_fail(c, st, ip, "start_s must increase from one step to the next");
        a->step_start_s[i] = v.start_s;
        a->step_rate[i] = v.rate;
        any |= v.rate > 0;
    }
    a->nsteps = i;
    if (!any)
        return scn_fail(c, steps, sp.s, "every step has rate 0: no request would ever arrive");
    return 0;
}

/* The shorthand `arrival: burst` (scalar m of map w): a process that needs no parameters. */
static int load_burst(scn_lctx *c, const scn_node *w, const scn_node *m, scn_arrival *a)
{
    eng_key_val v;
    if (scn_check(c, w, "workload", "arrival", &arrival_keys[0], &v) < 0)
        return -1;
    if (v.num != SCN_ARR_BURST)
        return scn_fail(c, m, "workload.arrival",
                        "process '%s' needs parameters: write {process: %s, ...}", m->text,
                        m->text);
    a->kind = SCN_ARR_BURST;
    return 0;
}

static int load_arrival(scn_lctx *c, const scn_node *w, scn_arrival *a)
{
    const char *pre = "workload.arrival";
    const scn_node *m = scn_tree_get(w, "arrival");
    eng_key_val v;
    if (!m)
        return scn_missing(c, w, "workload", "arrival",
                           "(process: poisson, gamma, constant, burst, closed or schedule)");
    if (m->kind == SCN_NODE_SCALAR)
        return load_burst(c, w, m, a);
    if (scn_get_map(c, w, "workload", "arrival", &m) ||
        scn_get(c, m, pre, arrival_keys, "process", &v) < 0 ||
        scn_read_map(c, m, pre, arrival_keys, a, v.s) ||
        (a->kind == SCN_ARR_SCHEDULE && load_steps(c, m, pre, a)))
        return -1;
    char why[256]; /* representable gaps (scenarios/dist.c) */
    return scn_arrival_check(a, why, sizeof why) ? scn_fail(c, m, pre, "%s", why) : 0;
}

/* Opens a trace file once to check that it exists and has the columns asked for. */
static int probe_trace(scn_lctx *c, const scn_node *at, const char *path, const scn_trace_spec *sp,
                       int *has_time)
{
    sim_err e;
    scn_trace_reader *r = scn_trace_open(sp, &e);
    if (!r)
        return scn_fail(c, at, path, "%s", e.msg);
    if (has_time)
        *has_time = scn_trace_has_time(r);
    scn_trace_close(r);
    return 0;
}

static int load_empirical(scn_lctx *c, const scn_node *m, const char *pre, scn_dist *d, int is_out)
{
    if (scn_get_path(c, m, pre, "path", d->path, sizeof d->path))
        return -1;
    if (!strcmp(d->format, "csv") && !*d->column)
        return scn_missing(c, m, pre, "column", "(format csv names the column to sample)");
    scn_trace_spec sp = scn_empirical_spec(d, is_out);
    return probe_trace(c, scn_tree_get(m, "path"), scn_kp(pre, "path").s, &sp, NULL);
}

/* A distribution's checks beyond its rows: its bounds' order, zipf's span, an empirical
 * column. */
static int check_dist(scn_lctx *c, const scn_node *m, const char *pre, scn_dist *d, int is_out)
{
    if (d->min && d->max && d->min > d->max)
        return scn_fail(c, scn_tree_get(m, "min"), scn_kp(pre, "min").s, "min %.0f > max %.0f",
                        d->min, d->max);
    if (d->kind == SCN_DIST_ZIPF && d->max - d->min >= (double)(1 << 24))
        return scn_fail(c, m, pre, "zipf range max - min must be below %d", 1 << 24);
    return d->kind == SCN_DIST_EMPIRICAL ? load_empirical(c, m, pre, d, is_out) : 0;
}

/* The shorthand `output_tokens: 500`: `key` of map w, whose path is `parent`, is fixed. */
static int load_fixed(scn_lctx *c, const scn_node *w, const char *parent, const char *key,
                      scn_dist *d)
{
    const eng_key *value = &dist_keys[1]; /* fixed's value */
    eng_key_val v;
    if (scn_check(c, w, parent, key, value, &v) < 0)
        return -1;
    d->kind = SCN_DIST_FIXED;
    d->value = v.num;
    return 0;
}

/* A distribution `key` of map w, whose path is `parent`: a number (a fixed value) or a map. */
int scn_load_dist(scn_lctx *c, const scn_node *w, const char *parent, const char *key, scn_dist *d)
{
    scn_kpath pre = scn_kp(parent, key);
    const scn_node *m = scn_tree_get(w, key);
    eng_key_val v;
    memset(d, 0, sizeof *d);
    if (!m)
        return scn_missing(c, w, parent, key,
                           "({dist: fixed|uniform|normal|lognormal|zipf|"
                           "empirical, ...} or a number of tokens)");
    if (m->kind == SCN_NODE_SCALAR)
        return load_fixed(c, w, parent, key, d);
    if (scn_get_map(c, w, parent, key, &m) || scn_get(c, m, pre.s, dist_keys, "dist", &v) < 0 ||
        scn_read_map(c, m, pre.s, dist_keys, d, v.s) ||
        check_dist(c, m, pre.s, d, !strcmp(key, "output_tokens")))
        return -1;
    char why[256]; /* representable draws (scenarios/dist.c) */
    return scn_dist_check(d, why, sizeof why) ? scn_fail(c, m, pre.s, "%s", why) : 0;
}

static int load_lengths(scn_lctx *c, const scn_node *w, scn_lengths *l)
{
    const char *pre = "workload.lengths";
    const scn_node *m;
    if (scn_get_map(c, w, "workload", "lengths", &m))
        return -1;
    if (!m)
        return 0;
    l->present = 1;
    if (scn_read_map(c, m, pre, lengths_keys, l, NULL) ||
        scn_get_path(c, m, pre, "path", l->path, sizeof l->path))
        return -1;
    if (!strcmp(l->format, "csv") && (!*l->col_prompt || !*l->col_output))
        return scn_missing(c, m, pre, "columns", "(format csv needs columns: {prompt, output})");
    scn_trace_spec sp = scn_lengths_spec_of(l);
    return probe_trace(c, scn_tree_get(m, "path"), scn_kp(pre, "path").s, &sp, NULL);
}

/* The checks of a trace's keys against each other. */
static int check_trace(scn_lctx *c, const scn_node *m, const char *pre, scn_trace *t)
{
    eng_key_val v;
    /* MODEL: Mooncake FAST'25 traces: one hash id per 512-token prompt block (SOURCE.md) */
    const scn_node *hb = scn_tree_get(m, "hash_block_tokens");
    t->hash_block = !strcmp(t->format, "mooncake") ? 512 : 0;
    if (hb && strcmp(t->format, "mooncake"))
        return scn_fail(c, hb, scn_kp(pre, "hash_block_tokens").s,
                        "only mooncake traces carry hash_ids");
    int rc = scn_get(c, m, pre, trace_keys, "hash_block_tokens", &v);
    if (rc < 0)
        return -1;
    if (rc)
        t->hash_block = (int32_t)v.i;
    if (scn_tree_get(m, "rate") && scn_tree_get(m, "time_scale"))
        return scn_fail(c, scn_tree_get(m, "rate"), scn_kp(pre, "rate").s,
                        "give rate or time_scale, not both");
    if (!strcmp(t->format, "csv") && (!*t->col_prompt || !*t->col_output))
        return scn_missing(c, m, pre, "columns",
                           "(format csv needs columns: {time, prompt, output}; time is optional)");
    return 0;
}

/* A trace read for its lengths only has no use for the keys that shape arrival times. */
static int check_untimed(scn_lctx *c, const scn_node *m, const scn_trace *t)
{
    if (t->rate > 0 || t->start_s > 0 || t->duration_s > 0 || scn_tree_get(m, "time_scale"))
        return scn_fail(c, m, "workload.trace",
                        "rate, time_scale, start_s and duration_s need arrival times, and this "
                        "trace is read for its lengths only");
    return 0;
}

static int load_trace(scn_lctx *c, const scn_node *w, scn_trace *t, int *has_time)
{
    const char *pre = "workload.trace";
    const scn_node *m;
    if (scn_get_map(c, w, "workload", "trace", &m))
        return -1;
    if (!m)
        return 0;
    t->present = 1;
    eng_keys_defaults(trace_keys, t);
    if (scn_read_map(c, m, pre, trace_keys, t, NULL) ||
        scn_get_path(c, m, pre, "path", t->path, sizeof t->path) || check_trace(c, m, pre, t))
        return -1;
    scn_trace_spec sp = scn_trace_spec_of(t);
    if (probe_trace(c, scn_tree_get(m, "path"), scn_kp(pre, "path").s, &sp, has_time))
        return -1;
    return *has_time ? 0 : check_untimed(c, m, t);
}

/* A renewal process's nominal span, (num_requests - 1) / rate, must end inside the simulated
 * horizon (time is int64 ns); a random one that goes past it anyway fails in the source. */
static int check_span(scn_lctx *c, const scn_node *w, const scn_workload *wl)
{
    const scn_arrival *a = &wl->arrival;
    if (a->kind != SCN_ARR_POISSON && a->kind != SCN_ARR_GAMMA && a->kind != SCN_ARR_CONSTANT)
        return 0;
    double span = (double)(wl->num_requests - 1) / a->rate;
    if (span <= SCN_HORIZON_S)
        return 0;
    const scn_node *am = scn_tree_get(w, "arrival");
    return scn_fail(c, scn_tree_get(am, "rate"), "workload.arrival.rate",
                    "%lld requests at %g/s span %.3g s of simulated time, past its horizon of "
                    "%.0e s (time is int64 nanoseconds); raise the rate or lower num_requests",
                    (long long)wl->num_requests, a->rate, span, SCN_HORIZON_S);
}

/* shared_prefix.tokens of map m, checked against the context of ctx tokens. */
static int prefix_tokens(scn_lctx *c, const scn_node *m, scn_prefix *p, int32_t ctx)
{
    eng_key tokens = prefix_keys[0]; /* below the context */
    eng_key_val v;
    tokens.hi = ctx > 1 ? ctx - 1 : INT32_MAX;
    if (scn_check(c, m, "workload.shared_prefix", "tokens", &tokens, &v) < 0)
        return -1;
    p->tokens = (int32_t)v.i;
    return 0;
}

/* `shared_prefix: {tokens, groups}`: the prefix stays below the context of ctx tokens. */
static int load_prefix(scn_lctx *c, const scn_node *w, scn_workload *wl, int32_t ctx)
{
    const char *pre = "workload.shared_prefix";
    const scn_node *m;
    if (scn_get_map(c, w, "workload", "shared_prefix", &m))
        return -1;
    if (!m)
        return 0;
    scn_prefix *p = &wl->prefix;
    p->present = 1;
    eng_keys_defaults(prefix_keys, p);
    if (scn_read_map(c, m, pre, prefix_keys, p, NULL) || prefix_tokens(c, m, p, ctx))
        return -1;
    if (wl->trace.present)
        return scn_fail(c, m, pre,
                        "a trace replays its own prompts; shared_prefix needs drawn lengths");
    return 0;
}

/* A think time: a number of ms (may be 0; 0 when absent), or a distribution of whole ms. */
static int load_think(scn_lctx *c, const scn_node *m, const char *pre, scn_sessions *ss)
{
    static const eng_key ms = {
        "think_time_ms", ENG_KEY_NUM, 0, 0, SCN_HORIZON_S * 1e3, "ms", NULL, NULL, "",
        ENG_KEY_NOWHERE};
    const scn_node *tn = scn_tree_get(m, "think_time_ms");
    eng_key_val v;
    if (tn && tn->kind != SCN_NODE_SCALAR) {
        ss->think_fixed_ms = -1;
        return scn_load_dist(c, m, pre, "think_time_ms", &ss->think);
    }
    if (scn_check(c, m, pre, "think_time_ms", &ms, &v) < 0)
        return -1;
    ss->think_fixed_ms = tn ? v.num : 0;
    return 0;
}

/* Workload w's keys that sessions replace: their prompts are the context so far plus new
 * tokens. 0, or -1 naming the first such key given. */
static int check_session_clash(scn_lctx *c, const scn_node *w)
{
    static const char *const clash[] = {"prompt_tokens", "lengths", "trace", "shared_prefix"};
    const scn_node *tn;
    for (int i = 0; i < 4; i++)
        if ((tn = scn_tree_get(w, clash[i])))
            return scn_fail(c, tn, scn_kp("workload", clash[i]).s,
                            "not used with sessions: their prompts are the context so far plus "
                            "sessions.user_tokens (a shared prefix is "
                            "sessions.system_prompt_tokens)");
    return 0;
}

/* `sessions: {turns, user_tokens, system_prompt_tokens, think_time_ms, kind, tool_tokens}` */
static int load_sessions(scn_lctx *c, const scn_node *w, scn_workload *wl)
{
    const char *pre = "workload.sessions";
    const scn_node *m;
    if (scn_get_map(c, w, "workload", "sessions", &m))
        return -1;
    if (!m)
        return 0;
    scn_sessions *ss = &wl->sessions;
    ss->present = 1;
    if (scn_read_map(c, m, pre, session_keys, ss, NULL) ||
        scn_load_dist(c, m, pre, "turns", &ss->turns) ||
        scn_load_dist(c, m, pre, "user_tokens", &ss->user))
        return -1;
    if (load_think(c, m, pre, ss))
        return -1;
    if (ss->agent && scn_load_dist(c, m, pre, "tool_tokens", &ss->tool))
        return -1;
    if (!ss->agent && scn_tree_get(m, "tool_tokens"))
        return scn_fail(c, scn_tree_get(m, "tool_tokens"), scn_kp(pre, "tool_tokens").s,
                        "not used: only kind: agent sessions add tool output");
    return check_session_clash(c, w);
}

/* Class i's checks beyond its rows: its name's characters, a name not taken before it. */
static int check_class(scn_lctx *c, const scn_node *cn, const char *ip, const eng_classes *cl,
                       int32_t i)
{
    const eng_class *k = &cl->c[i];
    const scn_node *nn = scn_tree_get(cn, "name");
    char np[220];
    snprintf(np, sizeof np, "%s.name", ip);
    if (!*k->name || strspn(k->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-") != strlen(k->name))
        return scn_fail(c, nn, np, "'%s': expected letters, digits, _ and - only", k->name);
    for (int32_t j = 0; j < i; j++)
        if (!strcmp(cl->c[j].name, k->name))
            return scn_fail(c, nn, np, "class '%s' is named twice", k->name);
    return 0;
}

/* List item cn as class cl->n. 0, or -1 naming workload.classes[i]. */
static int read_class(scn_lctx *c, const scn_node *cn, eng_classes *cl)
{
    char ip[200];
    snprintf(ip, sizeof ip, "workload.classes[%d]", cl->n);
    if (cn->kind != SCN_NODE_MAP)
        return scn_fail(c, cn, ip, "expected a map {name: N, share: S, ...}");
    if (scn_read_map(c, cn, ip, class_keys, &cl->c[cl->n], NULL) ||
        check_class(c, cn, ip, cl, cl->n))
        return -1;
    return 0;
}

/* `classes: [{name, share, priority, sheddable, slo}]`: into the engine's configuration, whose
 * run draws each arrival's class (engine.c). */
static int load_classes(scn_lctx *c, const scn_node *w)
{
    const scn_node *l = scn_tree_get(w, "classes");
    const char *pre = "workload.classes";
    eng_classes *cl = &c->out->engine.classes;
    memset(cl, 0, sizeof *cl);
    if (!l)
        return 0;
    if (l->kind != SCN_NODE_SEQ || l->n < 1 || l->n > ENG_MAX_CLASSES)
        return scn_fail(c, l, pre, "expected a list of 1 to %d {name, share, ...} maps",
                        ENG_MAX_CLASSES);
    double sum = 0;
    for (const scn_node *cn = l->first; cn; cn = cn->next, cl->n++) {
        if (read_class(c, cn, cl))
            return -1;
        sum += cl->c[cl->n].share;
    }
    if (fabs(sum - 1) > 1e-9)
        return scn_fail(c, l, pre, "the classes' shares sum to %.6g; expected 1", sum);
    return 0;
}

/* num_requests, at least lo (1, or 0 with a trace); required unless a trace gives the rows. */
static int load_count(scn_lctx *c, const scn_node *m, scn_workload *w, int64_t lo, const char *why)
{
    eng_key row = scn_workload_keys[0];
    eng_key_val v;
    if (!scn_tree_get(m, "num_requests") && why)
        return scn_missing(c, m, "workload", "num_requests", why);
    row.lo = (double)lo;
    int rc = scn_check(c, m, "workload", "num_requests", &row, &v);
    if (rc > 0)
        w->num_requests = v.i;
    return rc < 0 ? -1 : 0;
}

static int load_sessions_workload(scn_lctx *c, const scn_node *m, scn_workload *w)
{
    if (load_count(c, m, w, 1, "(turns to send, over all sessions)") ||
        scn_load_dist(c, m, "workload", "output_tokens", &w->output) ||
        load_arrival(c, m, &w->arrival))
        return -1;
    if (w->arrival.kind == SCN_ARR_BURST || w->arrival.kind == SCN_ARR_SCHEDULE)
        return scn_fail(c, scn_tree_get(m, "arrival"), "workload.arrival",
                        "sessions start by a closed loop (concurrent sessions) or by poisson, "
                        "gamma or constant (sessions per second)");
    return 0;
}

/* prompt_tokens and output_tokens, unless a trace or lengths file gives them. */
static int load_lengths_dists(scn_lctx *c, const scn_node *m, scn_workload *w)
{
    int given = w->trace.present || w->lengths.present;
    for (int i = 0; i < 2; i++) {
        const char *k = i ? "output_tokens" : "prompt_tokens";
        const scn_node *n = scn_tree_get(m, k);
        if (given && n)
            return scn_fail(c, n, scn_kp("workload", k).s, "not used: the %s gives the lengths",
                            w->trace.present ? "trace" : "lengths file");
        if (!given && scn_load_dist(c, m, "workload", k, i ? &w->output : &w->prompt))
            return -1;
    }
    return 0;
}

/* Closed-loop clients with fixed drawn lengths all start at 0 and stay in lock-step. */
static void lockstep_note(scn_lctx *c, const scn_node *an, const scn_workload *w)
{
    const scn_arrival *a = &w->arrival;
    if (!w->trace.present && !w->lengths.present && a->kind == SCN_ARR_CLOSED &&
        a->concurrency > 1 && a->ramp_up_s == 0 && w->prompt.kind == SCN_DIST_FIXED &&
        w->output.kind == SCN_DIST_FIXED)
        scn_note(c, an,
                 "closed-loop clients with fixed lengths all start at 0 and stay in lock-step "
                 "(they prefill together every round); arrival.ramp_up_s staggers their starts");
}

/* The arrival process, unless the trace gives the arrival times (timed: then none is given). */
static int load_arrivals(scn_lctx *c, const scn_node *m, scn_workload *w, int timed)
{
    const scn_node *an = scn_tree_get(m, "arrival");
    if (timed && an)
        return scn_fail(c, an, "workload.arrival",
                        "not used: the trace gives the arrival times (set trace.lengths_only: "
                        "true to use the trace's lengths with this arrival process)");
    return timed ? 0 : load_arrival(c, m, &w->arrival);
}

/* A workload of requests (not sessions): their count and lengths, their arrivals (the trace's
 * times, timed, or a process), the shared prefix, then the notes and the span's check. */
static int load_requests(scn_lctx *c, const scn_node *m, scn_workload *w, int timed)
{
    const eng_config *e = &c->out->engine;
    if (w->trace.present && w->lengths.present)
        return scn_fail(c, scn_tree_get(m, "lengths"), "workload.lengths",
                        "a trace already gives the lengths; use trace or lengths, not both");
    if (load_count(c, m, w, w->trace.present ? 0 : 1,
                   w->trace.present ? NULL : "(an integer >= 1)") ||
        load_lengths_dists(c, m, w) || load_arrivals(c, m, w, timed) ||
        load_prefix(c, m, w, e->max_model_len > 0 ? e->max_model_len : e->model.max_context))
        return -1;
    if (!timed)
        lockstep_note(c, scn_tree_get(m, "arrival"), w);
    return timed ? 0 : check_span(c, m, w);
}

int scn_load_workload(scn_lctx *c, const scn_node *root, scn_workload *w)
{
    const scn_node *m;
    int has_time = 0;
    if (scn_get_map(c, root, "", "workload", &m))
        return -1;
    if (!m)
        return scn_missing(c, root, "", "workload", "(num_requests, arrival, prompt_tokens, ...)");
    if (scn_read_map(c, m, "workload", scn_workload_keys, w, NULL) ||
        load_trace(c, m, &w->trace, &has_time) || load_lengths(c, m, &w->lengths) ||
        load_sessions(c, m, w) || load_classes(c, m))
        return -1;
    if (w->sessions.present)
        return load_sessions_workload(c, m, w);
    return load_requests(c, m, w, w->trace.present && has_time);
}
