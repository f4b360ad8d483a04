#ifndef PTXBENCH_TESTING_UNUSED_PORT_H_
#define PTXBENCH_TESTING_UNUSED_PORT_H_

namespace ptxbench::testing {

// A TCP port on 127.0.0.1 that nobody listened on a moment ago (bound, then
// released): for a server a test starts, or for an address that refuses.
// 0 if none could be bound.
int UnusedPort();

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_UNUSED_PORT_H_
