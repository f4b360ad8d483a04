#include "worker/gpu/cupti_span.h"

// CUPTI's headers only; the library itself is loaded with dlopen below.
#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxbench::gpu {

// The libcupti entry points this file uses, resolved with dlsym.
struct CuptiSpanRecorder::Api {
  decltype(&cuptiGetVersion) GetVersion;
  decltype(&cuptiGetResultString) GetResultString;
  decltype(&cuptiSubscribe) Subscribe;
  decltype(&cuptiSubscribe_v2) SubscribeV2;  // may be null (older libcupti)
  decltype(&cuptiUnsubscribe) Unsubscribe;
  decltype(&cuptiEnableDomain) EnableDomain;
  decltype(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks;
  decltype(&cuptiActivityEnable) ActivityEnable;
  decltype(&cuptiActivityDisable) ActivityDisable;
  decltype(&cuptiActivityFlushAll) ActivityFlushAll;
  decltype(&cuptiActivityGetNextRecord) ActivityGetNextRecord;
  decltype(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords;

  std::string Describe(CUptiResult r) const {
    const char* s = nullptr;
    if (GetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) s = "unknown CUPTI error";
    return absl::StrCat(s, " (", static_cast<int>(r), ")");
  }
};

namespace {

// Activity buffers handed to CUPTI. A forced flush after every call returns
// them part-filled, so they are pooled rather than allocated per call.
constexpr size_t kBufferBytes = size_t{4} << 20;
constexpr size_t kBufferAlign = 8;  // CUPTI requires 8-byte-aligned buffers
constexpr size_t kMaxPooledBuffers = 8;

class BufferPool {
 public:
  uint8_t* Take() {
    {
      absl::MutexLock lock(&mu_);
      if (!free_.empty()) {
        uint8_t* b = free_.back();
        free_.pop_back();
        return b;
      }
    }
    return static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  }
  void Give(uint8_t* b) {
    {
      absl::MutexLock lock(&mu_);
      if (free_.size() < kMaxPooledBuffers) {
        free_.push_back(b);
        return;
      }
    }
    std::free(b);
  }

 private:
  absl::Mutex mu_;
  std::vector<uint8_t*> free_ ABSL_GUARDED_BY(mu_);
};

BufferPool& Pool() {
  static BufferPool* const pool = new BufferPool;  // outlives CUPTI's at-exit flush
  return *pool;
}

// The buffer callbacks take no user data.
std::atomic<CuptiSpanRecorder*> g_recorder{nullptr};

// The record kinds that make up a call's span. KIND_KERNEL is left out on
// purpose: enabling it serializes all kernels.
constexpr CUpti_ActivityKind kSpanKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                             CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMCPY2,  // peer-to-peer copies
                                             CUPTI_ACTIVITY_KIND_MEMSET};

}  // namespace

// CUPTI's C callbacks, forwarding to the recorder.
struct CuptiHandlers {
  static void CUPTIAPI OnApi(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId,
                             const void* cbdata) {
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    auto* recorder = static_cast<CuptiSpanRecorder*>(userdata);
    if (!recorder->open_hint_.load(std::memory_order_acquire)) return;
    const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
    // A runtime call that launches work also makes a driver call; the
    // activity record carries one of the two correlation ids, so both are
    // noted.
    if (data->callbackSite == CUPTI_API_ENTER) recorder->NoteApiCall(data->correlationId);
  }

  static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = Pool().Take();
    *size = *buffer == nullptr ? 0 : kBufferBytes;  // no buffer: CUPTI counts drops
    *max_records = 0;                               // as many as fit
  }

  static void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                         size_t /*size*/, size_t valid_size) {
    CuptiSpanRecorder* recorder = g_recorder.load(std::memory_order_acquire);
    if (recorder != nullptr && buffer != nullptr) {
      const CuptiSpanRecorder::Api& api = *recorder->api_;
      std::vector<CuptiSpanRecorder::Activity> activities;
      CUpti_Activity* record = nullptr;
      while (valid_size > 0 &&
             api.ActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        switch (record->kind) {
          case CUPTI_ACTIVITY_KIND_KERNEL:
          case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            activities.push_back({k->correlationId, k->start, k->end});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
            activities.push_back({m->correlationId, m->start, m->end});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
            activities.push_back({m->correlationId, m->start, m->end});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
            activities.push_back({m->correlationId, m->start, m->end});
            break;
          }
          default:
            break;
        }
      }
      size_t dropped = 0;
      if (api.ActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) {
        dropped = 0;
      }
      recorder->NoteActivities(activities.data(), activities.size(), dropped);
    }
    if (buffer != nullptr) Pool().Give(buffer);
  }
};

