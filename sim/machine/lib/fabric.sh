# Shared by the distributed tools' shims (sourced): the simulated VPC fabric (sim/sim_fabric.hpp).
# The machines of one VPC share the folder $RUNARA_SIM_FABRIC; a shim "listens" on IP:PORT by
# holding a lock on listen/IP:PORT there for as long as it lives, and "connects" by finding that
# lock held and the port let through by the cloud firewalls (firewall/<IP>, written by runara from
# the fake API's firewalls). Nothing here moves packets: it is a rendezvous for the shims,
# addressed by private IP and port as the real tools are. An address on this machine itself (its
# private or public address, 127.0.0.1, localhost) is this machine's own, firewall-free, and its
# listeners live in $RUNARA_SIM_STATE/listen when not on the private address.
fabric=${RUNARA_SIM_FABRIC:-}
private_ip=${RUNARA_SIM_PRIVATE_IP:-}
public_ip=${RUNARA_SIM_IP:-127.0.0.1}
sim_scale=${RUNARA_SIM_TIME_SCALE:-1}

# Seconds to wait for a peer: RUNARA_SIM_JOIN_TIMEOUT_S (wall seconds) when runara was given
# one, else the tool's own default ($1, in the tool's seconds) times the time scale.
join_timeout() {
  if [ -n "${RUNARA_SIM_JOIN_TIMEOUT_S:-}" ]; then echo "$RUNARA_SIM_JOIN_TIMEOUT_S"
  else awk -v s="$1" -v k="$sim_scale" 'BEGIN { printf "%.3f", s * k }'; fi
}
scaled() { awk -v s="$1" -v k="$sim_scale" 'BEGIN { printf "%.3f", s * k }'; }
now_s() { date +%s.%N; }
# Whether $2 seconds have passed since $1.
past() { awk -v t0="$1" -v w="$2" -v t="$(date +%s.%N)" 'BEGIN { exit !(t - t0 >= w) }'; }

is_mine() { [ -n "$1" ] && case $1 in "$private_ip"|"$public_ip"|127.0.0.1|localhost) true ;; *) false ;; esac; }

# The folder where IP:PORT's listener lock lives: the VPC's for its members' private addresses,
# this machine's own for its other addresses; "" when the address is nowhere this machine reaches.
listen_dir_for() {
  local ip=$1
  [ "$ip" = localhost ] && ip=127.0.0.1
  if [ -n "$fabric" ] && [ "$ip" = "$private_ip" ]; then echo "$fabric/listen"
  elif is_mine "$ip"; then mkdir -p "$RUNARA_SIM_STATE/listen"; echo "$RUNARA_SIM_STATE/listen"
  elif [ -n "$fabric" ] && [ -e "$fabric/firewall/$ip" ]; then echo "$fabric/listen"
  fi
}

# Whether a lock file is held by a live process: a shared probe fails while another holds it
# exclusively. Shared, so that probes running at once do not see each other as holders.
held() { [ -e "$1" ] && ! flock -n -s "$1" true 2>/dev/null; }

# Whether the cloud firewalls let TCP PORT into the VPC member IP from this machine.
firewall_allows() {
  local ip=$1 port=$2 f=$fabric/firewall/$1
  is_mine "$ip" && return 0
  [ -f "$f" ] || return 1
  grep -qx open "$f" && return 0
  awk -v p="$port" -v src="$private_ip" '$1 == "tcp" && $2 <= p + 0 && p + 0 <= $3 && $4 == src { ok = 1 } END { exit !ok }' "$f"
}

# Whether a connection to IP:PORT would be answered now: a listener there, and the port open.
reachable() {
  local ip=$1 port=$2 dir
  [ "$ip" = localhost ] && ip=127.0.0.1
  dir=$(listen_dir_for "$ip") || return 1
  [ -n "$dir" ] && firewall_allows "$ip" "$port" && held "$dir/$ip:$port"
}

# Opens fd 9 on IP:PORT's listener lock and takes it (the caller keeps fd 9 for its lifetime).
# Fails when the address is not this machine's or someone already listens there. The lock is
# waited for a moment: a peer's probe (held) may be holding it for the few milliseconds it takes,
# and a listener that found it so would report an address in use that nobody uses (CI saw it).
listen_on() {
  local ip=$1 port=$2 dir
  [ "$ip" = localhost ] && ip=127.0.0.1
  is_mine "$ip" || return 2
  dir=$(listen_dir_for "$ip"); [ -n "$dir" ] || return 2
  exec 9>>"$dir/$ip:$port"
  flock -w 1 -x 9 || { exec 9>&-; return 1; }
}
