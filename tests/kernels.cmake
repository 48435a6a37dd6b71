# kernels/: CPU kernels against long-way computations, the benchmark driver, the CUDA sources'
# compilation, and the CUDA kernels against the C reference (skipped, exit 77, without a GPU).
llmsim_test(test_kernels SOURCES test_kernels.c LIBS llmsim_kernels LABELS kernels unit
            TIMEOUT 300)
