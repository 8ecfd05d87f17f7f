#include "secret_destinations.hpp"

#include "net/target_policy.hpp"

namespace runara {

namespace {

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == '=' || static_cast<unsigned char>(c) <= 0x20) return false;
  }
  return true;
}

}  // namespace

std::string parse_secret_option(std::string_view text, SecretOption& out) {
  const std::string prefix = "--secret " + std::string(text) + ": ";
  const auto at = text.find('@');
  out.name = std::string(text.substr(0, at));
  out.destinations.clear();
  if (!valid_name(out.name)) return prefix + "expected an environment variable's name, then optionally @HOST[:PORT][,HOST[:PORT]...]";
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + 1);
  for (;;) {
    const auto comma = rest.find(',');
    const std::string destination(rest.substr(0, comma));
    TargetPolicy probe;  // the same syntax as --allow-host, checked by the same code
    if (!probe.add_grant(destination)) {
      return prefix + "'" + destination + "' is not a destination: expected HOST or HOST:PORT (port 1-65535), "
             "an IPv6 address in brackets when it has a port, e.g. --secret " + out.name + "@api.example.com:443";
    }
    out.destinations.push_back(destination);
    if (comma == std::string_view::npos) return {};
    rest = rest.substr(comma + 1);
  }
}

}  // namespace runara
