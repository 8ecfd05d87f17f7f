#include "ssh/ssh_command_target.hpp"

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

SshCommandTarget::SshCommandTarget(SshSession& session, std::string name)
    : session_(session), name_(std::move(name)) {}

SshCommandTarget::~SshCommandTarget() {
  *alive_ = false;
  dying_.clear();  // execs freed before their session (the owner's contract); no callbacks
}

std::unique_ptr<CommandTarget::Running> SshCommandTarget::run(const std::string& command, Handlers handlers) {
  auto job = std::make_shared<Job>();
  job->handlers = std::move(handlers);
  ExecOptions options;
  options.command = command;
  options.tail_bytes = kTargetTail;
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
  try {
    job->exec = std::make_unique<SshExec>(session_, std::move(options), std::move(done));
  } catch (const std::exception& e) {
    // Could not start (session gone): report it the way a lost command is reported, at once.
    Exit exit;
    exit.error = std::string("cannot run on ") + name_ + ": " + e.what();
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

}  // namespace runara::ssh
