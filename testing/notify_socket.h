#ifndef PTXBENCH_TESTING_NOTIFY_SOCKET_H_
#define PTXBENCH_TESTING_NOTIFY_SOCKET_H_

// A datagram socket standing in for systemd's $NOTIFY_SOCKET (sd_notify).

#include <string>

namespace ptxbench::testing {

// A Unix datagram socket bound at `path` (an old file there is removed),
// whose receives wait at most `timeout_s` seconds; -1 when it cannot be made.
// The caller closes it.
int BindNotifySocket(const std::string& path, int timeout_s);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_NOTIFY_SOCKET_H_
