/*
 * sim.c: the simulation context: clock, event loop, random streams, errors and allocation.
 *
 * The context owns its event queue and its generators. The clock only moves forward: it is set
 * to each event's time as the event is popped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evq.h"
#include "rng.h"
#include "sim.h"

struct sim_ctx {
    int64_t now; /* ns */
    uint64_t seed;
    uint64_t events_run;
    int stop;
    sim_evq *q;
    gsl_rng *rng[SIM_STREAM_COUNT];
    sim_mt *mt[SIM_STREAM_COUNT]; /* the streams drawn inline (sim_mt_of) */
    void (*check)(void *);
    void *check_arg;
    uint64_t check_every;    /* the walkers run after every check_every-th event */
    uint64_t checked_inline; /* work run in place of an event (sim_check_as_event) */
};

int sim_errf(sim_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int sim_err_prefix(sim_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    char pre[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(pre);
    if (n > sizeof e->msg - 3)
        n = sizeof e->msg - 3;
    memcpy(e->msg, pre, n);
    memcpy(e->msg + n, ": ", 2);
    size_t rest = sizeof e->msg - n - 2;
    strncpy(e->msg + n + 2, old, rest - 1);
    e->msg[sizeof e->msg - 1] = '\0';
    return -1;
}

static _Noreturn void out_of_memory(size_t n)
{
    fprintf(stderr, "llmsim: out of memory allocating %zu bytes\n", n);
    abort();
}

void *sim_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *sim_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *sim_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *sim_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sim_xmalloc(n), s, n);
}

void sim_free_all(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}

sim_ctx *sim_new(uint64_t seed)
{
    sim_ctx *ctx = sim_xcalloc(1, sizeof *ctx);
    ctx->seed = seed;
    ctx->q = sim_evq_new();
    ctx->check_every = 1;
    return ctx;
}

void sim_free(sim_ctx *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < SIM_STREAM_COUNT; i++)
        if (ctx->rng[i])
            gsl_rng_free(ctx->rng[i]);
    for (int i = 0; i < SIM_STREAM_COUNT; i++)
        free(ctx->mt[i]);
    sim_evq_free(ctx->q);
    free(ctx);
}

int64_t sim_now(const sim_ctx *ctx)
{
    return ctx->now;
}

uint64_t sim_seed(const sim_ctx *ctx)
{
    return ctx->seed;
}

uint64_t sim_events_run(const sim_ctx *ctx)
{
    return ctx->events_run;
}

size_t sim_events_pending(const sim_ctx *ctx)
{
    return sim_evq_size(ctx->q);
}

gsl_rng *sim_rng(sim_ctx *ctx, sim_stream s)
{
    SIM_CHECK(ctx, (unsigned)s < SIM_STREAM_COUNT);
    if (!ctx->rng[s])
        ctx->rng[s] = sim_rng_new_stream(ctx->seed, (unsigned)s);
    return ctx->rng[s];
}

sim_mt *sim_mt_of(sim_ctx *ctx, sim_stream s)
{
    SIM_CHECK(ctx, (unsigned)s < SIM_STREAM_COUNT);
    if (!ctx->mt[s]) {
        ctx->mt[s] = sim_xmalloc(sizeof *ctx->mt[s]);
        sim_mt_stream(ctx->mt[s], ctx->seed, (unsigned)s);
    }
    return ctx->mt[s];
}

sim_event_id sim_schedule(sim_ctx *ctx, int64_t t, int prio, sim_handler fn, void *obj, int64_t arg)
{
    SIM_CHECK(ctx, t >= ctx->now);
    SIM_CHECK(ctx, fn != NULL);
    return sim_evq_push(ctx->q, t, prio, fn, obj, arg);
}

sim_event_id sim_schedule_side(sim_ctx *ctx, int64_t t, int prio, sim_handler fn, void *obj,
                               int64_t arg)
{
    SIM_CHECK(ctx, t >= ctx->now);
    SIM_CHECK(ctx, fn != NULL);
    return sim_evq_push_side(ctx->q, t, prio, fn, obj, arg);
}

void sim_cancel(sim_ctx *ctx, sim_event_id id)
{
    sim_evq_cancel(ctx->q, id);
}

void sim_stop(sim_ctx *ctx)
{
    ctx->stop = 1;
}

void sim_set_check(sim_ctx *ctx, void (*fn)(void *arg), void *arg)
{
    ctx->check = fn;
    ctx->check_arg = arg;
}

void sim_set_check_every(sim_ctx *ctx, uint64_t n)
{
    ctx->check_every = n > 0 ? n : 1;
}

double sim_wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int64_t sim_next_time(sim_ctx *ctx)
{
    return sim_evq_peek_time(ctx->q);
}

void sim_advance(sim_ctx *ctx, int64_t t)
{
    SIM_CHECK(ctx, t >= ctx->now && t < sim_evq_peek_time(ctx->q));
    ctx->now = t;
}

int sim_advance_before(sim_ctx *ctx, int64_t t)
{
    SIM_CHECK(ctx, t >= ctx->now);
    if (t >= sim_evq_peek_time(ctx->q))
        return 0;
    ctx->now = t;
    return 1;
}

#ifdef SIM_DEBUG
void sim_check_as_event(sim_ctx *ctx)
{
    SIM_ASSERT(ctx, sim_evq_check(ctx->q) == 0 || !"event queue out of order");
    if (ctx->check && ++ctx->checked_inline % ctx->check_every == 0)
        ctx->check(ctx->check_arg);
}
#endif

uint64_t sim_run(sim_ctx *ctx, int64_t until)
{
    uint64_t n = 0;
    sim_event ev;
    ctx->stop = 0;
    while (!ctx->stop && sim_evq_pop_until(ctx->q, until, &ev)) {
        SIM_ASSERT(ctx, ev.t >= ctx->now);
        ctx->now = ev.t;
        ctx->events_run++;
        n++;
        ev.fn(ctx, ev.obj, ev.arg);
#ifdef SIM_DEBUG
        SIM_ASSERT(ctx, sim_evq_check(ctx->q) == 0 || !"event queue out of order");
        if (ctx->check && ctx->events_run % ctx->check_every == 0)
            ctx->check(ctx->check_arg);
#endif
    }
    return n;
}

_Noreturn void sim_assert_fail(const sim_ctx *ctx, const char *file, int line, const char *expr)
{
    if (ctx)
        fprintf(stderr, "%s:%d: assertion failed: %s (t=%lld ns, event %llu)\n", file, line, expr,
                (long long)ctx->now, (unsigned long long)ctx->events_run);
    else
        fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
