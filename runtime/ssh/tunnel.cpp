#include "ssh/tunnel.hpp"

#include <uv.h>

#include <algorithm>
#include <cstdlib>

namespace runara::ssh {

namespace {

constexpr std::size_t kHighWater = 1u << 20;
constexpr std::size_t kChunk = 64u << 10;
constexpr double kCloseWaitS = 5;  // for the peer to confirm the channel's close

struct WriteReq {
  uv_write_t req;
  std::string data;
};

double now_s() { return static_cast<double>(uv_hrtime()) / 1e9; }

void alloc_cb(uv_handle_t*, size_t, uv_buf_t* buf) {
  buf->base = static_cast<char*>(std::malloc(kChunk));
  buf->len = buf->base ? kChunk : 0;
}

void read_cb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  if (auto* t = static_cast<Tunnel*>(stream->data)) t->on_read(static_cast<long>(nread), buf->base);
  std::free(buf->base);
}

}  // namespace

Tunnel::Tunnel(SshSession& session, uv_tcp_t* client, std::string host, int port, Ended ended)
    : session_(&session), client_(client), host_(std::move(host)), port_(port), ended_(std::move(ended)) {
  client_->data = this;
  id_ = session_->attach(this);
}

Tunnel::~Tunnel() {
  // Gone mid-open: the session finishes that open (the channel goes with the session).
  auto finish_open = [raw = session_ ? session_->raw() : nullptr, host = host_, port = port_] {
    return libssh2_channel_direct_tcpip_ex(raw, host.c_str(), port, "127.0.0.1", 0) != nullptr ||
           libssh2_session_last_errno(raw) != LIBSSH2_ERROR_EAGAIN;
  };
  if (session_) session_->detach(id_, phase_ == Phase::Open ? std::function<bool()>(finish_open) : nullptr);
  close_client();
}

void Tunnel::close_client() {
  if (!client_) return;
  client_->data = nullptr;  // callbacks still pending (writes) must not reach the tunnel
  uv_close(reinterpret_cast<uv_handle_t*>(client_), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
  client_ = nullptr;
}

Tunnel::Step Tunnel::step() {
  if (phase_ == Phase::Open) {
    if (!open()) return Step::Blocked;
  }
  bool progressed = false;
  if (phase_ == Phase::Flow) {
    progressed = push_to_remote();
    if (phase_ == Phase::Flow) progressed = pull_from_remote() || progressed;
    if (phase_ == Phase::Flow && remote_eof_ && writes_pending_ == 0) {
      phase_ = Phase::Close;
      close_deadline_ = now_s() + kCloseWaitS;
    }
  }
  if (phase_ == Phase::Close) {
    const int rc = libssh2_channel_free(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN && now_s() < close_deadline_) return progressed ? Step::Progress : Step::Blocked;
    channel_ = nullptr;  // freed, or left to the session after the wait
    end("");
    return Step::Progress;
  }
  return progressed ? Step::Progress : Step::Blocked;
}

bool Tunnel::open() {
  if (!session_->take_open_turn(id_)) return false;
  channel_ = libssh2_channel_direct_tcpip_ex(session_->raw(), host_.c_str(), port_, "127.0.0.1", 0);
  if (!channel_) {
    const int rc = libssh2_session_last_errno(session_->raw());
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    session_->release_open_turn(id_);
    const std::string why = session_->last_error();
    if (session_->fatal(rc)) return false;  // lost() ended us
    end("cannot open a tunnel to " + host_ + ":" + std::to_string(port_) + " through " + session_->where() + ": " + why);
    return false;
  }
  session_->release_open_turn(id_);
  phase_ = Phase::Flow;
  reading_ = true;
  uv_read_start(reinterpret_cast<uv_stream_t*>(client_), alloc_cb, read_cb);
  return true;
}

bool Tunnel::push_to_remote() {
  bool progressed = false;
  while (!to_remote_.empty()) {
    const ssize_t n = libssh2_channel_write(channel_, to_remote_.data(), to_remote_.size());
    if (n == LIBSSH2_ERROR_EAGAIN) break;
    if (n < 0) {
      const int rc = static_cast<int>(n);
      if (!session_->fatal(rc)) end("tunnel to " + host_ + ":" + std::to_string(port_) + ": " + session_->last_error());
      return true;
    }
    to_remote_.erase(0, static_cast<std::size_t>(n));
    progressed = true;
  }
  if (!reading_ && !client_eof_ && to_remote_.size() < kHighWater / 2 && client_) {
    reading_ = true;
    uv_read_start(reinterpret_cast<uv_stream_t*>(client_), alloc_cb, read_cb);
  }
  if (to_remote_.empty() && client_eof_ && !eof_sent_) {
    const int rc = libssh2_channel_send_eof(channel_);
    if (rc == 0) {
      eof_sent_ = true;
      progressed = true;
    }
  }
  return progressed;
}

bool Tunnel::pull_from_remote() {
  bool progressed = false;
  char buf[kChunk];
  while (writes_pending_ < kHighWater && client_) {
    const ssize_t n = libssh2_channel_read(channel_, buf, sizeof buf);
    if (n == LIBSSH2_ERROR_EAGAIN) break;
    if (n < 0) {
      if (!session_->fatal(static_cast<int>(n)))
        end("tunnel to " + host_ + ":" + std::to_string(port_) + ": " + session_->last_error());
      return true;
    }
    if (n == 0) {
      if (libssh2_channel_eof(channel_)) remote_eof_ = true;
      break;
    }
    auto* w = new WriteReq;
    w->data.assign(buf, static_cast<std::size_t>(n));
    const uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(client_), &b, 1, [](uv_write_t* req, int status) {
      auto* w = reinterpret_cast<WriteReq*>(req);
      auto* t = static_cast<Tunnel*>(req->handle->data);
      const std::size_t bytes = w->data.size();
      delete w;
      if (t) t->on_written(status, bytes);
    });
    progressed = true;
    if (rc < 0) {
      // A refused write never calls back: free it here and treat the client as gone, as
      // on_written does for a failed one, or writes_pending_ would hold the tunnel open.
      delete w;
      close_client();
      remote_eof_ = true;
      writes_pending_ = 0;
      break;
    }
    writes_pending_ += w->data.size();
  }
  return progressed;
}

void Tunnel::on_read(long nread, const char* data) {
  if (phase_ == Phase::Done) return;
  if (nread > 0) {
    to_remote_.append(data, static_cast<std::size_t>(nread));
    if (to_remote_.size() >= kHighWater) {
      reading_ = false;
      uv_read_stop(reinterpret_cast<uv_stream_t*>(client_));
    }
  } else if (nread == UV_EOF) {
    client_eof_ = true;
    reading_ = false;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(client_));
  } else if (nread < 0) {
    // The local client reset the connection: the server's side is closed with it.
    close_client();
    remote_eof_ = true;
    writes_pending_ = 0;
  }
  if (session_) session_->wake();
}

void Tunnel::on_written(int status, std::size_t bytes) {
  writes_pending_ -= std::min(bytes, writes_pending_);
  if (status < 0 && client_) {
    close_client();
    remote_eof_ = true;  // nobody to deliver to: end the channel
    writes_pending_ = 0;
  }
  if (session_) session_->wake();
}

void Tunnel::lost(const std::string& error) {
  session_ = nullptr;
  channel_ = nullptr;
  end(error);
}

void Tunnel::end(const std::string& error) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  if (session_) session_->detach(id_);
  close_client();
  Ended ended = std::move(ended_);
  if (ended) ended(this, error);
}

}  // namespace runara::ssh
