/* util.c: the one place kernels/ allocates with abort-on-OOM, and its error formatter. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels_int.h"

void *kern_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "llmsim kernels: out of memory allocating %zu bytes\n", n);
        abort();
    }
    return p;
}

void *kern_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "llmsim kernels: out of memory allocating %zu x %zu bytes\n", count, size);
        abort();
    }
    return p;
}

int kern_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
