#!/usr/bin/env bash
# Core costs of the runtime: startup time, idle memory, and many concurrent tasks.
#
#   bench/core.sh [RUNARA]        (default: build/runara of this checkout; builds nothing)
#
# Prints one table:
#   - startup of `runara -e ''`: median and p90 of $RUNS runs (default 50), with `luajit -e ''`
#     measured in the same session as a peer. Uses hyperfine (apt-get install hyperfine) when it
#     is installed (--shell=none, 5 warm-up runs), otherwise a bash loop timing with date +%s%N.
#     `runara --version` (no runtime created: the dynamic loader and exit) is timed alongside.
#   - peak RSS of an idle runtime (`/usr/bin/time -v runara -e ''`, maximum resident set size;
#     median of $RSS_RUNS runs, default 5), luajit alongside.
#   - 10,000 and 100,000 tasks that each runara.sleep(0.5), all joined: peak RSS, process wall
#     time (fork to exit, startup included) and the script's own time from the first spawn to
#     the last join (runara.now()); median of $TASK_RUNS runs (default 3). Ideal wall: ~0.5 s.
#
# Environment: RUNS, RSS_RUNS, TASK_RUNS, TASK_COUNTS (default "10000 100000"), LUAJIT (the peer,
# default `luajit` on PATH; empty to skip it), NO_HYPERFINE=1 to force the bash loop (also used
# when hyperfine or jq is missing).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNARA=${1:-$root/build/runara}
RUNS=${RUNS:-50}
RSS_RUNS=${RSS_RUNS:-5}
TASK_RUNS=${TASK_RUNS:-3}
TASK_COUNTS=${TASK_COUNTS:-"10000 100000"}
LUAJIT=${LUAJIT-$(command -v luajit || true)}

if [[ ! -x $RUNARA ]]; then
  echo "core.sh: '$RUNARA' is not an executable (build it first, or pass its path)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "core.sh: /usr/bin/time is needed (apt-get install time)" >&2
  exit 2
fi

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d /tmp/runara-bench-core-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# median and p90 (nearest rank) of numbers on stdin, one a line; prints "MEDIAN P90".
median_p90() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "- -"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    k = int(0.9 * NR); if (k < 0.9 * NR) k++; if (k < 1) k = 1
    print m, v[k] }'
}
median() { median_p90 | awk '{ print $1 }'; }

# Startup: seconds per run, one a line, in $tmp/startup-<name>.txt.
startup_method=""
if [[ -z ${NO_HYPERFINE:-} ]] && command -v hyperfine >/dev/null && command -v jq >/dev/null; then
  startup_method="hyperfine $(hyperfine --version | awk '{ print $2 }'), -N, 5 warm-up"
  cmds=("$RUNARA -e ''" "$RUNARA --version")
  [[ -n $LUAJIT ]] && cmds+=("$LUAJIT -e ''")
  if ! hyperfine -N --warmup 5 --runs "$RUNS" --style none --export-json "$tmp/startup.json" "${cmds[@]}" \
    >/dev/null 2>"$tmp/hyperfine.err"; then
    cat "$tmp/hyperfine.err" >&2
    exit 1
  fi
  if grep -q "outliers" "$tmp/hyperfine.err"; then startup_method+=" (it reported statistical outliers)"; fi
  jq -r '.results[0].times[]' "$tmp/startup.json" >"$tmp/startup-runara.txt"
  jq -r '.results[1].times[]' "$tmp/startup.json" >"$tmp/startup-version.txt"
  [[ -n $LUAJIT ]] && jq -r '.results[2].times[]' "$tmp/startup.json" >"$tmp/startup-luajit.txt"
else
  startup_method="bash loop, date +%s%N, 5 warm-up"
  time_runs() {  # time_runs OUT CMD...
    local out=$1 i t0 t1
    shift
    for ((i = 0; i < 5; i++)); do "$@" >/dev/null 2>&1; done
    : >"$out"
    for ((i = 0; i < RUNS; i++)); do
      t0=$(date +%s%N)
      "$@" >/dev/null 2>&1
      t1=$(date +%s%N)
      echo "$(((t1 - t0) / 1000))e-6" >>"$out"
    done
  }
  time_runs "$tmp/startup-runara.txt" "$RUNARA" -e ''
  time_runs "$tmp/startup-version.txt" "$RUNARA" --version
  [[ -n $LUAJIT ]] && time_runs "$tmp/startup-luajit.txt" "$LUAJIT" -e ''
fi

# Peak RSS in kB of one run of CMD... (its stdout is discarded).
peak_rss() {
  /usr/bin/time -v "$@" 2>"$tmp/time.txt" >/dev/null
  awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt"
}
rss_of() {  # rss_of CMD... -> median kB over RSS_RUNS runs
  local i
  for ((i = 0; i < RSS_RUNS; i++)); do peak_rss "$@"; done | median
}

