#include "worker/runner/hosts/kernel_census.h"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/hash.h"

namespace ptxbench::runner {
namespace {

constexpr size_t kBufferBytes = 4 << 20;

// CUPTI's entry points, opened at Start.
struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
};

// One thing that ran: its name ("" for a memset or copy) and GPU interval.
struct Ran {
  std::string name;  // a kernel's, or "[memset]" / "[memcpy]"
  bool driver = false;
  uint64_t start = 0, end = 0;
};

struct State {
  absl::Mutex mu;
  Cupti cupti;
  absl::Status started = absl::FailedPreconditionError("not started");
  bool tried = false;
  bool submission ABSL_GUARDED_BY(mu) = false;
  // kernel name -> the tags of the images that define it.
  std::map<std::string, std::set<std::string>> images ABSL_GUARDED_BY(mu);
  std::vector<Ran> ran ABSL_GUARDED_BY(mu);
  int64_t dropped ABSL_GUARDED_BY(mu) = 0;
};

State& S() {
  static State* s = new State;
  return *s;
}

void CUPTIAPI OnModule(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_MODULE_LOADED) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
  if (module == nullptr || module->pCubin == nullptr) return;
  const std::string hash =
      Sha256Hex(absl::string_view(module->pCubin, module->cubinSize)).substr(0, 16);
  std::vector<std::string> kernels =
      CubinKernels(absl::string_view(module->pCubin, module->cubinSize));
  State& s = S();
  absl::MutexLock lock(&s.mu);
  const std::string tag = hash + (s.submission ? "a" : "b");
  for (std::string& k : kernels) s.images[std::move(k)].insert(tag);
}

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                                size_t valid) {
  State& s = S();
  std::vector<Ran> got;
  CUpti_Activity* record = nullptr;
  while (s.cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        got.push_back({k->name != nullptr ? k->name : "?", false, k->start, k->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        got.push_back({"[memset]", true, m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        got.push_back({"[memcpy]", true, m->start, m->end});
        break;
      }
      default:
        break;
    }
  }
  size_t dropped = 0;
  (void)s.cupti.dropped(context, stream, &dropped);
  std::free(buffer);
  absl::MutexLock lock(&s.mu);
  s.dropped += static_cast<int64_t>(dropped);
  for (Ran& r : got) s.ran.push_back(std::move(r));
}

template <typename F>
bool Open(void* lib, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(lib, name));
  return *f != nullptr;
}

absl::Status StartOnce() {
  // Only where the harness asked for a census: a reference host (forked
  // from the harness, which may have CUPTI loaded) is never traced.
  const char* path = std::getenv("PTXB_CUPTI");
  if (path == nullptr || *path == '\0') {
    return absl::UnavailableError("no CUPTI was given to the host (PTXB_CUPTI)");
  }
  // torch's own CUPTI where a Python host loaded it: two copies of CUPTI
  // in one process would both claim the driver's callbacks.
  void* lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(
        absl::StrCat("CUPTI (", path, ") could not be opened: ", why != nullptr ? why : "?"));
  }
  Cupti& c = S().cupti;
  if (!Open(lib, "cuptiActivityRegisterCallbacks", &c.register_callbacks) ||
      !Open(lib, "cuptiActivityEnable", &c.enable) || !Open(lib, "cuptiActivityFlushAll", &c.flush_all) ||
      !Open(lib, "cuptiActivityGetNextRecord", &c.next_record) ||
      !Open(lib, "cuptiActivityGetNumDroppedRecords", &c.dropped) ||
      !Open(lib, "cuptiSubscribe", &c.subscribe) || !Open(lib, "cuptiEnableCallback", &c.enable_callback)) {
    return absl::UnavailableError("CUPTI lacks an entry point the census needs");
  }
  CUpti_SubscriberHandle subscriber;
  if (CUptiResult r = c.subscribe(&subscriber, OnModule, nullptr); r != CUPTI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("CUPTI's callbacks are taken (error ", r, ")"));
  }
  if (CUptiResult r = c.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                        CUPTI_CBID_RESOURCE_MODULE_LOADED);
      r != CUPTI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("CUPTI: module callbacks (error ", r, ")"));
  }
  if (CUptiResult r = c.register_callbacks(OnBufferRequested, OnBufferCompleted); r != CUPTI_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("CUPTI: activity buffers (error ", r, ")"));
  }
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET,
                                  CUPTI_ACTIVITY_KIND_MEMCPY}) {
    if (CUptiResult r = c.enable(kind); r != CUPTI_SUCCESS) {
      return absl::UnavailableError(absl::StrCat("CUPTI: activity kind ", kind, " (error ", r, ")"));
    }
  }
  return absl::OkStatus();
}

// The length of the union of the intervals.
int64_t Busy(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  int64_t busy = 0;
  uint64_t open = 0, close = 0;
  bool any = false;
  for (const auto& [a, b] : spans) {
    if (b <= a) continue;
    if (!any || a > close) {
      if (any) busy += static_cast<int64_t>(close - open);
      open = a;
      close = b;
      any = true;
    } else {
      close = std::max(close, b);
    }
  }
  if (any) busy += static_cast<int64_t>(close - open);
  return busy;
}

void Flush() { (void)S().cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

}  // namespace

absl::Status KernelTracer::Start() {
  State& s = S();
  if (!s.tried) {
    s.tried = true;
    s.started = StartOnce();
  }
  return s.started;
}

bool KernelTracer::running() { return S().tried && S().started.ok(); }

void KernelTracer::MarkSubmission() {
  State& s = S();
  absl::MutexLock lock(&s.mu);
  s.submission = true;
}

void KernelTracer::Discard() {
  if (!running()) return;
  Flush();
  State& s = S();
  absl::MutexLock lock(&s.mu);
  s.ran.clear();
  s.dropped = 0;
}

CallCensus KernelTracer::Take() {
  CallCensus out;
  if (!running()) return out;
  Flush();
  State& s = S();
  absl::MutexLock lock(&s.mu);
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  std::map<std::string, CensusEntry> by_name;
  for (const Ran& r : s.ran) {
    spans.emplace_back(r.start, r.end);
    CensusEntry& e = by_name[r.name];
    if (e.launches == 0) {
      e.name = r.name;
      if (r.driver) {
        e.image = "-";
      } else if (auto it = s.images.find(r.name); it == s.images.end() || it->second.empty()) {
        e.image = "?";
      } else {
        e.image = it->second.size() == 1 ? *it->second.begin() : "*";
      }
    }
    ++e.launches;
    e.ns += r.end > r.start ? static_cast<int64_t>(r.end - r.start) : 0;
  }
  out.busy_ns = Busy(std::move(spans));
  out.more = s.dropped;  // records CUPTI dropped: what they were is unknown
  for (auto& [name, e] : by_name) out.entries.push_back(std::move(e));
  s.ran.clear();
  s.dropped = 0;
  return out;
}

}  // namespace ptxbench::runner
