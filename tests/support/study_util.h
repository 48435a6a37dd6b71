/*
 * study_util.h: loading and running a scenario as the study-level tests do (through study.h),
 * each step failing the test with the loader's or the run's message, and a run that must be
 * refused naming what it lacks, and a capacity search or a recommendation set up and run; and
 * scenario text run with `--set`-style overrides, and tables of texts that must be refused.
 */
#ifndef LLMSIM_TESTS_STUDY_UTIL_H
#define LLMSIM_TESTS_STUDY_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study.h"
#include "study_recommend.h"

/* How many overrides sets (NULL-terminated; NULL for none) holds. */
static inline int su_nsets(const char *const *sets)
{
    int n = 0;
    while (sets && sets[n])
        n++;
    return n;
}

/* Loads the scenario file path with the overrides sets (NULL-terminated; NULL for none) into s
 * (the caller frees it with scn_free); the test fails with the loader's message when it cannot. */
static inline void su_load(const char *path, const char *const *sets, scn_scenario *s)
{
    sim_err err = {{0}};
    if (study_load(path, sets, su_nsets(sets), s, &err) != 0)
        fail_msg("%s", err.msg);
}

/* As su_load, the scenario's text given (path names it in messages and resolves its relative
 * paths). */
static inline void su_load_text(const char *path, const char *text, const char *const *sets,
                                scn_scenario *s)
{
    sim_err err = {{0}};
    if (study_load_text(path, text, sets, su_nsets(sets), s, &err) != 0)
        fail_msg("%s", err.msg);
}

/* Runs s at its own seed with hooks (may be NULL) into r; the test fails with the run's message
 * when the run fails. */
static inline void su_run(scn_scenario *s, const study_hooks *hooks, study_result *r)
{
    sim_err err = {{0}};
    if (study_run(s, s->seed, NULL, NULL, hooks, r, &err) != 0)
        fail_msg("%s", err.msg);
}

/* Runs s, which must be refused with a message holding what (the test fails otherwise); frees s. */
static inline void su_refused(scn_scenario *s, const char *what)
{
    sim_err err = {{0}};
    study_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    if (study_run(s, s->seed, NULL, NULL, NULL, r, &err) == 0)
        fail_msg("the run was not refused (expected '%s')", what);
    if (!strstr(err.msg, what))
        fail_msg("expected '%s' in: %s", what, err.msg);
    free(r);
    scn_free(s);
}

/* ---- scenario text ("test.yaml") with overrides ---- */

/* Runs text with sets (NULL-terminated), every 1024th event checked, into *r; -1 with the
 * message in err when it does not load or run. */
static inline int su_run_text(const char *text, const char *const *sets, study_result *r,
                              sim_err *err)
{
    scn_scenario s;
    if (study_load_text("test.yaml", text, sets, su_nsets(sets), &s, err) != 0)
        return -1;
    study_hooks h = {.check_every = 1024};
    int rc = study_run(&s, s.seed, NULL, NULL, &h, r, err);
    scn_free(&s);
    return rc;
}

/* The result of a run of text with sets that must succeed (the caller frees it). */
static inline study_result *su_must_run_text(const char *text, const char *const *sets)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    if (su_run_text(text, sets, r, &err) != 0)
        fail_msg("run: %s", err.msg);
    return r;
}

/* Metric name of r, which must have it. */
static inline double su_metric(const study_result *r, const char *name)
{
    double v = study_metric(r, name);
    if (isnan(v))
        fail_msg("no metric %s", name);
    return v;
}

/* Text with sets refused, at load or at run, with a message holding want. */
static inline void su_refused_text(const char *text, const char *const *sets, const char *want)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    if (su_run_text(text, sets, r, &err) != -1)
        fail_msg("accepted, where a refusal naming '%s' was expected:\n%s", want, text);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
    free(r);
}

/* A scenario text that must be refused, and a fragment of the refusal. */
typedef struct su_refusal {
    const char *text, *says;
} su_refusal;

/* Each of rows[0..n-1] refused (su_refused_text, no overrides). */
static inline void su_refused_all(const su_refusal *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        su_refused_text(rows[i].text, NULL, rows[i].says);
}

/* ---- capacity searches and recommendations ---- */

/* Clears c to a capacity search of the scenario text (NULL: read from file; file names it in
 * messages) under the SLOs slo, searched to precision, its engine checked every 4096
 * iterations. The test fails when slo does not parse. */
static inline void su_capacity_setup(study_capacity *c, const char *file, const char *text,
                                     const char *slo, double precision)
{
    memset(c, 0, sizeof *c);
    c->file = file;
    c->text = text;
    c->precision = precision;
    c->check_every = 4096;
    sim_err err;
    if (study_slo_parse(slo, c->slo, STUDY_MAX_SLO, &c->nslo, &err) != 0)
        fail_msg("%s", err.msg);
}

/* Clears r to a recommendation whose search is su_capacity_setup's, knobs not searched, the top
 * 4 kept: the caller names the GPUs and engines. */
static inline void su_recommend_setup(study_recommend *r, const char *file, const char *text,
                                      const char *slo, double precision)
{
    memset(r, 0, sizeof *r);
    su_capacity_setup(&r->cap, file, text, slo, precision);
    r->top = 4;
    r->no_knobs = 1;
}

/* Runs the recommendation r; the test fails with its message when it fails. */
static inline void su_recommend_run(study_recommend *r)
{
    sim_err err;
    if (study_recommend_run(r, &err) != 0)
        fail_msg("%s", err.msg);
}

#endif
