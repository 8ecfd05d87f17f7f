#include "plan_rehearsal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "plan_record.hpp"
#include "signals.hpp"
#include "sim_mode.hpp"
#include "sim/fake_server_primitive.hpp"

namespace runara::cli {

int rehearse(CommandLine command, const std::string& out_dir, int record_fd) {
  PlanRecordWriter record(record_fd);
  Options& o = command.options;
  o.out_dir = out_dir;
  o.quiet = true;
  // The budget checks still count the real run's hours, so the rehearsal refuses what it would.
  o.budget_runtime_s = o.max_runtime_s;
  o.max_runtime_s = std::min(o.max_runtime_s, kRehearsalLimitS);
  o.cloud.guardian_executable = own_executable();
  // The script sees the real run's runara.simulated (false): its defaults, profile and branches
  // are the real run's, so the plan shows what that run would create and cost.
  o.plan = true;
  std::string error;
  auto cloud = start_simulated_cloud(o, own_executable(), error, kRehearsalTimeScale);
  if (!cloud) {
    record.outcome(2, error);
    return 2;
  }
  Events events;
  events.print = [](std::string_view) {};
  events.log = [](std::string_view) {};
  events.progress = [](std::string_view) {};
  events.denied = [&record](std::string_view grant) { record.denied(std::string(grant)); };
  events.activity = [&record](const Activity& activity) { record.activity(activity); };
  Outcome outcome;
  {
    Runtime runtime(o, events);
    runtime.add_primitive(make_fake_server_primitive());  // http_load.fake_server (the simulator)
    install_signal_handlers(runtime);
    outcome = runtime.run_file(command.script);
  }
  cloud.reset();
  record.outcome(static_cast<int>(outcome.exit), outcome.exit == Exit::ok ? "" : outcome.message);
  return static_cast<int>(outcome.exit);
}

}  // namespace runara::cli
