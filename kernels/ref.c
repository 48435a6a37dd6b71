/* ref.c: the C reference of every kernel, fp32, written to be checked by eye.
 * Each function is the textbook formula; kern_cpu_* and kern_cuda_* are tested against these.
 * The caller owns every buffer; nothing is allocated except one score row in attention. */
#include <math.h>
#include <stdlib.h>

#include "kernels_int.h"

void kern_ref_linear(const float *x, const float *w, float *y, int m, int k, int n)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int p = 0; p < k; p++)
                acc += (double)x[(size_t)i * k + p] * w[(size_t)j * k + p];
            y[(size_t)i * n + j] = (float)acc;
        }
}

void kern_ref_rmsnorm(const float *x, const float *w, float *y, int tokens, int hidden, float eps)
{
    for (int t = 0; t < tokens; t++) {
        const float *xr = x + (size_t)t * hidden;
        double ss = 0.0;
        for (int i = 0; i < hidden; i++)
            ss += (double)xr[i] * xr[i];
        double inv = 1.0 / sqrt(ss / hidden + eps);
        for (int i = 0; i < hidden; i++)
            y[(size_t)t * hidden + i] = (float)(xr[i] * inv * w[i]);
    }
}

void kern_ref_silu_mul(const float *x, float *y, int tokens, int inter)
{
    for (int t = 0; t < tokens; t++)
        for (int i = 0; i < inter; i++) {
            double g = x[(size_t)t * 2 * inter + i];
            double u = x[(size_t)t * 2 * inter + inter + i];
            y[(size_t)t * inter + i] = (float)(g / (1.0 + exp(-g)) * u);
        }
}

void kern_ref_add(const float *a, const float *b, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

void kern_ref_rope(float *x, const int32_t *pos, int tokens, int heads, int d, float theta)
{
    int half = d / 2;
    for (int t = 0; t < tokens; t++)
        for (int h = 0; h < heads; h++) {
            float *v = x + ((size_t)t * heads + h) * d;
            for (int i = 0; i < half; i++) {
                double inv_freq = pow((double)theta, -2.0 * i / d);
                double ang = pos[t] * inv_freq;
                double a = v[i], b = v[i + half];
                v[i] = (float)(a * cos(ang) - b * sin(ang));
                v[i + half] = (float)(b * cos(ang) + a * sin(ang));
            }
        }
}

/* o = softmax(scale * q . K[0..n)^T) V for one query vector; krow[j], vrow[j] point at key and
 * value j; s holds n scores. */
static void attend_one(const float *q, const float *const *krow, const float *const *vrow, int n,
                       int d, float scale, float *o, double *s)
{
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j < n; j++) {
        double dot = 0.0;
        for (int c = 0; c < d; c++)
            dot += (double)q[c] * krow[j][c];
        s[j] = dot * scale;
        if (s[j] > mx)
            mx = s[j];
    }
    for (int j = 0; j < n; j++) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
    }
    for (int c = 0; c < d; c++) {
        double acc = 0.0;
        for (int j = 0; j < n; j++)
            acc += s[j] * vrow[j][c];
        o[c] = (float)(acc / sum);
    }
}

void kern_ref_attn_prefill(const float *q, const float *k, const float *v, float *o, int chunk,
                           int context, int nh, int nkv, int d, float scale)
{
    int total = context + chunk, group = nh / nkv;
    double *s = kern_xmalloc(sizeof(double) * (size_t)total);
    const float **kr = kern_xmalloc(sizeof(float *) * (size_t)total);
    const float **vr = kern_xmalloc(sizeof(float *) * (size_t)total);
    for (int i = 0; i < chunk; i++)
        for (int h = 0; h < nh; h++) {
            int kvh = h / group, n = context + i + 1; /* causal: keys up to our own position */
            for (int j = 0; j < n; j++) {
                kr[j] = k + ((size_t)j * nkv + kvh) * d;
                vr[j] = v + ((size_t)j * nkv + kvh) * d;
            }
            attend_one(q + ((size_t)i * nh + h) * d, kr, vr, n, d, scale,
                       o + ((size_t)i * nh + h) * d, s);
        }
    free(vr);
    free(kr);
    free(s);
}

void kern_ref_attn_decode(const float *q, const float *k_cache, const float *v_cache,
                          const int32_t *block_tables, int max_blocks, const int32_t *context_lens,
                          float *o, int batch, int nh, int nkv, int d, int block_size, float scale)
{
    int group = nh / nkv, maxlen = 0;
    for (int b = 0; b < batch; b++)
        if (context_lens[b] > maxlen)
            maxlen = context_lens[b];
    double *s = kern_xmalloc(sizeof(double) * (size_t)maxlen);
    const float **kr = kern_xmalloc(sizeof(float *) * (size_t)maxlen);
    const float **vr = kern_xmalloc(sizeof(float *) * (size_t)maxlen);
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < nh; h++) {
            int kvh = h / group, n = context_lens[b];
            for (int j = 0; j < n; j++) {
                size_t blk = (size_t)block_tables[(size_t)b * max_blocks + j / block_size];
                size_t row = (blk * block_size + j % block_size) * nkv + kvh;
                kr[j] = k_cache + row * d;
                vr[j] = v_cache + row * d;
            }
            attend_one(q + ((size_t)b * nh + h) * d, kr, vr, n, d, scale,
                       o + ((size_t)b * nh + h) * d, s);
        }
    free(vr);
    free(kr);
    free(s);
}
