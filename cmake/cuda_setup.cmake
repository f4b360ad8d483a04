# Included by every directory that builds CUDA code or GPU tests (worker/gpu,
# worker/runner, worker, workloads/reference, bench/gpu). Enables CUDA only where a compiler exists,
# so the rest of ptxbench configures and builds on machines without one.
# Sets PTXB_HAVE_CUDA in the including scope.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
   AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
endif()
# The -gencode flags are set per target below; CMake 3.25's
# CUDA_ARCHITECTURES does not know the "a" (arch-specific) suffix.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES OFF)
endif()
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # CMake 3.25 knows no C++20 dialect for nvcc (3.26 does); nvcc >= 12 takes
  # -std=c++20. C++20 like the host code, which matters for Abseil's ABI.
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(PTXB_HAVE_CUDA ON)
else()
  set(PTXB_HAVE_CUDA OFF)
endif()

# ptxb_cuda_target(TARGET): device code for sm_90a only (H100/H200), C++20.
# nvcc does not take the host warning flags of ptxbench::warnings directly,
# so CUDA targets get them through -Xcompiler here.
function(ptxb_cuda_target target)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF
    CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
    POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -lineinfo
      -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
  # Its C++ sources get the project's warnings, thread-safety analysis included.
  target_link_libraries(${target} PRIVATE ptxbench::warnings)
endfunction()
