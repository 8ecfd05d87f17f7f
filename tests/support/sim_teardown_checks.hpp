// The scenario tests' view of a simulated cloud run (runara --sim): where its machines live and
// the check that everything of it is gone afterwards. Shared by test_scenarios_sim.cpp and
// test_scenarios_where.cpp; Catch assertions, so only for test files.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "child_process.hpp"
#include "eventually.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

namespace runara::test {

// Where the simulated cloud of the run writing to `out` keeps its machines: the test points
// TMPDIR there, so it holds runara-sim-* folders of that run only.
inline std::string sim_tmp(const std::string& out) { return out.substr(0, out.rfind('/')) + "/tmp"; }

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
