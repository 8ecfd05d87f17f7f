# bin/vllm's Ray executor (`--distributed-executor-backend ray`), sourced: the placement group of
# tp*pp GPU bundles that vLLM asks of the Ray cluster this machine's node belongs to (bin/ray), and
# the watch on its nodes while the server runs. Behaviour of vLLM since its PR #11138 (v0.6.5,
# vllm/executor/ray_utils.py): too few GPUs in the cluster is a warning, then vLLM waits for the
# placement group, logging at 10, 30, 70 … s, and fails after PG_WAIT_TIMEOUT (1800 s). The first
# bundle is pinned to the driver's node (VLLM_HOST_IP, else the address of the default route's
# interface), which must be a Ray node with a GPU. Texts: ../README.md.

world=$((tp * pp))
driver_ip=${VLLM_HOST_IP:-$public_ip}
ray_cluster=""

# "GPUS DRIVER_GPUS NODES" of the cluster's live nodes now.
cluster_gpus() {
  local f id nip g rest total=0 mine=0 n=0
  for f in "$ray_cluster"/nodes/*; do
    case $f in *.lock) continue ;; esac
    [ -f "$f" ] && held "$f.lock" || continue
    read -r id nip g rest < "$f"
    g=${g%.*}
    total=$((total + g)); n=$((n + 1))
    [ "$nip" = "$driver_ip" ] && mine=$((mine + g))
  done
  echo "$total $mine $n"
}

live_ips() {
  local f
  for f in "$ray_cluster"/nodes/*; do
    case $f in *.lock) continue ;; esac
    [ -f "$f" ] && held "$f.lock" && awk '{ print $2; exit }' "$f"
  done
}

pg_specs() {
  local s="[{'node:$driver_ip': 0.001, 'GPU': 1.0}" i
  for ((i = 1; i < world; i++)); do s+=", {'GPU': 1.0}"; done
  echo "$s]"
}

pg_ready() {
  local total mine
  read -r total mine _ < <(cluster_gpus)
  [ "$total" -ge "$world" ] && [ "$mine" -ge 1 ]
}

ray_placement_group() {
  local line stamp_ray
  stamp_ray() { date '+%Y-%m-%d %H:%M:%S,%3N'; }
  if line=$(cat "$state/ray/current" 2>/dev/null) && kill -0 "${line##* }" 2>/dev/null; then
    local address
    read -r ray_cluster address _ <<< "$line"
    echo "$(stamp_ray)	INFO worker.py:1636 -- Connecting to existing Ray cluster at address: $address..."
    echo "$(stamp_ray)	INFO worker.py:1821 -- Connected to Ray cluster."
  else
    # No cluster on this machine: ray.init() starts a local one with this machine's GPUs.
    ray_cluster=$state/ray/local
    rm -rf "$ray_cluster"; mkdir -p "$ray_cluster/nodes"
    echo "local $driver_ip $visible 0 head 0" > "$ray_cluster/nodes/local"
    exec 6>>"$ray_cluster/nodes/local.lock"; flock -x 6
    echo "$(stamp_ray)	INFO worker.py:1821 -- Started a local Ray instance."
  fi
  local total
  read -r total _ < <(cluster_gpus)
  [ "$total" -ge "$world" ] ||
    echo "WARNING $(stamp) ray_utils.py:320] The number of required GPUs exceeds the total number of available GPUs in the placement group."
  local t0 limit next=10 step=10
  t0=$(now_s); limit=$(join_timeout 1800)
  until pg_ready; do
    if past "$t0" "$limit"; then
      echo "Traceback (most recent call last):"
      echo "  File \"/usr/local/lib/python3.12/dist-packages/vllm/executor/ray_utils.py\", line 331, in initialize_ray_cluster"
      echo "    _wait_until_pg_ready(current_placement_group)"
      echo "  File \"/usr/local/lib/python3.12/dist-packages/vllm/executor/ray_utils.py\", line 231, in _wait_until_pg_ready"
      echo "    raise ValueError("
      echo "ValueError: Cannot provide a placement group of placement_group_specs=$(pg_specs) within 1800 seconds. See \`ray status\` to make sure the cluster has enough resources."
      read -r total mine nodes < <(cluster_gpus)
      echo "(runara simulated: $world GPUs asked (tensor $tp x pipeline $pp), the Ray cluster has $total on $nodes live node(s), $mine on the driver's node $driver_ip)" >&2
      return 1
    fi
    if past "$t0" "$(scaled "$next")"; then
      echo "INFO $(stamp) ray_utils.py:214] Waiting for creating a placement group of specs for $next seconds. specs=$(pg_specs). Check \`ray status\` to see if you have enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in each node if you are running on a multi-node."
      step=$((step * 2)); next=$((next + step))
    fi
    sleep 0.2
  done
  # The group's GPUs are taken while this server lives (`ray status` shows them used).
  echo "$world" > "$ray_cluster/pg.$port"
  exec 7>>"$ray_cluster/pg.$port"; flock -x 7
  return 0
}

# Runs the server (its arguments) and watches the cluster: a node of the placement group gone,
# vLLM's engine dies with Ray's ActorDiedError and the server shuts down, exit 1.
ray_serve_and_watch() {
  local group_ips
  group_ips=$(live_ips)
  "$@" 6>&- 7>&- &
  local srv=$! dead_ip=""
  trap 'kill $srv 2>/dev/null; rm -f "$ray_cluster/serving.$port"; exit 143' TERM INT HUP
  : > "$ray_cluster/serving.$port"
  while kill -0 "$srv" 2>/dev/null; do
    sleep 0.3 6>&- 7>&- &
    wait $!
    pg_ready && continue
    local ip
    for ip in $group_ips; do live_ips | grep -qxF "$ip" || { dead_ip=$ip; break; }; done
    kill "$srv" 2>/dev/null
    rm -f "$ray_cluster/serving.$port"
    local actor ns
    actor=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n'); ns=$(cat /proc/sys/kernel/random/uuid)
    cat <<EOF
ERROR $(stamp) async_llm_engine.py:65] Engine background task failed
ERROR $(stamp) async_llm_engine.py:65] Traceback (most recent call last):
ERROR $(stamp) async_llm_engine.py:65]   File "/usr/local/lib/python3.12/dist-packages/vllm/executor/ray_gpu_executor.py", line 495, in _driver_execute_model_async
ERROR $(stamp) async_llm_engine.py:65] ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.
	class_name: RayWorkerWrapper
	actor_id: $actor
	pid: $((2000 + RANDOM % 6000))
	namespace: $ns
	ip: ${dead_ip:-unknown}
The actor is dead because its node has died. Node Id: $(od -An -tx1 -N28 /dev/urandom | tr -d ' \n')
ERROR $(stamp) launcher.py:99] AsyncLLMEngine has failed, terminating server process
INFO:     Shutting down
INFO:     Finished server process [$$]
EOF
    echo "(runara simulated: the Ray node at ${dead_ip:-?} left the cluster; the server stopped)" >&2
    wait "$srv" 2>/dev/null
    exit 1
  done
  rm -f "$ray_cluster/serving.$port"
  wait "$srv"
  exit $?
}
