#ifndef PTXBENCH_WORKLOADS_SAFETENSORS_H_
#define PTXBENCH_WORKLOADS_SAFETENSORS_H_

// Reading workload inputs from safetensors files, as FlashInfer-Trace
// datasets store them: an 8-byte little-endian header length, a JSON header
// {"<key>": {"dtype": "BF16", "shape": [...], "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the data. A tensor is taken exactly as the
// definition declares it: same dtype, same shape, no conversion (as
// FlashInfer-Bench does). Files come from datasets, so every size and offset
// is checked before it is trusted.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

struct SafetensorsEntry {
  std::string key;
  std::string dtype;  // the file's name for it: "BF16", "F32", "I32", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

// Parses the header of a safetensors file held in `bytes`. kInvalidArgument
// naming `origin` and the problem for a malformed or inconsistent header.
absl::StatusOr<std::vector<SafetensorsEntry>> ParseSafetensorsHeader(absl::string_view bytes,
                                                                     absl::string_view origin);

// The bytes of tensor `key` of the file at `path`, checked to be of the
// FlashInfer-Trace `dtype` ("bfloat16", "int32", ...) and exactly `dims`.
// kNotFound for a missing file or key, kInvalidArgument for a mismatch, each
// naming the file, the key and what differs.
absl::StatusOr<std::string> LoadSafetensorsTensor(const std::string& path, const std::string& key,
                                                  const std::string& dtype,
                                                  const std::vector<int64_t>& dims);

// The same checks as LoadSafetensorsTensor, reading only the file's header
// (the data may be gigabytes): whether tensor `key` of the file at `path`
// is there, of `dtype` and exactly `dims`, and lies within the file. The
// same errors.
absl::Status CheckSafetensorsTensor(const std::string& path, const std::string& key,
                                    const std::string& dtype, const std::vector<int64_t>& dims);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_SAFETENSORS_H_
