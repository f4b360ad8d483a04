#ifndef PTXBENCH_WORKER_COMPILE_LIBRARY_CHECK_H_
#define PTXBENCH_WORKER_COMPILE_LIBRARY_CHECK_H_

// Every scan is linear in its input and total: the source and the built
// library come from a model (docs/SECURITY.md).
//
// Detects vendor math libraries (cuBLAS, cuBLASLt, cuDNN, CUTLASS) in a CUDA
// submission, which docs/MEASUREMENT.md reports as LIBRARY_FALLBACK. Two views:
// the source (includes, API identifiers, library names for dlopen) and the
// built shared library (DT_NEEDED entries, undefined dynamic symbols).
// Thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::worker {

class VendorCodeTable;  // vendor_code_table.h

struct LibraryUse {
  std::string library;   // "cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS"; empty if none
  std::string evidence;  // what gave it away, e.g. "#include <cublas_v2.h>"

  bool found() const { return !library.empty(); }
};

// Scans CUDA source with comments removed: includes of cublas*.h, cublasLt.h,
// cudnn*.h or cutlass/ and cute/ headers; identifiers such as cublasGemmEx,
// cublasLtMatmul, cudnnCreate, CUBLAS_OP_T or cutlass::; and string literals
// naming libcublas / libcudnn (dlopen).
LibraryUse DetectLibraryInSource(absl::string_view source);

// Same verdict from a link log: undefined references to vendor symbols.
LibraryUse DetectLibraryInLinkLog(absl::string_view log);

// Reads the ELF shared library at `path` (its .dynamic and .dynsym sections)
// for DT_NEEDED libcublas* / libcublasLt* / libcudnn* and undefined dynamic
// symbols starting with cublas / cudnn; then every image it carries
// (gpu_image_scan.h: embedded ELF files, fatbins, compressed or not, their
// cubins and PTX) for a vendor SONAME, vendor functions defined, vendor
// kernel names, and, with `vendor_code`, kernel code that is a vendor
// kernel's byte for byte. kNotFound when the file cannot be read;
// otherwise the scan's refusals: kInvalidArgument (the file, or an image in
// it, is not one ptxbench can read) or kResourceExhausted (past the scan's
// bound). A refusal is the module's fault, never a pass.
absl::StatusOr<LibraryUse> DetectLibraryInElf(const std::string& path,
                                              const VendorCodeTable* vendor_code = nullptr);
// The same on the file's bytes; total on any input.
absl::StatusOr<LibraryUse> DetectLibraryInElfData(absl::string_view data,
                                                  const VendorCodeTable* vendor_code = nullptr);

// Changes with what DetectLibraryInElf reads: part of the build cache's key,
// so no verdict of an older scan is reused.
inline constexpr char kModuleScanVersion[] = "module-scan-2";

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_LIBRARY_CHECK_H_
