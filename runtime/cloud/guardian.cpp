#include "cloud/guardian.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cerrno>
#include <string>
#include <vector>

#include <uv.h>

#include "base/text.hpp"
#include "cloud/do_client.hpp"
#include "cloud/ledger.hpp"
#include "cloud/run_cleanup.hpp"
#include "curl/http_client.hpp"
#include "base/watcher_process.hpp"


namespace runara {

namespace {

// How long past the run's deadline (teardown included) a runtime may hang before the guardian
// kills it.
constexpr double kGraceS = 60;

std::FILE* g_log = nullptr;  // the guardian process's own log (one process, one run)

// One line of the guardian's log (and stderr). Droplet names and the API's answers in it pass
// through visible(): they cannot drive a terminal reading the log or forge a line of it.
void say(const std::string& text) {
  const std::string line = visible(text, LineFeeds::show);
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::fprintf(stderr, "runara guardian: %s\n", line.c_str());
  if (g_log) {
    std::fprintf(g_log, "%s %s\n", stamp, line.c_str());
    std::fflush(g_log);
  }
}

std::string flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return {};
}

std::string read_token(int fd) {
  std::string token;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') token += c;
  return token;
}

// Waits until the pipe closes (true) or the deadline passes (false).
bool wait_for_runtime(int fd, double deadline_unix) {
  while (true) {
    const double left = deadline_unix - static_cast<double>(std::time(nullptr));
    if (deadline_unix > 0 && left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int timeout_ms = deadline_unix > 0 ? static_cast<int>(std::min(left, 3600.0) * 1000) : -1;
    if (poll(&p, 1, timeout_ms) > 0) {
      char buf[64];
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
    }
  }
}

// A ledger folder of the guardian's own, empty, removed when done: what the cleanup works from
// when the run's ledger cannot be read. The cleanup then destroys only what the cloud shows
// carrying the run's tag; the run's own folder is not made again (a removed state folder stays
// removed).
struct ScratchLedgerDir {
  std::string path;
  ScratchLedgerDir() {
    char pattern[] = "/tmp/runara-guardian-XXXXXX";
    if (::mkdtemp(pattern)) path = pattern;
  }
  ~ScratchLedgerDir() {
    if (path.empty()) return;
    for (const char* f : {"/ledger.db", "/ledger.db-wal", "/ledger.db-shm"}) ::unlink((path + f).c_str());
    ::rmdir(path.c_str());
  }
};

int clean_up(const std::string& run_id, const std::string& state_dir, const std::string& api_base,
             const std::string& token, bool ledger_readable) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = 0;
  ScratchLedgerDir scratch;
  if (!ledger_readable && scratch.path.empty()) {
    say("cannot make a folder for a scratch ledger in /tmp: nothing destroyed; run `runara reap --run " + run_id + "`");
    return 1;
  }
  {
    HttpClient http(&loop);
    DoClient client(http, api_base, token, DoClientOptions{.log = say});
    Ledger ledger(ledger_readable ? state_dir : scratch.path);
    RunCleanup cleanup(&loop, client, ledger, run_id, "runara:run-" + run_id, CleanupOptions{}, say);
    cleanup.start([&](CleanupReport report) {
      for (const auto& d : report.destroyed) say("destroyed " + d.line());
      for (const auto& line : report.refused) say("NOT TOUCHED: " + line);
      if (report.complete()) {
        ledger.finish_run(run_id, RunStatus::crashed);
        say(ledger_readable ? "run " + run_id + " is cleaned up"
                            : "run " + run_id + ": what the cloud listed under its tag is cleaned up; `runara reap --run " +
                                  run_id + "` finds the rest");
      } else {
        for (const auto& line : report.remaining) say("COULD NOT DESTROY: " + line);
        say("run `runara reap --run " + run_id + "` to finish" + (report.error.empty() ? "" : " (" + report.error + ")"));
        status = 1;
      }
      http.close({});
    });
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return status;
}

}  // namespace

Result<std::unique_ptr<Guardian>> Guardian::start(const GuardianSpec& spec) {
  std::string error;
  if (access(spec.executable.c_str(), X_OK) != 0) {
    return Error{"cannot start the guardian: '" + spec.executable + "' is not executable"};
  }
  char deadline[32];
  std::snprintf(deadline, sizeof deadline, "%.0f", spec.deadline_unix);
  const std::string runtime_pid = std::to_string(getpid());
  const auto watcher = start_watcher({spec.executable, "__guardian", "--run", spec.run_id, "--state-dir", spec.state_dir,
                                      "--api", spec.api_base, "--runtime-pid", runtime_pid, "--deadline", deadline},
                                     3, error);
  if (!watcher) {
    return Error{"cannot start the guardian: " + error};
  }
  const int fd = watcher->pipe_fd;
  // The token travels through the pipe, never through argv or the environment.
  const std::string line = spec.token + "\n";
  if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    close(fd);
    return Error{"cannot start the guardian: could not hand it the token"};
  }
  return std::unique_ptr<Guardian>(new Guardian(watcher->pid, fd));
}

Guardian::~Guardian() {
  if (pipe_fd_ >= 0) close(pipe_fd_);
}

int guardian_main(int argc, char** argv) {
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  const std::string run_id = flag(argc, argv, "--run"), state_dir = flag(argc, argv, "--state-dir");
  const std::string api_base = flag(argc, argv, "--api");
  const pid_t runtime_pid = static_cast<pid_t>(std::atol(flag(argc, argv, "--runtime-pid").c_str()));
  const double deadline = std::atof(flag(argc, argv, "--deadline").c_str());
  if (run_id.empty() || state_dir.empty() || api_base.empty()) {
    std::fprintf(stderr, "runara __guardian is started by runara itself\n");
    return 2;
  }
  g_log = std::fopen((state_dir + "/guardian-" + run_id + ".log").c_str(), "a");
  const std::string token = read_token(3);
  const bool runtime_ended = wait_for_runtime(3, deadline > 0 ? deadline + kGraceS : 0);
  if (!runtime_ended) {
    say("the runtime (pid " + std::to_string(runtime_pid) + ") is past its deadline; killing it");
    kill(runtime_pid, SIGKILL);
  }
  std::string ledger_problem;
  const std::string ledger_path = state_dir + "/ledger.db";
  try {
    // Opening a ledger makes its folder and file: a ledger that is gone must not come back empty
    // and then be believed.
    if (::access(ledger_path.c_str(), F_OK) != 0) throw LedgerError(ledger_path + " is gone (" + std::strerror(errno) + ")");
    Ledger ledger(state_dir);
    for (const auto& run : ledger.runs()) {
      if (run.run_id == run_id && run.status == RunStatus::finished && runtime_ended) return 0;
    }
    if (ledger.pending(run_id).empty() && ledger.pending_resources(run_id).empty() && ledger.pending_keys(run_id).empty()) {
      ledger.finish_run(run_id, RunStatus::crashed);
      return 0;
    }
  } catch (const std::exception& e) {
    ledger_problem = e.what();
  }
  if (ledger_problem.empty()) {
    say("the runtime of run " + run_id + " ended without tearing down; destroying its machines");
  } else {
    say("cannot read the run's ledger: " + ledger_problem + ". Without it the guardian cannot tell whether run " +
        run_id + " tore down; it destroys what the cloud lists under the run's tag runara:run-" + run_id +
        "; what only the ledger knew (the run's SSH key, VPC or firewall) is left to `runara reap --run " + run_id + "`");
  }
  const int status = clean_up(run_id, state_dir, api_base, token, ledger_problem.empty());
  if (g_log) std::fclose(g_log);
  return status;
}

}  // namespace runara
