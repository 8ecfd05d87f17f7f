// resolve_host() for runara itself: literals directly, names through getaddrinfo. (The remote
// load agent links agent/numeric_host.cpp instead: see request_target.hpp.)
#include <netdb.h>

#include <cstring>

#include "load/request_target.hpp"

namespace runara {

Result<std::vector<sockaddr_storage>> resolve_host(const std::string& host_in, int port) {
  sockaddr_storage literal{};
  if (numeric_host(host_in, port, literal)) return std::vector<sockaddr_storage>{literal};
  std::string host = host_in;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) return Error{"cannot resolve " + host + ": " + gai_strerror(rc)};
  std::vector<sockaddr_storage> out;
  for (addrinfo* a = found; a; a = a->ai_next) {
    sockaddr_storage ss{};
    std::memcpy(&ss, a->ai_addr, a->ai_addrlen);
    out.push_back(ss);
  }
  freeaddrinfo(found);
  return out;
}

}  // namespace runara
