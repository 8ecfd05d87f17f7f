// The fake DigitalOcean API's HTTP front: an accept thread, a thread per connection, http-parser.
#include "sim/loopback_http_server.hpp"

#include <arpa/inet.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace runara::sim {

namespace {

constexpr std::size_t kMaxHeaderBytes = 64u << 10;
constexpr std::size_t kMaxBodyBytes = 8u << 20;
constexpr int kRequestTimeoutMs = 10000;  // from a request's first byte to its last
constexpr int kIdleTimeoutMs = 2000;      // a kept-alive connection with no request begun
constexpr std::size_t kMaxConnections = 256;

using Clock = std::chrono::steady_clock;

const char* reason_of(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Status";
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Everything sent on a blocking socket with a send timeout; false when the peer is gone.
bool send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

bool has_body(int status) { return status >= 200 && status != 204 && status != 304; }

std::string serialise(const HttpResponse& res, bool head, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + reason_of(res.status) + "\r\n";
  for (const auto& [name, value] : res.headers) out += name + ": " + value + "\r\n";
  if (has_body(res.status)) out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head && has_body(res.status)) out += res.body;
  return out;
}

// One connection's parse state, fed by http-parser's callbacks.
struct Exchange {
  int fd = -1;
  int peer_port = 0;
  HttpRequest current;
  std::string field, value;  // the header being read
  bool in_value = false;
  std::size_t header_bytes = 0;
  int refuse_status = 0;  // 413 or 431: answered, then the connection closes
  std::vector<std::pair<HttpRequest, bool>> complete;  // with "keep alive after it"

  void end_header() {
    if (field.empty()) return;
    std::string& slot = current.headers[lower(field)];
    slot = slot.empty() ? value : slot + ", " + value;
    field.clear();
    value.clear();
  }
  bool count(std::size_t n) {
    header_bytes += n;
    if (header_bytes <= kMaxHeaderBytes) return true;
    refuse_status = 431;
    return false;
  }
};

Exchange& exchange_of(http_parser* p) { return *static_cast<Exchange*>(p->data); }

void split_target(HttpRequest& req) {
  const std::size_t q = req.target.find('?');
  req.path = url_decode(req.target.substr(0, q), false);
  if (q == std::string::npos) return;
  const std::string query = req.target.substr(q + 1);
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      req.params.emplace(url_decode(pair.substr(0, eq), true),
                         eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1), true));
    }
    start = end + 1;
  }
}

const http_parser_settings& parser_settings() {
  static const http_parser_settings settings = [] {
    http_parser_settings s{};
    s.on_url = [](http_parser* p, const char* at, std::size_t n) {
      Exchange& x = exchange_of(p);
      x.current.target.append(at, n);
      return x.count(n) ? 0 : 1;
    };
    s.on_header_field = [](http_parser* p, const char* at, std::size_t n) {
      Exchange& x = exchange_of(p);
      if (x.in_value) x.end_header();
      x.in_value = false;
      x.field.append(at, n);
      return x.count(n) ? 0 : 1;
    };
    s.on_header_value = [](http_parser* p, const char* at, std::size_t n) {
      Exchange& x = exchange_of(p);
      x.in_value = true;
      x.value.append(at, n);
      return x.count(n) ? 0 : 1;
    };
    s.on_headers_complete = [](http_parser* p) {
      Exchange& x = exchange_of(p);
      x.end_header();
      x.in_value = false;
      x.current.method = http_method_str(static_cast<http_method>(p->method));
      if ((p->flags & F_CONTENTLENGTH) && p->content_length > kMaxBodyBytes) {
        x.refuse_status = 413;
        return -1;  // an error for http-parser: nothing more of this connection is read
      }
      // curl asks before sending a large body; the answer is yes (its size was checked above).
      if (lower(x.current.header("expect")) == "100-continue") send_all(x.fd, "HTTP/1.1 100 Continue\r\n\r\n");
      return 0;
    };
    s.on_body = [](http_parser* p, const char* at, std::size_t n) {
      Exchange& x = exchange_of(p);
      if (x.current.body.size() + n > kMaxBodyBytes) {
        x.refuse_status = 413;
        return 1;
      }
      x.current.body.append(at, n);
      return 0;
    };
    s.on_message_complete = [](http_parser* p) {
      Exchange& x = exchange_of(p);
      split_target(x.current);
      x.current.peer_port = x.peer_port;
      x.complete.emplace_back(std::move(x.current), http_should_keep_alive(p) != 0);
      x.current = HttpRequest{};
      x.header_bytes = 0;
      return 0;
    };
    return s;
  }();
  return settings;
}

