// A build's entry in the compile cache (cache_entry.h): its result file,
// written and read back, and its publication.
#include "worker/compile/cache_entry.h"

#include <stdlib.h>

#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ptxbench::worker::cache_entry {
namespace fs = std::filesystem;
using ptxbench::v1::EvalStatus;

namespace {

nlohmann::json ResultToJson(const CompileResult& r) {
  nlohmann::json j;
  j["status"] = ptxbench::v1::EvalStatus_Name(r.status);
  j["library"] = r.library;
  j["artifact"] = r.artifact_path.empty() ? "" : fs::path(r.artifact_path).filename().string();
  j["ptx"] = r.ptx_path.empty() ? "" : fs::path(r.ptx_path).filename().string();
  j["resources"] = nlohmann::json::array();
  for (const auto& k : r.resources) {
    j["resources"].push_back({{"kernel_name", k.kernel_name()},
                              {"registers", k.registers()},
                              {"shared_mem_bytes", k.shared_mem_bytes()},
                              {"spill_store_bytes", k.spill_store_bytes()},
                              {"spill_load_bytes", k.spill_load_bytes()},
                              {"stack_frame_bytes", k.stack_frame_bytes()}});
  }
  if (r.sass) {
    j["sass"] = {{"tool", r.sass->tool()},
                 {"instructions", r.sass->instructions()},
                 {"instruction_counts",
                  std::map<std::string, int64_t>(r.sass->instruction_counts().begin(),
                                                 r.sass->instruction_counts().end())},
                 {"architecture_counts",
                  std::map<std::string, int64_t>(r.sass->architecture_counts().begin(),
                                                 r.sass->architecture_counts().end())}};
  }
  j["census"] = {
      {"sha256", r.ptx.sha256()},
      {"size_bytes", r.ptx.size_bytes()},
      {"virtual_arch", r.ptx.virtual_arch()},
      {"instruction_counts", std::map<std::string, int64_t>(r.ptx.instruction_counts().begin(),
                                                            r.ptx.instruction_counts().end())},
      {"architecture_counts", std::map<std::string, int64_t>(r.ptx.architecture_counts().begin(),
                                                             r.ptx.architecture_counts().end())}};
  return j;
}

absl::StatusOr<CompileResult> ParseCached(const fs::path& dir) {
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile((dir / kResultFile).string()));
  PTXB_ASSIGN_OR_RETURN(std::string log, ReadFile((dir / kLogFile).string()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EvalStatus status;
  if (j.is_discarded() || !j.is_object() ||
      !ptxbench::v1::EvalStatus_Parse(j.value("status", ""), &status)) {
    return absl::DataLossError(absl::StrCat("corrupt cache entry ", dir.string()));
  }
  CompileResult r;
  r.status = status;
  r.log = std::move(log);
  r.library = j.value("library", "");
  if (std::string a = j.value("artifact", ""); !a.empty()) r.artifact_path = (dir / a).string();
  if (std::string p = j.value("ptx", ""); !p.empty()) r.ptx_path = (dir / p).string();
  const nlohmann::json resources = j.value("resources", nlohmann::json::array());
  for (const auto& k : resources) {
    auto& out = r.resources.emplace_back();
    out.set_kernel_name(k.value("kernel_name", ""));
    out.set_registers(k.value("registers", 0));
    out.set_shared_mem_bytes(k.value("shared_mem_bytes", int64_t{0}));
    out.set_spill_store_bytes(k.value("spill_store_bytes", int64_t{0}));
    out.set_spill_load_bytes(k.value("spill_load_bytes", int64_t{0}));
    out.set_stack_frame_bytes(k.value("stack_frame_bytes", int64_t{0}));
  }
  const nlohmann::json c = j.value("census", nlohmann::json::object());
  r.ptx.set_sha256(c.value("sha256", ""));
  r.ptx.set_size_bytes(c.value("size_bytes", int64_t{0}));
  r.ptx.set_virtual_arch(c.value("virtual_arch", ""));
  const nlohmann::json instructions = c.value("instruction_counts", nlohmann::json::object());
  for (const auto& [k, v] : instructions.items()) {
    (*r.ptx.mutable_instruction_counts())[k] = v.get<int64_t>();
  }
  const nlohmann::json architectures = c.value("architecture_counts", nlohmann::json::object());
  for (const auto& [k, v] : architectures.items()) {
    (*r.ptx.mutable_architecture_counts())[k] = v.get<int64_t>();
  }
  if (j.contains("sass") && j["sass"].is_object()) {
    const nlohmann::json& s = j["sass"];
    ptxbench::v1::SassCensus& sass = r.sass.emplace();
    sass.set_tool(s.value("tool", ""));
    sass.set_instructions(s.value("instructions", int64_t{0}));
    // Named, not iterated as s.value(...).items(): the range-for would keep
    // only the proxy alive, not the json it walks (the counts were lost).
    const nlohmann::json instructions = s.value("instruction_counts", nlohmann::json::object());
    const nlohmann::json architectures = s.value("architecture_counts", nlohmann::json::object());
    for (const auto& [k, v] : instructions.items()) {
      (*sass.mutable_instruction_counts())[k] = v.get<int64_t>();
    }
    for (const auto& [k, v] : architectures.items()) {
      (*sass.mutable_architecture_counts())[k] = v.get<int64_t>();
    }
  }
  r.cache_hit = true;
  return r;
}

}  // namespace

absl::StatusOr<std::string> MakeTempDir(const std::string& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string tmpl = (fs::path(parent) / ".build-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp under ", parent, " failed"));
  }
  return tmpl;
}

absl::Status WriteResult(const std::string& dir, const CompileResult& result) {
  PTXB_RETURN_IF_ERROR(WriteFile(dir + "/" + kLogFile, result.log));
  return WriteFile(dir + "/" + kResultFile, ResultToJson(result).dump(2));
}

absl::StatusOr<CompileResult> LoadCached(const fs::path& dir) {
  try {
    return ParseCached(dir);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("corrupt cache entry ", dir.string(), ": ", e.what()));
  }
}

absl::StatusOr<CompileResult> Publish(const std::string& dir, const fs::path& final_dir,
                                      const std::string& cache_key) {
  std::error_code ec;
  fs::rename(dir, final_dir, ec);
  if (ec) {
    if (!fs::exists(final_dir / kResultFile)) {
      fs::remove_all(final_dir, ec);
      fs::rename(dir, final_dir, ec);
    }
    if (ec || fs::exists(dir)) fs::remove_all(dir, ec);
  }
  absl::StatusOr<CompileResult> published = LoadCached(final_dir);
  if (!published.ok()) return published.status();
  published->cache_hit = false;
  published->cache_key = cache_key;
  return published;
}

}  // namespace ptxbench::worker::cache_entry
