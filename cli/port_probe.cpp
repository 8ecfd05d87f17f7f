#include "port_probe.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runara::cli {

std::string loopback_port_problem(int port) {
  if (port == 0) return {};
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot make a socket: ") + std::strerror(errno);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string problem;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    problem = errno == EADDRINUSE ? "port " + std::to_string(port) + " on 127.0.0.1 is already in use (choose another with --port, or 0 for a free one)"
                                  : "cannot bind 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
  }
  close(fd);
  return problem;
}

}  // namespace runara::cli
