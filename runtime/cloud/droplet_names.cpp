// Droplet name and tag checks; see droplet_names.hpp for the contract.
#include "cloud/droplet_names.hpp"

namespace runara {

namespace {

constexpr std::size_t kQuoteChars = 40;

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_name_char(char c) { return is_alnum(c) || c == '.' || c == '-'; }
bool is_tag_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == ':'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool starts_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && equal_ignoring_case(text.substr(0, prefix.size()), prefix);
}

}  // namespace

std::string quoted_prefix(std::string_view text) {
  if (text.size() <= kQuoteChars) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kQuoteChars)) + "...' (" + std::to_string(text.size()) + " characters)";
}

Status check_droplet_name(std::string_view name, std::size_t max_length) {
  const std::string what = "name " + quoted_prefix(name);
  if (name.empty()) return Error{"name must not be empty"};
  if (name.size() > max_length) {
    return Error{what + " is too long: at most " + std::to_string(max_length) + " characters (DigitalOcean's limit of " +
                 std::to_string(kMaxDropletNameLength) + " less the suffix runara adds)"};
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (is_name_char(name[i])) continue;
    if (name[i] == '_') return Error{what + " is not a valid droplet name: no underscores (letters, digits, '.' and '-')"};
    return Error{what + " is not a valid droplet name: character " + std::to_string(i + 1) +
                 " is not a letter, digit, '.' or '-'"};
  }
  if (!is_alnum(name.back())) return Error{what + " is not a valid droplet name: it must end in a letter or digit"};
  return {};
}

Status check_tag(std::string_view tag) {
  const std::string what = "tag " + quoted_prefix(tag);
  if (tag.empty()) return Error{"a tag must not be empty"};
  if (tag.size() > kMaxTagLength) {
    return Error{what + " is not valid: at most " + std::to_string(kMaxTagLength) + " characters (DigitalOcean's limit)"};
  }
  for (std::size_t i = 0; i < tag.size(); ++i) {
    if (!is_tag_char(tag[i])) {
      return Error{what + " is not valid: character " + std::to_string(i + 1) +
                   " is not a letter, digit, '_', '-' or ':'"};
    }
  }
  // Case-insensitively: DigitalOcean keeps one tag for RUNARA:run-x and runara:run-x.
  if (starts_ignoring_case(tag, kReservedTagPrefix)) {
    return Error{what + " is reserved: tags starting with 'runara:' (in any case) are set by runara itself (they "
                        "find a run's machines for teardown)"};
  }
  return {};
}

Status check_script_tag(std::string_view tag, const std::vector<std::string>& granted) {
  if (Status valid = check_tag(tag); !valid) return valid;
  if (starts_ignoring_case(tag, kUserTagPrefix) && tag.size() > kUserTagPrefix.size()) return {};
  for (const auto& name : granted) {
    if (equal_ignoring_case(tag, name)) return {};
  }
  const std::string what = "tag " + quoted_prefix(tag);
  if (starts_ignoring_case(tag, kUserTagPrefix)) {
    return Error{what + " names no tag: write 'runara-user:NAME' with a NAME after the prefix"};
  }
  return Error{what + " is not the run's to set: tags are account-wide, and a cloud firewall or automation that "
                      "admits machines by a tag (a database's trusted sources, say) would admit this one. A script "
                      "may set 'runara-user:NAME' tags, or a tag you grant with --allow-tag " +
               std::string(tag)};  // at most 255 safe characters: check_tag passed
}

}  // namespace runara
