#ifndef PTXBENCH_WORKLOADS_TESTING_SAFETENSORS_FILE_H_
#define PTXBENCH_WORKLOADS_TESTING_SAFETENSORS_FILE_H_

// Tests write their own small safetensors files.

#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::workloads::testing {

// A safetensors file: the header length (8 bytes, little endian), the
// header, the data.
inline std::string PackSafetensors(const nlohmann::json& header, const std::string& data) {
  const std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text + data;
}

}  // namespace ptxbench::workloads::testing

#endif  // PTXBENCH_WORKLOADS_TESTING_SAFETENSORS_FILE_H_
