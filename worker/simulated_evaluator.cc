#include "worker/simulated_evaluator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/hash.h"
#include "worker/compile/ptx_census.h"
#include "worker/eval_summary.h"
#include "worker/held_out.h"
#include "worker/profile/workload_choice.h"

namespace ptxbench::worker {
namespace {

using ::ptxbench::v1::EvalRequest;
using ::ptxbench::v1::EvalResult;

// A value in [0, 1) from a hash.
double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// The name of the first __global__ function, as ptxas would report it.
std::string CudaKernelName(absl::string_view source) {
  size_t global = source.find("__global__");
  size_t paren = global == absl::string_view::npos ? global : source.find('(', global);
  if (paren == absl::string_view::npos) return "ptxb_kernel";
  size_t end = paren;
  while (end > global && absl::ascii_isspace(static_cast<unsigned char>(source[end - 1]))) --end;
  size_t begin = end;
  while (begin > global && (absl::ascii_isalnum(static_cast<unsigned char>(source[begin - 1])) ||
                            source[begin - 1] == '_')) {
    --begin;
  }
  return begin == end ? "ptxb_kernel" : std::string(source.substr(begin, end - begin));
}

// The first `@triton.jit` function's name, as a census names a Triton
// kernel (Triton names the compiled kernel after its function).
std::string TritonKernelName(absl::string_view source) {
  const size_t jit = source.find("@triton.jit");
  const size_t def = jit == absl::string_view::npos ? jit : source.find("def ", jit);
  if (def == absl::string_view::npos) return "triton_kernel";
  size_t end = def + 4;
  while (end < source.size() && (absl::ascii_isalnum(static_cast<unsigned char>(source[end])) ||
                                 source[end] == '_')) {
    ++end;
  }
  return end == def + 4 ? "triton_kernel" : std::string(source.substr(def + 4, end - def - 4));
}

std::string KernelName(const EvalRequest& request) {
  return request.language() == "triton" ? TritonKernelName(request.kernel_source())
                                        : CudaKernelName(request.kernel_source());
}

// Timed calls per workload in a simulated census (the real harness's are
// its trials times their iterations).
constexpr int64_t kTimedCalls = 30;

// A library kernel a simulated evaluation says ran, and the mark in the
// source that makes it (docs/FORMATS.md, "Simulated evaluations"). The
// names are what such a library launches on Hopper, demangled.
struct LibraryMark {
  const char* needle;
  bool any_case;
  const char* kernel;
};
constexpr char kCublasGemm[] =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
constexpr char kFlashSdpa[] =
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, "
    "4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, "
    "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
    "false>(pytorch_flash::Flash_fwd_params)";
constexpr char kCudnnSdpa[] =
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x128x128_4x1x1_"
    "kernel0_0";
constexpr LibraryMark kLibraryMarks[] = {
    {"torch.matmul(", false, kCublasGemm},
    {"torch.mm(", false, kCublasGemm},
    {"torch.bmm(", false, kCublasGemm},
    {"scaled_dot_product_attention(", false, kFlashSdpa},
    {"cublas", true, kCublasGemm},
    {"cudnn", true, kCudnnSdpa},
};
// A fill a source with this mark launches: listed as MEMORY, never a
// fallback.
constexpr char kFillKernel[] =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";

// The library kernels the source's marks name, each once, in mark order.
std::vector<std::string> LibraryKernels(absl::string_view source) {
  const std::string lower = absl::AsciiStrToLower(source);
  std::vector<std::string> out;
  for (const LibraryMark& mark : kLibraryMarks) {
    const bool found = mark.any_case ? absl::StrContains(lower, mark.needle)
                                     : absl::StrContains(source, mark.needle);
    if (found && std::find(out.begin(), out.end(), mark.kernel) == out.end()) {
      out.push_back(mark.kernel);
    }
  }
  return out;
}

bool FillsMemory(absl::string_view source) {
  return absl::StrContains(source, "torch.zeros(") || absl::StrContains(source, ".zero_(");
}

v1::LaunchedKernel* AddKernel(v1::KernelCensus& census, absl::string_view name,
                              v1::KernelOrigin origin, double ms_per_call) {
  v1::LaunchedKernel* k = census.add_kernels();
  k->set_name(std::string(name));
  k->set_origin(origin);
  k->set_launches(kTimedCalls);
  k->set_ms_per_call(ms_per_call);
  return k;
}

// The census of a timed workload of `latency_ms` per call: the kernels that
// did the work share 97% of it (the submission's, or the libraries' the
// source's marks name: the i-th after the first 1/2^(i+1) of it, the first
// the rest), a fill 3% when the source has one, every call seen, the
// outputs correct.
v1::KernelCensus SimulatedCensus(absl::string_view source, const std::string& kernel,
                                 const std::vector<std::string>& libraries, double latency_ms) {
  v1::KernelCensus census;
  const bool fills = FillsMemory(source);
  const double compute_ms = fills ? latency_ms * 0.97 : latency_ms;
  if (libraries.empty()) {
    AddKernel(census, kernel, v1::SUBMISSION, compute_ms);
  } else {
    double left = compute_ms;
    std::vector<double> shares(libraries.size());
    for (size_t i = libraries.size(); i-- > 1;) left -= shares[i] = compute_ms / (2 << i);
    shares[0] = left;
    for (size_t i = 0; i < libraries.size(); ++i) {
      AddKernel(census, libraries[i], v1::LIBRARY, shares[i]);
    }
  }
  if (fills) AddKernel(census, kFillKernel, v1::MEMORY, latency_ms - compute_ms);
  census.set_calls_seen(kTimedCalls);
  census.set_calls_timed(kTimedCalls);
  census.set_outputs_correct(true);
  return census;
}

int64_t CountOccurrences(absl::string_view text, absl::string_view needle) {
  int64_t n = 0;
  for (size_t pos = text.find(needle); pos != absl::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// A made-up profile of the kernel on the workload a real worker would pick,
// labelled simulated, with a small stand-in report so that storing and
// exporting reports is exercised too.
void SimulateProfile(const EvalRequest& request, const workloads::DefinitionRegistry* definitions,
                     const std::string& kernel, uint64_t h, EvalResult& result) {
  v1::KernelProfileRun* p = result.mutable_profile();
  p->set_simulated(true);
  p->set_tool("simulated profiler");
  std::string uuid = request.profile_workload_uuid();
  if (definitions != nullptr) {
    if (auto d = definitions->Find(request.definition()); d.ok()) {
      const std::vector<std::string> evaluated = ShownOnly(
          request, {request.workload_uuids().begin(), request.workload_uuids().end()});
      absl::StatusOr<const workloads::Workload*> w =
          ChooseProfileWorkload(**d, evaluated, request.profile_workload_uuid());
      if (!w.ok()) {
        p->set_status(v1::INFRA_ERROR);
        p->set_error(std::string(w.status().message()));
        return;
      }
      uuid = (*w)->uuid;
      p->mutable_axes()->insert((*w)->axes.begin(), (*w)->axes.end());
    }
  }
  double ms = 0;
  for (const auto& t : result.traces()) {
    if (uuid.empty()) uuid = t.workload_uuid();
    if (t.workload_uuid() == uuid) ms = t.latency_ms();
  }
  p->set_workload_uuid(uuid);
  p->set_status(v1::PASSED);
  p->set_kernels_profiled(1);
  v1::KernelProfile* k = p->add_kernels();
  k->set_name(kernel);
  k->set_launches(1);
  k->set_duration_us(ms > 0 ? ms * 1000 : 10 + static_cast<double>(h % 5000));
  k->set_sm_throughput_pct(5 + 90 * Unit(h >> 1));
  k->set_memory_throughput_pct(5 + 90 * Unit(h >> 2));
  k->set_dram_throughput_pct(5 + 85 * Unit(h >> 3));
  k->set_tensor_pipe_pct(absl::StrContains(request.kernel_source(), "wgmma") ? 60 * Unit(h >> 4) : 0);
  k->set_theoretical_occupancy_pct(h % 2 == 0 ? 100 : 50);
  k->set_achieved_occupancy_pct(k->theoretical_occupancy_pct() * (0.5 + 0.45 * Unit(h >> 5)));
  if (k->theoretical_occupancy_pct() < 100) k->set_occupancy_limiter("registers");
  const auto& res = result.resources();
  k->set_registers_per_thread(res.empty() ? 64 : res[0].registers());
  k->set_shared_memory_per_block_bytes(res.empty() ? 0 : res[0].shared_mem_bytes());
  k->set_block_size(256);
  k->set_grid_size(132 * (1 + static_cast<int64_t>(h % 16)));
  k->set_l1_hit_rate_pct(80 * Unit(h >> 6));
  k->set_l2_hit_rate_pct(40 + 55 * Unit(h >> 7));
  for (const char* reason : {"long_scoreboard", "barrier", "mio_throttle"}) {
    auto* stall = k->add_stalls();
    stall->set_reason(reason);
    stall->set_cycles_per_instruction(std::round(100 * (0.5 + 12 * Unit(h))) / 100);
    h = StableHash64(absl::StrCat(h, reason));
  }
  std::sort(k->mutable_stalls()->begin(), k->mutable_stalls()->end(),
            [](const auto& a, const auto& b) {
              return a.cycles_per_instruction() > b.cycles_per_instruction();
            });
  p->set_report(absl::StrCat("PTXBENCH SIMULATED PROFILE REPORT (not an .ncu-rep)\nkernel ",
                             kernel, "\nworkload ", uuid, "\n"));
  p->set_report_bytes(static_cast<int64_t>(p->report().size()));
}

}  // namespace

EvalResult SimulatedEvaluator::Evaluate(const EvalRequest& request) const {
  const std::string sha = request.kernel_sha256().empty() ? Sha256Hex(request.kernel_source())
                                                          : request.kernel_sha256();
  auto hash = [&](absl::string_view what, absl::string_view extra = "") {
    return StableHash64(
        absl::StrCat("ptxb-sim-eval/", options_.seed, "/", sha, "/", what, "/", extra));
  };
  std::vector<std::string> uuids(request.workload_uuids().begin(), request.workload_uuids().end());
  if (uuids.empty() && options_.definitions != nullptr) {
    if (auto d = options_.definitions->Find(request.definition()); d.ok()) {
      for (const workloads::Workload& w : (*d)->workloads) uuids.push_back(w.uuid);
    }
  }
  if (uuids.empty()) uuids = {"w0", "w1", "w2"};
  uuids = ShownFirst(request, std::move(uuids), [](const std::string& u) { return u; });

  EvalResult result;
  result.set_simulated(true);
  result.set_worker_id(options_.worker_id);
  result.set_gpu_model(options_.gpu_model);
  result.set_toolkit_version("simulated");

  // A source with a library mark always builds and falls back (below).
  const std::vector<std::string> libraries = LibraryKernels(request.kernel_source());
  const double outcome = libraries.empty() ? Unit(hash("outcome")) : 1.0;
  const std::string kernel = KernelName(request);
  if (outcome < 0.15) {
    uint64_t h = hash("compile-error");
    result.set_status(v1::COMPILE_ERROR);
    result.set_compile_log(absl::StrFormat(
        "kernel.cu(%d): error: identifier \"%s\" is undefined\n"
        "kernel.cu(%d): error: no instance of overloaded function \"__shfl_xor_sync\" matches "
        "the argument list\n"
        "2 errors detected in the compilation of \"kernel.cu\".\n",
        10 + h % 80, h % 2 == 0 ? "tile_k" : "warp_sum", 20 + (h >> 8) % 80));
    return result;
  }

  // Resources and the PTX census of a successful build.
  uint64_t rh = hash("resources");
  auto* res = result.add_resources();
  res->set_kernel_name(kernel);
  res->set_registers(static_cast<int32_t>(32 + 8 * (rh % 28)));
  res->set_shared_mem_bytes(static_cast<int64_t>((rh >> 8) % 8) * 16384);
  if (res->registers() >= 240) {
    res->set_spill_store_bytes(16);
    res->set_spill_load_bytes(16);
  }
  result.set_compile_log(
      absl::StrFormat("ptxas info    : 0 bytes gmem\n"
                      "ptxas info    : Compiling entry function '%s' for 'sm_90a'\n"
                      "ptxas info    : Function properties for %s\n"
                      "    0 bytes stack frame, %d bytes spill stores, %d bytes spill loads\n"
                      "ptxas info    : Used %d registers, %d bytes smem, 384 bytes cmem[0]\n",
                      kernel, kernel, res->spill_store_bytes(), res->spill_load_bytes(),
                      res->registers(), res->shared_mem_bytes()));
  auto* ptx = result.mutable_ptx();
  ptx->set_sha256(Sha256Hex(absl::StrCat("simulated-ptx/", sha)));
  ptx->set_size_bytes(static_cast<int64_t>(request.kernel_source().size()) * 3 + 512);
  ptx->set_virtual_arch("sm_90a");
  // The real census's families, counted in the source (there is no PTX).
  for (const PtxFamily& f : PtxFamilies()) {
    int64_t n = CountOccurrences(request.kernel_source(), f.name);
    if (n == 0) continue;
    (*ptx->mutable_instruction_counts())[f.name] = n;
    (*ptx->mutable_architecture_counts())[f.architecture] += n;
  }

  if (request.mode() == v1::COMPILE_ONLY) {
    result.set_status(v1::COMPILED);
    return result;
  }

  const bool incorrect = outcome < 0.35;
  const size_t bad = hash("bad-workload") % uuids.size();
  for (size_t i = 0; i < uuids.size(); ++i) {
    const std::string& uuid = uuids[i];
    auto* trace = result.add_traces();
    trace->set_workload_uuid(uuid);
    // The reference time belongs to the workload, not to the kernel.
    double ref_ms =
        0.05 + 4.95 * Unit(StableHash64(absl::StrCat("ptxb-sim-ref/", options_.seed, "/", uuid)));
    uint64_t h = hash("workload", uuid);
    if (incorrect && i == bad) {
      trace->set_status(v1::INCORRECT_NUMERICAL);
      trace->set_max_abs_error(0.02 + 8.0 * Unit(h));
      trace->set_max_rel_error(0.05 + 50.0 * Unit(h >> 7));
      int64_t total = 1 << 20;
      int64_t wrong = 1 + static_cast<int64_t>(h % 40000);
      trace->set_matched_ratio(1.0 - static_cast<double>(wrong) / total);
      trace->set_log(absl::StrFormat(
          "trial 0: %d of %d output elements exceed atol=1e-02 and rtol=1e-02", wrong, total));
      trace->add_errors(absl::StrFormat("first mismatch at flat index %d: got %.4f, expected %.4f",
                                        h % total, 1.0 + Unit(h >> 3), 1.0 + Unit(h >> 5)));
      continue;
    }
    // A library runs about as fast as the reference (often is it).
    double speedup = libraries.empty() ? 0.3 + 1.7 * Unit(h) : 0.9 + 0.2 * Unit(h);
    trace->set_status(libraries.empty() ? v1::PASSED : v1::LIBRARY_FALLBACK);
    trace->set_reference_latency_ms(ref_ms);
    trace->set_latency_ms(ref_ms / speedup);
    trace->set_speedup(speedup);
    trace->set_max_abs_error(1e-4 * Unit(h >> 3));
    trace->set_max_rel_error(1e-3 * Unit(h >> 5));
    trace->set_matched_ratio(1.0);
    *trace->mutable_census() =
        SimulatedCensus(request.kernel_source(), kernel, libraries, trace->latency_ms());
    if (!libraries.empty()) {
      // As the harness: timed, but the speedup is not the submission's.
      trace->set_speedup(0);
      continue;
    }
    trace->set_roofline_fraction(std::min(0.95, 0.3 * speedup));
  }
  // Status, all_passed and min_speedup as the real worker writes them: its
  // own summary (eval_summary.h), so a failed workload leaves no speedup.
  SummarizeTraces(result);
  if (request.profile()) SimulateProfile(request, options_.definitions, kernel, hash("profile"), result);
  // The memcheck gate, simulated as clean (never a real sanitizer's word).
  if (request.memcheck() && result.traces_size() > 0) {
    result.mutable_memcheck()->set_status(v1::PASSED);
    result.mutable_memcheck()->set_tool("simulated sanitizer");
    result.mutable_memcheck()->set_workload_uuid(result.traces(0).workload_uuid());
  }
  return result;
}

}  // namespace ptxbench::worker
