#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workloads/reference/driver_entry_point.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::reference {
namespace {

// The driver functions this file uses, from the runtime's entry points.
struct Driver {
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                     unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*address_free)(CUdeviceptr, size_t);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*unmap)(CUdeviceptr, size_t);
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*export_handle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                            unsigned long long);
  CUresult (*import_handle)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
  CUresult (*error_name)(CUresult, const char**);
  bool loaded = false;
};

const Driver& TheDriver() {
  static const Driver* driver = [] {
    auto* d = new Driver{};
    d->loaded = LoadDriverFunction(d->granularity, "cuMemGetAllocationGranularity") &&
                LoadDriverFunction(d->create, "cuMemCreate") &&
                LoadDriverFunction(d->release, "cuMemRelease") &&
                LoadDriverFunction(d->reserve, "cuMemAddressReserve") &&
                LoadDriverFunction(d->address_free, "cuMemAddressFree") &&
                LoadDriverFunction(d->map, "cuMemMap") &&
                LoadDriverFunction(d->unmap, "cuMemUnmap") &&
                LoadDriverFunction(d->set_access, "cuMemSetAccess") &&
                LoadDriverFunction(d->export_handle, "cuMemExportToShareableHandle") &&
                LoadDriverFunction(d->import_handle, "cuMemImportFromShareableHandle") &&
                LoadDriverFunction(d->error_name, "cuGetErrorName");
    return d;
  }();
  return *driver;
}

absl::Status Check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = "unknown CUDA error";
  if (TheDriver().error_name != nullptr) TheDriver().error_name(r, &name);
  const std::string message = absl::StrCat(what, ": ", name);
  return r == CUDA_ERROR_OUT_OF_MEMORY ? absl::ResourceExhaustedError(message)
                                       : absl::InternalError(message);
}

// The driver ready, and the runtime's context of the current device current
// on this thread (the driver calls below act on it).
absl::StatusOr<int> CurrentDevice() {
  if (!TheDriver().loaded) {
    return absl::FailedPreconditionError(
        "the CUDA driver lacks the virtual memory API (cuMemCreate)");
  }
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaGetDevice: ", cudaGetErrorString(e)));
  }
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("CUDA context: ", cudaGetErrorString(e)));
  }
  return device;
}

CUmemAllocationProp Properties(int device, DeviceMemory::Sharing sharing) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = sharing == DeviceMemory::Sharing::kByDescriptor
                                  ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                  : CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

// Reserves an address range for `handle` (`size` bytes), maps it and makes
// it read-write on `device`; on failure nothing is left mapped.
absl::StatusOr<CUdeviceptr> MapReadWrite(CUmemGenericAllocationHandle handle, size_t size,
                                         int device) {
  const Driver& d = TheDriver();
  CUdeviceptr ptr = 0;
  if (absl::Status s = Check(d.reserve(&ptr, size, 0, 0, 0), "cuMemAddressReserve"); !s.ok()) {
    return s;
  }
  absl::Status s = Check(d.map(ptr, size, 0, handle, 0), "cuMemMap");
  if (s.ok()) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    s = Check(d.set_access(ptr, size, &access, 1), "cuMemSetAccess");
    if (!s.ok()) d.unmap(ptr, size);
  }
  if (!s.ok()) {
    d.address_free(ptr, size);
    return s;
  }
  return ptr;
}

}  // namespace

absl::StatusOr<size_t> AllocationGranularity(DeviceMemory::Sharing sharing) {
  absl::StatusOr<int> device = CurrentDevice();
  if (!device.ok()) return device.status();
  const CUmemAllocationProp prop = Properties(*device, sharing);
  size_t granularity = 0;
  if (absl::Status s =
          Check(TheDriver().granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                "cuMemGetAllocationGranularity");
      !s.ok()) {
    return s;
  }
  return granularity;
}

absl::StatusOr<DeviceMemory> DeviceMemory::Allocate(size_t bytes, Sharing sharing) {
  absl::StatusOr<int> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<size_t> granularity = AllocationGranularity(sharing);
  if (!granularity.ok()) return granularity.status();
  const size_t g = *granularity;
  const size_t size = bytes == 0 ? g : (bytes + g - 1) / g * g;
  const CUmemAllocationProp prop = Properties(*device, sharing);
  CUmemGenericAllocationHandle handle = 0;
  if (absl::Status s = Check(TheDriver().create(&handle, size, &prop, 0),
                             absl::StrCat("cuMemCreate of ", size, " bytes").c_str());
      !s.ok()) {
    return s;
  }
  PTXB_ASSIGN_OR_RETURN(DeviceMemory m, Map(handle, size, *device));
  m.exportable_ = sharing == Sharing::kByDescriptor;
  // Zero past the tensor (and everywhere): what a reader finds there is
  // nothing. Waited for, so no stream of the caller can see it unfinished.
  if (const cudaError_t e = cudaMemset(m.data(), 0, size); e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("zero-filling device memory: ", cudaGetErrorString(e)));
  }
  if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    return absl::InternalError(absl::StrCat("zero-filling device memory: ", cudaGetErrorString(e)));
  }
  return m;
}

absl::StatusOr<DeviceMemory> DeviceMemory::Import(int fd, size_t size) {
  absl::StatusOr<int> device = CurrentDevice();
  if (!device.ok()) {
    close(fd);
    return device.status();
  }
  CUmemGenericAllocationHandle handle = 0;
  const absl::Status imported =
      Check(TheDriver().import_handle(&handle, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            "cuMemImportFromShareableHandle");
  close(fd);  // the imported handle holds the allocation
  if (!imported.ok()) return imported;
  return Map(handle, size, *device);
}

absl::StatusOr<DeviceMemory> DeviceMemory::Map(unsigned long long handle, size_t size,
                                               int device) {
  absl::StatusOr<CUdeviceptr> ptr = MapReadWrite(handle, size, device);
  if (!ptr.ok()) {
    TheDriver().release(handle);
    return ptr.status();
  }
  DeviceMemory m;
  m.ptr_ = *ptr;
  m.size_ = size;
  m.handle_ = handle;
  return m;
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    Release();
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
    handle_ = std::exchange(other.handle_, 0);
    exportable_ = std::exchange(other.exportable_, false);
  }
  return *this;
}

DeviceMemory::~DeviceMemory() { Release(); }

void DeviceMemory::Release() {
  if (ptr_ == 0) return;
  const Driver& d = TheDriver();
  d.unmap(ptr_, size_);
  d.address_free(ptr_, size_);
  d.release(handle_);
  ptr_ = 0;
  size_ = 0;
  handle_ = 0;
}

absl::StatusOr<int> DeviceMemory::ExportDescriptor() const {
  if (!exportable_) {
    return absl::FailedPreconditionError("this device memory is not exportable");
  }
  int fd = -1;
  if (absl::Status s = Check(
          TheDriver().export_handle(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle");
      !s.ok()) {
    return s;
  }
  return fd;
}

}  // namespace ptxbench::reference
