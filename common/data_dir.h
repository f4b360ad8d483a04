#ifndef PTXBENCH_COMMON_DATA_DIR_H_
#define PTXBENCH_COMMON_DATA_DIR_H_

#include <string>

namespace ptxbench {

// Root of the bundled data (workloads/data, prompts/, examples/):
// $PTXBENCH_DATA_DIR when set, else the source tree this build came from.
std::string DataDir();

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_DATA_DIR_H_
