// Where the watch event of an object a RunnerSet owns (a Runner or its Pod)
// goes: to its set's actor when that set is known, and nowhere otherwise.
// Pure.
//
// Anyone who may write Pods in a watched namespace can label them
// `octorun.io/runnerset=<anything>`; were each distinct value to reach the
// supervisor of the sets, it would spawn (and keep) an actor for a set that
// does not exist. So an object labelled for a set the controller has not
// seen is refused: it spawns nothing and nothing keeps it. A set's own
// objects are never refused by this: a namespace's Pods and Runners are
// watched only once its RunnerSets have listed (controller.cpp), and a set's
// actor makes Runners (and they Pods) only after the controller has seen the
// set, so every object of a set that exists arrives after the set itself.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>

#include "model/children.hpp"
#include "model/naming.hpp"
#include "model/types.hpp"

namespace octorun::controller {

// The "namespace/set" an object made by a RunnerSet names (its label), or
// nothing when it names none.
template <class Meta>  // model::object_meta (a Runner) or model::owned_object_meta (a Pod)
std::optional<std::string> owning_set(const Meta& meta) {
  auto label = meta.labels.find(model::label_runnerset);
  if (label == meta.labels.end() || label->second.empty()) return std::nullopt;
  return meta.namespace_ + "/" + label->second;
}

enum class owned_route {
  to_set,       // its set's actor takes it
  no_set,       // it names no set: not the manager's business
  unknown_set,  // it names a set not watched (never was, or already deleted): refused
};

// `sets`: the RunnerSets the controller has seen and not seen deleted, by
// "namespace/name" (held ones too); `set_key`: owning_set of the object.
owned_route route_of_owned(const std::map<std::string, std::shared_ptr<const model::runnerset>>& sets,
                           const std::optional<std::string>& set_key);

// octorun_rejected_input_total's reason for an unknown_set refusal.
inline constexpr const char* unknown_set_reason = "unknown_runnerset";
// ... and for a Pod labelled for a set that exists but controlled by no Runner.
inline constexpr const char* not_a_runners_pod_reason = "not_a_runners_pod";

// The RunnerSets the controller has seen and not seen deleted
// ("namespace/name", as route_of_owned's `sets`), shared with the decoders
// of its Pod informers, which run on their reflectors' threads.
class known_sets {
 public:
  void insert(const std::string& key);
  void erase(const std::string& key);
  bool contains(const std::string& key) const;

 private:
  mutable std::shared_mutex mu_;
  std::set<std::string> keys_;
};

// Whether the Pod informer caches a Pod it lists or watches, decided when
// the Pod is decoded, before it is stored: a Pod costs the manager memory
// only if it is a Runner's (its controller ownerReference) of a set the
// controller knows (its label). Anyone who may write Pods can label them,
// so a Pod labelled for a set that does not exist, or for one that does
// but made by something else, is kept nowhere; it is rejected input, counted
// under the reason of the refusal. An empty label names no set: not the
// manager's business, and not counted.
enum class pod_intake {
  keep,
  no_set,             // no set named: dropped, not counted
  unknown_set,        // unknown_set_reason
  not_a_runners_pod,  // not_a_runners_pod_reason
};
pod_intake intake_of_pod(const model::owned_object_meta& pod, const known_sets& sets);

}  // namespace octorun::controller
