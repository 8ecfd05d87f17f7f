#include "ssh/session.hpp"

#include "ssh/agent_auth.hpp"
#include "ssh/loop_budget.hpp"

#include "ssh/host_key.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

namespace runara::ssh {

namespace {

constexpr double kTickS = 0.25;
constexpr double kCloseGraceS = 2;
// Then yield to the loop and come back: other handles (timers, signals, other sessions) get
// their turn. The time a pump may take is the loop phase's budget shared by all sessions
// (loop_budget.hpp), which bounds the loop's stall while data pours in.
constexpr int kMaxPumpRounds = 32;
constexpr std::size_t kRecvBudget = 64u << 10;  // socket bytes per step
constexpr std::uint64_t kOrphanTurn = ~std::uint64_t{0};  // the open turn of a departed stepper

struct LibInit {
  LibInit() { libssh2_init(0); }
};

template <class H>
void close_and_delete(H* handle) {
  if (!handle) return;
  uv_close(reinterpret_cast<uv_handle_t*>(handle), [](uv_handle_t* h) { delete reinterpret_cast<H*>(h); });
}

std::string errno_text(int err) { return std::strerror(err); }

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

bool is_auth_failure(int rc) {
  return rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED || rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED;
}

// The link failed (worth another attempt), as opposed to a local problem such as a key that
// does not parse, which no retry can fix.
bool is_network_error(int rc) {
  return rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_RECV || rc == LIBSSH2_ERROR_SOCKET_DISCONNECT ||
         rc == LIBSSH2_ERROR_SOCKET_TIMEOUT || rc == LIBSSH2_ERROR_TIMEOUT;
}

}  // namespace

// libuv handles live apart from the session: their close callbacks run after it is gone.
struct SshSession::Handles {
  uv_poll_t* poll = nullptr;  // one per connection attempt (a poll handle is bound to its fd)
  uv_timer_t* tick = new uv_timer_t;
  uv_timer_t* retry = new uv_timer_t;
  // "Come back next iteration": an idle handle, not a 0 ms timer, which libuv 1.44 would run
  // again within the same iteration, so a busy session would never let the loop go on.
  uv_idle_t* kick = new uv_idle_t;
};

// libssh2's socket I/O goes through these, to note when the peer last spoke (dead-peer
// detection) and never to raise SIGPIPE.
struct SessionIo {
  static ssize_t recv(libssh2_socket_t fd, void* buf, size_t len, int flags, void** abstract) {
    auto* self = static_cast<SshSession*>(*abstract);
    // libssh2 drains the socket while it can (and opens a channel's window wide), so against
    // a fast sender one read call could run for a long time: past the step's budget, "would
    // block"; the socket stays readable, so the loop comes back to it after other work.
    if (self->recv_budget_ == 0) return -EAGAIN;
    const ssize_t n = ::recv(fd, buf, std::min(len, self->recv_budget_), flags);
    if (n < 0) return -errno;
    if (n > 0) {
      self->recv_budget_ -= static_cast<std::size_t>(n);
      self->last_recv_ = self->now();
    }
    return n;
  }
  static ssize_t send(libssh2_socket_t fd, const void* buf, size_t len, int flags, void**) {
    const ssize_t n = ::send(fd, buf, len, flags | MSG_NOSIGNAL);
    return n < 0 ? -errno : n;
  }
};

SshSession::SshSession(uv_loop_t* loop, SessionOptions options)
    : loop_(loop), options_(std::move(options)), handles_(new Handles), budget_(LoopBudget::acquire(loop)) {
  static LibInit once;
  for (uv_timer_t* t : {handles_->tick, handles_->retry}) {
    uv_timer_init(loop_, t);
    t->data = this;
  }
  uv_idle_init(loop_, handles_->kick);
  handles_->kick->data = this;
}

SshSession::~SshSession() {
  *alive_ = false;
  cut();
  for (int i = 0; i < 10 && orphan_open_ && !orphan_open_(); ++i) {  // the socket is shut: fails fast
  }
  orphan_open_ = nullptr;
  notify_lost("the SSH session to " + where() + " was destroyed");
  drop_connection();
  close_and_delete(handles_->tick);
  close_and_delete(handles_->retry);
  close_and_delete(handles_->kick);
  delete handles_;
  budget_->release();
}

std::string SshSession::where() const {
  const bool v6 = options_.address.find(':') != std::string::npos;
  return options_.user + "@" + (v6 ? "[" + options_.address + "]" : options_.address) + ":" +
         std::to_string(options_.port);
}

double SshSession::now() const { return static_cast<double>(uv_now(loop_)) / 1000.0; }

std::string SshSession::last_error() const {
  if (!session_) return "no session";
  char* msg = nullptr;
  int len = 0;
  libssh2_session_last_error(session_, &msg, &len, 0);
  return msg ? std::string(msg, static_cast<std::size_t>(len)) : "unknown error";
}

// --- connecting ---

void SshSession::connect(Done done) {
  if (state_ != State::Idle) {
    done(Error{"connect: the SSH session to " + where() + " was already started"});
    return;
  }
  done_ = std::move(done);
  if (!options_.accept_host_key) {
    state_ = State::Failed;
    error_ = "connect: no host key check was given for " + where();
    done_(Error{error_});
    return;
  }
  deadline_ = now() + options_.connect_timeout_s;
  uv_timer_start(handles_->tick, [](uv_timer_t* t) { static_cast<SshSession*>(t->data)->tick(); },
                 static_cast<uint64_t>(kTickS * 1000), static_cast<uint64_t>(kTickS * 1000));
  start_attempt();
}

void SshSession::start_attempt() {
  ++attempts_;
  state_ = State::Connecting;
  attempt_deadline_ = std::min(deadline_, now() + options_.attempt_timeout_s);
  unsigned char probe[16];
  if (inet_pton(AF_INET, options_.address.c_str(), probe) == 1 || inet_pton(AF_INET6, options_.address.c_str(), probe) == 1)
    return connect_to(options_.address);
  resolve();  // a host name: looked up again on every attempt (a new machine's name may appear late)
}

// getaddrinfo on libuv's thread pool. The request outlives an abandoned attempt (or the
// session): its callback then finds no session in `data` and only frees what it got.
void SshSession::resolve() {
  phase_ = Phase::Resolve;
  auto* req = new uv_getaddrinfo_t;
  req->data = this;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  const int rc = uv_getaddrinfo(loop_, req, [](uv_getaddrinfo_t* r, int status, addrinfo* found) {
    auto* self = static_cast<SshSession*>(r->data);
    delete r;
    if (self == nullptr) return uv_freeaddrinfo(found);
    self->resolving_ = nullptr;
    self->resolved(status, found);
    uv_freeaddrinfo(found);
  }, options_.address.c_str(), nullptr, &hints);
  if (rc != 0) {
    delete req;
    return attempt_failed("cannot resolve the host name '" + options_.address + "': " + uv_strerror(rc), true);
  }
  resolving_ = req;
}

// The first IPv4 address, else the first IPv6 one (as most hosts are reached).
void SshSession::resolved(int status, const addrinfo* found) {
  if (status != 0)  // a name that does not exist will not appear by retrying; a DNS failure may pass
    return attempt_failed("cannot resolve the host name '" + options_.address + "': " + uv_strerror(status),
                          status != UV_EAI_NONAME);
  const addrinfo* pick = nullptr;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
    if (a->ai_family == AF_INET6 && pick == nullptr) pick = a;
  }
  if (pick == nullptr) return attempt_failed("the host name '" + options_.address + "' has no IP address", true);
  char text[INET6_ADDRSTRLEN] = {};
  if (pick->ai_family == AF_INET) uv_ip4_name(reinterpret_cast<const sockaddr_in*>(pick->ai_addr), text, sizeof text);
  else uv_ip6_name(reinterpret_cast<const sockaddr_in6*>(pick->ai_addr), text, sizeof text);
  connect_to(text);
}

