/* cpu.c: the CPU backend, fp32, fast enough to calibrate with.
 * Linear layers are one OpenBLAS sgemm. Attention is blockwise with an online softmax (the
 * FlashAttention recurrence), so no score matrix larger than a tile is ever held: keys are
 * gathered 64 at a time by row pointer (contiguous for prefill, through the block table for
 * decode), transposed once per tile and shared by every query row of a GQA group.
 * Only sgemm is multi-threaded (OpenBLAS's own threads); the rest runs on the calling thread.
 * MODEL: timings must be smooth in the shape to be fitted, and an OpenMP team on a small VM
 * added wake-up stalls of several ms to small attention calls, so attention stays serial.
 * The caller owns every buffer; scratch is allocated per work item and freed before return. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels_int.h"

enum { KT = 64, QT = 32 }; /* keys per tile; prefill queries per work item */

void kern_cpu_linear(const float *x, const float *w, float *y, int m, int k, int n)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
}

void kern_cpu_rmsnorm(const float *x, const float *w, float *y, int tokens, int hidden, float eps)
{
    for (int t = 0; t < tokens; t++) {
        const float *xr = x + (size_t)t * hidden;
        float *yr = y + (size_t)t * hidden;
        float ss = 0.0f;
        for (int i = 0; i < hidden; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)hidden + eps);
        for (int i = 0; i < hidden; i++)
            yr[i] = xr[i] * inv * w[i];
    }
}

