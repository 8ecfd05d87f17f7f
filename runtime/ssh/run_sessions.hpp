// The SSH sessions of one run: the logins scripts opened (MachineSession), the host keys pinned
// during the run, connecting (with `cloud-init status --wait` when asked), closing, and the
// run's teardown, which kills every remote process group and closes every session before the
// droplets go.
//
// Contract. Threading: the run's loop thread. Ownership: owns every MachineSession; `hooks` must
// outlive it. Connecting is two steps so that a caller can hold the session (to cancel it)
// before anything is sent: prepare() makes it (not yet the run's), connect() keeps and connects
// it. Must not call: Lua.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "ssh/machine_session.hpp"
#include "ssh/run_hooks.hpp"
#include "ssh/session.hpp"

namespace runara::ssh {

// How to judge a host's key (host_key_policy.hpp).
struct HostKeyRules {
  std::string known_hosts;    // the file for granted hosts ("" : ~/.ssh/known_hosts)
  bool accept_new = false;    // --accept-new-host-keys
  // A run machine's key is trusted on first use and pinned; this records it (the ledger). May be empty.
  std::function<void(const std::string& fingerprint)> pin;
};

struct ConnectPlan {
  MachineLogin login;
  SessionOptions options;  // address, port, user, keys, timeout; accept_host_key and on_retry are set here
  HostKeyRules host_keys;
  bool wait_cloud_init = false;
};

class RunSessions {
 public:
  RunSessions(uv_loop_t* loop, RunHooks hooks) : loop_(loop), hooks_(std::move(hooks)) {}
  RunSessions(const RunSessions&) = delete;
  RunSessions& operator=(const RunSessions&) = delete;

  const RunHooks& hooks() const { return hooks_; }
  using Connected = std::function<void(Result<std::shared_ptr<MachineSession>>)>;
  std::shared_ptr<MachineSession> prepare(ConnectPlan plan);
  void connect(std::shared_ptr<MachineSession> session, bool wait_cloud_init, Connected done);
  // Closes it (see MachineSession::close) and forgets it; `done` once closed.
  void close(const std::shared_ptr<MachineSession>& session, std::function<void()> done);
  void forget(MachineSession* session);  // frees it now: the caller gave up on it
  // Every session closed (remote process groups killed first); `done` once all are.
  void close_all(std::function<void()> done);
  std::string pending() const;  // what close_all still waits for, "" for nothing
  std::map<std::string, std::string>& pinned() { return pinned_; }  // "address:port" -> fingerprint

 private:
  void wait_cloud_init(const std::shared_ptr<MachineSession>& session, std::function<void(Status)> done);

  uv_loop_t* loop_;
  RunHooks hooks_;
  std::list<std::shared_ptr<MachineSession>> sessions_;
  std::map<std::string, std::string> pinned_;
};

}  // namespace runara::ssh
