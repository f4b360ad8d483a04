// A message as JSON (proto_json.h).

#include "common/proto_json.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace ptxbench {

absl::StatusOr<std::string> ProtoJson(const google::protobuf::Message& message, bool indent) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = indent;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  if (auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
      !status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot write a ", message.GetTypeName(), " as JSON: ", status.ToString()));
  }
  return out;
}

}  // namespace ptxbench
