#ifndef PTXBENCH_CLI_TERMINAL_INTERRUPT_H_
#define PTXBENCH_CLI_TERMINAL_INTERRUPT_H_

// Ctrl-C and SIGTERM for the long-running commands (`status --watch`, `up`):
// the handlers only set a flag, which those commands poll and then wind down
// in an orderly way (cancel the stream, stop the children) and exit 0.

namespace ptxbench::cli {

// Installs the SIGINT and SIGTERM handlers (idempotent).
void InstallInterruptHandlers();

// A signal arrived since the last ClearInterrupted(). Async-signal-safe.
bool Interrupted();

// Forgets earlier signals; RunCli calls it, so that every invocation (several
// in one test process) starts afresh.
void ClearInterrupted();

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_TERMINAL_INTERRUPT_H_
