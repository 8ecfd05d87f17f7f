// The `ssh` table: log into the run's droplets (or hosts granted with --allow-host) and run
// commands, move files and open tunnels there (docs/ssh.md). The work is the engine's
// (runtime/ssh/); this file holds connect, close, the session objects and teardown, which kills
// every remote process group and closes every session before the droplets go (ssh is
// registered after droplet, and primitives are torn down in reverse order, one after another).
//
//   local s = ssh.connect(d, { user = "root", timeout = 600 })
//   print(s:exec("nproc").stdout); s:close()
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "script/args.hpp"
#include "base/run_output.hpp"
#include "ssh_state.hpp"

namespace runara {
namespace sshb {

namespace {

char kSessionKey;  // registry key of the session userdata's metatable

struct SessionRef {
  std::weak_ptr<SessionBox> box;
};

// Leaves the file name safe: a machine name or an address, never a path.
std::string log_name(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 100)) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

}  // namespace

// --- MemoryHold -----------------------------------------------------------------------------

std::string MemoryHold::grow(std::size_t bytes, std::string_view what) {
  constexpr std::size_t kStep = 64u << 10;
  if (used_ + bytes > reserved_) {
    const std::size_t more = ((used_ + bytes - reserved_) + kStep - 1) / kStep * kStep;
    std::string refused = ctx_->reserve_memory(more, what);
    if (!refused.empty()) return refused;
    reserved_ += more;
  }
  used_ += bytes;
  return {};
}

void MemoryHold::shrink(std::size_t bytes) { used_ -= std::min(bytes, used_); }

void MemoryHold::reset() {
  if (reserved_) ctx_->release_memory(reserved_);
  reserved_ = used_ = 0;
}

// --- LogFile ----------------------------------------------------------------------------------

LogFile::~LogFile() {
  flush();
  if (fd_ >= 0) ::close(fd_);
}

void LogFile::open(Context& ctx, const std::string& name) {
  if (fd_ >= 0) return;
  std::string error;
  const int dir = ctx.open_out_dir(error);
  if (dir >= 0) {
    fd_ = open_beneath(dir, "ssh/" + log_name(name) + ".log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, error);
    ::close(dir);
  }
  if (fd_ < 0) ctx.log("ssh: cannot write ssh/" + log_name(name) + ".log: " + error);
}

void LogFile::line(Context& ctx, std::string_view text) {
  if (fd_ < 0) return;
  buffer_ += ctx.redact(text);
  buffer_ += '\n';
  if (buffer_.size() >= (64u << 10)) flush();
}

// Plain writes on the loop thread, as run.log's: local disk at page-cache speed.
void LogFile::flush() {
  std::size_t at = 0;
  while (fd_ >= 0 && at < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + at, buffer_.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

// --- SessionBox -------------------------------------------------------------------------------

SessionBox::~SessionBox() {
  // Everything riding on the session goes before it (their destructors detach from it).
  for (auto& [id, proc] : procs) {
    proc->exec.reset();
    proc->box = nullptr;
  }
  procs.clear();
  transfers.clear();
  drop_forwards();
  target.reset();
  session.reset();
}

void SessionBox::drop_forwards() {
  for (const auto& forward : forwards) ctx->remove_tunnel(forward->port());
  forwards.clear();
}

void SessionBox::proc_ended(Proc& proc) {
  auto keep = procs.find(proc.id);
  std::shared_ptr<Proc> held = keep == procs.end() ? nullptr : keep->second;
  if (keep != procs.end()) procs.erase(keep);
  proc.box = nullptr;
  if (closing && kills_pending > 0 && --kills_pending == 0) disconnect();
}

void SessionBox::close(std::function<void()> done) {
  if (done) on_closed.push_back(std::move(done));
  if (closing) return;
  closing = true;
  ctx->log("ssh: closing " + where() + (procs.empty() ? "" : ", killing " + std::to_string(procs.size()) +
                                                                    " remote process group(s) first"));
  // Waiting scripts learn why their transfer stopped; the transfers and tunnels stop now.
  for (auto& [id, t] : transfers) ctx->fail(t.wait, "ssh: the session to " + where() + " was closed during the transfer");
  transfers.clear();
  drop_forwards();
  target.reset();  // gpu_metrics and friends find no target from here on
  kills_pending = 0;
  for (auto& [id, proc] : procs)
    if (proc->exec && proc->exec->running()) ++kills_pending;
  if (kills_pending == 0) return disconnect();
  std::vector<std::shared_ptr<Proc>> running;
  for (auto& [id, proc] : procs) running.push_back(proc);
  for (auto& proc : running)
    if (proc->exec && proc->exec->running()) proc->exec->kill("TERM");  // KILL follows after the grace
}

void SessionBox::disconnect() {
  log.flush();
  auto finish = [this] {
    ctx->log("ssh: closed " + where());
    auto callbacks = std::move(on_closed);
    on_closed.clear();
    for (auto& cb : callbacks) cb();  // the last one may free this box
  };
  if (!session || session->state() == ssh::SshSession::State::Closed ||
      session->state() == ssh::SshSession::State::Failed) {
    return finish();
  }
  session->close([finish](const std::string&) { finish(); });
}

void SshRun::forget(SessionBox* box) {
  sessions.remove_if([box](const std::shared_ptr<SessionBox>& b) { return b.get() == box; });
}

// --- the Lua side ---------------------------------------------------------------------------

SshRun& run_of(lua_State* L) { return *static_cast<SshRun*>(lua_touserdata(L, lua_upvalueindex(1))); }

std::shared_ptr<SessionBox> check_session(lua_State* L, int index, const char* fn) {
  auto* ref = static_cast<SessionRef*>(lua_touserdata(L, index));
  bool ok = false;
  if (ref && lua_getmetatable(L, index)) {
    lua_pushlightuserdata(L, &kSessionKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    ok = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  if (!ok) args::fail(L, fn, index, "self", "an ssh session (call it with ':')");
  auto box = ref->box.lock();
  if (!box || box->closing) args::raise(L, "%s: the session is closed", fn);
  if (!box->session->ready())
    args::raise(L, "%s: the SSH connection to %s was lost: %s", fn, box->where().c_str(), box->session->error().c_str());
  return box;
}

namespace {

void push_session(lua_State* L, Context& ctx, const std::shared_ptr<SessionBox>& box) {
  auto* ref = static_cast<SessionRef*>(lua_newuserdata(L, sizeof(SessionRef)));
  new (ref) SessionRef{box};
  lua_pushlightuserdata(L, &kSessionKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
  ctx.add_command_target(L, -1, box->target);
}

// `cloud-init status --wait` once connected: the machine has finished its first boot.
void wait_cloud_init(Context& ctx, const std::shared_ptr<SessionBox>& box, std::function<void(std::string)> done) {
  ssh::ExecOptions o;
  o.command = "command -v cloud-init >/dev/null 2>&1 || exit 0; cloud-init status --wait >/dev/null";
  o.tail_bytes = 16u << 10;
  auto proc = std::make_shared<Proc>(ctx);
  proc->id = box->next_proc++;
  proc->box = box.get();
  box->procs[proc->id] = proc;
  ctx.progress("ssh: waiting for cloud-init on " + box->name);
  Proc* raw = proc.get();
  raw->exec = std::make_unique<ssh::SshExec>(*box->session, std::move(o), [raw, done](const ssh::ExecResult& r) {
    std::string error;
    if (!r.error.empty()) error = r.error;
    else if (r.exit_code.value_or(-1) != 0)
      error = "cloud-init status --wait ended with " +
              (r.signal.empty() ? "code " + std::to_string(r.exit_code.value_or(-1)) : "SIG" + r.signal) +
              (r.stderr_tail.empty() ? "" : ": " + r.stderr_tail.substr(0, 400));
    auto finish = done;  // the captures go with the exec, freed here (its last act is this call)
    Proc* p = raw;
    p->exec.reset();
    if (p->box) p->box->proc_ended(*p);
    finish(error);
  });
}

int connect(lua_State* L) {
  auto& run = run_of(L);
  Context& ctx = *run.ctx;
  LoginPlan plan = plan_login(L, ctx);
  const bool cloud_init = lua_type(L, 2) == LUA_TTABLE &&
                          args::opt_bool(L, 2, "ssh.connect", "wait_cloud_init").value_or(false);
  auto box = std::make_shared<SessionBox>(ctx);
  box->name = plan.name;
  box->host = plan.host;
  box->port = plan.port;
  box->user = plan.user;
  box->run_machine = plan.machine != nullptr;
  plan.options.accept_host_key = host_key_policy(run, *box, plan.machine);
  plan.options.connect_timeout_s = std::min(plan.options.connect_timeout_s, std::max(1.0, ctx.remaining_runtime_s()));
  SessionBox* raw = box.get();
  plan.options.on_retry = [raw](const std::string& status) { raw->ctx->progress("ssh: " + status); };
  box->session = std::make_unique<ssh::SshSession>(ctx.loop(), std::move(plan.options));
  const WaitId wait = ctx.suspend(L, [&run, raw] { run.forget(raw); });  // may raise: not kept yet
  run.sessions.push_back(box);
  std::weak_ptr<SessionBox> weak = box;
  auto ready = [&ctx, weak, wait] {
    auto b = weak.lock();
    if (!b) return;
    ctx.resume(wait, [&ctx, b](lua_State* co) {
      push_session(co, ctx, b);
      return 1;
    });
  };
  box->session->connect([&run, &ctx, weak, wait, cloud_init, ready](const std::string& error) {
    auto b = weak.lock();
    if (!b) return;
    if (!error.empty()) {
      const std::string why = b->host_key_error.empty() ? error : b->host_key_error;
      run.forget(b.get());  // frees the session: this is its last callback
      return ctx.fail(wait, "ssh.connect: " + why);
    }
    b->target = std::make_shared<ssh::SshCommandTarget>(*b->session, b->where(), b->host, b->port);
    b->log.open(ctx, b->name);
    ctx.log("ssh: connected to " + b->where() + " after " + std::to_string(b->session->attempts()) + " attempt(s)");
    if (!cloud_init) return ready();
    wait_cloud_init(ctx, b, [&run, &ctx, weak, wait, ready](std::string failed) {
      auto b2 = weak.lock();
      if (!b2) return;
      if (failed.empty()) return ready();
      b2->close([&run, raw = b2.get()] { run.forget(raw); });
      ctx.fail(wait, "ssh.connect: waiting for cloud-init on " + b2->name + ": " + failed);
    });
  });
  return ctx.yield(L);
}

int close_session(lua_State* L) {
  auto* ref = static_cast<SessionRef*>(luaL_checkudata(L, 1, "ssh session"));
  auto box = ref->box.lock();
  auto& run = run_of(L);
  Context& ctx = *run.ctx;
  if (!box) return 0;  // already closed: closing twice is harmless
  const WaitId wait = ctx.suspend(L, {});
  box->close([&run, &ctx, raw = box.get(), wait] {
    run.forget(raw);
    ctx.resume(wait, [](lua_State*) { return 0; });
  });
  return ctx.yield(L);
}

int session_index(lua_State* L) {
  auto* ref = static_cast<SessionRef*>(lua_touserdata(L, 1));
  const char* key = lua_tostring(L, 2);
  auto box = ref ? ref->box.lock() : nullptr;
  if (key && box) {
    const std::string k = key;
    if (k == "name") return lua_pushstring(L, box->name.c_str()), 1;
    if (k == "host") return lua_pushstring(L, box->host.c_str()), 1;
    if (k == "user") return lua_pushstring(L, box->user.c_str()), 1;
    if (k == "port") return lua_pushinteger(L, box->port), 1;
  }
  if (key && std::string(key) == "closed") return lua_pushboolean(L, !box || box->closing), 1;
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));  // the methods
  return 1;
}

int session_tostring(lua_State* L) {
  auto* ref = static_cast<SessionRef*>(lua_touserdata(L, 1));
  auto box = ref ? ref->box.lock() : nullptr;
  lua_pushfstring(L, "ssh session %s%s", box ? box->where().c_str() : "?", box && !box->closing ? "" : " (closed)");
  return 1;
}

int session_gc(lua_State* L) {
  static_cast<SessionRef*>(lua_touserdata(L, 1))->~SessionRef();
  return 0;
}

class SshPrimitive final : public Primitive {
 public:
  std::string name() const override { return "ssh"; }

  void open(lua_State* L, Context& ctx) override {
    run_ = std::make_unique<SshRun>(ctx);
    open_process_metatable(L, ctx);
    lua_pushlightuserdata(L, &kSessionKey);
    luaL_newmetatable(L, "ssh session");
    lua_newtable(L);  // methods
    add(L, ctx, "exec", session_exec, true);
    add(L, ctx, "spawn", session_spawn, false);
    add(L, ctx, "upload", session_upload, true);
    add(L, ctx, "download", session_download, true);
    add(L, ctx, "forward", session_forward, false);
    add(L, ctx, "close", close_session, true);
    lua_pushcclosure(L, session_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, session_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, session_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushliteral(L, "ssh session");
    lua_setfield(L, -2, "__metatable");
    lua_rawset(L, LUA_REGISTRYINDEX);

    lua_newtable(L);
    add(L, ctx, "connect", connect, true);
  }

  // Every remote process group is killed and every session closed; this must finish before
  // the droplets are destroyed (teardown runs primitives in reverse order, one at a time).
  void teardown(Context& ctx, std::function<void(std::string)> done) override {
    if (!run_ || run_->sessions.empty()) return done({});
    auto pending = std::make_shared<std::size_t>(run_->sessions.size());
    ctx.log("ssh: teardown: closing " + std::to_string(run_->sessions.size()) + " session(s)");
    auto sessions = run_->sessions;  // close() may forget boxes while we iterate
    for (auto& box : sessions) {
      box->close([this, pending, done, raw = box.get()] {
        run_->forget(raw);
        if (--*pending == 0) done({});
      });
    }
  }

  std::string pending_teardown() const override {
    if (!run_ || run_->sessions.empty()) return {};
    return "closing " + std::to_string(run_->sessions.size()) + " ssh session(s)";
  }

 private:
  void add(lua_State* L, Context& ctx, const char* name, lua_CFunction fn, bool waits) {
    lua_pushlightuserdata(L, run_.get());
    if (waits) ctx.push_async(L, fn, 1);
    else lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }

  std::unique_ptr<SshRun> run_;
};

}  // namespace
}  // namespace sshb

std::unique_ptr<Primitive> make_ssh_primitive() { return std::make_unique<sshb::SshPrimitive>(); }

}  // namespace runara
