#ifndef PTXBENCH_WORKER_RUNNER_PROTOCOL_H_
#define PTXBENCH_WORKER_RUNNER_PROTOCOL_H_

// The channel between the harness (harness.h) and a host process — the
// candidate host, which runs the submission, or the reference host, which
// runs the production library: a SOCK_SEQPACKET socketpair, one request and
// one reply at a time.
//
// Requests (harness -> host) are JSON: the host trusts the harness. Replies
// (host -> harness) are one fixed-size record: "done" or "failed, with this
// text". The harness trusts nothing else a candidate host says: a reply is
// read only through DecodeReply, which is total, and its text is cleaned
// before it goes anywhere. Plain C++ (no CUDA).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::runner::protocol {

enum class Op {
  kSetup,      // the events and the calibration buffer
  kCalibrate,  // one call of the host's own spin kernel (spin_ns)
  kEmpty,      // one call that does nothing
  kLoad,       // load the submission (candidate host only)
  kWorkload,   // the next workload's axes and buffers
  kCall,       // one call of the loaded code on buffer set `set`
  kQuit,
  // Reference hosts only: the outputs of the loaded code for the inputs in
  // `tensors` (one handle each: the harness's own pristine inputs, then its
  // expected outputs), written into them; replied to once the work finished.
  kCompute,
};

// One tensor of a workload: where both buffer sets are (CUDA IPC handles,
// hex) and what the ABI view says about it.
struct TensorMeta {
  std::string name;
  int dtype = 0;  // ptxb::DType
  std::vector<int64_t> sizes;
  std::string handles[2];
};

struct Request {
  explicit Request(Op o = Op::kQuit) : op(o) {}
  Op op;
  // kSetup: CUDA IPC handles (hex).
  std::string go_event, done_event, stamps;
  // kCalibrate
  int64_t spin_ns = 0;
  // kLoad
  std::string language, artifact, launch_spec;
  std::vector<std::string> axis_order;
  std::string definition;  // the definition's JSON (reference hosts)
  // kWorkload: every axis value; inputs then outputs (kCompute: the tensors
  // to compute on).
  std::map<std::string, int64_t> axes;
  std::vector<TensorMeta> tensors;
  // kWorkload: the scalar inputs the workload fixes, each value as JSON text
  // as the dataset wrote it (reference hosts pass them on as numbers).
  std::map<std::string, std::string> scalars;
  int num_inputs = 0;
  // kCall
  int set = 0;
};

std::string EncodeRequest(const Request& request);
absl::StatusOr<Request> DecodeRequest(absl::string_view text);

struct Reply {
  bool ok = false;
  std::string text;  // printable ASCII, newlines and tabs; at most kMaxReplyText
};
inline constexpr size_t kMaxReplyText = 4000;
std::string EncodeReply(bool ok, absl::string_view text);
// `text` with every byte but printable ASCII, newline and tab replaced by
// '?': how anything a candidate host wrote is shown.
std::string PrintableText(absl::string_view text);
// kDataLoss for anything but one well-formed reply record.
absl::StatusOr<Reply> DecodeReply(absl::string_view bytes);

// One message on a SOCK_SEQPACKET socket.
absl::Status SendMessage(int fd, absl::string_view message);
// The next message, at most `max_bytes` long (a longer one is kDataLoss);
// kDeadlineExceeded when none came within `timeout`; kUnavailable when the
// peer closed the channel.
absl::StatusOr<std::string> ReceiveMessage(int fd, absl::Duration timeout, size_t max_bytes);

std::string HexEncode(absl::string_view bytes);
// kInvalidArgument unless `hex` is exactly `size` bytes of hex.
absl::StatusOr<std::string> HexDecode(absl::string_view hex, size_t size);

}  // namespace ptxbench::runner::protocol

#endif  // PTXBENCH_WORKER_RUNNER_PROTOCOL_H_
