// The pod configuration a RunnerSet declares besides its template
// (spec.containerMode, spec.proxy, spec.caBundle, spec.manageSafeToEvict):
// its rules, its JSON form on a Runner, and the fingerprint that tells an
// outdated runner from a current one. Pure.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "model/types.hpp"

namespace octorun::model {

// The rules the CRD schema cannot say: a proxy URL that parses, object
// names and keys Kubernetes accepts, a work volume claim the apiserver will
// take. `path` is the spec's ("spec"); variants are checked by
// check_container_mode with their own path.
void check_pod_config(const std::string& path, const pod_config& c, field_errors& out);
void check_container_mode(const std::string& path, const container_mode_spec& m, field_errors& out);

// Writes the configuration's members into the object `w` has open (a
// Runner's spec): only those that are set.
void write_pod_config(json::writer& w, const pod_config& c);

// The work volume claim of containerMode kubernetes when none is given.
inline constexpr const char* default_work_volume_claim =
    R"({"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}})";

// A digest of everything that shapes a runner's pod: the template (member
// order ignored) and the configuration. A Runner whose fingerprint differs
// from its variant's was made from an older declaration: it is outdated.
// Never 0 (that stands for "unknown").
std::uint64_t pod_fingerprint(const pod_template& t, const pod_config& c);

// pod_fingerprint of the specs Runners share (a handful per set: one per
// variant and revision), each computed once while a Runner holds it: the
// RunnerSet asks on every Runner event, and the digest parses, orders and
// hashes the whole template.
class spec_fingerprints {
 public:
  std::uint64_t of(const shared_runner_spec& spec);
  std::size_t size() const { return known_.size(); }

 private:
  // Holding the spec keeps its address from naming another one.
  std::vector<std::pair<shared_runner_spec, std::uint64_t>> known_;
  std::size_t prune_above_ = 8;
  static constexpr std::size_t max_known = 64;
};

// ghcr.io/actions/actions-runner, with any tag or digest: an image with no
// entry point whose runner starts with /home/runner/run.sh.
bool is_actions_runner_image(std::string_view image);

}  // namespace octorun::model
