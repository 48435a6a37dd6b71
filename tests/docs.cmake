# The docs' generated fragments (scripts/docs.sh) against what this build prints: a change that
# moves a figure README.md or docs/*.md quotes fails here until `scripts/docs.sh` regenerates
# them (docs/testing.md, "Docs that cannot go stale"). test_docs checks the cheap fragments (help
# texts, catalogs, sizes, one-request runs: seconds in any build); test_docs_slow the fragments
# that simulate whole workloads, in a Release build only (the Debug build's invariant checks make
# them take many minutes): .ci/run runs it with `ctest --test-dir build -L docs`.
llmsim_add_test(test_docs CPU 600 ${CMAKE_COMMAND} -E env LLMSIM=$<TARGET_FILE:llmsim>
                ${PROJECT_SOURCE_DIR}/scripts/docs.sh --check --class cheap)
set_tests_properties(test_docs PROPERTIES LABELS "docs")
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  llmsim_add_test(test_docs_slow CPU 2400 ${CMAKE_COMMAND} -E env LLMSIM=$<TARGET_FILE:llmsim>
                  ${PROJECT_SOURCE_DIR}/scripts/docs.sh --check --class slow)
  # every block of docs/capacity.md (test_docs_capacity checks two cheap ones in any build): the
  # searches simulate whole workloads, a minute of CPU in a Release build; they read the ShareGPT
  # length table, so without ../shared/data the test says so and is skipped
  llmsim_add_test(test_docs_capacity_slow CPU 2400 bash
                  ${PROJECT_SOURCE_DIR}/tests/scripts/docs_capacity.sh ${CMAKE_BINARY_DIR}
                  ${PROJECT_SOURCE_DIR} --all)
  set_tests_properties(test_docs_capacity_slow PROPERTIES LABELS "docs-slow" SKIP_RETURN_CODE 77)
else()
  llmsim_add_test(test_docs_slow CPU 60 sh -c "echo 'test_docs_slow: the slow fragments are \
checked in a Release build (ctest --test-dir build -L docs, as .ci/run does): this is a \
${CMAKE_BUILD_TYPE} build'; exit 77")
endif()
set_tests_properties(test_docs_slow PROPERTIES LABELS "docs-slow" SKIP_RETURN_CODE 77)
# Scenarios that read ../shared/data name the public data set they need and where it comes from,
# in their header and in their error when it is absent.
llmsim_test(test_data_source SOURCES test_data_source.c LIBS llmsim_study LABELS scenarios unit)
