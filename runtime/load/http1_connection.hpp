// A plain-HTTP/1.1 keep-alive connection for the load generator's hot path, in the style of wrk:
// the request is bytes prepared once, the response goes through http-parser, and the read buffer
// is the worker's (one per thread, not one per connection), so an idle stream costs a few hundred
// bytes. https:// and HTTP/2 go through libcurl instead (load/transport.hpp picks).
//
// One request at a time per connection (no pipelining). The connection is opened on the first
// send, kept for the next ones, and reopened when the server closes it.
//
// Arrival times come from the kernel (SO_TIMESTAMPNS on a socket read with recvmsg), not from
// when this thread got round to reading: a late wake-up does not make a token look late.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "load/request_record.hpp"

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_timer_s uv_timer_t;

namespace runara {

class Http1Connection {
 public:
  struct Handler {
    virtual void on_status(int status) = 0;
    // `arrived_ns`: when these bytes reached this machine, on uv_hrtime()'s clock. False: read
    // no more of this response (the request fails, kOther, and the connection is closed).
    virtual bool on_body(const char* data, std::size_t len, std::int64_t arrived_ns) = 0;
    // The response is complete (error == kNone) or the request failed.
    virtual void on_complete(ErrorKind error, const std::string& message) = 0;

   protected:
    ~Handler() = default;
  };

  // `read_buffer` is shared by every connection of the thread (reads are consumed at once).
  // `head_request`: responses carry no body whatever their headers say (HEAD).
  Http1Connection(uv_loop_t* loop, const sockaddr_storage& address, Handler& handler, char* read_buffer,
                  std::size_t read_buffer_size, bool head_request);
  ~Http1Connection();  // closes; the uv handles free themselves
  Http1Connection(const Http1Connection&) = delete;
  Http1Connection& operator=(const Http1Connection&) = delete;

  // Sends `head`, `head_end` and `body`, one after the other: the request line and headers
  // ending in a blank line, split where the caller likes (a load's fixed headers, then this
  // request's Content-Length, so no slot keeps a copy of the whole head), then the body. All
  // three must stay valid until on_complete. `timeout_ms` bounds the whole exchange.
  void send(std::string_view head, std::string_view head_end, std::string_view body, std::uint64_t timeout_ms);
  void abort();  // drops the request in flight (no on_complete) and the connection
  // Every request will fail this way (the target could not be resolved or is not allowed).
  void refuse(ErrorKind kind, std::string message);

  struct Socket;

 private:
  Socket* socket_ = nullptr;  // the open connection, or none
  uv_loop_t* loop_;
  sockaddr_storage address_;
  Handler& handler_;
  char* read_buffer_;
  std::size_t read_buffer_size_;
  uv_timer_t* timer_ = nullptr;
  // The timeout of the request in flight, on the loop's clock. The timer is not stopped and
  // restarted for every request (two timer-heap updates each, wrk's sock.c keeps none): it stays
  // armed for an earlier deadline, and when it fires early it is armed again for the rest.
  std::uint64_t deadline_ms_ = 0;
  bool timer_armed_ = false;
  bool in_flight_ = false;
  bool head_request_;
  ErrorKind refused_kind_ = ErrorKind::kNone;
  std::string refused_message_;

  bool open_socket();
  void start(std::string_view head, std::string_view head_end, std::string_view body);
  void arm_timeout(std::uint64_t timeout_ms);
  void disarm_timeout();
  void finish(ErrorKind error, const std::string& message, bool keep_connection);
  void drop_socket();
  friend struct Http1Callbacks;
};

}  // namespace runara
