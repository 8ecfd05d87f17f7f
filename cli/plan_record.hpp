// What a `runara plan` rehearsal did, read back from the run's own record in its output folder:
// run.log (machines created and gone, the script's watchdog.limit, the loads it started) and
// ssh/*.log (every remote command, every file moved). Read from files, not from the rehearsing
// process, so a rehearsal that crashed, panicked or hung still yields what it did until then.
//
// Contract: pure reading; bounded (at most kMaxRecordBytes of each file and kMaxEntries distinct
// entries of each kind are kept, the rest counted), whatever the script wrote.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace runara::cli {

struct PlannedMachine {
  std::string name, size, region, image;
  double price_hourly = 0;
};

struct PlanRecord {
  std::vector<PlannedMachine> machines;  // in the order created
  int peak_machines = 0;                 // most alive at once
  double script_limit_s = 0;             // the tightest watchdog.limit the script set (0: none)
  std::map<std::string, int> commands;   // remote command -> how many times it ran
  std::map<std::string, int> files;      // "s:upload LOCAL -> REMOTE" / "s:download …" -> times
  std::map<std::string, int> loads;      // "URL (from where)" -> how many loads aimed there
  std::vector<std::string> denied;       // grants it asked for that were not given
  std::size_t left_out = 0;              // distinct entries over kMaxEntries, not kept
  bool outcome_known = false;            // the rehearsal ended on its own and said how
  int exit_code = 0;
  std::string message;                   // why it did not complete ("" when it did)
};

constexpr std::size_t kMaxRecordBytes = 16u << 20;
constexpr std::size_t kMaxEntries = 200;

// Reads `out_dir` (run.log, ssh/*.log, plan-denied.txt, plan-outcome.txt).
PlanRecord read_plan_record(const std::string& out_dir);

// For the rehearsal: its ending, as read_plan_record expects it (each makes out_dir if need be).
void write_plan_outcome(const std::string& out_dir, int exit_code, const std::string& message);
void append_plan_denied(const std::string& out_dir, const std::string& grant);

}  // namespace runara::cli
