#include "load/request_target.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace runara {

std::string request_target_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::size_t authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  // The authority ends at the first '/', '?' or '#' (an IPv6 literal's brackets hold only ':').
  const auto target_start = url.find_first_of("/?#", authority);
  if (target_start == std::string::npos) return "/";
  const std::string target = url.substr(target_start, url.find('#', target_start) - target_start);
  return url[target_start] == '/' ? target : "/" + target;
}

bool numeric_host(const std::string& host_in, int port, sockaddr_storage& out) {
  std::string host = host_in;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  out = sockaddr_storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  return false;
}

}  // namespace runara
