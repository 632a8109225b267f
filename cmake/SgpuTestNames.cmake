# sgpu_check_test_names(): the CTest test "catch2 test names reach ctest" (tools/check_test_names.py).
#
# catch_discover_tests registers a Catch2 test case under its name and runs it by handing the name
# back to the binary; a name CMake or Catch2's spec parser reads differently (';' above all) gives
# tests that run nothing and pass. The check asks every Catch2 executable of the tree (every
# executable that links Catch2) which test case each registered CTest test selects. Call it after
# every add_subdirectory, so that it sees all targets.

function(_sgpu_catch2_executables dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(libs ${target} LINK_LIBRARIES)
    if(type STREQUAL "EXECUTABLE" AND libs MATCHES "Catch2::")
      list(APPEND found "$<TARGET_FILE:${target}>")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    _sgpu_catch2_executables(${subdir} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(sgpu_check_test_names)
  if(NOT BUILD_TESTING)
    return()
  endif()
  _sgpu_catch2_executables(${CMAKE_SOURCE_DIR} binaries)
  string(REPLACE ";" "\n" lines "${binaries}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/catch2_binaries.txt CONTENT "${lines}\n")
  add_test(NAME "catch2 test names reach ctest"
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/check_test_names.py
            --build ${CMAKE_BINARY_DIR} --binaries ${CMAKE_BINARY_DIR}/catch2_binaries.txt
            --ctest ${CMAKE_CTEST_COMMAND})
  set_tests_properties("catch2 test names reach ctest" PROPERTIES TIMEOUT 120)
endfunction()
