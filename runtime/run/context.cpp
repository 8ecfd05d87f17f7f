// The Context primitives use: logging, waiting without blocking, secrets.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/json_limits.hpp"
#include "script/args.hpp"
#include "runara/command_target.hpp"
#include "script/values.hpp"
#include "base/redact_json.hpp"
#include "run/state.hpp"
#include "script/runara_binding.hpp"

namespace runara {

namespace {

// Wraps async C functions so that a wait ended by fail() raises its error at the script line
// that called the function (level 2: the caller of the wrapper; the calls to check are tail
// calls). A task whose wait was made through this wrapper is resumed with PENDING alone, and
// take() pushes the wait's values from inside the task: an allocation the memory cap refuses is
// then an error of the script, where it waited, not a LuaJIT panic on the event loop
// (Scheduler::run). The second value returned is check, by which suspend() knows the wrapper.
const char* const kAsyncShim = R"lua(
local FAIL, PENDING, take, error = ...
local select = select
local function check(...)
  if select("#", ...) > 0 then
    local first = ...
    if first == PENDING then return check(take()) end
    if first == FAIL then
      local _, message, with_location = ...
      error(message, with_location and 2 or 0)
    end
  end
  return ...
end
return function(fn) return function(...) return check(fn(...)) end end, check
)lua";

// take() in the shim: the values of the wait that just ended, pushed by the task itself.
int take_resume_values(lua_State* L) { return impl_of(L).scheduler_->take_resume_values(L); }

std::string elapsed_stamp(double seconds) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%8.3f] ", seconds);
  return stamp;
}

}  // namespace

// Text on its way to the terminal or run.log: secrets masked, then made visible (base/text.hpp:
// control bytes as cat -v shows them), then masked again when that changed anything, so a value
// that only appears once escapes are written out (a secret holding "^[", say) is masked too. The
// first pass matches the raw value, as everywhere else, with masks as long as the value
// (SecretMask untouched). Masks hold no control byte or line feed, so for a secret without one
// the escaping, and whether the second pass runs, depend on the text alone: no timing oracle.
// `indent` > 0: continuation lines of a log entry, indented by that much.
std::string Runtime::Impl::shown(std::string_view text, LineFeeds line_feeds, std::size_t indent) const {
  std::string out = redact(text);
  bool changed = make_visible(out, line_feeds);
  if (indent > 0 && out.find('\n') != std::string::npos) {
    out = indent_continuations(out, indent);
    changed = true;
  }
  return changed ? redact(out) : out;
}

// One log entry. Its text may be runara's own (a task's traceback spans lines: kept readable),
// a script's (runara.log, an error message, a chunk name in a traceback), a machine's or a
// server's, and one message often joins them ("task 3 failed: " + the script's error + a
// traceback): so the rule is on the entry, not its source. Only runara writes a line's start,
// the "[   1.234] " stamp; every later line of the entry is indented by the stamp's width, so no
// text can put a forged "[   0.001] ..." line at the start of a line of the terminal or run.log.
void Runtime::Impl::log(std::string_view line) { log_entry(line, ""); }

// runara.log's lines are the script's text from their first byte: "script: " after the stamp
// says so, so that a script's "creating droplet ..." or "ssh: connected ..." never reads as
// runara's own line in run.log or on the terminal.
void Runtime::Impl::script_log(std::string_view line) { log_entry(line, "script: "); }

