// Raw TCP on 127.0.0.1 for tests that talk to a server byte by byte or need a port: an address,
// a blocking connect, a port nothing listens on. Header-only; plain sockets, no event loop.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace runara::test {

// 127.0.0.1:port (0: any free port, when binding).
inline sockaddr_in loopback_address(int port = 0) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// The port a socket is bound to.
inline int bound_port(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// A blocking TCP connection to 127.0.0.1:port, or -1.
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in a = loopback_address(port);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return fd;
  ::close(fd);
  return -1;
}

// A loopback port with nothing listening: bound to a free port, then released. Connecting to it
// is refused (unless something else takes it meanwhile, which the kernel's ephemeral-port
// rotation makes unlikely within a test).
inline int unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = loopback_address();
  ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int port = bound_port(fd);
  ::close(fd);
  return port;
}

}  // namespace runara::test
