#include "on_target.hpp"

#include <cctype>
#include <cstdlib>

namespace runara::cli {

namespace {

constexpr const char* kExpected =
    "--on expects USER@HOST[:PORT] (a machine of yours, over ssh) or http(s)://HOST[:PORT] (a running "
    "OpenAI-compatible server)";

bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 253 || s[0] == '-' || s[0] == '.') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return false;
  }
  return true;
}

bool ipv6_literal(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  }
  return s.find(':') != std::string::npos;
}

bool parse_port(const std::string& s, int& port) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  port = std::atoi(s.c_str());
  return port >= 1 && port <= 65535;
}

// "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT" -> host (without brackets) and port.
std::string split_host_port(const std::string& text, std::string& host, int& port, const std::string& whole) {
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) return "--on " + whole + ": '[' without ']' around an IPv6 address";
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
    if (!ipv6_literal(host)) return "--on " + whole + ": '" + host + "' is not an IPv6 address";
  } else {
    const auto colon = text.find(':');
    host = text.substr(0, colon);
    rest = colon == std::string::npos ? "" : text.substr(colon);
    if (!plain_name(host)) return "--on " + whole + ": '" + host + "' is not a host name or address";
  }
  if (rest.empty()) return {};
  if (rest[0] != ':' || !parse_port(rest.substr(1), port)) {
    return "--on " + whole + ": the port must be a number from 1 to 65535, got '" + rest.substr(1) + "'";
  }
  return {};
}

std::string host_port(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string parse_endpoint(const std::string& text, OnTarget& into) {
  if (!into.endpoint.empty()) return "--on names one server; got a second: " + text;
  const bool tls = text.rfind("https://", 0) == 0;
  const std::string rest = text.substr(tls ? 8 : 7);
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos) return "--on " + text + ": credentials in the URL are not accepted (pass an API key with --secret)";
  int port = tls ? 443 : 80;
  std::string host;
  if (std::string error = split_host_port(authority, host, port, text); !error.empty()) return error;
  into.endpoint = text;
  while (!into.endpoint.empty() && into.endpoint.back() == '/') into.endpoint.pop_back();
  into.endpoint_host = host;
  into.endpoint_port = port;
  return {};
}

}  // namespace

std::string parse_on_option(const std::string& text, OnTarget& into) {
  if (text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0) return parse_endpoint(text, into);
  if (text == "local" || text == "localhost") {
    return "--on " + text + ": running a scenario on this computer is not available yet; serve the model here "
           "yourself and point the scenario at it with --on http://127.0.0.1:PORT";
  }
  const auto at = text.find('@');
  if (at == std::string::npos) return std::string(kExpected) + ", got '" + text + "'";
  if (!into.host.empty()) return "--on names one machine; got a second: " + text;
  const std::string user = text.substr(0, at);
  if (!plain_name(user)) return "--on " + text + ": '" + user + "' is not a user name";
  int port = 22;
  std::string host;
  if (std::string error = split_host_port(text.substr(at + 1), host, port, text); !error.empty()) return error;
  into.user = user;
  into.host = host;
  into.port = port;
  return {};
}

void grant_on_targets(Options& options) {
  const OnTarget& on = options.on;
  if (!on.host.empty()) {
    const std::string where = host_port(on.host, on.port);
    options.permissions.hosts.push_back(where);
    for (auto& [name, destinations] : options.permissions.secret_destinations) destinations.push_back(where);
  }
  if (!on.endpoint.empty()) options.permissions.hosts.push_back(host_port(on.endpoint_host, on.endpoint_port));
}

}  // namespace runara::cli