ms() { awk -v s="$1" 'BEGIN { if (s == "-") print "-"; else printf "%.1f ms", s * 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

read -r r_med r_p90 < <(median_p90 <"$tmp/startup-runara.txt")
read -r v_med v_p90 < <(median_p90 <"$tmp/startup-version.txt")
if [[ -n $LUAJIT ]]; then read -r l_med l_p90 < <(median_p90 <"$tmp/startup-luajit.txt"); fi
rss_runara=$(rss_of "$RUNARA" -e '')
[[ -n $LUAJIT ]] && rss_luajit=$(rss_of "$LUAJIT" -e '')

# Many tasks: each sleeps 0.5 s; the script prints its own spawn and spawn->join times.
TASK_CODE='local n = tonumber(runara.params.n)
local t0 = runara.now()
local tasks = {}
for i = 1, n do tasks[i] = runara.spawn(function() runara.sleep(0.5) end) end
local spawned = runara.now() - t0
for i = 1, n do tasks[i]:join() end
print(string.format("%.6f %.6f", spawned, runara.now() - t0))'

declare -A task_rss task_wall task_script task_spawn
for n in $TASK_COUNTS; do
  : >"$tmp/rss" && : >"$tmp/wall" && : >"$tmp/script" && : >"$tmp/spawn"
  for ((i = 0; i < TASK_RUNS; i++)); do
    t0=$(date +%s%N)
    if ! /usr/bin/time -v "$RUNARA" --out "$tmp/out" -e "$TASK_CODE" "n=$n" 2>"$tmp/time.txt" >"$tmp/task-out.txt"; then
      echo "core.sh: the $n-task run failed:" >&2
      cat "$tmp/time.txt" >&2
      exit 1
    fi
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000))e-6" >>"$tmp/wall"
    awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt" >>"$tmp/rss"
    awk '{ print $1 }' "$tmp/task-out.txt" >>"$tmp/spawn"
    awk '{ print $2 }' "$tmp/task-out.txt" >>"$tmp/script"
  done
  task_rss[$n]=$(median <"$tmp/rss")
  task_wall[$n]=$(median <"$tmp/wall")
  task_script[$n]=$(median <"$tmp/script")
  task_spawn[$n]=$(median <"$tmp/spawn")
done

runara_version=$("$RUNARA" --version 2>&1 | head -1)
echo "runara: $RUNARA ($runara_version)   peer: ${LUAJIT:-none}${LUAJIT:+ ($("$LUAJIT" -v | awk '{ print $1, $2 }'))}"
echo "host: $(nproc) CPUs, load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "startup: $RUNS runs, $startup_method; RSS: median of $RSS_RUNS; tasks: median of $TASK_RUNS"
echo
printf '%-44s %-14s %-14s\n' "measure" "runara" "luajit (peer)"
printf '%-44s %-14s %-14s\n' "--------------------------------------------" "--------------" "--------------"
printf '%-44s %-14s %-14s\n' "startup -e '' median" "$(ms "$r_med")" "$( [[ -n $LUAJIT ]] && ms "$l_med" || echo -)"
printf '%-44s %-14s %-14s\n' "startup -e '' p90" "$(ms "$r_p90")" "$( [[ -n $LUAJIT ]] && ms "$l_p90" || echo -)"
printf '%-44s %-14s %-14s\n' "startup --version median (no runtime made)" "$(ms "$v_med")" "-"
printf '%-44s %-14s %-14s\n' "startup --version p90 (no runtime made)" "$(ms "$v_p90")" "-"
printf '%-44s %-14s %-14s\n' "idle peak RSS (-e '')" "$(mib "$rss_runara")" "$( [[ -n $LUAJIT ]] && mib "$rss_luajit" || echo -)"
for n in $TASK_COUNTS; do
  label=$(echo "$n" | sed -e :a -e 's/\B[0-9]\{3\}\>/,&/;ta')
  printf '%-44s %-14s %-14s\n' "$label tasks x sleep(0.5): peak RSS" "$(mib "${task_rss[$n]}")" "-"
  printf '%-44s %-14s %-14s\n' "$label tasks: process wall (ideal ~0.5 s)" "$(ms "${task_wall[$n]}")" "-"
  printf '%-44s %-14s %-14s\n' "$label tasks: first spawn -> last join" "$(ms "${task_script[$n]}")" "-"
  printf '%-44s %-14s %-14s\n' "$label tasks: spawn loop alone" "$(ms "${task_spawn[$n]}")" "-"
done
