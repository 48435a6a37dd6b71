# Fuzzing (only where the compiler has libFuzzer: see LLMSIM_FUZZ in the top CMakeLists.txt).
# Each harness in tests/fuzz/ gets a target fuzz_<name> and a CTest test (label `fuzz`) that
# fuzzes for LLMSIM_FUZZ_SECONDS (10 by default) starting from its seed corpus
# tests/fuzz/corpus/<name>/ (never written to: new inputs go to build/fuzz-corpus/<name>/, and a
# crash, timeout or leak to build/fuzz-artifacts/). docs/testing.md explains a long run.
if(LLMSIM_HAVE_FUZZ)
  set(LLMSIM_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz test runs its harness")
  set(fuzz_dir ${CMAKE_CURRENT_LIST_DIR}/fuzz)
  set(fuzz_libs_scenario llmsim_scenarios)
  set(fuzz_libs_trace llmsim_scenarios)
  set(fuzz_libs_config llmsim_calibration)
  set(fuzz_libs_vidur llmsim_calibration)
  foreach(h scenario trace config vidur)
    set(srcs ${fuzz_dir}/fuzz_${h}.c)
    if(h STREQUAL "scenario" OR h STREQUAL "trace")
      list(APPEND srcs ${CMAKE_CURRENT_LIST_DIR}/support/scenarios_resolver.c)
    endif()
    add_executable(fuzz_${h} ${srcs})
    set_target_properties(fuzz_${h} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    target_link_libraries(fuzz_${h} PRIVATE ${fuzz_libs_${h}})
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    set(work ${CMAKE_BINARY_DIR}/fuzz-corpus/${h})
    set(art ${CMAKE_BINARY_DIR}/fuzz-artifacts/${h})
    add_test(NAME fuzz_${h}
             COMMAND sh -c "mkdir -p '${work}' '${art}' && exec \"$0\" -max_total_time=${LLMSIM_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix='${art}/' '${work}' '${fuzz_dir}/corpus/${h}'"
                     $<TARGET_FILE:fuzz_${h}>)
    set_tests_properties(fuzz_${h} PROPERTIES LABELS "fuzz" TIMEOUT 300)
  endforeach()
endif()
if(LLMSIM_HAVE_FUZZ)
  add_custom_target(fuzzers DEPENDS fuzz_scenario fuzz_trace fuzz_config fuzz_vidur)
endif()
