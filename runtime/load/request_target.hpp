// The request line's target (path and query) of a load's URL, and the URL's host resolved to
// socket addresses, without libcurl: the native transport needs only these, and so the remote
// load agent (agent/), which links no libcurl, runs the same transport.
//
// Contract: pure functions, any thread. `url` is one target_url.hpp already accepted (libcurl's
// normalised form, "http://host[:port]/path[?query]").
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "base/result.hpp"

namespace runara {

// "/v1/completions?x=1" for "http://10.0.0.5:8000/v1/completions?x=1#frag"; "/" when none.
std::string request_target_of(const std::string& url);

// The addresses of `host` (a name or a literal, IPv6 in brackets or not) at `port`. A literal
// is converted without any lookup; a name goes through getaddrinfo (the system's resolver).
// Or why not. Defined in load_job/resolve_host.cpp; the agent links agent/agent_links.cpp
// instead, which accepts literals only (a static binary has no NSS).
Result<std::vector<sockaddr_storage>> resolve_host(const std::string& host, int port);

// `host` as a literal address at `port`, if it is one (no lookup).
bool numeric_host(const std::string& host, int port, sockaddr_storage& out);

}  // namespace runara
