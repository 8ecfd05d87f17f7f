// libcurl multi interface driven by libuv; see http_client.hpp for the contract.
#include "net/http_client.hpp"

#include "net/curl_global.hpp"
#include "base/text.hpp"

#include <curl/curl.h>
#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace runara {

namespace {

// Counts the uv handles a client has opened and not yet seen closed. It outlives the client
// (every handle holds a reference), so handles may finish closing after the client is gone.
struct HandleTracker {
  std::size_t open = 0;
  bool closing = false;
  std::function<void()> on_all_closed;
};

struct TimerCtx {
  uv_timer_t timer{};
  void* impl = nullptr;  // HttpClient::Impl*, null once closing
  std::shared_ptr<HandleTracker> tracker;
};

struct PollCtx {
  uv_poll_t poll{};
  curl_socket_t fd = CURL_SOCKET_BAD;
  void* impl = nullptr;  // HttpClient::Impl*, null once closing
  std::shared_ptr<HandleTracker> tracker;
};

void handle_released(const std::shared_ptr<HandleTracker>& tracker) {
  if (tracker->open > 0) --tracker->open;
  if (tracker->closing && tracker->open == 0 && tracker->on_all_closed) {
    auto cb = std::move(tracker->on_all_closed);
    tracker->on_all_closed = nullptr;
    cb();
  }
}

void on_timer_closed(uv_handle_t* handle) {
  auto* ctx = static_cast<TimerCtx*>(handle->data);
  auto tracker = std::move(ctx->tracker);
  delete ctx;
  handle_released(tracker);
}

void on_poll_closed(uv_handle_t* handle) {
  auto* ctx = static_cast<PollCtx*>(handle->data);
  auto tracker = std::move(ctx->tracker);
  delete ctx;
  handle_released(tracker);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_non_idempotent(const std::string& method) {
  const std::string m = lower(method);
  return !(m == "get" || m == "head" || m == "put" || m == "delete" || m == "options" ||
           m == "trace");
}

}  // namespace

struct Transfer {
  HttpClient::Id id = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  HttpRequest request;
  HttpResponse response;
  std::function<void(HttpResponse)> done;
  char errbuf[CURL_ERROR_SIZE] = {};
  bool in_multi = false;
  bool finished = false;
  CURLcode result = CURLE_OK;
  bool too_big = false;
  std::string refusal;  // why request.allow_connect refused a connection

  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
    if (headers) curl_slist_free_all(headers);
  }
};

struct HttpClient::Impl {
  uv_loop_t* loop = nullptr;
  CURLM* multi = nullptr;
  TimerCtx* timer = nullptr;
  std::shared_ptr<HandleTracker> tracker = std::make_shared<HandleTracker>();
  std::map<curl_socket_t, PollCtx*> polls;  // live poll handles by socket
  std::map<Id, std::unique_ptr<Transfer>> transfers;
  std::deque<Id> ready;  // finished transfers whose callbacks are due
  Id next_id = 1;
  bool closed = false;
  bool dispatching = false;
  bool* alive = nullptr;  // points at a flag on the dispatching stack frame

  // ---- libcurl -> libuv ----

