#include "common/flags.h"

namespace ptxbench {

DashedArgs::DashedArgs(int argc, char** argv) {
  bool after_double_dash = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") after_double_dash = true;
    if (i > 0 && !after_double_dash && arg.size() > 2 && arg[0] == '-' && arg[1] == '-') {
      size_t end = arg.find('=');
      if (end == std::string::npos) end = arg.size();
      for (size_t j = 2; j < end; ++j) {
        if (arg[j] == '-') arg[j] = '_';
      }
    }
    storage_.push_back(std::move(arg));
  }
  for (std::string& s : storage_) pointers_.push_back(s.data());
  pointers_.push_back(nullptr);
}

}  // namespace ptxbench
