#include "adapters/admission/certificates.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/files/whole_file.hpp"
#include "adapters/tls/certificates.hpp"

namespace octorun::admission {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string with_newline(std::string s) {
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

}  // namespace

bool rotation_due(long long seconds_left, std::chrono::seconds rotate_before) {
  return seconds_left <= rotate_before.count();
}

certificate_source certificate_source::self_signed(self_signed_config config) {
  certificate_source s;
  s.self_signed_ = true;
  s.config_ = std::move(config);
  return s;
}

certificate_source certificate_source::from_files(certificate_files files) {
  certificate_source s;
  s.self_signed_ = false;
  s.files_ = std::move(files);
  return s;
}

expected<serving_material, std::string> certificate_source::issue(std::chrono::seconds rotate_before) {
  serving_material out;
  if (!self_signed_) {
    const auto cert = read_text(files_.cert_file);
    const auto key = read_text(files_.key_file);
    if (cert.empty()) return unexpected<std::string>{"cannot read the certificate file " + files_.cert_file};
    if (key.empty()) return unexpected<std::string>{"cannot read the key file " + files_.key_file};
    if (auto left = tls::seconds_until_expiry(cert); !left)
      return unexpected<std::string>{files_.cert_file + ": " + left.error()};
    std::error_code ec;
    fs::create_directories(files_.work_dir, ec);
    out.pem_file = files_.work_dir + "/tls.pem";
    if (auto w = files::write_whole(out.pem_file, with_newline(key) + cert, 0600); !w)
      return unexpected<std::string>{w.error()};
    out.certificate = cert;
    out.ca_bundle = files_.ca_file.empty() ? std::string{} : read_text(files_.ca_file);
    current_certificate_ = cert;
    files_snapshot_ = cert + key + out.ca_bundle;
    return out;
  }

  std::error_code ec;
  fs::create_directories(config_.dir, ec);
  if (ec) return unexpected<std::string>{"cannot create " + config_.dir + ": " + ec.message()};
  const auto ca_crt = config_.dir + "/ca.crt", ca_key = config_.dir + "/ca.key";
  tls::key_pair_pem ca{read_text(ca_crt), read_text(ca_key)};
  std::string previous_ca;
  bool reuse = false;
  if (!ca.certificate.empty() && !ca.private_key.empty()) {
    auto left = tls::seconds_until_expiry(ca.certificate);
    // The CA must outlive the serving certificate it signs by the rotation margin.
    const long long needed = rotate_before.count() + std::chrono::seconds(config_.serving_validity).count();
    reuse = left && *left > needed;
    if (!reuse && left && *left > 0) previous_ca = ca.certificate;  // still trusted until it expires
  }
  if (!reuse) {
    auto fresh = tls::make_ca("octorun-webhook-ca", config_.ca_validity);
    if (!fresh) return unexpected<std::string>{"cannot create a CA: " + fresh.error()};
    ca = *fresh;
    if (auto w = files::write_whole(ca_key, ca.private_key, 0600); !w)
      return unexpected<std::string>{w.error()};
    if (auto w = files::write_whole(ca_crt, ca.certificate); !w) return unexpected<std::string>{w.error()};
    if (!previous_ca.empty()) {
      if (auto w = files::write_whole(config_.dir + "/ca-previous.crt", previous_ca); !w)
        return unexpected<std::string>{w.error()};
    }
  } else {
    previous_ca = read_text(config_.dir + "/ca-previous.crt");
    if (!previous_ca.empty()) {
      auto left = tls::seconds_until_expiry(previous_ca);
      if (!left || *left <= 0) previous_ca.clear();
    }
  }
  const auto name = config_.dns_names.empty() ? std::string("octorun-webhook") : config_.dns_names.front();
  auto leaf = tls::issue_serving_certificate(
      ca, {name, config_.dns_names, config_.ip_addresses, config_.serving_validity});
  if (!leaf) return unexpected<std::string>{"cannot issue the serving certificate: " + leaf.error()};
  if (auto w = files::write_whole(config_.dir + "/tls.key", leaf->private_key, 0600); !w)
    return unexpected<std::string>{w.error()};
  if (auto w = files::write_whole(config_.dir + "/tls.crt", leaf->certificate); !w)
    return unexpected<std::string>{w.error()};
  out.pem_file = config_.dir + "/tls.pem";
  if (auto w = files::write_whole(out.pem_file, with_newline(leaf->private_key) + leaf->certificate, 0600);
      !w)
    return unexpected<std::string>{w.error()};
  out.certificate = leaf->certificate;
  out.ca_bundle = with_newline(ca.certificate) + previous_ca;
  current_certificate_ = leaf->certificate;
  return out;
}

expected<long long, std::string> certificate_source::seconds_left() const {
  if (current_certificate_.empty()) return unexpected<std::string>{std::string("no certificate issued yet")};
  return tls::seconds_until_expiry(current_certificate_);
}

bool certificate_source::files_changed() const {
  if (self_signed_) return false;
  const auto ca = files_.ca_file.empty() ? std::string{} : read_text(files_.ca_file);
  return read_text(files_.cert_file) + read_text(files_.key_file) + ca != files_snapshot_;
}

}  // namespace octorun::admission
