// Teardown latency: how long after a run is stopped does the cloud see its machines destroyed?
//
// For each case a fresh in-process fake DigitalOcean API (no rate limits, droplets active after
// 0.2 s, 404 0.2 s after their DELETE) and a fresh ledger folder/HOME; then
//   runara --out DIR --max-droplets N tests/scripts/fleet.lua n=N ending=wait
// with RUNARA_POLL_S=0.1. Once it prints "ALL ACTIVE" the runtime gets
//   SIGINT  — its own teardown destroys the droplets, or
//   SIGKILL — the guardian (`runara __guardian`, a separate process the runtime started before
//             its first create) notices the closed pipe and destroys them,
// and the fake is polled every 1 ms for: all N DELETE requests received, live_droplets() == 0
// (created and not DELETEd), existing_droplets() == 0 (every GET answers 404), and for the
// runtime's and the guardian's exits (this process is a child subreaper, so the guardian is
// reparented to it when the runtime dies and can be waited for).
//
// With --network the script is tests/scripts/fleet_network.lua (a VPC, the run's firewall and N
// droplets in the VPC), the fake keeps its default delays (active after 0.5 s, 404 0.5 s after a
// DELETE, firewall changes applied after 0.5 s), and the end is also waited for: no firewall and
// no VPC of the run left at the fake (deleted after the droplets, in that order).
//
// usage: runara_teardown_latency [--runara PATH] [--script PATH] [--n 1,8] [--reps 5]
//                                [--modes SIGINT,SIGKILL] [--network] [--verbose]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exec_image.hpp"
#include "sim/fake_digitalocean.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string temp_dir() {
  std::string pattern = "/tmp/runara-bench-teardown-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// posix_spawn with stdout and stderr appended to `log`; the child gets its own process group so
// a terminal's Ctrl-C reaches only this program. Not fork: the fake API's threads run meanwhile
// (see tests/support/exec_image.hpp).
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& log) {
  runara::test::ExecImage image(argv, {env.begin(), env.end()});
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, image.path(), &actions, &attr, image.argv(), image.envp());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start " + argv.front() + ": " + std::strerror(rc));
  return pid;
}

struct Sample {
  double deletes_s = NAN;    // all N DELETE /v2/droplets/ID received by the fake
  double live_zero_s = NAN;  // live_droplets() == 0
  double gone_s = NAN;       // existing_droplets() == 0 (GET answers 404 for all)
  double network_gone_s = NAN;  // --network: no firewall and no runara- VPC left
  double runtime_exit_s = NAN;
  double guardian_exit_s = NAN;
  int runtime_status = -1;  // exit code, or 128+signal
  int guardian_status = -1;
  int deletes = 0, creates = 0;
  bool ok = false;
  std::string note;
};

struct Options {
  std::string runara = RUNARA_BINARY;
  std::string script = std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/fleet.lua";
  std::vector<int> ns{1, 8};
  int reps = 5;
  std::vector<std::string> modes{"SIGINT", "SIGKILL"};
  bool verbose = false;
  bool network = false;
  double timeout_s = 60;
};

bool network_gone(const runara::sim::FakeDigitalOcean& fake) {
  if (!fake.firewalls().empty()) return false;
  for (const auto& vpc : fake.vpcs()) {
    if (vpc.value("name", "").rfind("runara-", 0) == 0) return false;
  }
  return true;
}

// Waits (up to `timeout_s`) for every child left: the runtime and the guardian reparented to us.
void reap_all(double timeout_s) {
  const auto t0 = Clock::now();
  int status = 0;
  while (since(t0) < timeout_s) {
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0) return;  // ECHILD: none left
    if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "warning: a child process (the guardian?) is still running after %.0f s\n", timeout_s);
}

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

