// How every `runara` command line is read: one parser (CLI11, Debian's libcli11-dev) with
// runara's conventions, so that each command declares its options and what each does, and
// nothing else. The conventions: `--flag=value` and `--flag value` alike; a switch given a value
// ("--quiet=yes") and an option without one are named; an unknown option gets runara's "did you
// mean"; `-h`/`--help` prints the command's own text; a usage error is exit status 2 (the caller
// prints it, or `parse_or_status` does). Values are handed to the command in command-line order,
// one occurrence at a time (a repeated option is applied each time; where two options set the
// same thing, the later wins), and the first value refused ends the parse with its message.
//
// Contract. Main thread, before any runtime exists; no I/O except what `parse_or_status`
// prints. CLI/CLI.hpp is included by command_line.cpp alone (compile time: the header is large).
// Nothing here is built for a run of a script unless its command line is parsed (start-up time).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace runara::cli {

// What a command does with one value of an option: "" when taken, else the usage error
// ("--limit expects a whole number >= 0, got 'x'").
using ValueAction = std::function<std::string(const std::string& value)>;

class CommandLineParser {
 public:
  // `help`: what -h/--help prints (the command's own text). `help_flag`: false where -h/--help
  // mean something else (runara's own options, handled by the caller as a stop flag).
  explicit CommandLineParser(std::string help, bool help_flag = true);
  ~CommandLineParser();
  CommandLineParser(const CommandLineParser&) = delete;
  CommandLineParser& operator=(const CommandLineParser&) = delete;

  // An option taking one value; `names` as "-c,--concurrency". `missing`: the error when the
  // command line ends where the value should be (default "NAME needs a value").
  CommandLineParser& option(const std::string& names, ValueAction apply, std::string missing = {});
  // A switch; "--name=value" is refused ("--name takes no value, got '--name=value'").
  CommandLineParser& flag(const std::string& names, std::function<void()> apply);
  // A switch acted on at once (--version): what follows it is not read.
  CommandLineParser& stop_flag(const std::string& names, std::function<void()> apply);
  // Arguments that are not options, wherever they stand (and all after "--"), in order, after
  // the options. Without this, each is a usage error ("unknown argument 'x'").
  CommandLineParser& positionals(ValueAction apply);
  // runara's own command line: options end at the first argument that is not one (the script);
  // it and everything after it go to `rest` untouched. A "--" that ended the options is kept at
  // the front of `rest`, so the caller knows the arguments were meant literally.
  CommandLineParser& options_end_at_first_argument(std::vector<std::string>& rest);
  // Appended to the unknown-option message (" (see runara --help)").
  CommandLineParser& unknown_option_hint(std::string hint);

  enum class Outcome { parsed, help, usage_error };
  // `args`: the arguments after the command's name. The error is in `error`.
  Outcome parse(const std::vector<std::string>& args, std::string& error);
  // For a subcommand: parses argv[first...]; on -h/--help prints the help to stdout (returns 0),
  // on a usage error prints "PROGRAM: error\n" (visible(): the user's text shown, not
  // acted on by a terminal) and `usage` to stderr (returns 2); -1 when parsed.
  int parse_or_status(int argc, char** argv, int first, const std::string& program, const std::string& usage);

  // The help text given to the constructor.
  const std::string& help() const;
  // Whether `name` ("--out", "-q") is one of the declared options, and which kind.
  enum class Known { no, switch_, value };
  Known known(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara::cli
