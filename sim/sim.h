/*
 * sim.h: the discrete-event core's context, time, errors and asserts.
 *
 * The core knows nothing of LLMs. A simulation is one sim_ctx: create -> schedule -> run ->
 * destroy. There are no globals; every call takes the context. Time is int64 nanoseconds.
 *
 * Event order (the one line to remember): events run in increasing (time, priority, sequence)
 * order; a lower priority value runs first at equal times, and among equal (time, priority) the
 * event scheduled first runs first. Cancellation is lazy: a cancelled event stays queued as a
 * tombstone and is skipped when it reaches the front.
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#define SIM_NS_PER_US INT64_C(1000)
#define SIM_NS_PER_MS INT64_C(1000000)
#define SIM_NS_PER_S INT64_C(1000000000)
#define SIM_TIME_MAX INT64_MAX

typedef struct sim_ctx sim_ctx;
typedef uint64_t sim_event_id; /* the event's sequence number; 0 is never a valid id */

/* An event handler: obj and arg are what was given to sim_schedule. */
typedef void (*sim_handler)(sim_ctx *ctx, void *obj, int64_t arg);

/* Error report from a function that can fail because of the world (files, input, libraries). */
typedef struct sim_err {
    char msg[1024];
} sim_err;

/* Formats msg into e (if e is not NULL) and returns -1, so callers can `return sim_errf(...)`. */
int sim_errf(sim_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes e->msg with "prefix: " (for adding the file name at a boundary). Returns -1. */
int sim_err_prefix(sim_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The (at most k) names of valid[n] nearest to `name` (edit distance, case-insensitive; a
 * valid name starting with `name` counts as near), nearest first, as "a, b, c" into buf; ""
 * when none is near enough to be a likely misspelling. Returns buf. */
const char *sim_nearest(const char *name, const char *const *valid, int n, int k, char *buf,
                        size_t len);
/* The index of `name` among valid[0 .. n) (exact, case-sensitive match), or -1 when absent. */
int sim_name_index(const char *name, const char *const *valid, int n);

/* Allocation that never returns NULL: out of memory aborts here, in one place. */
void *sim_xmalloc(size_t n);
void *sim_xcalloc(size_t n, size_t size);
void *sim_xrealloc(void *p, size_t n);
char *sim_xstrdup(const char *s);
/* Frees each of the n pointers in p[] (a NULL one is skipped, as free skips it), in order. For
 * a destructor that is a run of free() calls: SIM_FREE_ALL(o->a, o->b, o) frees the members,
 * then the object. */
void sim_free_all(void *const *p, size_t n);
#define SIM_FREE_ALL(...)                                                                          \
    sim_free_all((void *const[]){__VA_ARGS__},                                                     \
                 sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* Creates a context whose random streams derive from seed. Never returns NULL. Free with
 * sim_free. */
sim_ctx *sim_new(uint64_t seed);
void sim_free(sim_ctx *ctx);

int64_t sim_now(const sim_ctx *ctx);           /* ns */
uint64_t sim_seed(const sim_ctx *ctx);         /* the seed given to sim_new */
uint64_t sim_events_run(const sim_ctx *ctx);   /* handlers run so far (tombstones not counted) */
size_t sim_events_pending(const sim_ctx *ctx); /* live events queued */

/* Schedules fn(ctx, obj, arg) at absolute time t >= now (checked always). Returns its id. */
sim_event_id sim_schedule(sim_ctx *ctx, int64_t t, int prio, sim_handler fn, void *obj,
                          int64_t arg);
/* sim_schedule for a stream whose events come one at a time, each scheduled by the one before
 * (a source's arrivals): the queue keeps one such event beside its heap, which spares the heap's
 * sifts. The events run in the same order, with the same ids, as with sim_schedule. */
sim_event_id sim_schedule_side(sim_ctx *ctx, int64_t t, int prio, sim_handler fn, void *obj,
                               int64_t arg);
/* Cancels a pending event; cancelling one that already ran or was cancelled is a no-op. */
void sim_cancel(sim_ctx *ctx, sim_event_id id);
/* Time of the next live event (SIM_TIME_MAX when none is queued): nothing happens before it
 * unless the running handler schedules it. */
int64_t sim_next_time(sim_ctx *ctx);

/* Moves the clock forward to t, as running an event at t would, for a handler that does at once
 * the work of an event it would otherwise schedule at t: t must not precede now, and no pending
 * event may come at or before t (both checked always), so nothing it does can run out of order.
 * Events scheduled afterwards must be at t or later. */
void sim_advance(sim_ctx *ctx, int64_t t);
/* sim_advance(ctx, t) when no pending event comes at or before t, returning 1; 0 (the clock
 * left) otherwise. t must not precede now (checked always). */
int sim_advance_before(sim_ctx *ctx, int64_t t);
/* In debug builds, the checks sim_run makes after each event (the queue's order, the walkers
 * every check_every-th time), for work a handler ran at once in place of an event it would have
 * scheduled (after sim_advance_before); nothing in other builds. */
#ifdef SIM_DEBUG
void sim_check_as_event(sim_ctx *ctx);
#else
static inline void sim_check_as_event(sim_ctx *ctx)
{
    (void)ctx;
}
#endif

/* Runs events until none is left, sim_stop is called, or the next event is after `until`.
 * Returns the number of events run. */
uint64_t sim_run(sim_ctx *ctx, int64_t until);
/* Asks sim_run to return after the current event. */
void sim_stop(sim_ctx *ctx);

/* In debug builds (SIM_DEBUG), fn(arg) runs after every event: the *_check() walkers. */
void sim_set_check(sim_ctx *ctx, void (*fn)(void *arg), void *arg);
/* Runs the walkers after every n-th event only (n >= 1; 1 by default): for long measurements in
 * debug builds, where a walk per event would dominate. */
void sim_set_check_every(sim_ctx *ctx, uint64_t n);

/* Seconds on a monotonic wall clock, for timing the program itself (never simulated time). */
double sim_wall_seconds(void);

/* Assert failure: prints file:line, the expression, simulated time and event number (ctx may be
 * NULL), then aborts. */
_Noreturn void sim_assert_fail(const sim_ctx *ctx, const char *file, int line, const char *expr);

/* Always-on check of an API precondition. */
#define SIM_CHECK(ctx, cond) ((cond) ? (void)0 : sim_assert_fail((ctx), __FILE__, __LINE__, #cond))
/* Debug-only invariant. */
#ifdef SIM_DEBUG
#define SIM_ASSERT(ctx, cond) SIM_CHECK(ctx, cond)
#else
#define SIM_ASSERT(ctx, cond) ((void)0)
#endif

#endif
