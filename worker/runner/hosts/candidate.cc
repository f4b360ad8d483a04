#include "worker/runner/hosts/candidate.h"

#include <cuda.h>
#include <dlfcn.h>

#include <string.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ptxbench::runner {
namespace {

using EntryFn = int (*)(const ptxb::Tensor* const*, int, cudaStream_t);
using AbiVersionFn = int (*)();
using LastErrorFn = const char* (*)();

class CudaCandidate final : public Candidate {
 public:
  CudaCandidate(EntryFn entry, LastErrorFn last_error) : entry_(entry), last_error_(last_error) {}
  absl::Status SetWorkload(const protocol::Request&) override { return absl::OkStatus(); }
  absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    const int rc = entry_(views, count, stream);
    if (rc == PTXB_ENTRY_OK) return absl::OkStatus();
    if (rc == PTXB_ENTRY_EXCEPTION) {
      const char* what = last_error_ != nullptr ? last_error_() : nullptr;
      return absl::AbortedError(absl::StrCat("run() threw a C++ exception: ",
                                             what != nullptr ? std::string(what, strnlen(what, 1024))
                                                             : std::string("(no message)")));
    }
    return absl::AbortedError(absl::StrCat("ptxb_entry returned ", rc));
  }

 private:
  EntryFn entry_;
  LastErrorFn last_error_;
};

// The driver API, loaded at run time like device_info.cc does, so binaries
// linking the runner library still start where there is no driver.
struct Driver {
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**);
  CUresult (*get_error_name)(CUresult, const char**);

  absl::Status Check(CUresult r, const char* what) const {
    if (r == CUDA_SUCCESS) return absl::OkStatus();
    const char* name = "unknown CUDA error";
    get_error_name(r, &name);
    return absl::InternalError(absl::StrCat(what, ": ", name));
  }
};

absl::StatusOr<Driver> LoadDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return absl::FailedPreconditionError(absl::StrCat("libcuda.so.1: ", dlerror()));
  Driver d;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr;
  };
  if (!get(d.module_load_data, "cuModuleLoadData") ||
      !get(d.module_get_function, "cuModuleGetFunction") ||
      !get(d.func_set_attribute, "cuFuncSetAttribute") ||
      !get(d.launch_kernel, "cuLaunchKernel") || !get(d.get_error_name, "cuGetErrorName")) {
    return absl::FailedPreconditionError("libcuda.so.1 lacks a driver API function");
  }
  return d;
}

class PtxCandidate final : public Candidate {
 public:
  PtxCandidate(Driver driver, CUfunction function, workloads::LaunchSpec spec,
               std::vector<std::string> axis_order)
      : driver_(driver), function_(function), spec_(std::move(spec)),
        axis_order_(std::move(axis_order)) {}

  absl::Status SetWorkload(const protocol::Request& workload) override {
    const std::map<std::string, int64_t>& axes = workload.axes;
    absl::StatusOr<workloads::LaunchConfig> config = workloads::Resolve(spec_, axes);
    if (!config.ok()) return config.status();
    config_ = *config;
    axis_values_.clear();
    for (const std::string& axis : axis_order_) {
      axis_values_.push_back(static_cast<uint64_t>(axes.at(axis)));
    }
    // Above 48 KiB of dynamic shared memory a kernel must opt in.
    return driver_.Check(
        driver_.func_set_attribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(config_.shared_mem_bytes)),
        "cuFuncSetAttribute(max dynamic shared memory)");
  }

  absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    // Parameters (prompts/abi/ptx.md): one .u64 address per tensor, then one
    // .u64 per axis value.
    std::vector<uint64_t> values;
    for (int i = 0; i < count; ++i) values.push_back(reinterpret_cast<uint64_t>(views[i]->data));
    values.insert(values.end(), axis_values_.begin(), axis_values_.end());
    std::vector<void*> params;
    for (uint64_t& v : values) params.push_back(&v);
    const workloads::LaunchConfig& c = config_;
    return driver_.Check(
        driver_.launch_kernel(function_, static_cast<unsigned>(c.grid[0]),
                              static_cast<unsigned>(c.grid[1]), static_cast<unsigned>(c.grid[2]),
                              static_cast<unsigned>(c.block[0]), static_cast<unsigned>(c.block[1]),
                              static_cast<unsigned>(c.block[2]),
                              static_cast<unsigned>(c.shared_mem_bytes), stream, params.data(),
                              nullptr),
        "cuLaunchKernel");
  }

 private:
  Driver driver_;
  CUfunction function_;
  workloads::LaunchSpec spec_;
  std::vector<std::string> axis_order_;
  workloads::LaunchConfig config_{};
  std::vector<uint64_t> axis_values_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Candidate>> LoadCudaCandidate(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::AbortedError(absl::StrCat("cannot load the kernel library: ", dlerror()));
  }
  auto version = reinterpret_cast<AbiVersionFn>(dlsym(handle, "ptxb_abi_version"));
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, "ptxb_entry"));
  if (version == nullptr || entry == nullptr || version() != PTXB_ABI_VERSION) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the kernel library lacks ptxb_entry/ptxb_abi_version ", PTXB_ABI_VERSION));
  }
  auto last_error = reinterpret_cast<LastErrorFn>(dlsym(handle, "ptxb_last_error"));
  return std::unique_ptr<Candidate>(new CudaCandidate(entry, last_error));
}

absl::StatusOr<std::unique_ptr<Candidate>> LoadPtxCandidate(const std::string& cubin,
                                                           const workloads::LaunchSpec& spec,
                                                           std::vector<std::string> axis_order) {
  absl::StatusOr<Driver> driver = LoadDriver();
  if (!driver.ok()) return driver.status();
  std::ifstream in(cubin, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", cubin));
  const std::string image = bytes.str();
  CUmodule module = nullptr;
  if (absl::Status s = driver->Check(driver->module_load_data(&module, image.data()),
                                     "cuModuleLoadData");
      !s.ok()) {
    return absl::AbortedError(s.message());
  }
  CUfunction function = nullptr;
  if (driver->module_get_function(&function, module, spec.entry.c_str()) != CUDA_SUCCESS) {
    return absl::AbortedError(
        absl::StrCat("the module has no .entry named \"", spec.entry, "\" (the launch spec's entry)"));
  }
  return std::unique_ptr<Candidate>(
      new PtxCandidate(*driver, function, spec, std::move(axis_order)));
}

}  // namespace ptxbench::runner
