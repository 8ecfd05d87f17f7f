#include "load_job/target_url.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>

namespace runara {

namespace {

using UrlHandle = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

// One part of a parsed URL; "" when the URL has none.
std::string part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(u, which, &value, flags) != CURLUE_OK || !value) return {};
  std::string out(value);
  curl_free(value);
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "http://" or "https://" followed by a host: libcurl also takes "http:/x" and "http:///x", and
// guesses a scheme (and with it the port) for "x/y"; a script must say which it means.
std::string scheme_problem(std::string_view text) {
  const std::string head = lower(text.substr(0, 8));
  const std::size_t len = head.rfind("https://", 0) == 0 ? 8 : head.rfind("http://", 0) == 0 ? 7 : 0;
  if (len == 0 && text.find("://") != std::string_view::npos) return "must be an http:// or https:// URL";
  if (len == 0) return "must start with http:// or https:// (without a scheme libcurl guesses one, and with it the port)";
  if (text.size() == len || text[len] == '/' || text[len] == '\\') return "has no host right after the scheme's \"//\"";
  return {};
}

std::string control_problem(std::string_view text) {
  for (unsigned char c : text) {
    if (c <= 0x20 || c == 0x7f) return "holds whitespace or a control character";
  }
  return {};
}

bool has_part(CURLU* u, CURLUPart which) {
  char* value = nullptr;
  const bool found = curl_url_get(u, which, &value, 0) == CURLUE_OK;
  curl_free(value);
  return found;
}

// The host as libcurl will look it up: a trailing dot would make "127.0.0.1." a name the DNS
// answers for, and libcurl converts non-ASCII names (IDN) before looking them up.
std::string host_problem(const std::string& host) {
  if (host.empty()) return "has no host";
  if (host.back() == '.') return "has a host ending in '.': write it without the trailing dot";
  for (unsigned char c : host) {
    if (c >= 0x80) return "has a host with non-ASCII characters: write it in its ASCII (xn--) form";
  }
  return {};
}

// Checks what libcurl parsed; "" when the policy can judge it.
std::string parts_problem(CURLU* u, TargetUrl& out) {
  if (has_part(u, CURLUPART_USER) || has_part(u, CURLUPART_PASSWORD) || has_part(u, CURLUPART_OPTIONS)) {
    return "holds credentials or an '@' before the host: send credentials in headers or api_key, with runara.secret";
  }
  if (has_part(u, CURLUPART_ZONEID)) return "holds an IPv6 zone id (\"%25eth0\"), which is not supported";
  out.scheme = lower(part(u, CURLUPART_SCHEME));
  if (out.scheme != "http" && out.scheme != "https") return "must be an http:// or https:// URL";
  out.host = part(u, CURLUPART_HOST);
  if (std::string bad = host_problem(out.host); !bad.empty()) return bad;
  const std::string port = part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  out.port = port.empty() || port.size() > 5 ? 0 : std::stoi(port);
  if (out.port < 1 || out.port > 65535) return "has a port outside 1-65535";
  out.path = part(u, CURLUPART_PATH);
  if (out.path.empty()) out.path.push_back('/');  // not = "/": GCC 12 warns falsely (-Wrestrict)
  out.query = part(u, CURLUPART_QUERY);
  out.url = part(u, CURLUPART_URL);
  return out.url.empty() ? "is not a URL libcurl can print back" : "";
}

// libcurl reads some URLs differently once printed back ("http://0%580" has the name "0X0",
// which printed is the hex address 0.0.0.0): only a URL that reads the same again is passed on.
std::string round_trip_problem(const TargetUrl& t) {
  UrlHandle again(curl_url(), &curl_url_cleanup);
  if (curl_url_set(again.get(), CURLUPART_URL, t.url.c_str(), 0) != CURLUE_OK ||
      part(again.get(), CURLUPART_HOST) != t.host ||
      part(again.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT) != std::to_string(t.port)) {
    return "is ambiguous: libcurl reads it as another host once printed back (" + t.url + "); write the host plainly";
  }
  return {};
}

}  // namespace

Result<TargetUrl> parse_target_url(std::string_view text) {
  std::string error = scheme_problem(text);
  if (error.empty()) error = control_problem(text);
  if (!error.empty()) return Error{error};
  UrlHandle u(curl_url(), &curl_url_cleanup);
  const std::string copy(text);
  if (const CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, copy.c_str(), 0); rc != CURLUE_OK) {
    return Error{std::string("is not a valid URL (libcurl: ") + curl_url_strerror(rc) + ")"};
  }
  TargetUrl out;
  error = parts_problem(u.get(), out);
  if (error.empty()) error = round_trip_problem(out);
  if (!error.empty()) return Error{error};
  return out;
}

void point_loopback_at(TargetUrl& url, const std::string& address) {
  if (address.empty() || (url.host != "127.0.0.1" && url.host != "localhost")) return;
  const auto at = url.url.find("://" + url.host);
  if (at != std::string::npos) url.url.replace(at + 3, url.host.size(), address);
  url.host = address;
}

}  // namespace runara
