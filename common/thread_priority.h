#ifndef PTXBENCH_COMMON_THREAD_PRIORITY_H_
#define PTXBENCH_COMMON_THREAD_PRIORITY_H_

namespace ptxbench {

// Gives the calling thread the lowest priority (nice 19; on Linux a thread's
// own), for background work that should take only the CPU that a daemon's
// foreground threads (its writer, its RPCs) leave: long reads, checkpoints.
void LowerThreadPriority();

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_THREAD_PRIORITY_H_
