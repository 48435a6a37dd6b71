/*
 * study_calibrate.h: making profiles and checking them: measure one layer's operators over a
 * grid on a benchmark backend, fit and store them; import another tool's profiling tables as a
 * profile; replay the batch shapes of a stored run on the backend against a profile.
 */
#ifndef STUDY_CALIBRATE_H
#define STUDY_CALIBRATE_H

#include <stdint.h>
#include <stdio.h>

#include "kernels.h"
#include "measure.h"
#include "study.h"

typedef struct study_calibration {
    const char *model; /* catalog name or config.json path */
    const char *out;   /* profile name; NULL: <backend>-<model>-<grid> */
    const char *gpu;   /* catalog GPU the profile stands for; NULL: from the device */
    const char *backend_name;
    kern_backend be;
    cal_grid_kind grid;
    uint64_t seed;       /* held-out selection */
    int replace;         /* replace a stored profile of the same name */
    const char *command; /* the command line, recorded as the profile's source */
    FILE *progress;      /* measuring progress (NULL: none) */
    int runs; /* timed calls per shape; 0: 5 to 30, until they add up to 20 ms (the default) */
    int graph_calls; /* cuda: N > 0 times replays of N calls captured in one graph; 0: eager */
} study_calibration;

/* Measures, fits and saves the profile into s. *out gets it (free with cal_profile_free) for
 * the caller's report. 0, or -1 with err; a profile of the same name is refused before anything
 * is measured unless c->replace. */
int study_calibrate(const study_calibration *c, store *s, cal_profile **out, sim_err *err);

typedef struct study_import {
    const char *dir, *gpu, *model; /* Vidur's tree, its GPU and model directory names */
    const char *as;                /* the llmsim model these tables measure; NULL: by name */
    const char *attention;         /* an attention.csv to use (NULL: the model's own) */
    const char *out;               /* profile name; NULL: vidur-<gpu>-<model>[-tp<T>] */
    int tp;
    uint64_t seed;
    int replace;
    const char *command;
} study_import;

/* Reads and fits Vidur's tables as a profile and saves it into the database db (opened only
 * then); note gets what was read. *out gets the profile (free with cal_profile_free). 0, or -1
 * with err. */
int study_import_vidur(const study_import *im, const char *db, cal_profile **out, char *note,
                       size_t notelen, sim_err *err);

typedef struct study_replay_out {
    int n;              /* iterations replayed */
    int64_t iterations; /* stored for the run */
    char profile[128];  /* the profile replayed against */
    char model[64];
    double med_ape, p95_ape; /* absolute percentage error of predicted vs measured, % */
} study_replay_out;

typedef struct study_replay {
    int64_t run;
    int max_iters;
    const char *profile; /* NULL: the one the run used */
    const char *model;   /* NULL: the run's */
    const char *backend_name;
    kern_backend be;
    /* told of every replayed iteration, with out's n, iterations, profile and model filled
     * (may be NULL) */
    void (*row)(void *arg, const study_replay_out *out, int i, const eng_shape *sh, double meas_ns,
                double pred_ns);
    void *row_arg;
} study_replay_spec;

/* Re-executes up to max_iters of run's stored iterations (evenly spaced) on the backend and
 * compares the measured pass times with the profile's predictions. 0, or -1 with err. */
int study_replay(const study_replay_spec *r, store *s, study_replay_out *out, sim_err *err);

/* A profile as text (study/proftext.c), to ship a measured profile with the code and use it on
 * another machine: the metadata as "# key: value" lines after the line
 * "# llmsim profile, text format 1", then the CSV columns op,x,y,t_ns,p10_ns,p90_ns,runs and one
 * row per point (numbers that read back to the bit). No fits: importing refits the points with
 * the recorded seed. */

/* Writes p as text to f. 0, or -1 when writing failed. */
int study_profile_write(const cal_profile *p, FILE *f);

/* Reads a profile text: metadata and points, no fits, dims unset. *out gets it (free with
 * cal_profile_free). 0, or -1 with err naming the file, the line and what was expected. */
int study_profile_read(const char *path, cal_profile **out, sim_err *err);

typedef struct study_profile_in {
    const char *path; /* the profile text */
    const char *db;   /* the database to store it in (opened once the text is read and fitted) */
    const char *out;  /* the stored name; NULL: the text's */
    int replace;      /* replace a stored profile of the same name */
} study_profile_in;

/* Reads the text, takes the model's sizes from the catalog (or config.json path) it names, fits
 * the points with the recorded seed and stores the profile, its creation time kept. *out gets
 * it (free with cal_profile_free). 0, or -1 with err; nothing is written on failure. */
int study_profile_import(const study_profile_in *in, cal_profile **out, sim_err *err);

#endif
