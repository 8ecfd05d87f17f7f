#include "terminal_events.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/progress_throttle.hpp"
#include "guards/watchdog.hpp"

namespace runara::cli {

namespace {

// A progress line is transient on a terminal: the next line overwrites it. One terminal per
// process, so the state is too.
bool progress_shown = false;
bool json_log = false;

// One JSON object per line; bytes that are not UTF-8 are replaced, never a reason to fail.
void json_line(const char* kind, std::string_view text, nlohmann::json extra = nlohmann::json::object()) {
  extra["time"] = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch()).count()) / 1000;
  extra["kind"] = kind;
  extra["text"] = std::string(text);
  const std::string line = extra.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fprintf(stderr, "%s\n", line.c_str());
}

void clear_progress() {
  if (progress_shown) std::fputs("\r\033[K", stderr);
  progress_shown = false;
}

}  // namespace

void end_progress_line() { clear_progress(); }

void use_json_log() { json_log = true; }

void say(std::string_view line) {
  if (json_log) return json_line("log", line);
  clear_progress();
  std::fprintf(stderr, "runara: %.*s\n", static_cast<int>(line.size()), line.data());
}

int report_outcome(const Outcome& outcome) {
  end_progress_line();
  if (json_log) {
    json_line("outcome", outcome.message, {{"exit", static_cast<int>(outcome.exit)}, {"traceback", outcome.traceback},
                                           {"out_dir", outcome.out_dir}});
    return static_cast<int>(outcome.exit);
  }
  if (outcome.exit != Exit::ok) {
    // The message and traceback hold the script's text (an error message, chunk names) and
    // machines' (a failed command's stderr): made visible, and no later line of them starts where
    // runara's own lines do (the message's continuations are indented under its text; every
    // traceback line after "stack traceback:" starts with a tab, as Lua writes its frames).
    std::fprintf(stderr, "runara: %s\n", indent_continuations(visible(outcome.message), 8).c_str());
    if (!outcome.traceback.empty()) {
      std::string traceback = visible(outcome.traceback);
      for (std::size_t at = traceback.find('\n'); at != std::string::npos; at = traceback.find('\n', at + 1)) {
        if (at + 1 == traceback.size() || traceback[at + 1] != '\t') traceback.insert(at + 1, 1, '\t');
      }
      std::fprintf(stderr, "%s\n", traceback.c_str());
    }
  }
  // The folder's default name holds the script's (results/<stamp>-<script>): shown as `runara runs` does.
  if (!outcome.out_dir.empty()) {
    std::fprintf(stderr, "runara: results in %s/\n", visible(outcome.out_dir, LineFeeds::show).c_str());
  }
  return static_cast<int>(outcome.exit);
}

Events terminal_events() {
  const bool tty = isatty(STDERR_FILENO);
  Events events;
  events.print = [](std::string_view text) {
    clear_progress();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  if (json_log) {
    events.log = [](std::string_view line) { json_line("log", line); };
    events.progress = [throttle = ProgressThrottle()](std::string_view line) mutable {
      if (throttle.due(monotonic_seconds())) json_line("progress", line);
    };
  }
  if (json_log) {
    events.stuck = [](int exit_code, std::string_view message) {
      json_line("stuck", message);
      std::fflush(stderr);
      _exit(exit_code);
    };
    return events;
  }
  events.log = [](std::string_view line) {
    clear_progress();
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  };
  events.progress = [tty, throttle = ProgressThrottle()](std::string_view line) mutable {
    // Not a terminal (CI, nohup, a pipe): a plain line every few seconds, so the run is not silent.
    if (!tty) {
      if (throttle.due(monotonic_seconds())) std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
      return;
    }
    std::fprintf(stderr, "\r\033[K%.*s", static_cast<int>(line.size()), line.data());
    progress_shown = true;
  };
  events.stuck = [](int exit_code, std::string_view message) {
    std::fprintf(stderr, "\nrunara: %.*s; exiting now. Machines the run created are destroyed by its guardian "
                 "(check with `runara ls`).\n", static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    _exit(exit_code);
  };
  return events;
}

}  // namespace runara::cli
