#include "cli_options.hpp"

#include "cloud/budget.hpp"
#include "cloud/droplet_names.hpp"
#include "base/token_names.hpp"
#include "command_line.hpp"
#include "on_target.hpp"
#include "secret_destinations.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace runara::cli {

namespace {

bool parse_positive(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && !text.empty() && std::isfinite(out) && out > 0;
}

// "1G", "512M", "1048576" -> bytes.
bool parse_bytes(const std::string& text, std::size_t& out) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (!end || end == text.c_str() || !(value > 0)) return false;
  double scale = 1;
  const std::string unit = end;
  if (unit == "K" || unit == "KiB" || unit == "k") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) return false;
  out = static_cast<std::size_t>(value * scale);
  return out >= (1u << 20);
}

// The cloud token never reaches a script, not even as a handle a script could send anywhere.
std::string refuse_token_name(const std::string& flag, const std::string& name) {
  return flag + " " + name + ": " + name + " " + runara::kCloudTokenRefusal;
}

}  // namespace

const char* help_text() {
  return R"(usage: runara [OPTIONS] SCRIPT [ARGS...]   run a scenario script
       runara [OPTIONS] -e CODE              run a string of Lua
       runara [OPTIONS] -i SCRIPT [ARGS...]  run a script, then a REPL with its globals
       runara [OPTIONS]                      start the REPL

Scripts are sandboxed: they reach only what these options grant.
  --allow-read PATH       let runara.read_file read PATH (a file or folder); repeatable
  --allow-host HOST[:PORT] let network primitives contact HOST; repeatable
  --allow-env NAME        let os.getenv read the environment variable NAME; repeatable
  --allow-tag NAME        let droplet.create tag machines NAME, an account tag (a firewall or
                          automation that admits by it admits them); without it a script sets
                          only runara-user:... tags; repeatable
  --allow-vpc NAME        let droplet.vpc{existing = NAME} put machines in that account VPC
                          (without it, only a VPC of the run's own); repeatable
  --secret NAME[@HOST[:PORT][,...]]
                          pass the environment variable NAME as an opaque secret handle
                          (runara.secret("NAME")); its value never reaches the script. It may
                          be sent only to the run's own machines and servers, and to each
                          HOST[:PORT] given after '@' (which must also be reachable)
                          (neither --secret nor --allow-env accepts the cloud token's names)
Where a scenario runs (default: droplets it creates; see docs/scenarios.md):
  --on USER@HOST[:PORT]   a machine of yours, over ssh (your agent or --ssh-key, known_hosts);
                          granted, and the run's secrets may go there; never rebooted or
                          destroyed: what the run starts there is stopped at its end
  --on http(s)://HOST[:PORT]
                          a running OpenAI-compatible server: the load runs from here (GPU
                          metrics only when a machine is named too)
SSH (the ssh primitive):
  --ssh-key PATH          private key for --allow-host hosts and for droplets created with
                          your own ssh_keys (default ~/.ssh/id_ed25519, id_ecdsa, id_rsa)
  --accept-new-host-keys  trust a granted host whose key ~/.ssh/known_hosts lacks (a changed
                          key is still refused)
  --load-agent PATH       the runara-agent that http_load.run{ on = session } uploads to the
                          machine (default: the one built with runara)
Limits:
  --max-runtime SECONDS   hard deadline for the whole run (default 7200)
  --max-memory SIZE       cap on the script's Lua heap, e.g. 512M, 2G (default 1G)
Rehearsal:
  --sim                   run against the simulated cloud: a fake DigitalOcean API on loopback
                          whose droplets are local sshds with GPU, docker and vLLM shims (no
                          account, no money; every number is simulated; RUNARA_SIM_FAULTS=
                          vllm_never_ready,... injects failures). Each machine is boxed
                          (bubblewrap: its own files, processes and network)
  --sim-unisolated        --sim with the machines' commands run on this computer, as you, with
                          your files and services reachable: only for scripts you trust, where
                          the kernel refuses the namespaces the box needs
Money (enforced by runara, scripts can only tighten):
  --budget USD            worst-case spend a run may reach (default 20); checked before each create
  --max-droplets N        machines alive at once (default 4)
  --context NAME          the doctl auth context whose token to use (as doctl --context)
  --assume-price SLUG=USD_PER_HOUR
                          price of a size /v2/sizes does not list (contract GPU plans)
Output:
  --out DIR               results folder (default results/<UTC time>-<script name>/)
  -q, --quiet             no http_load summaries (a load's quiet = false still prints its own)
  --json-log              log and progress lines on stderr as JSON objects, one per line (CI)
Every option taking a value accepts --flag=value as well as --flag value. SCRIPT '-' reads the
script from standard input.
Other:
  -h, --help              this text
  --version               print the version

Before running a shared script:
  runara plan SCRIPT [key=value ...]
                          rehearse it on the simulated cloud (compressed time) and print the
                          machines it creates, its worst-case cost and the grants it asks for

Cleaning up:
  runara ls [--json]      machines earlier runs left at this API, as the API sees them
                          (exit 1 when it could not check)
  runara reap [--run ID] [--older-than DURATION] [--yes]
                          destroy them (only droplets tagged runara:run-ID)
  runara reap --expired [--grace DURATION] [--yes]
                          from any computer (cron): destroy the droplets of runs whose
                          deadline tags have passed, found in the account, not the ledger
Benchmarking without a script:
  runara bench URL --model M [-c 1,8,32 | --rate R | --saturate] [-d 60s | -n N] ...
                          a vllm-bench-serve-like load against an OpenAI-compatible server
Past runs:
  runara runs [--script NAME] [--limit N] [--json]
                          the run history, newest first, with each run's headline figures
  runara compare RUN_DIR|RUN_ID... [--baseline R] [--last N --script NAME] [--threshold M=PCT]
                          runs side by side: compare.md, compare.html, compare.json; exit 4 when
                          a threshold is crossed
Fakes, for tests and rehearsals:
  runara serve-fake-do    a fake DigitalOcean API on loopback
  runara serve-fake-llm   a fake OpenAI-compatible streaming LLM server

Environment: DIGITALOCEAN_TOKEN (or DIGITALOCEAN_ACCESS_TOKEN, or doctl's config) is the API
token, never visible to scripts; RUNARA_DO_API_URL the API (default https://api.digitalocean.com;
AMD Developer Cloud speaks the same API); RUNARA_STATE_DIR the folder of the ledger and
the run history (default ~/.local/state/runara).

ARGS reach the script as runara.args (and arg); KEY=VALUE arguments also appear in
runara.params. runara's own options go before SCRIPT (after it they are refused; after '--' they
go to the script). `runara SCRIPT --help` prints the params a scenario declares.

Exit status:
  0    success
  1    the script raised an error (or a task failed, or teardown failed)
  2    usage error (bad option, missing script, a scenario's unknown or bad param)
  3    stopped by the watchdog (--max-runtime or watchdog.limit)
  4    the script finished, but an http_load threshold was crossed (see results.json)
  129  hung up (SIGHUP)
  130  interrupted (SIGINT, Ctrl-C)
  143  terminated (SIGTERM)
On SIGINT/SIGTERM/SIGHUP runara stops the script and tears down what it created; a second
Ctrl-C shows what teardown is waiting for, a third exits at once and prints the command that
cleans up the rest.
)";
}

namespace {

// The arguments after SCRIPT (or -e CODE) go to the script, except that one of runara's own
// options there is a mistake runara names: `runara SCRIPT --out X` would otherwise run with the
// default folder and hand "--out" to the script. Past a "--" everything goes to the script.
std::string script_arguments(const CommandLineParser& parser, const std::vector<std::string>& rest, std::size_t i,
                             bool literal, CommandLine& out) {
  for (; i < rest.size(); ++i) {
    const std::string& a = rest[i];
    if (!literal && a == "--") {
      literal = true;
      continue;
    }
    const std::string flag = a.substr(0, a.find('='));
    const auto known = parser.known(flag);
    const bool runara_flag = known != CommandLineParser::Known::no && flag.rfind("--", 0) == 0 && flag != "--help";
    if (!literal && (a == "--help" || a == "-h")) out.options.script_help = true;
    if (!literal && (runara_flag || a == "-q" || a == "-i" || a == "-e")) {
      const bool value_follows = known == CommandLineParser::Known::value && a.find('=') == std::string::npos;
      return "'" + a + "' comes after the script, where it would be passed to the script; put runara's options "
             "before the script (runara " + flag + (value_follows ? " VALUE" : "") +
             " SCRIPT ...), or after '--' to pass it to the script";
    }
    out.options.args.push_back(a);
  }
  return {};
}

// A value that must not be empty: "" when it is not, else `message`.
std::string non_empty(const std::string& value, const char* message) { return value.empty() ? message : ""; }

// runara's own options, each with what it does to `out` (the --help text lists them).
void declare_options(CommandLineParser& p, CommandLine& out) {
  using Mode = CommandLine::Mode;
  Options& o = out.options;
  p.stop_flag("-h,--help", [&out] { out.mode = Mode::help; })
      .stop_flag("-v,--version", [&out] { out.mode = Mode::version; })
      .option("-e", [&out](const std::string& v) { return out.code = v, out.mode = Mode::eval, std::string(); })
      .flag("-i", [&out] { out.mode = Mode::interactive_script; })
      .option("--allow-read", [&o](const std::string& v) { return o.permissions.read_paths.push_back(v), std::string(); })
      .option("--allow-host", [&o](const std::string& v) { return o.permissions.hosts.push_back(v), std::string(); })
      .option("--load-agent", [&o](const std::string& v) {
        return non_empty(o.load_agent = v, "--load-agent expects the path of a runara-agent executable");
      })
      .option("--ssh-key", [&o](const std::string& v) {
        return non_empty(o.ssh.key_path = v, "--ssh-key expects the path of a private key file");
      })
      .flag("--accept-new-host-keys", [&o] { o.ssh.accept_new_host_keys = true; })
      .option("--allow-tag", [&o](const std::string& v) {
        // The form DigitalOcean takes, and never runara's own runara:... tags (which find a run's
        // machines for teardown): granting one would let a script hide among another run's.
        if (runara::Status valid = runara::check_tag(v); !valid) return "--allow-tag: " + valid.error();
        return o.permissions.tags.push_back(v), std::string();
      })
      .option("--allow-vpc", [&o](const std::string& v) {
        if (v.empty()) return std::string("--allow-vpc expects the name of a VPC of the account");
        return o.permissions.vpcs.push_back(v), std::string();
      })
      .option("--allow-env", [&o](const std::string& v) {
        if (runara::is_cloud_token_name(v)) return refuse_token_name("--allow-env", v);
        return o.permissions.env.push_back(v), std::string();
      })
      .option("--secret", [&out](const std::string& v) {
        SecretOption secret;
        if (std::string error = parse_secret_option(v, secret); !error.empty()) return error;
        if (runara::is_cloud_token_name(secret.name)) return refuse_token_name("--secret", secret.name);
        out.secret_names.push_back(secret.name);
        auto& where = out.options.permissions.secret_destinations[secret.name];
        where.insert(where.end(), secret.destinations.begin(), secret.destinations.end());
        return std::string();
      })
      .option("--max-runtime", [&o](const std::string& v) {
        return parse_positive(v, o.max_runtime_s) ? "" : "--max-runtime expects a number of seconds > 0, got '" + v + "'";
      })
      .option("--max-memory", [&o](const std::string& v) {
        return parse_bytes(v, o.max_memory_bytes) ? "" : "--max-memory expects a size of at least 1M such as 512M or 2G, got '" + v + "'";
      })
      .option("--budget", [&o](const std::string& v) {
        return parse_positive(v, o.cloud.budget_usd) ? "" : "--budget expects a number of US dollars > 0, got '" + v + "'";
      })
      .option("--max-droplets", [&o](const std::string& v) {
        double n = 0;
        if (!parse_positive(v, n) || n != static_cast<int>(n)) return "--max-droplets expects a whole number > 0, got '" + v + "'";
        return o.cloud.max_droplets = static_cast<int>(n), std::string();
      })
      .option("--assume-price", [&o](const std::string& v) { return parse_assumed_price(v, o.cloud.assumed_prices).error(); })
      .option("--out", [&o](const std::string& v) { return o.out_dir = v, std::string(); })
      .option("--context", [&o](const std::string& v) {
        return non_empty(o.cloud.context = v, "--context needs a doctl auth context name");
      })
      .option("--on", [&o](const std::string& v) { return parse_on_option(v, o.on); })
      .flag("--json-log", [&out] { out.json_log = true; })
      .flag("--sim", [&out] { out.sim = true; })
      .flag("--sim-unisolated", [&out] { out.sim = out.sim_unisolated = true; })
      .flag("-q,--quiet", [&o] { o.quiet = true; })
      .unknown_option_hint(" (see runara --help)");
}

}  // namespace

std::string parse_command_line(int argc, char** argv, CommandLine& out) {
  CommandLineParser parser(help_text(), false);
  std::vector<std::string> rest;  // SCRIPT and its arguments, or -e's arguments
  declare_options(parser, out);
  parser.options_end_at_first_argument(rest);
  std::string error;
  if (parser.parse(std::vector<std::string>(argv + 1, argv + argc), error) == CommandLineParser::Outcome::usage_error) return error;
  if (out.mode == CommandLine::Mode::help || out.mode == CommandLine::Mode::version) return {};
  const bool ended_by_double_dash = !rest.empty() && rest.front() == "--";
  std::size_t i = ended_by_double_dash ? 1 : 0;
  if (i < rest.size() && out.mode != CommandLine::Mode::eval) {
    out.script = rest[i++];
    if (out.mode != CommandLine::Mode::interactive_script) out.mode = CommandLine::Mode::script;
  } else if (out.mode == CommandLine::Mode::interactive_script) {
    return "-i needs a script to run first";
  }
  // `runara -e CODE -- ARGS`: the "--" that ended runara's options already said "literal".
  const bool literal = ended_by_double_dash && out.mode == CommandLine::Mode::eval;
  if (std::string misplaced = script_arguments(parser, rest, i, literal, out); !misplaced.empty()) return misplaced;
  for (const auto& name : out.secret_names) {
    const char* secret = std::getenv(name.c_str());
    if (!secret || !*secret) return "--secret " + name + ": the environment variable " + name + " is not set";
    out.options.secrets[name] = secret;
  }
  grant_on_targets(out.options);
  return {};
}

}  // namespace runara::cli
