// A doctl config file as `doctl auth init --context work` leaves it, with the current context
// switched to "work": read by the doctl parser's unit test and by runara --context's end-to-end one.
#pragma once

namespace runara::test {

inline const char* const kDoctlConfig =
    "access-token: dop_v1_default\n"
    "auth-contexts:\n"
    "  personal: \"dop_v1_personal\"\n"
    "  work: dop_v1_work # the team's\n"
    "context: work\n"
    "output: text\n";

}  // namespace runara::test
