#ifndef PTXBENCH_PROMPTS_PROMPTS_H_
#define PTXBENCH_PROMPTS_PROMPTS_H_

// The prompt registry: tags map to an ordered list of documents or other tags,
// expanded recursively (like PTXBench's prompt hub). A tag renders into the
// system prompt; the task prompt carries the definition as JSON.
//
// Registry file: <root>/registry.json
//   {"tags": {"ptxb-no-hint": ["docs/role.md", "docs/abi.md"],
//             "ptxb-wgmma":   ["ptxb-no-hint", "docs/wgmma.md"]}}
// An entry ending in ".md" or ".txt" (or containing '/') is a document path
// relative to <root>; anything else is a tag. The kernel ABI descriptions are
// <root>/abi/<language>.md. Immutable after Load; safe to share between threads.
//
// A PTXBench prompt hub may be loaded beside it (`--prompts HUB`): hub.json
// maps each tag to its entries; as in PTXBench, an entry holding a '/' is a
// document and any other entry another tag of the hub. The documents resolve
// against one folder for the whole hub, the first of <hub>/fragments, <hub>,
// its parent and its grandparent under which every one of them exists
// (PTXBench keeps them in each of these places in its layouts). A hub tag
// renders as PTXBench assembles it: each entry's text followed by a blank
// line, nested tags in place, repeats kept. ptxbench's ABI description for
// the language follows it. A hub tag may not share a name with a bundled one.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/gpu_arch.h"
#include "workloads/definition.h"

namespace ptxbench::prompts {

class PromptRegistry {
 public:
  // Reads <root>/registry.json and every document it names. Fails with one
  // message naming the problem: malformed registry, missing document (tag and
  // path), reference to an unknown tag, or a cycle (the tags on it, in order).
  // `hub` (optional): a PTXBench hub.json, or the folder that holds one;
  // `hub_documents` (optional): the folder its documents resolve against
  // (a PTXBench experiment's prompt_files_root) instead of the first that
  // holds them all.
  static absl::StatusOr<std::unique_ptr<PromptRegistry>> Load(
      const std::string& root, const std::string& hub = "", const std::string& hub_documents = "");

  // The bundled prompt root (DataDir()/prompts).
  static std::string BundledRoot();
  // The kernel languages a prompt can ask for (KernelLanguages(), in
  // prompts/languages.h), each with its ABI description.
  static const std::vector<std::string>& Languages();

  // NOT_FOUND "unknown prompt tag 'x' (known: ...)" when absent; without a hub
  // loaded it says that PTXBench's tags need theirs (--prompts).
  absl::Status Check(absl::string_view tag) const;

  // Sorted tag names.
  std::vector<std::string> Tags() const;

  // The document paths `tag` expands to, in expansion order: entries in list
  // order, nested tags expanded in place, each document kept at its first
  // occurrence only.
  absl::StatusOr<std::vector<std::string>> Documents(absl::string_view tag) const;

  // The prompts speak of the GPUs of `architectures` (sorted sm_NN names,
  // as an experiment holds them; prompts/targets.h fills the bundled
  // documents' placeholders). The default is the Hopper family's.
  //
  // The system prompt of `tag`: TagText(tag), then the kernel ABI
  // description for `language` (KernelLanguages()), as WithAbi joins them.
  absl::StatusOr<std::string> RenderSystemPrompt(
      absl::string_view tag, absl::string_view language,
      const std::vector<std::string>& architectures = DefaultArchitectures()) const;
  // `tag`'s own text, ending with a blank line: its documents in expansion
  // order (each once), or a hub tag as PTXBench assembles it (as it is).
  absl::StatusOr<std::string> TagText(
      absl::string_view tag,
      const std::vector<std::string>& architectures = DefaultArchitectures()) const;
  // A tag's text (TagText's, or one a submission brought: `submit
  // --prompts`) followed by the kernel ABI description for `language`.
  absl::StatusOr<std::string> WithAbi(
      absl::string_view text, absl::string_view language,
      const std::vector<std::string>& architectures = DefaultArchitectures()) const;
  // Whether `tag` asks for profile feedback: its expansion holds the
  // bundled document that explains the feedback's profile section
  // (kProfileDocument). False for a tag this registry does not have.
  bool AsksForProfile(absl::string_view tag) const;
  static constexpr char kProfileDocument[] = "docs/profile_feedback.md";
  // Whether `tag` comes from the hub (--prompts), not from the bundled root.
  bool IsHubTag(absl::string_view tag) const { return hub_tags_.contains(tag); }
  // Whether `tag` asks for Triton kernels: its name or one of its documents
  // says triton (PTXBench's triton-hopper*, triton-blackwell*; ptxb-triton).
  // Judged by its name alone for a tag this registry does not have.
  bool IsTritonTag(absl::string_view tag) const;
  // FAILED_PRECONDITION when `tag` asks for a kernel other than what the
  // experiment evaluates, so that it is refused rather than run as something
  // else: a Triton tag (IsTritonTag) in an experiment whose `language` is not
  // "triton", any other tag in one whose language is, or a tag written for a
  // GPU family (its name or a document's says hopper, h100, b200, sm100,
  // ...: FamiliesNamedBy) that none of `architectures` is of.
  absl::Status CheckTarget(
      absl::string_view tag,
      const std::vector<std::string>& architectures = DefaultArchitectures(),
      absl::string_view language = "cuda") const;

  // Appended to a fix-it trajectory's task prompt: the broken kernel and its
  // error log, each in a fence it cannot close, and what to do.
  static std::string RenderRepairPrompt(absl::string_view kernel, absl::string_view log,
                                        absl::string_view language);

  // Where the tags come from, for messages: the root, and the hub if any.
  std::string Origin() const;

  // The first user message: what to write and for which GPU, the target,
  // the output format (one fenced block of the language), and the
  // definition as JSON.
  static std::string RenderTaskPrompt(
      const workloads::Definition& definition, absl::string_view language,
      double target_speedup, int num_turns,
      const std::vector<std::string>& architectures = DefaultArchitectures());

 private:
  absl::Status LoadHub(const std::string& hub, const std::string& folder);
  void ExpandInto(const std::vector<std::string>& entries,
                  std::vector<std::string>& documents) const;
  // PTXBench's assembly of a hub tag.
  std::string AssembleHubTag(const std::string& tag) const;
  // `tag` and the documents it expands to (just `tag` when unknown): what
  // IsTritonTag and CheckTarget read a tag's language and GPUs from.
  std::vector<std::string> NamesOf(absl::string_view tag) const;

  std::string root_;
  std::string hub_;  // the hub.json read, or empty
  std::set<std::string, std::less<>> hub_tags_;
  std::map<std::string, std::vector<std::string>, std::less<>> tags_;
  std::map<std::string, std::string, std::less<>> documents_;  // path -> text
};

}  // namespace ptxbench::prompts

#endif  // PTXBENCH_PROMPTS_PROMPTS_H_
