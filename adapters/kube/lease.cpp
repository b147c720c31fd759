#include "adapters/kube/lease.hpp"

#include "adapters/kube/client.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"

namespace octorun::kube {
namespace {

bool same_record(const lease_record& a, const lease_record& b) {
  return a.holder == b.holder && a.renew_time == b.renew_time && a.resource_version == b.resource_version &&
         a.transitions == b.transitions;
}

}  // namespace

std::optional<lease_record> parse_lease(const object& o) {
  const auto* spec = o.member("spec");
  if (spec == nullptr) return lease_record{{}, 0, {}, {}, 0, std::string(o.resource_version)};
  if (!spec->IsObject()) return std::nullopt;
  lease_record r;
  r.holder = json::str(*spec, "holderIdentity");
  r.duration_seconds = json::i64(*spec, "leaseDurationSeconds");
  r.acquire_time = json::str(*spec, "acquireTime");
  r.renew_time = json::str(*spec, "renewTime");
  r.transitions = json::i64(*spec, "leaseTransitions");
  r.resource_version = std::string(o.resource_version);
  return r;
}

lease_record next_lease(const std::optional<lease_record>& current, const std::string& identity,
                        std::chrono::seconds duration, std::chrono::system_clock::time_point now) {
  lease_record r;
  r.holder = identity;
  r.duration_seconds = duration.count();
  r.renew_time = format_rfc3339_micros(now);
  if (current && current->holder == identity && !current->acquire_time.empty()) {
    r.acquire_time = current->acquire_time;
    r.transitions = current->transitions;
  } else {
    r.acquire_time = r.renew_time;
    r.transitions = current ? current->transitions + 1 : 0;  // a new term, as client-go counts
  }
  if (current) r.resource_version = current->resource_version;
  return r;
}

bool lease_available(const lease_record& current, const std::string& identity,
                     std::chrono::steady_clock::time_point observed_at,
                     std::chrono::steady_clock::time_point now) {
  if (current.holder.empty() || current.holder == identity) return true;
  return now > observed_at + std::chrono::seconds(current.duration_seconds);
}

std::string lease_body(const std::string& ns, const std::string& name, const lease_record& r) {
  json::writer w;
  w.open().field("apiVersion", "coordination.k8s.io/v1").field("kind", "Lease");
  w.open("metadata")
      .field("name", name)
      .field("namespace", ns)
      .optional("resourceVersion", r.resource_version);
  w.close();
  w.open("spec")
      .field("holderIdentity", r.holder)
      .field("leaseDurationSeconds", r.duration_seconds)
      .optional("acquireTime", r.acquire_time)
      .optional("renewTime", r.renew_time)
      .field("leaseTransitions", r.transitions)
      .close();
  return w.close().str();
}

leader_elector::leader_elector(client& api, lease_config cfg) : api_(api), cfg_(std::move(cfg)) {}

expected<bool, api_error> leader_elector::try_acquire_or_renew() {
  auto now = std::chrono::steady_clock::now();
  auto got = api_.get(leases(), cfg_.ns, cfg_.name);
  if (!got && got.error().not_found()) {
    auto rec = next_lease(std::nullopt, cfg_.identity, cfg_.duration, std::chrono::system_clock::now());
    auto created = api_.create(leases(), cfg_.ns, lease_body(cfg_.ns, cfg_.name, rec));
    if (!created) {
      leading_ = false;
      if (created.error().code == 409) return false;  // another candidate created it first
      return unexpected{created.error()};
    }
    observed_ = parse_lease(*created);
    observed_at_ = now;
    return leading_ = true;
  }
  if (!got) {
    leading_ = false;
    return unexpected{got.error()};
  }
  auto current = parse_lease(*got);
  if (!current) {
    api_error e;
    e.reason = "MalformedLease";
    e.message = "lease " + cfg_.ns + "/" + cfg_.name + " has no usable spec";
    return unexpected{e};
  }
  if (!observed_ || !same_record(*observed_, *current)) {
    observed_ = current;
    observed_at_ = now;
  }
  if (!lease_available(*current, cfg_.identity, observed_at_, now)) return leading_ = false;
  auto rec = next_lease(current, cfg_.identity, cfg_.duration, std::chrono::system_clock::now());
  auto updated = api_.update(leases(), cfg_.ns, cfg_.name, lease_body(cfg_.ns, cfg_.name, rec));
  if (!updated) {
    leading_ = false;
    if (updated.error().code == 409) return false;  // someone else wrote first
    return unexpected{updated.error()};
  }
  observed_ = parse_lease(*updated);
  observed_at_ = now;
  return leading_ = true;
}

expected<ok_t, api_error> leader_elector::release() {
  leading_ = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto got = api_.get(leases(), cfg_.ns, cfg_.name);
    if (!got) return got.error().not_found() ? expected<ok_t, api_error>(ok) : unexpected{got.error()};
    auto current = parse_lease(*got);
    if (!current || current->holder != cfg_.identity) return ok;
    lease_record r = *current;
    r.holder.clear();
    r.duration_seconds = 1;
    r.renew_time = r.acquire_time = format_rfc3339_micros(std::chrono::system_clock::now());
    auto updated = api_.update(leases(), cfg_.ns, cfg_.name, lease_body(cfg_.ns, cfg_.name, r));
    if (updated) return ok;
    if (updated.error().code != 409) return unexpected{updated.error()};
  }
  api_error e;
  e.code = 409;
  e.reason = "Conflict";
  e.message = "lease kept changing during release";
  return unexpected{e};
}

}  // namespace octorun::kube
