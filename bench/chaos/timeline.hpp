// What happened during a chaos run, in order: faults, manager processes,
// what the observer's watches and the simulator showed, and violations.
// Thread-safe; every line is kept (a one-hour soak writes tens of
// thousands) and also appended to a file as it happens.
#pragma once

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace octorun::chaos {

class timeline {
 public:
  using clock = std::chrono::steady_clock;

  explicit timeline(const std::string& path) : file_(path), start_(clock::now()) {}

  double now() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

  // `who`: fault, manager, kube, github, job, relay, VIOLATION, ...
  void add(const std::string& who, const std::string& what) {
    double t = now();
    char head[48];
    std::snprintf(head, sizeof head, "%9.2f %-9s ", t, who.c_str());
    std::lock_guard l(mu_);
    lines_.push_back({t, head + what});
    file_ << lines_.back().text << '\n';
    file_.flush();
  }

  // Every line from `t - before` to `t + after` (at most `max` of them, the
  // ones nearest `t` when more).
  std::string around(double t, double before = 30, double after = 10, std::size_t max = 250) const {
    std::lock_guard l(mu_);
    std::vector<const std::string*> picked;
    for (const auto& e : lines_)
      if (e.t >= t - before && e.t <= t + after) picked.push_back(&e.text);
    std::size_t skip = picked.size() > max ? picked.size() - max : 0;
    std::string out;
    for (std::size_t i = skip; i < picked.size(); ++i) out += "    " + *picked[i] + "\n";
    if (skip > 0) out = "    (" + std::to_string(skip) + " earlier lines in the timeline file)\n" + out;
    return out;
  }

 private:
  struct entry {
    double t;
    std::string text;
  };
  mutable std::mutex mu_;
  std::ofstream file_;
  std::vector<entry> lines_;
  clock::time_point start_;
};

}  // namespace octorun::chaos
