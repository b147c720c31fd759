// Families declared up front: a scrape shows every family (HELP and TYPE)
// before its first sample, so dashboards and alerts see the names from the
// start. prometheus-cpp's Registry::Collect leaves out families without
// samples; complete() puts them back.
#pragma once

#include <prometheus/metric_family.h>

#include <algorithm>
#include <vector>

namespace octorun::metrics {

// `declared` in its order, each with the samples `collected` has for it.
inline std::vector<prometheus::MetricFamily> complete(std::vector<prometheus::MetricFamily> collected,
                                                      const std::vector<prometheus::MetricFamily>& declared) {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(declared.size());
  for (const auto& d : declared) {
    auto it = std::find_if(collected.begin(), collected.end(),
                           [&](const prometheus::MetricFamily& f) { return f.name == d.name; });
    out.push_back(it != collected.end() ? std::move(*it) : d);
  }
  return out;
}

}  // namespace octorun::metrics
