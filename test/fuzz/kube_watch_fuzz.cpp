// libFuzzer target: the Kubernetes watch stream and the objects in it. The
// decoder is fed the input in chunks cut where the first byte says (the
// apiserver's chunks may cut anywhere); every decoded event goes through the
// informer's cache (apply_event, then a relist diff with replace_all), the
// object views controllers read, the Lease parser, the Status parser and the
// typed Runner/RunnerSet parsers. The whole input is also tried as one
// object and as an error body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kube/api.hpp"
#include "adapters/kube/lease.hpp"
#include "adapters/kube/object.hpp"
#include "adapters/kube/watch.hpp"
#include "common/json_parse.hpp"
#include "model/parse.hpp"

namespace {

using namespace octorun::kube;

void read_object(const object& o) {
  (void)o.key();
  (void)o.label("octorun.io/runner");
  (void)o.member("status");
  (void)parse_lease(o);
  if (!o.doc) return;
  (void)octorun::model::parse_runner(*o.doc);
  (void)octorun::model::parse_runnerset(*o.doc);
  // A cached object is written back (patches, logs): it must stay JSON.
  auto text = o.json();
  if (!parse_object(text) && o.doc->IsObject()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t cut = 1 + data[0] % 61;  // chunk length
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  object_cache cache;
  std::vector<object> latest;
  for (bool drop_managed_fields : {false, true}) {
    // A short line limit now and then (its refusal), else the real one (the
    // parser's own limits on a long line).
    watch_decoder decoder(drop_managed_fields,
                          data[0] & 0x80 ? 4096 : octorun::json::sources::kube_watch_event.max_bytes);
    std::vector<watch_event> events;
    for (std::size_t at = 0; at < stream.size(); at += cut)
      if (!decoder.feed(stream.substr(at, cut), events)) break;
    (void)decoder.pending();
    for (const auto& ev : events) {
      if (ev.type == event_type::error) {
        (void)to_string(ev.error);
        continue;
      }
      read_object(ev.obj);
      if (auto change = apply_event(cache, ev.type, ev.obj)) latest.push_back(change->obj);
      (void)newer_resource_version(ev.obj.resource_version, "12345");
    }
  }
  (void)replace_all(cache, latest);
  (void)replace_all(cache, {});
  if (!cache.empty()) __builtin_trap();

  if (auto o = parse_object(stream)) read_object(*o);
  (void)to_string(parse_status(0, stream, stream.substr(0, 8)));
  return 0;
}
