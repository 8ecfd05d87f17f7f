// The load's libcurl transport: https:// and HTTP/2 (and plain http:// with http2), one easy
// handle per slot on the worker's CurlMultiUv pump, sharing TLS sessions and DNS.
#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>

#include "load/shared.hpp"
#include "load/transport.hpp"
#include "curl/multi_uv.hpp"

namespace runara {

namespace {

ErrorKind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return ErrorKind::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return ErrorKind::kConnect;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return ErrorKind::kReset;
    default: return ErrorKind::kOther;
  }
}

class CurlTransport;

class CurlSlot final : public SlotConnection {
 public:
  CurlSlot(CurlTransport& transport, SlotEvents& events);
  ~CurlSlot() override { curl_easy_cleanup(easy_); }
  void send(const std::string& body, bool has_body) override;
  void abort() override;
  void done(CURLcode code);

 private:
  void configure();
  void report_status();
  static curl_socket_t on_open_socket(void* data, curlsocktype, curl_sockaddr* address);
  static size_t on_write(char* data, size_t size, size_t n, void* user);

  CurlTransport& transport_;
  SlotEvents& events_;
  CURL* easy_;
  char errbuf_[CURL_ERROR_SIZE] = {};
  std::string refusal_;  // why the target policy refused the connection
  bool status_reported_ = false, in_flight_ = false;
};

class CurlTransport final : public LoadTransport {
 public:
  CurlTransport(uv_loop_t* loop, LoadShared& shared) : shared(shared), spec(shared.spec) {
    curl = std::make_unique<CurlMultiUv>(loop, [](CURL* easy, CURLcode code) {
      CurlSlot* slot = nullptr;
      curl_easy_getinfo(easy, CURLINFO_PRIVATE, reinterpret_cast<char**>(&slot));
      if (slot) slot->done(code);
    });
    if (spec.http2) curl_multi_setopt(curl->multi(), CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    for (const auto& h : spec.header_lines()) headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:");
  }

  ~CurlTransport() override {
    curl.reset();
    curl_share_cleanup(share);
    curl_slist_free_all(headers);
  }

  std::unique_ptr<SlotConnection> open(SlotEvents& events) override {
    return std::make_unique<CurlSlot>(*this, events);
  }
  // A libcurl handle with its receive buffer.
  std::size_t slot_bytes() const override {
    return 64 * 1024 + static_cast<std::size_t>(spec.buffer_bytes > 0 ? spec.buffer_bytes : 16 * 1024);
  }
  void close() override { curl->close(); }

  LoadShared& shared;
  const LoadSpec& spec;
  std::unique_ptr<CurlMultiUv> curl;
  CURLSH* share = nullptr;
  curl_slist* headers = nullptr;
};

CurlSlot::CurlSlot(CurlTransport& transport, SlotEvents& events)
    : transport_(transport), events_(events), easy_(curl_easy_init()) {
  if (!easy_) throw std::bad_alloc();
}

void CurlSlot::send(const std::string& body, bool has_body) {
  refusal_.clear();
  errbuf_[0] = 0;
  status_reported_ = false;
  configure();
  if (has_body) {
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  in_flight_ = true;
  transport_.curl->add(easy_);
}

void CurlSlot::abort() {
  if (!in_flight_) return;
  in_flight_ = false;
  transport_.curl->remove(easy_);
}

// Sets every option from a reset handle, before each request: libcurl 7.88 counts "connection
// died, retrying" over a reused handle's whole life, so a slot would fail its 6th such retry ever.
void CurlSlot::configure() {
  const LoadSpec& spec = transport_.spec;
  CURL* e = easy_;
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, spec.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, this);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlSlot::on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf_);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  // No proxy from http_proxy and the like: the policy judges the server, so that is where
  // the connection must go.
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(spec.timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(spec.timeout_s, 30.0) * 1000));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, transport_.headers);
  curl_easy_setopt(e, CURLOPT_SHARE, transport_.share);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &CurlSlot::on_open_socket);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, this);
  if (spec.buffer_bytes > 0) curl_easy_setopt(e, CURLOPT_BUFFERSIZE, spec.buffer_bytes);
  if (!spec.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, spec.ca_file.c_str());
  if (spec.http2) {
    const bool tls = spec.url.rfind("https:", 0) == 0;
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, tls ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  } else {
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  }
  if (spec.method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (spec.method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (spec.method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
  } else {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, spec.method.c_str());
  }
}

void CurlSlot::report_status() {
  if (status_reported_) return;
  status_reported_ = true;
  long status = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  events_.on_status(static_cast<int>(status));
}

curl_socket_t CurlSlot::on_open_socket(void* data, curlsocktype, curl_sockaddr* address) {
  auto* slot = static_cast<CurlSlot*>(data);
  const LoadSpec& spec = slot->transport_.spec;
  // The port judged is the one in the address libcurl is about to connect to, not the URL's.
  if (spec.policy && !spec.policy->allows(&address->addr, spec.url_host, slot->refusal_)) return CURL_SOCKET_BAD;
  return socket(address->family, address->socktype, address->protocol);
}

// Body bytes, timed when libcurl hands them over.
size_t CurlSlot::on_write(char* data, size_t size, size_t n, void* user) {
  auto* slot = static_cast<CurlSlot*>(user);
  slot->report_status();
  if (!slot->events_.on_body(data, size * n, slot->transport_.shared.now())) return 0;  // CURLE_WRITE_ERROR
  return size * n;
}

void CurlSlot::done(CURLcode code) {
  if (!in_flight_) return;
  in_flight_ = false;
  report_status();
  if (!refusal_.empty()) return events_.on_complete(ErrorKind::kRefused, refusal_);
  if (code == CURLE_OK) return events_.on_complete(ErrorKind::kNone, {});
  std::string text = curl_easy_strerror(code);
  if (errbuf_[0] && text != errbuf_) text += ": " + std::string(errbuf_);
  events_.on_complete(kind_of(code), text);
}

}  // namespace

std::unique_ptr<LoadTransport> make_curl_transport(uv_loop_t* loop, LoadShared& shared) {
  return std::make_unique<CurlTransport>(loop, shared);
}

}  // namespace runara
