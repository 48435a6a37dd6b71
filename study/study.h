/*
 * study.h: running one scenario, the workflow every other study (sweeps, capacity searches,
 * benchmarks, tests) is built from: resolve the scenario's names against the catalogs, build
 * the cost model it asks for, draw its workload, run the engine, and write the run to the store.
 *
 * Ownership: a study_cost owns its predictor and the profile it reads; study_simulate borrows
 * the scenario, the cost model and the store, and creates and frees everything else it needs.
 */
#ifndef STUDY_H
#define STUDY_H

#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "profile.h"
#include "scenario.h"
#include "store.h"
#include "store_run.h"

/* The most --set overrides one command line may carry. */
#define STUDY_MAX_SETS 64

/* What a command line gives every study that runs a scenario: the file, its --set overrides,
 * the seed and the store level. Declared once, here: study_run_settings is these fields, and
 * study_sweep and study_capacity hold them as anonymous members (sw->file, cap->seed, ...)
 * overlaid by ->run, so the command line's settings go in whole. */
#define STUDY_RUN_FIELDS                                                                           \
    const char *file;                                                                              \
    const char *const *sets; /* --set overrides, applied first */                                  \
    int nsets;                                                                                     \
    uint64_t seed; /* the base seed when seed_given; else the scenario's */                        \
    int seed_given;                                                                                \
    store_level level; /* how much of each run is stored */

typedef struct study_run_settings {
    STUDY_RUN_FIELDS
} study_run_settings;

/* The program's version with what this build is made of, as every stored run and validation
 * records it: "0.1.0+g<commit, 7 hex digits>[.dirty].cm<cost model hash, 8 hex digits>" (".dirty":
 * tracked files differed from the commit when it was built; "+unknown" for the commit outside a
 * git checkout); at most 31 characters. Runs with different strings came from different builds;
 * a different cm part, from differently priced ones. Static storage. */
const char *study_version(void);
/* The source commit this program was built from (40 hex digits, or "unknown"), and 1 when
 * tracked files differed from it, else 0. */
const char *study_build_commit(void);
int study_build_modified(void);
/* SHA-256 (64 hex digits) of the cost model's inputs: the sources of calibration/ (catalogs,
 * roofline, layers, profiles) and of the engine's predictor and presets, as built. */
const char *study_cost_model_hash(void);
/* The folder of the shared data the program was built beside. */
const char *study_shared_data(void);

/* The resolver behind every scenario the program loads: model names from calibration's catalog
 * or a path to a config.json (relative to the scenario's folder), GPU names from the catalog. */
const scn_resolver *study_resolver(void);
/* scn_load with that resolver. */
int study_load(const char *path, const char *const *sets, int nsets, scn_scenario *out,
               sim_err *err);
/* scn_load_text with that resolver: text read from path beforehand (path names it in messages
 * and anchors its relative paths). */
int study_load_text(const char *path, const char *text, const char *const *sets, int nsets,
                    scn_scenario *out, sim_err *err);
/* Resolves a model name (catalog or config.json path) outside a scenario. 0, or -1 with err. */
int study_model(const char *name, eng_model *out, sim_err *err);

/* The cost model of a run: a predictor and, for a measured or imported profile, the profile it
 * reads (owned here, so it outlives the predictor). */
typedef struct study_cost {
    eng_predictor pred;        /* the replicas' (a disaggregated deployment's prefill pool's) */
    eng_predictor decode_pred; /* a disaggregated deployment's decode pool's; empty otherwise */
    eng_predictor draft;       /* the drafter's, with speculative decoding (ops NULL: none) */
    /* a mixed pool's groups: pred is the first's, decode_pred the second's, these the rest */
    eng_predictor more[ENG_POOLS_MAX - 2];
    cal_profile *profile;
    char label[272]; /* what prices the run (both pools' predictors when disaggregated) */
    char note[640];  /* for the user ("" none): a profile borrowed from another GPU */
} study_cost;

