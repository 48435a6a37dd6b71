/*
 * cmd_common.h: what the subcommands share: the catalog resolver for scenarios, loading a
 * scenario with overrides, building the run's predictor, and describing this machine.
 */
#ifndef LLMSIM_CMD_COMMON_H
#define LLMSIM_CMD_COMMON_H

#include <stdio.h>

#include "engine.h"
#include "profile.h"
#include "scenario.h"
#include "store.h"
#include "store_run.h"

/* The resolver backed by calibration's catalogs and config.json reader. */
const scn_resolver *cmd_resolver(void);

/* The cost model of a run: a predictor and, for a measured or imported profile, the profile it
 * reads (owned here, so it outlives the predictor). */
typedef struct cmd_cost {
    eng_predictor pred;
    cal_profile *profile;
} cmd_cost;

/* Builds the cost model a scenario asks for: the built-in roofline, or the profile named by
 * `profile:` from the database s (s may be NULL only when none is named). 0, or -1 with err. */
int cmd_cost_new(const scn_scenario *scn, store *s, cmd_cost *out, sim_err *err);
void cmd_cost_free(cmd_cost *c);

/* Where a simulated run goes: NULL store = not stored. */
typedef struct cmd_store_opts {
    store *s;
    store_level level;
    int buffered;        /* rows kept in memory, written in one short transaction */
    store_run_hook hook; /* runs inside the run's transaction before commit (may be NULL) */
    void *hook_arg;
} cmd_store_opts;

typedef struct cmd_result {
    eng_metric m[ENG_MAX_METRICS];
    int n;
    eng_totals tot;
    int saturated;  /* queue still growing when arrivals ended (eng_totals_saturated) */
    int64_t run_id; /* 0 when not stored */
    int64_t clipped, skipped;
    uint64_t events; /* simulation events run */
    double wall_s;
    char label[128]; /* the cost model that produced it */
} cmd_result;

/* Simulates scn with seed on cost (borrowed) and stores the run per so (may be NULL). Fills
 * *out; returns 0, or -1 with err (nothing stored). */
int cmd_simulate(const scn_scenario *scn, uint64_t seed, const cmd_cost *cost,
                 const cmd_store_opts *so, cmd_result *out, sim_err *err);
/* The value of metric name in r, or NAN. */
double cmd_metric(const cmd_result *r, const char *name);

/* One line describing the host (CPU model, cores) for the runs table. */
const char *cmd_hardware(char *buf, size_t len);

/* Prints the summary table of a run to f. */
void cmd_print_summary(FILE *f, const eng_metric *m, int n);
/* Prints the summary as one JSON object (vLLM benchmark keys) to f. */
void cmd_print_json(FILE *f, const eng_metric *m, int n);

#define CMD_MAX_SETS 64

#endif