void SshSession::abandon_resolution() {
  if (resolving_ == nullptr) return;
  resolving_->data = nullptr;
  uv_cancel(reinterpret_cast<uv_req_t*>(resolving_));  // may fail once running: the callback frees it
  resolving_ = nullptr;
}

void SshSession::connect_to(const std::string& address) {
  phase_ = Phase::Tcp;
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(options_.port));
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(options_.port));
    len = sizeof *v6;
  } else {
    attempt_failed("'" + address + "' is not a numeric IPv4 or IPv6 address", false);
    return;
  }
  if (options_.open_socket && addr.ss_family == AF_INET) {
    std::string error;
    fd_ = options_.open_socket(error);
    if (fd_ < 0) return attempt_failed(error, true);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  } else {
    fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
  if (fd_ < 0) {
    attempt_failed("socket: " + errno_text(errno), true);
    return;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 && errno != EINPROGRESS) {
    tcp_failed(errno);
    return;
  }
  handles_->poll = new uv_poll_t;
  uv_poll_init_socket(loop_, handles_->poll, fd_);
  handles_->poll->data = this;
  rearm();
}

void SshSession::tcp_connected() {
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    tcp_failed(err);
    return;
  }
  session_ = libssh2_session_init_ex(nullptr, nullptr, nullptr, this);
  if (!session_) {
    attempt_failed("libssh2 could not make a session", false);
    return;
  }
  libssh2_session_set_blocking(session_, 0);
  libssh2_session_callback_set(session_, LIBSSH2_CALLBACK_RECV, reinterpret_cast<void*>(&SessionIo::recv));
  libssh2_session_callback_set(session_, LIBSSH2_CALLBACK_SEND, reinterpret_cast<void*>(&SessionIo::send));
  last_recv_ = now();
  phase_ = Phase::Handshake;
  step_connect();
}

