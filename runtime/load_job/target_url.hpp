// The URL a load aims at, parsed once, by libcurl's own parser, into the form every later step
// uses: the policy checks `host` and `port`, libcurl and the native client are given `url`.
//
// Parsing with curl_url and handing libcurl the URL it printed back means the target policy and
// the connection cannot disagree on where a URL points (decimal, octal and hex IPv4 spellings,
// percent-encoded hosts, default ports). What the policy cannot judge is refused instead: URLs
// without an explicit http:// or https:// scheme (libcurl would guess one, and with it the
// port), credentials or '@' before the host, IPv6 zone ids, port 0, hosts with a trailing dot or
// non-ASCII characters, whitespace and control characters.
//
// Pure function, no I/O; safe on any thread.
#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace runara {

struct TargetUrl {
  std::string url;     // as libcurl prints it back: what is connected to and requested
  std::string scheme;  // "http" or "https"
  std::string host;    // a name, an IPv4 literal or a bracketed IPv6 literal ("[::1]")
  int port = 0;        // 1-65535: the URL's, or the scheme's default
  std::string path;    // "/" when the URL has none
  std::string query;   // without "?"; "" when none
};

// Parses `text`; on failure the error says what was wrong and what was expected, worded to
// follow the option's name ("must start with http:// or https:// ...").
Result<TargetUrl> parse_target_url(std::string_view text);

// A URL aimed at the loopback (127.0.0.1 or localhost) aimed at `address` instead, for a machine
// whose loopback has an address of its own (MachineRoute::loopback). "" changes nothing.
void point_loopback_at(TargetUrl& url, const std::string& address);

}  // namespace runara