  static int on_curl_socket(CURL*, curl_socket_t s, int what, void* userp,
                            void* socketp) noexcept {
    auto* self = static_cast<Impl*>(userp);
    auto* ctx = static_cast<PollCtx*>(socketp);
    if (what == CURL_POLL_REMOVE) {
      if (ctx) {
        self->close_poll(ctx);
        curl_multi_assign(self->multi, s, nullptr);
      }
      return 0;
    }
    if (!ctx) {
      ctx = new PollCtx;
      ctx->fd = s;
      ctx->impl = self;
      ctx->poll.data = ctx;
      if (uv_poll_init_socket(self->loop, &ctx->poll, s) != 0) {
        delete ctx;
        return -1;
      }
      ctx->tracker = self->tracker;
      ++self->tracker->open;
      self->polls[s] = ctx;
      curl_multi_assign(self->multi, s, ctx);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    uv_poll_start(&ctx->poll, events, &Impl::on_poll);
    return 0;
  }

  static int on_curl_timer(CURLM*, long timeout_ms, void* userp) noexcept {
    auto* self = static_cast<Impl*>(userp);
    self->arm_timer(timeout_ms);
    return 0;
  }

  void arm_timer(long timeout_ms) {
    if (!timer) return;
    if (!ready.empty()) timeout_ms = 0;  // callbacks are due: run them on the next turn
    if (timeout_ms < 0) {
      uv_timer_stop(&timer->timer);
    } else {
      uv_timer_start(&timer->timer, &Impl::on_timeout, static_cast<uint64_t>(timeout_ms), 0);
    }
  }

  // ---- libuv -> libcurl ----

  static void on_timeout(uv_timer_t* handle) noexcept {
    auto* ctx = static_cast<TimerCtx*>(handle->data);
    auto* self = static_cast<Impl*>(ctx->impl);
    if (!self || !self->multi) return;
    int running = 0;
    curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    self->process();  // last: it may destroy *self
  }

  static void on_poll(uv_poll_t* handle, int status, int events) noexcept {
    auto* ctx = static_cast<PollCtx*>(handle->data);
    auto* self = static_cast<Impl*>(ctx->impl);
    if (!self || !self->multi) return;
    int flags = 0;
    if (status < 0) {
      flags = CURL_CSELECT_ERR;
    } else {
      if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
      if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    }
    int running = 0;
    curl_multi_socket_action(self->multi, ctx->fd, flags, &running);
    self->process();  // last: it may destroy *self
  }

  void close_poll(PollCtx* ctx) {
    polls.erase(ctx->fd);
    ctx->impl = nullptr;
    uv_poll_stop(&ctx->poll);
    uv_close(reinterpret_cast<uv_handle_t*>(&ctx->poll), &on_poll_closed);
  }

  // ---- completion ----

  void process() {
    if (multi) {
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* easy = msg->easy_handle;
        const CURLcode result = msg->data.result;  // msg is invalid after remove_handle
        char* priv = nullptr;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
        curl_multi_remove_handle(multi, easy);
        auto* t = reinterpret_cast<Transfer*>(priv);
        if (!t) continue;
        t->in_multi = false;
        t->finished = true;
        t->result = result;
        ready.push_back(t->id);
      }
    }
    dispatch();
  }

  void dispatch() {
    if (dispatching) return;  // an outer frame is already draining `ready`
    dispatching = true;
    bool is_alive = true;
    alive = &is_alive;
    while (!ready.empty()) {
      const Id id = ready.front();
      ready.pop_front();
      auto it = transfers.find(id);
      if (it == transfers.end()) continue;  // cancelled meanwhile
      std::unique_ptr<Transfer> t = std::move(it->second);
      transfers.erase(it);
      HttpResponse response = finish(*t);
      auto done = std::move(t->done);
      t.reset();
      if (done) done(std::move(response));
      if (!is_alive) return;  // the client was destroyed by the callback
    }
    alive = nullptr;
    dispatching = false;
  }

