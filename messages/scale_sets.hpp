// Which GitHub scale-set names a RunnerSet may register, as the controller
// decides over every set it watches (actors/controller/scale_set_claims.hpp)
// and hands to each set: replaced whole on every change.
#pragma once

#include <caf/all.hpp>
#include <map>
#include <string>

namespace octorun::messages {

// A scale set a variant would register that an older set in the same GitHub
// scope holds already.
struct scale_set_taken {
  std::string scale_set_name;  // as this set would name it
  std::string holder;          // "namespace/name" of the set holding it
  bool operator==(const scale_set_taken&) const = default;
};

// By variant ("" for a set without variants); empty: every name is the set's.
struct scale_set_names_taken {
  std::map<std::string, scale_set_taken> taken;
};

}  // namespace octorun::messages

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::messages::scale_set_names_taken)
