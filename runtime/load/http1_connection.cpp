#include "load/http1_connection.hpp"

#include <http_parser.h>
#include <uv.h>

namespace runara {

// The uv side of one TCP connection. It outlives its owner when the owner drops it (the close
// is asynchronous): callbacks that find no owner do nothing.
struct Http1Connection::Socket {
  uv_tcp_t tcp{};
  uv_connect_t connect{};
  uv_write_t write{};
  http_parser parser{};
  Http1Connection* owner = nullptr;
  bool connected = false;
  bool message_done = false;
  bool keep_alive = true;
  bool response_started = false;
  const std::string* head = nullptr;  // the request waiting for the connection
  const std::string* body = nullptr;
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
    if (s->owner) s->owner->handler_.on_body(at, len);
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

  static void on_closed(uv_handle_t* h) { delete static_cast<Socket*>(h->data); }

  static void on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
    Socket* s = static_cast<Socket*>(h->data);
    if (!s->owner) {
      *buf = uv_buf_init(nullptr, 0);  // ends the read with UV_ENOBUFS; the socket is closing
      return;
    }
    *buf = uv_buf_init(s->owner->read_buffer_, static_cast<unsigned>(s->owner->read_buffer_size_));
  }

  static void on_read(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
    Socket* s = static_cast<Socket*>(stream->data);
    Http1Connection* c = s->owner;
    if (!c || n == 0) return;
    if (n < 0 && !c->in_flight_) return c->drop_socket();  // an idle keep-alive connection closed
    if (n < 0) {
      // A response without a length ends with the connection: tell the parser.
      if (n == UV_EOF && s->response_started) http_parser_execute(&s->parser, &settings(), nullptr, 0);
      if (s->message_done) return c->finish(ErrorKind::kNone, {}, false);
      const std::string why = n == UV_EOF ? "the server closed the connection before the response ended"
                                          : std::string("connection error: ") + uv_strerror(static_cast<int>(n));
      return c->finish(ErrorKind::kReset, why, false);
    }
    const size_t parsed = http_parser_execute(&s->parser, &settings(), buf->base, static_cast<size_t>(n));
    if (s->parser.http_errno != HPE_OK && !s->message_done) {
      return c->finish(ErrorKind::kOther,
                       std::string("invalid HTTP response: ") + http_errno_description(HTTP_PARSER_ERRNO(&s->parser)),
                       false);
    }
    if (s->message_done) {
      const bool keep = s->keep_alive && parsed == static_cast<size_t>(n);
      c->finish(ErrorKind::kNone, {}, keep);
    }
  }

  static void on_write(uv_write_t* w, int status) {
    Socket* s = static_cast<Socket*>(w->data);
    if (status < 0 && s->owner) s->owner->finish(ErrorKind::kReset, std::string("send failed: ") + uv_strerror(status), false);
  }

  static void write(Socket* s) {
    uv_buf_t bufs[2] = {uv_buf_init(const_cast<char*>(s->head->data()), static_cast<unsigned>(s->head->size())),
                        uv_buf_init(const_cast<char*>(s->body->data()), static_cast<unsigned>(s->body->size()))};
    s->write.data = s;
    const int r = uv_write(&s->write, reinterpret_cast<uv_stream_t*>(&s->tcp), bufs, s->body->empty() ? 1 : 2, on_write);
    if (r < 0 && s->owner) s->owner->finish(ErrorKind::kReset, std::string("send failed: ") + uv_strerror(r), false);
  }

  static void on_connect(uv_connect_t* req, int status) {
    Socket* s = static_cast<Socket*>(req->data);
    Http1Connection* c = s->owner;
    if (!c) return;
    if (status < 0) return c->finish(ErrorKind::kConnect, std::string("cannot connect: ") + uv_strerror(status), false);
    s->connected = true;
    uv_tcp_nodelay(&s->tcp, 1);
    uv_read_start(reinterpret_cast<uv_stream_t*>(&s->tcp), on_alloc, on_read);
    write(s);
  }

  static void on_timeout(uv_timer_t* t) {
    auto* c = static_cast<Http1Connection*>(t->data);
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

void Http1Connection::send(const std::string& head, const std::string& body, std::uint64_t timeout_ms) {
  in_flight_ = true;
  if (refused_kind_ != ErrorKind::kNone) {  // fail on the next loop turn, not inside the caller
    uv_timer_start(timer_, Http1Callbacks::on_timeout, 0, 0);
    return;
  }
  uv_timer_start(timer_, Http1Callbacks::on_timeout, timeout_ms, 0);
  start(head, body);
}

void Http1Connection::refuse(ErrorKind kind, std::string message) {
  refused_kind_ = kind;
  refused_message_ = std::move(message);
}

void Http1Connection::start(const std::string& head, const std::string& body) {
  if (!socket_) {
    socket_ = new Socket;
    socket_->owner = this;
    socket_->tcp.data = socket_;
    socket_->connect.data = socket_;
    uv_tcp_init(loop_, &socket_->tcp);
  }
  Socket* s = socket_;
  http_parser_init(&s->parser, HTTP_RESPONSE);
  s->parser.data = s;
  s->message_done = false;
  s->response_started = false;
  s->head = &head;
  s->body = &body;
  if (s->connected) return Http1Callbacks::write(s);
  const int r = uv_tcp_connect(&s->connect, &s->tcp, reinterpret_cast<const sockaddr*>(&address_), Http1Callbacks::on_connect);
  if (r < 0) finish(ErrorKind::kConnect, std::string("cannot connect: ") + uv_strerror(r), false);
}

void Http1Connection::finish(ErrorKind error, const std::string& message, bool keep_connection) {
  if (!in_flight_) return;
  in_flight_ = false;
  uv_timer_stop(timer_);
  if (error != ErrorKind::kNone || !keep_connection) drop_socket();
  handler_.on_complete(error, message);  // last: it may send the next request
}

void Http1Connection::abort() {
  in_flight_ = false;
  uv_timer_stop(timer_);
  drop_socket();
}

void Http1Connection::drop_socket() {
  if (!socket_) return;
  socket_->owner = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&socket_->tcp), Http1Callbacks::on_closed);
  socket_ = nullptr;
}

}  // namespace runara
