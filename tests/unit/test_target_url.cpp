// The URL a load aims at, against libcurl's own parser and libcurl's own connection: a corpus of
// tricky URLs (userinfo, '@', backslashes, percent-encoding, IPv6 zone ids, decimal/octal/hex
// IPv4, trailing dots, mixed-case schemes, whitespace, missing schemes, "http:/x", ports 0,
// 65536 and overflowing) is either refused or parsed to the host and port curl_url finds, and
// libcurl, given the URL the policy passes on, connects exactly there. Nothing is sent: the
// open-socket callback records the address and refuses the socket.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <string>
#include <vector>

#include "net/target_policy.hpp"
#include "load_job/target_url.hpp"

namespace {

struct Corpus {
  const char* url;
  const char* host;  // nullptr: must be refused
  int port;
};

const Corpus kCorpus[] = {
    // Missing or odd schemes: libcurl would guess http or https, and with it the port.
    {"localhost/x", nullptr, 0},
    {"127.0.0.1:8080", nullptr, 0},
    {"localhost:443/x", nullptr, 0},
    {"//127.0.0.1/", nullptr, 0},
    {"http:/x", nullptr, 0},
    {"http:x", nullptr, 0},
    {"http:///127.0.0.1/", nullptr, 0},
    {"http:\\\\127.0.0.1\\", nullptr, 0},
    {"ftp://127.0.0.1/", nullptr, 0},
    {"file:///etc/passwd", nullptr, 0},
    {"gopher://127.0.0.1:70/", nullptr, 0},
    {"http://", nullptr, 0},
    {"HTTP://LocalHost:80/", "LocalHost", 80},
    {"hTTps://127.0.0.1/", "127.0.0.1", 443},
    {"https://127.0.0.1/", "127.0.0.1", 443},
    {"http://127.0.0.1/", "127.0.0.1", 80},
    // Userinfo and '@': the host is after the last '@', and the policy never sees credentials.
    {"http://user:pw@127.0.0.1:8/", nullptr, 0},
    {"http://127.0.0.1:8@evil.example/", nullptr, 0},
    {"http://@127.0.0.1/", nullptr, 0},
    {"http://:@127.0.0.1/", nullptr, 0},
    {"http://127.0.0.1;x@evil.example/", nullptr, 0},
    {"http://127.0.0.1\\@evil.example/", nullptr, 0},
    {"http://127.0.0.1:8080#@evil.example/", "127.0.0.1", 8080},
    {"http://127.0.0.1?@evil.example/", "127.0.0.1", 80},
    {"http://127.0.0.1/@evil.example/", "127.0.0.1", 80},
    // Backslashes.
    {"http://a\\b/", nullptr, 0},
    {"http://127.0.0.1\\evil.example/", nullptr, 0},
    // Percent-encoding.
    {"http://%31%32%37.0.0.1:9/", "127.0.0.1", 9},
    {"http://127.0.0.1%00.evil.example/", nullptr, 0},
    {"http://127.0.0.1%2e/", nullptr, 0},
    {"http://0%580", nullptr, 0},  // found by the fuzzer: the name "0X0", printed back the address 0.0.0.0
    // IPv6, zone ids, IPv4 inside IPv6.
    {"http://[::1]:8080/", "[::1]", 8080},
    {"https://[0:0:0:0:0:0:0:1]:9443/", "[::1]", 9443},
    {"http://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]", 80},
    {"https://[::9:1]:/:", "[::9:1]", 443},  // found by the fuzzer: prints as ::0.9.0.1
    {"http://[fe80::1%25eth0]:80/", nullptr, 0},
    {"http://[fe80::1%eth0]/", nullptr, 0},
    {"http://[::1/", nullptr, 0},
    {"http://[::1]x/", nullptr, 0},
    {"http://::1/", nullptr, 0},
    // Decimal, octal, hex and short IPv4.
    {"http://2130706433/", "127.0.0.1", 80},
    {"http://0177.0.0.1/", "127.0.0.1", 80},
    {"http://0x7f.1/", "127.0.0.1", 80},
    {"http://0x7f000001:7/", "127.0.0.1", 7},
    {"http://127.1:8080/", "127.0.0.1", 8080},
    {"http://017700000001/", "127.0.0.1", 80},
    // Trailing dots and non-ASCII names (libcurl would look up something else).
    {"http://localhost.:8/", nullptr, 0},
    {"http://127.0.0.1./", nullptr, 0},
    {"http://\xe2\x93\x9b" "ocalhost/", nullptr, 0},
    // Whitespace and control characters.
    {" http://127.0.0.1/", nullptr, 0},
    {"http://127.0.0.1 /", nullptr, 0},
    {"http://127.0.0.1/\t", nullptr, 0},
    {"http://127.0.0.1/\r\nHost: x", nullptr, 0},
    {"http://127.0.0.1/\x7f", nullptr, 0},
    // Ports.
    {"http://127.0.0.1:0/", nullptr, 0},
    {"http://127.0.0.1:65536/", nullptr, 0},
    {"http://127.0.0.1:99999999999999999999/", nullptr, 0},
    {"http://127.0.0.1:4294967377/", nullptr, 0},
    {"http://127.0.0.1:-1/", nullptr, 0},
    {"http://127.0.0.1:+80/", nullptr, 0},
    {"http://127.0.0.1:8080:80/", nullptr, 0},
    {"http://127.0.0.1:0080/", "127.0.0.1", 80},
    {"http://127.0.0.1:/", "127.0.0.1", 80},
    {"http://LOCALHOST:65535", "LOCALHOST", 65535},
    {"http://127.0.0.1:1/", "127.0.0.1", 1},
};

// Host and port as curl_url finds them in `text` (no default scheme); false when it refuses.
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

struct Attempt {
  std::vector<std::string> addresses;
  std::vector<int> ports;
};

curl_socket_t record(void* data, curlsocktype, curl_sockaddr* address) {
  auto* a = static_cast<Attempt*>(data);
  a->addresses.push_back(runara::address_text(&address->addr));
  a->ports.push_back(runara::address_port(&address->addr));
  return CURL_SOCKET_BAD;  // nothing is connected, nothing sent
}

// Where libcurl would connect for `url`.
Attempt connect_attempt(const std::string& url) {
  Attempt a;
  CURL* e = curl_easy_init();
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &record);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &a);
  curl_easy_perform(e);
  curl_easy_cleanup(e);
  return a;
}

