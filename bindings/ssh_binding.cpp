// The `ssh` table: log into the run's droplets (or hosts granted with --allow-host) and run
// commands, move files and open tunnels there (docs/ssh.md). The work is the engine's
// (runtime/ssh/run_sessions.hpp: sessions, processes, transfers, teardown); this file holds
// ssh.connect, s:close, the session objects, and the primitive, whose teardown has the engine
// kill every remote process group and close every session before the droplets go (ssh is
// registered after droplet, and primitives are torn down in reverse order, one after another).
//
//   local s = ssh.connect(d, { user = "root", timeout = 600 })
//   print(s:exec("nproc").stdout); s:close()
#include "kit/functions.hpp"
#include "kit/wait.hpp"
#include "script/args.hpp"
#include "ssh_state.hpp"

namespace runara {
namespace sshb {

SshRun& run_of(lua_State* L) { return *static_cast<SshRun*>(lua_touserdata(L, lua_upvalueindex(1))); }

std::shared_ptr<ssh::MachineSession> check_session(lua_State* L, int index, const char* fn) {
  auto& ref = SessionObject::check(L, index, fn, "an ssh session (call it with ':')");
  auto session = ref.session.lock();
  if (!session) args::raise(L, "%s: the session is closed", fn);
  if (Status usable = session->check_usable(); !usable) args::raise(L, "%s: %s", fn, usable.error().c_str());
  return session;
}

namespace {

// What the engine needs of the run, from its Context.
ssh::RunHooks hooks_of(Context& ctx) {
  ssh::RunHooks h;
  h.log = [&ctx](std::string_view line) { ctx.log(line); };
  h.progress = [&ctx](std::string_view line) { ctx.progress(line); };
  h.print = [&ctx](std::string_view text) { ctx.print(text); };
  h.redact = [&ctx](std::string_view text) { return ctx.redact(text); };
  h.reserve_memory = [&ctx](std::size_t bytes, std::string_view what) { return status_from(ctx.reserve_memory(bytes, what)); };
  h.release_memory = [&ctx](std::size_t bytes) { ctx.release_memory(bytes); };
  h.open_out_dir = [&ctx]() -> Result<int> {
    std::string error;
    const int fd = ctx.open_out_dir(error);
    if (fd < 0) return Error{error};
    return fd;
  };
  h.remove_tunnel = [&ctx](int port) { ctx.remove_tunnel(port); };
  h.remaining_runtime_s = [&ctx] { return ctx.remaining_runtime_s(); };
  h.activity = [&ctx](const Activity& activity) { ctx.activity(activity); };
  return h;
}

void push_session(lua_State* L, Context& ctx, const std::shared_ptr<ssh::MachineSession>& session) {
  SessionObject::push(L, SessionRef{session});
  ctx.add_command_target(L, -1, session->command_target());
}

int connect(lua_State* L) {
  auto& run = run_of(L);
  Context& ctx = *run.ctx;
  ssh::ConnectPlan plan = plan_login(L, ctx);
  const bool cloud_init = plan.wait_cloud_init;
  auto session = run.sessions.prepare(std::move(plan));
  // Cancelled (the task stopped waiting): the session is dropped, whatever stage it reached.
  auto wait = kit::Wait::start(L, "ssh.connect", [&run, raw = session.get()] { run.sessions.forget(raw); });
  run.sessions.connect(session, cloud_init, [wait, &ctx](Result<std::shared_ptr<ssh::MachineSession>> connected) {
    wait->settle<std::shared_ptr<ssh::MachineSession>>(std::move(connected), [&ctx](lua_State* co, auto& s) {
      push_session(co, ctx, s);
      return 1;
    });
  });
  return wait->yield(L);
}

int close_session(lua_State* L) {
  auto session = SessionObject::check(L, 1, "s:close", "an ssh session (call it with ':')").session.lock();
  if (!session) return 0;  // already closed: closing twice is harmless
  auto wait = kit::Wait::start(L, "s:close");
  run_of(L).sessions.close(session, [wait] { wait->resume_nothing(); });
  return wait->yield(L);
}

// name, host, user, port and closed are read from the session; the rest are methods.
int session_index(lua_State* L) {
  auto* ref = SessionObject::test(L, 1);
  const char* key = lua_tostring(L, 2);
  auto session = ref ? ref->session.lock() : nullptr;
  if (key && session) {
    const std::string k = key;
    const auto& login = session->login();
    if (k == "name") return lua_pushstring(L, login.name.c_str()), 1;
    if (k == "host") return lua_pushstring(L, login.host.c_str()), 1;
    if (k == "user") return lua_pushstring(L, login.user.c_str()), 1;
    if (k == "port") return lua_pushinteger(L, login.port), 1;
  }
  if (key && std::string(key) == "closed") return lua_pushboolean(L, !session || session->closing()), 1;
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));  // the methods
  return 1;
}

int session_tostring(lua_State* L) {
  auto* ref = SessionObject::test(L, 1);
  auto session = ref ? ref->session.lock() : nullptr;
  lua_pushfstring(L, "ssh session %s%s", session ? session->where().c_str() : "?",
                  session && !session->closing() ? "" : " (closed)");
  return 1;
}

class SshPrimitive final : public Primitive {
 public:
  std::string name() const override { return "ssh"; }

  void open(lua_State* L, Context& ctx) override {
    run_ = std::make_unique<SshRun>(ctx, hooks_of(ctx));
    define_process_object(L, ctx);
    using kit::Waits;
    SessionObject::define(L, ctx, "ssh session",
                          {{"exec", session_exec, Waits::yes},
                           {"spawn", session_spawn},
                           {"upload", session_upload, Waits::yes},
                           {"download", session_download, Waits::yes},
                           {"forward", session_forward},
                           {"close", close_session, Waits::yes}},
                          {session_index, session_tostring}, run_.get());
    lua_newtable(L);
    kit::set_functions(L, ctx, {{"connect", connect, Waits::yes}}, run_.get());
  }

  // Every remote process group is killed and every session closed; this must finish before
  // the droplets are destroyed (teardown runs primitives in reverse order, one at a time).
  void teardown(Context&, std::function<void(std::string)> done) override {
    if (!run_) return done({});
    run_->sessions.close_all([done] { done({}); });
  }

  std::string pending_teardown() const override { return run_ ? run_->sessions.pending() : ""; }

 private:
  std::unique_ptr<SshRun> run_;
};

}  // namespace
}  // namespace sshb

std::unique_ptr<Primitive> make_ssh_primitive() { return std::make_unique<sshb::SshPrimitive>(); }

}  // namespace runara
