// Asynchronous HTTP(S) on an existing libuv loop: requests and responses on top of the one
// libcurl-on-libuv pump (curl/multi_uv.hpp), which owns the sockets, the timer and the shutdown
// order; this class adds transfers by id, deferred dispatch of their callbacks, and the guard
// that lets a callback destroy the client.
//
// Threading: an HttpClient and everything it calls back belong to the thread running its loop.
// Callbacks are always invoked from the loop (never from inside send()), at most once each, and
// never after cancel(), close() or destruction.
//
// Shutdown: close(cb) aborts what is in flight and calls cb once every uv handle it owned is
// released. Destroying the client without close() does the same without a callback; either
// way the loop must run once more (uv_run) before uv_loop_close() so the handles finish
// closing. Both are safe from inside a completion callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

typedef struct uv_loop_s uv_loop_t;
struct sockaddr;

namespace runara {

struct HttpRequest {
  std::string method = "GET";        // GET, HEAD, POST, PUT, PATCH, DELETE, ...
  std::string url;                   // http:// or https:// only
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent for any method when non-empty (always for POST)
  double timeout_s = 30;             // whole transfer; connecting is bounded by min(this, 15 s)
  long max_redirects = 0;            // 0: redirects are not followed (the 3xx is the response)
  std::size_t max_body_bytes = std::size_t{64} << 20;  // larger responses fail the transfer
  std::string ca_file;               // https://: trust these PEM certificates instead of the system's
  // Judges each connection libcurl is about to open, on the address and port it will connect
  // to (a script's target policy); false refuses it and `why` becomes the response's error.
  // When set, no proxy is used (the policy judges the server), and the connection is the
  // request's own: never one kept alive from another, never kept for the next. Unset: no check.
  std::function<bool(const sockaddr* addr, std::string& why)> allow_connect;
};

struct HttpResponse {
  long status = 0;                            // HTTP status; 0 when none arrived
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string error;   // transport (curl) error; "" if a complete response arrived
  int curl_code = 0;   // the CURLcode behind `error` (0 when none)
  bool sent = false;   // the request may have reached the server (connection was established
                       // and the request handed to it, or some response bytes came back)

  // The request failed in a way that leaves unknown whether the server acted on it: a timeout,
  // reset or truncated reply after the request was sent. A connection that was never
  // established is not ambiguous (the server cannot have seen the request).
  bool ambiguous() const { return !error.empty() && sent; }
};

class HttpClient {
 public:
  using Id = std::uint64_t;

  explicit HttpClient(uv_loop_t* loop);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a transfer; `done` runs on the loop when it ends (response or transport error).
  // Non-idempotent methods (POST, PATCH) always use a fresh connection, so libcurl never
  // silently re-sends them after a dead keep-alive connection. Returns 0, and never calls
  // `done`, when the client is closed.
  Id send(HttpRequest request, std::function<void(HttpResponse)> done);

  // Aborts a transfer; its callback will not be called. Unknown or finished ids are ignored.
  void cancel(Id id);

  std::size_t in_flight() const;
  uv_loop_t* loop() const;

  // Aborts everything in flight (no callbacks) and releases the uv handles; `closed` (may be
  // empty) runs on the loop once all of them are closed. Further calls are ignored.
  void close(std::function<void()> closed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara
