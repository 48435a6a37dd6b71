/*
 * scn_runs.h: helpers of the end-to-end tests that run scenario text through study/ with
 * `--set`-style overrides, and tables of texts that must be refused (included by test_offload.c,
 * test_pipeline.c, test_mixed.c and test_mixed_pd.c after cmocka.h and study.h).
 */
#ifndef TESTS_SCN_RUNS_H
#define TESTS_SCN_RUNS_H

/* Loads text with sets (NULL-terminated) into *s; -1 with the message in err. */
static inline int load_sets(const char *text, const char *const *sets, scn_scenario *s,
                            sim_err *err)
{
    int n = 0;
    while (sets && sets[n])
        n++;
    return scn_load_text("test.yaml", text, sets, n, study_resolver(), s, err);
}

/* Runs text with sets, every 1024th event checked, into *r; -1 with the message in err when it
 * does not load or run. */
static inline int run_sets(const char *text, const char *const *sets, study_result *r, sim_err *err)
{
    scn_scenario s;
    if (load_sets(text, sets, &s, err) != 0)
        return -1;
    study_hooks h = {.check_every = 1024};
    int rc = study_run(&s, s.seed, NULL, NULL, &h, r, err);
    scn_free(&s);
    return rc;
}

/* The result of a run that must succeed (free it). */
static inline study_result *must_run_sets(const char *text, const char *const *sets)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    if (run_sets(text, sets, r, &err) != 0)
        fail_msg("run: %s", err.msg);
    return r;
}

/* Metric name of r, which must have it. */
static inline double metric_of(const study_result *r, const char *name)
{
    double v = study_metric(r, name);
    if (isnan(v))
        fail_msg("no metric %s", name);
    return v;
}

/* A run refused with a message holding want. */
static inline void refused_sets(const char *text, const char *const *sets, const char *want)
{
    study_result *r = calloc(1, sizeof *r);
    sim_err err;
    if (run_sets(text, sets, r, &err) != -1)
        fail_msg("accepted, where a refusal naming '%s' was expected:\n%s", want, text);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
    free(r);
}

/* A scenario text that must be refused, and a fragment of the refusal. */
typedef struct scn_refusal {
    const char *text, *says;
} scn_refusal;

/* Each of rows[0..n-1] refused (refused_sets, no overrides). */
static inline void refused_all(const scn_refusal *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        refused_sets(rows[i].text, NULL, rows[i].says);
}

#endif
