// A CommandTarget over the ssh engine, for testing gpu_metrics through a real sshd before the
// ssh Lua binding (which provides the real one) exists. `env` is exported before each command
// (the tests put their shim tools first on the remote PATH this way).
//
// Contract: the loop thread only; the session must outlive the target. Destroying a Running
// handle kills the remote process group and keeps the exec until it reports done (SshExec must
// not be destroyed while it runs); the target's destructor drops what is left.
#pragma once

#include <list>
#include <memory>

#include <runara/command_target.hpp>

#include "ssh/exec.hpp"
#include "ssh_test_session.hpp"

namespace runara::test {

class SshCommandTarget : public CommandTarget {
 public:
  SshCommandTarget(ssh::SshSession& session, ssh::EnvList env) : session_(session), env_(std::move(env)) {}
  std::string name() const override { return "sshd on loopback"; }

  std::unique_ptr<Running> run(const std::string& command, Handlers handlers) override {
    auto slot = std::make_shared<Slot>();
    slot->handlers = std::move(handlers);
    ssh::ExecOptions o;
    o.command = command;
    o.env = env_;
    o.on_stdout = [slot](std::string_view line) {
      if (slot->handlers.on_line) slot->handlers.on_line(line);
    };
    execs_.push_back(nullptr);
    auto it = std::prev(execs_.end());
    *it = test::must(ssh::SshExec::start(session_, std::move(o), [this, slot, it](const ssh::ExecResult& r) {
      Exit e;
      e.code = r.exit_code.value_or(-1);
      e.error = !r.error.empty() ? r.error : r.signal.empty() ? "" : "killed by SIG" + r.signal;
      e.stderr_tail = r.stderr_tail;
      auto on_exit = std::move(slot->handlers.on_exit);
      slot->handlers = {};
      auto self = std::move(*it);
      execs_.erase(it);
      if (on_exit) on_exit(e);
      dying_.push_back(std::move(self));  // freed with the target, not inside its own callback
    }));
    return std::make_unique<Run>(slot, it->get());
  }

 private:
  struct Slot {
    Handlers handlers;
  };
  struct Run : Running {
    Run(std::shared_ptr<Slot> s, ssh::SshExec* e) : slot(std::move(s)), exec(e) {}
    ~Run() override {
      if (!slot->handlers.on_exit) return;  // finished already
      slot->handlers = {};
      exec->kill("KILL");
    }
    std::shared_ptr<Slot> slot;
    ssh::SshExec* exec;
  };

  ssh::SshSession& session_;
  ssh::EnvList env_;
  std::list<std::unique_ptr<ssh::SshExec>> execs_;
  std::vector<std::unique_ptr<ssh::SshExec>> dying_;
};

}  // namespace runara::test
