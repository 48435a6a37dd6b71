/* test_kernels_cuda_build.c: fails when a CUDA source of kernels/ stops compiling. It runs the
 * nvcc found at configure time on every .cu file of kernels/ for sm_80, sm_89 and sm_90 with
 * warnings as errors; without nvcc it says so and exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef KERN_NVCC
#define KERN_NVCC ""
#endif

static void test_each_source_compiles(void **state)
{
    char list[] = KERN_CUDA_SOURCES, dir[] = "/tmp/llmsim-cuda-build-XXXXXX";
    char cmd[4096];
    int failed = 0, n = 0;
    assert_non_null(mkdtemp(dir));
    for (char *save = NULL, *src = strtok_r(list, "|", &save); src;
         src = strtok_r(NULL, "|", &save), n++) {
        snprintf(cmd, sizeof cmd,
                 "'%s' -std=c++17 -c -I'%s' -I'%s/internal' -DKERN_HAVE_CUDA=1 "
                 "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_89,code=sm_89 "
                 "-gencode arch=compute_90,code=sm_90 -Xcompiler=-Wall,-Wextra,-Wshadow "
                 "--Werror=all-warnings '%s' -o '%s/obj%d.o'",
                 KERN_NVCC, KERN_SOURCE_DIR, KERN_SOURCE_DIR, src, dir, n);
        printf("%s\n", cmd);
        fflush(stdout);
        if (system(cmd) != 0) {
            fprintf(stderr, "does not compile: %s\n", src);
            failed++;
        }
        snprintf(cmd, sizeof cmd, "%s/obj%d.o", dir, n);
        unlink(cmd);
    }
    rmdir(dir);
    assert_true(n > 0);
    assert_int_equal(failed, 0);
}

int main(void)
{
    if (KERN_NVCC[0] == '\0') {
        printf("no nvcc found at configure time: CUDA sources not compiled, skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_each_source_compiles)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
