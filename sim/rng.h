/*
 * rng.h: independent random streams, one per purpose, all derived from the run's seed.
 *
 * Each stream is a GSL generator (MT19937) seeded with splitmix64(seed, stream), so the draws of
 * one purpose (say, arrivals) do not depend on how many draws another purpose (say, a
 * scheduler's tie-breaks) made: changing the scheduler never changes the workload it sees.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#include "sim.h"

typedef enum sim_stream {
    SIM_STREAM_ARRIVALS = 0, /* inter-arrival times */
    SIM_STREAM_PROMPT,       /* prompt lengths */
    SIM_STREAM_OUTPUT,       /* output lengths */
    SIM_STREAM_ROUTER,       /* replica choice */
    SIM_STREAM_SCHED,        /* scheduler-internal randomness */
    SIM_STREAM_SERVICE,      /* service times of generic queueing models */
    SIM_STREAM_TRACE,        /* trace sampling (empirical distributions) */
    SIM_STREAM_CLIENT,       /* closed-loop think times */
    SIM_STREAM_ACCEPT,       /* speculative decoding: draft tokens accepted per step */
    SIM_STREAM_SPEC_CLASS,   /* speculative decoding: a request's acceptance class */
    SIM_STREAM_WORK_CLASS,   /* workload classes: a request's class (priority, SLO) */
    SIM_STREAM_COUNT
} sim_stream;

/* The generator of one stream of ctx; owned by ctx. */
gsl_rng *sim_rng(sim_ctx *ctx, sim_stream s);

/* The 64-bit seed a stream gets from a run seed (exposed for tests and for workload builders
 * that run outside a context). */
uint64_t sim_stream_seed(uint64_t seed, unsigned stream);

/* A new generator seeded for (seed, stream); the caller frees it with gsl_rng_free. */
gsl_rng *sim_rng_new_stream(uint64_t seed, unsigned stream);

/* SplitMix64 step: a well-mixed 64-bit value from x. */
uint64_t sim_splitmix64(uint64_t x);

#endif