void kern_cpu_silu_mul(const float *x, float *y, int tokens, int inter)
{
    for (int t = 0; t < tokens; t++) {
        const float *g = x + (size_t)t * 2 * inter, *u = g + inter;
        float *yr = y + (size_t)t * inter;
        for (int i = 0; i < inter; i++)
            yr[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
    }
}

void kern_cpu_add(const float *a, const float *b, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

void kern_cpu_rope(float *x, const int32_t *pos, int tokens, int heads, int d, float theta)
{
    int half = d / 2;
    for (int t = 0; t < tokens; t++) {
        float *cs = kern_xmalloc(sizeof(float) * (size_t)d), *sn = cs + half;
        for (int i = 0; i < half; i++) { /* one angle per pair, shared by every head */
            double ang = pos[t] * pow((double)theta, -2.0 * i / d);
            cs[i] = (float)cos(ang);
            sn[i] = (float)sin(ang);
        }
        for (int h = 0; h < heads; h++) {
            float *v = x + ((size_t)t * heads + h) * d;
            for (int i = 0; i < half; i++) {
                float a = v[i], b = v[i + half];
                v[i] = a * cs[i] - b * sn[i];
                v[i + half] = b * cs[i] + a * sn[i];
            }
        }
        free(cs);
    }
}

/* Online-softmax state of `rows` query rows: running max m, running sum l, unnormalised acc. */
typedef struct attn_rows {
    int rows, d;
    const float **q; /* [rows] query vectors */
    int *limit;      /* [rows] keys of the current tile the row may see */
    float *m, *l;    /* [rows] */
    float *acc;      /* [rows][d] */
    float *kt;       /* [d][KT] transposed key tile */
    float s[KT];     /* scores of one row */
} attn_rows;

static attn_rows *rows_new(int rows, int d)
{
    attn_rows *r = kern_xcalloc(1, sizeof(*r));
    r->rows = rows;
    r->d = d;
    r->q = kern_xmalloc(sizeof(float *) * (size_t)rows);
    r->limit = kern_xmalloc(sizeof(int) * (size_t)rows);
    r->m = kern_xmalloc(sizeof(float) * (size_t)rows);
    r->l = kern_xcalloc((size_t)rows, sizeof(float));
    r->acc = kern_xcalloc((size_t)rows * d, sizeof(float));
    r->kt = kern_xmalloc(sizeof(float) * (size_t)d * KT);
    for (int i = 0; i < rows; i++)
        r->m[i] = -INFINITY;
    return r;
}

static void rows_free(attn_rows *r)
{
    free(r->kt);
    free(r->acc);
    free(r->l);
    free(r->m);
    free(r->limit);
    free(r->q);
    free(r);
}

/* Folds one tile of nk keys (krow[j], vrow[j]) into every row's state. */
static void rows_update(attn_rows *r, const float *const *krow, const float *const *vrow, int nk,
                        float scale)
{
    int d = r->d;
    for (int j = 0; j < nk; j++)
        for (int c = 0; c < d; c++)
            r->kt[(size_t)c * KT + j] = krow[j][c];
    for (int i = 0; i < r->rows; i++) {
        int n = r->limit[i] < nk ? r->limit[i] : nk;
        if (n <= 0)
            continue;
        float *s = r->s, *acc = r->acc + (size_t)i * d;
        const float *q = r->q[i];
        for (int j = 0; j < n; j++)
            s[j] = 0.0f;
        for (int c = 0; c < d; c++) {
            const float qc = q[c], *kc = r->kt + (size_t)c * KT;
            for (int j = 0; j < n; j++)
                s[j] += qc * kc[j];
        }
        float mx = r->m[i];
        for (int j = 0; j < n; j++) {
            s[j] *= scale;
            if (s[j] > mx)
                mx = s[j];
        }
        float corr = expf(r->m[i] - mx), sum = 0.0f; /* exp(-inf) = 0 on the first tile */
        for (int j = 0; j < n; j++) {
            s[j] = expf(s[j] - mx);
            sum += s[j];
        }
        r->l[i] = r->l[i] * corr + sum;
        r->m[i] = mx;
        for (int c = 0; c < d; c++)
            acc[c] *= corr;
        for (int j = 0; j < n; j++) {
            const float p = s[j], *vj = vrow[j];
            for (int c = 0; c < d; c++)
                acc[c] += p * vj[c];
        }
    }
}

/* Writes acc / l of row i to o. */
static void rows_store(const attn_rows *r, int i, float *o)
{
    float inv = r->l[i] > 0.0f ? 1.0f / r->l[i] : 0.0f;
    for (int c = 0; c < r->d; c++)
        o[c] = r->acc[(size_t)i * r->d + c] * inv;
}

/* One prefill work item: query rows [i0, i1) of every head of kv head kvh. */
static void prefill_item(const float *q, const float *k, const float *v, float *o, int i0, int i1,
                         int context, int nh, int nkv, int d, int kvh, float scale)
{
    int group = nh / nkv, rows = (i1 - i0) * group, last = context + i1; /* keys seen at most */
    attn_rows *r = rows_new(rows, d);
    const float *kr[KT], *vr[KT];
    for (int i = i0; i < i1; i++)
        for (int g = 0; g < group; g++)
            r->q[(i - i0) * group + g] = q + ((size_t)i * nh + kvh * group + g) * d;
    for (int j0 = 0; j0 < last; j0 += KT) {
        int nk = last - j0 < KT ? last - j0 : KT;
        for (int j = 0; j < nk; j++) {
            kr[j] = k + ((size_t)(j0 + j) * nkv + kvh) * d;
            vr[j] = v + ((size_t)(j0 + j) * nkv + kvh) * d;
        }
        for (int i = i0; i < i1; i++) /* causal: row i sees keys < context + i + 1 */
            for (int g = 0; g < group; g++)
                r->limit[(i - i0) * group + g] = context + i + 1 - j0;
        rows_update(r, kr, vr, nk, scale);
    }
    for (int i = i0; i < i1; i++)
        for (int g = 0; g < group; g++)
            rows_store(r, (i - i0) * group + g, o + ((size_t)i * nh + kvh * group + g) * d);
    rows_free(r);
}

void kern_cpu_attn_prefill(const float *q, const float *k, const float *v, float *o, int chunk,
                           int context, int nh, int nkv, int d, float scale)
{
    int tiles = (chunk + QT - 1) / QT, items = tiles * nkv;
    for (int it = 0; it < items; it++) {
        int kvh = it % nkv, i0 = (it / nkv) * QT;
        int i1 = i0 + QT < chunk ? i0 + QT : chunk;
        prefill_item(q, k, v, o, i0, i1, context, nh, nkv, d, kvh, scale);
    }
}

/* One decode work item: every head of kv head kvh for sequence b. */
static void decode_item(const float *q, const float *k_cache, const float *v_cache,
                        const int32_t *table, int len, float *o, int nh, int nkv, int d,
                        int block_size, int kvh, float scale)
{
    int group = nh / nkv;
    attn_rows *r = rows_new(group, d);
    const float *kr[KT], *vr[KT];
    for (int g = 0; g < group; g++)
        r->q[g] = q + ((size_t)kvh * group + g) * d;
    for (int j0 = 0; j0 < len; j0 += KT) {
        int nk = len - j0 < KT ? len - j0 : KT;
        for (int j = 0; j < nk; j++) {
            int pos = j0 + j;
            size_t row = ((size_t)table[pos / block_size] * block_size + pos % block_size) * nkv;
            kr[j] = k_cache + (row + kvh) * d;
            vr[j] = v_cache + (row + kvh) * d;
        }
        for (int g = 0; g < group; g++)
            r->limit[g] = nk;
        rows_update(r, kr, vr, nk, scale);
    }
    for (int g = 0; g < group; g++)
        rows_store(r, g, o + ((size_t)kvh * group + g) * d);
    rows_free(r);
}

void kern_cpu_attn_decode(const float *q, const float *k_cache, const float *v_cache,
                          const int32_t *block_tables, int max_blocks, const int32_t *context_lens,
                          float *o, int batch, int nh, int nkv, int d, int block_size, float scale)
{
    int items = batch * nkv;
    for (int it = 0; it < items; it++) {
        int b = it / nkv, kvh = it % nkv;
        decode_item(q + (size_t)b * nh * d, k_cache, v_cache, block_tables + (size_t)b * max_blocks,
                    context_lens[b], o + (size_t)b * nh * d, nh, nkv, d, block_size, kvh, scale);
    }
}

/* Copies the value of the first "model name" line of /proc/cpuinfo into buf. */
static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, len, "%s", colon);
        break;
    }
    fclose(f);
}

int kern_cpu_describe(char *buf, size_t len)
{
    char model[256];
    if (!buf || len == 0)
        return 0;
    cpu_model(model, sizeof model);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(buf, len, "cpu: %s, %ld cores, blas: %s, blas threads %d", model, cores,
             openblas_get_config(), openblas_get_num_threads());
    return 0;
}
