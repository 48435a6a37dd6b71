# The house's walls: a private header (internal/*_int.h) or a later folder's header included
# across a boundary must fail to build. Each case is a target left out of `all`; the test builds
# them and checks they fail for that reason, and that a control that includes what it may builds.
set(house_dir ${CMAKE_CURRENT_LIST_DIR}/house)
add_library(house_private_engine OBJECT EXCLUDE_FROM_ALL ${house_dir}/private_engine.c)
target_link_libraries(house_private_engine PRIVATE llmsim_calibration)
add_library(house_private_store OBJECT EXCLUDE_FROM_ALL ${house_dir}/private_store.c)
target_link_libraries(house_private_store PRIVATE llmsim_plots llmsim_store)
add_library(house_later_folder OBJECT EXCLUDE_FROM_ALL ${house_dir}/later_folder.c)
target_link_libraries(house_later_folder PRIVATE llmsim_engine)
add_library(house_allowed OBJECT EXCLUDE_FROM_ALL ${house_dir}/allowed.c)
target_link_libraries(house_allowed PRIVATE llmsim_engine)
llmsim_add_test(test_house_includes CPU 1200
         ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -P ${house_dir}/check.cmake)
set_tests_properties(test_house_includes PROPERTIES LABELS "house")
