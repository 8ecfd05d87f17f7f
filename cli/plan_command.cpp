#include "plan_command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/text.hpp"
#include "cli_options.hpp"
#include "plan_record.hpp"
#include "plan_rehearsal.hpp"
#include "sim/box_limits.hpp"
#include "sim/sim_cloud.hpp"
#include "sim/sim_isolation.hpp"
#include "sim/sim_sweeper.hpp"

namespace runara::cli {

namespace {

// A script's text (a command, its error, the names it chose) on one terminal line, at most `max`
// bytes: nothing in it a terminal would act on (base/text.hpp's visible()).
std::string one_line(std::string text, std::size_t max) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > max) text = text.substr(0, max) + "...";
  return visible(text, LineFeeds::show);
}

std::string money(double usd) {
  char b[32];
  std::snprintf(b, sizeof b, "$%.2f", usd);
  return b;
}

void print_machines(const PlanRecord& r) {
  if (r.machines.empty()) {
    std::printf("It creates no machine.\n");
    return;
  }
  std::printf("It creates %zu machine%s (at most %d at once):\n", r.machines.size(), r.machines.size() == 1 ? "" : "s",
              r.peak_machines);
  for (const auto& m : r.machines)
    std::printf("  %-22s %-6s image %-18s %s/h\n", one_line(m.size, 100).c_str(), one_line(m.region, 100).c_str(),
                one_line(m.image, 100).c_str(), money(m.price_hourly).c_str());
}

// Every machine alive until the run's deadline: the sooner of --max-runtime and the script's own
// watchdog.limit. The budget caps it (runara refuses a create that would pass it).
void print_worst_case(const PlanRecord& r, const Options& o) {
  if (r.machines.empty()) return;
  double per_hour = 0;
  for (const auto& m : r.machines) per_hour += m.price_hourly;
  const bool script_limit = r.script_limit_s > 0 && r.script_limit_s < o.max_runtime_s;
  const double seconds = script_limit ? r.script_limit_s : o.max_runtime_s;
  const double worst = per_hour * seconds / 3600;
  char limit[96];
  if (script_limit) std::snprintf(limit, sizeof limit, "the script's own watchdog.limit(%.0f)", r.script_limit_s);
  else std::snprintf(limit, sizeof limit, "--max-runtime %.0f", o.max_runtime_s);
  std::printf("Worst case: %s (every machine alive until the %.1f h deadline, %s)", money(worst).c_str(), seconds / 3600,
              limit);
  if (worst > o.cloud.budget_usd)
    std::printf("; --budget %s refuses any create that would pass it, so at most %s", money(o.cloud.budget_usd).c_str(),
                money(o.cloud.budget_usd).c_str());
  std::printf(".\n");
}

void print_counted(const char* heading, const char* none, const std::map<std::string, int>& entries) {
  if (entries.empty()) {
    std::printf("%s\n", none);
    return;
  }
  std::printf("%s\n", heading);
  for (const auto& [text, times] : entries)
    std::printf("  %4d x  %s\n", times, one_line(text, 200).c_str());
}

void print_permissions(const Options& o, const std::vector<std::string>& denied) {
  std::vector<std::string> given;
  for (const auto& p : o.permissions.read_paths) given.push_back("--allow-read " + p);
  for (const auto& h : o.permissions.hosts) given.push_back("--allow-host " + h);
  for (const auto& e : o.permissions.env) given.push_back("--allow-env " + e);
  for (const auto& t : o.permissions.tags) given.push_back("--allow-tag " + t);
  for (const auto& v : o.permissions.vpcs) given.push_back("--allow-vpc " + v);
  for (const auto& [name, value] : o.secrets) given.push_back("--secret " + name);
  std::printf("Permissions:");
  for (std::size_t i = 0; i < given.size(); ++i) std::printf("%s %s", i ? "," : "", one_line(given[i], 300).c_str());
  std::printf(given.empty() ? " none granted; it reaches only its own folder and its own machines\n" : " (granted here)\n");
  for (const auto& grant : denied)
    std::printf("  it asked for what only %s allows (not granted here)\n", one_line(grant, 300).c_str());
}

// How the rehearsal ended, as the first line says it.
std::string ending(const PlanRecord& r, int status, bool hung) {
  if (hung) return " until it stopped answering (killed after its time limit)";
  if (!r.outcome_known) {
    if (WIFSIGNALED(status)) return " until it crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
    return " until it ended abnormally (status " + std::to_string(WEXITSTATUS(status)) + ")";
  }
  if (r.exit_code == 0) return ": it ran to the end";
  return " until: " + one_line(r.message, 400);
}

// The rehearsal, in a child process, for at most `limit_s`, its record read from `fd` as it comes
// (so it never waits on a full pipe): its status; `hung` when it was killed for passing the limit.
// Once it is gone its last entries are in the pipe: read until none is left, not until end of
// file, which a process it started and that kept the pipe would put off.
int wait_for(pid_t child, double limit_s, int fd, PlanRecordReader& record, bool& hung) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  int status = 0;
  bool open = true;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > until) {
      hung = true;
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      break;
    }
    if (open) {
      pollfd ready{fd, POLLIN, 0};
      ::poll(&ready, 1, 20);
      open = record.drain();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (open) record.drain();
  return status;
}

