#include "curl/multi_uv.hpp"

#include <uv.h>

#include "curl/global.hpp"

namespace runara {

// Each uv handle keeps this alive until its close callback ran, so handles may finish closing
// after the pump is gone; `owner` is null from close() on, so a late event does nothing.
struct CurlMultiUv::Handles {
  struct Poll {
    uv_poll_t handle{};
    curl_socket_t fd = CURL_SOCKET_BAD;
    std::shared_ptr<Handles> keep;
  };
  struct Timer {
    uv_timer_t handle{};
    std::shared_ptr<Handles> keep;
  };

  CurlMultiUv* owner = nullptr;
  Timer* timer = nullptr;
  std::map<curl_socket_t, Poll*> polls;
  std::size_t open = 0;  // handles not yet seen closed
  bool closing = false;
  std::function<void()> closed;

  static void released(std::shared_ptr<Handles> self) {
    if (self->open > 0) --self->open;
    if (self->closing && self->open == 0 && self->closed) {
      auto closed = std::move(self->closed);
      self->closed = nullptr;
      closed();
    }
  }

  void close_poll(Poll* poll) {
    polls.erase(poll->fd);
    uv_poll_stop(&poll->handle);
    uv_close(reinterpret_cast<uv_handle_t*>(&poll->handle), [](uv_handle_t* h) {
      auto* p = static_cast<Poll*>(h->data);
      auto keep = std::move(p->keep);
      delete p;
      released(std::move(keep));
    });
  }
};

CurlMultiUv::CurlMultiUv(uv_loop_t* loop, OnDone on_done, std::function<void()> after_events)
    : loop_(loop), on_done_(std::move(on_done)), after_events_(std::move(after_events)),
      handles_(std::make_shared<Handles>()) {
  ensure_curl_initialised();  // before any easy handle of this thread
  multi_ = curl_multi_init();
  handles_->owner = this;
  handles_->timer = new Handles::Timer;
  handles_->timer->keep = handles_;
  handles_->timer->handle.data = handles_->timer;
  uv_timer_init(loop_, &handles_->timer->handle);
  ++handles_->open;
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMultiUv::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMultiUv::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

CurlMultiUv::~CurlMultiUv() { close(); }

bool CurlMultiUv::add(CURL* easy) { return multi_ && curl_multi_add_handle(multi_, easy) == CURLM_OK; }

void CurlMultiUv::remove(CURL* easy) {
  if (multi_) curl_multi_remove_handle(multi_, easy);
}

void CurlMultiUv::wake() {
  if (!multi_) return;
  woken_ = true;
  uv_timer_start(&handles_->timer->handle, &CurlMultiUv::on_timeout, 0, 0);
}

void CurlMultiUv::close(std::function<void()> closed) {
  if (!multi_) return;
  Handles& h = *handles_;
  h.owner = nullptr;
  h.closing = true;
  h.closed = std::move(closed);
  // Nothing of curl's may call back into a pump that is going away.
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, nullptr);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, nullptr);
  // Stop watching the sockets before curl closes them (a closed fd must not stay in epoll).
  while (!h.polls.empty()) h.close_poll(h.polls.begin()->second);
  curl_multi_cleanup(multi_);
  multi_ = nullptr;
  uv_timer_stop(&h.timer->handle);
  uv_close(reinterpret_cast<uv_handle_t*>(&h.timer->handle), [](uv_handle_t* handle) {
    auto* t = static_cast<Handles::Timer*>(handle->data);
    auto keep = std::move(t->keep);
    delete t;
    Handles::released(std::move(keep));
  });
  h.timer = nullptr;
}

int CurlMultiUv::on_socket(CURL*, curl_socket_t fd, int what, void* self_ptr, void*) {
  auto* self = static_cast<CurlMultiUv*>(self_ptr);
  Handles& h = *self->handles_;
  auto it = h.polls.find(fd);
  if (what == CURL_POLL_REMOVE) {
    if (it != h.polls.end()) h.close_poll(it->second);
    return 0;
  }
  if (it == h.polls.end()) {
    auto* poll = new Handles::Poll;
    if (uv_poll_init_socket(self->loop_, &poll->handle, fd) != 0) {
      delete poll;
      return -1;
    }
    poll->handle.data = poll;
    poll->fd = fd;
    poll->keep = self->handles_;
    ++h.open;
    it = h.polls.emplace(fd, poll).first;
  }
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  uv_poll_start(&it->second->handle, events, [](uv_poll_t* handle, int status, int ready) {
    auto* poll = static_cast<Handles::Poll*>(handle->data);
    CurlMultiUv* pump = poll->keep->owner;
    if (!pump) return;
    int flags = 0;
    if (status < 0) {
      flags = CURL_CSELECT_ERR;
    } else {
      if (ready & UV_READABLE) flags |= CURL_CSELECT_IN;
      if (ready & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    }
    pump->act(poll->fd, flags);
  });
  return 0;
}

int CurlMultiUv::on_timer(CURLM*, long timeout_ms, void* self_ptr) {
  auto* self = static_cast<CurlMultiUv*>(self_ptr);
  Handles::Timer* timer = self->handles_->timer;
  if (!timer) return 0;
  if (self->woken_) timeout_ms = 0;  // a wake() is due: curl's later timeout must not delay it
  if (timeout_ms < 0) {
    uv_timer_stop(&timer->handle);
    return 0;
  }
  uv_timer_start(&timer->handle, &CurlMultiUv::on_timeout, static_cast<uint64_t>(timeout_ms), 0);
  return 0;
}

void CurlMultiUv::on_timeout(uv_timer_t* timer) {
  CurlMultiUv* self = static_cast<Handles::Timer*>(timer->data)->keep->owner;
  if (!self) return;
  self->woken_ = false;
  self->act(CURL_SOCKET_TIMEOUT, 0);
}

void CurlMultiUv::act(curl_socket_t fd, int flags) {
  // A copy (one pointer: no allocation), since a callback it makes may destroy the pump and the
  // member with it.
  const std::function<void()> after = after_events_;
  if (multi_) {
    int running = 0;
    curl_multi_socket_action(multi_, fd, flags, &running);
    drain();
  }
  if (after) after();  // last: it may destroy the pump
}

// on_done may close() the pump (a load worker that is finished): the multi is checked each time.
void CurlMultiUv::drain() {
  int left = 0;
  while (multi_) {
    CURLMsg* msg = curl_multi_info_read(multi_, &left);
    if (!msg) break;
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;  // msg dies with remove_handle
    curl_multi_remove_handle(multi_, easy);
    on_done_(easy, result);
  }
}

}  // namespace runara
