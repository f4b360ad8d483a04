#include "workloads/workload_record.h"

#include <string>

namespace ptxbench::workloads {
namespace {

StrictJson ScalarValue(const InputSource& source) {
  switch (source.scalar_kind) {
    case InputSource::ScalarKind::kBool:
      return source.scalar_int != 0;
    case InputSource::ScalarKind::kInt:
      return source.scalar_int;
    case InputSource::ScalarKind::kFloat:
      break;
  }
  // nlohmann writes a double in its shortest exact form and gives an
  // integral one a fraction ("2.0"), so it reads back as a float.
  return source.scalar_value;
}

StrictJson InputJson(const InputSource& source) {
  StrictJson out = StrictJson::object();
  out["type"] = source.type;
  if (source.type == "scalar") {
    out["value"] = ScalarValue(source);
  } else if (source.type == "safetensors") {
    out["path"] = source.path;
    out["tensor_key"] = source.tensor_key;
  }
  return out;
}

}  // namespace

StrictJson WorkloadJson(const Workload& workload) {
  StrictJson axes = StrictJson::object();
  for (const auto& [name, value] : workload.axes) axes[name] = value;
  StrictJson inputs = StrictJson::object();
  for (const auto& [name, source] : workload.inputs) inputs[name] = InputJson(source);
  StrictJson out = StrictJson::object();
  out["uuid"] = workload.uuid;
  out["axes"] = std::move(axes);
  out["inputs"] = std::move(inputs);
  return out;
}

std::string FormatWorkloadRecord(absl::string_view definition, const Workload& workload) {
  StrictJson line = StrictJson::object();
  line["definition"] = std::string(definition);
  line["solution"] = nullptr;
  line["workload"] = WorkloadJson(workload);
  line["evaluation"] = nullptr;
  return line.dump(-1, ' ', false, StrictJson::error_handler_t::replace);
}

}  // namespace ptxbench::workloads