std::string bare(std::string host) {
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return host;
}

// The address text libcurl's socket address will print as (inet_ntop: ::9:1 is "::0.9.0.1"); ""
// for a name.
std::string ip_text(const std::string& host) {
  sockaddr_storage ss{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) v4->sin_family = AF_INET;
  else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) v6->sin6_family = AF_INET6;
  else return {};
  return runara::address_text(reinterpret_cast<sockaddr*>(&ss));
}

}  // namespace

TEST_CASE("tricky URLs are refused, or parsed to the host and port libcurl finds and connects to", "[target_policy]") {
  for (const Corpus& c : kCorpus) {
    INFO(c.url);
    const auto parsed = runara::parse_target_url(c.url);
    if (!c.host) {
      CHECK_FALSE(parsed);
      CHECK_FALSE(parsed.error().empty());
      continue;
    }
    REQUIRE(parsed);
    CHECK(parsed.error().empty());
    CHECK(parsed->host == c.host);
    CHECK(parsed->port == c.port);
    std::string curl_host;
    int curl_port = 0;
    REQUIRE(curl_parts(c.url, curl_host, curl_port));  // libcurl's parser, on the raw text
    CHECK(curl_host == parsed->host);
    CHECK(curl_port == parsed->port);
    REQUIRE(curl_parts(parsed->url, curl_host, curl_port));  // and on the URL passed on
    CHECK(curl_host == parsed->host);
    CHECK(curl_port == parsed->port);
    const std::string ip = ip_text(bare(parsed->host));
    if (ip.empty()) continue;  // names would need a resolver: no traffic
    const Attempt a = connect_attempt(parsed->url);
    REQUIRE(!a.addresses.empty());
    for (std::size_t i = 0; i < a.addresses.size(); ++i) {
      CHECK(a.addresses[i] == ip);
      CHECK(a.ports[i] == parsed->port);
    }
  }
}

TEST_CASE("refused URLs say what was wrong", "[target_policy]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"localhost/x", "must start with http:// or https:// (without a scheme libcurl guesses one, and with it the port)"},
      {"gopher://x/", "must be an http:// or https:// URL"},
      {"http:/x", "must start with http:// or https://"},
      {"http:///x", "has no host right after the scheme's \"//\""},
      {"http://u:p@127.0.0.1/", "holds credentials or an '@' before the host"},
      {"http://[fe80::1%25eth0]/", "holds an IPv6 zone id"},
      {"http://localhost./", "has a host ending in '.'"},
      {"http://127.0.0.1:0/", "has a port outside 1-65535"},
      {"http://127.0.0.1:65536/", "is not a valid URL (libcurl: "},
      {"http://127.0.0.1 /", "holds whitespace or a control character"},
  };
  for (const auto& [url, message] : cases) {
    INFO(url);
    const auto refused = runara::parse_target_url(url);
    CHECK_FALSE(refused);
    CHECK(refused.error().find(message) == 0);
  }
  const auto ok = runara::parse_target_url("http://127.0.0.1:8000/v1/x?y=1");
  REQUIRE(ok);
  CHECK(ok->scheme == "http");
  CHECK(ok->path == "/v1/x");
  CHECK(ok->query == "y=1");
  CHECK(ok->url == "http://127.0.0.1:8000/v1/x?y=1");
}
