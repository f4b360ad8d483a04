#ifndef PTXBENCH_AGENT_TOOL_RELAY_H_
#define PTXBENCH_AGENT_TOOL_RELAY_H_

// The loopback relay inside an agent's sandbox: the sandbox's network
// namespace has only lo (sandbox/policy.h Policy::loopback), and the model
// proxy is a unix socket bound into the view. The relay listens on
// 127.0.0.1:PORT, where the CLI's configuration points, and joins each
// connection to a new connection to that socket, bytes both ways, so the
// proxy is the only place a connection can go.

#include <string>

#include "absl/status/statusor.h"

namespace ptxbench::agent_tool {

// Joins two connected sockets, bytes both ways, until both ends finished; a
// side that ends has the other's write half shut, so a response still in
// flight arrives. Closes both.
void Splice(int a, int b);

// Listens on 127.0.0.1:`port`; returns the listening descriptor, or why not.
absl::StatusOr<int> ListenLoopback(int port);
// Serves `listener` for good: each accepted connection is joined to
// `socket_path` on a thread of its own.
[[noreturn]] void RunRelay(int listener, const std::string& socket_path);

}  // namespace ptxbench::agent_tool

#endif  // PTXBENCH_AGENT_TOOL_RELAY_H_