// The rehearsal's simulated cloud lives below a folder of the plan's own (the child's TMPDIR).
// Once the child is gone, whichever way it went, its cloud's processes are killed and its folder
// removed here, as the cloud's sweeper does too: nothing of the rehearsal outlives the command
// (the sweeper alone could still be at it when the plan has printed and returned).
void sweep_rehearsal(const std::string& sim_parent) {
  std::error_code ignored;
  for (const auto& e : std::filesystem::directory_iterator(sim_parent, ignored)) {
    const std::string root = e.path().string();
    sim::kill_marked_processes(sim::SimCloud::cloud_entry(root), root);
  }
  std::filesystem::remove_all(sim_parent, ignored);
}

}  // namespace

int plan_command(int argc, char** argv) {
  CommandLine command;
  if (std::string error = parse_command_line(argc - 1, argv + 1, command); !error.empty()) {
    std::fprintf(stderr, "runara plan: %s\n", error.c_str());
    return 2;
  }
  if (command.mode != CommandLine::Mode::script || command.script == "-") {
    std::fprintf(stderr, "usage: runara plan [OPTIONS] SCRIPT [key=value ...]\n");
    return 2;
  }
  // A plan runs nothing anywhere real: with --on the script would log into that machine (or load
  // that server) for real, so --on is refused rather than rehearsed.
  if (!command.options.on.host.empty() || !command.options.on.endpoint.empty()) {
    std::fprintf(stderr, "runara plan: --on is not rehearsed: a plan never logs into your machine or loads your server; "
                         "leave --on out to see what the script creates on droplets\n");
    return 2;
  }
  // A plan is for scripts nobody has vouched for yet: their commands run, so only in a box.
  if (std::string problem = sim::isolation_problem(); !problem.empty()) {
    std::fprintf(stderr, "runara plan: the script's commands run on boxed simulated machines, and %s\n", problem.c_str());
    return 2;
  }
  // The plan's own folder, made fresh (mkdtemp: never an existing name, a planted folder or
  // symlink included, and only this user may enter it). In it the rehearsal's output folder and
  // its simulated cloud; its record comes through a pipe, not through any file.
  std::string plan_dir = std::filesystem::temp_directory_path() / ("runara-plan-" + std::to_string(::getpid()) + "-XXXXXX");
  if (::mkdtemp(plan_dir.data()) == nullptr) {
    std::fprintf(stderr, "runara plan: cannot create a folder for the rehearsal (%s): %s\n", plan_dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  const std::string out = plan_dir + "/out";
  const std::string sim_parent = plan_dir + "/sim";
  std::error_code ignored;
  int record_pipe[2] = {-1, -1};
  // 0711 as root: the boxes run as nobody then, and walk through both to their folders
  // (box_user.hpp); they still cannot list them.
  const mode_t walk = ::geteuid() == 0 ? 0711 : 0700;
  if (::chmod(plan_dir.c_str(), walk) != 0 || ::mkdir(sim_parent.c_str(), walk) != 0 ||
      ::pipe2(record_pipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "runara plan: cannot prepare the rehearsal in %s: %s\n", plan_dir.c_str(), std::strerror(errno));
    std::filesystem::remove_all(plan_dir, ignored);
    return 1;
  }
  std::fflush(nullptr);
  const auto started = std::chrono::steady_clock::now();
  // Rehearsed in a child: whatever it does (a crash, a panic, a hang), this process still prints
  // what the record shows and removes the folder.
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(record_pipe[0]);
    ::setenv("TMPDIR", sim_parent.c_str(), 1);  // the simulated cloud's folder: swept below
    ::_exit(rehearse(command, out, record_pipe[1]));
  }
  ::close(record_pipe[1]);
  if (child < 0) {
    std::fprintf(stderr, "runara plan: cannot start the rehearsal: %s\n", std::strerror(errno));
    ::close(record_pipe[0]);
    sweep_rehearsal(sim_parent);
    std::filesystem::remove_all(plan_dir, ignored);
    return 1;
  }
  ::fcntl(record_pipe[0], F_SETFL, ::fcntl(record_pipe[0], F_GETFL) | O_NONBLOCK);
  // A Ctrl-C at the terminal reaches the child too, which ends its rehearsal and says so.
  ::signal(SIGINT, SIG_IGN);
  bool hung = false;
  PlanRecordReader reader(record_pipe[0]);
  const int status =
      wait_for(child, std::min(command.options.max_runtime_s, kRehearsalLimitS) + 30, record_pipe[0], reader, hung);
  ::close(record_pipe[0]);
  sweep_rehearsal(sim_parent);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const PlanRecord record = reader.record(out);
  std::printf("Plan for %s, rehearsed on boxed simulated machines in %.1f s%s\n", one_line(command.script, 300).c_str(),
              seconds, ending(record, status, hung).c_str());
  print_machines(record);
  // What each box could take of this computer (sim/box_limits.hpp), the same for every machine.
  if (!record.machines.empty())
    std::printf("Each machine's box: %s.\n",
                sim::describe_box_limits(sim::box_limits_for(command.options.max_memory_bytes)).c_str());
  print_worst_case(record, command.options);
  print_counted("Commands it ran on the machines:", "It ran no command on a machine.", record.commands);
  print_counted("Files it moved:", "It moved no file.", record.files);
  print_counted("Servers it loaded (http_load):", "It loaded no server.", record.loads);
  if (record.left_out > 0) std::printf("(%zu more entries not listed)\n", record.left_out);
  print_permissions(command.options, record.denied);
  std::printf("Rehearse it in full (real time, reports written, $0): runara --sim %s\n",
              one_line(command.script, 300).c_str());
  std::filesystem::remove_all(plan_dir, ignored);
  if (hung || !record.outcome_known) return 1;
  return record.exit_code;
}

}  // namespace runara::cli
