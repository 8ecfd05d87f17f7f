// s:exec and s:spawn (whose process objects live in ssh_process_object.cpp). Each command's
// output goes live to the terminal (prefixed with the machine's name,
// unless quiet), to ssh/<machine>.log in the output folder, and into bounded tails (8 MiB per
// stream) counted against --max-memory; spawn also queues stdout lines for :lines() (bounded,
// oldest dropped). Env values may be secret handles: they reach the remote shell on stdin, never
// a command line, and a granted host gets one only with --secret NAME@HOST.
#include <algorithm>

#include "script/args.hpp"
#include "runara/runtime.hpp"
#include "base/text.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

constexpr std::size_t kTail = 8u << 20;        // per stream, as the engine keeps
constexpr std::size_t kQueueMax = 4u << 20;    // :lines() backlog (queued_line_cost) before the oldest lines go
constexpr std::size_t kCheckTail = 2u << 10;   // stderr quoted by check = true

std::string label_of(const std::string& command) {
  std::string first = command.substr(0, command.find('\n'));
  if (first.size() > 80) first = first.substr(0, 77) + "...";
  return first + (first.size() < command.size() && command.find('\n') != std::string::npos ? " ..." : "");
}

// Why exec with check = true fails, or "" when it succeeded.
std::string check_failure(const Proc& p, const std::string& where) {
  const auto& r = p.result;
  std::string what;
  if (r.timed_out) what = "timed out (its process group was killed with SIG" + r.signal + ")";
  else if (!r.signal.empty()) what = "was killed by SIG" + r.signal;
  else if (r.exit_code.value_or(-1) != 0) what = "exited with code " + std::to_string(r.exit_code.value_or(-1));
  else return {};
  std::string tail = r.stderr_tail.size() > kCheckTail ? "..." + r.stderr_tail.substr(r.stderr_tail.size() - kCheckTail)
                                                       : r.stderr_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return "s:exec on " + where + ": `" + p.label + "` " + what +
         (tail.empty() ? " (no stderr)" : "; stderr ends with:\n" + tail);
}

void count(Proc& p, int stream, std::size_t bytes) {
  if (!p.memory_error.empty()) return;
  const std::size_t add = std::min(bytes, kTail - std::min(kTail, p.counted[stream]));
  p.counted[stream] += add;
  if (add == 0) return;
  std::string refused = p.memory.grow(add, "ssh output of `" + p.label + "`");
  if (refused.empty()) return;
  p.memory_error = refused;
  if (p.exec && p.exec->running()) p.exec->kill("TERM");
}

// A waiting :lines() or :wait() gets what it waited for.
void wake(Context& ctx, const std::shared_ptr<Proc>& p) {
  if (p->waiting == Proc::Waiting::line && (!p->lines.empty() || p->done)) {
    p->waiting = Proc::Waiting::none;
    std::string line;
    bool have = !p->lines.empty();
    if (have) line = p->take_line();
    ctx.resume(p->waiter, [have, line = std::move(line)](lua_State* L) {
      if (have) lua_pushlstring(L, line.data(), line.size());
      else lua_pushnil(L);
      return 1;
    });
  } else if (p->waiting == Proc::Waiting::exit && p->done) {
    p->waiting = Proc::Waiting::none;
    ctx.resume(p->waiter, [p](lua_State* L) {
      push_exec_result(L, *p);
      return 1;
    });
  }
}

