#include "net/curl_multi_uv.hpp"

#include "net/curl_global.hpp"

#include <uv.h>

namespace runara {

struct CurlMultiUv::Poll {
  uv_poll_t handle{};
  curl_socket_t fd = CURL_SOCKET_BAD;
  CurlMultiUv* self = nullptr;
};

namespace {

void free_handle(uv_handle_t* handle) {
  if (handle->type == UV_POLL) delete static_cast<CurlMultiUv::Poll*>(handle->data);
  else delete reinterpret_cast<uv_timer_t*>(handle);
}

}  // namespace

CurlMultiUv::CurlMultiUv(uv_loop_t* loop, OnDone on_done) : loop_(loop), on_done_(std::move(on_done)) {
  ensure_curl_initialised();  // before any easy handle on this worker thread
  multi_ = curl_multi_init();
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMultiUv::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMultiUv::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

CurlMultiUv::~CurlMultiUv() {
  close();
}

void CurlMultiUv::add(CURL* easy) {
  curl_multi_add_handle(multi_, easy);
}

void CurlMultiUv::remove(CURL* easy) {
  curl_multi_remove_handle(multi_, easy);
}

void CurlMultiUv::close() {
  if (!multi_) return;
  curl_multi_cleanup(multi_);  // may still report sockets to on_socket: keep the map until after
  multi_ = nullptr;
  for (auto& [fd, poll] : polls_) {
    uv_poll_stop(&poll->handle);
    uv_close(reinterpret_cast<uv_handle_t*>(&poll->handle), free_handle);
  }
  polls_.clear();
  uv_timer_stop(timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), free_handle);
  timer_ = nullptr;
}

int CurlMultiUv::on_socket(CURL*, curl_socket_t fd, int what, void* self_ptr, void*) {
  auto* self = static_cast<CurlMultiUv*>(self_ptr);
  auto it = self->polls_.find(fd);
  if (what == CURL_POLL_REMOVE) {
    if (it != self->polls_.end()) {
      uv_poll_stop(&it->second->handle);
      uv_close(reinterpret_cast<uv_handle_t*>(&it->second->handle), free_handle);
      self->polls_.erase(it);
    }
    return 0;
  }
  if (it == self->polls_.end()) {
    auto* poll = new Poll;
    if (uv_poll_init_socket(self->loop_, &poll->handle, fd) != 0) {
      delete poll;
      return -1;
    }
    poll->handle.data = poll;
    poll->fd = fd;
    poll->self = self;
    it = self->polls_.emplace(fd, poll).first;
  }
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  uv_poll_start(&it->second->handle, events, &CurlMultiUv::on_poll);
  return 0;
}

int CurlMultiUv::on_timer(CURLM*, long timeout_ms, void* self_ptr) {
  auto* self = static_cast<CurlMultiUv*>(self_ptr);
  if (!self->timer_) return 0;
  if (timeout_ms < 0) uv_timer_stop(self->timer_);
  else uv_timer_start(self->timer_, &CurlMultiUv::on_timeout, static_cast<uint64_t>(timeout_ms), 0);
  return 0;
}

void CurlMultiUv::on_timeout(uv_timer_t* timer) {
  auto* self = static_cast<CurlMultiUv*>(timer->data);
  int running = 0;
  curl_multi_socket_action(self->multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  self->drain();
}

void CurlMultiUv::on_poll(uv_poll_t* handle, int status, int events) {
  auto* poll = static_cast<Poll*>(handle->data);
  CurlMultiUv* self = poll->self;
  int flags = 0;
  if (status < 0) flags = CURL_CSELECT_ERR;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  int running = 0;
  curl_multi_socket_action(self->multi_, poll->fd, flags, &running);
  self->drain();
}

void CurlMultiUv::drain() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;  // msg dies with remove_handle
    curl_multi_remove_handle(multi_, easy);
    on_done_(easy, result);
  }
}

}  // namespace runara
