// HTTP transfers on the libcurl pump; see http_client.hpp for the contract.
#include "curl/http_client.hpp"

#include "curl/multi_uv.hpp"
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
  std::unique_ptr<CurlMultiUv> pump;
  std::map<Id, std::unique_ptr<Transfer>> transfers;
  std::deque<Id> ready;  // finished transfers whose callbacks are due
  Id next_id = 1;
  bool closed = false;
  bool dispatching = false;
  bool* alive = nullptr;  // points at a flag on the dispatching stack frame

  // ---- completion ----

  // The pump removed the easy handle from the multi; the callback runs in dispatch().
  void finished(CURL* easy, CURLcode result) {
    char* priv = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
    auto* t = reinterpret_cast<Transfer*>(priv);
    if (!t) return;
    t->in_multi = false;
    t->finished = true;
    t->result = result;
    ready.push_back(t->id);
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
    if (!req.ca_file.empty()) set(CURLOPT_CAINFO, req.ca_file.c_str());
    if (req.allow_connect) {
      set(CURLOPT_PROXY, "");
      set(CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
      set(CURLOPT_OPENSOCKETDATA, static_cast<void*>(&t));
      // Judged connections are never shared: a kept-alive one would carry a later request past
      // the check (to a droplet destroyed since, through a tunnel closed since).
      set(CURLOPT_FRESH_CONNECT, 1L);
      set(CURLOPT_FORBID_REUSE, 1L);
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
    for (auto& [id, t] : transfers) {
      if (t->in_multi) pump->remove(t->easy);
      t->in_multi = false;
    }
    transfers.clear();
    ready.clear();
    pump->close(std::move(closed_cb));
  }
};

HttpClient::HttpClient(uv_loop_t* loop) : impl_(std::make_unique<Impl>()) {
  impl_->loop = loop;
  Impl* im = impl_.get();
  impl_->pump = std::make_unique<CurlMultiUv>(
      loop, [im](CURL* easy, CURLcode result) { im->finished(easy, result); },
      [im] { im->dispatch(); });  // last in each event: a callback may destroy the client
  if (!impl_->pump->multi()) throw std::runtime_error("curl_multi_init failed");
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
    if (im.pump->add(ref.easy)) {
      ref.in_multi = true;
      return id;
    }
    rc = CURLE_FAILED_INIT;
  }
  // Setup failed: report it from the loop like any other failure.
  ref.finished = true;
  ref.result = rc;
  im.ready.push_back(id);
  im.pump->wake();
  return id;
}

void HttpClient::cancel(Id id) {
  Impl& im = *impl_;
  auto it = im.transfers.find(id);
  if (it == im.transfers.end()) return;
  std::unique_ptr<Transfer> t = std::move(it->second);
  im.transfers.erase(it);
  if (t->in_multi) im.pump->remove(t->easy);
  t->in_multi = false;
}

std::size_t HttpClient::in_flight() const { return impl_->transfers.size(); }

uv_loop_t* HttpClient::loop() const { return impl_->loop; }

void HttpClient::close(std::function<void()> closed) { impl_->shutdown(std::move(closed)); }

}  // namespace runara
