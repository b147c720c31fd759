#include "actors/runnerset/set_registrations.hpp"

namespace octorun::runnerset {

std::vector<std::string> labels_to_register(std::vector<std::string> runner_labels,
                                            std::string_view set_label) {
  if (!set_label.empty() && !carries_label(runner_labels, set_label)) runner_labels.emplace_back(set_label);
  return runner_labels;
}

found_runner_verdict judge_found_runner(bool listening, std::int64_t own_scale_set,
                                        std::int64_t found_scale_set,
                                        const std::vector<std::string>& found_labels,
                                        std::string_view set_label) {
  if (listening)
    return own_scale_set != 0 && found_scale_set != own_scale_set ? found_runner_verdict::in_another_scale_set
                                                                  : found_runner_verdict::the_sets;
  return carries_label(found_labels, set_label) ? found_runner_verdict::the_sets
                                                : found_runner_verdict::without_the_sets_label;
}

const char* found_runner_left_because(found_runner_verdict v) {
  switch (v) {
    case found_runner_verdict::in_another_scale_set:
      return "it is registered in another scale set than the Runner's";
    case found_runner_verdict::without_the_sets_label:
      return "it lacks the set's label (another set's runner of the same name, one registered outside "
             "Octorun, or one registered before runners carried the label)";
    case found_runner_verdict::the_sets:
      break;
  }
  return "";
}

}  // namespace octorun::runnerset
