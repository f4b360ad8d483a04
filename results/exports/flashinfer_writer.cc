#include "results/exports/flashinfer_writer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "common/gpu_arch.h"
#include "common/status_macros.h"
#include "results/exports/definitions.h"
#include "results/exports/file_sink.h"
#include "results/exports/folder_writer.h"
#include "results/exports/turn_facts.h"
#include "workloads/solution.h"
#include "workloads/trace.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = StrictJson;

constexpr absl::string_view kTvmFfiExport = "TVM_FFI_DLL_EXPORT_TYPED_FUNC";

// Names that become file names (the registry's own rule for definition
// names and op types, workloads/definition.cc).
bool IsFileSafe(absl::string_view name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

// `text` with every character a file name cannot hold replaced by '_'.
std::string FileSafe(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') c = '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
}

// The function a TVM-FFI kernel exports (the first argument of its export
// macro), or "" for a kernel of ptxbench's own ABI.
std::string TvmFfiEntry(absl::string_view source) {
  const size_t at = source.find(kTvmFfiExport);
  if (at == absl::string_view::npos) return "";
  size_t i = source.find('(', at);
  if (i == absl::string_view::npos) return "run";
  ++i;
  while (i < source.size() && absl::ascii_isspace(source[i])) ++i;
  size_t end = i;
  while (end < source.size() && (absl::ascii_isalnum(source[end]) || source[end] == '_')) ++end;
  return end > i ? std::string(source.substr(i, end - i)) : "run";
}

class FlashinferWriter : public FolderWriter {
 public:
  explicit FlashinferWriter(std::unique_ptr<OutputDir> dir)
      : FolderWriter(std::move(dir), "flashinfer-trace", /*one_experiment=*/false) {}

 private:
  absl::Status OnBegin(const v1::Experiment&,
                       const std::vector<v1::DefinitionDocument>& definitions) override {
    for (const v1::DefinitionDocument& doc : definitions) {
      for (const std::string* name : {&doc.name(), &doc.op_type()}) {
        if (!IsFileSafe(*name)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "definition ", doc.name(), ": \"", *name,
              "\" cannot name a dataset folder or file ([A-Za-z0-9._-], not starting with '.')"));
        }
      }
    }
    PTXB_ASSIGN_OR_RETURN(std::vector<const DefinitionIndex::Entry*> added,
                          definitions_.Add(definitions));
    for (const DefinitionIndex::Entry* entry : added) {
      const v1::DefinitionDocument& doc = entry->document;
      PTXB_RETURN_IF_ERROR(dir().MakeDirs(absl::StrCat("definitions/", doc.op_type())));
      PTXB_RETURN_IF_ERROR(WriteFile(
          dir().File(absl::StrCat("definitions/", doc.op_type(), "/", doc.name(), ".json")),
          doc.json()));
      if (doc.workload_lines().empty()) continue;
      PTXB_RETURN_IF_ERROR(dir().MakeDirs(absl::StrCat("workloads/", doc.op_type())));
      PTXB_RETURN_IF_ERROR(WriteFile(
          dir().File(absl::StrCat("workloads/", doc.op_type(), "/", doc.name(), ".jsonl")),
          absl::StrCat(absl::StrJoin(doc.workload_lines(), "\n"), "\n")));
    }
    return absl::OkStatus();
  }

  absl::Status OnAdd(const v1::Trajectory& t) override {
    const v1::TrajectorySummary& s = t.summary();
    const DefinitionIndex::Entry* entry = definitions_.Find(s.definition());
    if (entry == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "trajectory ", s.trajectory_id(), " uses definition ", s.definition(),
          ", whose document was not given with its experiment"));
    }
    // FlashInfer-Bench has no language for a raw PTX module.
    if (experiment().language() == "ptx") return absl::OkStatus();
    for (const v1::Turn& turn : t.turns()) {
      if (turn.kernel_sha256().empty() || turn.kernel_source().empty()) continue;
      PTXB_ASSIGN_OR_RETURN(std::optional<std::string> solution, WriteSolution(*entry, s, turn));
      if (!solution || !turn.has_eval()) continue;
      for (const v1::WorkloadTrace& trace : turn.eval().traces()) {
        if (!workloads::IsFlashInferStatus(StatusName(trace.status()))) continue;
        Json line = workloads::TraceJson(ToTraceRecord(
            s.definition(), solution, trace, turn.eval(),
            definitions_.FindWorkload(s.definition(), trace.workload_uuid()),
            turn.finished_unix_ms()));
        line["ptxbench"] = {{"experiment_id", experiment().experiment_id()},
                            {"trajectory_id", s.trajectory_id()},
                            {"turn", turn.index()},
                            {"kernel_sha256", turn.kernel_sha256()}};
        PTXB_ASSIGN_OR_RETURN(FileSink * sink, TracesOf(entry->document));
        sink->Append(line.dump(-1, ' ', false, Json::error_handler_t::replace));
        sink->Append("\n");
        PTXB_RETURN_IF_ERROR(sink->status());
      }
    }
    return absl::OkStatus();
  }

  absl::Status OnFinish() override {
    absl::Status status;
    for (auto& [name, sink] : traces_) status.Update(sink->Close());
    return status;
  }

  absl::StatusOr<FileSink*> TracesOf(const v1::DefinitionDocument& doc) {
    auto it = traces_.find(doc.name());
    if (it != traces_.end()) return it->second.get();
    PTXB_RETURN_IF_ERROR(dir().MakeDirs(absl::StrCat("traces/", doc.op_type())));
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> sink,
                          FileSink::Create(dir().File(
                              absl::StrCat("traces/", doc.op_type(), "/", doc.name(), ".jsonl"))));
    return traces_.emplace(doc.name(), std::move(sink)).first->second.get();
  }

  // The solution of the turn's kernel, written once: its name, or nullopt
  // for a solution JSON that does not parse (nothing to load, so no traces).
  absl::StatusOr<std::optional<std::string>> WriteSolution(const DefinitionIndex::Entry& entry,
                                                           const v1::TrajectorySummary& s,
                                                           const v1::Turn& turn) {
    const v1::DefinitionDocument& doc = entry.document;
    const std::string folder = absl::StrCat("solutions/", doc.op_type(), "/", doc.name());
    const std::string generated = absl::StrCat(FileSafe(s.model()), "_", doc.name(), "_",
                                               turn.kernel_sha256().substr(0, 12));
    auto path = [&](const std::string& name) { return dir().File(absl::StrCat(folder, "/", name, ".json")); };
    std::string name = generated;
    std::string text;
    if (experiment().language() == "solution") {
      // The model wrote a solution: it goes back as it was, under its own
      // name, unless that name is unsafe or another kernel's anywhere in the
      // dataset (FlashInfer-Bench refuses a dataset that repeats a name).
      if (!workloads::ParseSolution(turn.kernel_source(), "solution").ok()) return std::nullopt;
      Json solution = Json::parse(turn.kernel_source());
      name = solution["name"].get<std::string>();
      text = turn.kernel_source();
      auto [owner, fresh] = own_names_.emplace(name, turn.kernel_sha256());
      if (!fresh && owner->second == turn.kernel_sha256()) return name;  // written already
      if (!IsFileSafe(name) || !fresh) {
        if (fresh) own_names_.erase(owner);
        name = generated;
        solution["name"] = name;
        text = solution.dump(2, ' ', false, Json::error_handler_t::replace);
      }
    } else if (experiment().language() == "triton") {
      text = TritonSolutionText(s, turn, generated);
    } else {
      text = SolutionText(s, turn, generated);
    }
    if (std::filesystem::exists(path(name))) return name;
    PTXB_RETURN_IF_ERROR(dir().MakeDirs(folder));
    PTXB_RETURN_IF_ERROR(WriteFile(path(name), text));
    return name;
  }

  // A CUDA kernel as a solution of one source file, in the shape PTXBench
  // gives its own (target "cuda", kernel.cu::<entry>).
  std::string SolutionText(const v1::TrajectorySummary& s, const v1::Turn& turn,
                           const std::string& name) const {
    const std::string entry = TvmFfiEntry(turn.kernel_source());
    const bool tvm_ffi = !entry.empty();
    Json spec = {{"language", "cuda"},
                 {"target_hardware", Json::array({"cuda"})},
                 {"entry_point", absl::StrCat("kernel.cu::", tvm_ffi ? entry : "run")},
                 {"dependencies", Json::array()},
                 {"destination_passing_style", true},
                 {"binding", tvm_ffi ? Json("tvm-ffi") : Json()}};
    Json solution = {
        {"name", name},
        {"definition", s.definition()},
        {"author", s.model()},
        {"spec", std::move(spec)},
        {"sources", Json::array({{{"path", "kernel.cu"}, {"content", turn.kernel_source()}}})},
        {"description",
         absl::StrCat(tvm_ffi ? "TVM-FFI kernel" : "ptxbench kernel ABI (ptxbench/kernel_abi.h, "
                                                   "PTXB_EXPORT run)",
                      " from ptxbench experiment ", experiment().name(), ", trajectory ",
                      s.trajectory_id(), ", turn ", turn.index(), "; kernel sha256 ",
                      turn.kernel_sha256())}};
    return solution.dump(2, ' ', false, Json::error_handler_t::replace);
  }

  // A Triton kernel as PTXBench's test scripts make it a solution
  // (language "triton", kernel.py::run, destination-passing), its target
  // the GPU families the experiment ran on ("Hopper", as TRITON_GPU_ARCH).
  std::string TritonSolutionText(const v1::TrajectorySummary& s, const v1::Turn& turn,
                                 const std::string& name) const {
    std::vector<std::string> families;
    for (const std::string& arch : experiment().architectures()) {
      const std::string family(FamilyTitle(arch));
      const std::string target = family.empty() ? arch : family;
      if (std::find(families.begin(), families.end(), target) == families.end()) {
        families.push_back(target);
      }
    }
    if (families.empty()) families.push_back("cuda");
    Json spec = {{"language", "triton"},
                 {"target_hardware", families},
                 {"entry_point", "kernel.py::run"},
                 {"dependencies", Json::array()},
                 {"destination_passing_style", true}};
    Json solution = {
        {"name", name},
        {"definition", s.definition()},
        {"author", s.model()},
        {"spec", std::move(spec)},
        {"sources", Json::array({{{"path", "kernel.py"}, {"content", turn.kernel_source()}}})},
        {"description", absl::StrCat("Triton kernel from ptxbench experiment ", experiment().name(),
                                     ", trajectory ", s.trajectory_id(), ", turn ", turn.index(),
                                     "; kernel sha256 ", turn.kernel_sha256())}};
    return solution.dump(2, ' ', false, Json::error_handler_t::replace);
  }

  DefinitionIndex definitions_;
  std::map<std::string, std::unique_ptr<FileSink>> traces_;  // by definition
  // The names model-written solutions kept -> the kernel's sha256. Generated
  // names need no such memory: they hold the definition and kernel hash, and
  // the file system says whether one is written.
  std::map<std::string, std::string> own_names_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Writer>> MakeFlashinferWriter(std::unique_ptr<OutputDir> dir,
                                                             const Options&) {
  return std::unique_ptr<Writer>(new FlashinferWriter(std::move(dir)));
}

}  // namespace ptxbench::exports
