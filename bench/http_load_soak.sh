#!/usr/bin/env bash
# http_load's memory over a soak: does the client's resident memory stay flat as requests pile up?
#
#   bench/http_load_soak.sh [RUNARA...]   (default: build/runara of this checkout; builds nothing)
#
# For each runara binary given (e.g. main's and a branch's, to compare), in turn: starts
# `runara serve-fake-llm --threads 1` (ttft 0, itl 0, 16 tokens: as fast as it goes) with the
# same binary, runs bench/http_load_soak.lua against it (closed loop, $STREAMS streams, $SECONDS_
# seconds), and samples the client's VmRSS from /proc/PID/status every $EVERY seconds. Prints one
# row per sample (seconds since start, RSS in MB, requests.jsonl's lines so far) and the load's
# own summary line; the output folder is removed afterwards.
#
# Environment: STREAMS (512), SECONDS_ (180), EVERY (10), LINES (max_request_lines; default
# http_load's 1,000,000: set 1000000000 to keep every request's line, past where the records of
# a version that held them in memory stopped growing).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STREAMS=${STREAMS:-512}
SECONDS_=${SECONDS_:-180}
EVERY=${EVERY:-10}
LINES=${LINES:-}
(($#)) || set -- "$root/build/runara"

tmp=$(mktemp -d /tmp/runara-bench-soak-XXXXXX)
fake_pid="" client_pid=""
cleanup() {
  [[ -n $client_pid ]] && kill "$client_pid" 2>/dev/null && wait "$client_pid" 2>/dev/null
  [[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo "-"; }
lines() { cat "$1"/*/requests.jsonl 2>/dev/null | wc -l; }

echo "# http_load soak: $STREAMS streams, $SECONDS_ s, max_request_lines ${LINES:-default}, VmRSS every $EVERY s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for runara in "$@"; do
  [[ -x $runara ]] || { echo "http_load_soak.sh: '$runara' is not an executable" >&2; exit 2; }
  port=$(free_port)
  "$runara" serve-fake-llm --port "$port" --threads 1 >"$tmp/fake.log" 2>&1 &
  fake_pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  out="$tmp/out"
  rm -rf "$out"
  "$runara" --max-runtime $((SECONDS_ + 120)) --out "$out" --allow-host "127.0.0.1:$port" \
    "$root/bench/http_load_soak.lua" "url=http://127.0.0.1:$port" "c=$STREAMS" "s=$SECONDS_" ${LINES:+"lines=$LINES"} >"$tmp/client.log" 2>&1 &
  client_pid=$!
  echo "## $runara"
  printf '%8s %10s %12s\n' seconds rss_mb jsonl_lines
  start=$(date +%s)
  while kill -0 "$client_pid" 2>/dev/null; do
    printf '%8d %10s %12s\n' $(($(date +%s) - start)) "$(rss_mb "$client_pid")" "$(lines "$out")"
    for _ in $(seq $((EVERY * 10))); do kill -0 "$client_pid" 2>/dev/null || break; sleep 0.1; done
  done
  wait "$client_pid" || true
  client_pid=""
  grep -h "completed=" "$tmp/client.log" || tail -5 "$tmp/client.log"
  printf 'requests.jsonl lines at the end: %s\n' "$(lines "$out")"
  kill "$fake_pid" && wait "$fake_pid" 2>/dev/null || true
  fake_pid=""
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