// Waits until `fd` is readable or the time is up; false on a timeout or error.
bool wait_readable(int fd, int timeout_ms) {
  pollfd pfd{fd, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&pfd, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

int peer_port_of(int fd) {
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return 0;
  return ntohs(peer.sin_port);
}

}  // namespace

std::string HttpRequest::header(const std::string& lower_case_name) const {
  const auto it = headers.find(lower_case_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string url_decode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && c == '+' ? ' ' : c;
    }
  }
  return out;
}

struct LoopbackHttpServer::Impl {
  struct Connection {
    int fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  Handler handler;
  int listen_fd = -1;
  std::thread acceptor;
  std::atomic<bool> stopping{false};
  std::mutex mu;  // connections
  std::list<std::unique_ptr<Connection>> connections;

  void accept_loop();
  void serve(Connection& c);
  bool answer(Exchange& x, const HttpRequest& req, bool keep_alive);
  void reap(bool all);  // mu held
};

// Joins connections whose thread has ended and closes their descriptors (a thread never closes
// its own: stop() may still shut it down, and a closed number could by then name another file).
void LoopbackHttpServer::Impl::reap(bool all) {
  for (auto it = connections.begin(); it != connections.end();) {
    Connection& c = **it;
    if (!all && !c.done) {
      ++it;
      continue;
    }
    if (c.thread.joinable()) c.thread.join();
    ::close(c.fd);
    it = connections.erase(it);
  }
}

void LoopbackHttpServer::Impl::accept_loop() {
  while (!stopping) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (stopping) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      return;  // the listener was shut down
    }
    timeval send_timeout{kRequestTimeoutMs / 1000, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
    std::lock_guard<std::mutex> lock(mu);
    reap(false);
    if (connections.size() >= kMaxConnections || stopping) {
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    Connection* raw = c.get();
    try {
      c->thread = std::thread([this, raw] { serve(*raw); });
    } catch (const std::system_error&) {
      ::close(fd);
      continue;
    }
    connections.push_back(std::move(c));
  }
}

bool LoopbackHttpServer::Impl::answer(Exchange& x, const HttpRequest& req, bool keep_alive) {
  HttpResponse res;
  try {
    res = handler(req);
  } catch (const std::exception&) {
    res = HttpResponse{500, {{"Content-Type", "text/plain"}}, "internal error\n"};
  }
  if (res.drop || stopping) return false;
  return send_all(x.fd, serialise(res, req.method == "HEAD", keep_alive)) && keep_alive;
}

void LoopbackHttpServer::Impl::serve(Connection& c) {
  Exchange x;
  x.fd = c.fd;
  x.peer_port = peer_port_of(c.fd);
  http_parser parser;
  http_parser_init(&parser, HTTP_REQUEST);
  parser.data = &x;
  char buf[16384];
  bool begun = false;  // a request's first bytes have come
  Clock::time_point deadline{};
  bool open = true;
  while (open && !stopping) {
    const int wait_ms = begun ? static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     deadline - Clock::now()).count())
                              : kIdleTimeoutMs;
    if (wait_ms <= 0 || !wait_readable(c.fd, wait_ms)) break;
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!begun) deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
    begun = true;
    http_parser_execute(&parser, &parser_settings(), buf, static_cast<std::size_t>(n));
    if (!x.complete.empty()) {
      for (auto& [req, keep_alive] : x.complete) open = open && answer(x, req, keep_alive);
      x.complete.clear();
      begun = parser.nread > 0 || !x.current.target.empty();  // part of the next request is here
      deadline = Clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
    }
    if (HTTP_PARSER_ERRNO(&parser) != HPE_OK) {
      if (open) {
        const int status = x.refuse_status ? x.refuse_status : 400;
        send_all(c.fd, serialise(HttpResponse{status, {{"Content-Type", "text/plain"}}, reason_of(status)}, false, false));
      }
      open = false;
    }
  }
  ::shutdown(c.fd, SHUT_RDWR);
  c.done = true;
}

LoopbackHttpServer::LoopbackHttpServer(Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
}

LoopbackHttpServer::~LoopbackHttpServer() { stop(); }

int LoopbackHttpServer::start(int port) {
  if (impl_->listen_fd >= 0) throw std::runtime_error("LoopbackHttpServer: already started");
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("LoopbackHttpServer: socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 512) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot bind 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  impl_->listen_fd = fd;
  impl_->stopping = false;
  impl_->acceptor = std::thread([this] { impl_->accept_loop(); });
  return ntohs(addr.sin_port);
}

void LoopbackHttpServer::stop() {
  if (impl_->listen_fd < 0) return;
  impl_->stopping = true;
  ::shutdown(impl_->listen_fd, SHUT_RDWR);  // wakes accept()
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  ::close(impl_->listen_fd);
  impl_->listen_fd = -1;
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& c : impl_->connections) ::shutdown(c->fd, SHUT_RDWR);  // wakes poll() and recv()
  impl_->reap(true);
}

}  // namespace runara::sim
