// The harness reads the candidate host's replies (hostile: the submission
// runs in that process and can write anything into the channel).
#include <cstddef>
#include <cstdint>
#include <string>

#include "worker/runner/wire/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)ptxbench::runner::protocol::DecodeReply(bytes);
  (void)ptxbench::runner::protocol::DecodeRequest(bytes);
  return 0;
}
