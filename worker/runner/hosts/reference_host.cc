#include "worker/runner/hosts/reference_host.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/runner/measure/references.h"

namespace ptxbench::runner {
namespace {

class ReferenceTarget final : public Candidate {
 public:
  explicit ReferenceTarget(const workloads::Definition& definition) : definition_(definition) {}

  absl::Status SetWorkload(const protocol::Request& workload) override {
    absl::StatusOr<std::unique_ptr<Reference>> reference =
        MakeReference(definition_, workload.axes);
    if (!reference.ok()) return reference.status();
    reference_ = *std::move(reference);
    return absl::OkStatus();
  }

  absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    const size_t n_in = definition_.inputs.size();
    if (reference_ == nullptr || static_cast<size_t>(count) != n_in + definition_.outputs.size()) {
      return absl::FailedPreconditionError("reference host: no workload, or a wrong tensor count");
    }
    // The references read only the views' data pointers.
    std::vector<TensorBuffer> in(n_in), out(count - n_in);
    for (int i = 0; i < count; ++i) {
      TensorBuffer& t = static_cast<size_t>(i) < n_in ? in[i] : out[i - n_in];
      t.view = *views[i];
    }
    return reference_->Run(in, out, stream);
  }

 private:
  const workloads::Definition& definition_;
  std::unique_ptr<Reference> reference_;
};

}  // namespace

std::unique_ptr<Candidate> MakeReferenceTarget(const workloads::Definition& definition) {
  return std::make_unique<ReferenceTarget>(definition);
}

}  // namespace ptxbench::runner
