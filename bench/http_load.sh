#!/usr/bin/env bash
# http_load's performance figures, on loopback, in one command.
#
#   bench/http_load.sh [RUNARA]        (default: build/runara of this checkout; builds nothing)
#
# Three parts, each printed as a table:
#   (a) plain GET throughput against nginx (worker_processes 1, access_log off, keepalive_requests
#       1000000, a small static file): `wrk -tT -cC -dDs` and bench/http_load_get.lua with the same
#       threads, connections and duration, alternated $REPS times each, for (T,C) = (1,32) and
#       (2,64), http_load both with record=none (as wrk: no per-request file) and with the default
#       requests.jsonl. Prints each run's requests/s, the median per-run ratios to wrk, and the
#       requests per client CPU-second of wrk and http_load (record=none).
#   (b) streaming accuracy and cost against `runara serve-fake-llm --ttft-ms 50 --itl-ms 10
#       --output-tokens 128` (its own process): bench/http_load_stream.lua at concurrency 1 (the
#       baseline) and each of $STREAM_CONCURRENCY, 2*C requests each. Prints the median ITL minus
#       10 ms, the median TTFT minus 50 ms, output tokens/s, runara's peak RSS (/usr/bin/time %M),
#       resident memory per open stream = (RSS at C - RSS at concurrency 1) / C, and the CPU time of
#       the client and of the fake server. A fresh server per C reports the gaps it actually sent
#       (--report-sent yes): the client's error is its ITL minus those. States the largest C with
#       |median ITL - ITL_MS| <= 0.2 ms, and the largest with |client - sent| <= 0.2 ms.
#   (c) one request: `hyperfine -N` of bench/http_load_one.lua against nginx next to `runara -e ''`,
#       and the script's own view of the call (median of $ONE_RUNS runs).
#
# Needs: nginx (Debian nginx-light: /usr/sbin/nginx), wrk, hyperfine, curl, /usr/bin/time.
# Environment: REPS (3), DURATION (5 s), STREAM_CONCURRENCY ("64 256 1024 2048 4096"),
# ONE_RUNS (30), NGINX (/usr/sbin/nginx), PARTS ("a b c": which parts to run), FAKE_THREADS (1:
# serve-fake-llm's event-loop threads), PIN (0; 1: the fake server on CPU 0, the client on the rest),
# ITL_MS (10) and OUTPUT_TOKENS (128): the fake's token gap and reply length in part (b).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNARA=${1:-$root/build/runara}
REPS=${REPS:-3}
DURATION=${DURATION:-5}
STREAM_CONCURRENCY=${STREAM_CONCURRENCY:-"64 256 1024 2048 4096"}
ONE_RUNS=${ONE_RUNS:-30}
NGINX=${NGINX:-/usr/sbin/nginx}
PARTS=${PARTS:-"a b c"}
FAKE_THREADS=${FAKE_THREADS:-1}
ITL_MS=${ITL_MS:-10}
OUTPUT_TOKENS=${OUTPUT_TOKENS:-128}
# Each open stream reserves its worst case (about 64 KiB of buffers) from --max-memory, far above
# the ~4 KiB it uses; 16,384 streams need more than the default 1 GiB of reservations.
STREAM_MAX_MEMORY=${STREAM_MAX_MEMORY:-4G}
# PIN=1: the fake server on CPU 0 and the client on the other CPUs, so neither takes the other's core.
if [[ ${PIN:-0} == 1 ]]; then
  SERVER_PIN="taskset -c 0"
  CLIENT_PIN="taskset -c 1-$(($(nproc) - 1))"
else
  SERVER_PIN=""
  CLIENT_PIN=""
fi
bench=$root/bench

need() { command -v "$1" >/dev/null || { echo "http_load.sh: '$1' is needed ($2)" >&2; exit 2; }; }
if [[ ! -x $RUNARA ]]; then
  echo "http_load.sh: '$RUNARA' is not an executable (build it first, or pass its path)" >&2
  exit 2
