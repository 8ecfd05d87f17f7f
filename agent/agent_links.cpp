// What the agent links in place of runara's own definitions, so that its static binary needs
// no libcurl and no NSS (runtime/load/request_target.hpp and load/transport.hpp say where each
// has its other definition):
//   make_load_transport: plain http:// over the native HTTP/1.1 transport only; runara refuses
//     https and HTTP/2 for a remote load before it starts, so nothing else reaches here;
//   resolve_host: literal addresses only (runara sends only those).
#include "load/shared.hpp"
#include "load/transport.hpp"
#include "load/request_target.hpp"

namespace runara {

std::unique_ptr<LoadTransport> make_load_transport(uv_loop_t* loop, LoadShared& shared) {
  return make_native_transport(loop, shared);
}

Result<std::vector<sockaddr_storage>> resolve_host(const std::string& host, int port) {
  sockaddr_storage literal{};
  if (numeric_host(host, port, literal)) return std::vector<sockaddr_storage>{literal};
  return Error{"the agent takes numeric addresses only, got " + host};
}

}  // namespace runara
