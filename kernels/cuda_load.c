/*
 * cuda_load.c: the CUDA entry points of kernels.h in a build with nvcc. The CUDA kernels, the
 * CUDA runtime and cuBLAS live in a shared library (libllmsim_cuda.so, its functions renamed
 * kern_cudadl_*) that is opened on first use, so a program that never asks for the CUDA backend
 * neither maps nor relocates cuBLAS: llmsim starts in milliseconds and runs on machines without
 * the CUDA libraries. The library's path is fixed at build time; LLMSIM_CUDA_LIB overrides it.
 * If it cannot be opened, kern_cuda_available says 0 and every other call fails with dlopen's
 * reason, as a build without CUDA does.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "kernels_int.h"

/* The library's functions, found by name: X(name, return type, parameters, arguments). The
 * calls (all but available and free) return 0, or -1 with a message in err. */
#define CUDA_FUNCS(X)                                                                              \
    X(available, int, (void), ())                                                                  \
    X(free, void, (kern_cuda * c), (c))                                                            \
    X(new, int, (kern_cuda * *out, char *err, size_t errlen), (out, err, errlen))                  \
    CUDA_CALLS(X)
#define CUDA_CALLS(X)                                                                              \
    X(describe, int, (char *buf, size_t len, char *err, size_t errlen), (buf, len, err, errlen))   \
    X(linear, int,                                                                                 \
      (kern_cuda * c, kern_dtype dt, const float *x, const float *w, float *y, int m, int k,       \
       int n, char *err, size_t errlen),                                                           \
      (c, dt, x, w, y, m, k, n, err, errlen))                                                      \
    X(rmsnorm, int,                                                                                \
      (kern_cuda * c, kern_dtype dt, const float *x, const float *w, float *y, int tokens,         \
       int hidden, float eps, char *err, size_t errlen),                                           \
      (c, dt, x, w, y, tokens, hidden, eps, err, errlen))                                          \
    X(silu_mul, int,                                                                               \
      (kern_cuda * c, kern_dtype dt, const float *x, float *y, int tokens, int inter, char *err,   \
       size_t errlen),                                                                             \
      (c, dt, x, y, tokens, inter, err, errlen))                                                   \
    X(add, int,                                                                                    \
      (kern_cuda * c, kern_dtype dt, const float *a, const float *b, float *y, size_t n,           \
       char *err, size_t errlen),                                                                  \
      (c, dt, a, b, y, n, err, errlen))                                                            \
    X(rope, int,                                                                                   \
      (kern_cuda * c, kern_dtype dt, float *x, const int32_t *pos, int tokens, int heads, int d,   \
       float theta, char *err, size_t errlen),                                                     \
      (c, dt, x, pos, tokens, heads, d, theta, err, errlen))                                       \
    X(attn_prefill, int,                                                                           \
      (kern_cuda * c, kern_dtype dt, const float *q, const float *k, const float *v, float *o,     \
       int chunk, int context, int nh, int nkv, int d, float scale, char *err, size_t errlen),     \
      (c, dt, q, k, v, o, chunk, context, nh, nkv, d, scale, err, errlen))                         \
    X(attn_decode, int,                                                                            \
      (kern_cuda * c, kern_dtype dt, const float *q, const float *k_cache, const float *v_cache,   \
       int num_blocks, const int32_t *block_tables, int max_blocks, const int32_t *context_lens,   \
       float *o, int batch, int nh, int nkv, int d, int block_size, float scale, char *err,        \
       size_t errlen),                                                                             \
      (c, dt, q, k_cache, v_cache, num_blocks, block_tables, max_blocks, context_lens, o, batch,   \
       nh, nkv, d, block_size, scale, err, errlen))                                                \
    X(bench_samples, int,                                                                          \
      (kern_cuda * c, const kern_shape *s, const kern_bench_cfg *cfg, int64_t *samples, int cap,   \
       int *n, char *err, size_t errlen),                                                          \
      (c, s, cfg, samples, cap, n, err, errlen))

#define FIELD(name, ret, params, args) ret(*name) params;
static struct {
    int tried;     /* dlopen was attempted */
    void *handle;  /* NULL when it failed */
    char why[512]; /* dlopen's or dlsym's message */
    CUDA_FUNCS(FIELD)
} lib;

/* Opens the library once; 0 when every function was found, else -1 with lib.why set. */
static int load(void)
{
    if (lib.tried)
        return lib.handle ? 0 : -1;
    lib.tried = 1;
    const char *path = getenv("LLMSIM_CUDA_LIB");
    if (!path || !*path)
        path = KERN_CUDA_LIB;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        kern_seterr(lib.why, sizeof lib.why, "CUDA kernels not loadable: %s", e ? e : path);
        return -1;
    }
#define RESOLVE(name, ret, params, args)                                                           \
    *(void **)&lib.name = dlsym(h, "kern_cudadl_" #name);                                          \
    if (!lib.name) {                                                                               \
        kern_seterr(lib.why, sizeof lib.why, "%s lacks kern_cudadl_" #name, path);                 \
        dlclose(h);                                                                                \
        return -1;                                                                                 \
    }
    CUDA_FUNCS(RESOLVE)
    lib.handle = h;
    return 0;
}

int kern_cuda_available(void)
{
    return load() == 0 && lib.available();
}

int kern_cuda_new(kern_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    if (load() != 0)
        return kern_seterr(err, errlen, "%s", lib.why);
    return lib.new(out, err, errlen);
}

void kern_cuda_free(kern_cuda *c)
{
    if (c && load() == 0)
        lib.free(c);
}

/* The calls: the library's function, or why it could not be loaded. */
#define WRAP(name, ret, params, args)                                                              \
    ret kern_cuda_##name params                                                                    \
    {                                                                                              \
        if (load() != 0)                                                                           \
            return kern_seterr(err, errlen, "%s", lib.why);                                        \
        return lib.name args;                                                                      \
    }
CUDA_CALLS(WRAP)
