#include "worker/runner/measure/census.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {
namespace {

namespace v1 = ptxbench::v1;

constexpr absl::string_view kHeader = "census ";

// Unaccounted GPU time a call may have before the census is called
// incomplete: the bracket also holds the hand-over between the two
// processes (calibrated, but noisy by a few microseconds) and the gaps
// between one call's kernels, which the GPU spends idle.
constexpr double kSlackMs = 0.02;
constexpr double kSlackShare = 0.10;

// torch's fills (torch.zeros, .zero_(), .fill_) and same-dtype copies
// (.copy_, .contiguous()), by the names their kernels have: memory work a
// Python run() may do around its kernels. A cast between dtypes is not one:
// it runs other kernels, which count as library compute (an FP8 input
// cast to bf16 is the fallback the census exists to show).
constexpr absl::string_view kMemoryKernelMarks[] = {"FillFunctor", "direct_copy_kernel_cuda"};

bool IsImage(absl::string_view image) {
  if (image == "?" || image == "*" || image == "-") return true;
  if (image.size() != 17 || (image.back() != 'a' && image.back() != 'b')) return false;
  for (char c : image.substr(0, 16)) {
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  return true;
}

std::string Cut(absl::string_view name) {
  std::string out;
  for (char c : name.substr(0, kMaxCensusName)) out.push_back(c == ' ' || c == '\n' || c == '\t' ? '_' : c);
  return out;
}

// The upper median; 0 of none.
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

std::string EncodeCallCensus(const CallCensus& census) {
  std::vector<CensusEntry> entries = census.entries;
  std::stable_sort(entries.begin(), entries.end(),
                   [](const CensusEntry& a, const CensusEntry& b) { return a.ns > b.ns; });
  int64_t more = census.more;
  if (entries.size() > kMaxCensusEntries) {
    more += static_cast<int64_t>(entries.size() - kMaxCensusEntries);
    entries.resize(kMaxCensusEntries);
  }
  std::string lines;
  for (const CensusEntry& e : entries) {
    absl::StrAppend(&lines, "k ", IsImage(e.image) ? e.image : "?", " ", std::max<int64_t>(e.launches, 0),
                    " ", std::max<int64_t>(e.ns, 0), " ", Cut(e.name), "\n");
  }
  // 16 lines of at most ~230 bytes stay under kMaxReplyText; the header first.
  return absl::StrCat(kHeader, "busy=", std::max<int64_t>(census.busy_ns, 0), " more=", more,
                      "\n", lines)
      .substr(0, protocol::kMaxReplyText);
}

absl::StatusOr<CallCensus> DecodeCallCensus(absl::string_view text) {
  const auto bad = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("a malformed census: ", why));
  };
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty() || !absl::StartsWith(lines[0], kHeader)) return bad("no header");
  CallCensus c;
  const std::vector<absl::string_view> head = absl::StrSplit(lines[0].substr(kHeader.size()), ' ');
  if (head.size() != 2 || !absl::StartsWith(head[0], "busy=") || !absl::StartsWith(head[1], "more=") ||
      !absl::SimpleAtoi(head[0].substr(5), &c.busy_ns) ||
      !absl::SimpleAtoi(head[1].substr(5), &c.more) || c.busy_ns < 0 || c.more < 0) {
    return bad("its header");
  }
  if (lines.size() - 1 > kMaxCensusEntries) return bad("too many kernels");
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<absl::string_view> f = absl::StrSplit(lines[i], absl::MaxSplits(' ', 4));
    CensusEntry e;
    if (f.size() != 5 || f[0] != "k" || !IsImage(f[1]) || !absl::SimpleAtoi(f[2], &e.launches) ||
        !absl::SimpleAtoi(f[3], &e.ns) || e.launches < 0 || e.ns < 0 || f[4].empty() ||
        f[4].size() > kMaxCensusName) {
      return bad(absl::StrCat("line ", i + 1));
    }
    e.image = std::string(f[1]);
    e.name = std::string(f[4]);
    c.entries.push_back(std::move(e));
  }
  return c;
}

std::vector<std::string> CubinKernels(absl::string_view image) {
  std::vector<std::string> out;
  const size_t size = image.size();
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0 ||
      image[EI_CLASS] != ELFCLASS64) {
    return out;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
      eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
    return out;
  }
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, image.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr strtab = section(eh.e_shstrndx);
  if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset) return out;
  const absl::string_view names = image.substr(strtab.sh_offset, strtab.sh_size);
  constexpr absl::string_view kText = ".text.";
  for (size_t i = 0; i < eh.e_shnum && out.size() < kMaxImageKernels; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.size()) continue;
    absl::string_view name = names.substr(sh.sh_name);
    name = name.substr(0, name.find('\0'));
    if (absl::ConsumePrefix(&name, kText) && !name.empty()) out.emplace_back(name);
  }
  return out;
}

