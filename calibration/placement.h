/*
 * placement.h: how unevenly routed experts load the expert-parallel GPUs.
 *
 * An expert-parallel MoE layer waits for its busiest GPU. With expert popularity skewed (a Zipf
 * law over the experts' popularity ranks), the busiest GPU's token-expert pairs exceed the
 * mean; EPLB's placement (replicate the heaviest experts, pack the slots by load) brings them
 * back toward it. The imbalance factor is computed once per deployment, never per step.
 */
#ifndef CAL_PLACEMENT_H
#define CAL_PLACEMENT_H

#include "model.h"

/*
 * The busiest expert-parallel GPU's expected token-expert pairs over the mean's (>= 1 up to
 * the packing's rounding) for `experts` routed experts, `topk` chosen per token, spread over
 * `ep` GPUs with placement, redundant slots and skew m. Exactly 1 when ep <= 1 or when the
 * placement is static and the skew 0. The caller checks the layout first (eng_layout_check):
 * experts, topk >= 1, (experts + redundant) a multiple of ep; no failure otherwise.
 */
double cal_moe_imbalance(int experts, int topk, int ep, const eng_moe *m);

#endif
