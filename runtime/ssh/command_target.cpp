#include "ssh/command_target.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace runara::ssh {

namespace {
constexpr std::size_t kTargetTail = 64u << 10;  // fixed commands are short; errors need the end
constexpr std::size_t kStderrTail = 4u << 10;   // what Exit::stderr_tail carries
}  // namespace

struct SshCommandTarget::Job {
  std::unique_ptr<SshExec> exec;
  Handlers handlers;
  bool listening = true;  // false once the caller dropped its Running handle
  bool finished = false;
};

class SshCommandTarget::Handle final : public CommandTarget::Running {
 public:
  Handle(SshCommandTarget& target, std::shared_ptr<Job> job, std::shared_ptr<bool> target_alive)
      : target_(target), job_(std::move(job)), target_alive_(std::move(target_alive)) {}
  void write(std::string_view data) override {
    if (!job_->finished && job_->exec) job_->exec->send_input(data);
  }
  ~Handle() override {
    job_->listening = false;
    job_->handlers = {};
    if (!job_->finished && *target_alive_) target_.abandon(job_);
  }

 private:
  SshCommandTarget& target_;
  std::shared_ptr<Job> job_;
  std::shared_ptr<bool> target_alive_;
};

struct SshCommandTarget::Install {
  std::string local, remote, part;
  std::function<void(const std::string&)> done;
  int step = 0;  // 0: check, 1: upload, 2: rename
  std::unique_ptr<Running> command;
  std::unique_ptr<SftpTransfer> upload;
};

SshCommandTarget::SshCommandTarget(SshSession& session, std::string name, std::string address, int port)
    : session_(session), name_(std::move(name)), address_(std::move(address)), port_(port) {}

SshCommandTarget::~SshCommandTarget() {
  *alive_ = false;
  // Installs still under way end here, told why (their callers wait on them); their commands
  // and transfers go first, without callbacks.
  auto pending = std::move(installs_);
  installs_.clear();
  for (auto& [raw, job] : pending) {
    auto done = std::move(job->done);
    job.reset();
    if (done) done("the ssh session to " + name_ + " was closed");
  }
  dying_.clear();  // execs freed before their session (the owner's contract); no callbacks
}

std::unique_ptr<CommandTarget::Running> SshCommandTarget::run(const std::string& command, Handlers handlers) {
  return run(command, std::move(handlers), Input{});
}

std::unique_ptr<CommandTarget::Running> SshCommandTarget::run(const std::string& command, Handlers handlers, Input input) {
  auto job = std::make_shared<Job>();
  job->handlers = std::move(handlers);
  ExecOptions options;
  options.command = command;
  options.tail_bytes = kTargetTail;
  options.stdin_data = std::move(input.data);
  options.hold_stdin = input.hold_open;
  options.max_line = input.max_line;
  Job* raw = job.get();
  options.on_stdout = [raw](std::string_view line) {
    if (raw->listening && raw->handlers.on_line) raw->handlers.on_line(line);
  };
  auto alive = alive_;
  auto done = [this, raw, alive](const ExecResult& r) {
    raw->finished = true;
    Exit exit;
    exit.code = r.exit_code.value_or(-1);
    exit.error = r.error;
    if (exit.error.empty() && !r.signal.empty()) exit.error = "killed by SIG" + r.signal;
    exit.stderr_tail = r.stderr_tail.size() > kStderrTail ? r.stderr_tail.substr(r.stderr_tail.size() - kStderrTail)
                                                          : r.stderr_tail;
    auto on_exit = raw->listening ? std::move(raw->handlers.on_exit) : nullptr;
    raw->handlers = {};
    // An abandoned job is freed here: its exec's last act is this call, so that is allowed.
    if (*alive) dying_.erase(raw);
    if (on_exit) on_exit(exit);
  };
  if (auto exec = SshExec::start(session_, std::move(options), std::move(done))) {
    job->exec = std::move(*exec);
  } else {
    // Could not start (session gone): report it the way a lost command is reported, at once.
    Exit exit;
    exit.error = std::string("cannot run on ") + name_ + ": " + exec.error();
    job->finished = true;
    if (job->handlers.on_exit) job->handlers.on_exit(exit);
    job->handlers = {};
  }
  return std::make_unique<Handle>(*this, std::move(job), alive_);
}

void SshCommandTarget::abandon(const std::shared_ptr<Job>& job) {
  if (!job->exec || job->finished) return;
  dying_[job.get()] = job;
  job->exec->kill("TERM");
}

// Three steps, each started from the previous one's callback: is an executable file there
// already (then done); upload to a part file beside it; make it executable and rename it into
// place, so a half-copied file is never taken for the real one (the rename is atomic).
void SshCommandTarget::install(const std::string& local_path, const std::string& remote_path,
                               std::function<void(const std::string& error)> done) {
  auto job = std::make_unique<Install>();
  job->local = local_path;
  job->remote = remote_path;
  job->part = remote_path + ".part" + std::to_string(reinterpret_cast<std::uintptr_t>(job.get()) % 1000000);
  job->done = std::move(done);
  Install& raw = *job;
  installs_[&raw] = std::move(job);
  install_step(raw);
}

void SshCommandTarget::install_step(Install& job) {
  Install* raw = &job;
  auto exited = [this, raw](const Exit& exit) {
    if (raw->step == 0 && exit.code == 0) return install_done(raw, "");  // already there
    if (raw->step == 0 && exit.code == 1) {
      raw->step = 1;
      return install_step(*raw);
    }
    if (raw->step == 2 && exit.code == 0) return install_done(raw, "");
    install_done(raw, "cannot install " + raw->remote + " on " + name_ + ": " +
                          (exit.error.empty() ? "exit " + std::to_string(exit.code) : exit.error) +
                          (exit.stderr_tail.empty() ? "" : " (" + exit.stderr_tail + ")"));
  };
  const auto slash = job.remote.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : job.remote.substr(0, slash);
  if (job.step == 0) {
    auto command = run("mkdir -p " + shell_quote(dir) + " && { test -x " + shell_quote(job.remote) + " || exit 1; }", {nullptr, exited});
    if (installs_.count(raw)) raw->command = std::move(command);  // else it failed at once and is gone
  } else if (job.step == 1) {
    TransferOptions options;
    options.local = job.local;
    options.remote = job.part;
    auto upload = SftpTransfer::start(session_, std::move(options), [this, raw](const TransferResult& r) {
      if (!r.error.empty()) return install_done(raw, "cannot upload " + raw->local + " to " + name_ + ": " + r.error);
      raw->step = 2;
      install_step(*raw);
    });
    if (upload) job.upload = std::move(*upload);
    else install_done(raw, std::string("cannot upload to ") + name_ + ": " + upload.error());
  } else {
    auto command = run("chmod 755 " + shell_quote(job.part) + " && mv -f " + shell_quote(job.part) + " " + shell_quote(job.remote), {nullptr, exited});
    if (installs_.count(raw)) raw->command = std::move(command);
  }
}

// Frees the job, then tells the caller. Called from the job's own command's or transfer's last
// callback, which may destroy that command or transfer (their contracts allow it).
void SshCommandTarget::install_done(Install* job, const std::string& error) {
  auto it = installs_.find(job);
  if (it == installs_.end()) return;
  auto done = std::move(job->done);
  installs_.erase(it);
  if (done) done(error);
}

}  // namespace runara::ssh
