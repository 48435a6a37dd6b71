/*
 * records.h: the engine's records (requests, iterations) compared field by field, each field
 * named once in a table: a run against a rerun, or a stored record against what was written.
 */
#ifndef LLMSIM_TESTS_RECORDS_H
#define LLMSIM_TESTS_RECORDS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"

/* A field of a record: its name, where it lies, its size (4 or 8 bytes), and whether it is a
 * double (else a signed integer). */
typedef struct rec_field {
    const char *name;
    size_t off, size;
    int real;
} rec_field;

#define REC_FIELD(type, f, is_real)                                                                \
    {                                                                                              \
        .name = #f, .off = offsetof(type, f), .size = sizeof(((type *)0)->f), .real = is_real      \
    }
#define RQ_F(f) REC_FIELD(eng_request, f, 0)
#define IT_F(f) REC_FIELD(eng_iter_rec, f, 0)
#define SH_F(f) REC_FIELD(eng_iter_rec, shape.f, 0)
#define SH_D(f) REC_FIELD(eng_iter_rec, shape.f, 1)

/* What the store keeps of a request. */
static const rec_field rec_request_fields[] = {
    RQ_F(id),       RQ_F(replica),     RQ_F(prompt),        RQ_F(output),       RQ_F(status),
    RQ_F(reject),   RQ_F(t_arrival),   RQ_F(t_first_sched), RQ_F(t_last_sched), RQ_F(t_first_token),
    RQ_F(t_finish), RQ_F(preemptions), RQ_F(scheduled)};

/* What the store keeps of an iteration, its shape's sums included. */
static const rec_field rec_iter_fields[] = {
    IT_F(replica),       IT_F(iter),           IT_F(start_ns),       IT_F(cpu_ns),
    IT_F(gpu_ns),        IT_F(duration_ns),    IT_F(num_seqs),       IT_F(prefill_tokens),
    IT_F(decode_tokens), IT_F(kv_blocks_used), IT_F(preempted),      SH_F(tokens),
    SH_F(num_seqs),      SH_F(prefill_seqs),   SH_F(prefill_tokens), SH_D(prefill_pairs),
    SH_D(prefill_kv),    SH_D(prefill_q2),     SH_F(decode_seqs),    SH_F(decode_ctx),
    SH_F(emit_seqs)};

#define REC_NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static inline double rec_value(const void *r, const rec_field *f)
{
    const char *p = (const char *)r + f->off;
    if (f->real)
        return *(const double *)p;
    if (f->size == 8)
        return (double)*(const int64_t *)p;
    return (double)*(const int32_t *)p;
}

/* Fails unless records a and e (the `what` number i) agree in each of the n fields (bit for bit),
 * naming the first field that differs and both values. */
static inline void rec_check(const char *what, long i, const void *a, const void *e,
                             const rec_field *fields, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const rec_field *f = &fields[k];
        if (memcmp((const char *)a + f->off, (const char *)e + f->off, f->size) != 0)
            fail_msg("%s %ld: %s is %.17g, expected %.17g", what, i, f->name, rec_value(a, f),
                     rec_value(e, f));
    }
}

#endif