/* Builds the cost model a scenario asks for: the built-in roofline, or the profile named by
 * `profile:` from the database s (s may be NULL only when none is named). A profile measured on
 * another GPU than the scenario's is refused unless the scenario borrows it explicitly
 * (profile: {name: NAME, borrow_from: GPU}); then the predictor's label (stored with each run)
 * and note say so. 0, or -1 with err. Free with study_cost_free (also after a failure). */
int study_cost_new(const scn_scenario *scn, store *s, study_cost *out, sim_err *err);
/* The checks study_cost_new makes, without a database: the roofline is built and freed; a
 * named profile is not loaded, but the model must be one the profiles price. 0, or -1 with
 * err (a model or layout the cost model does not price yet, a dtype the GPU cannot run). */
int study_cost_check(const scn_scenario *scn, sim_err *err);
void study_cost_free(study_cost *c);

/* Where a run goes: a database, or a spool file that the one process writing the database
 * replays later (store_run_replay). */
typedef struct study_sink {
    store *s;    /* NULL: not stored in a database */
    FILE *spool; /* not NULL (with s NULL): the run is spooled here, its rows streamed */
    store_level level;
    /* with s: rows kept in memory, written in one short transaction; else staged in a
     * temporary file while the run simulates, then written in one transaction (the database
     * is never locked for a simulation) */
    int buffered;
    store_run_hook hook; /* runs inside the run's transaction before commit (may be NULL; not
                            with a spool) */
    void *hook_arg;
} study_sink;

/* What a caller may add to a run; every field is optional (a zeroed struct adds nothing). */
typedef struct study_hooks {
    const eng_source_ops *src; /* arrivals from here instead of the scenario's workload */
    void *src_st;
    const eng_recorder_ops *rec; /* sees every record as well as the store does */
    void *rec_st;
    uint64_t check_every; /* debug builds: the engine's walkers after every n-th event (0 = 1) */
    scn_cache *cache;     /* whole-file length tables kept from run to run (NULL: read each) */
} study_hooks;

typedef struct study_result {
    eng_metric m[ENG_MAX_METRICS];
    int n;
    eng_totals tot;
    eng_kv_plan kv; /* the KV cache of one replica */
    int saturated;  /* queue still growing when arrivals ended (eng_totals_saturated) */
    int64_t run_id; /* 0 when not stored */
    int64_t clipped, skipped;
    uint64_t events; /* simulation events run */
    double wall_s;
    char label[272]; /* the cost model that produced it */
    char note[640];  /* the cost model's note for the user ("" none) */
} study_result;

/* Simulates scn with seed on cost (borrowed) and stores the run in sink (may be NULL). Fills
 * *out; returns 0, or -1 with err (nothing stored). hooks may be NULL. */
int study_simulate(const scn_scenario *scn, uint64_t seed, const study_cost *cost,
                   const study_sink *sink, const study_hooks *hooks, study_result *out,
                   sim_err *err);

/* The whole pipeline for one scenario: builds its cost model (a profile is read from db, which
 * may be NULL when the scenario names none), simulates it with seed and frees the cost model.
 * sink and hooks may be NULL. 0, or -1 with err (nothing stored). The cost model's note, if
 * any, is copied to out->note. */
int study_run(const scn_scenario *scn, uint64_t seed, store *db, const study_sink *sink,
              const study_hooks *hooks, study_result *out, sim_err *err);

/* The metric that counts a run's requests rejected for `why` ("rejected_context",
 * "rejected_kv", "rejected_batch", "rejected_shed"; "" for none): stored only when the run
 * rejected some. */
const char *study_reject_metric(eng_reject_reason why);

/* The value of metric name in r, or NAN. */
double study_metric(const study_result *r, const char *name);

/* The nominal offered rate of a scenario's workload in requests/s: the arrival process's rate,
 * a trace's rescaled rate, or 0 when it has none (a burst, a closed loop, a trace at its own
 * pace). */
double study_offered_rate(const scn_scenario *scn);

/* One line describing the host (CPU model, cores) for the runs table; returns buf. */
const char *study_hardware(char *buf, size_t len);

#endif
