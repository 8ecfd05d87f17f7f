// The one clock runara measures durations and deadlines with: monotonic (never jumps with the
// wall clock), in seconds. Any thread.
#pragma once

namespace runara {

double monotonic_seconds();

}  // namespace runara
