#include "adapters/kube/object.hpp"

#include "common/json.hpp"
#include "common/json_parse.hpp"

namespace octorun::kube {
namespace {

using pool = rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>;
constexpr size_t kStackCapacity = 1024;  // RapidJSON's default, used only while populating

// Stateless; shared so that no pool allocates a base allocator of its own.
rapidjson::CrtAllocator& crt() {
  static rapidjson::CrtAllocator base;
  return base;
}

// The document and the pool it allocates from, freed together. The parse
// stack (used while populating) comes from the shared base allocator.
struct holder {
  explicit holder(size_t capacity) : memory(capacity, &crt()), doc(&memory, kStackCapacity, &crt()) {}
  pool memory;
  rapidjson::Document doc;
};

// A string member as a view into the document (no copy).
std::string_view view(const rapidjson::Value& obj, const char* name) {
  const auto* v = json::member(obj, name);
  if (v == nullptr || !v->IsString()) return {};
  return {v->GetString(), v->GetStringLength()};
}

bool is(const rapidjson::Value& name, std::string_view s) {
  return std::string_view(name.GetString(), name.GetStringLength()) == s;
}

// Replays `v` as SAX events into a document, leaving out
// metadata.managedFields when asked (controllers do not read it, and it is
// often the largest part of a small object). Documents built from SAX
// events size every array and object exactly.
struct copier {
  const rapidjson::Value& v;
  bool drop_managed_fields;

  template <class Handler>
  bool operator()(Handler& h) const {
    if (!drop_managed_fields || !v.IsObject()) return v.Accept(h);
    h.StartObject();
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      h.Key(m->name.GetString(), m->name.GetStringLength(), true);
      if (!is(m->name, "metadata") || !m->value.IsObject()) {
        m->value.Accept(h);
        continue;
      }
      h.StartObject();
      rapidjson::SizeType kept = 0;
      for (auto mm = m->value.MemberBegin(); mm != m->value.MemberEnd(); ++mm) {
        if (is(mm->name, "managedFields")) continue;
        h.Key(mm->name.GetString(), mm->name.GetStringLength(), true);
        mm->value.Accept(h);
        ++kept;
      }
      h.EndObject(kept);
    }
    return h.EndObject(v.MemberCount());
  }
};

}  // namespace

object make_object(const rapidjson::Value& v, bool drop_managed_fields) {
  // Build once into a scratch pool to learn the exact size, then into a pool
  // of that capacity: one allocation per object, no slack.
  thread_local pool scratch(64 * 1024, &crt());
  copier copy{v, drop_managed_fields};
  size_t size;
  {
    rapidjson::Document probe(&scratch, kStackCapacity, &crt());
    probe.Populate(copy);
    size = scratch.Size();
  }
  scratch.Clear();
  auto h = std::make_shared<holder>(size > 0 ? size : 64);
  h->doc.Populate(copy);

  object o;
  const rapidjson::Document& d = h->doc;
  o.doc = std::shared_ptr<const rapidjson::Document>(h, &h->doc);
  if (!d.IsObject()) return o;
  const auto* meta = json::member(d, "metadata");
  if (meta == nullptr || !meta->IsObject()) return o;
  const auto& m = *meta;
  o.namespace_ = view(m, "namespace");
  o.name = view(m, "name");
  o.uid = view(m, "uid");
  o.resource_version = view(m, "resourceVersion");
  o.deletion_timestamp = view(m, "deletionTimestamp");
  o.generation = json::i64(m, "generation");
  return o;
}

expected<object, std::string> parse_object(std::string_view json) {
  auto d = json::parse(json, json::sources::kube_object);
  if (!d) return unexpected{std::move(d.error())};
  if (!d->IsObject()) return unexpected{std::string("not a JSON object")};
  return make_object(*d);
}

std::string object::key() const {
  if (namespace_.empty()) return std::string(name);
  std::string k;
  k.reserve(namespace_.size() + 1 + name.size());
  k.append(namespace_).append("/").append(name);
  return k;
}

const rapidjson::Value* object::labels() const {
  if (!doc) return nullptr;
  const auto* meta = json::member(*doc, "metadata");
  const auto* l = meta != nullptr ? json::member(*meta, "labels") : nullptr;
  return l != nullptr && l->IsObject() ? l : nullptr;
}

std::string_view object::label(std::string_view key) const {
  const auto* l = labels();
  if (l == nullptr) return {};
  for (auto it = l->MemberBegin(); it != l->MemberEnd(); ++it) {
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key && it->value.IsString())
      return {it->value.GetString(), it->value.GetStringLength()};
  }
  return {};
}

const rapidjson::Value* object::member(const char* member_name) const {
  return doc ? json::member(*doc, member_name) : nullptr;
}

std::string object::json() const { return doc ? json::write(*doc) : std::string("null"); }

}  // namespace octorun::kube
