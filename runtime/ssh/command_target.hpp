// An SSH session as a CommandTarget (include/runara/command_target.hpp): fixed command lines
// the runtime wrote (gpu_metrics' "amd-smi ...") run on the session through SshExec, stdout
// lines to the caller, the exit once at the end.
//
// Contract. Threading: the session's loop thread only. Ownership: whoever provides the session
// (the ssh binding) owns this target and destroys it before the session; Context holds it weakly,
// so once the session is closed users find no target. A Running handle destroyed early kills the
// command's remote process group; the kill needs the exec to live on until the remote side
// answers, so the target keeps such execs (and frees them when they end, or when it goes).
// After a Running handle is destroyed no callback reaches its caller. An install() still under
// way when the target goes is told so (its `done` gets an error) from the destructor. Must not
// call: Lua.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runara/command_target.hpp"
#include "ssh/sftp_transfer.hpp"
#include "ssh/exec.hpp"

namespace runara::ssh {

class SshCommandTarget final : public CommandTarget {
 public:
  SshCommandTarget(SshSession& session, std::string name, std::string address = {}, int port = 0);
  ~SshCommandTarget() override;
  SshCommandTarget(const SshCommandTarget&) = delete;
  SshCommandTarget& operator=(const SshCommandTarget&) = delete;

  std::string name() const override { return name_; }
  std::unique_ptr<Running> run(const std::string& command, Handlers handlers) override;
  std::unique_ptr<Running> run(const std::string& command, Handlers handlers, Input input) override;
  std::string address() const override { return address_; }
  int port() const override { return port_; }
  void install(const std::string& local_path, const std::string& remote_path,
               std::function<void(const std::string& error)> done) override;
  std::size_t dying() const { return dying_.size(); }  // abandoned commands still being killed

  struct Job;      // one command: the exec and whether its caller still listens
  struct Install;  // one install(): check, upload, rename

 private:
  class Handle;
  void abandon(const std::shared_ptr<Job>& job);

  void install_step(Install& job);
  void install_done(Install* job, const std::string& error);

  SshSession& session_;
  std::string name_;
  std::string address_;
  int port_ = 0;
  std::map<Install*, std::unique_ptr<Install>> installs_;
  std::map<Job*, std::shared_ptr<Job>> dying_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runara::ssh