void SshSession::step_connect() {
  if (phase_ == Phase::Handshake) {
    const int rc = libssh2_session_handshake(session_, fd_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return rearm();
    if (rc != 0) return attempt_failed("SSH handshake: " + last_error(), true);
    const HostKey key = read_host_key(session_);
    if (!options_.accept_host_key(key))
      return attempt_failed("the host key " + key.fingerprint + " (" + key.type + ") was refused", false);
    phase_ = Phase::Auth;
  }
  if (phase_ != Phase::Auth) return;
  if (!options_.agent_socket.empty() && !agent_done_ && !step_agent()) return;
  const std::string& user = options_.user;
  if (options_.private_key.empty() && options_.private_key_path.empty())
    return attempt_failed(agent_note_.empty() ? "no key to authenticate with" : agent_note_,
                          options_.retry_auth_failure && !agent_note_.empty());
  const unsigned user_len = static_cast<unsigned>(user.size());
  const char* pass = options_.passphrase.empty() ? nullptr : options_.passphrase.c_str();
  const int rc = options_.private_key.empty()
                     ? libssh2_userauth_publickey_fromfile_ex(session_, user.c_str(), user_len, nullptr,
                                                              options_.private_key_path.c_str(), pass)
                     : libssh2_userauth_publickey_frommemory(session_, user.c_str(), user_len, nullptr, 0,
                                                             options_.private_key.data(),
                                                             options_.private_key.size(), pass);
  if (rc == LIBSSH2_ERROR_EAGAIN) return rearm();
  if (rc == 0) return become_ready();
  if (is_auth_failure(rc))
    return attempt_failed("the server refused the key for user '" + user + "' (public-key authentication failed" +
                              (agent_note_.empty() ? "" : "; before it, " + agent_note_) + ")",
                          options_.retry_auth_failure);
  if (is_network_error(rc)) return attempt_failed("authentication: " + last_error(), true);
  attempt_failed("the private key could not be used (unreadable, unsupported or wrong passphrase: " + last_error() +
                     ")",
                 false);
}

// The agent's turn of the auth phase. False: the attempt is waiting, logged in or over (nothing
// more to do now); true: the agent is done without logging in, so the key file is next.
bool SshSession::step_agent() {
  if (!agent_) agent_ = std::make_unique<AgentAuth>(session_, options_.agent_socket, options_.user);
  const AgentAuth::Result result = agent_->step();
  if (result == AgentAuth::Result::Again) {
    rearm();
    return false;
  }
  if (result == AgentAuth::Result::Accepted) {
    agent_.reset();
    become_ready();
    return false;
  }
  if (result == AgentAuth::Result::Failed && is_network_error(agent_->rc())) {
    attempt_failed("authentication: " + last_error(), true);
    return false;
  }
  const int n = agent_->offered();
  agent_note_ = result == AgentAuth::Result::Failed
                    ? agent_->error()
                    : "the server refused " + (n == 0 ? std::string("the SSH agent's keys (it holds none)")
                                                      : "all " + std::to_string(n) + " key" + (n == 1 ? "" : "s") +
                                                            " of the SSH agent") +
                          " at " + options_.agent_socket + " for user '" + options_.user + "'";
  agent_.reset();
  agent_done_ = true;
  return true;
}

void SshSession::tcp_failed(int err) {
  if (err == ECONNREFUSED && !options_.retry_refused) {
    return attempt_failed("TCP connect: " + errno_text(err) + ": nothing listens for SSH on port " +
                              std::to_string(options_.port) + " there; check the address and port, or start its SSH server",
                          false, true);
  }
  attempt_failed("TCP connect: " + errno_text(err), true);
}

void SshSession::attempt_failed(const std::string& why, bool retryable, bool setup) {
  last_attempt_error_ = why;
  drop_connection();
  phase_ = Phase::None;
  const double backoff = std::min(5.0, 0.25 * std::pow(2.0, std::min(attempts_, 8) - 1));
  if (!retryable || now() + backoff >= deadline_) {
    state_ = State::Failed;
    error_ = "cannot connect to " + where() + ": " + why;
    if (retryable)
      error_ += " (gave up after " + std::to_string(attempts_) + " attempt" + (attempts_ == 1 ? "" : "s") +
                " within " + seconds_text(options_.connect_timeout_s) + " s)";
    uv_timer_stop(handles_->tick);
    Done done = std::move(done_);
    if (done) done(Error{error_, setup});
    return;
  }
  state_ = State::Waiting;
  if (options_.on_retry) {
    auto alive = alive_;
    options_.on_retry("waiting for SSH on " + where() + " (attempt " + std::to_string(attempts_) + ": " + why + ")");
    if (!*alive || state_ != State::Waiting) return;
  }
  uv_timer_start(handles_->retry, [](uv_timer_t* t) { static_cast<SshSession*>(t->data)->start_attempt(); },
                 static_cast<uint64_t>(backoff * 1000), 0);
}

void SshSession::become_ready() {
  state_ = State::Ready;
  phase_ = Phase::None;
  idle_keepalive_ = false;
  configure_keepalive();
  rearm();
  Done done = std::move(done_);
  if (done) done(Status{});
}

// --- driving ---

void SshSession::on_socket(int status, int events) {
  if (status < 0 && state_ == State::Ready) return lose("socket error: " + std::string(uv_strerror(status)));
  if (state_ == State::Connecting) {
    if (phase_ == Phase::Tcp) {
      if (status < 0 || (events & UV_WRITABLE)) tcp_connected();
      return;
    }
    return step_connect();
  }
  if (state_ == State::Ready && idle() && status >= 0 && (events & UV_READABLE)) return idle_readable();
  pump();
}

// Nothing attached reads the socket while the session idles (libssh2 reads only inside channel
// calls), so: keepalives ask for no reply while idle (nothing piles up, and "unanswered" means
// nothing), the host closing the connection is seen with a peek, and other bytes wait for the
// next stepper with the socket unwatched for reading (no busy loop on them).
void SshSession::idle_readable() {
  char byte = 0;
  const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return lose("the host closed the connection");
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return lose(std::strerror(errno));
  if (n > 0) unread_while_idle_ = true;
  rearm();
}

void SshSession::configure_keepalive() {
  if (options_.keepalive_s <= 0 || !session_) return;
  const bool idle = this->idle();
  if (idle == idle_keepalive_) return;
  idle_keepalive_ = idle;
  libssh2_keepalive_config(session_, idle ? 0 : 1, static_cast<unsigned>(std::max(1.0, options_.keepalive_s)));
}

void SshSession::pump() {
  if (state_ == State::Closing) {
    const int rc = libssh2_session_disconnect(session_, "closed by runara");
    if (rc == LIBSSH2_ERROR_EAGAIN) return rearm();
    return finish_close();
  }
  if (state_ != State::Ready) return;
  // This loop phase's share is spent (by this or other sessions): continue in the next phase.
  const uint64_t allowed = budget_->left_ns();
  if (allowed == 0) {
    rearm();
    return wake();
  }
  auto alive = alive_;
  const uint64_t started = uv_hrtime();
  struct Charge {  // whatever way pump() ends; not once a step destroyed the session (the last
                   // session takes the budget with it)
    LoopBudget* budget;
    const std::shared_ptr<bool>& alive;
    uint64_t started;
    ~Charge() {
      if (*alive) budget->charge(uv_hrtime() - started);
    }
  } charge{budget_, alive, started};
  if (orphan_open_ && !finish_orphan_open()) return rearm();
  if (!*alive || state_ != State::Ready) return;
  run_orphans();
  auto spent = [&] { return uv_hrtime() - started >= allowed; };
  for (int round = 0; round < kMaxPumpRounds; ++round) {
    bool progressed = false;
    const std::vector<std::uint64_t> ids = stepping_order();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto it = steppers_.find(ids[i]);  // an earlier step may have detached (or destroyed) it
      if (it == steppers_.end()) continue;
      recv_budget_ = kRecvBudget;
      const bool did = it->second->step() == Stepper::Step::Progress;
      if (!*alive) return;
      recv_budget_ = kNoBudget;
      if (did) progressed = true;
      if (state_ != State::Ready) return;
      if (spent() && i + 1 < ids.size()) {
        // Out of time mid-pass: the steppers not yet stepped go first in the next loop phase.
        // (Starting over from the first would starve the last ones whenever a pass costs more
        // than the budget: 500 idle tunnels did, and the one whose channel was opening never
        // finished, so no other tunnel could open.)
        resume_at_ = ids[i + 1];
        rearm();
        return wake();
      }
    }
    resume_at_ = 0;
    if (!progressed) return rearm();
    if (spent()) break;
  }
  rearm();
  wake();  // still busy: let other loop work run first, then continue
}

