#include "adapters/admission/shared_ca.hpp"

#include <filesystem>

#include "adapters/files/whole_file.hpp"
#include "adapters/tls/certificates.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"

namespace octorun::admission {
namespace {

kube::resource secrets() { return {"", "v1", "secrets", true}; }

struct ca_pem {
  std::string certificate, key;
};

expected<ca_pem, std::string> read_secret(const kube::object& secret) {
  const auto* data = secret.member("data");
  auto field = [&](const char* key) -> std::string {
    if (data == nullptr || !data->IsObject()) return {};
    auto decoded = base64_decode(json::str(*data, key));
    return decoded ? *decoded : std::string{};
  };
  ca_pem out{field("ca.crt"), field("ca.key")};
  if (out.certificate.find("BEGIN CERTIFICATE") == std::string::npos ||
      out.key.find("PRIVATE KEY") == std::string::npos)
    return unexpected<std::string>{"Secret " + std::string(secret.key()) +
                                   " holds no ca.crt and ca.key in PEM"};
  return out;
}

}  // namespace

expected<ok_t, std::string> fetch_shared_ca(kube::client& client, const std::string& ns,
                                            const std::string& name, const std::string& dir,
                                            std::chrono::hours validity) {
  const std::string where = "Secret " + ns + "/" + name;
  auto secret = client.get(secrets(), ns, name);
  if (!secret && secret.error().not_found()) {
    auto fresh = tls::make_ca("octorun-webhook-ca", validity);
    if (!fresh) return unexpected<std::string>{"webhook CA: " + fresh.error()};
    json::writer w;
    w.open().field("apiVersion", "v1").field("kind", "Secret").field("type", "Opaque");
    w.open("metadata").field("name", name).field("namespace", ns);
    w.open("labels")
        .field("app.kubernetes.io/name", "octorun")
        .field("app.kubernetes.io/component", "webhook");
    w.close().close();
    w.open("data").field("ca.crt", base64_encode(fresh->certificate));
    const std::string body = w.field("ca.key", base64_encode(fresh->private_key)).close().close().str();
    secret = client.create(secrets(), ns, body);
    // Another replica created it first: use theirs.
    if (!secret && secret.error().already_exists()) secret = client.get(secrets(), ns, name);
  }
  if (!secret) return unexpected<std::string>{where + ": " + kube::to_string(secret.error())};
  auto ca = read_secret(*secret);
  if (!ca) return unexpected<std::string>{ca.error()};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return unexpected<std::string>{"cannot create " + dir + ": " + ec.message()};
  if (auto w = files::write_whole(dir + "/ca.key", ca->key, 0600); !w) return w;
  return files::write_whole(dir + "/ca.crt", ca->certificate);
}

}  // namespace octorun::admission
