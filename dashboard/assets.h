#ifndef PTXBENCH_DASHBOARD_ASSETS_H_
#define PTXBENCH_DASHBOARD_ASSETS_H_

// The dashboard's script, style sheet and icon, built into the binary from
// dashboard/web/ (CMake writes them into assets.cc), so the dashboard works
// offline and its pages load nothing from anywhere else.

#include "absl/strings/string_view.h"

namespace ptxbench::dashboard {

struct Asset {
  absl::string_view path;  // "/static/app.js"
  absl::string_view content_type;
  absl::string_view body;
};

// The asset served at `path`; nullptr when there is none.
const Asset* FindAsset(absl::string_view path);

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_ASSETS_H_
