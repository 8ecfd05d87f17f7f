# Shared by the GPU shims (sourced): the simulated GPU's state now.
# Load is read off the machine itself: whether the simulated vLLM server runs (its pid file)
# and how many connections it holds (established sockets to its port in /proc/net/tcp), so
# the GPU readings follow what the scenario does to the server. All figures are simulated.
state=${RUNARA_SIM_STATE:-/tmp}
gpu=${RUNARA_SIM_GPU:-none}
count=${RUNARA_SIM_GPU_COUNT:-0}

unsupported() {
  echo "$tool (runara simulated): unsupported arguments: $*" >&2
  exit 2
}

no_gpu() {
  echo "$tool (runara simulated): this simulated machine ($RUNARA_SIM_SIZE) has no $1 GPU" >&2
  exit 2
}

# A compute job (the simulated GEMM benchmark or MLPerf harness) holds the GPUs: its pid is in
# $state/gpu.busy while it runs, so the GPU readings show the load it would put on them.
computing() {
  [ -f "$state/gpu.busy" ] && kill -0 "$(cat "$state/gpu.busy")" 2>/dev/null
}

# Established connections to a server's port (default: the last server started) in /proc/net/tcp.
streams() {
  port=${1:-$(cat "$state/vllm.port" 2>/dev/null)} || { echo 0; return; }
  [ -n "$port" ] || { echo 0; return; }
  # Boxed, every connection in /proc/net/tcp is the machine's own: the port says which.
  awk -v ip="${RUNARA_SIM_IP:-127.0.0.1}" -v port="$port" -v boxed="${RUNARA_SIM_ISOLATED:-0}" '
    BEGIN { split(ip, o, "."); want = sprintf("%02X%02X%02X%02X:%04X", o[4], o[3], o[2], o[1], port)
            want_port = sprintf(":%04X", port) }
    $4 == "01" && ($2 == want || (boxed == 1 && substr($2, 9) == want_port)) { n++ }
    END { print n + 0 }' /proc/net/tcp 2>/dev/null || echo 0
}

# Per GPU "up,streams,vram_fraction" (space-separated, GPU 0 first): each running server
# (bin/vllm's record in $state/vllm/PORT: pid port fraction devices) loads the GPUs it was
# given, so replicas on GPUs of their own each show their own load.
per_gpu() {
  local i rec pid port frac devs d n
  local -a load
  for ((i = 0; i < count; i++)); do load[i]="0,0,0"; done
  for rec in "$state"/vllm/*; do
    [ -f "$rec" ] || continue
    read -r pid port frac devs < "$rec"
    kill -0 "$pid" 2>/dev/null || continue
    n=$(streams "$port")
    for d in ${devs//,/ }; do [ "$d" -lt "$count" ] && load[d]="1,$n,$frac"; done
  done
  echo "${load[*]}"
}

# One line per GPU: index power_w gfx_pct mem_pct vram_used_mib vram_total_mib temp_edge temp_hot
# temp_mem sm_mhz mem_mhz energy_j. Energy accumulates in $state/gpu-energy between calls.
readings() {
  busy=0; computing && busy=1
  gpus=$(per_gpu)
  now=$(date +%s.%N)
  # Fault energy_counter_stuck: the energy counter reads 0 whatever the board draws, as recorded
  # on real AMD boards (power readings stay live).
  stuck=0
  case ",$RUNARA_SIM_FAULTS," in *,energy_counter_stuck,*) stuck=1 ;; esac
  awk -v gpu="$gpu" -v count="$count" -v busy="$busy" -v gpus="$gpus" -v now="$now" \
      -v efile="$state/gpu-energy" -v stuck="$stuck" '
    BEGIN {
      if (gpu == "mi300x") { idle = 140; ready = 190; cap = 750; total = 196592; tidle = 38; tmax = 76; clk0 = 132; clk1 = 2100; m0 = 900; m1 = 1300 }
      else { idle = 69; ready = 115; cap = 700; total = 81559; tidle = 33; tmax = 66; clk0 = 345; clk1 = 1980; m0 = 1593; m1 = 2619 }
      split(gpus, per, " ")
      srand(int(now * 1000) % 100000)
      last = now; getline line < efile; split(line, e, " "); if (e[1] > 0) last = e[1]
      dt = now - last; if (dt < 0 || dt > 60) dt = 0
      out = now
      for (i = 0; i < count; i++) {
        # the server on this GPU (or the compute job on every GPU): up, streams, VRAM fraction
        split(per[i + 1], u, ","); up = u[1] + 0; n = u[2] + 0; frac = u[3] + 0
        if (busy) { up = 1; n = 1000; frac = 0.35 }
        load = up ? n / (n + 8) : 0
        j = 1 + (rand() - 0.5) * 0.04
        p = (up ? ready + (cap * 0.93 - ready) * load : idle) * j
        g = up ? (n > 0 ? 100 * (0.6 + 0.4 * load) : 1) : 0
        mu = up ? (n > 0 ? 35 + 40 * load : 0) : 0
        used = up ? int(total * frac) : 12
        te = tidle + (tmax - tidle) * load * j; th = te + 8; tm = te + 4
        sm = up && n > 0 ? clk1 : clk0; mm = up ? m1 : m0
        en = (e[i + 2] + 0) + p * dt
        out = out " " en
        printf "%d %.2f %d %d %d %d %d %d %d %d %d %.1f\n", i, p, g, mu, used, total, te, th, tm, sm, mm, stuck ? 0 : en
      }
      print out > efile
    }'
}
