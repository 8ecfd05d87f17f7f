// A small HTTP/1.1 server on 127.0.0.1 for the fake DigitalOcean API: http-parser reads each
// request, a handler answers it. One thread accepts, one thread serves each connection (the fake
// answers in microseconds unless told to hold an answer back, and then only that connection
// waits), keep-alive, `Expect: 100-continue`, HEAD. It exists so that runara does not link an HTTP
// server library that costs every start of the program milliseconds (cpp-httplib initialises
// OpenSSL when loaded); it is not a general web server.
//
// Threading: start() and stop() from one thread at a time (the owner's). The handler runs on the
// connection threads, several at once: it must be thread-safe, and it must not call stop().
// Limits against a hostile client: headers up to 64 KiB, a body up to 8 MiB (413 beyond), 10 s to
// send a request once begun, 2 s idle between requests on a kept-alive connection, 256 connections
// at once (one more is closed unanswered).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace runara::sim {

struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string target;  // as sent: "/v2/droplets?tag_name=a%20b"
  std::string path;    // percent-decoded, without the query: "/v2/droplets"
  std::multimap<std::string, std::string> params;  // the query, decoded ('+' is a space)
  std::map<std::string, std::string> headers;      // names in lower case; repeated ones joined by ", "
  std::string body;
  int peer_port = 0;

  std::string header(const std::string& lower_case_name) const;  // "" when absent
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // Content-Length is added
  std::string body;
  // Close the connection without answering (what a dropped response looks like to the client).
  bool drop = false;
};

class LoopbackHttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  explicit LoopbackHttpServer(Handler handler);
  ~LoopbackHttpServer();  // stop()
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  // Binds 127.0.0.1:port (0: an ephemeral port; SO_REUSEADDR, so a port just served can be bound
  // again) and serves. Returns the port; throws std::runtime_error when it cannot bind or is running.
  int start(int port);
  // Closes the listener (the port then refuses connections) and every open connection without
  // answering what is in flight, and joins the threads (a handler still running is waited for).
  // Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-decoding of a URL path or query component; `plus_is_space` for query text.
std::string url_decode(const std::string& text, bool plus_is_space);

}  // namespace runara::sim
