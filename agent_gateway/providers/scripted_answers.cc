#include "agent_gateway/providers/scripted_answers.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/file.h"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;

// The answer text of one file: markdown as is, code in one fenced block.
std::string AnswerText(const fs::path& path) {
  const std::string body = ReadFile(path.string()).value_or("");
  const std::string ext = path.extension().string();
  if (ext == ".md") return body;
  const char* fence = ext == ".ptx" ? "ptx" : ext == ".py" ? "python" : "cuda";
  return absl::StrCat("Here is the kernel (scripted answer ", path.filename().string(),
                      ").\n\n```", fence, "\n", body, absl::EndsWith(body, "\n") ? "" : "\n",
                      "```\n");
}

// -1 for "answer.*", N for "turnN.*", nullopt for other names.
std::optional<int> TurnOf(const fs::path& path) {
  const std::string stem = path.stem().string();
  if (stem == "answer") return -1;
  absl::string_view rest = stem;
  int turn = 0;
  if (absl::ConsumePrefix(&rest, "turn") && absl::SimpleAtoi(rest, &turn) && turn >= 0) return turn;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScriptedAnswers>> ScriptedAnswers::Load(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("answers folder ", dir, " does not exist"));
  }
  auto answers = std::unique_ptr<ScriptedAnswers>(new ScriptedAnswers());
  for (const fs::directory_entry& def : fs::directory_iterator(dir)) {
    if (!def.is_directory()) continue;
    // In name order, so that a turn of several files (turn0.cu and
    // turn0.py) is one answer, the same on every run.
    std::vector<fs::path> files;
    for (const fs::directory_entry& file : fs::directory_iterator(def.path())) {
      const std::string ext = file.path().extension().string();
      if (!file.is_regular_file() ||
          (ext != ".cu" && ext != ".ptx" && ext != ".py" && ext != ".md")) {
        continue;
      }
      files.push_back(file.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::optional<int> turn = TurnOf(file);
      if (!turn) continue;
      std::string& answer = answers->answers_[def.path().filename().string()][*turn];
      absl::StrAppend(&answer, answer.empty() ? "" : "\n", AnswerText(file));
    }
  }
  if (answers->answers_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "answers folder ", dir,
        " holds no <definition>/turn<N>.cu|.ptx|.py|.md or answer.* file"));
  }
  return answers;
}

absl::StatusOr<ptxbench::v1::LlmResponse> ScriptedAnswers::Answer(
    const ptxbench::v1::LlmRequest& request, int turn) const {
  std::string prompt;
  for (const ptxbench::v1::ChatMessage& m : request.messages()) {
    if (m.role() == "user") {
      prompt = m.content();
      break;
    }
  }
  const std::map<int, std::string>* found = nullptr;
  size_t best = 0;
  for (const auto& [definition, turns] : answers_) {
    if (definition.size() > best && absl::StrContains(prompt, definition)) {
      best = definition.size();
      found = &turns;
    }
  }
  if (found == nullptr) {
    std::vector<std::string> names;
    for (const auto& [definition, turns] : answers_) names.push_back(definition);
    return absl::NotFoundError(absl::StrCat("no scripted answer names this task's definition (have: ",
                                            absl::StrJoin(names, ", "), ")"));
  }
  auto it = found->find(turn);
  if (it == found->end()) it = found->find(-1);
  if (it == found->end()) {
    return absl::NotFoundError(absl::StrCat("no scripted answer for turn ", turn));
  }
  ptxbench::v1::LlmResponse response;
  response.set_text(it->second);
  response.set_finish_reason("stop");
  response.set_provider("scripted");
  response.set_simulated(true);
  response.mutable_usage()->set_output_tokens(static_cast<int64_t>(it->second.size() / 4));
  return response;
}

}  // namespace ptxbench::agent_gateway
