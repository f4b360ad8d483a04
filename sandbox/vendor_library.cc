#include "sandbox/vendor_library.h"

#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace ptxbench::sandbox {

const std::vector<std::string>& VendorLibraryFamilies() {
  static const auto* families = new std::vector<std::string>{
      "cublas",  // with cublasLt, cublasmp
      "cudnn",        "cufft",     "curand",
      "cusolver",  // with cusolverMp
      "cusparse",  // with cusparseLt
      "cutensor",     "cudss",     "cudla",     "nvblas",         "nccl",
      "nvshmem",      "nvinfer",   "nvonnxparser", "nvparsers",   "nvrtc",
      "nvjitlink",    "nvptxcompiler", "nvfatbin", "cupti",       "nvperf",
      "pcsamplingutil", "cutlass", "npp",       "cufile",         "nvjpeg",
      "nvpl",         "torch",     "c10",       "caffe2"};
  return *families;
}

bool IsLibraryFileName(absl::string_view name) {
  return absl::EndsWith(name, ".so") || absl::StrContains(name, ".so.") ||
         absl::EndsWith(name, ".a") || absl::EndsWith(name, ".cubin") || absl::EndsWith(name, ".fatbin");
}

bool IsVendorLibraryName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  absl::string_view rest = lower;
  const bool lib = absl::ConsumePrefix(&rest, "lib");
  if (!lib && !IsLibraryFileName(name)) return false;
  for (const std::string& family : VendorLibraryFamilies()) {
    if (absl::StartsWith(rest, family)) return true;
  }
  return false;
}

bool IsAllowedToolkitLibrary(absl::string_view name) {
  for (absl::string_view allowed : {"libcudart.", "libcudart_static.", "libcudadevrt.",
                                    "libculibos.", "libcufilt.", "libcuda.so", "libnvidia-ml.so"}) {
    if (absl::StartsWith(name, allowed)) return true;
  }
  return false;
}

// A CUDA toolkit's root as NVIDIA installs it: bin/nvcc beside the
// bin/nvcc.profile it reads. Not /usr or /usr/local, where a distribution's
// nvcc (Debian's is a wrapper in /usr/bin) or a link to one would otherwise
// make every library of the system a toolkit's; a distribution's vendor
// libraries there are known by name.
static bool IsToolkitRoot(const std::string& dir) {
  if (dir == "/usr" || dir == "/usr/local") return false;
  struct stat st;
  return stat((dir + "/bin/nvcc").c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         stat((dir + "/bin/nvcc.profile").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool VendorLibraryRule::InNvidiaDistribution(const std::string& dir) {
  if (dir.empty() || dir == "/") return false;
  if (auto it = distribution_.find(dir); it != distribution_.end()) return it->second;
  bool in = false;
  const size_t slash = dir.rfind('/');
  const absl::string_view name = absl::string_view(dir).substr(slash + 1);
  const absl::string_view parent_name = [&] {
    if (slash == 0 || slash == std::string::npos) return absl::string_view();
    const size_t before = dir.rfind('/', slash - 1);
    return absl::string_view(dir).substr(before + 1, slash - before - 1);
  }();
  if (name == "nvidia" && (parent_name == "site-packages" || parent_name == "dist-packages")) {
    in = true;  // a wheel's nvidia/ package (nvidia-cublas-cu12, ...)
  } else if (IsToolkitRoot(dir)) {
    in = true;
  } else if (slash != std::string::npos && slash > 0) {
    in = InNvidiaDistribution(dir.substr(0, slash));
  }
  distribution_[dir] = in;
  return in;
}

bool VendorLibraryRule::IsVendorLibrary(const std::string& dir, absl::string_view name) {
  if (IsVendorLibraryName(name)) return true;
  return IsLibraryFileName(name) && !IsAllowedToolkitLibrary(name) && InNvidiaDistribution(dir);
}

}  // namespace ptxbench::sandbox
