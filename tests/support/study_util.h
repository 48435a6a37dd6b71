/*
 * study_util.h: loading and running a scenario as the study-level tests do (through study.h),
 * each step failing the test with the loader's or the run's message, and a run that must be
 * refused naming what it lacks, and a capacity search or a recommendation set up and run.
 */
#ifndef LLMSIM_TESTS_STUDY_UTIL_H
#define LLMSIM_TESTS_STUDY_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study.h"
#include "study_recommend.h"

/* Loads the scenario file path with the overrides sets (NULL-terminated; NULL for none) into s
 * (the caller frees it with scn_free); the test fails with the loader's message when it cannot. */
static inline void su_load(const char *path, const char *const *sets, scn_scenario *s)
{
    int n = 0;
    while (sets && sets[n])
        n++;
    sim_err err = {{0}};
    if (study_load(path, sets, n, s, &err) != 0)
        fail_msg("%s", err.msg);
}

/* As su_load, the scenario's text given (path names it in messages and resolves its relative
 * paths). */
static inline void su_load_text(const char *path, const char *text, const char *const *sets,
                                scn_scenario *s)
{
    int n = 0;
    while (sets && sets[n])
        n++;
    sim_err err = {{0}};
    if (study_load_text(path, text, sets, n, s, &err) != 0)
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
