// The embedding API: create a Runtime, run a scenario, receive its events, cancel it.
// Everything a run owns hangs off its Runtime object; two runtimes in one process share nothing.
#pragma once

#include "runara/export.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runara/machine_routes.hpp"

namespace runara {

class Primitive;

// Exit statuses, the same numbers the `runara` command exits with.
enum class Exit : int {
  ok = 0,
  script_error = 1,
  usage = 2,
  watchdog = 3,
  thresholds = 4,     // the run finished, but an http_load threshold was crossed
  hangup = 129,       // SIGHUP
  interrupted = 130,  // SIGINT
  terminated = 143,   // SIGTERM, or a host's cancel()
};

// What a script may reach beyond its own folder and output folder. Everything else is denied.
struct Permissions {
  std::vector<std::string> read_paths;  // files or folders runara.read_file may open
  std::vector<std::string> hosts;       // "HOST" or "HOST:PORT" network primitives may contact
  std::vector<std::string> env;         // environment variables os.getenv may read
  // Secret name -> where else (besides the run's own droplets, tunnels and simulated servers)
  // primitives may send it: "HOST" or "HOST:PORT", as in `hosts` (--secret NAME@HOST[:PORT]).
  std::map<std::string, std::vector<std::string>> secret_destinations;
  // Earlier runs' output folders runara.read_file may read (`runara compare` names them). Output
  // folders are otherwise unreadable, since runara masks secrets there and reading the masked
  // text back would tell a script which guess was a secret: this grant is void in a run that
  // holds any secret.
  std::vector<std::string> earlier_runs;
  // Account-wide groupings of the cloud a script may put its machines in besides the run's own.
  // A cloud firewall (a database's trusted sources) or automation that admits machines by a tag
  // or a VPC admits whatever joins it: droplet.create{tags} sets runara-user:NAME tags, and these
  // (--allow-tag NAME, compared case-insensitively as DigitalOcean does); droplet.vpc{existing}
  // uses these account VPCs by name (--allow-vpc NAME), otherwise only a VPC of the run's own.
  std::vector<std::string> tags;
  std::vector<std::string> vpcs;
};

// Where machines are created and how much a run may spend on them.
struct CloudOptions {
  std::string api_base;   // "": $RUNARA_DO_API_URL, else https://api.digitalocean.com
  std::string token;      // "": $DIGITALOCEAN_TOKEN, $DIGITALOCEAN_ACCESS_TOKEN, doctl's config
  std::string context;    // doctl auth context for that config ("": $DIGITALOCEAN_CONTEXT, the file's)
  std::string state_dir;  // the ledger's folder; "": $RUNARA_STATE_DIR, else ~/.local/state/runara
  double budget_usd = 20;                        // worst case a run may cost
  int max_droplets = 4;                          // machines alive at once
  std::map<std::string, double> assumed_prices;  // size slug -> $/h for sizes /v2/sizes omits
  // The runara executable that runs the guardian process ("runara __guardian ..."). ""
  // means the one this library was built with. Without a guardian no machine is created.
  std::string guardian_executable;
  double poll_s = 3;  // how often to look at a machine while waiting for it
  // How to reach the machines of a stand-in cloud behind api_base (machine_routes.hpp); null:
  // the plain way (a real cloud).
  std::shared_ptr<const MachineRoutes> routes;
};

// How the `ssh` primitive logs in (issue 10). The run's own droplets use the run's key; these
// apply to hosts granted with --allow-host and to droplets created with the user's ssh_keys.
struct SshOptions {
  std::string key_path;  // --ssh-key: a private key file; "": ~/.ssh/id_ed25519, id_ecdsa, id_rsa
  std::string known_hosts;  // "": $HOME/.ssh/known_hosts (read only, never written)
  bool accept_new_host_keys = false;  // --accept-new-host-keys: trust an unknown host's key
};

// `--on`: a machine or server the run did not create that the scenario runs against
// (scripts read it as runara.on; runara.scenario acts on it). Never rebooted, stopped or
// destroyed by runara; what the run starts there is stopped at its end.
struct OnTarget {
  std::string user, host;  // a machine over ssh (host empty: none)
  int port = 22;
  std::string endpoint;    // a running OpenAI-compatible server's base URL ("": none)
  std::string endpoint_host;
  int endpoint_port = 0;
};

struct Options {
  double max_runtime_s = 7200;                 // hard deadline for the whole run
  // A rehearsal (`runara plan`) runs under a short max_runtime_s of its own; this is the real
  // run's --max-runtime, which the budget checks count each machine alive for, so that the
  // rehearsal refuses what the run would (0: max_runtime_s).
  double budget_runtime_s = 0;
  std::size_t max_memory_bytes = std::size_t{1} << 30;  // cap on the Lua heap
  std::string out_dir;                         // empty: results/<UTC>-<script>/ under the cwd
  std::vector<std::string> args;               // reach the script as runara.args / arg
  Permissions permissions;
  std::map<std::string, std::string> secrets;  // name -> value; scripts only get opaque handles
  std::string stdlib_dir;                      // empty: the stdlib this build was made with
  // require searches stdlib_dir alone, never the script's folder (for run_string, the current
  // directory). For a host's built-in commands written in Lua (`runara compare`, `runara bench`):
  // run inside a folder someone else shared, its runara_compare.lua would otherwise be the
  // command, holding what the command was given (a secret's handle, the cloud token's reach).
  bool stdlib_modules_only = false;
  double teardown_budget_s = 300;              // how long teardown may take before giving up
  bool quiet = false;                          // no http_load summaries unless a load asks (--quiet)
  // The run's figures come from a simulator (`runara --sim`): scripts see runara.simulated, and
  // the summaries, the record and the history say so.
  bool simulated = false;
  // `runara plan`'s rehearsal: the cloud is simulated, yet the script must see what the real run
  // would, so runara.simulated reads false and the script takes the real run's path (its real
  // defaults, profile and budget). `runara --sim` leaves this false: a rehearsal the user asked for.
  bool plan = false;
  // The runara-agent executable `http_load.run{ on = session }` uploads and runs on the machine;
  // "": the one built with this library (its build tree, else the installed one).
  std::string load_agent;
  CloudOptions cloud;
  SshOptions ssh;
  OnTarget on;
  // `runara SCRIPT --help`: scripts see runara.help = true (runara.scenario prints the params
  // it declares and stops); a run that wrote nothing then leaves no output folder behind.
  bool script_help = false;
  // The run history (run/history.hpp): when not empty, the folder of history.db where the run is
  // recorded from its start ("running", with this process's pid) and completed as it ends, however
  // it ends. "" (the default, and an embedding host's): not recorded.
  std::string history_dir;
  // The name the history records for a run of no script file (`runara bench`); "": the script's path.
  std::string history_name;
  // Where the history says a run of no --on ran (`runara bench URL`: "endpoint URL"); "": from
  // --on, --sim and the machines the run created.
  std::string history_where;
};

// One thing runara did on the script's behalf, told by runara itself as it does it: the machines
// it created and saw go, the commands and file transfers it ran on them, the servers it loaded,
// the script's own watchdog.limit. `runara plan` lists these: a host that accounts for a script
// must not read them back from the output folder, where the script writes too. Text is redacted.
struct Activity {
  enum class Kind {
    machine_created,  // machine, size, region, image; number: its price in $/h
    machine_gone,     // machine (destroyed by the script or by teardown)
    command,          // machine, text: the command line started there
    transfer,         // machine, text: "s:upload LOCAL -> REMOTE" or "s:download REMOTE -> LOCAL"
    load,             // text: the URL an http_load point aims at
    script_limit,     // number: the seconds of the script's watchdog.limit
    grant_refused,    // text: the flag that would have allowed what a primitive refused ("--allow-tag db")
  };
  Kind kind = Kind::command;
  std::string machine, text, size, region, image;
  double number = 0;
};

// Callbacks a host receives. All run on the thread that called run_*/eval. Text is redacted.
struct Events {
  std::function<void(std::string_view text)> print;  // the script's print()
  // runara.log (its lines start "script: " after the stamp, so no script passes for runara),
  // warnings, runtime reports
  std::function<void(std::string_view line)> log;
  std::function<void(std::string_view line)> progress;  // transient status ("waiting for ...")
  std::function<void(std::string_view name, std::string_view json)> result;  // runara.result
  // The script asked for something not granted: `grant` is the flag that would allow it
  // ("--secret HF_TOKEN", "--allow-env HOME", "--allow-read /data"). `runara plan` lists these.
  std::function<void(std::string_view grant)> denied;
  // What runara did for the script (Activity), as it starts it. Optional.
  std::function<void(const Activity& activity)> activity;
  // Called on the watchdog's thread (not the run's) when a stopped script has not unwound
  // within a few seconds: it is stuck in one long C call. The CLI exits with `exit_code`;
  // a host may do the same (its guardian then cleans up the cloud) or keep waiting.
  std::function<void(int exit_code, std::string_view message)> stuck;
};

struct Outcome {
  Exit exit = Exit::ok;
  std::string message;    // why the run did not succeed (empty on success)
  std::string traceback;  // Lua traceback of the failing script, when there is one
  std::string out_dir;    // where run.log / results.json went ("" if nothing was written)
};

// The REPL's view of one evaluated input.
struct EvalResult {
  enum class Kind { ok, incomplete, error, stopped } kind = Kind::ok;
  std::string text;  // printed values (ok) or the error message (error/stopped)
};

class RUNARA_API Runtime {
 public:
  // With the built-in primitives: droplet, ssh, http_load, gpu_metrics, metrics.
  explicit Runtime(Options options, Events events = {});
  // Without them: only the runara and watchdog tables, and the primitives the host adds.
  struct WithoutBuiltins {};
  static constexpr WithoutBuiltins without_builtins{};
  Runtime(Options options, Events events, WithoutBuiltins);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Adds a primitive (a global table scripts see). Call before running anything.
  void add_primitive(std::unique_ptr<Primitive> primitive);

  // One whole run: execute, wait for the main chunk, cancel leftover tasks, tear down.
  Outcome run_file(const std::string& path);
  Outcome run_string(std::string_view code, std::string_view chunk_name = "=(command line)");

  // Interactive use (REPL, `-i`): the same sandbox, kept alive between inputs.
  Outcome exec_file(const std::string& path);  // run a script, keep its globals and tasks
  EvalResult eval(std::string_view code);      // an expression or statement, REPL style
  std::vector<std::string> complete(std::string_view prefix);  // "foo.ba" -> "foo.bar", ...
  Outcome finish();                           // cancel tasks, tear down, close the state

  // Thread-safe and async-signal-safe. `signal_number` 0 means a plain host cancel.
  void cancel(int signal_number = 0);
  // Stops the input eval()/exec_file() is running without ending the session (REPL Ctrl-C).
  void interrupt();
  // A line saying what teardown is still waiting for (for a second Ctrl-C); "" if nothing.
  std::string pending_teardown() const;
  // The command a user runs to clean up what this run may have left behind.
  std::string cleanup_command() const;
  std::string run_id() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

RUNARA_API std::string version();

}  // namespace runara
