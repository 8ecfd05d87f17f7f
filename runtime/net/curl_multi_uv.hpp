// The smallest libcurl-multi-on-libuv glue, for code that owns its loop and thread outright
// (the load generator's workers): sockets become uv_poll_t, curl's timer a uv_timer_t, and every
// finished transfer is handed to `on_done` (removed from the multi first, so the easy handle may
// be re-added from inside the callback).
//
// HttpClient (http_client.hpp) has its own, more defensive glue: its callbacks may destroy it.
// Here the owner destroys the glue only after close() and one more turn of the loop.
#pragma once

#include <curl/curl.h>

#include <functional>
#include <unordered_map>

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_timer_s uv_timer_t;
typedef struct uv_poll_s uv_poll_t;

namespace runara {

class CurlMultiUv {
 public:
  using OnDone = std::function<void(CURL* easy, CURLcode result)>;

  CurlMultiUv(uv_loop_t* loop, OnDone on_done);
  ~CurlMultiUv();  // after close() and uv_run, or the loop's handles dangle
  CurlMultiUv(const CurlMultiUv&) = delete;
  CurlMultiUv& operator=(const CurlMultiUv&) = delete;

  CURLM* multi() const { return multi_; }
  void add(CURL* easy);     // starts the transfer on the next loop turn
  void remove(CURL* easy);  // aborts it; on_done is not called
  void close();             // removes nothing: remove() every easy first; then closes uv handles

  struct Poll;  // one watched socket

 private:
  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  static void on_timeout(uv_timer_t* timer);
  static void on_poll(uv_poll_t* poll, int status, int events);
  void drain();

  uv_loop_t* loop_;
  OnDone on_done_;
  CURLM* multi_ = nullptr;
  uv_timer_t* timer_ = nullptr;
  std::unordered_map<curl_socket_t, Poll*> polls_;
};

}  // namespace runara
