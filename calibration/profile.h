/*
 * profile.h: fitted cost profiles: measured or imported operator timings, a fit per operator,
 * the held-out report, and the predictor that costs iterations from them.
 *
 * A profile holds points (one operator at one shape, with its median time) for the operators of
 * one layer and the LM head. cal_profile_fit holds out a seeded random 20% of each operator's
 * points, fits two forms to the rest and keeps, per operator, the one with the lower median
 * absolute percentage error on the held-out points:
 *   - "roofline": a launch cost plus compute and memory terms linear in the shape's work
 *     (tokens for linear and elementwise operators; query-key pairs, keys and tokens for prefill
 *     attention; keys and sequences for decode attention), with a hinge where a linear layer
 *     turns from memory-bound to compute-bound; weighted least squares (GSL) on relative error;
 *   - "interp": piecewise-linear interpolation over the measured grid (bilinear for the
 *     two-dimensional attention grids), with the roofline form, scaled to meet the grid's edge,
 *     beyond it.
 * Shape coordinates per operator: linear and elementwise operators x = tokens (rows), y = 0;
 * allreduce and send_recv x = bytes per GPU, y = 0;
 * attn_prefill x = chunk tokens, y = context before the chunk; attn_decode x = sequences,
 * y = cached tokens per sequence (including the new one).
 * A profile owns its arrays; cal_profile_free releases everything.
 */
#ifndef CAL_PROFILE_H
#define CAL_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "predictor.h"
#include "sim.h"

/* Operators a profile may hold: the kernels' kern_op values 0..10 (qkv_proj .. add), then
 * embed (11), and from imported network tables allreduce (13) and send_recv (14). Index 12
 * (sample) is never measured. */
#define CAL_PROFILE_OPS 15
#define CAL_PROFILE_OP_EMBED 11
#define CAL_PROFILE_OP_ALLREDUCE 13
#define CAL_PROFILE_OP_SEND_RECV 14

typedef enum cal_form { CAL_FORM_ROOFLINE = 0, CAL_FORM_INTERP = 1, CAL_FORM_COUNT } cal_form;

#define CAL_MAX_COEF 5

typedef struct cal_point {
    int op;        /* kern_op, or 11 = embed */
    double x, y;   /* shape coordinates (see above) */
    double t_ns;   /* median time */
    double p10_ns; /* spread: 10th and 90th percentiles (0 when unknown) */
    double p90_ns;
    int runs;     /* timed calls behind the median (0 when unknown) */
    int held_out; /* 1: kept out of the fit, used for its error */
} cal_point;

typedef struct cal_fit {
    int op;
    cal_form form;             /* the chosen form */
    int ncoef;                 /* roofline form coefficients */
    double coef[CAL_MAX_COEF]; /* see fit.c for each operator's features */
    double knee;               /* hinge position of the roofline form (x units; 0 = none) */
    int n_train, n_held;
    double med_ape[CAL_FORM_COUNT]; /* held-out median absolute percentage error, per form */
    double p95_ape[CAL_FORM_COUNT]; /* held-out 95th percentile, per form */
} cal_fit;

typedef struct cal_profile {
    char name[64];
    char kind[16];      /* "measured" or "imported" */
    char backend[16];   /* "cpu", "cuda", or the source tool ("vidur") */
    char model[64];     /* llmsim model name (catalog name or config directory) */
    char gpu[32];       /* catalog GPU name, or "cpu" */
    char device[256];   /* the device as the benchmark driver or the source describes it */
    char versions[256]; /* program and library versions */
    char source[512];   /* command line or imported files */
    char created[32];   /* ISO 8601 UTC; set by the store when empty */
    char dtype[8];      /* element type measured: "fp32", "fp16", "bf16" */
    eng_model dims;     /* the model measured (sizes of one GPU's shard when tp > 1) */
    int tp;             /* tensor-parallel degree the timings were taken at */
    uint64_t seed;      /* held-out selection */
    cal_point *pts;
    int npts, cap;
    cal_fit fits[CAL_PROFILE_OPS];
    int has_fit[CAL_PROFILE_OPS];
    double med_ape, p95_ape; /* over every held-out point of every operator */
} cal_profile;

/* A new empty profile named name (never NULL). Free with cal_profile_free. */
cal_profile *cal_profile_new(const char *name);
void cal_profile_free(cal_profile *p);

/* Appends a point (copied). */
void cal_profile_add_point(cal_profile *p, const cal_point *pt);

/* Name of a profile operator index ("qkv_proj", ..., "add", "embed"), or "?"; and the index of a
 * name, or -1. */
const char *cal_profile_op_name(int op);
int cal_profile_op_parse(const char *name);
const char *cal_form_name(cal_form f);
int cal_form_parse(const char *name);

/*
 * Holds out a random 20% of each operator's points (drawn from seed; at least one when an
 * operator has five or more points, none below that) and fits every operator with points.
 * Sets p->seed, the fits and the overall errors. Returns 0, or -1 with err when an operator has
 * too few training points for its form or GSL fails (the message names the operator).
 */
int cal_profile_fit(cal_profile *p, uint64_t seed, sim_err *err);

/* Time in ns of operator op at shape (x, y) by its fit; -1 when the op has no fit. */
double cal_profile_op_ns(const cal_profile *p, int op, double x, double y);

/* Prints the fit report (per operator: points, form, held-out median and p95 APE of both forms;
 * overall) to f. */
void cal_profile_report(const cal_profile *p, FILE *f);

/*
 * Builds a predictor costing iterations of model m with tensor parallelism tp from profile p
 * (which must outlive the predictor). A profile measures one dense Llama-style layer, so a model
 * cal_roofline_priced refuses (MoE, MLA, windows that bind, ...) is refused here too, naming the
 * feature. The profile must have been taken at the same tp and for the same layer sizes as m
 * (else -1 with err naming both). Operators the profile has no fit
 * for (LM head, attention, embedding and sampling in tables without them) and tensor-parallel
 * all-reduces are costed by the roofline of the profile's GPU when it is in the catalog, and
 * are 0 otherwise; cal_profile_unmeasured lists them. g (may be NULL) gives the PCIe bandwidth
 * for swap transfers when the profile's GPU is not in the catalog (a CPU profile). Label: "profile
 * NAME (KIND BACKEND MODEL on DEVICE-or-GPU)". Free with cal_predictor_free.
 */
int cal_profile_predictor_new(const cal_profile *p, const eng_model *m, eng_dtype dt, int tp,
                              const eng_gpu *g, eng_predictor *out, sim_err *err);

/* The same, but the predictor takes ownership of p: cal_predictor_free frees it, and so does a
 * failure here. */
int cal_profile_predictor_take(cal_profile *p, const eng_model *m, eng_dtype dt, int tp,
                               const eng_gpu *g, eng_predictor *out, sim_err *err);

/* Writes the names of the operators of a pass that p does not measure, comma-separated, into
 * buf ("" when none). Returns buf. */
const char *cal_profile_unmeasured(const cal_profile *p, char *buf, size_t len);

#endif
