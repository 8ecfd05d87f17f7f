// How a primitive (droplet, ssh, http_load, ... or a host's own) plugs into a run.
//
// A primitive is a global table scripts see. Its functions are lua_CFunctions that reach the run
// through the Context. A function that waits never blocks: it starts the operation on the event
// loop, suspends the calling task and yields; a loop callback later resumes or fails the task.
//
//   static int sleep_fn(lua_State* L) {
//     auto& ctx = runara::Context::from(L);
//     runara::WaitId w = ctx.suspend(L, [timer] { stop(timer); });   // on_cancel
//     start_timer(ctx.loop(), [&ctx, w] { ctx.resume(w, [](lua_State*) { return 0; }); });
//     return ctx.yield(L);
//   }
//   ctx.push_async(L, sleep_fn);   // registers it: errors from fail() are raised at the caller
#pragma once

#include "runara/export.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <lua.hpp>

#include "runara/memory_budget.hpp"
#include "runara/machine_routes.hpp"
#include "runara/secret_mask.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

struct Permissions;
struct Options;
struct Activity;
class CommandTarget;
using WaitId = std::uint64_t;

// A machine the run itself created (a droplet), as the primitives that log into it see it.
struct RunMachine {
  std::string name;             // the droplet's name, e.g. "llm-20261123-1"
  std::string address;          // public IPv4 (what ssh connects to)
  std::string private_address;  // "" when none
  // The run's own private key (OpenSSH format) when the machine was created with it; "" when
  // the script passed its own ssh_keys. Never reaches Lua, logs or results.
  std::string ssh_private_key;
  // Records the machine's SSH host key fingerprint for trust on first use (e.g. in the ledger).
  // May be empty.
  std::function<void(const std::string& fingerprint)> pin_host_key;
  // How to reach it where the plain way does not (a stand-in cloud's machine; see
  // machine_routes.hpp). Default: ssh to `address`:22, its own 127.0.0.1 for its services.
  MachineRoute route;
};

// A tunnel the run opened (s:forward): connections to 127.0.0.1:local_port go through an SSH
// session into the machine `via` and, from there, on to `to`. Primitives that send traffic may
// reach it without an --allow-host grant (it was checked when it was opened), but it is judged as
// the machines it leads to, never as loopback: a secret goes through it only where that secret
// may go to `via` (and to `to`, when the tunnel leads past `via`).
struct RunTunnel {
  int local_port = 0;
  std::string via;               // the session's host, as connected: an address or a granted name
  int via_port = 22;             // its SSH port
  bool via_run_machine = false;  // `via` is one of the run's machines
  std::string to;                // "": the machine `via` itself (its loopback or own address)
  int to_port = 0;               // the port the machine connects to
  bool to_run_machine = false;   // `to` is one of the run's machines
};

// A machine the run rents, as the run's record (results.json `run.machines`) shows it: what it
// cost so far, unrounded dollars.
struct RecordedMachine {
  std::string name, size, region;
  std::int64_t id = 0;
  double price_hourly = 0;
  double lifetime_s = 0;
  double cost_usd = 0;
};

class RUNARA_API Context {
 public:
  virtual ~Context() = default;
  static Context& from(lua_State* L);  // the run a Lua state (or any of its coroutines) belongs to

  virtual uv_loop_t* loop() = 0;
  virtual std::string run_id() const = 0;
  virtual const Options& options() const = 0;  // what the host started the run with (read only)
  virtual const Permissions& permissions() const = 0;
  virtual bool stopping() const = 0;               // the run is ending: start nothing new
  virtual double remaining_runtime_s() const = 0;  // until the hard deadline
  // How long the machines a budget check counts may live: remaining_runtime_s(), except in a
  // rehearsal, where it is the real run's (Options::budget_runtime_s, lowered by watchdog.limit).
  virtual double budget_remaining_s() const = 0;
  // Large buffers a primitive holds on the script's behalf count against --max-memory, with the
  // Lua heap. reserve_memory takes `bytes` and returns "", or returns an error naming `what`
  // and the limit (nothing taken) — check before allocating. Both are safe from any thread.
  virtual std::string reserve_memory(std::size_t bytes, std::string_view what) = 0;
  virtual void release_memory(std::size_t bytes) = 0;
  // The budget itself, for work that outlives the Lua call (threads, jobs): hold the pointer,
  // reserve through MemoryReservation.
  virtual std::shared_ptr<MemoryBudget> memory_budget() = 0;

