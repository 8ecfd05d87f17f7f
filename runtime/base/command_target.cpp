// CommandTarget's defaults, for targets that can only run fixed commands (the local host of
// gpu_metrics.local()): no stdin, no files. The ssh session's target has both.
#include "runara/command_target.hpp"

namespace runara {

namespace {
class Nothing final : public CommandTarget::Running {};
}  // namespace

std::unique_ptr<CommandTarget::Running> CommandTarget::run(const std::string& command, Handlers handlers, Input input) {
  if (input.data.empty() && !input.hold_open) return run(command, std::move(handlers));
  Exit exit;
  exit.error = name() + " cannot give a command input";
  if (handlers.on_exit) handlers.on_exit(exit);
  return std::make_unique<Nothing>();
}

void CommandTarget::install(const std::string&, const std::string&, std::function<void(const std::string&)> done) {
  done(name() + " cannot receive files");
}

}  // namespace runara
