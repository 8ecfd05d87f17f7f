#include "load/http1_connection.hpp"

#include <http_parser.h>
#include <netinet/tcp.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>

#include "net/arrival_time.hpp"

namespace runara {

namespace {

std::string error_text(int err) { return uv_strerror(uv_translate_sys_error(err)); }

}  // namespace

// One TCP connection on a non-blocking socket of our own, watched with uv_poll: reading with
// recvmsg() is what gives each read the kernel's arrival time. The struct outlives its owner
// when the owner drops it (closing is asynchronous): callbacks that find no owner do nothing.
struct Http1Connection::Socket {
  uv_poll_t poll{};
  int fd = -1;
  int watching = 0;  // UV_READABLE / UV_WRITABLE bits being polled
  http_parser parser{};
  Http1Connection* owner = nullptr;
  bool connected = false;
  bool message_done = false;
  bool keep_alive = true;
  bool response_started = false;
  bool body_refused = false;          // the handler wants no more of this response
  std::string_view parts[3];          // the request being sent: head, head_end, body
  std::size_t written = 0;            // bytes of the parts already sent, in order
  std::int64_t arrived_ns = 0;        // when the bytes being parsed arrived (uv_hrtime clock)
};

struct Http1Callbacks {
  using Socket = Http1Connection::Socket;

  static Socket* of(http_parser* p) { return static_cast<Socket*>(p->data); }

  static int on_headers_complete(http_parser* p) {
    Socket* s = of(p);
    s->keep_alive = http_should_keep_alive(p) != 0;
    if (s->owner) s->owner->handler_.on_status(p->status_code);
    return s->owner && s->owner->head_request_ ? 1 : 0;  // 1: no body follows
  }

  static int on_body(http_parser* p, const char* at, size_t len) {
    Socket* s = of(p);
    if (s->owner && !s->owner->handler_.on_body(at, len, s->arrived_ns)) {
      s->body_refused = true;
      return 1;  // http_parser stops here
    }
    return 0;
  }

  static int on_message_begin(http_parser* p) {
    of(p)->response_started = true;
    return 0;
  }

  static int on_message_complete(http_parser* p) {
    of(p)->message_done = true;
    return 0;
  }

  static const http_parser_settings& settings() {
    static const http_parser_settings s = [] {
      http_parser_settings x{};
      x.on_message_begin = on_message_begin;
      x.on_headers_complete = on_headers_complete;
      x.on_body = on_body;
      x.on_message_complete = on_message_complete;
      return x;
    }();
    return s;
  }

  static void on_closed(uv_handle_t* h) {
    Socket* s = static_cast<Socket*>(h->data);
    if (s->fd >= 0) close(s->fd);
    delete s;
  }

  static void watch(Socket* s, int events) {
    if (events == s->watching) return;
    s->watching = events;
    uv_poll_start(&s->poll, events, on_poll);
  }

  // The connection ended while a request was out: judge what was received.
  static void ended(Socket* s, Http1Connection* c, int err) {
    if (!c->in_flight_) return c->drop_socket();  // an idle keep-alive connection closed
    if (err == 0 && s->response_started) http_parser_execute(&s->parser, &settings(), nullptr, 0);
    if (s->message_done) return c->finish(ErrorKind::kNone, {}, false);
    const std::string why = err == 0 ? "the server closed the connection before the response ended"
                                     : "connection error: " + error_text(err);
    c->finish(ErrorKind::kReset, why, false);
  }

  // Parses one read. False when the request is over (the socket may be gone or reused).
  static bool parse(Socket* s, Http1Connection* c, std::size_t n) {
    if (!c->in_flight_) {  // bytes nobody asked for: the connection cannot be trusted
      c->drop_socket();
      return false;
    }
    const size_t parsed = http_parser_execute(&s->parser, &settings(), c->read_buffer_, n);
    if (s->body_refused) {
      c->finish(ErrorKind::kOther, "the rest of the response was not read", false);
      return false;
    }
    if (s->parser.http_errno != HPE_OK && !s->message_done) {
      c->finish(ErrorKind::kOther,
                std::string("invalid HTTP response: ") + http_errno_description(HTTP_PARSER_ERRNO(&s->parser)), false);
      return false;
    }
    if (!s->message_done) return true;
    c->finish(ErrorKind::kNone, {}, s->keep_alive && parsed == n);
    return false;
  }

