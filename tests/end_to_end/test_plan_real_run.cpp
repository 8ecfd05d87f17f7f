// Issue 37, item 6: `runara plan SCRIPT` rehearses the run the real command would make: the same
// params, the real defaults (serving_multinode's full profile, not --sim's quick one), and
// runara.simulated reading false, so a script cannot show its plan one branch and take another
// for real. `runara --sim` (the rehearsal a user asks for) still reads true.
#include <catch2/catch.hpp>

#include <string>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using namespace runara::test;

TEST_CASE("runara plan shows the branch a script takes for real when it branches on runara.simulated", "[sim]") {
  const std::string branch = std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/plan_branch.lua";
  const auto plan = run_runara({"plan", "--max-runtime", "3600", branch}, 120);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
  CHECK(contains(plan.out, "It creates 1 machine (at most 1 at once):"));
  CHECK(contains(plan.out, "gpu-mi300x8-1536gb"));
  CHECK_FALSE(contains(plan.out, "gpu-mi300x1-192gb"));
  // --sim is a rehearsal the user asked for: the script may know it.
  const auto sim = run_runara({"--sim", "--out", temp_dir("plan-branch") + "/out", branch}, 120);
  INFO(sim.out << sim.err);
  CHECK(sim.exit_code == 0);
  CHECK(contains(sim.out, "branch: rehearsal"));
}

TEST_CASE("runara plan of serving_multinode rehearses its real default, the full profile, refused over the budget", "[sim]") {
  const std::string serving = std::string(RUNARA_SOURCE_DIR) + "/scripts/serving_multinode.lua";
  const auto plan = run_runara({"plan", serving}, 120);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 1);
  // Not the quick profile's $15.92 for 30 minutes: 2 x $15.92/h for the run's 2 h.
  CHECK(contains(plan.out, "cluster.create: 2 x gpu-mi300x8-1536gb do not fit: "));
  CHECK(contains(plan.out, "for the 2.00 h left before the run's deadline = $31.84, total $31.84 > budget $20.00"));
  CHECK(contains(plan.out, "It creates no machine."));
  // The quick profile, asked for, plans as before.
  const auto quick = run_runara({"plan", "--budget", "100", serving, "profile=quick"}, 120);
  INFO(quick.out << quick.err);
  CHECK(contains(quick.out, "Worst case: $15.92 (every machine alive until the 0.5 h deadline"));
}
