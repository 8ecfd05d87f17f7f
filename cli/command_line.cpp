#include "command_line.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <utility>

#include "base/did_you_mean.hpp"
#include "base/text.hpp"

namespace runara::cli {

namespace {

enum class Kind { value, flag, stop, help };

struct Declared {
  CLI::Option* option = nullptr;
  Kind kind = Kind::value;
  std::vector<std::string> names;  // as typed: "-c", "--concurrency"
  ValueAction apply;
  std::function<void()> act;
  std::string missing;
};

std::vector<std::string> split_names(const std::string& names) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = names.find(',', start);
    out.push_back(names.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool option_shaped(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace

struct CommandLineParser::Impl {
  CLI::App app{"", "runara"};
  std::string help;
  std::vector<Declared> declared;
  ValueAction positional;
  std::vector<std::string>* rest = nullptr;
  std::string hint;

  const Declared* find(const std::string& name) const {
    for (const auto& d : declared)
      for (const auto& n : d.names)
        if (n == name) return &d;
    return nullptr;
  }

  Declared& declare(const std::string& names, Kind kind) {
    Declared d;
    d.kind = kind;
    d.names = split_names(names);
    if (kind == Kind::value) {
      // One value per occurrence, however many occurrences; never a list ("[a,b]" stays one
      // value) and never the words after it.
      d.option = app.add_option(names)->type_size(1)->expected(1)->allow_extra_args(false)->multi_option_policy(
          CLI::MultiOptionPolicy::TakeAll);
    } else {
      d.option = app.add_flag(names)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    declared.push_back(std::move(d));
    return declared.back();
  }

  std::string missing_value(const Declared& d, const std::string& typed) const {
    return d.missing.empty() ? typed + " needs a value" : d.missing;
  }

  // The shapes CLI11 would read otherwise than runara does, checked as CLI11 will walk the
  // options: a switch given "=value" (CLI11 takes "--quiet=yes" as a yes), "--name=" with
  // nothing after the '=' (CLI11 takes the next argument as its value; runara, the empty value)
  // and an option that ends the command line (named with the command's own wording).
  std::string normalize(const std::vector<std::string>& args, std::vector<std::string>& out) const {
    std::size_t i = 0;
    for (; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--") break;
      if (!option_shaped(a)) {
        if (rest) break;  // the script: options end here
        out.push_back(a);
        continue;
      }
      if (a.rfind("--", 0) == 0) {
        const std::size_t eq = a.find('=');
        const std::string name = a.substr(0, eq);
        const Declared* d = find(name);
        if (d && eq != std::string::npos && d->kind != Kind::value) return name + " takes no value, got '" + a + "'";
        if (d && eq == a.size() - 1) {
          out.push_back(name);
          out.push_back("");
          continue;
        }
        out.push_back(a);
        if (d && d->kind == Kind::value && eq == std::string::npos) {
          if (i + 1 >= args.size()) return missing_value(*d, name);
          out.push_back(args[++i]);
        }
        continue;
      }
      out.push_back(a);
      // -qe CODE: switches, then at most one option whose value is the rest or the next argument.
      for (std::size_t j = 1; j < a.size(); ++j) {
        const Declared* d = find(std::string("-") + a[j]);
        if (!d || d->kind != Kind::value) {
          if (!d) break;
          continue;
        }
        if (j + 1 == a.size()) {
          if (i + 1 >= args.size()) return missing_value(*d, std::string("-") + a[j]);
          out.push_back(args[++i]);
        }
        break;
      }
    }
    out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    return {};
  }

  std::vector<std::string> known_names() const {
    std::vector<std::string> names;
    for (const auto& d : declared) names.insert(names.end(), d.names.begin(), d.names.end());
    return names;
  }

  // What CLI11 set aside: unknown options, arguments, and (for runara's own line) the script
  // and its arguments.
  std::string sort_remaining(std::string& error) {
    const std::vector<std::string> remaining = app.remaining();
    bool literal = false;
    for (std::size_t i = 0; i < remaining.size(); ++i) {
      const std::string& a = remaining[i];
      if (rest && (a == "--" || !option_shaped(a))) {
        rest->assign(remaining.begin() + static_cast<std::ptrdiff_t>(i), remaining.end());
        return {};
      }
      if (!literal && a == "--") {
        literal = true;
        continue;
      }
      if (!literal && option_shaped(a)) {
        const std::string name = a.substr(0, a.find('='));
        return error = "unknown option '" + name + "'" + did_you_mean(name, known_names()) + hint;
      }
      if (!positional) return error = "unknown argument '" + a + "'";
    }
    return {};
  }
};

CommandLineParser::CommandLineParser(std::string help, bool help_flag) : impl_(std::make_unique<Impl>()) {
  impl_->help = std::move(help);
  impl_->app.set_help_flag();  // runara's own text, below
  impl_->app.allow_extras();   // unknown options are named by runara, with a suggestion
  if (help_flag) impl_->declare("-h,--help", Kind::help);
}

CommandLineParser::~CommandLineParser() = default;

CommandLineParser& CommandLineParser::option(const std::string& names, ValueAction apply, std::string missing) {
  Declared& d = impl_->declare(names, Kind::value);
  d.apply = std::move(apply);
  d.missing = std::move(missing);
  return *this;
}

CommandLineParser& CommandLineParser::flag(const std::string& names, std::function<void()> apply) {
  impl_->declare(names, Kind::flag).act = std::move(apply);
  return *this;
}

CommandLineParser& CommandLineParser::stop_flag(const std::string& names, std::function<void()> apply) {
  impl_->declare(names, Kind::stop).act = std::move(apply);
  return *this;
}

CommandLineParser& CommandLineParser::positionals(ValueAction apply) {
  impl_->positional = std::move(apply);
  return *this;
}

CommandLineParser& CommandLineParser::options_end_at_first_argument(std::vector<std::string>& rest) {
  impl_->rest = &rest;
  impl_->app.prefix_command();
  return *this;
}

CommandLineParser& CommandLineParser::unknown_option_hint(std::string hint) {
  impl_->hint = std::move(hint);
  return *this;
}

const std::string& CommandLineParser::help() const { return impl_->help; }

CommandLineParser::Known CommandLineParser::known(const std::string& name) const {
  const Declared* d = impl_->find(name);
  return !d ? Known::no : d->kind == Kind::value ? Known::value : Known::switch_;
}

CommandLineParser::Outcome CommandLineParser::parse(const std::vector<std::string>& args, std::string& error) {
  Impl& p = *impl_;
  std::vector<std::string> normalized;
  if (!(error = p.normalize(args, normalized)).empty()) return Outcome::usage_error;
  try {
    std::vector<std::string> reversed(normalized.rbegin(), normalized.rend());  // CLI11 reads from the back
    p.app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    error = e.what();  // not expected: the shapes it refuses were checked above
    return Outcome::usage_error;
  }
  std::map<const CLI::Option*, const Declared*> by_option;
  for (const auto& d : p.declared) by_option[d.option] = &d;
  // -h/--help and --version act at once, whatever else the line holds.
  for (const CLI::Option* o : p.app.parse_order()) {
    const Declared& d = *by_option.at(o);
    if (d.kind == Kind::help) return Outcome::help;
    if (d.kind == Kind::stop) {
      d.act();
      return Outcome::parsed;
    }
  }
  if (!p.sort_remaining(error).empty()) return Outcome::usage_error;
  std::map<const CLI::Option*, std::size_t> next;  // each option's results, one per occurrence
  for (const CLI::Option* o : p.app.parse_order()) {
    const Declared& d = *by_option.at(o);
    const std::string& value = o->results().at(next[o]++);
    if (d.kind == Kind::flag) d.act();
    else if (!(error = d.apply(value)).empty()) return Outcome::usage_error;
  }
  if (p.positional && !p.rest) {
    bool literal = false;
    for (const auto& a : p.app.remaining()) {
      if (!literal && a == "--") {
        literal = true;
        continue;
      }
      if (!(error = p.positional(a)).empty()) return Outcome::usage_error;
    }
  }
  return Outcome::parsed;
}

int CommandLineParser::parse_or_status(int argc, char** argv, int first, const std::string& program,
                                       const std::string& usage) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i) args.emplace_back(argv[i]);
  std::string error;
  switch (parse(args, error)) {
    case Outcome::parsed: return -1;
    case Outcome::help: std::fputs(impl_->help.c_str(), stdout); return 0;
    case Outcome::usage_error:  // the error may quote the user's text: shown, never acted on by a terminal
      std::fprintf(stderr, "%s: %s\n%s", program.c_str(), visible(error).c_str(), usage.c_str());
      return 2;
  }
  return 2;
}

}  // namespace runara::cli
