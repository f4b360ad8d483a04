#ifndef PTXBENCH_COMMON_PROTO_JSON_H_
#define PTXBENCH_COMMON_PROTO_JSON_H_

// A message as JSON the one way ptxbench writes messages out (`report
// --output json`, the dashboard's API, a pipeline's evaluation.json): the
// proto's field names, and every primitive field even at its default, so a
// reader finds each key whatever its value.

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace ptxbench {

absl::StatusOr<std::string> ProtoJson(const google::protobuf::Message& message,
                                      bool indent = false);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_PROTO_JSON_H_