fi
[[ -x $NGINX ]] || { echo "http_load.sh: $NGINX is needed (apt-get install nginx-light, or set NGINX)" >&2; exit 2; }
need wrk "apt-get install wrk"
need hyperfine "apt-get install hyperfine"
need curl "apt-get install curl"
[[ -x /usr/bin/time ]] || { echo "http_load.sh: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d /tmp/runara-bench-http-load-XXXXXX)
chmod 755 "$tmp"  # nginx's worker may run as another user
nginx_pid="" fake_pid=""
cleanup() {
  [[ -n $nginx_pid ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  [[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# median of numbers on stdin, one a line
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# the value of KEY in a line of key=value pairs
field() { tr ' ' '\n' <<<"$2" | awk -F= -v k="$1" '$1 == k { print $2 }'; }

# ---- nginx on a free loopback port ----
mkdir -p "$tmp/www" "$tmp/nginx-tmp"
printf 'hello from nginx: a small static file for http_load.sh\n' >"$tmp/www/index.html"
chmod 755 "$tmp/www" && chmod 644 "$tmp/www/index.html"
start_nginx() {  # start_nginx PORT -> 0 when it answers
  cat >"$tmp/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $tmp/nginx-tmp;
  proxy_temp_path $tmp/nginx-tmp;
  fastcgi_temp_path $tmp/nginx-tmp;
  uwsgi_temp_path $tmp/nginx-tmp;
  scgi_temp_path $tmp/nginx-tmp;
  server {
    listen 127.0.0.1:$1;
    root $tmp/www;
  }
}
EOF
  "$NGINX" -p "$tmp" -e "$tmp/nginx-error.log" -c "$tmp/nginx.conf" >"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  local i
  for ((i = 0; i < 50; i++)); do
    if curl -sf -o /dev/null "http://127.0.0.1:$1/"; then return 0; fi
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$nginx_pid" 2>/dev/null || true
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=""
  return 1
}
nginx_port=""
for ((try = 0; try < 10; try++)); do
  port=$((20000 + RANDOM % 30000))
  if start_nginx "$port"; then nginx_port=$port; break; fi
done
if [[ -z $nginx_port ]]; then
  echo "http_load.sh: nginx did not start:" >&2
  cat "$tmp/nginx.out" "$tmp/nginx-error.log" >&2 2>/dev/null || true
  exit 1
fi
nginx_url="http://127.0.0.1:$nginx_port/"
allow_nginx=(--allow-host "127.0.0.1:$nginx_port")

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$(dirname "$RUNARA")/CMakeCache.txt" 2>/dev/null || true)
echo "runara: $RUNARA ($("$RUNARA" --version 2>&1 | head -1), build type: ${build_type:-unknown})"
if [[ $build_type == Debug || -z $build_type ]]; then
  echo "  (not an optimised build: figures from a RelWithDebInfo/Release build are the ones to quote)"
fi
echo "peers: $("$NGINX" -v 2>&1 | sed 's/^nginx version: //'), $(wrk -v 2>&1 | head -1 | awk '{ print "wrk", $2 }'), $(hyperfine --version)"
echo "host: $(nproc) CPUs, load average $load_start at start, $(date -u +%Y-%m-%dT%H:%MZ)"
echo

part() { [[ " $PARTS " == *" $1 "* ]]; }

# ---- (a) GET throughput: wrk and http_load, alternated ----
# http_load twice: as wrk measures (record=none: no per-request file) and as a load runs by
# default (requests.jsonl gets every request, written by a thread of its own: on two cores the
# third busy thread beside the worker and nginx). Client CPU from /usr/bin/time (user + system):
# requests per client CPU-second.
if part a; then
echo "(a) GET $nginx_url: requests/s, ${DURATION} s runs, wrk and http_load alternated $REPS times"
printf '%-4s %-4s %-9s %-9s %-9s %-7s %-7s %-12s %-12s\n' "thr" "conn" "wrk" "hl-none" "hl-all" "none/w" "all/w" "wrk req/cpu" "hl req/cpu"
declare -A med
for tc in "1 32" "2 64"; do
  read -r t c <<<"$tc"
  for k in wrk none all rn ra cw ch; do : >"$tmp/$k"; done
  for ((i = 0; i < REPS; i++)); do
    out=$(/usr/bin/time -f "%U %S" -o "$tmp/cpu" wrk "-t$t" "-c$c" "-d${DURATION}s" "$nginx_url")
    w=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
    wn=$(awk '/requests in/ { print $1 }' <<<"$out")
    cw=$(awk -v n="$wn" '{ printf "%.0f", n / ($1 + $2) }' "$tmp/cpu")
    for record in none all; do
      line=$(/usr/bin/time -f "%U %S" -o "$tmp/cpu" "$RUNARA" "${allow_nginx[@]}" --out "$tmp/out-get" "$bench/http_load_get.lua" \
        "url=$nginx_url" "c=$c" "t=$t" "d=$DURATION" "record=$record" 2>"$tmp/err") || { cat "$tmp/err" >&2; exit 1; }
      rm -rf "$tmp/out-get"
      [[ $(field failed "$line") == 0 ]] || echo "http_load.sh: warning: failed requests: $line" >&2
      eval "h_$record=$(field rps "$line")"
      [[ $record == none ]] && ch=$(awk -v n="$(field completed "$line")" '{ printf "%.0f", n / ($1 + $2) }' "$tmp/cpu")
    done
    rn=$(awk -v h="$h_none" -v w="$w" 'BEGIN { printf "%.3f", h / w }')
    ra=$(awk -v h="$h_all" -v w="$w" 'BEGIN { printf "%.3f", h / w }')
    echo "$w" >>"$tmp/wrk"; echo "$h_none" >>"$tmp/none"; echo "$h_all" >>"$tmp/all"
    echo "$rn" >>"$tmp/rn"; echo "$ra" >>"$tmp/ra"; echo "$cw" >>"$tmp/cw"; echo "$ch" >>"$tmp/ch"
    printf '%-4s %-4s %-9.0f %-9.0f %-9.0f %-7s %-7s %-12s %-12s\n' "$t" "$c" "$w" "$h_none" "$h_all" "$rn" "$ra" "$cw" "$ch"
  done
  for k in wrk none all rn ra cw ch; do med[$tc,$k]=$(median <"$tmp/$k"); done
done
for tc in "1 32" "2 64"; do
  read -r t c <<<"$tc"
  printf 'median  -t%s -c%-3s wrk %.0f/s; http_load %.0f/s record=none (ratio %s), %.0f/s record=all (ratio %s); requests per client CPU-second: wrk %s, http_load %s\n' \
    "$t" "$c" "${med[$tc,wrk]}" "${med[$tc,none]}" "${med[$tc,rn]}" "${med[$tc,all]}" "${med[$tc,ra]}" "${med[$tc,cw]}" "${med[$tc,ch]}"
done
echo
fi


# ---- (b) streaming against the fake LLM server ----
# A fresh server per C, started with --report-sent yes: when stopped it prints the token gaps it
# actually wrote, so the client's error is measured against what the server did, not against
# --itl-ms (a server that falls behind sends late, which is not the client's error).
if part b; then
start_fake() {
  : >"$tmp/fake.out"
  $SERVER_PIN "$RUNARA" serve-fake-llm --port 0 --ttft-ms 50 --itl-ms "$ITL_MS" --output-tokens "$OUTPUT_TOKENS" --threads "$FAKE_THREADS" \
    --report-sent yes >>"$tmp/fake.out" 2>&1 &
  fake_pid=$!
  fake_url=""
  for ((i = 0; i < 50; i++)); do
    fake_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$tmp/fake.out" || true)
    [[ -n $fake_url ]] && break
    sleep 0.1
  done
  [[ -n $fake_url ]] || { echo "http_load.sh: serve-fake-llm did not start:" >&2; cat "$tmp/fake.out" >&2; exit 1; }
  fake_port=${fake_url##*:}
}
# Stops it; `sent` gets its "sent:" line's ITL p50 and p99.
stop_fake() {
  kill -INT "$fake_pid"
  wait "$fake_pid" 2>/dev/null || true
  fake_pid=""
  sent=$(sed -n 's/.*ITL p50 \([0-9.]*\) p99 \([0-9.]*\) ms.*/\1 \2/p' "$tmp/fake.out")
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # utime + stime of a process
tick=$(getconf CLK_TCK)
declare -A s_line s_rss s_cpu s_srv s_sent
for c in 1 $STREAM_CONCURRENCY; do
  start_fake
  before=$(cpu_ticks "$fake_pid")
  line=$(/usr/bin/time -f '%M %U %S' -o "$tmp/time.txt" $CLIENT_PIN "$RUNARA" --allow-host "127.0.0.1:$fake_port" --max-memory "$STREAM_MAX_MEMORY" \
    --out "$tmp/out-stream" "$bench/http_load_stream.lua" "url=$fake_url" "c=$c" "tokens=$OUTPUT_TOKENS" 2>"$tmp/err") \
    || { cat "$tmp/err" >&2; exit 1; }
  after=$(cpu_ticks "$fake_pid")
  stop_fake
  s_sent[$c]=$sent
  s_line[$c]=$line
  read -r rss user sys <"$tmp/time.txt"
  s_rss[$c]=$rss
  s_cpu[$c]=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  s_srv[$c]=$(awk -v a="$after" -v b="$before" -v t="$tick" 'BEGIN { printf "%.2f", (a - b) / t }')
done
echo "(b) streaming against $("$RUNARA" --version 2>&1 | head -1) serve-fake-llm --ttft-ms 50 --itl-ms $ITL_MS --output-tokens $OUTPUT_TOKENS --threads $FAKE_THREADS, 2*C requests${SERVER_PIN:+ (server: $SERVER_PIN; client: $CLIENT_PIN)}"
printf '%-6s %-7s %-9s %-8s %-11s %-11s %-11s %-11s %-11s %-10s %-9s %-10s %-8s %-8s\n' "C" "threads" "ok/fail" "dur s" \
  "ITL p50-$ITL_MS" "ITL p99-$ITL_MS" "sent p50" "cli-sent p50" "cli-sent p99" "TTFT p50-50" "tokens/s" "RSS MiB" "KiB/stream" "cli CPU" "srv CPU"
best=""
best_sent=""
for c in 1 $STREAM_CONCURRENCY; do
  l=${s_line[$c]}
  itl_err=$(awk -v v="$(field itl_p50 "$l")" -v i="$ITL_MS" 'BEGIN { printf "%+.3f", v - i }')
  itl99=$(awk -v v="$(field itl_p99 "$l")" -v i="$ITL_MS" 'BEGIN { printf "%+.3f", v - i }')
  read -r sent50 sent99 <<<"${s_sent[$c]:-0 0}"
  sent_err=$(awk -v v="$(field itl_p50 "$l")" -v s="$sent50" 'BEGIN { printf "%+.3f", v - s }')
  sent_err99=$(awk -v v="$(field itl_p99 "$l")" -v s="$sent99" 'BEGIN { printf "%+.3f", v - s }')
  ttft_err=$(awk -v v="$(field ttft_p50 "$l")" 'BEGIN { printf "%+.2f", v - 50 }')
  per=$(awk -v r="${s_rss[$c]}" -v b="${s_rss[1]}" -v c="$c" 'BEGIN { if (c == 1) print "-"; else printf "%.2f", (r - b) / c }')
  printf '%-6s %-7s %-9s %-8s %-11s %-11s %-11s %-11s %-11s %-11s %-10s %-9s %-10s %-8s %-8s\n' "$c" "$(field threads "$l")" \
    "$(field completed "$l")/$(field failed "$l")" "$(field duration "$l" | awk '{ printf "%.2f", $1 }')" \
    "$itl_err" "$itl99" "$sent50" "$sent_err" "$sent_err99" "$ttft_err" "$(field tok_s "$l")" \
    "$(awk -v k="${s_rss[$c]}" 'BEGIN { printf "%.1f", k / 1024 }')" "$per" "${s_cpu[$c]}" "${s_srv[$c]}"
  if [[ $c != 1 ]] && awk -v e="$itl_err" 'BEGIN { exit !(e <= 0.2 && e >= -0.2) }'; then best=$c; fi
  # Only where the server still sends regular gaps: once it bunches a stream's tokens (its own
  # median gap near 0), client and server agree trivially.
  if [[ $c != 1 ]] && awk -v e="$sent_err" -v s="$sent50" -v i="$ITL_MS" 'BEGIN { exit !(e <= 0.2 && e >= -0.2 && s > i / 2) }'; then
    best_sent=$c
  fi
done
echo "largest C of ($STREAM_CONCURRENCY) with |median ITL - $ITL_MS ms| <= 0.2 ms (the server on time too): ${best:-none}"
echo "largest C of ($STREAM_CONCURRENCY) with |median ITL - the server's median sent gap| <= 0.2 ms (the client's error), the server's gaps regular (median > ITL/2): ${best_sent:-none}"
echo "(RSS: peak of the runara process; KiB/stream = (RSS at C - RSS at C=1) / C; CPU: user+sys seconds of the run)"
echo
fi


# ---- (c) one request ----
if part c; then
one_cmd="$RUNARA --allow-host 127.0.0.1:$nginx_port --out $tmp/out-one $bench/http_load_one.lua url=$nginx_url"
hyperfine -N --warmup 3 --runs "$ONE_RUNS" --style none --export-csv "$tmp/one.csv" "$one_cmd" "$RUNARA -e ''" \
  >/dev/null 2>"$tmp/hyperfine.err" || { cat "$tmp/hyperfine.err" >&2; exit 1; }
outliers=""
grep -q "outliers" "$tmp/hyperfine.err" && outliers=" (hyperfine reported statistical outliers)"
: >"$tmp/call" && : >"$tmp/loadms" && : >"$tmp/e2el"
for ((i = 0; i < ONE_RUNS; i++)); do
  line=$($one_cmd 2>/dev/null)
  field call_ms "$line" >>"$tmp/call" && field load_ms "$line" >>"$tmp/loadms" && field e2el_ms "$line" >>"$tmp/e2el"
done
# hyperfine CSV: command,mean,stddev,median,user,system,min,max (seconds)
read -r one_med one_min < <(awk -F, 'NR == 2 { print $4 * 1000, $7 * 1000 }' "$tmp/one.csv")
read -r e_med e_min < <(awk -F, 'NR == 3 { print $4 * 1000, $7 * 1000 }' "$tmp/one.csv")
echo "(c) one GET against nginx: hyperfine -N, 3 warm-up, $ONE_RUNS runs$outliers"
printf '%-52s %-10s %-10s\n' "command" "median ms" "min ms"
printf '%-52s %-10.1f %-10.1f\n' "runara bench/http_load_one.lua (1 request)" "$one_med" "$one_min"
printf '%-52s %-10.1f %-10.1f\n' "runara -e ''" "$e_med" "$e_min"
printf '%-52s %-10.1f %-10.1f\n' "difference (what one http_load.run call adds)" \
  "$(awk -v a="$one_med" -v b="$e_med" 'BEGIN { print a - b }')" "$(awk -v a="$one_min" -v b="$e_min" 'BEGIN { print a - b }')"
printf '%-52s %-10.2f\n' "inside the script: http_load.run call (runara.now)" "$(median <"$tmp/call")"
printf '%-52s %-10.2f\n' "inside the script: the load itself (wall_time_s)" "$(median <"$tmp/loadms")"
printf '%-52s %-10.3f\n' "inside the script: the request (e2el)" "$(median <"$tmp/e2el")"
echo
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
