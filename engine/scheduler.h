/*
 * scheduler.h: the scheduler (batching policy) interface, its parameters, and the registry.
 *
 * A policy decides which requests run in the next iteration; the engine owns time, events and
 * memory accounting. A policy is one ops table (one file) plus one line in registry.c; the
 * engine allocates its state (state_size bytes, zeroed) and calls init with the run's settings.
 *
 * Call order on one replica: init; then, as the simulation goes, on_arrival for each request
 * routed to it, next_batch whenever the replica is idle (after arrivals, after each iteration,
 * at a requested wake-up), on_finish for each request that completes, on_batch_end after each
 * iteration; fini at the end. In a disaggregated deployment a prefill pool's policy sees
 * requests that ask for one token (on_finish once it is computed: its KV then waits for the
 * transfer outside the policy), and a decode pool's policy gets requests through pd_admit and
 * pd_join instead of on_arrival.
 */
#ifndef ENG_SCHED_H
#define ENG_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "request.h"

#define ENG_SCHED_ABI 2

typedef struct eng_replica eng_replica;
typedef struct eng_batch eng_batch;

/* One tunable parameter of a policy, shown by `llmsim list schedulers`. */
typedef enum eng_param_type {
    ENG_PARAM_INT,
    ENG_PARAM_DOUBLE,
    ENG_PARAM_ENUM,
    ENG_PARAM_BOOL /* true|false (yes/no, on/off, 1/0 accepted); eng_cfg_int reads 1 or 0 */
} eng_param_type;

typedef struct eng_param {
    const char *name;
    eng_param_type type;
    const char *def;     /* default, as text */
    double min, max;     /* inclusive range for numbers */
    const char *choices; /* "a|b|c" for ENG_PARAM_ENUM */
    const char *help;
    /* The field of the policy's state the engine fills with the value before init (size 0:
     * none; the policy reads it with eng_cfg_*): INT an int64_t or int32_t, DOUBLE a double,
     * BOOL an int (1 or 0), ENUM an int (the index of the choice). */
    size_t off, size;
} eng_param;
/* The field f of the policy's state T, for a row. */
#define ENG_PARAM_AT(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)
/* A row whose value the policy reads itself. */
#define ENG_PARAM_NOWHERE .size = 0
/* Ends a policy's parameter table. */
#define ENG_PARAM_END                                                                              \
    {                                                                                              \
        .name = NULL                                                                               \
    }

/* Rows the paged policies share (vLLM V0's names, ranges and defaults), declared once: a state
 * T with an int64_t max_num_seqs and an int swap (1: preempted requests are swapped out); the
 * watermark is read by eng_cfg_watermark_blocks. */
#define ENG_PARAM_MAX_NUM_SEQS(T)                                                                  \
    {                                                                                              \
        "max_num_seqs", ENG_PARAM_INT, "256", 1, 1e6, NULL, "most requests running at once",       \
            ENG_PARAM_AT(T, max_num_seqs)                                                          \
    }
#define ENG_PARAM_WATERMARK                                                                        \
    {                                                                                              \
        "watermark", ENG_PARAM_DOUBLE, "0.01", 0, 0.5, NULL,                                       \
            "fraction of KV blocks kept free when admitting", ENG_PARAM_NOWHERE                    \
    }
#define ENG_PARAM_PREEMPTION(T)                                                                    \
    {                                                                                              \
        "preemption", ENG_PARAM_ENUM, "recompute", 0, 0, "recompute|swap",                         \
            "what happens to a preempted request's KV", ENG_PARAM_AT(T, swap)                      \
    }

/* The scheduler settings of a run: the values given in the scenario, as text. */
#define ENG_SCHED_MAX_PARAMS 32
typedef struct eng_sched_cfg {
    char name[32];
    int n;
    struct {
        char key[48];
        char val[64];
    } kv[ENG_SCHED_MAX_PARAMS];
} eng_sched_cfg;