  static HttpResponse finish(Transfer& t) {
    HttpResponse r = std::move(t.response);
    long status = 0, request_size = 0, header_size = 0;
    curl_off_t pretransfer_us = 0;
    if (t.easy) {
      curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
      curl_easy_getinfo(t.easy, CURLINFO_REQUEST_SIZE, &request_size);
      curl_easy_getinfo(t.easy, CURLINFO_HEADER_SIZE, &header_size);
      curl_easy_getinfo(t.easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
    }
    r.status = status;
    // Conservative: any sign that the connection was up and the request handed over counts.
    r.sent = pretransfer_us > 0 || request_size > 0 || header_size > 0 || status > 0 ||
             !r.body.empty();
    if (t.result != CURLE_OK) {
      r.curl_code = static_cast<int>(t.result);
      if (!t.refusal.empty()) {
        r.error = t.refusal;
      } else if (t.too_big) {
        r.error = "response body larger than " + std::to_string(t.request.max_body_bytes) +
                  " bytes";
      } else {
        r.error = curl_easy_strerror(t.result);
        std::string_view detail = trim(t.errbuf);
        if (!detail.empty() && detail != r.error) r.error += ": " + std::string(detail);
      }
    }
    return r;
  }

  // ---- transfer setup ----

  static curl_socket_t on_open_socket(void* data, curlsocktype, curl_sockaddr* address) noexcept {
    auto* t = static_cast<Transfer*>(data);
    if (!t->request.allow_connect(&address->addr, t->refusal)) return CURL_SOCKET_BAD;
    return socket(address->family, address->socktype, address->protocol);
  }

  static size_t on_body(char* data, size_t size, size_t n, void* userp) noexcept {
    auto* t = static_cast<Transfer*>(userp);
    const size_t len = size * n;
    if (t->response.body.size() + len > t->request.max_body_bytes) {
      t->too_big = true;
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
    t->response.body.append(data, len);
    return len;
  }

  static size_t on_header(char* data, size_t size, size_t n, void* userp) noexcept {
    auto* t = static_cast<Transfer*>(userp);
    const size_t len = size * n;
    std::string_view line = trim(std::string_view(data, len));
    if (line.size() >= 5 && line.substr(0, 5) == "HTTP/") {
      t->response.headers.clear();  // a new response (after 1xx, or a followed redirect)
      return len;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return len;
    std::string name = lower(trim(line.substr(0, colon)));
    std::string value(trim(line.substr(colon + 1)));
    auto [it, inserted] = t->response.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;
    return len;
  }

  CURLcode configure(Transfer& t) {
    CURL* e = t.easy;
    const HttpRequest& req = t.request;
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption opt, auto value) {
      if (rc == CURLE_OK) rc = curl_easy_setopt(e, opt, value);
    };
    set(CURLOPT_URL, req.url.c_str());
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_PRIVATE, static_cast<void*>(&t));
    set(CURLOPT_ERRORBUFFER, t.errbuf);
    set(CURLOPT_WRITEFUNCTION, &Impl::on_body);
    set(CURLOPT_WRITEDATA, static_cast<void*>(&t));
    set(CURLOPT_HEADERFUNCTION, &Impl::on_header);
    set(CURLOPT_HEADERDATA, static_cast<void*>(&t));
    set(CURLOPT_ACCEPT_ENCODING, "");
    set(CURLOPT_TCP_KEEPALIVE, 1L);
    if (req.timeout_s > 0) {
      const long ms = std::max(1L, static_cast<long>(std::llround(req.timeout_s * 1000.0)));
      set(CURLOPT_TIMEOUT_MS, ms);
      set(CURLOPT_CONNECTTIMEOUT_MS, std::min(ms, 15000L));
    }
    if (req.allow_connect) {
      set(CURLOPT_PROXY, "");
      set(CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
      set(CURLOPT_OPENSOCKETDATA, static_cast<void*>(&t));
    }
    if (req.max_redirects > 0) {
      set(CURLOPT_FOLLOWLOCATION, 1L);
      set(CURLOPT_MAXREDIRS, req.max_redirects);
    } else {
      set(CURLOPT_FOLLOWLOCATION, 0L);
    }

    bool has_expect = false;
    for (const auto& h : req.headers) {
      if (lower(h.substr(0, 7)) == "expect:") has_expect = true;
      t.headers = curl_slist_append(t.headers, h.c_str());
    }
    if (!has_expect) t.headers = curl_slist_append(t.headers, "Expect:");
    set(CURLOPT_HTTPHEADER, t.headers);

    const std::string m = lower(req.method);
    if (m == "get" && req.body.empty()) {
      set(CURLOPT_HTTPGET, 1L);
    } else if (m == "head") {
      set(CURLOPT_NOBODY, 1L);
    } else {
      if (m != "post") set(CURLOPT_CUSTOMREQUEST, req.method.c_str());
      if (m == "post" || !req.body.empty()) {
        set(CURLOPT_POST, 1L);
        set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
        set(CURLOPT_POSTFIELDS, req.body.data());
      }
    }
    // libcurl re-sends a request whose reused keep-alive connection turns out dead; that is
    // only acceptable for idempotent methods.
    if (is_non_idempotent(req.method)) set(CURLOPT_FRESH_CONNECT, 1L);
    return rc;
  }

  void shutdown(std::function<void()> closed_cb) {
    if (closed) return;
    closed = true;
    tracker->closing = true;
    tracker->on_all_closed = std::move(closed_cb);
    for (auto& [id, t] : transfers) {
      if (t->in_multi) curl_multi_remove_handle(multi, t->easy);
      t->in_multi = false;
    }
    transfers.clear();
    ready.clear();
    if (multi) {
      curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, nullptr);
      curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, nullptr);
    }
    // Stop watching sockets before libcurl closes them.
    while (!polls.empty()) close_poll(polls.begin()->second);
    if (multi) curl_multi_cleanup(multi);
    multi = nullptr;
    if (timer) {
      timer->impl = nullptr;
      uv_timer_stop(&timer->timer);
      uv_close(reinterpret_cast<uv_handle_t*>(&timer->timer), &on_timer_closed);
      timer = nullptr;
    }
  }
};