void Runtime::Impl::log_entry(std::string_view line, std::string_view marker) {
  const std::string stamp = elapsed_stamp(monotonic_seconds() - started_at_);
  const std::string text = stamp + std::string(marker) + shown(line, LineFeeds::keep, stamp.size());
  output_.append_log(text);
  if (events_.log) {
    events_.log(text);
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
}

// What a primitive did, to the host as the primitive said it: only redacted (the host shows it
// as it needs; `runara plan` makes each field one visible line).
void Runtime::Impl::activity(const Activity& activity) {
  // A primitive's refusal for want of a grant is what the host hears of as `denied`, like the
  // runtime's own (--allow-read, --secret, --allow-env).
  if (activity.kind == Activity::Kind::grant_refused) return denied(redact(activity.text));
  if (activity.kind != Activity::Kind::script_limit) acted_ = true;  // a machine, a command, a file, a load
  if (!events_.activity) return;
  Activity shown_to_host = activity;
  for (std::string* field : {&shown_to_host.machine, &shown_to_host.text, &shown_to_host.size, &shown_to_host.region,
                             &shown_to_host.image})
    *field = redact(*field);
  events_.activity(shown_to_host);
}

// run.log gets a plain copy every few seconds, so a log read later (or tailed in CI) shows how
// a long load or boot went; only into a folder that exists already (progress creates none).
void Runtime::Impl::progress(std::string_view line) {
  const std::string clean = shown(line, LineFeeds::show);  // one line, redrawn in place
  if (output_.created() && log_progress_.due(monotonic_seconds())) {
    output_.append_log(elapsed_stamp(monotonic_seconds() - started_at_) + clean);
  }
  if (events_.progress) events_.progress(clean);
}

int Runtime::Impl::open_out_dir(std::string& error) {
  output_.dir();
  if (!output_.error().empty()) {
    error = output_.error();
    return -1;
  }
  const int fd = output_.dup_dir_fd();
  if (fd < 0) error = std::string("cannot use the output folder: ") + std::strerror(errno);
  return fd;
}

std::string Runtime::Impl::readable_path(const std::string& path, std::string& error) {
  return script_readable_path(*this, path, error);
}

// The script's standard output, and machine lines (s:exec, s:spawn): a script may print line
// feeds and tabs, nothing a terminal obeys; a CR shows as ^M (it would let a line overwrite
// another, a forged one over runara's own).
void Runtime::Impl::print(std::string_view text) {
  const std::string clean = shown(text, LineFeeds::keep);
  if (events_.print) {
    events_.print(clean);
  } else {
    std::fwrite(clean.data(), 1, clean.size(), stdout);
    std::fflush(stdout);
  }
}

// Secrets are scrubbed from each string (and key) before serializing: in serialized JSON a
// value with quotes or backslashes is escaped and would no longer match.
nlohmann::json Runtime::Impl::redact_json(const nlohmann::json& value) const {
  return runara::redact_json(value, [this](std::string_view text) { return redact(text); });
}

std::string Runtime::Impl::reserve_memory(std::size_t bytes, std::string_view what) {
  return memory_->reserve(bytes) ? std::string() : memory_->refusal(bytes, what);
}

// A result is kept as a JSON document until results.json is written: charged at what that
// document takes (json_tree_bytes: every value, member and string with its overhead), not its
// text's bytes (a table of short strings takes 10 to 30 times its text).
void Runtime::Impl::emit_result(lua_State* L, const std::string& name, const nlohmann::json& value) {
  const std::size_t size = json_tree_bytes(value.dump());
  const std::size_t previous = results_.contains(name) ? json_tree_bytes(results_[name].dump()) : 0;
  if (size > previous && !memory_->reserve(size - previous)) {
    args::raise(L, "runara.result: keeping '%s' would exceed the memory limit of %d MiB (--max-memory)",
                name.c_str(), static_cast<int>(heap_.limit() >> 20));
  }
  if (size < previous) memory_->release(previous - size);
  results_bytes_ = results_bytes_ - previous + size;
  results_[name] = redact_json(value);
  if (events_.result) events_.result(name, results_[name].dump());
}

std::string Runtime::Impl::secret_value(lua_State* L, int index) {
  const char* name = Secrets::handle_name(L, index);
  if (!name) luaL_argerror(L, index, "expected a secret handle (from runara.secret)");
  const std::string* value = secrets_.value(name);
  return value ? *value : std::string();
}

WaitId Runtime::Impl::suspend(lua_State* L, std::function<void()> on_cancel) {
  if (finalizing_) args::raise(L, "cannot wait inside a runara.at_exit function: the run is ending");
  if (stopping()) args::raise(L, "%s", stop_message().c_str());
  // Inside a gsub callback, a sort comparator, a metamethod or a module being required the
  // coroutine cannot yield: refuse before anything is registered or started.
  if (!lua_isyieldable(L)) {
    args::raise(L, "cannot wait here: waiting is not possible inside a callback called from C "
                  "(string.gsub, table.sort, metamethods, load readers, require); wait in the task itself");
  }
  if (interrupt_) args::raise(L, "interrupted");
  Task* task = scheduler_->task_of(L);
  if (task && deadline_passed(L, task)) args::raise(L, "deadline exceeded");
  const bool push_in_task = called_by_async_shim(L);
  const WaitId wait = scheduler_->suspend(L, std::move(on_cancel));
  scheduler_->task_of(L)->push_in_task = push_in_task;
  return wait;
}

void Runtime::Impl::resume(WaitId wait, std::function<int(lua_State*)> push) {
  scheduler_->resume(wait, std::move(push));
}

void Runtime::Impl::fail(WaitId wait, std::string message) {
  scheduler_->fail(wait, redact(message));
}

void Runtime::Impl::fail_usage(WaitId wait, std::string message) {
  usage_message_ = redact(message);
  scheduler_->fail(wait, usage_message_, false);
}

int Runtime::Impl::raise_usage(lua_State* L, const std::string& message) {
  usage_message_ = redact(message);
  lua_pushlstring(L, usage_message_.data(), usage_message_.size());
  return lua_error(L);
}

void Runtime::Impl::push_async(lua_State* L, lua_CFunction fn, int nup) {
  if (async_ref_ == LUA_NOREF) {
    luaL_loadbufferx(L, kAsyncShim, std::strlen(kAsyncShim), "=runara", "t");
    lua_pushlightuserdata(L, scheduler_->fail_marker());
    lua_pushlightuserdata(L, scheduler_->pending_marker());
    lua_pushcfunction(L, take_resume_values);
    lua_getglobal(L, "error");
    lua_call(L, 4, 2);
    async_check_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
    async_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_pushcclosure(L, fn, nup);
  lua_rawgeti(L, LUA_REGISTRYINDEX, async_ref_);
  lua_insert(L, -2);
  lua_call(L, 1, 1);
}

// Whether the C function running on L (level 0) was called by the push_async wrapper (level 1),
// whose first upvalue is the shim's check: then the wrapper receives the wait's values, and it
// can push them itself (see kAsyncShim). Runs in the waiting C function: pushes are protected.
bool Runtime::Impl::called_by_async_shim(lua_State* L) {
  if (async_check_ref_ == LUA_NOREF) return false;
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar)) return false;
  bool shim = false;
  if (lua_iscfunction(L, -1) == 0 && lua_getupvalue(L, -1, 1)) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, async_check_ref_);
    shim = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  return shim;
}

