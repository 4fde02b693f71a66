# Builds the layering probes (tests/layering/CMakeLists.txt): RIGHT must
# compile; each WRONG entry <target>=<header> must fail, and fail because
# <header> is not found (not for another reason).
function(build target out rc)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --config "${CONFIG}" --target ${target}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out} "${output}" PARENT_SCOPE)
  set(${rc} ${result} PARENT_SCOPE)
endfunction()

build(${RIGHT} output rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${RIGHT}: an include along the layering does not compile:\n${output}")
endif()
message(STATUS "${RIGHT}: compiles")

foreach(entry ${WRONG})
  string(REPLACE "=" ";" pair ${entry})
  list(GET pair 0 target)
  list(GET pair 1 header)
  build(${target} output rc)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${target}: an include against the layering (${header}) compiled")
  endif()
  string(REPLACE "." "\\." header_re ${header})
  if(NOT output MATCHES "${header_re}: No such file or directory")
    message(FATAL_ERROR "${target}: failed, but not on ${header}:\n${output}")
  endif()
  message(STATUS "${target}: fails, ${header} not found")
endforeach()