std::vector<std::uint64_t> SshSession::stepping_order() const {
  std::vector<std::uint64_t> ids;
  ids.reserve(steppers_.size());
  const auto from = steppers_.lower_bound(resume_at_);
  for (auto it = from; it != steppers_.end(); ++it) ids.push_back(it->first);
  for (auto it = steppers_.begin(); it != from; ++it) ids.push_back(it->first);
  return ids;
}

void SshSession::rearm() {
  if (!handles_->poll || fd_ < 0) return;
  int events = UV_READABLE;
  if (phase_ == Phase::Tcp && state_ == State::Connecting) events = UV_WRITABLE;
  else if (session_ && (libssh2_session_block_directions(session_) & LIBSSH2_SESSION_BLOCK_OUTBOUND))
    events |= UV_WRITABLE;
  if (state_ == State::Ready && idle() && unread_while_idle_) events &= ~UV_READABLE;
  if (events == 0) {
    uv_poll_stop(handles_->poll);
    return;
  }
  uv_poll_start(handles_->poll, events, [](uv_poll_t* p, int status, int ev) {
    static_cast<SshSession*>(p->data)->on_socket(status, ev);
  });
}

void SshSession::adopt(std::function<bool()> finish) {
  if (state_ != State::Ready) {  // nothing will pump again: as far as it goes now
    for (int i = 0; i < 10 && !finish(); ++i) {
    }
    return;
  }
  orphans_.push_back(std::move(finish));
  wake();
}

