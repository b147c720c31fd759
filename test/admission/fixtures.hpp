// Sample objects for the admission tests: a valid RunnerSet and Runner that
// each test bends into the case it checks (rapidjson::Pointer paths).
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <string>

#include "common/json.hpp"
#include "model/parse.hpp"

namespace octorun::test {

inline const char* valid_runnerset_json() {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet",
    "metadata":{"name":"ci","namespace":"team"},
    "spec":{"scopeURL":"https://github.com/acme/app","credentialsSecretName":"github-app",
      "runnerLabels":["linux"],"minRunners":1,"maxRunners":5,
      "template":{"metadata":{"labels":{"team":"a"}},
        "spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:latest"}]}},
      "variants":[{"name":"small","runnerLabels":["small"]},
        {"name":"large","runnerLabels":["large"],"maxRunners":2,
         "template":{"spec":{"containers":[{"name":"runner","image":"runner:big",
           "resources":{"requests":{"cpu":"4"}}}]}}}]}})";
}

inline const char* valid_runner_json() {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner",
    "metadata":{"name":"ci-small-abcde","namespace":"team","labels":{"octorun.io/runnerset":"ci"}},
    "spec":{"scopeURL":"https://github.com/acme/app","credentialsSecretName":"github-app",
      "runnerLabels":["linux","small"],"runnerSetName":"ci","variant":"small",
      "template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:latest"}]}}}})";
}

inline rapidjson::Document doc(const char* json) {
  rapidjson::Document d;
  d.Parse(json);
  return d;
}

inline void set(rapidjson::Document& d, const char* pointer, const rapidjson::Value& v) {
  rapidjson::Value copy(v, d.GetAllocator());
  rapidjson::Pointer(pointer).Set(d, copy);
}
inline void set(rapidjson::Document& d, const char* pointer, int v) { rapidjson::Pointer(pointer).Set(d, v); }
inline void set(rapidjson::Document& d, const char* pointer, const std::string& v) {
  rapidjson::Pointer(pointer).Set(d, v.c_str());
}
inline void erase(rapidjson::Document& d, const char* pointer) { rapidjson::Pointer(pointer).Erase(d); }

inline std::string json(const rapidjson::Value& v) { return octorun::json::write(v); }

}  // namespace octorun::test
