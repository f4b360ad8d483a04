#ifndef PTXBENCH_COMMON_FLAGS_H_
#define PTXBENCH_COMMON_FLAGS_H_

// Daemons take dashed flags (--data-dir, --lease-ttl-ms) as their documented
// interface, while absl flag names are identifiers (data_dir). This rewrites
// the names of "--a-b[=v]" arguments to "--a_b[=v]" before absl parses them;
// values and positionals are untouched.

#include <string>
#include <vector>

namespace ptxbench {

class DashedArgs {
 public:
  DashedArgs(int argc, char** argv);
  int argc() const { return static_cast<int>(pointers_.size()) - 1; }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> storage_;
  std::vector<char*> pointers_;
};

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_FLAGS_H_
