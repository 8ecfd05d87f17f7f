#!/usr/bin/env bash
# The README's test suite while other work shares the cores: BUSY busy loops (`yes > /dev/null`,
# default 2: one per core here) run for the whole time, and the suite runs RUNS times (default 3).
# A suite that stays green this way does not turn red because CI's machine is busy.
#   bench/suite_under_load.sh [BUILD_DIR]      default build; build-asan for the sanitizer suite
#   RUNS=1 BUSY=2 bench/suite_under_load.sh build-asan
# Prints, per run, the wall time and ctest's summary line, and exits non-zero if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
BUSY=${BUSY:-2}
JOBS=${JOBS:-3}

[[ -f "$BUILD/CTestTestfile.cmake" ]] || { echo "no tests in $BUILD: build it first (./setup)" >&2; exit 2; }
busy=()
for ((i = 0; i < BUSY; i++)); do yes > /dev/null & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT

echo "suite under load: $BUILD, $RUNS run(s), $BUSY busy loop(s), ctest -j$JOBS, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for ((run = 1; run <= RUNS; run++)); do
  log=$(mktemp /tmp/runara-suite-under-load-XXXXXX.log)
  start=$(date +%s)
  if [[ "$BUILD" == *asan* ]]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" > "$log" 2>&1
  else
    ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" > "$log" 2>&1
  fi
  rc=$?
  summary=$(grep -E "tests passed, [0-9]+ tests failed" "$log" | tail -1)
  echo "run $run: exit $rc in $(($(date +%s) - start)) s: $summary (log $log)"
  if ((rc != 0)); then
    failed=1
    sed -n '/The following tests FAILED/,$p' "$log"
  fi
done
exit $failed
