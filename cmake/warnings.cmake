# One interface target carries the project's warning and sanitizer flags, so no
# flag is set globally (targets only, so each folder states what it needs).
add_library(ptxb_warnings INTERFACE)
add_library(ptxbench::warnings ALIAS ptxb_warnings)
# C++ sources only: nvcc takes its own (ptxb_cuda_target, cmake/cuda_setup.cmake).
target_compile_options(ptxb_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # clang's thread-safety analysis checks the ABSL_GUARDED_BY /
  # ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations in every translation unit, as
  # errors (docs/ARCHITECTURE.md, "Threads and locking"). The -beta group is
  # what checks a declared lock order (ABSL_ACQUIRED_BEFORE) in clang 14.
  target_compile_options(ptxb_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:
    -Wthread-safety -Wthread-safety-beta -Werror=thread-safety>)
endif()
if(PTXB_TSAN)
  target_compile_options(ptxb_warnings INTERFACE -fsanitize=thread -g)
  target_link_options(ptxb_warnings INTERFACE -fsanitize=thread)
endif()

# ptxb_test(NAME SOURCES... LIBS ...): a GoogleTest binary registered with ctest.
# WAITS: the test mostly waits (on a deadline, a rate window, a slow
# scripted evaluation), not computes; scripts/test.sh runs the tests so
# labelled beside the rest (ctest label "waits").
# A test's own sources build without optimization: they were 42% of the
# build's compile time at -O3 and take about 29% less at -O0 (a heavy test
# file 19.0 s -> 10.2 s, -O1 16.3 s), while the code they test is the
# libraries', still built as configured.
# Every test file also starts from one precompiled header of the heavy headers
# most of them include (GoogleTest, gRPC and the generated API, JSON, Abseil):
# parsing those was about 60% of a test file's compile time at -O0 (5.2 of
# 8.8 s of service_test.cc's front end). Built once, by ptxb_test_pch, with
# the tests' own flags; clang accepts the per-target -D definitions beside it.
# -pthread everywhere: the header is built with it (gRPC asks for it), and
# clang refuses it in a file compiled without.
add_executable(ptxb_test_pch ${CMAKE_CURRENT_LIST_DIR}/test_pch.cc)
target_compile_options(ptxb_test_pch PRIVATE -O0 -pthread)
target_link_libraries(ptxb_test_pch PRIVATE ptxbench::protos GTest::gmock GTest::gtest
  nlohmann_json::nlohmann_json absl::status absl::statusor absl::strings absl::time
  absl::synchronization ptxbench::warnings)
target_precompile_headers(ptxb_test_pch PRIVATE
  <algorithm> <map> <memory> <string> <thread> <vector>
  <gtest/gtest.h> <gmock/gmock.h> <grpcpp/grpcpp.h>
  <ptxbench/v1/client.grpc.pb.h> <ptxbench/v1/executor.grpc.pb.h>
  <nlohmann/json.hpp> <absl/status/statusor.h> <absl/strings/str_cat.h>
  <absl/synchronization/mutex.h> <absl/time/time.h>)

function(ptxb_test name)
  cmake_parse_arguments(T "WAITS" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_compile_options(${name} PRIVATE -O0 -pthread)
  target_precompile_headers(${name} REUSE_FROM ptxb_test_pch)
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main ptxbench::warnings)
  set(properties TIMEOUT 300)
  if(T_WAITS)
    list(APPEND properties LABELS waits)
  endif()
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60
    PROPERTIES ${properties})
endfunction()
