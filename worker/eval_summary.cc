#include "worker/eval_summary.h"

#include "verdict/verdict.h"

namespace ptxbench::worker {

namespace v1 = ::ptxbench::v1;

void SummarizeTraces(v1::EvalResult& result) {
  verdict::Summarize(result);
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (t.status() == v1::INFRA_ERROR && result.error().empty() && t.errors_size() > 0) {
      result.set_error(t.errors(0));
    }
  }
}

}  // namespace ptxbench::worker
