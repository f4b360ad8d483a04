#include "worker/runner/measure/fixed_inputs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/runner/measure/tensors.h"
#include "workloads/safetensors.h"

namespace ptxbench::runner {
namespace {

template <typename T>
std::string Bytes(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

template <typename I>
absl::StatusOr<std::string> Integer(double v, bool integral) {
  if (!integral || v < static_cast<double>(std::numeric_limits<I>::min()) ||
      v > static_cast<double>(std::numeric_limits<I>::max())) {
    return absl::InvalidArgumentError("is not an integer that fits the dtype");
  }
  return Bytes(static_cast<I>(v));
}

}  // namespace

absl::StatusOr<std::string> EncodeScalar(const std::string& json_text, ptxb::DType dtype) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_boolean() && !j.is_number()) {
    return absl::InvalidArgumentError(absl::StrCat("the scalar ", json_text, " is not a number"));
  }
  // Integers are exact up to 2^53 as a double; an int64 beyond that is
  // taken from the JSON integer itself.
  const double v = j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>();
  const bool integral = j.is_boolean() || j.is_number_integer() || std::trunc(v) == v;
  absl::StatusOr<std::string> bytes;
  switch (dtype) {
    case ptxb::DType::kFloat32: bytes = Bytes(static_cast<float>(v)); break;
    case ptxb::DType::kFloat16: bytes = Bytes(__double2half(v)); break;
    case ptxb::DType::kBFloat16: bytes = Bytes(__double2bfloat16(v)); break;
    case ptxb::DType::kFloat8E4M3FN: bytes = Bytes(__nv_fp8_e4m3(v)); break;
    case ptxb::DType::kFloat8E5M2: bytes = Bytes(__nv_fp8_e5m2(v)); break;
    case ptxb::DType::kInt64:
      bytes = j.is_number_integer() ? Bytes(j.get<int64_t>()) : Integer<int64_t>(v, integral);
      break;
    case ptxb::DType::kInt32: bytes = Integer<int32_t>(v, integral); break;
    case ptxb::DType::kInt16: bytes = Integer<int16_t>(v, integral); break;
    case ptxb::DType::kInt8: bytes = Integer<int8_t>(v, integral); break;
    case ptxb::DType::kBool:
      if (v != 0 && v != 1) return absl::InvalidArgumentError(absl::StrCat("the scalar ", json_text, " is not a boolean"));
      bytes = Bytes(static_cast<uint8_t>(v));
      break;
    default:
      return absl::UnimplementedError("no scalar of this dtype");
  }
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the scalar ", json_text, " ", bytes.status().message()));
  }
  return bytes;
}

absl::StatusOr<std::vector<FixedValue>> LoadFixedInputs(const workloads::Definition& definition,
                                                        const WorkloadSpec& workload) {
  std::vector<FixedValue> values;
  for (const FixedInput& f : workload.fixed) {
    int index = -1;
    for (size_t i = 0; i < definition.inputs.size(); ++i) {
      if (definition.inputs[i].name == f.name) index = static_cast<int>(i);
    }
    if (index < 0) return absl::InvalidArgumentError(absl::StrCat("no input named ", f.name));
    const workloads::TensorSpec& spec = definition.inputs[index];
    PTXB_ASSIGN_OR_RETURN(const ptxb::DType dtype, DTypeOf(spec));
    FixedValue value{index, ""};
    if (f.path.empty()) {
      absl::StatusOr<std::string> bytes = EncodeScalar(f.scalar_json, dtype);
      if (!bytes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", f.name, " (", spec.dtype, "): ", bytes.status().message()));
      }
      if (!spec.is_scalar) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", f.name, " is a tensor; a scalar source cannot fill it"));
      }
      value.bytes = *std::move(bytes);
    } else {
      PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                            workloads::TensorDims(spec, workload.axes));
      PTXB_ASSIGN_OR_RETURN(value.bytes, workloads::LoadSafetensorsTensor(f.path, f.tensor_key,
                                                                         spec.dtype, dims));
    }
    values.push_back(std::move(value));
  }
  return values;
}

}  // namespace ptxbench::runner
