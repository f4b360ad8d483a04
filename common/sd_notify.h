#ifndef PTXBENCH_COMMON_SD_NOTIFY_H_
#define PTXBENCH_COMMON_SD_NOTIFY_H_

// Readiness for a service manager (systemd's Type=notify, deploy/systemd/):
// one datagram to $NOTIFY_SOCKET, as sd_notify(3) sends it, without linking
// libsystemd. Nothing happens when the variable is unset (not under systemd).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// Sends `state` (newline-separated assignments such as "READY=1\nSTATUS=…").
// OK when sent or when there is no $NOTIFY_SOCKET; kUnavailable otherwise.
absl::Status SdNotify(absl::string_view state);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_SD_NOTIFY_H_
