// Tests change a Runner's spec in place; the model shares one spec between
// Runners (model::shared_runner_spec), so a test first takes its own copy.
#pragma once

#include <memory>
#include <string>

#include "model/types.hpp"

namespace octorun::test {

// `r`'s spec, copied for `r` alone and writable while `r` holds it.
inline model::runner_spec& own_spec(model::runner& r) {
  auto copy = std::make_shared<model::runner_spec>(*r.spec);
  r.spec = copy;
  return *copy;
}

// A Runner of set "linux", variant "large", made from `template_json`: the
// one the tests of its pod start from.
inline model::runner runner_with_template(const std::string& template_json) {
  model::runner r;
  r.metadata.name = "linux-large-x7k2p";
  r.metadata.namespace_ = "ci";
  r.metadata.uid = "uid-1";
  auto& spec = own_spec(r);
  spec.runner_set_name = "linux";
  spec.variant = "large";
  spec.template_.json = template_json;
  return r;
}

}  // namespace octorun::test
