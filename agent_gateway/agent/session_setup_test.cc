#include "agent_gateway/agent/session_setup.h"

#include <gtest/gtest.h>

namespace ptxbench::agent_gateway::session_internal {
namespace {

// The agent writes the kernel file its language names: a Triton session's
// is kernel.py, PTXBench's kernel.py::run.
TEST(SessionSetupTest, TheKernelFileIsNamedByTheLanguage) {
  EXPECT_EQ(KernelFileName("cuda"), "kernel.cu");
  EXPECT_EQ(KernelFileName("ptx"), "kernel.ptx");
  EXPECT_EQ(KernelFileName("triton"), "kernel.py");
  EXPECT_EQ(KernelFileName("solution"), "kernel.cu");
}

}  // namespace
}  // namespace ptxbench::agent_gateway::session_internal
