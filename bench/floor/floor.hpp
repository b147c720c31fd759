// The floor: only the Kubernetes API work a job cannot do without, done as
// fast as our own client (adapters/kube) can, against the same control plane
// the manager runs on. Per job:
//
//   1. create the Runner        (the manager's own body, runnerset/runner_object.cpp)
//   2. create the JIT Secret    (runner/children.cpp, owned by the Runner)
//   3. create the Pod           (runner/children.cpp, owned by the Runner)
//   4. status Pending           (the phase rules: published over an empty phase)
//   -- the pod runs (kube-scheduler binds it, kwok runs it; a watch sees it) --
//   5. status Running + the job (the job path)
//   6. status Succeeded         (the job, 0 ms, completed)
//   7. delete the Runner        (its Secret and Pod go with it: the garbage
//                                collector follows their ownerReferences)
//
// 2, 3 and 4 need only the Runner's uid and resourceVersion, so they go out
// at once; every status write carries the resourceVersion of the write
// before it, as the phase rules require. No finalizer, no read, no Event:
// 7 writes per job. At most `max_runners` jobs are in flight (the same bound
// as the manager's maxRunners); their requests share `connections` clients
// (threads, each with its own connection), the concurrency the bench sweeps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adapters/kube/config.hpp"

namespace octorun::bench {

struct floor_options {
  int jobs = 100, max_runners = 20, connections = 8;
  std::string ns;  // an existing namespace of its own (no manager watches it)
};

struct floor_result {
  double jobs_per_s = 0, seconds = 0;
  std::int64_t writes = 0, failed_writes = 0;
  std::vector<double> runner_to_pod_running, job_ms;  // per job, ms
};

// One run; fails (message in the result's absence) when a write is refused.
floor_result run_floor(const kube::config& cfg, const floor_options& o);

}  // namespace octorun::bench
