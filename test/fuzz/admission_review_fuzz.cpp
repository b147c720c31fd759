// libFuzzer target: the AdmissionReview parser and every admission endpoint
// (parsing, validation, defaulting, encoding) on arbitrary bytes. The input
// is tried both as a whole review and as the object inside a review, so the
// fuzzer reaches the rules without first having to invent the envelope.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/admission/handlers.hpp"
#include "model/parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace octorun::admission;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string wrapped_create =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"f","operation":"CREATE",)"
      R"("object":)" +
      std::string(input) + "}}";
  const std::string wrapped_update =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"f","operation":"UPDATE",)"
      R"("oldObject":{"spec":{"template":{}}},"object":)" +
      std::string(input) + "}}";
  const octorun::admission::admission_policy policy{
      .runner_creator = "system:serviceaccount:octorun-system:octorun",
      .scopes = {},
      .max_runners = 1000,
      .allow_sets_without_class = false,
      .classes = {}};
  for (auto e : {endpoint::mutate_runnerset, endpoint::validate_runnerset, endpoint::validate_runner,
                 endpoint::validate_runnerclass}) {
    handle_review(e, input, policy);
    handle_review(e, wrapped_create, policy);
    handle_review(e, wrapped_update, policy);
  }
  octorun::model::parse_runnerset(input);
  octorun::model::parse_runner(input);
  return 0;
}
