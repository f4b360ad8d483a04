#ifndef PTXBENCH_SANDBOX_VENDOR_LIBRARY_H_
#define PTXBENCH_SANDBOX_VENDOR_LIBRARY_H_

// The one rule for "this file is a vendor library" that every view applies
// (ViewBuilder::MaskVendorLibraries, view.h): the compiler's, the candidate
// host's and an agent session's. A vendor library's bytes (its host code or
// the GPU code it carries) in a view that builds or runs submitted code could
// be copied into a kernel as data and launched as the kernel's own
// (docs/SECURITY.md, "no vendor library's bytes"). Two parts:
//  - by name, anywhere: a file named after a vendor family (libcublas*,
//    libcudnn*, ... `VendorLibraryFamilies`), so a distribution's package
//    (Debian's libcublas13) or a Python wheel's copy is covered wherever it
//    lies;
//  - by place: every library file (.so, .so.N, .a, .cubin, .fatbin) in
//    an NVIDIA distribution (a CUDA toolkit: a directory with bin/nvcc, and
//    everything below it; a Python wheel's site-packages/nvidia/) that is
//    not on the allow-list of what a compiler and a CUDA program's host need
//    (the CUDA runtime, its device runtime, culibos, cu++filt's library, the
//    driver's link stubs). A family the name list does not know yet, shipped
//    in a toolkit or a wheel, is masked without a change here.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::sandbox {

// The vendor families, as lower-case name prefixes (after an optional
// "lib"): "cublas" covers libcublasLt and libcublasmp too.
const std::vector<std::string>& VendorLibraryFamilies();

// Whether `name` (a file name, no directory) is a vendor library by name: it
// starts with "lib" and a family (any file), or with a family and is a
// library file (so cublas_v2.h, a header, is not).
bool IsVendorLibraryName(absl::string_view name);

// Whether `name` is a library file: .so, .so.N..., .a, .cubin, .fatbin (not
// .o: a build's objects are named after their sources, torch_reference.cc.o).
bool IsLibraryFileName(absl::string_view name);

// Whether `name` is on the allow-list of an NVIDIA distribution's library
// files: libcudart*, libcudadevrt*, libculibos*, libcufilt*, and the link
// stubs libcuda.so and libnvidia-ml.so (no code: they only satisfy the
// linker).
bool IsAllowedToolkitLibrary(absl::string_view name);

// The whole rule for the files of one directory walk. Not thread-safe (one
// per walk): it remembers which directories are in an NVIDIA distribution.
class VendorLibraryRule {
 public:
  // `dir`: the symlink-free absolute host path of the directory holding the
  // file `name`.
  bool IsVendorLibrary(const std::string& dir, absl::string_view name);
  // Whether `dir` (symlink-free, absolute) is in a CUDA toolkit (itself or
  // an ancestor holds bin/nvcc) or a Python wheel's nvidia/ package.
  bool InNvidiaDistribution(const std::string& dir);

 private:
  std::map<std::string, bool> distribution_;  // by directory
};

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_VENDOR_LIBRARY_H_