Sample run_once(const Options& o, const std::string& mode, int n) {
  Sample s;
  runara::sim::FakeDoConfig config;
  config.token = "bench-token-7c1e";
  if (!o.network) {  // --network: the fake's default delays
    config.active_after_s = 0.2;
    config.delete_after_s = 0.2;
  }
  config.enforce_rate_limits = false;
  config.droplet_limit = std::max(25, n);
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();

  const std::string dir = temp_dir();
  const std::string log = dir + "/runara.log";
  const std::map<std::string, std::string> env{{"RUNARA_DO_API_URL", fake.base_url()},
                                               {"DIGITALOCEAN_TOKEN", config.token},
                                               {"RUNARA_STATE_DIR", dir + "/state"},
                                               {"RUNARA_POLL_S", "0.1"},
                                               {"HOME", dir}};
  const std::vector<std::string> argv{o.runara, "--out", dir + "/out", "--max-droplets", std::to_string(n),
                                      o.script, "n=" + std::to_string(n), "ending=wait"};
  const pid_t runtime = spawn(argv, env, log);

  // Wait for "ALL ACTIVE" (the droplets exist and the script sleeps).
  bool active = false;
  int status = 0;
  const auto t_start = Clock::now();
  while (since(t_start) < 30) {
    if (slurp(log).find("ALL ACTIVE") != std::string::npos) {
      active = true;
      break;
    }
    if (waitpid(runtime, &status, WNOHANG) == runtime) {
      s.note = "runara exited early (" + std::to_string(status_code(status)) + ")";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!active) {
    if (s.note.empty()) {
      s.note = "no ALL ACTIVE within 30 s";
      kill(runtime, SIGKILL);
      waitpid(runtime, &status, 0);
    }
    // The guardian (reparented to us) cleans up; give it time to, and reap it.
    reap_all(o.timeout_s);
    s.note += "; kept " + dir + "; log:\n" + slurp(log);
    return s;
  }
  s.creates = fake.creates();
  const int deletes_before = fake.requests("DELETE /v2/droplets");

  const auto t0 = Clock::now();
  kill(runtime, mode == "SIGINT" ? SIGINT : SIGKILL);
  bool runtime_done = false, guardian_done = false;
  // Each event is stamped right after the check that saw it (an upper bound: it happened at most
  // one poll interval, plus whatever delay the scheduler adds, before).
  auto seen = [&](double& at, bool condition) {
    if (std::isnan(at) && condition) at = since(t0);
  };
  while (since(t0) < o.timeout_s) {
    seen(s.deletes_s, fake.requests("DELETE /v2/droplets") - deletes_before >= n);
    seen(s.live_zero_s, fake.live_droplets() == 0);
    seen(s.gone_s, fake.existing_droplets() == 0);
    if (o.network) seen(s.network_gone_s, network_gone(fake));
    // Reap the runtime and, once reparented to us, the guardian.
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      const double t = since(t0);
      if (pid == runtime) {
        s.runtime_exit_s = t;
        s.runtime_status = status_code(status);
        runtime_done = true;
      } else {
        s.guardian_exit_s = t;
        s.guardian_status = status_code(status);
        guardian_done = true;
      }
    }
    const bool network_done = !o.network || !std::isnan(s.network_gone_s);
    if (runtime_done && guardian_done && !std::isnan(s.gone_s) && network_done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s.deletes = fake.requests("DELETE /v2/droplets") - deletes_before;
  const int expected = 128 + (mode == "SIGINT" ? SIGINT : SIGKILL);  // 130 / 137
  s.ok = runtime_done && guardian_done && !std::isnan(s.gone_s) && (!o.network || !std::isnan(s.network_gone_s)) &&
         s.runtime_status == expected &&
         s.guardian_status == 0 && s.creates == n;
  if (!s.ok) {
    if (!runtime_done) kill(runtime, SIGKILL);
    s.note = "runtime exit " + std::to_string(s.runtime_status) + " (expected " + std::to_string(expected) +
             "), guardian exit " + std::to_string(s.guardian_status) + ", creates " + std::to_string(s.creates) +
             ", live " + std::to_string(fake.live_droplets()) + "; kept " + dir + "; log:\n" + slurp(log);
    reap_all(o.timeout_s);
  } else if (o.verbose) {
    s.note = slurp(log);
  }
  if (s.ok) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return s;
}

struct Stats {
  double median, min, max;
  int count;
};

std::optional<Stats> stats(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size();
  const double median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
  return Stats{median, v.front(), v.back(), static_cast<int>(k)};
}

std::string ms(double s) {
  if (std::isnan(s)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", s * 1000);
  return buf;
}

void usage() {
  std::fprintf(stderr,
               "usage: runara_teardown_latency [--runara PATH] [--script PATH] [--n 1,8] [--reps 5]\n"
               "                               [--modes SIGINT,SIGKILL] [--timeout S] [--verbose]\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--runara") o.runara = value();
    else if (a == "--script") o.script = value();
    else if (a == "--n") {
      o.ns.clear();
      for (const auto& x : split(value(), ',')) o.ns.push_back(std::atoi(x.c_str()));
    } else if (a == "--reps") o.reps = std::atoi(value().c_str());
    else if (a == "--modes") o.modes = split(value(), ',');
    else if (a == "--timeout") o.timeout_s = std::atof(value().c_str());
    else if (a == "--verbose") o.verbose = true;
    else if (a == "--network") {
      o.network = true;
      o.script = std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/fleet_network.lua";
    }
    else {
      usage();
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  for (const auto& m : o.modes) {
    if (m != "SIGINT" && m != "SIGKILL") {
      std::fprintf(stderr, "unknown mode %s (SIGINT or SIGKILL)\n", m.c_str());
      return 2;
    }
  }
  if (access(o.runara.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "not executable: %s\n", o.runara.c_str());
    return 2;
  }
  // The guardian runs in its own session; when the runtime dies it is reparented to us.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  std::printf("runara: %s\nscript: %s\nfake DO: active_after %s s, delete_after %s s, no rate limits; "
              "RUNARA_POLL_S=0.1; poll every 1 ms\n\n",
              o.runara.c_str(), o.script.c_str(), o.network ? "0.5" : "0.2", o.network ? "0.5" : "0.2");
  std::fflush(stdout);

  struct Row {
    std::string mode;
    int n;
    std::vector<Sample> samples;
  };
  std::vector<Row> rows;
  int failures = 0;
  for (const auto& mode : o.modes) {
    for (int n : o.ns) {
      Row row{mode, n, {}};
      for (int r = 0; r < o.reps; ++r) {
        Sample s = run_once(o, mode, n);
        std::printf("%-7s N=%-2d rep %d: DELETEs %s ms, live=0 %s ms, all 404 %s ms, runtime exit %s ms (%d), "
                    "guardian exit %s ms (%d), %d DELETE requests, firewall+VPC gone %s ms%s\n",
                    mode.c_str(), n, r + 1, ms(s.deletes_s).c_str(), ms(s.live_zero_s).c_str(), ms(s.gone_s).c_str(),
                    ms(s.runtime_exit_s).c_str(), s.runtime_status, ms(s.guardian_exit_s).c_str(), s.guardian_status,
                    s.deletes, ms(s.network_gone_s).c_str(), s.ok ? "" : "  FAILED");
        if (!s.note.empty() && (!s.ok || o.verbose)) std::printf("%s\n", s.note.c_str());
        std::fflush(stdout);
        if (!s.ok) ++failures;
        row.samples.push_back(std::move(s));
      }
      rows.push_back(std::move(row));
    }
  }

  std::printf("\nmilliseconds from the signal; median (min-max) over the runs that completed\n");
  std::printf("%-8s %3s %5s  %-20s %-20s %-20s %-20s %-20s %s\n", "signal", "N", "runs", "all DELETEs recv",
              "live_droplets()=0", "all 404 (existing=0)", "runtime exited", "guardian exited",
              o.network ? "firewall+VPC gone" : "");
  for (const auto& row : rows) {
    auto col = [&](double Sample::*field) {
      std::vector<double> v;
      for (const auto& s : row.samples) {
        if (s.ok) v.push_back(s.*field);
      }
      const auto st = stats(v);
      if (!st) return std::string("-");
      return ms(st->median) + " (" + ms(st->min) + "-" + ms(st->max) + ")";
    };
    int ok = 0;
    for (const auto& s : row.samples) ok += s.ok;
    std::printf("%-8s %3d %2d/%-2d  %-20s %-20s %-20s %-20s %-20s %s\n", row.mode.c_str(), row.n, ok,
                static_cast<int>(row.samples.size()), col(&Sample::deletes_s).c_str(), col(&Sample::live_zero_s).c_str(),
                col(&Sample::gone_s).c_str(), col(&Sample::runtime_exit_s).c_str(), col(&Sample::guardian_exit_s).c_str(),
                o.network ? col(&Sample::network_gone_s).c_str() : "");
  }
  return failures ? 1 : 0;
}
