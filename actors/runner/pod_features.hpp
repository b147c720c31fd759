// What a runner's pod gets besides its template and JIT configuration: the
// actions/runner image's start command, the set's ServiceAccount, the
// container mode (dind, kubernetes), the proxy and the CA bundle
// (docs/runner-pods.md). Pure and deterministic; each addition applies only
// where the template has nothing of that name, so a template always wins
// and a template that asks for none of this renders unchanged.
#pragma once

#include <rapidjson/document.h>

#include <string>

#include "common/json.hpp"
#include "model/types.hpp"

namespace octorun::runner {

// The actions/runner image's conventions (runners-in-practice: its Dockerfile).
inline constexpr const char* runner_start_command = "/home/runner/run.sh";
inline constexpr const char* runner_work_dir = "/home/runner/_work";
// Pinned: a default never floats (a template with its own `dind` container
// chooses another, e.g. by digest or from a mirror).
inline constexpr const char* dind_image = "docker:28.5.2-dind";
inline constexpr const char* docker_group_id = "123";  // the image's docker group; the runner user is in it
// The file the CA bundle is mounted as: run.sh's update-ca-certificates
// (RUNNER_UPDATE_CA_CERTS) takes *.crt files from this directory.
inline constexpr const char* ca_bundle_file = "/usr/local/share/ca-certificates/octorun-ca-bundle.crt";

// `spec` is the pod spec (a copy of the template's), `runner_index` the
// runner container's index in spec.containers.
void add_pod_features(rapidjson::Value& spec, rapidjson::SizeType runner_index, const model::runner& r,
                      json::allocator& a);

}  // namespace octorun::runner
