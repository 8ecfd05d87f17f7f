// Checks of the droplet names and tags a script passes to droplet.create, with DigitalOcean's
// rules (shared/specs/digitalocean-openapi: droplet_single_create.yml, tags/models/tags.yml).
//
// Plain loops over the characters, never std::regex: the input is the script's, and
// std::regex recurses per character (a 50,000-character name overflowed the stack). Each check
// is O(length), allocates only its error message, and quotes at most a short prefix of the
// input in it. Pure functions: any thread, no I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace runara {

// DigitalOcean's limit for a droplet name and for a tag name.
constexpr std::size_t kMaxDropletNameLength = 255;
constexpr std::size_t kMaxTagLength = 255;
// Tags with this prefix are runara's own (runara:run-<id> finds a run's machines): no script
// may set one, in any case (DigitalOcean treats tags case-insensitively in practice).
constexpr std::string_view kReservedTagPrefix = "runara:";
// The prefix of the tags a script may set without a grant: runara-user:NAME names nothing of
// the account's own (no firewall, database or automation of yours admits by it unless you made
// it so). Matched case-insensitively.
constexpr std::string_view kUserTagPrefix = "runara-user:";

// Ok when `name` is a valid droplet name of at most `max_length` characters (letters, digits,
// '.' and '-', ending in a letter or digit), else what is wrong, naming the name.
Status check_droplet_name(std::string_view name, std::size_t max_length = kMaxDropletNameLength);
// Ok when `tag` is a well-formed tag that is not runara's own (letters, digits, '_', '-', ':', at
// most 255 characters, not starting with "runara:" in any case), else what is wrong. The floor
// every tag sent passes; --allow-tag's names pass it too.
Status check_tag(std::string_view tag);
// Ok when a script may set `tag`: it passes check_tag and is the run's own, runara-user:NAME, or
// one of `granted` (--allow-tag), either compared case-insensitively. Tags are account-wide: a
// cloud firewall (a database's `sources.tags`) or automation that admits by a tag admits any
// machine carrying it, so an ungranted tag is refused, naming it and what is allowed.
Status check_script_tag(std::string_view tag, const std::vector<std::string>& granted);
// At most the first 40 characters of `text`, with "..." and the full length when cut.
std::string quoted_prefix(std::string_view text);

}  // namespace runara