HttpClient::HttpClient(uv_loop_t* loop) : impl_(std::make_unique<Impl>()) {
  ensure_curl_initialised();
  impl_->loop = loop;
  impl_->multi = curl_multi_init();
  if (!impl_->multi) throw std::runtime_error("curl_multi_init failed");
  impl_->timer = new TimerCtx;
  impl_->timer->impl = impl_.get();
  impl_->timer->timer.data = impl_->timer;
  impl_->timer->tracker = impl_->tracker;
  uv_timer_init(loop, &impl_->timer->timer);
  ++impl_->tracker->open;
  curl_multi_setopt(impl_->multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_curl_socket);
  curl_multi_setopt(impl_->multi, CURLMOPT_SOCKETDATA, impl_.get());
  curl_multi_setopt(impl_->multi, CURLMOPT_TIMERFUNCTION, &Impl::on_curl_timer);
  curl_multi_setopt(impl_->multi, CURLMOPT_TIMERDATA, impl_.get());
}

HttpClient::~HttpClient() {
  impl_->shutdown(nullptr);
  if (impl_->alive) *impl_->alive = false;
}

HttpClient::Id HttpClient::send(HttpRequest request, std::function<void(HttpResponse)> done) {
  Impl& im = *impl_;
  if (im.closed) return 0;
  auto t = std::make_unique<Transfer>();
  t->id = im.next_id++;
  t->request = std::move(request);
  t->done = std::move(done);
  const Id id = t->id;
  Transfer& ref = *t;
  im.transfers.emplace(id, std::move(t));

  CURLcode rc = CURLE_FAILED_INIT;
  ref.easy = curl_easy_init();
  if (ref.easy) rc = im.configure(ref);
  if (rc == CURLE_OK) {
    if (curl_multi_add_handle(im.multi, ref.easy) == CURLM_OK) {
      ref.in_multi = true;
      return id;
    }
    rc = CURLE_FAILED_INIT;
  }
  // Setup failed: report it from the loop like any other failure.
  ref.finished = true;
  ref.result = rc;
  im.ready.push_back(id);
  im.arm_timer(0);
  return id;
}

void HttpClient::cancel(Id id) {
  Impl& im = *impl_;
  auto it = im.transfers.find(id);
  if (it == im.transfers.end()) return;
  std::unique_ptr<Transfer> t = std::move(it->second);
  im.transfers.erase(it);
  if (t->in_multi && im.multi) curl_multi_remove_handle(im.multi, t->easy);
  t->in_multi = false;
}

std::size_t HttpClient::in_flight() const { return impl_->transfers.size(); }

uv_loop_t* HttpClient::loop() const { return impl_->loop; }

void HttpClient::close(std::function<void()> closed) { impl_->shutdown(std::move(closed)); }

}  // namespace runara
