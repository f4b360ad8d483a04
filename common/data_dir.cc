#include "common/data_dir.h"

#include <cstdlib>

namespace ptxbench {

std::string DataDir() {
  if (const char* env = std::getenv("PTXBENCH_DATA_DIR"); env && *env) return env;
  return PTXB_SOURCE_DATA_DIR;
}

}  // namespace ptxbench