  virtual void log(std::string_view line) = 0;       // timestamped, redacted, into run.log
  // What the primitive did for the script (a machine created, a command started there, ...),
  // for the host's Events::activity; redacted here. Never the script's say-so: call it where
  // the primitive itself acts.
  virtual void activity(const Activity& activity) = 0;
  virtual void progress(std::string_view line) = 0;  // transient status line
  virtual void print(std::string_view text) = 0;     // the run's standard output, as print(); redacted
  // A pass/fail check the script set failed (an http_load threshold): the run goes on, and ends
  // with Exit::thresholds unless it fails otherwise. `what` is logged and recorded.
  virtual void report_threshold_crossed(std::string_view what) = 0;
  virtual std::string redact(std::string_view text) const = 0;
  // The same masking as a value other threads may use (bytes written on libuv's thread pool): a
  // snapshot of the secrets known now.
  virtual SecretMask secret_mask() const = 0;
  // From now on `value` is redacted (masked as <****>, as long as the value) wherever the run
  // writes text. For values a primitive learns at run time (a token it read, a key it
  // generated). Scripts get no handle.
  virtual void add_secret(const std::string& name, const std::string& value) = 0;
  // The value behind a secret handle at `index` (for primitives that hand it to a machine);
  // raises a Lua error if the value there is not a secret handle.
  virtual std::string secret_value(lua_State* L, int index) = 0;
  // The name of the secret whose handle is at `index` ("TOKEN" for runara.secret("TOKEN")), or
  // "" when the value there is not a secret handle. Never raises.
  virtual std::string secret_name(lua_State* L, int index) const = 0;
  // The run's output folder (created on first use).
  virtual std::string out_dir() = 0;
  // A new descriptor of the output folder for the caller to own and close (open_beneath from it:
  // no symlink is followed), or -1 with `error` saying why it cannot be made.
  virtual int open_out_dir(std::string& error) = 0;
  // The script's `path` resolved for reading exactly as runara.read_file would allow it (its
  // own folder, --allow-read; never an output folder), or "" with `error` for the script.
  virtual std::string readable_path(const std::string& path, std::string& error) = 0;
  // Addresses the run itself brought up — its droplets' public addresses, simulated servers —
  // which primitives that send traffic may reach without an --allow-host grant, and send the
  // run's secrets to. port 0: any port. (Tunnels are not among them: see add_tunnel.)
  virtual void add_reachable(const std::string& address, int port) = 0;
  virtual std::vector<std::pair<std::string, int>> reachable() const = 0;
  // Tunnels the run opened, by their local port; remove_tunnel when one closes (its port may be
  // someone else's from then on).
  virtual void add_tunnel(RunTunnel tunnel) = 0;
  virtual void remove_tunnel(int local_port) = 0;
  virtual std::vector<RunTunnel> tunnels() const = 0;

  // Machines the run created: the primitive that creates them registers each once it has an
  // address; primitives that log in look them up by their public address (nullptr: not one of
  // the run's; a private address never names one: from here it is this computer's LAN).
  virtual void add_machine(RunMachine machine) = 0;
  virtual const RunMachine* machine(std::string_view address) const = 0;
  // The machine at `address` is gone (destroyed): machine() no longer finds it, and its address
  // leaves the reachable set, with every tunnel through it or to it; the address may be someone
  // else's from now on.
  virtual void remove_machine(std::string_view address) = 0;
  // What the run's record bills: the primitive that rents machines gives a source, called when
  // the record is written at the end (after teardown), so it must stay callable until then.
  virtual void record_machines(std::function<std::vector<RecordedMachine>()> source) = 0;

  // A Lua value (a userdata, e.g. an ssh session) that fixed commands can run on. The provider
  // registers it when it pushes the value; users look it up (nullptr: not a command target, or
  // one already closed). Held weakly: the provider decides its lifetime.
  virtual void add_command_target(lua_State* L, int index, std::weak_ptr<CommandTarget> target) = 0;
  virtual std::shared_ptr<CommandTarget> command_target(lua_State* L, int index) const = 0;

  // --- waiting without blocking ---
  // Marks the calling task as waiting. `on_cancel` runs if the task is cancelled (run stopped,
  // deadline passed) before resume/fail: it must stop the operation and not call resume/fail.
  virtual WaitId suspend(lua_State* L, std::function<void()> on_cancel = {}) = 0;
  virtual int yield(lua_State* L) = 0;  // `return ctx.yield(L);` right after suspend
  // Wakes the task; `push` pushes the function's results and returns how many.
  virtual void resume(WaitId wait, std::function<int(lua_State*)> push) = 0;
  // Wakes the task with an error raised at the script line that called the function.
  virtual void fail(WaitId wait, std::string message) = 0;
  // The same, without redacting `message`: for a primitive that redacted what came from outside
  // (a server's answer, a machine's output) and kept the script's own text as written. Redacting
  // that too would make the error an oracle: text the script chose coming back masked tells it
  // the text is a secret's value.
  virtual void fail_as_is(WaitId wait, std::string message) = 0;
  // The user's setup is wrong (an Error with `setup`: no cloud token, an unknown size, no key):
  // wakes the task with `message` (redacted) raised as runara.usage_error raises it, without a
  // location. If it ends the main chunk the run exits 2 with the message alone, no traceback.
  virtual void fail_usage(WaitId wait, std::string message) = 0;
  // The same for a function that does not wait: raises now (longjmp), never returns.
  virtual int raise_usage(lua_State* L, const std::string& message) = 0;

  // Pushes `fn` (with `nup` upvalues popped from the stack) as a function that may wait.
  // Functions that never wait are pushed with lua_pushcclosure as usual.
  virtual void push_async(lua_State* L, lua_CFunction fn, int nup = 0) = 0;
};

class RUNARA_API Primitive {
 public:
  virtual ~Primitive() = default;
  virtual std::string name() const = 0;               // the global's name, e.g. "droplet"
  virtual void open(lua_State* L, Context& ctx) = 0;  // push exactly one value: the global
  // true: open() pushes a table whose fields are added to the global table of the same name
  // that a primitive opened earlier (e.g. a function added to http_load); where there is none,
  // the table becomes that global.
  virtual bool adds_to_existing() const { return false; }
  // Runs once when the run ends, whatever the reason, on the event loop, with no Lua running.
  // Call `done` when finished ("" or an error to report loudly). Must not depend on the script.
  virtual void teardown(Context& ctx, std::function<void(std::string error)> done) {
    (void)ctx;
    done({});
  }
  virtual std::string pending_teardown() const { return {}; }  // "destroying droplet 123, ..."
};

}  // namespace runara
