#include "executor/report_repair.h"

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace ptxbench::executor {
namespace {

namespace v1 = ::ptxbench::v1;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// A reason kept in a minimal report: its first KiB.
constexpr size_t kKeptReason = 1 << 10;

void Repair(Message* message, const std::string& path, std::vector<std::string>* fixed) {
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string name = path.empty() ? field->name() : absl::StrCat(path, ".", field->name());
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      std::string scratch;
      if (!field->is_repeated()) {
        const std::string& value = reflection->GetStringReference(*message, field, &scratch);
        if (IsValidUtf8(value)) continue;
        reflection->SetString(message, field, ReplaceInvalidUtf8(value));
        fixed->push_back(name);
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        const std::string& value =
            reflection->GetRepeatedStringReference(*message, field, i, &scratch);
        if (IsValidUtf8(value)) continue;
        reflection->SetRepeatedString(message, field, i, ReplaceInvalidUtf8(value));
        fixed->push_back(absl::StrCat(name, "[", i, "]"));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        Repair(reflection->MutableMessage(message, field), name, fixed);
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        Repair(reflection->MutableRepeatedMessage(message, field, i),
               absl::StrCat(name, "[", i, "]"), fixed);
      }
    }
  }
}

std::string Prefixed(absl::string_view why, const std::string& kept) {
  std::string out = absl::StrCat("the report could not be sent: ", why);
  if (!kept.empty()) absl::StrAppend(&out, "; ", kept.substr(0, kKeptReason));
  // The cut may split a character; the refusal may quote anything.
  return ReplaceInvalidUtf8(out);
}

}  // namespace

std::vector<std::string> MakeStringsValidUtf8(Message* message) {
  std::vector<std::string> fixed;
  Repair(message, "", &fixed);
  return fixed;
}

v1::CompleteRequest MinimalReport(const v1::CompleteRequest& refused, absl::string_view why) {
  v1::CompleteRequest out;
  out.set_executor_id(refused.executor_id());
  *out.mutable_lease() = refused.lease();
  switch (refused.outcome_case()) {
    case v1::CompleteRequest::kAgent: {
      v1::AgentOutcome* agent = out.mutable_agent();
      *agent = refused.agent();
      agent->clear_records();
      agent->set_reason(Prefixed(why, refused.agent().reason()));
      break;
    }
    case v1::CompleteRequest::kFailure: {
      v1::TaskFailure* failure = out.mutable_failure();
      *failure = refused.failure();
      failure->mutable_agent_session()->clear_records();
      if (!refused.failure().has_agent_session()) failure->clear_agent_session();
      failure->set_message(Prefixed(why, refused.failure().message()));
      break;
    }
    default:
      out.mutable_failure()->set_failure_class(v1::INFRA);
      out.mutable_failure()->set_message(Prefixed(why, ""));
      break;
  }
  return out;
}

}  // namespace ptxbench::executor
