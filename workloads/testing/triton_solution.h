#ifndef PTXBENCH_WORKLOADS_TESTING_TRITON_SOLUTION_H_
#define PTXBENCH_WORKLOADS_TESTING_TRITON_SOLUTION_H_

// A Triton solution for tests, in the shape PTXBench's Triton test scripts
// write (multiturn/tests/triton/*.py): one kernel.py, kernel.py::run,
// destination-passing.

#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::workloads::testing {

// A small kernel.py: a @triton.jit kernel and its run().
inline std::string TritonModule() {
  return "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
         "def k(a_ptr, c_ptr):\n    pass\n\ndef run(A, B, C):\n    k[(1,)](A, C)\n";
}

inline nlohmann::json TritonSolution(const std::string& module = TritonModule(),
                                     const std::string& definition = "gemm_n7168_k5120") {
  return {{"name", "eval_kernel"},
          {"definition", definition},
          {"spec",
           {{"language", "triton"},
            {"target_hardware", {"Hopper"}},
            {"entry_point", "kernel.py::run"},
            {"dependencies", nlohmann::json::array()},
            {"destination_passing_style", true}}},
          {"author", "eval"},
          {"sources", {{{"path", "kernel.py"}, {"content", module}}}}};
}

}  // namespace ptxbench::workloads::testing

#endif  // PTXBENCH_WORKLOADS_TESTING_TRITON_SOLUTION_H_