std::string caller_location(lua_State* L, int level) {
  // A primitive the stdlib calls for the script (droplet.create from sc:machine) reports its
  // argument errors at the script's line, as the stdlib's own errors do
  // (stdlib/runara/errors.lua): frames of the stdlib's modules are passed over, unless the stdlib
  // is all there is (a task it spawned).
  const std::string& stdlib_chunk = impl_of(L).stdlib_chunk_prefix_;
  std::string first;
  lua_Debug ar;
  for (int l = level; lua_getstack(L, l, &ar); ++l) {
    lua_getinfo(L, "Sl", &ar);
    // runara's own small Lua wrappers (chunks "=runara", "=watchdog", ...) are not where the
    // script made the call.
    const bool wrapper = ar.source && ar.source[0] == '=' && std::strncmp(ar.source, "=(", 2) != 0 &&
                         std::strcmp(ar.source, "=stdin") != 0;
    if (ar.currentline <= 0 || wrapper) continue;
    std::string here = std::string(ar.short_src) + ":" + std::to_string(ar.currentline);
    const bool stdlib = ar.source && std::strncmp(ar.source, stdlib_chunk.c_str(), stdlib_chunk.size()) == 0;
    if (!stdlib) return here;
    if (first.empty()) first = std::move(here);
  }
  return first.empty() ? "?" : first;
}

}  // namespace runara

namespace runara {

void Runtime::Impl::add_machine(RunMachine machine) {
  for (auto& known : machines_) {
    if (known.name == machine.name) {  // a refresh learnt an address: keep one entry per machine
      known = std::move(machine);
      return;
    }
  }
  machines_.push_back(std::move(machine));
}

// By the public address only: a private (VPC) address means this computer's LAN from here, so
// it never makes a host the run's own (the run's key, trust on first use, its secrets).
const RunMachine* Runtime::Impl::machine(std::string_view address) const {
  if (address.empty()) return nullptr;
  for (const auto& m : machines_) {
    if (m.address == address) return &m;
  }
  return nullptr;
}

void Runtime::Impl::remove_machine(std::string_view address) {
  if (address.empty()) return;
  std::vector<std::string> gone{std::string(address)};
  for (auto it = machines_.begin(); it != machines_.end(); ++it) {
    if (it->address != address) continue;
    if (!it->private_address.empty()) gone.push_back(it->private_address);
    machines_.erase(it);
    break;
  }
  const auto is_gone = [&gone](const std::string& host) { return std::find(gone.begin(), gone.end(), host) != gone.end(); };
  std::erase_if(reachable_, [&](const auto& entry) { return is_gone(entry.first); });
  std::erase_if(tunnels_, [&](const RunTunnel& t) { return is_gone(t.via) || is_gone(t.to); });
}

void Runtime::Impl::add_tunnel(RunTunnel tunnel) {
  remove_tunnel(tunnel.local_port);  // a port closed and taken again: the newest tunnel holds it
  tunnels_.push_back(std::move(tunnel));
}

void Runtime::Impl::remove_tunnel(int local_port) {
  std::erase_if(tunnels_, [local_port](const RunTunnel& t) { return t.local_port == local_port; });
}

void Runtime::Impl::add_command_target(lua_State* L, int index, std::weak_ptr<CommandTarget> target) {
  const void* key = lua_touserdata(L, index);
  if (!key) luaL_error(L, "add_command_target: the value at %d is not a userdata", index);
  for (auto it = command_targets_.begin(); it != command_targets_.end();) {  // forget closed ones
    it = it->second.expired() ? command_targets_.erase(it) : std::next(it);
  }
  command_targets_[key] = std::move(target);
}

std::shared_ptr<CommandTarget> Runtime::Impl::command_target(lua_State* L, int index) const {
  const void* key = lua_touserdata(L, index);
  if (!key) return nullptr;
  const auto it = command_targets_.find(key);
  return it == command_targets_.end() ? nullptr : it->second.lock();
}

}  // namespace runara