absl::StatusOr<CuptiSpanRecorder*> CuptiSpanRecorder::Get() {
  // Set up once; a failure is kept so every caller gets the same reason.
  static const absl::StatusOr<CuptiSpanRecorder*>* const recorder =
      new absl::StatusOr<CuptiSpanRecorder*>(Create());
  return *recorder;
}

absl::StatusOr<CuptiSpanRecorder*> CuptiSpanRecorder::Create() {
  void* lib = nullptr;
  std::string load_errors;
  for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* err = dlerror();
    absl::StrAppend(&load_errors, load_errors.empty() ? "" : "; ", err ? err : name);
  }
  if (lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("CUPTI not loadable: ", load_errors));
  }
  // The library and the table stay loaded for the life of the process:
  // CUPTI's threads and at-exit flush call back into this file.
  auto* api = new Api{};
  std::string missing;
  auto resolve = [&](auto& fn, const char* symbol, bool required) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
    if (fn == nullptr && required) absl::StrAppend(&missing, missing.empty() ? "" : ", ", symbol);
  };
  resolve(api->GetVersion, "cuptiGetVersion", true);
  resolve(api->GetResultString, "cuptiGetResultString", true);
  resolve(api->Subscribe, "cuptiSubscribe", true);
  resolve(api->SubscribeV2, "cuptiSubscribe_v2", false);
  resolve(api->Unsubscribe, "cuptiUnsubscribe", true);
  resolve(api->EnableDomain, "cuptiEnableDomain", true);
  resolve(api->ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
  resolve(api->ActivityEnable, "cuptiActivityEnable", true);
  resolve(api->ActivityDisable, "cuptiActivityDisable", true);
  resolve(api->ActivityFlushAll, "cuptiActivityFlushAll", true);
  resolve(api->ActivityGetNextRecord, "cuptiActivityGetNextRecord", true);
  resolve(api->ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", true);
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("libcupti lacks ", missing));
  }

  // The activity record layouts (CUpti_ActivityKernel10, ...) are those of
  // the headers' major version.
  uint32_t version = 0;
  if (CUptiResult r = api->GetVersion(&version); r != CUPTI_SUCCESS) {
    return absl::FailedPreconditionError(absl::StrCat("cuptiGetVersion: ", api->Describe(r)));
  }
  if (version / 10000 != CUPTI_API_VERSION / 10000) {
    return absl::FailedPreconditionError(
        absl::StrCat("libcupti API version ", version, " is not of the major version ",
                     CUPTI_API_VERSION / 10000,
                     " whose record layouts this build reads (headers: ", CUPTI_API_VERSION, ")"));
  }

  auto* recorder = new CuptiSpanRecorder(api);
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r;
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (api->SubscribeV2 != nullptr) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "ptxbench span";
    params.oldSubscriberName = other;
    params.oldSubscriberSize = sizeof(other) - 1;
    r = api->SubscribeV2(&subscriber, &CuptiHandlers::OnApi, recorder, &params);
  } else {
    r = api->Subscribe(&subscriber, &CuptiHandlers::OnApi, recorder);
  }
  if (r != CUPTI_SUCCESS) {
    delete recorder;
    return absl::FailedPreconditionError(
        absl::StrCat("cuptiSubscribe: ", api->Describe(r),
                     other[0] != '\0' ? absl::StrCat("; held by ", other) : ""));
  }
  // From here on a failure undoes what was set up, so CUPTI is left idle.
  std::vector<CUpti_ActivityKind> enabled;
  auto fail = [&](absl::string_view what, CUptiResult err) {
    for (CUpti_ActivityKind kind : enabled) api->ActivityDisable(kind);
    api->Unsubscribe(subscriber);
    g_recorder.store(nullptr, std::memory_order_release);
    // The recorder is leaked: a late callback may still hold it.
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", api->Describe(err)));
  };
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    if (r = api->EnableDomain(1, subscriber, domain); r != CUPTI_SUCCESS) {
      return fail("cuptiEnableDomain", r);
    }
  }
  g_recorder.store(recorder, std::memory_order_release);
  if (r = api->ActivityRegisterCallbacks(&CuptiHandlers::OnBufferRequested,
                                         &CuptiHandlers::OnBufferCompleted);
      r != CUPTI_SUCCESS) {
    return fail("cuptiActivityRegisterCallbacks", r);
  }
  for (CUpti_ActivityKind kind : kSpanKinds) {
    if (r = api->ActivityEnable(kind); r != CUPTI_SUCCESS) {
      return fail(absl::StrCat("cuptiActivityEnable(kind ", static_cast<int>(kind), ")"), r);
    }
    enabled.push_back(kind);
  }
  return recorder;
}