void SshSession::run_orphans() {
  recv_budget_ = kRecvBudget;
  for (auto it = orphans_.begin(); it != orphans_.end();) it = (*it)() ? orphans_.erase(it) : it + 1;
  recv_budget_ = kNoBudget;
}

void SshSession::wake() {
  if (state_ != State::Ready) return;
  uv_idle_start(handles_->kick, [](uv_idle_t* h) {
    uv_idle_stop(h);
    static_cast<SshSession*>(h->data)->pump();
  });
}

void SshSession::tick() {
  const double t = now();
  if (state_ == State::Connecting && t >= attempt_deadline_) {
    static const char* const kPhase[] = {"", "TCP connect", "SSH handshake", "authentication", "host name lookup"};
    return attempt_failed(std::string(kPhase[static_cast<int>(phase_)]) + ": no answer within " +
                              seconds_text(options_.attempt_timeout_s) + " s",
                          true);
  }
  if (state_ == State::Closing && t >= close_deadline_) return finish_close();
  if (state_ != State::Ready) return;
  configure_keepalive();
  if (options_.keepalive_s > 0) {
    if (!idle() && t - last_recv_ > 3 * options_.keepalive_s + 1)
      return lose("no answer from the host for " + std::to_string(static_cast<int>(t - last_recv_)) +
                  " s (keepalives unanswered)");
    int next = 0;
    const int rc = libssh2_keepalive_send(session_, &next);
    if (rc < 0 && rc != LIBSSH2_ERROR_EAGAIN && fatal(rc)) return;
  }
  pump();  // steppers check their own deadlines
}

// --- failing and closing ---

bool SshSession::fatal(int rc) {
  switch (rc) {
    case LIBSSH2_ERROR_SOCKET_SEND:
    case LIBSSH2_ERROR_SOCKET_RECV:
    case LIBSSH2_ERROR_SOCKET_DISCONNECT:
    case LIBSSH2_ERROR_SOCKET_TIMEOUT:
    case LIBSSH2_ERROR_TIMEOUT:
    case LIBSSH2_ERROR_KEX_FAILURE:
    case LIBSSH2_ERROR_DECRYPT:
    case LIBSSH2_ERROR_PROTO:
    case LIBSSH2_ERROR_BAD_USE:
    case LIBSSH2_ERROR_INVALID_MAC:
      lose(last_error());
      return true;
    default:
      return false;
  }
}

