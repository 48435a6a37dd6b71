# Capacity search and recommendation: rejections as failures, the unloaded verdict, intervals
# and seeds, named and crossed --compare choices, the GPU cap.
llmsim_test(test_capacity SOURCES test_capacity.c LIBS llmsim_study LABELS e2e CPU 3600)
# capacity on a model that does not fit one node: recommend's pipelines past it
llmsim_test(test_capacity_pp SOURCES test_capacity_pp.c LIBS llmsim_study LABELS e2e CPU 1200)
llmsim_test(test_recommend SOURCES test_recommend.c LIBS llmsim_study LABELS e2e CPU 4800)
# docs/capacity.md as the tool prints it: its quick-start run and unreachable capacity blocks
# (about 80 s of CPU in the Debug build, the unreachable question's six 1,000-request runs)
llmsim_add_test(test_docs_capacity CPU 1500 bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/docs_capacity.sh
                ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(test_docs_capacity PROPERTIES LABELS "e2e")
# Capacity and recommend minimising cost: the cheapest deployment (more, cheaper GPUs) against
# the fewest GPUs; a GPU without a price refused.
llmsim_test(test_cost_objective SOURCES test_cost_objective.c LIBS llmsim_study LABELS e2e CPU 1200)
add_dependencies(test_cost_objective llmsim)
