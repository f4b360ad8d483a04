#ifndef PTXBENCH_WORKER_TORCH_PROBE_H_
#define PTXBENCH_WORKER_TORCH_PROBE_H_

// Whether this machine can run PyTorch references: the definitions no
// native reference computes (workloads/native_reference.h) are checked
// against their own PyTorch `reference`, run in a trusted Python with torch
// and CUDA. A worker probes its --torch-python once at start, registers
// what it found, and the scheduler refuses at submit a definition that no
// registered worker can evaluate. The same Python runs Triton submissions
// when it has Triton, probed the same way.

#include <string>

#include "absl/time/time.h"

namespace ptxbench::worker {

// A Python module of this machine (torch, triton), as probed.
struct PythonModuleProbe {
  std::string module;   // "torch" or "triton"
  std::string python;   // the interpreter probed; empty when none was
  std::string version;  // module.__version__; empty when it does not work
  std::string why_not;  // when version is empty: why, for the log

  bool ok() const { return !version.empty(); }
  // For registration (Capabilities.torch_reference, .triton): "torch
  // 2.11.0+cu130 at /opt/torch/.venv/bin/python3", or "" when none.
  std::string Capability() const;
};
using TorchProbe = PythonModuleProbe;
using TritonProbe = PythonModuleProbe;

// What --torch-python means: "none" is no PyTorch references, "auto" is
// python3 on PATH (none when there is none), anything else the path of a
// Python. That Python must import torch and see a CUDA device within
// `deadline` (importing torch can take a while on a cold disk).
TorchProbe ProbeTorch(const std::string& torch_python,
                      absl::Duration deadline = absl::Seconds(120));

// Triton submissions run in the same Python as the PyTorch references
// (they take torch tensors), so a worker can run them only when that Python
// also imports triton, and sees a CUDA device as torch does.
// Probes `torch`'s Python (ProbeTorch's result) for Triton; none when torch
// itself did not work there.
TritonProbe ProbeTriton(const TorchProbe& torch, absl::Duration deadline = absl::Seconds(120));

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_TORCH_PROBE_H_
