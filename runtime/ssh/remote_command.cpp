#include "ssh/remote_command.hpp"

#include <stdexcept>

namespace runara::ssh {

namespace {

constexpr std::string_view kMarker = "runara-pgid ";

bool is_identifier(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

// Field 5 of /proc/$$/stat is the process group: reading it costs no child process. When the
// shell does not lead its group, it starts itself again in a new session (setsid does not fork
// for a non-leader, so the pid stays) once; if that still fails the marker says 0: no group kill.
constexpr std::string_view kLeadGroup =
    "read -r _ _ _ _ __rn_g _ </proc/$$/stat 2>/dev/null || __rn_g=$$\n"
    "if [ \"$__rn_g\" != \"$$\" ] && [ -z \"$__rn_s\" ] && command -v setsid >/dev/null; then\n"
    "  __rn_s=1; export __rn_s; exec setsid \"${SHELL:-/bin/sh}\" -c \"$__rn_script\"\n"
    "fi\n"
    "[ \"$__rn_g\" = \"$$\" ] || __rn_g=0\n"
    "printf 'runara-pgid %s\\n' \"$__rn_g\"\n"
    "unset __rn_g __rn_s __rn_script\n";

}  // namespace

const std::string& bootstrap_command() {
  static const std::string kBootstrap =
      "IFS= read -r __rn_n || exit 126; __rn_script=$(head -c \"$__rn_n\") || exit 126; eval \"$__rn_script\"";
  return kBootstrap;
}

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

Result<std::string> preamble(const std::string& command, const EnvList& env) {
  // Commands start in $HOME: where sshd starts them anyway, except on the simulated cloud, whose
  // machines have a HOME of their own (sshd's SetEnv) but the real user's passwd entry.
  std::string script = "cd \"$HOME\" 2>/dev/null\n";
  for (const auto& [name, value] : env) {
    if (!is_identifier(name))
      return Error{"env name '" + name + "' is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)"};
    script += "export " + name + "=" + shell_quote(value) + "\n";
  }
  script += kLeadGroup;
  script += "eval " + shell_quote(command) + "\n";
  return std::to_string(script.size()) + "\n" + script;
}

std::string kill_group_command(long pgid, const std::string& signal) {
  return "kill -s " + signal + " -- -" + std::to_string(pgid) + " 2>/dev/null; true";
}

std::optional<long> parse_pgid_marker(std::string_view line) {
  if (line.substr(0, kMarker.size()) != kMarker) return std::nullopt;
  line.remove_prefix(kMarker.size());
  if (line.empty() || line.size() > 18) return std::nullopt;
  long value = 0;
  for (char c : line) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace runara::ssh
