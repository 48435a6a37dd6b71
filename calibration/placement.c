/*
 * placement.c: the imbalance factor of expert placement (placement.h): the busiest
 * expert-parallel GPU's expected token-expert pairs over the mean, once per deployment.
 *
 * MODEL: expert popularity is a Zipf law over the experts' popularity ranks (rank i's share
 * proportional to i^-skew; AIConfigurator samples per-expert loads from a power law for the
 * same purpose, collect_moe.py: alpha 1.01 for DeepSeek-R1, 1.2 for Qwen3-235B; the DeepSeek-V3
 * report, section 3.4, and EPLB's README motivate redundant experts by such imbalance). A token
 * picks k distinct experts, so expert i takes q_i = min(1, c x share_i) of the tokens, c set so
 * that the q_i sum to k (water-filling: an expert cannot take more than every token).
 */
#include <math.h>
#include <stdlib.h>

#include "placement.h"
#include "sim.h"

/* The per-token selection probability of each expert by popularity rank, into q[0..E). */
static void loads(int E, int k, double skew, double *q)
{
    double sum = 0, left = k;
    for (int i = 0; i < E; i++)
        sum += q[i] = skew > 0 ? pow(i + 1, -skew) : 1.0;
    int sat = 0;
    while (sat < E && left * q[sat] / sum >= 1) {
        left -= 1;
        sum -= q[sat++];
    }
    for (int i = 0; i < E; i++)
        q[i] = i < sat ? 1 : left * q[i] / sum;
}

/* MODEL: static placement, as vLLM places experts without EPLB (fused_moe/layer.py,
 * determine_expert_map, "linear": rank r holds the contiguous experts r x E/ep ..): by index,
 * blind to popularity. The busiest GPU is the one holding the hottest expert; its other
 * E/ep - 1 experts are, in expectation over which experts are popular, at the mean of the
 * rest, (k - q_1) / (E - 1). It grows with q_1, so with the skew. */
static double static_factor(int E, int k, int ep, const double *q)
{
    double m = (double)E / ep;
    double hot = q[0] + (m - 1) * (k - q[0]) / (E - 1);
    return hot / ((double)k / ep);
}

typedef struct slot {
    double load; /* tokens per routed token this copy takes */
    int id;      /* physical slot, for a total order */
} slot;

static int by_load(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->load != y->load)
        return x->load < y->load ? 1 : -1;
    return x->id - y->id;
}

/* MODEL: DeepSeek's EPLB (github.com/deepseek-ai/EPLB, eplb.py; vLLM's and SGLang's
 * --enable-eplb run it), its global policy: replicate_experts gives each redundant slot to the
 * expert of the highest load per copy (first on ties), then balanced_packing sorts the copies
 * by load and puts each on the least loaded GPU that has room (each holds (E + R) / ep). The
 * loads are the expected ones (the statistics EPLB rebalances from, without their noise). */
static double eplb_factor(int E, int k, int ep, int R, const double *q)
{
    int P = E + R, per = P / ep;
    int *cnt = sim_xcalloc((size_t)E, sizeof *cnt);
    for (int i = 0; i < E; i++)
        cnt[i] = 1;
    for (int r = 0; r < R; r++) {
        int best = 0;
        for (int i = 1; i < E; i++)
            if (q[i] / cnt[i] > q[best] / cnt[best])
                best = i;
        cnt[best]++;
    }
    slot *s = sim_xcalloc((size_t)P, sizeof *s);
    for (int i = 0, n = 0; i < E; i++)
        for (int c = 0; c < cnt[i]; c++, n++)
            s[n] = (slot){q[i] / cnt[i], n};
    qsort(s, (size_t)P, sizeof *s, by_load);
    double *w = sim_xcalloc((size_t)ep, sizeof *w), hot = 0;
    int *items = sim_xcalloc((size_t)ep, sizeof *items);
    for (int j = 0; j < P; j++) {
        int best = -1;
        for (int g = 0; g < ep; g++)
            if (items[g] < per && (best < 0 || w[g] < w[best]))
                best = g;
        SIM_ASSERT(NULL, best >= 0);
        w[best] += s[j].load;
        items[best]++;
    }
    for (int g = 0; g < ep; g++)
        hot = w[g] > hot ? w[g] : hot;
    free(cnt);
    free(s);
    free(w);
    free(items);
    return hot / ((double)k / ep);
}

double cal_moe_imbalance(int experts, int topk, int ep, const eng_moe *m)
{
    if (ep <= 1 || experts < 2 || topk < 1 || (m->placement == ENG_MOE_STATIC && m->skew <= 0))
        return 1;
    SIM_ASSERT(NULL, (experts + m->redundant) % ep == 0);
    double *q = sim_xcalloc((size_t)experts, sizeof *q);
    loads(experts, topk, m->skew, q);
    double f = m->placement == ENG_MOE_EPLB ? eplb_factor(experts, topk, ep, m->redundant, q)
                                            : static_factor(experts, topk, ep, q);
    free(q);
    return f;
}