void SshSession::lose(const std::string& why) {
  if (state_ != State::Ready) return;
  state_ = State::Failed;
  error_ = "the SSH connection to " + where() + " was lost: " + why;
  uv_timer_stop(handles_->tick);
  cut();
  auto alive = alive_;
  notify_lost(error_);
  if (*alive) drop_connection();
}

// Shuts the socket down: from here on every libssh2 call fails at once instead of asking to be
// retried, so steppers told lost() can free their handles without blocking or waiting.
void SshSession::cut() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

// Steppers must not call the session from lost(), so telling the rest goes on safely even if
// one of them destroyed the session.
void SshSession::notify_lost(const std::string& why) {
  for (int i = 0; i < 10 && orphan_open_ && !orphan_open_(); ++i) {  // the socket is shut: fails fast
  }
  orphan_open_ = nullptr;
  for (auto& finish : orphans_)
    for (int i = 0; i < 10 && !finish(); ++i) {
    }
  orphans_.clear();
  open_turn_ = 0;
  std::map<std::uint64_t, Stepper*> told;
  told.swap(steppers_);
  for (auto& entry : told) entry.second->lost(why);
}

void SshSession::close(Done done) {
  if (state_ != State::Ready) {
    cut();
    notify_lost("the SSH session to " + where() + " was closed");
    drop_connection();
    uv_timer_stop(handles_->tick);
    uv_timer_stop(handles_->retry);
    if (state_ != State::Failed) state_ = State::Closed;
    Done connect_done = std::move(done_);
    auto alive = alive_;
    if (connect_done) connect_done(Error{"connect: the SSH session to " + where() + " was closed before it was ready"});
    if (*alive && done) done(Status{});
    return;
  }
  close_done_ = std::move(done);
  state_ = State::Closing;  // steppers stay attached (not stepped) until the disconnect is sent
  close_deadline_ = now() + kCloseGraceS;
  pump();
}

void SshSession::finish_close() {
  uv_timer_stop(handles_->tick);
  state_ = State::Closed;
  cut();
  auto alive = alive_;
  notify_lost("the SSH session to " + where() + " was closed");
  if (!*alive) return;
  drop_connection();
  Done done = std::move(close_done_);
  if (done) done(Status{});
}

// Frees libssh2 without waiting on the peer: with the socket shut down, every send fails at
// once instead of asking to be retried, so libssh2_session_free cannot stall.
void SshSession::drop_connection() {
  abandon_resolution();
  if (handles_->poll) {
    uv_poll_stop(handles_->poll);
    close_and_delete(handles_->poll);
    handles_->poll = nullptr;
  }
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  agent_.reset();  // before its session: libssh2 frees the agent with the session's allocator
  agent_done_ = false;
  if (session_) {
    for (int i = 0; i < 100 && libssh2_session_free(session_) == LIBSSH2_ERROR_EAGAIN; ++i) {
    }
    session_ = nullptr;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::uint64_t SshSession::attach(Stepper* stepper) {
  const std::uint64_t id = next_id_++;
  if (steppers_.empty()) {
    last_recv_ = now();  // silence while idle proved nothing: the dead-peer clock starts now
    unread_while_idle_ = false;
  }
  steppers_[id] = stepper;
  configure_keepalive();
  wake();
  return id;
}

void SshSession::detach(std::uint64_t id, std::function<bool()> finish_open) {
  steppers_.erase(id);
  if (open_turn_ == id && finish_open && state_ == State::Ready) {
    orphan_open_ = std::move(finish_open);
    open_turn_ = kOrphanTurn;  // nobody else opens until it is finished
    wake();
    return;
  }
  release_open_turn(id);
}

bool SshSession::finish_orphan_open() {
  recv_budget_ = kRecvBudget;
  const bool ended = orphan_open_();
  recv_budget_ = kNoBudget;
  if (!ended) return false;
  orphan_open_ = nullptr;
  open_turn_ = 0;
  return true;
}

bool SshSession::take_open_turn(std::uint64_t id) {
  if (orphan_open_ && state_ == State::Ready) finish_orphan_open();
  if (open_turn_ == 0) open_turn_ = id;
  return open_turn_ == id;
}

void SshSession::release_open_turn(std::uint64_t id) {
  if (open_turn_ != id) return;
  open_turn_ = 0;
  wake();  // the others waiting for the turn
}

}  // namespace runara::ssh
