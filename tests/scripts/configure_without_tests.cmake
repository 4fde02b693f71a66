# ctest configure_without_tests: the project configured with
# -DVRDMASIM_TESTS=OFF (the simulator alone, as scripts/demo.sh configures
# it) needs none of the test-only packages (Catch2 and nlohmann-json hidden
# from it here), has the vrdmasim target and no test program, no fuzz target
# and no Catch2 runner; with the tests, a missing test package stops the
# configure, naming the package and scripts/setup.sh.
#   cmake -DSOURCE=<source dir> -DSCRATCH=<empty dir> -P configure_without_tests.cmake
set(hide_test_packages -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
file(REMOVE_RECURSE ${SCRATCH})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${SCRATCH}/with-tests -DVRDMASIM_TESTS=ON ${hide_test_packages}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "configuring the tests without Catch2 succeeded:\n${out}\n${err}")
endif()
foreach(needed "catch2" "nlohmann-json3-dev" "scripts/setup.sh installs them all" "-DVRDMASIM_TESTS=OFF")
  string(FIND "${err}" "${needed}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "configuring the tests without Catch2 and nlohmann-json did not say '${needed}':\n${err}")
  endif()
endforeach()
file(REMOVE_RECURSE ${SCRATCH})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${SCRATCH} -DVRDMASIM_TESTS=OFF ${hide_test_packages}
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
