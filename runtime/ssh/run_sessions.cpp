#include "ssh/run_sessions.hpp"

#include <algorithm>

#include "ssh/host_key_policy.hpp"

namespace runara::ssh {

std::shared_ptr<MachineSession> RunSessions::prepare(ConnectPlan plan) {
  auto s = std::make_shared<MachineSession>(hooks_, std::move(plan.login));
  plan.options.accept_host_key = host_key_policy(*this, *s, std::move(plan.host_keys));
  plan.options.connect_timeout_s =
      std::min(plan.options.connect_timeout_s, std::max(1.0, hooks_.remaining_runtime_s()));
  const RunHooks* hooks = &hooks_;
  plan.options.on_retry = [hooks](const std::string& status) { hooks->progress("ssh: " + status); };
  s->ssh_ = std::make_unique<SshSession>(loop_, std::move(plan.options));
  return s;
}

void RunSessions::connect(std::shared_ptr<MachineSession> session, bool cloud_init, Connected done) {
  sessions_.push_back(session);
  std::weak_ptr<MachineSession> weak = session;
  session->ssh_->connect([this, weak, cloud_init, done](Status connected) {
    auto s = weak.lock();
    if (!s) return;
    if (!connected) {
      const Error why = s->host_key_error_.empty() ? connected.failure() : Error{s->host_key_error_, s->host_key_unknown_};
      forget(s.get());  // frees the connection: this is its last callback
      return done(why);
    }
    s->connected();
    hooks_.log("ssh: connected to " + s->where() + " after " + std::to_string(s->ssh_->attempts()) + " attempt(s)");
    if (!cloud_init) return done(s);
    wait_cloud_init(s, [this, weak, done](Status booted) {
      auto s2 = weak.lock();
      if (!s2) return;
      if (booted) return done(s2);
      close(s2, {});
      done(Error{"waiting for cloud-init on " + s2->name() + ": " + booted.error()});
    });
  });
}

// `cloud-init status --wait` once connected: the machine has finished its first boot.
void RunSessions::wait_cloud_init(const std::shared_ptr<MachineSession>& s, std::function<void(Status)> done) {
  ExecOptions o;
  o.command = "command -v cloud-init >/dev/null 2>&1 || exit 0; cloud-init status --wait >/dev/null";
  o.tail_bytes = 16u << 10;
  hooks_.progress("ssh: waiting for cloud-init on " + s->name());
  auto started = s->start_process(std::move(o), ProcessKind::internal);
  if (!started) return done(Error{started.error()});
  // Held weakly by its own waiter: a session freed mid-wait frees the process too.
  std::weak_ptr<RemoteProcess> weak = *started;
  (*started)->wait_exit([weak, done] {
    auto p = weak.lock();
    if (!p) return;
    const ExecResult& r = p->result();
    if (!r.error.empty()) return done(Error{r.error});
    if (r.exit_code.value_or(-1) == 0) return done({});
    done(Error{"cloud-init status --wait ended with " +
               (r.signal.empty() ? "code " + std::to_string(r.exit_code.value_or(-1)) : "SIG" + r.signal) +
               (r.stderr_tail.empty() ? "" : ": " + r.stderr_tail.substr(0, 400))});
  });
}

void RunSessions::close(const std::shared_ptr<MachineSession>& session, std::function<void()> done) {
  session->close([this, raw = session.get(), done] {
    forget(raw);
    if (done) done();
  });
}

void RunSessions::forget(MachineSession* session) {
  sessions_.remove_if([session](const std::shared_ptr<MachineSession>& s) { return s.get() == session; });
}

void RunSessions::close_all(std::function<void()> done) {
  if (sessions_.empty()) return done();
  auto pending = std::make_shared<std::size_t>(sessions_.size());
  hooks_.log("ssh: teardown: closing " + std::to_string(sessions_.size()) + " session(s)");
  auto sessions = sessions_;  // closing forgets sessions while we iterate
  for (auto& s : sessions) {
    close(s, [pending, done] {
      if (--*pending == 0) done();
    });
  }
}

std::string RunSessions::pending() const {
  if (sessions_.empty()) return {};
  return "closing " + std::to_string(sessions_.size()) + " ssh session(s)";
}

}  // namespace runara::ssh
