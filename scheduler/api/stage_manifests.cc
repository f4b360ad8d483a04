// The stage-manifest RPCs of ClientService (RecordStageManifest,
// ListStageManifests): `ptxbench pipeline run` records each stage's
// manifest; `pipeline manifests` lists and exports them.

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "scheduler/api/service.h"
#include "scheduler/state/finish.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

grpc::ServerUnaryReactor* ClientServiceImpl::RecordStageManifest(
    grpc::CallbackServerContext* ctx, const v1::RecordStageManifestRequest* request,
    v1::RecordStageManifestResponse* response) {
  absl::StatusOr<auth::Principal> who = deps_.access->Check(ctx, "RecordStageManifest");
  if (!who.ok()) return Refuse(ctx, who.status());
  struct Recorded {
    v1::StageManifest manifest;
    bool already = false;
  };
  return Dispatch<Recorded, v1::RecordStageManifestResponse>(
      ctx, deps_.dispatcher, response,
      [text = request->manifest_json(), by = who->name,
       now = absl::ToUnixMillis(absl::Now())](Core& core) -> absl::StatusOr<Recorded> {
        Recorded r;
        absl::StatusOr<v1::StageManifest> m =
            core.stage_manifests().Record(text, by, now, &r.already);
        if (!m.ok()) return m.status();
        r.manifest = *std::move(m);
        return r;
      },
      [](Recorded& r, v1::RecordStageManifestResponse* out) {
        if (!r.already) {
          LogInfo("stage manifest recorded", {{"pipeline", r.manifest.pipeline()},
                                              {"stage", r.manifest.stage()},
                                              {"stage_id", r.manifest.stage_id()},
                                              {"sha256", r.manifest.sha256()},
                                              {"by", r.manifest.recorded_by()}});
        }
        *out->mutable_manifest() = std::move(r.manifest);
        out->set_already_recorded(r.already);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListStageManifests(
    grpc::CallbackServerContext* ctx, const v1::ListStageManifestsRequest* request,
    v1::ListStageManifestsResponse* response) {
  if (absl::Status denied = Deny(ctx, "ListStageManifests"); !denied.ok()) {
    return Refuse(ctx, denied);
  }
  using List = std::vector<v1::StageManifest>;
  return Dispatch<List, v1::ListStageManifestsResponse>(
      ctx, deps_.dispatcher, response,
      [pipeline = request->pipeline(), stage_id = request->stage_id(),
       with_text = !request->without_text()](Core& core) {
        return core.stage_manifests().List(pipeline, stage_id, with_text);
      },
      [](List& list, v1::ListStageManifestsResponse* out) {
        for (v1::StageManifest& m : list) *out->add_manifests() = std::move(m);
      });
}

}  // namespace ptxbench::scheduler
