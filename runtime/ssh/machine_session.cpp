#include "ssh/machine_session.hpp"

#include <uv.h>

#include "base/text.hpp"

namespace runara::ssh {

namespace {

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

MachineSession::~MachineSession() {
  // Everything riding on the connection goes before it (their destructors detach from it).
  for (auto& [id, process] : processes_) {
    process->exec_.reset();
    process->session_ = nullptr;
  }
  processes_.clear();
  transfers_.clear();
  drop_forwards();
  target_.reset();
  ssh_.reset();
}

std::string MachineSession::where() const {
  return login_.name + " (" + login_.user + "@" + login_.host + ":" + std::to_string(login_.port) + ")";
}

Status MachineSession::check_usable() const {
  if (closing_) return Error{"the session is closed"};
  if (!ssh_->ready()) return Error{"the SSH connection to " + where() + " was lost: " + ssh_->error()};
  return {};
}

void MachineSession::connected() {
  target_ = std::make_shared<SshCommandTarget>(*ssh_, where(), login_.host, login_.port);
  log_.open(*hooks_, login_.name);
}

Result<std::shared_ptr<RemoteProcess>> MachineSession::start_process(ExecOptions o, ProcessKind kind, bool quiet) {
  auto p = std::make_shared<RemoteProcess>(*hooks_, command_label(o.command), kind, quiet);
  std::weak_ptr<RemoteProcess> weak = p;
  if (kind != ProcessKind::internal) {
    o.tail_bytes = kOutputTail;
    o.on_stdout = [weak](std::string_view line) {
      if (auto q = weak.lock()) q->on_line(0, line);
    };
    o.on_stderr = [weak](std::string_view line) {
      if (auto q = weak.lock()) q->on_line(1, line);
    };
    log_.line("$ " + indent_continuations(o.command, 2));  // one entry, however many lines
    if (hooks_->activity) {
      Activity command;
      command.kind = Activity::Kind::command;
      command.machine = login_.name;
      command.text = o.command;
      hooks_->activity(command);
    }
  }
  RemoteProcess* raw = p.get();
  auto exec = SshExec::start(*ssh_, std::move(o), [weak, raw](const ExecResult& r) {
    auto q = weak.lock();
    if (!q) return;
    q->finished(r);
    // Its last act is this call: freeing it here is allowed, and must come before
    // process_ended, which may end a close() and free the session. From here on only locals
    // are used (the captures went with the exec).
    raw->exec_.reset();
    if (MachineSession* s = q->session_) s->process_ended(*q);
  });
  if (!exec) return Error{exec.error()};
  p->exec_ = std::move(*exec);
  p->id_ = next_process_++;
  p->session_ = this;
  processes_[p->id_] = p;
  return p;
}

void MachineSession::process_ended(RemoteProcess& process) {
  auto found = processes_.find(process.id_);
  std::shared_ptr<RemoteProcess> held = found == processes_.end() ? nullptr : found->second;
  if (found != processes_.end()) processes_.erase(found);
  process.session_ = nullptr;
  if (closing_ && kills_pending_ > 0 && --kills_pending_ == 0) disconnect();
}

// The transfer's two blocks (a download's twice a block each) are filled at once: held from
// --max-memory for as long as the transfer lives (transfers on other sessions run in parallel).
Result<std::shared_ptr<void>> MachineSession::reserve_transfer(const TransferOptions& o) {
  const bool up = o.direction == TransferOptions::Direction::Upload;
  const std::size_t buffers = (up ? 2 : 4) * o.block_bytes;
  if (Status taken = hooks_->reserve_memory(buffers, "an SFTP transfer"); !taken) return Error{taken.error()};
  const RunHooks* hooks = hooks_;
  return std::shared_ptr<void>(nullptr, [hooks, buffers](void*) { hooks->release_memory(buffers); });
}

Result<std::uint64_t> MachineSession::transfer(std::shared_ptr<void> reserved, TransferOptions o, std::string what,
                                               TransferDone done) {
  const std::uint64_t id = next_transfer_++;
  auto last = std::make_shared<double>(0);
  const RunHooks* hooks = hooks_;
  o.progress = [hooks, last, what, name = login_.name](const std::string& path, std::uint64_t done_bytes,
                                                       std::uint64_t size, std::uint64_t) {
    const double now = static_cast<double>(uv_hrtime()) / 1e9;
    if (size < (64u << 20) || now - *last < 1) return;  // only large files, once a second
    *last = now;
    hooks->progress(what + " " + name + ": " + path + " " + mib(done_bytes) + " / " + mib(size));
  };
  const bool up = o.direction == TransferOptions::Direction::Upload;
  const std::string moved = what + " " + (up ? o.local + " -> " + o.remote : o.remote + " -> " + o.local);
  const std::string line = moved + ": ";
  if (hooks_->activity) {  // as it starts: a transfer the run did not live to finish was still tried
    Activity transfer;
    transfer.kind = Activity::Kind::transfer;
    transfer.machine = login_.name;
    transfer.text = moved;
    hooks_->activity(transfer);
  }
  auto t = SftpTransfer::start(*ssh_, std::move(o), [this, id, line, reserved](const TransferResult& r) {
    auto node = transfers_.extract(id);  // freed at the end of this call: its last act
    if (node.empty()) return;
    if (!r.error.empty()) {
      log_.line("# " + line + r.error);
      return node.mapped().done(Error{r.error});
    }
    log_.line("# " + line + std::to_string(r.files) + " file(s), " + std::to_string(r.bytes) + " bytes in " +
              std::to_string(r.seconds).substr(0, 6) + " s");
    node.mapped().done(r);
  });
  if (!t) return Error{t.error()};
  transfers_[id] = Transfer{std::move(*t), std::move(done)};
  return id;
}

Result<int> MachineSession::forward(const std::string& host, int port) {
  auto forward = PortForward::open(ssh_->loop(), *ssh_, host, port);
  if (!forward) return Error{forward.error()};
  const int local = (*forward)->port();
  forwards_.push_back(std::move(*forward));
  hooks_->log("ssh: forwarding 127.0.0.1:" + std::to_string(local) + " to " + host + ":" + std::to_string(port) + " on " +
              where());
  return local;
}

void MachineSession::drop_forwards() {
  for (const auto& forward : forwards_) hooks_->remove_tunnel(forward->port());
  forwards_.clear();
}

void MachineSession::close(std::function<void()> done) {
  if (done) on_closed_.push_back(std::move(done));
  if (closing_) return;
  closing_ = true;
  hooks_->log("ssh: closing " + where() +
              (processes_.empty() ? "" : ", killing " + std::to_string(processes_.size()) + " remote process group(s) first"));
  // Waiting scripts learn why their transfer stopped; the transfers and tunnels stop now.
  auto transfers = std::move(transfers_);
  transfers_.clear();
  for (auto& [id, t] : transfers) t.done(Error{"the session was closed during the transfer"});
  transfers.clear();
  drop_forwards();
  target_.reset();  // gpu_metrics and friends find no target from here on
  kills_pending_ = 0;
  for (auto& [id, process] : processes_)
    if (process->exec_ && process->exec_->running()) ++kills_pending_;
  if (kills_pending_ == 0) return disconnect();
  std::vector<std::shared_ptr<RemoteProcess>> running;
  for (auto& [id, process] : processes_) running.push_back(process);
  for (auto& process : running) process->kill("TERM");  // KILL follows after the grace
}

void MachineSession::disconnect() {
  log_.flush();
  auto finish = [this] {
    hooks_->log("ssh: closed " + where());
    auto callbacks = std::move(on_closed_);
    on_closed_.clear();
    for (auto& cb : callbacks) cb();  // the last one may free this session
  };
  if (!ssh_ || ssh_->state() == SshSession::State::Closed || ssh_->state() == SshSession::State::Failed) return finish();
  ssh_->close([finish](Status) { finish(); });
}

}  // namespace runara::ssh
