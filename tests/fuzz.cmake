# Fuzzing (only where the compiler has libFuzzer: see LLMSIM_FUZZ in the top CMakeLists.txt).
# Each harness in tests/fuzz/ gets a target fuzz_<name> and a CTest test (label `fuzz`) that
# fuzzes for LLMSIM_FUZZ_SECONDS (10 by default) starting from its seed corpus
# tests/fuzz/corpus/<name>/ (never written to: new inputs go to build/fuzz-corpus/<name>/, and a
# crash, timeout or leak to build/fuzz-artifacts/). docs/testing.md explains a long run.
# No wall-clock limit on an input here (-timeout=0): an input that loops is found by the
# watchdog's CPU budget (a few times the fuzzing time), so a loaded machine fails no input.
if(LLMSIM_HAVE_FUZZ)
  set(LLMSIM_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz test runs its harness")
  set(fuzz_dir ${CMAKE_CURRENT_LIST_DIR}/fuzz)
  set(fuzz_libs_scenario llmsim_scenarios)
  set(fuzz_libs_trace llmsim_scenarios)
  set(fuzz_libs_config llmsim_calibration)
  set(fuzz_libs_vidur llmsim_calibration llmsim_store) # store: fuzz_mem removes its files
  set(fuzz_libs_store llmsim_study)
  set(fuzz_libs_plot llmsim_plots llmsim_store)
  set(fuzz_libs_argv llmsim_study llmsim_plots)
  set(fuzz_flags_argv "-close_fd_mask=3") # the program's output would bury libFuzzer's
  # the program's sources but main.c, which fuzz_argv.c includes with its main renamed
  file(GLOB fuzz_cli_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cli/*.c)
  list(FILTER fuzz_cli_sources EXCLUDE REGEX "/main\\.c$")
  foreach(h scenario trace config vidur store plot argv)
    set(srcs ${fuzz_dir}/fuzz_${h}.c)
    if(h STREQUAL "scenario" OR h STREQUAL "trace")
      list(APPEND srcs ${CMAKE_CURRENT_LIST_DIR}/support/scenarios_resolver.c)
    endif()
    if(h STREQUAL "store" OR h STREQUAL "plot" OR h STREQUAL "argv")
      list(APPEND srcs ${fuzz_dir}/fuzz_db.c)
    endif()
    if(h STREQUAL "store" OR h STREQUAL "plot" OR h STREQUAL "argv" OR h STREQUAL "vidur")
      list(APPEND srcs ${fuzz_dir}/fuzz_mem.c)
    endif()
    if(h STREQUAL "argv")
      list(APPEND srcs ${fuzz_cli_sources})
    endif()
    add_executable(fuzz_${h} ${srcs})
    set_target_properties(fuzz_${h} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    target_link_libraries(fuzz_${h} PRIVATE ${fuzz_libs_${h}})
    target_include_directories(fuzz_${h} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/support ${fuzz_dir}
                               ${PROJECT_SOURCE_DIR}/cli)
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
    set(work ${CMAKE_BINARY_DIR}/fuzz-corpus/${h})
    set(art ${CMAKE_BINARY_DIR}/fuzz-artifacts/${h})
    math(EXPR fuzz_cpu "300 + ${LLMSIM_FUZZ_SECONDS} * 4")
    llmsim_add_test(fuzz_${h} CPU ${fuzz_cpu}
             sh -c "mkdir -p '${work}' '${art}' && exec \"$0\" -max_total_time=${LLMSIM_FUZZ_SECONDS} -timeout=0 -rss_limit_mb=2048 -print_final_stats=1 ${fuzz_flags_${h}} -artifact_prefix='${art}/' '${work}' '${fuzz_dir}/corpus/${h}'"
                     $<TARGET_FILE:fuzz_${h}>)
    set_tests_properties(fuzz_${h} PROPERTIES LABELS "fuzz")
  endforeach()
endif()
if(LLMSIM_HAVE_FUZZ)
  # the watchdog too: the fuzz tests run under it, and .ci/run builds this target alone
  add_custom_target(fuzzers DEPENDS fuzz_scenario fuzz_trace fuzz_config fuzz_vidur fuzz_store fuzz_plot
                    fuzz_argv llmsim_watchdog)
endif()
