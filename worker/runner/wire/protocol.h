#ifndef PTXBENCH_WORKER_RUNNER_WIRE_PROTOCOL_H_
#define PTXBENCH_WORKER_RUNNER_WIRE_PROTOCOL_H_

// The channel between the harness (harness.h) and a host process — the
// candidate host, which runs the submission, or the reference host, which
// runs the production library: a SOCK_SEQPACKET socketpair, one request and
// one reply at a time.
//
// Requests (harness -> host) are JSON: the host trusts the harness. GPU
// memory travels with them as file descriptors (SCM_RIGHTS), one per
// allocation, in the order the request lists them (device_memory.h: a
// descriptor is a capability; nothing else names the harness's memory).
// Replies (host -> harness) are one fixed-size record: "done" or "failed,
// with this text", and never carry descriptors (the harness reads them
// without room for any, so the kernel discards what a host attaches). The
// harness trusts nothing else a candidate host says: a reply is read only
// through DecodeReply, which is total, and its text is cleaned before it
// goes anywhere. Plain C++ (no CUDA).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxbench::runner::protocol {

enum class Op {
  kSetup,      // the bracket's shared words (one descriptor attached)
  kCalibrate,  // one call of the host's own spin kernel (spin_ns)
  kEmpty,      // one call that does nothing
  kLoad,       // load the submission (candidate host only)
  kWorkload,   // the next workload's axes and buffers
  kCall,       // one call of the loaded code on buffer set `set`
  kQuit,
  // Reference hosts only: the outputs of the loaded code for the inputs in
  // `tensors` (the harness's own pristine inputs, then its expected
  // outputs), written into them; replied to once the work finished.
  kCompute,
};

// One tensor of a request and how its memory travels.
//  kWorkload: both buffer sets, two descriptors attached per tensor (set 0,
//    then set 1), each allocation `allocated[set]` bytes.
//  kCompute: one buffer the harness numbers `buffer` (stable for the
//    workload); its descriptor is attached only when `attached` (the first
//    time the host gets it for this workload), `allocated[0]` bytes.
struct TensorMeta {
  std::string name;
  int dtype = 0;  // ptxb::DType
  std::vector<int64_t> sizes;
  int64_t allocated[2] = {0, 0};
  int64_t buffer = -1;
  bool attached = false;
};

// The most descriptors one request carries (the kernel's SCM_MAX_FD).
inline constexpr size_t kMaxDescriptors = 253;
// The most calls one bracket may hold (Request::calls).
inline constexpr int kMaxCallsPerBracket = 64;

struct Request {
  explicit Request(Op o = Op::kQuit) : op(o) {}
  Op op;
  // kSetup: the size of the bracket's shared words (bracket.h).
  int64_t sync_bytes = 0;
  // kCalibrate, kEmpty, kCall: the bracket's number for this call (the value
  // of "go" the host's stream waits for, and of "done" it then writes).
  uint32_t generation = 0;
  // kCalibrate: the spin kernel's duration and launch shape (blocks of
  // `spin_threads` threads, `spin_smem` bytes of dynamic shared memory each,
  // in thread-block clusters of `spin_cluster` blocks).
  int64_t spin_ns = 0;
  int spin_blocks = 1;
  int spin_threads = 32;
  int spin_smem = 0;
  int spin_cluster = 1;
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
  // kCall: the buffer set of the (first) call, and how many calls the
  // bracket holds: sets set, 1 - set, set, ... back to back in the host's
  // stream (benchmarks only: RunnerJob::calls_per_bracket).
  int set = 0;
  int calls = 1;
};

// How many descriptors `r` carries, attached in the order above.
size_t DescriptorsOf(const Request& r);

std::string EncodeRequest(const Request& request);
absl::StatusOr<Request> DecodeRequest(absl::string_view text);

struct Reply {
  bool ok = false;
  std::string text;  // printable ASCII, newlines and tabs; at most kMaxReplyText
};
inline constexpr size_t kMaxReplyText = 4000;
std::string EncodeReply(bool ok, absl::string_view text);
// kDataLoss for anything but one well-formed reply record.
absl::StatusOr<Reply> DecodeReply(absl::string_view bytes);

// One message on a SOCK_SEQPACKET socket, with `descriptors` attached (at
// most kMaxDescriptors; they stay open in the sender).
absl::Status SendMessage(int fd, absl::string_view message,
                         const std::vector<int>& descriptors = {});
// The next message, at most `max_bytes` long (a longer one is kDataLoss);
// kDeadlineExceeded when none came within `timeout`; kUnavailable when the
// peer closed the channel. With `descriptors`, what came attached is
// appended there (close-on-exec, the caller's to close); without, the
// kernel drops whatever was attached.
absl::StatusOr<std::string> ReceiveMessage(int fd, absl::Duration timeout, size_t max_bytes,
                                           std::vector<int>* descriptors = nullptr);

}  // namespace ptxbench::runner::protocol

#endif  // PTXBENCH_WORKER_RUNNER_WIRE_PROTOCOL_H_
