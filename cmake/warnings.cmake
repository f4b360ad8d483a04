# One interface target carries the project's warning and sanitizer flags, so no
# flag is set globally (targets only, so each folder states what it needs).
add_library(ptxb_warnings INTERFACE)
add_library(ptxbench::warnings ALIAS ptxb_warnings)
target_compile_options(ptxb_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # Checks the ABSL_GUARDED_BY / EXCLUSIVE_LOCKS_REQUIRED annotations.
  target_compile_options(ptxb_warnings INTERFACE -Wthread-safety)
endif()
if(PTXB_TSAN)
  target_compile_options(ptxb_warnings INTERFACE -fsanitize=thread -g)
  target_link_options(ptxb_warnings INTERFACE -fsanitize=thread)
endif()

# ptxb_test(NAME SOURCES... LIBS ...): a GoogleTest binary registered with ctest.
function(ptxb_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main ptxbench::warnings)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()
