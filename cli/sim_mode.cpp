#include "sim_mode.hpp"
#include "sim/box_limits.hpp"
#include "sim/sim_isolation.hpp"
#include "terminal_events.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <cstdio>
#include <stdexcept>


namespace runara::cli {

double time_scale_from_environment() {
  const char* text = std::getenv("RUNARA_SIM_TIME_SCALE");
  if (!text || !*text) return 1;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end && *end == '\0' && v > 0 && v <= 1 ? v : 1;
}

std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

std::shared_ptr<sim::SimCloud> start_simulated_cloud(Options& options, const std::string& runara_executable,
                                                     std::string& error, double time_scale, bool isolated) {
  if (isolated) {
    if (std::string problem = sim::isolation_problem(); !problem.empty()) {
      error = "--sim: " + problem + ". Or run with --sim-unisolated: the simulated machines' commands then run on "
              "this computer as you, with your files and services reachable (only for scripts you trust)";
      return nullptr;
    }
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string root = std::string(tmp && *tmp ? tmp : "/tmp") + "/runara-sim-XXXXXX";
  if (!::mkdtemp(root.data())) {
    error = "--sim: cannot create a folder for the simulated cloud under " + root.substr(0, root.rfind('/'));
    return nullptr;
  }
  // Every process runara starts from now on (the guardian included) carries the cloud's marker,
  // so the sweeper finds all of it if runara is killed.
  const std::string entry = sim::SimCloud::cloud_entry(root);
  ::setenv("RUNARA_SIM_DIR", root.c_str(), 1);
  sim::SimCloudConfig config;
  config.root_dir = root;
  config.runara_executable = runara_executable;
  config.shims_dir = sim::default_shims_dir();
  config.time_scale = time_scale;
  config.isolated = isolated;
  // The user's memory cap for the script sizes what its machines may take of this computer too.
  config.box_limits = sim::box_limits_for(options.max_memory_bytes);
  const char* faults = std::getenv("RUNARA_SIM_FAULTS");
  config.faults = faults ? faults : "";
  try {
    auto cloud = std::make_shared<sim::SimCloud>(config);
    options.cloud.api_base = cloud->api_base();
    options.cloud.token = cloud->token();
    options.cloud.context.clear();
    options.cloud.state_dir = cloud->state_dir();
    options.cloud.poll_s = 0.5;
    options.cloud.routes = cloud;
    options.simulated = true;
    if (time_scale == 1)
      say("simulated cloud (--sim): no account, no money; machines are boxed local sshds and every number is simulated");
    return cloud;
  } catch (const std::exception& e) {
    error = std::string("--sim: ") + e.what();
    return nullptr;
  }
}

}  // namespace runara::cli
