# Builds each forbidden target (each must fail because the header it includes is not on its
# include path) and the allowed one (which must build). Run by CTest as test_house_includes.
foreach(case private_engine:engine_int.h private_store:store_int.h later_folder:scenario.h)
  string(REPLACE ":" ";" parts ${case})
  list(GET parts 0 target)
  list(GET parts 1 header)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target house_${target}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(FATAL_ERROR "house_${target} built: ${header} is reachable across a boundary")
  endif()
  string(FIND "${out}" "${header}: No such file" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "house_${target} failed for another reason than ${header}:\n${out}")
  endif()
  message(STATUS "house_${target}: refused (${header} is not on its include path)")
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target house_allowed
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "house_allowed did not build:\n${out}")
endif()
message(STATUS "house_allowed: builds")
