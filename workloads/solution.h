#ifndef PTXBENCH_WORKLOADS_SOLUTION_H_
#define PTXBENCH_WORKLOADS_SOLUTION_H_

// A FlashInfer-Trace solution: a kernel as several source files plus an
// entry point, e.g.
//   {"name": "...", "definition": "gemm_n4096_k4096", "author": "...",
//    "spec": {"language": "cuda", "target_hardware": ["H100"],
//             "entry_point": "kernel.cu::run", "dependencies": [],
//             "destination_passing_style": true, "binding": "tvm-ffi"},
//    "sources": [{"path": "kernel.h", "content": "..."},
//                {"path": "kernel.cu", "content": "..."}]}
// ptxbench builds every .cu/.cpp/.cc/.cxx/.c source into one library (the
// others are there to be included) and calls the function the entry point
// exports with TVM_FFI_DLL_EXPORT_TYPED_FUNC. The text comes from models and
// users, so paths are checked (relative, inside the build folder) and sizes
// bounded.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

struct SourceFile {
  std::string path;
  std::string content;
};

struct Solution {
  std::string name;
  std::string definition;
  std::string author;
  std::string language;                      // "cuda", "cpp", "triton", "python", "tilelang"
  std::vector<std::string> target_hardware;  // metadata; kernels are built for the worker's GPU
  std::string entry_file;                    // before "::"
  std::string entry_symbol;                  // after "::": the exported function's name
  std::vector<std::string> dependencies;     // declarative, as in FlashInfer-Bench
  bool destination_passing_style = true;
  std::string binding;                       // "", "tvm-ffi" or "torch"
  std::vector<SourceFile> sources;           // in file order
};

// Parses and validates a solution document: the schema's required fields and
// types, an entry point "<file>::<symbol>" naming one of the sources, unique
// relative source paths without ".." and with safe characters, at most 64
// sources and 4 MiB in total. kInvalidArgument naming the field.
absl::StatusOr<Solution> ParseSolution(absl::string_view json, absl::string_view origin);

// Whether ptxbench can build and call `solution` as language "solution"
// (a Triton one goes as its module: TritonModuleOf): CUDA or C++ sources with
// the TVM-FFI binding, in destination-passing style, an entry symbol that is
// an identifier, and at least one compiled source. kUnimplemented naming the
// unsupported field and value otherwise (never run as something else).
absl::Status CheckSolutionSupported(const Solution& solution);

// A Triton solution (PTXBench's and FlashInfer-Bench's "language": "triton")
// as ptxbench evaluates it: its one Python module, whose public run() is
// called in destination-passing style. The content of that module, to be
// evaluated with language "triton"; kUnimplemented naming the field for
// anything else: another language, more than one source, an entry point
// other than "<file>.py::run", destination_passing_style false, a binding.
absl::StatusOr<std::string> TritonModuleOf(const Solution& solution);
// The module of `json` when it is a solution document TritonModuleOf takes;
// nullopt for anything else (a CUDA solution, a malformed one).
std::optional<std::string> TritonModuleOfJson(absl::string_view json);

// Whether a source file is compiled (.cu, .cpp, .cc, .cxx, .c) rather than
// only included.
bool IsCompiledSource(absl::string_view path);

// Whether `text` looks like a solution document rather than kernel source:
// a JSON object with "sources" and "spec".
bool LooksLikeSolution(absl::string_view text);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_SOLUTION_H_