std::string CensusOffReason(absl::string_view note) {
  if (note == "census: on") return "";
  if (absl::ConsumePrefix(&note, "census: off: ") && !note.empty()) return std::string(note);
  return "the candidate host said nothing of its tracer";
}

v1::KernelOrigin OriginOf(const CensusRules& rules, const CensusEntry& entry) {
  if (entry.image == "-") return v1::MEMORY;  // the driver's memset / memcpy
  const bool known = entry.image.size() == 17;
  if (known && rules.language == "triton" && rules.jit_images.count(entry.image.substr(0, 16)) > 0) {
    return v1::SUBMISSION;
  }
  if (known && rules.language != "triton" && entry.image.back() == 'a') return v1::SUBMISSION;
  for (absl::string_view mark : kMemoryKernelMarks) {
    if (known && absl::StrContains(entry.name, mark)) return v1::MEMORY;
  }
  return v1::LIBRARY;
}

void CensusTally::Add(absl::string_view text, double net_ms, bool gate_forced) {
  ++timed_;
  if (!rules_.off.empty()) return;
  absl::StatusOr<CallCensus> c = DecodeCallCensus(text);
  if (!c.ok()) {
    ++malformed_;
    return;
  }
  ++seen_;
  left_out_ += c->more;
  for (const CensusEntry& e : c->entries) {
    Kernel& k = kernels_[e.name];
    const v1::KernelOrigin origin = OriginOf(rules_, e);
    const std::string image = e.image.size() == 17 ? e.image.substr(0, 16) : e.image;
    // One name from images of two origins is the worse of them.
    if (k.launches == 0 || origin == v1::LIBRARY) k.origin = origin;
    k.image = k.launches == 0 || k.image == image ? image : "*";
    k.launches += e.launches;
    k.ns += e.ns;
  }
  if (!gate_forced) {
    unaccounted_ms_.push_back(std::max(net_ms - static_cast<double>(c->busy_ns) / 1e6, 0.0));
    net_ms_.push_back(net_ms);
  }
}

double CensusTally::MedianUnaccountedMs() const { return Median(unaccounted_ms_); }

std::string CensusTally::Gap() const {
  if (timed_ == 0) return "";
  if (!rules_.off.empty()) return absl::StrCat("no census was taken: ", rules_.off);
  if (malformed_ > 0) {
    return absl::StrCat("the census of ", malformed_, " of ", timed_,
                        " timed calls was missing or malformed: what they ran cannot be shown");
  }
  if (left_out_ > 0) {
    return absl::StrCat(left_out_, " kernel names were left out of the census (more than ",
                        kMaxCensusEntries, " in one call): what they were cannot be shown");
  }
  if (!net_ms_.empty()) {
    const double median_net = Median(net_ms_);
    const double unaccounted = MedianUnaccountedMs();
    if (unaccounted > kSlackMs + kSlackShare * median_net) {
      return absl::StrFormat(
          "the census saw no kernel for %.3f ms of the call's %.3f ms of GPU time (median "
          "call): work ran that the census did not see",
          unaccounted, median_net);
    }
  }
  return "";
}

bool CensusTally::fallback() const { return rules_.off.empty() && !Finding().empty(); }

std::string CensusTally::Finding() const {
  std::vector<std::string> library;
  for (const auto& [name, k] : kernels_) {
    if (k.origin == v1::LIBRARY) library.push_back(name);
  }
  if (!library.empty()) {
    const size_t shown = std::min<size_t>(library.size(), 4);
    std::string names;
    for (size_t i = 0; i < shown; ++i) absl::StrAppend(&names, i ? ", " : "", library[i]);
    if (library.size() > shown) absl::StrAppend(&names, " and ", library.size() - shown, " more");
    return absl::StrCat("the timed calls ran library compute, not the submission's own kernels: ",
                        names);
  }
  return Gap();
}

v1::KernelCensus CensusTally::Summary(bool outputs_correct) const {
  v1::KernelCensus out;
  std::vector<std::pair<std::string, Kernel>> sorted(kernels_.begin(), kernels_.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  const double calls = static_cast<double>(std::max<int64_t>(seen_, 1));
  for (const auto& [name, k] : sorted) {
    v1::LaunchedKernel* l = out.add_kernels();
    l->set_name(name);
    l->set_origin(k.origin);
    l->set_image(k.image);
    l->set_launches(k.launches);
    l->set_ms_per_call(static_cast<double>(k.ns) / 1e6 / calls);
  }
  out.set_calls_seen(seen_);
  out.set_calls_timed(timed_);
  out.set_outputs_correct(outputs_correct);
  out.set_unaccounted_ms_per_call(MedianUnaccountedMs());
  out.set_gap(Gap());
  return out;
}

}  // namespace ptxbench::runner