  static void read_ready(Socket* s) {
    alignas(cmsghdr) char control[kArrivalControlBytes];
    for (int reads = 0; reads < 32; ++reads) {  // then let the other connections have a turn
      Http1Connection* c = s->owner;
      if (!c) return;
      iovec iov{c->read_buffer_, c->read_buffer_size_};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = recvmsg(s->fd, &msg, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return ended(s, c, n == 0 ? 0 : errno);
      s->arrived_ns = arrival_time_ns(msg);
      if (!parse(s, c, static_cast<std::size_t>(n))) return;
    }
  }

  // Sends what is left of the request; waits for the socket to drain when the kernel is full.
  static void flush(Socket* s) {
    Http1Connection* c = s->owner;
    const std::size_t total = s->parts[0].size() + s->parts[1].size() + s->parts[2].size();
    while (s->written < total) {
      iovec iov[3];
      int count = 0;
      std::size_t skip = s->written;  // bytes of the parts already sent
      for (std::string_view part : s->parts) {
        if (skip >= part.size()) {
          skip -= part.size();
          continue;
        }
        iov[count++] = {const_cast<char*>(part.data()) + skip, part.size() - skip};
        skip = 0;
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(count);
      const ssize_t n = sendmsg(s->fd, &msg, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return watch(s, UV_READABLE | UV_WRITABLE);
      if (n < 0) return c->finish(ErrorKind::kReset, "send failed: " + error_text(errno), false);
      s->written += static_cast<std::size_t>(n);
    }
    watch(s, UV_READABLE);
  }

  static void connected(Socket* s) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return s->owner->finish(ErrorKind::kConnect, "cannot connect: " + error_text(err), false);
    s->connected = true;
    flush(s);
  }

  static void on_poll(uv_poll_t* handle, int status, int events) {
    Socket* s = static_cast<Socket*>(handle->data);
    Http1Connection* c = s->owner;
    if (!c) return;
    if (status < 0) {
      // libuv reports any POLLERR as UV_EBADF; the socket's own error says what happened
      // ("connection refused", "no route to host").
      int err = 0;
      socklen_t len = sizeof err;
      const bool known = getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0;
      const std::string why = known ? error_text(err) : uv_strerror(status);
      const ErrorKind kind = s->connected ? ErrorKind::kReset : ErrorKind::kConnect;
      return c->finish(kind, (s->connected ? "connection error: " : "cannot connect: ") + why, false);
    }
    if (!s->connected) {
      if (events & (UV_WRITABLE | UV_READABLE)) connected(s);
      return;
    }
    if (events & UV_READABLE) read_ready(s);
    // Reading may have ended the request, and the handler may have sent the next one or
    // destroyed the connection; only a request still going on this socket wants the write.
    Http1Connection* now = s->owner;
    if ((events & UV_WRITABLE) && now && now->socket_ == s && now->in_flight_) flush(s);
  }

  static void on_timeout(uv_timer_t* t) {
    auto* c = static_cast<Http1Connection*>(t->data);
    c->timer_armed_ = false;
    if (!c->in_flight_) return;  // left armed by a request that has ended
    const std::uint64_t now = uv_now(c->loop_);
    if (now < c->deadline_ms_) {  // armed for an earlier request: the rest of this one's time
      c->timer_armed_ = true;
      uv_timer_start(t, on_timeout, c->deadline_ms_ - now, 0);
      return;
    }
    if (c->refused_kind_ != ErrorKind::kNone) return c->finish(c->refused_kind_, c->refused_message_, false);
    c->finish(ErrorKind::kTimeout, "no complete response within the timeout", false);
  }
};

Http1Connection::Http1Connection(uv_loop_t* loop, const sockaddr_storage& address, Handler& handler, char* read_buffer,
                                 std::size_t read_buffer_size, bool head_request)
    : loop_(loop), address_(address), handler_(handler), read_buffer_(read_buffer),
      read_buffer_size_(read_buffer_size), head_request_(head_request) {
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

Http1Connection::~Http1Connection() {
  drop_socket();
  uv_timer_stop(timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void Http1Connection::send(std::string_view head, std::string_view head_end, std::string_view body,
                           std::uint64_t timeout_ms) {
  in_flight_ = true;
  if (refused_kind_ != ErrorKind::kNone) {  // fail on the next loop turn, not inside the caller
    arm_timeout(0);
    return;
  }
  arm_timeout(timeout_ms);
  start(head, head_end, body);
}

void Http1Connection::arm_timeout(std::uint64_t timeout_ms) {
  deadline_ms_ = uv_now(loop_) + timeout_ms;
  uv_ref(reinterpret_cast<uv_handle_t*>(timer_));  // a request in flight keeps the loop running
  // Armed for a deadline no later than this one: on_timeout re-arms it for the rest.
  if (timer_armed_ && uv_timer_get_due_in(timer_) <= timeout_ms) return;
  timer_armed_ = true;
  uv_timer_start(timer_, Http1Callbacks::on_timeout, timeout_ms, 0);
}

// The timer may stay armed past its request (the next request likely reuses it), but an idle
// connection's timer does not keep the loop running.
void Http1Connection::disarm_timeout() { uv_unref(reinterpret_cast<uv_handle_t*>(timer_)); }

void Http1Connection::refuse(ErrorKind kind, std::string message) {
  refused_kind_ = kind;
  refused_message_ = std::move(message);
}

// A new non-blocking socket, asking the kernel to stamp what it receives; false (and the request
// failed) when the system refuses one.
bool Http1Connection::open_socket() {
  const int fd = ::socket(address_.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    finish(ErrorKind::kConnect, "cannot connect: " + error_text(errno), false);
    return false;
  }
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  enable_arrival_times(fd);
  socket_ = new Socket;
  socket_->owner = this;
  socket_->fd = fd;
  socket_->poll.data = socket_;
  uv_poll_init_socket(loop_, &socket_->poll, fd);
  return true;
}

void Http1Connection::start(std::string_view head, std::string_view head_end, std::string_view body) {
  if (!socket_ && !open_socket()) return;
  Socket* s = socket_;
  http_parser_init(&s->parser, HTTP_RESPONSE);
  s->parser.data = s;
  s->message_done = false;
  s->response_started = false;
  s->body_refused = false;
  s->parts[0] = head;
  s->parts[1] = head_end;
  s->parts[2] = body;
  s->written = 0;
  if (s->connected) return Http1Callbacks::flush(s);
  const socklen_t len = address_.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::connect(s->fd, reinterpret_cast<const sockaddr*>(&address_), len) == 0) {
    s->connected = true;
    return Http1Callbacks::flush(s);
  }
  if (errno != EINPROGRESS) return finish(ErrorKind::kConnect, "cannot connect: " + error_text(errno), false);
  Http1Callbacks::watch(s, UV_WRITABLE);
}

void Http1Connection::finish(ErrorKind error, const std::string& message, bool keep_connection) {
  if (!in_flight_) return;
  in_flight_ = false;
  disarm_timeout();
  if (error != ErrorKind::kNone || !keep_connection) drop_socket();
  handler_.on_complete(error, message);  // last: it may send the next request
}

void Http1Connection::abort() {
  in_flight_ = false;
  disarm_timeout();
  drop_socket();
}

void Http1Connection::drop_socket() {
  if (!socket_) return;
  socket_->owner = nullptr;
  uv_poll_stop(&socket_->poll);
  uv_close(reinterpret_cast<uv_handle_t*>(&socket_->poll), Http1Callbacks::on_closed);
  socket_ = nullptr;
}

}  // namespace runara
