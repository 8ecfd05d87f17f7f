// "did you mean 'size'?" for a misspelled option, threshold or flag name.
//
// Contract. Pure, any thread. Suggests the closest known name when it is close enough to be a
// typo (an edit distance of at most a third of the name, at least 1, at most 3), else "".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runara {

// The closest of `known` to `given`, or "" when none is close.
std::string closest_name(std::string_view given, const std::vector<std::string>& known);

// " (did you mean 'NAME'?)" or "".
std::string did_you_mean(std::string_view given, const std::vector<std::string>& known);

}  // namespace runara
