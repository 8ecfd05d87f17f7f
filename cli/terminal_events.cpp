#include "terminal_events.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "progress_throttle.hpp"
#include "watchdog.hpp"

namespace runara::cli {

namespace {

// A progress line is transient on a terminal: the next line overwrites it. One terminal per
// process, so the state is too.
bool progress_shown = false;

void clear_progress() {
  if (progress_shown) std::fputs("\r\033[K", stderr);
  progress_shown = false;
}

}  // namespace

void end_progress_line() { clear_progress(); }

int report_outcome(const Outcome& outcome) {
  end_progress_line();
  if (outcome.exit != Exit::ok) {
    std::fprintf(stderr, "runara: %s\n", outcome.message.c_str());
    if (!outcome.traceback.empty()) std::fprintf(stderr, "%s\n", outcome.traceback.c_str());
  }
  if (!outcome.out_dir.empty()) std::fprintf(stderr, "runara: results in %s/\n", outcome.out_dir.c_str());
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
