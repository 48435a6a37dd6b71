# kernels/: CPU kernels against long-way computations and the benchmark driver (test_kernels),
# the CUDA sources' compilation (test_kernels_cuda_build, label cuda-build) and the CUDA kernels
# against the C reference (test_kernels_gpu, label gpu). The last two exit 77, reported as
# skipped, where there is no nvcc or no GPU.
set(kern_dir ${CMAKE_CURRENT_LIST_DIR}/../kernels)
get_filename_component(kern_dir ${kern_dir} ABSOLUTE)

llmsim_test(test_kernels SOURCES test_kernels.c LIBS llmsim_kernels LABELS kernels unit
            CPU 1200)

if(CMAKE_CUDA_COMPILER)
  set(kern_nvcc ${CMAKE_CUDA_COMPILER})
else()
  find_program(KERN_NVCC_PROGRAM nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
  set(kern_nvcc "")
  if(KERN_NVCC_PROGRAM)
    set(kern_nvcc ${KERN_NVCC_PROGRAM})
  endif()
endif()
file(GLOB kern_cu CONFIGURE_DEPENDS ${kern_dir}/*.cu)
string(JOIN "|" kern_cu_list ${kern_cu})
llmsim_test(test_kernels_cuda_build SOURCES test_kernels_cuda_build.c LABELS kernels cuda-build
            CPU 3600)
target_compile_definitions(test_kernels_cuda_build PRIVATE KERN_NVCC="${kern_nvcc}"
  KERN_SOURCE_DIR="${kern_dir}" KERN_CUDA_SOURCES="${kern_cu_list}")

llmsim_test(test_kernels_gpu SOURCES test_kernels_gpu.c LIBS llmsim_kernels LABELS kernels gpu
            CPU 1200)
# The CUDA runtime maps memory where ASan keeps its shadow gap, and the driver's own
# allocations at exit are not ours to free.
set_tests_properties(test_kernels_gpu PROPERTIES
  ENVIRONMENT "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0")
