// What a `runara plan` rehearsal did, as runara itself told it: the rehearsing child writes one
// entry per thing it does for the script (Events::activity: machines created and gone, commands
// and transfers on them, loads, the script's watchdog.limit; Events::denied: grants asked for;
// and at last how it ended) into a pipe that only it and the plan hold, and the plan reads them
// as they come. Never read back from the rehearsal's output folder: the script writes there
// (runara.write_file, s:download), so anything in it (ssh/<machine>.log, a planted record file)
// could be the script's forgery. A rehearsal that crashed, panicked or hung still yields what it
// did until then: each entry is written when it happens, not at the end.
//
// Contract. Entries are single lines, fields separated by tabs, each field escaped (\\, \t, \n),
// so no text of the script's (a command, a file name, an error) can end an entry or add a field.
// PlanRecordWriter is for the rehearsal (one per process, any thread: writes are serialised);
// PlanRecordReader for the plan, on its one thread. Bounded: at most kMaxRecordBytes of entries
// are kept (the rest read, counted and dropped, so the rehearsal never blocks on a full pipe), at
// most kMaxEntries distinct entries of each kind, each text cut at kMaxFieldBytes.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runara/runtime.hpp"

namespace runara::cli {

struct PlannedMachine {
  std::string name, size, region, image;
  double price_hourly = 0;
};

struct PlanRecord {
  std::vector<PlannedMachine> machines;  // in the order created
  int peak_machines = 0;                 // most alive at once
  double script_limit_s = 0;             // the tightest watchdog.limit the script set (0: none)
  std::map<std::string, int> commands;   // remote command (machine) -> how many times it ran
  std::map<std::string, int> files;      // "s:upload LOCAL -> REMOTE (machine)" / "s:download …" -> times
  std::map<std::string, int> loads;      // URL -> how many load points aimed there
  std::vector<std::string> denied;       // grants it asked for that were not given
  std::size_t left_out = 0;              // entries over kMaxEntries or past kMaxRecordBytes, not kept
  bool outcome_known = false;            // the rehearsal ended on its own and said how
  int exit_code = 0;
  std::string message;                   // why it did not complete ("" when it did)
};

constexpr std::size_t kMaxRecordBytes = 16u << 20;
constexpr std::size_t kMaxEntries = 200;
constexpr std::size_t kMaxFieldBytes = 1000;

// The rehearsal's end of the channel: `fd` is the pipe's write end (owned by the caller).
class PlanRecordWriter {
 public:
  explicit PlanRecordWriter(int fd) : fd_(fd) {}
  void activity(const Activity& activity);
  void denied(const std::string& grant);
  void outcome(int exit_code, const std::string& message);

 private:
  void entry(const std::vector<std::string>& fields);
  int fd_;
  std::mutex mutex_;
  int denied_ = 0;
};

// The plan's end: `fd` is the pipe's read end, non-blocking (owned by the caller).
class PlanRecordReader {
 public:
  explicit PlanRecordReader(int fd) : fd_(fd) {}
  // Reads what is there now; false once the writers are all gone (end of file) or on error.
  bool drain();
  // The entries read so far. Paths below `out_dir` (the rehearsal's output folder) read OUT/.
  PlanRecord record(const std::string& out_dir) const;

 private:
  int fd_;
  std::string bytes_;
  std::size_t dropped_entries_ = 0;
};

}  // namespace runara::cli
