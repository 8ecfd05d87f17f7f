#include "terminal_events.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

namespace runara::cli {

Events terminal_events() {
  // A progress line is transient on a terminal: the next line overwrites it.
  auto progress_shown = std::make_shared<bool>(false);
  const bool tty = isatty(STDERR_FILENO);
  auto clear_progress = [progress_shown, tty] {
    if (*progress_shown && tty) std::fputs("\r\033[K", stderr);
    *progress_shown = false;
  };
  Events events;
  events.print = [clear_progress](std::string_view text) {
    clear_progress();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  events.log = [clear_progress](std::string_view line) {
    clear_progress();
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  };
  events.progress = [progress_shown, tty](std::string_view line) {
    if (!tty) return;
    std::fprintf(stderr, "\r\033[K%.*s", static_cast<int>(line.size()), line.data());
    *progress_shown = true;
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
