# ctest configure_without_tests: the project configured with
# -DVRDMASIM_TESTS=OFF (the simulator alone) has the vrdmasim target and no
# test program, no fuzz target and no Catch2 runner.
#   cmake -DSOURCE=<source dir> -DSCRATCH=<empty dir> -P configure_without_tests.cmake
file(REMOVE_RECURSE ${SCRATCH})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${SCRATCH} -DVRDMASIM_TESTS=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring with VRDMASIM_TESTS=OFF failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${SCRATCH} --target help
                RESULT_VARIABLE rc OUTPUT_VARIABLE targets)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "listing the targets failed")
endif()
if(NOT targets MATCHES "\\.\\.\\. vrdmasim\n")
  message(FATAL_ERROR "no vrdmasim target without the tests:\n${targets}")
endif()
foreach(pattern "_tests\n" "fuzz_" "vrdmasim_test_main" "fake_run" "trace_fixture")
  if(targets MATCHES "${pattern}")
    message(FATAL_ERROR "a test target (${pattern}) is built without the tests:\n${targets}")
  endif()
endforeach()
file(REMOVE_RECURSE ${SCRATCH})