void CuptiSpanRecorder::BeginCall() {
  absl::MutexLock lock(&mu_);
  call_ids_.clear();
  activities_ = 0;
  without_timestamps_ = 0;
  min_start_ns_ = UINT64_MAX;
  max_end_ns_ = 0;
  dropped_ = 0;
  call_closed_ = false;
  call_open_ = true;
  open_hint_.store(true, std::memory_order_release);
}

void CuptiSpanRecorder::EndCall() {
  absl::MutexLock lock(&mu_);
  open_hint_.store(false, std::memory_order_release);
  if (call_open_) call_closed_ = true;
  call_open_ = false;
}

void CuptiSpanRecorder::NoteApiCall(uint32_t correlation_id) {
  absl::MutexLock lock(&mu_);
  if (call_open_) call_ids_.insert(correlation_id);
}

void CuptiSpanRecorder::NoteActivities(const Activity* activities, size_t count, size_t dropped) {
  absl::MutexLock lock(&mu_);
  // Only records that arrive between BeginCall and CollectSpan can be the
  // call's; anything else (older harness work) is dropped here.
  if (!call_open_ && !call_closed_) return;
  dropped_ += dropped;
  for (size_t i = 0; i < count; ++i) {
    const Activity& a = activities[i];
    if (!call_ids_.contains(a.correlation_id)) continue;
    ++activities_;
    if (a.start_ns == 0 || a.end_ns < a.start_ns) {
      ++without_timestamps_;
      continue;
    }
    min_start_ns_ = std::min(min_start_ns_, a.start_ns);
    max_end_ns_ = std::max(max_end_ns_, a.end_ns);
  }
}

absl::StatusOr<CallSpan> CuptiSpanRecorder::CollectSpan() {
  {
    absl::MutexLock lock(&mu_);
    if (!call_closed_) {
      return absl::FailedPreconditionError(call_open_ ? "CollectSpan before EndCall"
                                                      : "CollectSpan without BeginCall");
    }
  }
  // Without mu_: the flush delivers the buffers through OnBufferCompleted on
  // this thread, which takes mu_. Forced, so part-filled buffers come too;
  // the caller's device synchronize has completed the call's records.
  if (CUptiResult r = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      r != CUPTI_SUCCESS) {
    return absl::InternalError(absl::StrCat("cuptiActivityFlushAll: ", api_->Describe(r)));
  }
  absl::MutexLock lock(&mu_);
  call_closed_ = false;
  call_ids_.clear();
  if (dropped_ > 0) {
    return absl::InternalError(
        absl::StrCat("CUPTI dropped ", dropped_, " activity records during the call"));
  }
  if (without_timestamps_ > 0) {
    return absl::InternalError(absl::StrCat(without_timestamps_, " of the call's ", activities_,
                                            " CUPTI activity records have no timestamps"));
  }
  CallSpan span;
  span.activities = activities_;
  if (activities_ > 0) span.span = absl::Nanoseconds(max_end_ns_ - min_start_ns_);
  return span;
}

}  // namespace ptxbench::gpu