void on_line(Context& ctx, const std::shared_ptr<Proc>& p, int stream, std::string_view line) {
  SessionBox* box = p->box;
  if (box) {
    // runara's own lines in ssh/<name>.log start with "$ " (a command) or "# " (its ending, a
    // transfer); a machine's line that starts so is indented, so it cannot pass for one (runara
    // plan counts commands and files from this log).
    const bool looks_own = !line.empty() && (line[0] == '$' || line[0] == '#');
    if (stream == 0) box->log.line(ctx, looks_own ? " " + std::string(line) : std::string(line));
    else box->log.line(ctx, "[stderr] " + std::string(line));
    if (!p->quiet) ctx.print("[" + box->name + "] " + std::string(line) + "\n");
  }
  count(*p, stream, line.size() + 1);
  if (stream != 0 || !p->spawned || !p->memory_error.empty()) return;
  // Charged at what the line costs in memory, not its bytes (an empty line is not free), so the
  // backlog's bound bounds memory.
  const std::size_t cost = queued_line_cost(p->lines.emplace_back(line));
  p->queued_bytes += cost;
  if (!p->memory.grow(cost, "ssh output of `" + p->label + "`").empty()) {
    p->memory_error = "ssh: the :lines() backlog of `" + p->label + "` would pass --max-memory";
    if (p->exec && p->exec->running()) p->exec->kill("TERM");
  }
  while (p->queued_bytes > kQueueMax && p->lines.size() > 1) {
    p->take_line();
    if (p->dropped_lines++ == 0) ctx.log("ssh: `" + p->label + "`: :lines() is not keeping up; dropping the oldest lines (all are in the log)");
  }
  wake(ctx, p);
}

ssh::EnvList read_env(lua_State* L, int opts, const char* fn, SessionBox& box, Context& ctx) {
  ssh::EnvList env;
  lua_pushliteral(L, "env");
  lua_rawget(L, opts);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return env;
  }
  if (!lua_istable(L, -1)) args::raise(L, "%s: option 'env' must be a table of NAME = value, got %s", fn, luaL_typename(L, -1));
  const int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING) args::raise(L, "%s: option 'env': names must be strings", fn);
    const std::string name = lua_tostring(L, -2);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
      env.emplace_back(name, lua_tostring(L, -1));
    } else if (const std::string name_of_secret = ctx.secret_name(L, -1); !name_of_secret.empty()) {
      const char* secret = name_of_secret.c_str();
      if (!box.run_machine) {
        const auto& dest = ctx.permissions().secret_destinations;
        auto it = dest.find(secret);
        const std::string hp = box.host + ":" + std::to_string(box.port);
        const bool ok = it != dest.end() && std::any_of(it->second.begin(), it->second.end(), [&](const std::string& d) {
                          return d == box.host || d == hp;
                        });
        if (!ok)
          args::raise(L, "%s: option 'env': secret %s may not be sent to %s: a secret goes only to the run's own "
                      "machines and to hosts bound to it (run with --secret %s@%s)", fn, secret, hp.c_str(), secret, hp.c_str());
      }
      env.emplace_back(name, ctx.secret_value(L, -1));
    } else {
      args::raise(L, "%s: option 'env': %s must be a string or a secret handle (runara.secret), got %s", fn,
                  name.c_str(), luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return env;
}

struct Started {
  std::shared_ptr<Proc> proc;
  bool check = true;
};

Started start(lua_State* L, const char* fn, bool spawned) {
  auto box = check_session(L, 1, fn);
  Context& ctx = *box->ctx;
  ssh::ExecOptions o;
  o.command = args::string(L, 2, fn, "command");
  Started s;
  auto p = std::make_shared<Proc>(ctx);
  p->spawned = spawned;
  p->label = label_of(o.command);
  if (!lua_isnoneornil(L, 3)) {
    args::table(L, 3, fn, "options");
    if (spawned) args::only_fields(L, 3, fn, {"timeout", "env", "stdin", "quiet"});
    else args::only_fields(L, 3, fn, {"timeout", "env", "stdin", "check", "quiet"});
    const double timeout = args::opt_number(L, 3, fn, "timeout").value_or(0);
    if (timeout < 0) args::raise(L, "%s: option 'timeout' must be a number of seconds >= 0 (0: none)", fn);
    o.timeout_s = timeout;
    o.stdin_data = args::opt_string(L, 3, fn, "stdin").value_or("");
    if (!spawned) s.check = args::opt_bool(L, 3, fn, "check").value_or(true);
    p->quiet = args::opt_bool(L, 3, fn, "quiet").value_or(false);
    o.env = read_env(L, 3, fn, *box, ctx);
  }
  o.tail_bytes = kTail;
  p->id = box->next_proc++;
  p->box = box.get();
  std::weak_ptr<Proc> weak = p;
  Context* c = &ctx;
  o.on_stdout = [c, weak](std::string_view line) {
    if (auto q = weak.lock()) on_line(*c, q, 0, line);
  };
  o.on_stderr = [c, weak](std::string_view line) {
    if (auto q = weak.lock()) on_line(*c, q, 1, line);
  };
  box->log.line(ctx, "$ " + indent_continuations(o.command, 2));  // one entry, however many lines
  Proc* raw = p.get();
  try {
    p->exec = std::make_unique<ssh::SshExec>(*box->session, std::move(o), [c, weak, raw](const ssh::ExecResult& r) {
      auto q = weak.lock();
      if (!q) return;
      q->done = true;
      q->result = r;
      if (SessionBox* b = q->box) {
        b->log.line(*c, "# `" + q->label + "` " +
                            (r.exit_code ? "exited with code " + std::to_string(*r.exit_code)
                                         : r.signal.empty() ? "failed: " + r.error : "was killed by SIG" + r.signal) +
                            " after " + std::to_string(r.seconds).substr(0, 6) + " s");
        b->log.flush();
      }
      wake(*c, q);
      if (auto finish = std::move(q->on_done)) {
        q->on_done = nullptr;
        finish();
      }
      // Its last act is this call: freeing it here is allowed, and must come before proc_ended,
      // which may end a close() and free the session. From here on only locals are used (the
      // captures went with the exec).
      raw->exec.reset();
      if (SessionBox* b = q->box) b->proc_ended(*q);
    });
  } catch (const std::exception& e) {
    args::raise(L, "%s: %s", fn, e.what());
  }
  box->procs[p->id] = p;
  s.proc = p;
  return s;
}

int exec(lua_State* L) {
  Started s = start(L, "s:exec", false);
  Context& ctx = *s.proc->box->ctx;
  const std::string where = s.proc->box->where();
  auto p = s.proc;
  const WaitId wait = ctx.suspend(L, [p] {
    p->on_done = nullptr;
    if (p->exec && p->exec->running()) p->exec->kill("TERM");  // the task is gone: so is its command
  });
  p->on_done = [&ctx, p, wait, where, check = s.check] {
    if (!p->result.error.empty())
      return ctx.fail(wait, "s:exec on " + where + ": `" + p->label + "`: " + p->result.error);
    if (!p->memory_error.empty())
      return ctx.fail(wait, "s:exec on " + where + ": `" + p->label + "` was stopped: " + p->memory_error);
    if (check) {
      const std::string why = check_failure(*p, where);
      if (!why.empty()) return ctx.fail(wait, why);
    }
    ctx.resume(wait, [p](lua_State* co) {
      push_exec_result(co, *p);
      p->result = {};
      p->memory.reset();
      return 1;
    });
  };
  return ctx.yield(L);
}

}  // namespace

