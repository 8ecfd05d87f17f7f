#include "cloud/doctl_config.hpp"
#include "base/text.hpp"

#include <map>

namespace runara {

namespace {

// A scalar after "key:": quoted ('...' or "...") or bare up to a " #" comment.
std::string scalar(std::string_view v) {
  v = trim(v);
  if (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
    const char q = v.front();
    const auto close = v.find(q, 1);
    return std::string(close == std::string_view::npos ? v.substr(1) : v.substr(1, close - 1));
  }
  if (const auto hash = v.find(" #"); hash != std::string_view::npos) v = trim(v.substr(0, hash));
  return std::string(v);
}

struct Parsed {
  std::map<std::string, std::string> top;       // top-level key -> scalar
  std::map<std::string, std::string> contexts;  // auth-contexts name -> token
};

Parsed parse(std::string_view yaml) {
  Parsed out;
  bool in_contexts = false;
  while (!yaml.empty()) {
    const std::size_t end = yaml.find('\n');
    const std::string_view line = yaml.substr(0, end);
    yaml = end == std::string_view::npos ? std::string_view() : yaml.substr(end + 1);
    if (trim(line).empty() || trim(line).front() == '#') continue;
    const bool indented = line.front() == ' ' || line.front() == '\t';
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string key(trim(line.substr(0, colon)));
    if (!indented) {
      in_contexts = key == "auth-contexts";
      out.top[key] = scalar(line.substr(colon + 1));
    } else if (in_contexts) {
      out.contexts[key] = scalar(line.substr(colon + 1));
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> doctl_config_token(std::string_view yaml, const std::string& context) {
  const Parsed parsed = parse(yaml);
  std::string name = context;
  if (name.empty()) {
    const auto it = parsed.top.find("context");
    name = it == parsed.top.end() || it->second.empty() ? "default" : it->second;
  }
  const auto& from = name == "default" ? parsed.top : parsed.contexts;
  const auto it = from.find(name == "default" ? "access-token" : name);
  if (it == from.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace runara
