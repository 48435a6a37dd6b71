/*
 * measure.h: microbenchmark grids over one layer's operators, their measurement through the
 * kernels' benchmark driver into a profile, and the replay of one iteration's shape.
 *
 * A grid lists kernel shapes: token counts for the linear layers, norms and elementwise
 * operators (and the LM head, up to the emitting batch sizes a replica sees); (chunk, context)
 * for prefill attention; (sequences, context) for decode attention. Shapes whose buffers would
 * exceed the backend's memory cap are left out. The caller owns the arrays it gets.
 */
#ifndef CAL_MEASURE_H
#define CAL_MEASURE_H

#include <stdio.h>

#include "kernels.h"
#include "model.h"
#include "predictor.h"
#include "profile.h"
#include "sim.h"

/* quick: the default; full: about three times the shapes; smoke: a few shapes per operator,
 * to check the calibration pipeline on a machine in seconds (its fits are rough). */
typedef enum cal_grid_kind {
    CAL_GRID_QUICK = 0,
    CAL_GRID_FULL = 1,
    CAL_GRID_SMOKE = 2
} cal_grid_kind;

/* Parses "quick", "full" or "smoke"; 0, or -1. */
int cal_grid_parse(const char *s, cal_grid_kind *out);
/* The grid's name. */
const char *cal_grid_name(cal_grid_kind k);

/* The kernel dimensions of model m's layer (non-gated MLPs are measured as gated ones of half
 * the width for the up projection and activation, see measure.c). */
kern_dims cal_kern_dims(const eng_model *m);

/* The shapes of grid k for model m on backend be, in measuring order, into *out (free with
 * free()); returns how many. */
int cal_grid_shapes(const eng_model *m, cal_grid_kind k, kern_backend be, kern_shape **out);

/* The profile point coordinates of a kernel shape (op, x, y). */
void cal_shape_point(const kern_shape *s, cal_point *pt);

/*
 * Times every shape with the driver b (cfg NULL: the driver's defaults) and appends one point per
 * shape to p. When progress is not NULL, draws a progress bar there (what is being measured, how
 * many are done, elapsed and estimated time left); on a terminal it redraws one line, otherwise
 * it writes a line per operator. Returns 0, or -1 with err naming the shape that failed.
 */
int cal_measure_grid(kern_bench *b, const eng_model *m, const kern_shape *shapes, int n,
                     const kern_bench_cfg *cfg, cal_profile *p, FILE *progress, sim_err *err);

/*
 * Runs the operators of one forward pass of shape s for model m on driver b, the same operators
 * the predictors cost (one layer's operators timed once and multiplied by the layers, then the
 * final norm and the LM head for the emitting sequences; prefill attention as prefill_seqs
 * sequences of the mean chunk and context). Embedding, sampling and all-reduces have no kernel
 * and count 0. Sets *ns to the summed median times. Returns 0, or -1 with err.
 */
int cal_measure_pass(kern_bench *b, const eng_model *m, const eng_shape *s,
                     const kern_bench_cfg *cfg, double *ns, sim_err *err);

#endif
