// The scenario tests' view of a simulated cloud run (runara --sim): where its machines live and
// the check that everything of it is gone afterwards. Shared by test_scenarios_sim.cpp and
// test_scenarios_where.cpp and the training/fine-tuning ones; Catch assertions, so only for test files.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "eventually.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

namespace runara::test {

// Where the simulated cloud of the run writing to `out` keeps its machines: the test points
// TMPDIR there, so it holds runara-sim-* folders of that run only.
inline std::string sim_tmp(const std::string& out) { return out.substr(0, out.rfind('/')) + "/tmp"; }

// `runara --sim [options] --out OUT SCRIPT params…` with TMPDIR at sim_tmp(out) (so check_torn_down
// sees this run's machines only) and simulated time at a quarter unless `env` says otherwise.
inline ChildResult run_sim(const std::string& script, const std::string& out, const std::vector<std::string>& params,
                           std::map<std::string, std::string> env = {}, const std::vector<std::string>& options = {}) {
  std::vector<std::string> args{"--sim", "--out", out};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(script);
  args.insert(args.end(), params.begin(), params.end());
  std::filesystem::create_directories(sim_tmp(out));
  env["TMPDIR"] = sim_tmp(out);
  env.emplace("RUNARA_SIM_TIME_SCALE", "0.25");
  return run_runara(args, 240, env);
}

// Every droplet destroyed, the run's ssh key deleted, and no simulated machine (an sshd, its
// sessions, a server started there) left running or on disk.
inline void check_torn_down(const ChildResult& r, const std::string& out, int droplets = 1) {
  std::size_t gone = 0;
  for (auto at = r.err.find("is gone"); at != std::string::npos; at = r.err.find("is gone", at + 1)) ++gone;
  CHECK(gone == static_cast<std::size_t>(droplets));
  CHECK(r.err.find("ssh key runara-") != std::string::npos);
  CHECK(r.err.find(" deleted") != std::string::npos);
  const std::string machines = sim_tmp(out) + "/runara-sim-";
  CHECK(eventually([&] { return processes_mentioning(machines) == 0; }, 10));
  bool folder_left = false;
  for (const auto& e : std::filesystem::directory_iterator(sim_tmp(out))) {
    if (e.path().filename().string().rfind("runara-sim-", 0) == 0) folder_left = true;
  }
  CHECK_FALSE(folder_left);
}

}  // namespace runara::test
