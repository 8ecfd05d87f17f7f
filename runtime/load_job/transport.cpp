#include "load/transport.hpp"

#include "load/shared.hpp"

namespace runara {

std::unique_ptr<LoadTransport> make_load_transport(uv_loop_t* loop, LoadShared& shared) {
  const LoadSpec& spec = shared.spec;
  if (spec.url.rfind("http://", 0) == 0 && !spec.http2) return make_native_transport(loop, shared);
  return make_curl_transport(loop, shared);
}

}  // namespace runara
