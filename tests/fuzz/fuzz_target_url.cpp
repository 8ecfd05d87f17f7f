// libFuzzer target for the URL half of the target policy, against libcurl's own parser and
// libcurl's own connection.
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks, when parse_target_url accepts it:
//   * curl_url, on the raw input and on the URL the policy passes on, finds the same host and
//     port as the policy; the port is 1-65535, the host is not empty and has no trailing dot.
//   * A policy granting exactly host:port allows that and refuses port+1 (or port-1).
//   * When the host is an IP literal, libcurl given the URL the policy passes on tries to connect
//     to that address and port only (nothing is connected: the open-socket callback refuses
//     every socket after recording its address). Names are not resolved: no traffic.
// And when it refuses the input, it says why.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "net/target_policy.hpp"
#include "load_job/target_url.hpp"

namespace {

void fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "fuzz_target_url: %s for input '%s'\n", what, input.c_str());
  std::abort();
}

bool curl_parts(const std::string& text, std::string& host, int& port) {
  CURLU* u = curl_url();
  char *h = nullptr, *p = nullptr;
  const bool ok = curl_url_set(u, CURLUPART_URL, text.c_str(), 0) == CURLUE_OK &&
                  curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
                  curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OK;
  host = h ? h : "";
  port = p ? std::atoi(p) : 0;
  curl_free(h);
  curl_free(p);
  curl_url_cleanup(u);
  return ok;
}

struct Attempts {
  std::vector<std::string> addresses;
  std::vector<int> ports;
};

curl_socket_t record(void* data, curlsocktype, curl_sockaddr* address) {
  auto* a = static_cast<Attempts*>(data);
  a->addresses.push_back(runara::address_text(&address->addr));
  a->ports.push_back(runara::address_port(&address->addr));
  return CURL_SOCKET_BAD;
}

Attempts connect_attempts(const std::string& url) {
  Attempts a;
  CURL* e = curl_easy_init();
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &record);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &a);
  curl_easy_perform(e);
  curl_easy_cleanup(e);
  return a;
}

// The IP literal inside `host` ("[::1]" -> "::1") with its socket address; false for names.
bool literal(const std::string& host, int port, std::string& bare, sockaddr_storage& ss) {
  bare = host.size() > 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  std::memset(&ss, 0, sizeof ss);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, bare.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  if (inet_pton(AF_INET6, bare.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  return false;
}

void check_policy(const runara::TargetUrl& t, const std::string& input) {
  std::string bare;
  sockaddr_storage ss;
  if (!literal(t.host, t.port, bare, ss)) return;
  runara::TargetPolicy policy;
  const std::string grant = (bare.find(':') != std::string::npos ? "[" + bare + "]" : bare) + ":" + std::to_string(t.port);
  if (!policy.add_grant(grant)) fail("a parsed host:port is not a valid grant", input);
  std::string why;
  if (!policy.allows(reinterpret_cast<sockaddr*>(&ss), t.host, why)) fail("the exact grant refused its own target", input);
  sockaddr_storage other;
  literal(t.host, t.port == 65535 ? t.port - 1 : t.port + 1, bare, other);
  if (policy.allows(reinterpret_cast<sockaddr*>(&other), t.host, why)) fail("a grant allowed another port", input);
  // Compared as the same text of the same bytes: inet_ntop writes ::9:1 as "::0.9.0.1".
  const std::string expected = runara::address_text(reinterpret_cast<sockaddr*>(&ss));
  const Attempts a = connect_attempts(t.url);
  for (std::size_t i = 0; i < a.addresses.size(); ++i) {
    if (a.addresses[i] != expected || a.ports[i] != t.port) fail("libcurl connects elsewhere than the policy judged", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto t = runara::parse_target_url(input);
  if (!t) {
    if (t.error().empty()) fail("refused without a reason", input);
    return 0;
  }
  if (t->port < 1 || t->port > 65535 || t->host.empty() || t->host.back() == '.') fail("accepted a bad host or port", input);
  std::string host;
  int port = 0;
  if (!curl_parts(input, host, port) || host != t->host || port != t->port) fail("curl_url disagrees on the raw input", input);
  if (!curl_parts(t->url, host, port) || host != t->host || port != t->port) fail("curl_url disagrees on the URL passed on", input);
  check_policy(*t, input);
  return 0;
}