typedef struct eng_sched_ops {
    const char *name;        /* registry key */
    int abi;                 /* ENG_SCHED_ABI */
    size_t state_size;       /* bytes of state the engine allocates (zeroed) */
    const eng_param *params; /* terminated by ENG_PARAM_END */
    const char *summary;     /* one line for `llmsim list schedulers` */
    /* Optional: after the engine filled the parameters' fields (eng_sched_start); 0, or -1 when
     * the settings cannot go together. */
    int (*init)(void *st, const eng_sched_cfg *cfg, eng_replica *r);
    void (*on_arrival)(void *st, eng_replica *r, eng_request *rq, int64_t now);
    /* Fills out (empty on entry); returns the number of sequences it will run, 0 to stay idle. */
    int (*next_batch)(void *st, eng_replica *r, eng_batch *out, int64_t now);
    void (*on_finish)(void *st, eng_replica *r, eng_request *rq, int64_t now);
    void (*on_batch_end)(void *st, eng_replica *r, const eng_batch *b, int64_t now); /* opt. */
    void (*fini)(void *st);                                                          /* optional */
    /* Debug walker: returns 0 when the policy's queues are consistent. Optional. */
    int (*check)(const void *st, const eng_replica *r);
    /* Disaggregated decode (a policy without pd_join cannot serve a decode pool). pd_admit: the
     * KV blocks rq, prefilled on another instance, must have reserved here before its KV is
     * sent, or -1 while the policy has no seat for it (`incoming` requests admitted that way,
     * with `incoming_tokens` prompt + output tokens, have not arrived yet; rq->pd_output is the
     * output it asks for, rq->output being 1 until it joins); optional, NULL: its prompt's
     * blocks and always a seat. pd_join: rq's KV has arrived and it decodes from the next step:
     * the engine puts it in the decode cohort right after this call; the policy counts it as
     * running. */
    int64_t (*pd_admit)(const void *st, const eng_replica *r, const eng_request *rq,
                        int64_t incoming, int64_t incoming_tokens);
    void (*pd_join)(void *st, eng_replica *r, eng_request *rq, int64_t now);
    /* Decode runs (optional: without them next_batch forms every step). run_steps is asked
     * right after next_batch formed a decode-only batch (the whole cohort, no prefill chunk, no
     * padding): the most consecutive decode steps, this one included, for which next_batch
     * would form that same batch again if nothing arrived, no member finished and each step's
     * KV blocks fit (eng_decode_blocks_needed() <= eng_kv_free()); 1 or less: none. The engine
     * may then run n of them (1 < n <= that) as one event, ending the run before the next
     * event of the simulation; on_run(n) then moves the policy's state as the n - 1 next_batch
     * and on_batch_end calls it skipped would have. on_run is optional (NULL: those calls would
     * have moved nothing); a policy with on_run must declare run_steps. */
    int64_t (*run_steps)(const void *st, const eng_replica *r);
    void (*on_run)(void *st, eng_replica *r, int64_t n);
    /* 1 when run_steps also answers right after members finished (their on_finish called, the
     * next batch not yet formed) for the batch of the members left: a run may then go on past
     * a step that finishes requests, without on_run or on_batch_end. 0: a finish ends a run. */
    int runs_past_finishes;
} eng_sched_ops;

/* The members every policy declares, named after its prefix P: P_params, P_on_arrival,
 * P_next_batch, P_on_finish and P_check, with state STATE and registry key NAME. A policy's
 * table opens with ENG_SCHED_OPS_BASE("name", prefix, state_type), then gives its summary and
 * the optional members it has (init among them). */
#define ENG_SCHED_OPS_BASE(NAME, P, STATE)                                                         \
    .name = NAME, .abi = ENG_SCHED_ABI, .state_size = sizeof(STATE), .params = P##_params,         \
    .on_arrival = P##_on_arrival, .next_batch = P##_next_batch, .on_finish = P##_on_finish,        \
    .check = P##_check
/* The members of a policy that serves a disaggregated decode pool and runs decode steps,
 * named after its prefix P: P_pd_admit, P_pd_join and P_run_steps. */
#define ENG_SCHED_OPS_DECODE(P)                                                                    \
    .pd_admit = P##_pd_admit, .pd_join = P##_pd_join, .run_steps = P##_run_steps

/* run_steps for a policy whose next batch is the same decode batch until a member finishes or a
 * request arrives (it reserves to completion, or nothing joins a running batch): any number of
 * steps, INT64_MAX. */
int64_t eng_sched_runs_unbounded(const void *st, const eng_replica *r);

/* Registry. */
const eng_sched_ops *eng_sched_find(const char *name);
const eng_sched_ops *const *eng_sched_all(size_t *n);
/* Refuses a table with a missing required op, a wrong ABI or a duplicate name: returns 0 when
 * the registry is sound, else -1 with a message in buf. */
int eng_sched_registry_check(char *buf, size_t len);
/* Looks a parameter up in ops' table; NULL when the policy does not declare it. */
const eng_param *eng_sched_param(const eng_sched_ops *ops, const char *key);
/* Does any registered policy declare key? */
int eng_sched_param_known(const char *key);
/* Checks a value's type and range; 0 when fine, else -1 with the reason in buf. */
int eng_param_validate(const eng_param *p, const char *val, char *buf, size_t len);

/* Reading settings in init: the scenario's value if given, else the default params (the
 * policy's table) declares for key. */
int64_t eng_cfg_int(const eng_sched_cfg *cfg, const eng_param *params, const char *key);
double eng_cfg_double(const eng_sched_cfg *cfg, const eng_param *params, const char *key);
const char *eng_cfg_str(const eng_sched_cfg *cfg, const eng_param *params, const char *key);
/* Fills the fields params declare (ENG_PARAM_AT) in the policy's state st from the scenario's
 * values or the defaults. */
void eng_cfg_load(const eng_sched_cfg *cfg, const eng_param *params, void *st);
/* The KV blocks kept free when admitting: the watermark parameter (ENG_PARAM_WATERMARK) of
 * r's cache. */
int64_t eng_cfg_watermark_blocks(const eng_sched_cfg *cfg, const eng_param *params,
                                 const eng_replica *r);
/* Starts a policy on replica r with its state st (zeroed): fills its parameters' fields, then
 * calls its init if it has one. 0, or init's -1. */
int eng_sched_start(const eng_sched_ops *ops, void *st, const eng_sched_cfg *cfg, eng_replica *r);
/* Sets or replaces key (returns -1 when the table is full). */
int eng_cfg_set(eng_sched_cfg *cfg, const char *key, const char *val);
const char *eng_cfg_get(const eng_sched_cfg *cfg, const char *key); /* NULL when unset */

#endif
