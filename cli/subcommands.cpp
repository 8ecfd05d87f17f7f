#include "subcommands.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "cloud/do_client.hpp"
#include "cloud/droplet_fleet.hpp"
#include "cloud/guardian.hpp"
#include "cloud/ledger.hpp"
#include "cloud/reaper.hpp"
#include "bench_command.hpp"
#include "command_line.hpp"
#include "compare_command.hpp"
#include "runs_command.hpp"
#include "fake_do_command.hpp"
#include "plan_command.hpp"
#include "sim/box_user.hpp"
#include "sim/sim_machine_init.hpp"
#include "sim/sim_sweeper.hpp"
#include "fake_llm_command.hpp"

namespace runara::cli {

namespace {

const char* const kReapUsage =
    "usage: runara ls [--json] [--context NAME]\n"
    "       runara reap [--run ID] [--older-than DURATION] [--yes] [--context NAME]\n"
    "       runara reap --expired [--grace DURATION] [--run ID] [--yes] [--context NAME]\n"
    "  DURATION: seconds, or a number with s, m, h or d (e.g. 90m, 2h)\n"
    "  The ledger is in $RUNARA_STATE_DIR (default ~/.local/state/runara); the account is searched\n"
    "  with DIGITALOCEAN_TOKEN at $RUNARA_DO_API_URL (default https://api.digitalocean.com).\n"
    "  Both act only on machines recorded at that API and the token's account, show the API's\n"
    "  answer, and exit 1 when they could not check (no token, token refused, API unreachable).\n"
    "  reap deletes only droplets carrying their run's tag runara:run-<id>; others are reported.\n"
    "  --expired: from any computer (a cron job), the runs whose droplets' deadline tags\n"
    "  runara:deadline-<unix seconds> have all passed by more than --grace (default 10m), found\n"
    "  in the account, not the ledger; nothing without those tags (docs/controller_loss.md)\n"
    "  --json: ls as one JSON object (see docs/cli.md)\n";

int reap_command(int argc, char** argv, bool reap) {
  ReapOptions options;
  std::string context;
  CommandLineParser parser(kReapUsage);
  parser.option("--context", [&](const std::string& v) { return context = v, std::string(); });
  if (reap) {
    parser.option("--run", [&](const std::string& v) { return options.run_id = v, std::string(); })
        .option("--older-than", [&](const std::string& v) {
          options.older_than_s = parse_duration(v);
          return options.older_than_s < 0 ? "--older-than expects a duration like 90m or 2h, got '" + v + "'" : std::string();
        })
        .flag("--yes", [&] { options.yes = true; })
        .flag("--expired", [&] { options.expired = true; })
        .option("--grace", [&](const std::string& v) {
          options.grace_s = parse_duration(v);
          return options.grace_s < 0 ? "--grace expects a duration like 10m or 600, got '" + v + "'" : std::string();
        });
  } else {
    parser.flag("--json", [&] { options.json = true; });
  }
  const std::string program = std::string("runara ") + argv[1];
  if (int status = parser.parse_or_status(argc, argv, 2, program, kReapUsage); status >= 0) return status;
  if (options.expired && options.older_than_s > 0) {
    // Two different judges of "over": the deadline a run carries, or a person's age limit.
    std::fprintf(stderr, "runara reap: --expired and --older-than do not go together\n%s", kReapUsage);
    return 2;
  }
  options.state_dir = default_state_dir();
  const char* api = std::getenv("RUNARA_DO_API_URL");
  options.api_base = normalized_api_base(api && *api ? api : DoClient::kDefaultApiBase);
  options.token = load_do_token(nullptr, context).value_or("");
  try {
    return reap ? reap_leftovers(options) : list_leftovers(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runara %s: %s\n", argv[1], e.what());
    return 1;
  }
}

}  // namespace

int run_subcommand(int argc, char** argv) {
  if (argc < 2) return -1;
  const std::string command = argv[1];
  if (command == "ls") return reap_command(argc, argv, false);
  if (command == "reap") return reap_command(argc, argv, true);
  if (command == "__guardian") return guardian_main(argc, argv);
  if (command == "__sim_sweeper") return sim::sim_sweeper_main(argc, argv);
  if (command == "__sim_machine_init") return sim::sim_machine_init_main(argc, argv);
  if (command == "__sim_box_user") return sim::sim_box_user_main(argc, argv);
  if (command == "serve-fake-do") return serve_fake_do(argc, argv);
  if (command == "serve-fake-llm") return serve_fake_llm(argc, argv);
  if (command == "bench") return bench_command(argc, argv);
  if (command == "plan") return plan_command(argc, argv);
  if (command == "compare") return compare_command(argc, argv);
  if (command == "runs") return runs_command(argc, argv);
  return -1;
}

}  // namespace runara::cli
