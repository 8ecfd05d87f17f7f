// The one libcurl-multi-on-libuv pump (curl's docs/examples/multi-uv.c, made safe to shut down):
// curl's sockets become uv_poll_t handles, its timer a uv_timer_t, and each finished transfer is
// handed to `on_done` (already removed from the multi, so the easy handle may be re-added from
// inside the callback). HttpClient (transfers, responses) and the load generator's workers (their
// own easy handles) are both built on it.
//
// Contract. Threading: the thread running `loop`, only. Callbacks: `on_done` runs while the pump
// drains curl's messages and must not destroy the pump; `after_events` (optional) runs last, once
// per socket or timer event and after wake(), and may destroy it. Shutdown, one order for every
// user: close() (or the destructor) stops curl's callbacks, stops and closes every poll handle
// before curl closes the sockets, cleans up the multi (remove() every easy handle first), then
// closes the timer; `closed` runs once every handle is released. Handles may finish closing after
// the pump is gone: the loop must run once more before uv_loop_close(). libcurl's global init is
// done here (curl/global.hpp), before any easy handle of the thread.
#pragma once

#include <curl/curl.h>

#include <functional>
#include <map>
#include <memory>

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_timer_s uv_timer_t;

namespace runara {

class CurlMultiUv {
 public:
  using OnDone = std::function<void(CURL* easy, CURLcode result)>;

  CurlMultiUv(uv_loop_t* loop, OnDone on_done, std::function<void()> after_events = {});
  ~CurlMultiUv();  // close() without a callback
  CurlMultiUv(const CurlMultiUv&) = delete;
  CurlMultiUv& operator=(const CurlMultiUv&) = delete;

  CURLM* multi() const { return multi_; }  // for curl_multi_setopt; null once closed
  bool add(CURL* easy);                    // starts the transfer on a coming loop turn; false: refused or closed
  void remove(CURL* easy);                 // aborts it; on_done is not called
  void wake();                             // after_events runs on the next loop turn
  void close(std::function<void()> closed = {});

  struct Handles;  // the uv handles and their tracking, shared with their close callbacks

 private:
  static int on_socket(CURL* easy, curl_socket_t fd, int what, void* self, void* socketp);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  static void on_timeout(uv_timer_t* timer);
  void act(curl_socket_t fd, int flags);  // socket_action, drain, then after_events (last)
  void drain();

  uv_loop_t* loop_;
  OnDone on_done_;
  std::function<void()> after_events_;
  CURLM* multi_ = nullptr;
  std::shared_ptr<Handles> handles_;
  bool woken_ = false;  // wake() pending: curl's timer may not push it later
};

}  // namespace runara
