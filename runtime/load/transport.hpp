// How a load worker's requests reach the server, behind one interface (as wrk's `sock` table
// hides plain and TLS sockets): a transport serves the whole worker, and each request slot holds
// one SlotConnection from it, reused request after request so connections are kept alive.
// Two implementations: native_transport.cpp (plain http://, HTTP/1.1, the hot path) and
// curl_transport.cpp (https:// and HTTP/2, through libcurl). make_load_transport() picks.
//
// Contract: everything runs on the worker's thread and loop. A slot's events (SlotEvents) run
// from the transport's callbacks: on_status and on_body zero or more times, then exactly one
// on_complete per send() unless the request is abort()ed. on_body returning false means the
// response's verdict is already known (it crossed a bound, response_judge.hpp): the transport
// reads no more of it and completes the request with an error of its own. Times are ns since the load started.
// Slot connections must be destroyed before their transport; close() is called once the worker
// has nothing in flight, and the loop then runs until every handle is released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "load/request_record.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

class LoadShared;

struct SlotEvents {
  virtual void on_status(int status) = 0;
  virtual bool on_body(const char* data, std::size_t len, std::int64_t arrived_ns) = 0;  // false: stop reading
  virtual void on_complete(ErrorKind error, const std::string& message) = 0;

 protected:
  ~SlotEvents() = default;
};

class SlotConnection {
 public:
  virtual ~SlotConnection() = default;
  // `body` (ignored unless has_body) must stay valid until on_complete or abort().
  virtual void send(const std::string& body, bool has_body) = 0;
  virtual void abort() = 0;  // drops the request in flight; no on_complete
};

class LoadTransport {
 public:
  virtual ~LoadTransport() = default;
  virtual std::unique_ptr<SlotConnection> open(SlotEvents& events) = 0;
  virtual std::size_t slot_bytes() const = 0;  // what one slot's connection holds, roughly
  virtual void close() = 0;
};

// The native transport for plain http:// without HTTP/2, libcurl otherwise. Resolving the
// target and judging it against the target policy happen here, on the worker's thread.
std::unique_ptr<LoadTransport> make_load_transport(uv_loop_t* loop, LoadShared& shared);
std::unique_ptr<LoadTransport> make_native_transport(uv_loop_t* loop, LoadShared& shared);
std::unique_ptr<LoadTransport> make_curl_transport(uv_loop_t* loop, LoadShared& shared);

}  // namespace runara
