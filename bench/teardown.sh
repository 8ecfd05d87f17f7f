#!/usr/bin/env bash
# Teardown latency after SIGINT (the runtime's own teardown) and SIGKILL (the guardian), for
# N = 1 and 8 droplets, 5 repetitions each, against an in-process fake DigitalOcean API.
#
#   bench/teardown.sh [BUILD_DIR] [EXTRA OPTIONS...]     (default BUILD_DIR: build of this checkout)
#
# Runs BUILD_DIR/bench/runara_teardown_latency against BUILD_DIR/runara (builds nothing; build
# with `cmake --build BUILD_DIR --target runara_teardown_latency`). EXTRA OPTIONS go to the
# program: --n 1,8  --reps 5  --modes SIGINT,SIGKILL  --timeout 60  --verbose.
# Exit status 1 if any repetition failed (wrong exit status, or a droplet left alive).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$root/build}
shift || true
bench="$BUILD/bench/runara_teardown_latency"
if [[ ! -x $bench || ! -x $BUILD/runara ]]; then
  echo "teardown.sh: $bench or $BUILD/runara is missing; build them first:" >&2
  echo "  cmake --build $BUILD --target runara_teardown_latency runara_cli" >&2
  exit 2
fi
echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
exec "$bench" --runara "$BUILD/runara" --n 1,8 --reps 5 "$@"