int session_exec(lua_State* L) { return exec(L); }

void push_exec_result(lua_State* L, const Proc& p) {
  const auto& r = p.result;
  lua_createtable(L, 0, 7);
  if (r.exit_code) {
    lua_pushinteger(L, *r.exit_code);
    lua_setfield(L, -2, "code");
  }
  lua_pushlstring(L, r.stdout_tail.data(), r.stdout_tail.size());
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, r.stderr_tail.data(), r.stderr_tail.size());
  lua_setfield(L, -2, "stderr");
  lua_pushnumber(L, r.seconds);
  lua_setfield(L, -2, "seconds");
  if (!r.signal.empty()) {
    lua_pushstring(L, r.signal.c_str());
    lua_setfield(L, -2, "signal");
  }
  if (r.timed_out) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "timed_out");
  }
  lua_pushnumber(L, static_cast<lua_Number>(r.stdout_bytes));
  lua_setfield(L, -2, "stdout_bytes");
  lua_pushnumber(L, static_cast<lua_Number>(r.stderr_bytes));
  lua_setfield(L, -2, "stderr_bytes");
  if (!r.error.empty() || !p.memory_error.empty()) {
    const std::string& e = r.error.empty() ? p.memory_error : r.error;
    lua_pushlstring(L, e.data(), e.size());
    lua_setfield(L, -2, "error");
  }
}


int session_spawn(lua_State* L) {
  Started s = start(L, "s:spawn", true);
  push_process(L, s.proc);
  return 1;
}

}  // namespace runara::sshb
