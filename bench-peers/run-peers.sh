#!/usr/bin/env bash
# Runs the peer side of issue 7's matrix: etcd, ZooKeeper and Redis from Debian, each on 127.0.0.1
# with its DEFAULT durability (etcd fsyncs its WAL per commit; ZooKeeper forceSync=yes; Redis is
# run without persistence, as issue 7's table says), in a fresh temp data dir, one peer at a time
# so they never compete for this machine's two cores. Writes one JSON line per run.
#
#   bench-peers/run-peers.sh [--quick] [--duration 20s] [--warmup 60s] [--out FILE] [--no-build] [--w3]
#                            [--targets etcd,zookeeper,redis,etcd-3,zookeeper-3] [--clusters]
#
# Targets: etcd, zookeeper, redis (one process each; the default) and etcd-3, zookeeper-3: three
# members on 127.0.0.1 (etcd: one --initial-cluster of three, state new; ZooKeeper: a 3-server
# ensemble, each server with its own dataDir, myid and zoo.cfg), same durability, own data dirs,
# to compare with `tenure-3`; the driver is given all three endpoints and prints target etcd-3 or
# zookeeper-3. --clusters appends etcd-3,zookeeper-3 to the targets.
# --quick: 10 s runs after a 30 s warm-up. Default: 20 s after a 60 s warm-up (the same as
# `tenure bench --matrix quick|full`, so that ZooKeeper's JVM, like Tenure's, is measured past its JIT).
# Matrix: W1 with 1, 16, 64 clients; W2 with 8 and 64 clients; W6, one semaphore of W6_LIMIT=8
# permits taken one per client, with 64 clients on ZooKeeper and Redis only (jetcd's concurrency
# package has no semaphore, so W6 is skipped on etcd and etcd-3). W1_CLIENTS="1 16", W2_CLIENTS="8",
# W6_CLIENTS="64", W7_CLIENTS="64" override, e.g. for a smoke test; an empty list skips the workload.
# W7, one read/write lock taken for reading with probability W7_READS=0.9 and for writing otherwise,
# runs with 64 clients (W7_CLIENTS), on ZooKeeper
# and Redis only (jetcd has no read/write lock, so W7 is skipped on etcd and etcd-3). --w3 adds, for
# etcd only, 10,000 leases at TTL 6 s kept alive by jetcd for the same duration (W3_LEASES, W3_TTL override);
# W3_ETCD3=1 runs it on etcd-3 too (off by default: in short trial runs here etcd-3 lost leases,
# granting 10,000 took longer than their TTL, and its keep-alive rate varied threefold between runs).
# W8, one counter incremented by 64 clients (W8_CLIENTS), on every target: etcd by get + Txn on
# the key's mod revision (etcd has no increment), ZooKeeper by Curator's DistributedAtomicLong,
# Redis by INCR (Redisson's RAtomicLong).
# W9, 64 clients (W9_CLIENTS) each putting a key of its own (of 1,000, 100-byte values) and reading
# it back linearizably, on every target: etcd Put + Get (serializable=false), ZooKeeper setData +
# sync + getData, Redis SET + GET (not durable). W10, 64 producers and 64 consumers (W10_CLIENTS) on
# one queue: ZooKeeper by Curator's DistributedQueue, Redis by Redisson's RBlockingQueue; etcd has no
# queue, so W10 is skipped on etcd and etcd-3.
# Logs the PIDs it starts; stops every one of them, by PID, on success, failure and Ctrl-C. Never
# kills by pattern.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DURATION=20s
WARMUP=60s
TARGETS="etcd,zookeeper,redis"
OUT=""
BUILD=1
W3=0
W3_LEASES="${W3_LEASES:-10000}"
W3_TTL="${W3_TTL:-6s}"
W3_ETCD3="${W3_ETCD3:-0}"
CLUSTERS=0
# Space- or comma-separated; set but empty skips the workload.
W1_LIST="${W1_CLIENTS-1 16 64}"
W2_LIST="${W2_CLIENTS-8 64}"
W6_LIST="${W6_CLIENTS-64}"
W6_LIMIT="${W6_LIMIT:-8}"
W7_LIST="${W7_CLIENTS-64}"
W7_READS="${W7_READS:-0.9}"
W8_LIST="${W8_CLIENTS-64}"
W9_LIST="${W9_CLIENTS-64}"
W10_LIST="${W10_CLIENTS-64}"
read -r -a W1_CLIENTS <<<"${W1_LIST//,/ }"
read -r -a W2_CLIENTS <<<"${W2_LIST//,/ }"
read -r -a W6_CLIENTS <<<"${W6_LIST//,/ }"
read -r -a W7_CLIENTS <<<"${W7_LIST//,/ }"
read -r -a W8_CLIENTS <<<"${W8_LIST//,/ }"
read -r -a W9_CLIENTS <<<"${W9_LIST//,/ }"
read -r -a W10_CLIENTS <<<"${W10_LIST//,/ }"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) DURATION=10s; WARMUP=30s; shift ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --targets) TARGETS="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --w3) W3=1; shift ;;
    --clusters) CLUSTERS=1; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 64 ;;
  esac
done

if [[ $CLUSTERS -eq 1 ]]; then
  for t in etcd-3 zookeeper-3; do
    [[ ",$TARGETS," == *",$t,"* ]] || TARGETS="${TARGETS:+$TARGETS,}$t"
  done
fi
IFS=',' read -r -a targets <<<"$TARGETS"
for target in "${targets[@]}"; do
  case "$target" in
    etcd|zookeeper|redis|etcd-3|zookeeper-3) ;;
    *) echo "unknown target: $target (expected etcd, zookeeper, redis, etcd-3, zookeeper-3)" >&2; exit 64 ;;
  esac
done
for c in "${W1_CLIENTS[@]+"${W1_CLIENTS[@]}"}" "${W2_CLIENTS[@]+"${W2_CLIENTS[@]}"}" "${W6_CLIENTS[@]+"${W6_CLIENTS[@]}"}" \
    "${W7_CLIENTS[@]+"${W7_CLIENTS[@]}"}" "${W8_CLIENTS[@]+"${W8_CLIENTS[@]}"}" "${W9_CLIENTS[@]+"${W9_CLIENTS[@]}"}" \
    "${W10_CLIENTS[@]+"${W10_CLIENTS[@]}"}" "$W6_LIMIT"; do
  [[ "$c" =~ ^[1-9][0-9]*$ ]] || { echo "W1_CLIENTS/W2_CLIENTS/W6_CLIENTS/W7_CLIENTS/W8_CLIENTS/W9_CLIENTS/W10_CLIENTS/W6_LIMIT: not a count: $c" >&2; exit 64; }
done
[[ "$W7_READS" =~ ^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$ ]] || { echo "W7_READS: not a share between 0 and 1: $W7_READS" >&2; exit 64; }

if [[ -z "$OUT" ]]; then
  mkdir -p "$HERE/results"
  OUT="$HERE/results/peers-$(date +%Y%m%d-%H%M%S).jsonl"
fi
: > "$OUT"
# Driver and server logs are kept beside the results (the data dirs are not).
LOGS="${OUT%.jsonl}-logs"
mkdir -p "$LOGS"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tenure-peers.XXXXXX")"
STARTED_PIDS=()
PEER_PIDS=()  # the processes of the peer being measured (also in STARTED_PIDS)
FAILED=0
MADE_POLICY=0  # 1 while our own /usr/sbin/policy-rc.d is in place (removed on any exit)

log() { echo "[run-peers $(date +%H:%M:%S)] $*" >&2; }

stop_pid() {
  local pid="$1"
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.2
  done
  log "PID $pid did not stop on TERM within 10 s; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for pid in "${STARTED_PIDS[@]}"; do
    stop_pid "$pid"
  done
  if [[ $MADE_POLICY -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
  cp "$WORK"/*.log "$LOGS"/ 2>/dev/null || true
  rm -rf "$WORK"
  log "results: $OUT (logs: $LOGS)"
  exit "$status"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---------------------------------------------------------------- install what is missing
need_install=()
for pkg in etcd-server zookeeper redis-server; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    need_install+=("$pkg")
  fi
done
if [[ ${#need_install[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian packages: ${need_install[*]} (run as root, or install them)" >&2
    exit 1
  fi
  log "installing ${need_install[*]}"
  # Keep the packages' own services from starting (they would take the default ports and run
  # outside this script's control): a policy-rc.d that refuses, only if none exists already.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    MADE_POLICY=1
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_install[@]}"
  if [[ $MADE_POLICY -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; MADE_POLICY=0; fi
fi

# ---------------------------------------------------------------- build the drivers
if [[ $BUILD -eq 1 ]]; then
  log "building the drivers"
  mvn -B -ntp -q -f "$HERE/pom.xml" package
fi
for d in etcd zookeeper redis; do
  [[ -f "$HERE/$d/target/classpath.txt" ]] || { echo "driver $d is not built (drop --no-build)" >&2; exit 1; }
done

# ---------------------------------------------------------------- helpers
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local p="$1"
  while ! port_free "$p"; do p=$((p + 1)); done
  echo "$p"
}
free_ports() {  # free_ports N FROM: N distinct free ports, ascending, from FROM on
  local n="$1" p="$2" out=()
  while [[ ${#out[@]} -lt $n ]]; do
    p=$(free_port "$p"); out+=("$p"); p=$((p + 1))
  done
  echo "${out[*]}"
}

wait_until() {  # wait_until NAME "PID..." SECONDS COMMAND...  (gives up as soon as one PID has exited)
  local name="$1" pids="$2" secs="$3"; shift 3
  local deadline=$((SECONDS + secs)) pid f
  until "$@" >/dev/null 2>&1; do
    for pid in $pids; do
      kill -0 "$pid" 2>/dev/null && continue
      echo "$name (PID $pid) exited before answering; its log:" >&2
      for f in "$WORK/$name.log" "$WORK/$name"-[0-9].log; do
        [[ -f "$f" ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2 || true; }
      done
      return 1
    done
    if (( SECONDS >= deadline )); then
      echo "$name did not answer within $secs s" >&2
      return 1
    fi
    sleep 0.2
  done
}

started() { STARTED_PIDS+=("$1"); }

forget() {  # stop one peer now and drop it from the list
  local pid="$1" kept=()
  stop_pid "$pid"
  for p in "${STARTED_PIDS[@]}"; do [[ "$p" == "$pid" ]] || kept+=("$p"); done
  STARTED_PIDS=("${kept[@]+"${kept[@]}"}")
}

# ---------------------------------------------------------------- peers
# Each start_* sets PEER_PIDS (every process of the peer, each also in STARTED_PIDS) and
# PEER_ENDPOINT (host:port, comma-separated for a cluster), and returns once the peer answers.
start_etcd() {
  local client peer dir="$WORK/etcd-data"
  client=$(free_port 23790); peer=$(free_port $((client + 10)))
  # Defaults otherwise: the WAL is fsynced on every commit (no --unsafe-no-fsync).
  etcd --name tenure-bench --data-dir "$dir" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "tenure-bench=http://127.0.0.1:$peer" \
    > "$WORK/etcd.log" 2>&1 &
  started "$!"; PEER_PIDS=("$!")
  log "etcd: PID $! (client port $client)"
  PEER_ENDPOINT="127.0.0.1:$client"
  wait_until etcd "${PEER_PIDS[*]}" 60 curl -fsS "http://127.0.0.1:$client/health"
}

start_etcd_3() {
  local ports clients peers cluster="" endpoints="" i
  read -r -a ports <<<"$(free_ports 6 23800)"
  clients=("${ports[@]:0:3}"); peers=("${ports[@]:3:3}")
  for i in 0 1 2; do cluster+="${cluster:+,}member-$((i + 1))=http://127.0.0.1:${peers[i]}"; done
  PEER_PIDS=()
  for i in 0 1 2; do
    # Defaults otherwise, as for one member: the WAL is fsynced on every commit.
    etcd --name "member-$((i + 1))" --data-dir "$WORK/etcd-3-data-$((i + 1))" \
      --listen-client-urls "http://127.0.0.1:${clients[i]}" --advertise-client-urls "http://127.0.0.1:${clients[i]}" \
      --listen-peer-urls "http://127.0.0.1:${peers[i]}" --initial-advertise-peer-urls "http://127.0.0.1:${peers[i]}" \
      --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token tenure-bench-etcd-3 \
      > "$WORK/etcd-3-$((i + 1)).log" 2>&1 &
    started "$!"; PEER_PIDS+=("$!")
    endpoints+="${endpoints:+,}127.0.0.1:${clients[i]}"
  done
  log "etcd-3: PIDs ${PEER_PIDS[*]} (client ports ${clients[*]}, peer ports ${peers[*]})"
  PEER_ENDPOINT="$endpoints"
  # /health answers 200 only once the member sees a leader.
  for i in 0 1 2; do
    wait_until "etcd-3-$((i + 1))" "${PEER_PIDS[*]}" 60 curl -fsS "http://127.0.0.1:${clients[i]}/health"
  done
}

# ZooKeeper answers "imok" without a newline and closes the connection.
zk_ok() { (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && [[ "$(timeout 2 cat <&3)" == imok ]]); }
# The "Mode:" of srvr (leader, follower, standalone); empty while the server does not serve.
zk_mode() { (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null | sed -n 's/^Mode: //p'; }
zk_quorum_ready() {  # zk_quorum_ready PORT...: one leader, every other server a follower
  local port leaders=0 followers=0
  for port in "$@"; do
    case "$(zk_mode "$port")" in
      leader) leaders=$((leaders + 1)) ;;
      follower) followers=$((followers + 1)) ;;
    esac
  done
  [[ $leaders -eq 1 && $followers -eq $(($# - 1)) ]]
}

start_zookeeper() {
  local port dir="$WORK/zookeeper" conf="$WORK/zookeeper-conf"
  port=$(free_port 21810)
  mkdir -p "$dir" "$conf"
  # forceSync is left at its default (yes): every transaction is fsynced before it is acknowledged.
  # The admin server is off only so it does not need port 8080; ruok is allowed for the readiness probe.
  cat > "$conf/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
EOF
  # Debian ships zookeeper.jar with its dependencies on the manifest's Class-Path; this is what
  # zkServer.sh runs, without its fixed /etc/zookeeper configuration directory.
  java -Dzookeeper.log.dir="$WORK" -cp "$conf:/usr/share/java/zookeeper.jar" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf/zoo.cfg" \
    > "$WORK/zookeeper.log" 2>&1 &
  started "$!"; PEER_PIDS=("$!")
  log "zookeeper: PID $! (client port $port)"
  PEER_ENDPOINT="127.0.0.1:$port"
  wait_until zookeeper "${PEER_PIDS[*]}" 60 zk_ok "$port"
}

start_zookeeper_3() {
  local clients quorum election servers="" endpoints="" i n dir conf
  read -r -a clients <<<"$(free_ports 3 21820)"
  read -r -a quorum <<<"$(free_ports 3 22880)"
  read -r -a election <<<"$(free_ports 3 $((quorum[2] + 1000)))"
  for i in 0 1 2; do
    servers+="server.$((i + 1))=127.0.0.1:${quorum[i]}:${election[i]}"$'\n'
  done
  PEER_PIDS=()
  for i in 0 1 2; do
    n=$((i + 1)); dir="$WORK/zookeeper-3-data-$n"; conf="$WORK/zookeeper-3-conf-$n"
    mkdir -p "$dir" "$conf"
    echo "$n" > "$dir/myid"
    # As for one server: forceSync at its default (yes), no admin server, ruok and srvr allowed.
    cat > "$conf/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$dir
clientPort=${clients[i]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
$servers
EOF
    java -Dzookeeper.log.dir="$WORK" -cp "$conf:/usr/share/java/zookeeper.jar" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf/zoo.cfg" \
      > "$WORK/zookeeper-3-$n.log" 2>&1 &
    started "$!"; PEER_PIDS+=("$!")
    endpoints+="${endpoints:+,}127.0.0.1:${clients[i]}"
  done
  log "zookeeper-3: PIDs ${PEER_PIDS[*]} (client ports ${clients[*]}, quorum ports ${quorum[*]}, election ports ${election[*]})"
  PEER_ENDPOINT="$endpoints"
  wait_until zookeeper-3 "${PEER_PIDS[*]}" 90 zk_quorum_ready "${clients[@]}"
  for i in 0 1 2; do
    log "zookeeper-3: server $((i + 1)) is $(zk_mode "${clients[i]}")"
  done
}

start_redis() {
  local port
  port=$(free_port 63790)
  mkdir -p "$WORK/redis"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" \
    > "$WORK/redis.log" 2>&1 &
  started "$!"; PEER_PIDS=("$!")
  log "redis: PID $! (port $port)"
  PEER_ENDPOINT="127.0.0.1:$port"
  wait_until redis "${PEER_PIDS[*]}" 30 redis-cli -h 127.0.0.1 -p "$port" ping
}

# The driver (a directory beside this script) that measures a target: etcd-3 is measured by etcd.
driver_of() { echo "${1%-3}"; }

peer_version() {
  case "$(driver_of "$1")" in
    etcd) etcd --version 2>/dev/null | head -n1 ;;
    zookeeper) echo "zookeeper $(dpkg-query -W -f='${Version}' zookeeper)" ;;
    redis) redis-server --version | awk '{print $1, $2, $3}' ;;
  esac
}

main_class() {
  case "$(driver_of "$1")" in
    etcd) echo io.tenure.bench.peers.etcd.EtcdPeer ;;
    zookeeper) echo io.tenure.bench.peers.zookeeper.ZooKeeperPeer ;;
    redis) echo io.tenure.bench.peers.redis.RedisPeer ;;
  esac
}

run_driver() {  # run_driver TARGET WORKLOAD CLIENTS [EXTRA ARGS...]
  local target="$1" workload="$2" clients="$3" cp line status=0
  shift 3
  local dlog="$LOGS/$target-$workload-$clients.log" driver_dir
  driver_dir="$HERE/$(driver_of "$target")"
  cp="$driver_dir/target/classes:$(cat "$driver_dir/target/classpath.txt")"
  log "$target $workload clients=$clients (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  # In the background and waited for, so Ctrl-C runs the trap at once and it stops the driver too.
  # The same 1 GiB heap as Tenure's driver (./tenure bench) and the members it starts.
  java -Xmx1g -cp "$cp" "$(main_class "$target")" --workload "$workload" --clients "$clients" \
    --duration "$DURATION" --warmup "$WARMUP" --endpoint "$PEER_ENDPOINT" --target "$target" "$@" \
    > "$WORK/driver.out" 2>"$dlog" &
  local driver=$!
  started "$driver"
  wait "$driver" || status=$?
  forget "$driver"
  line=$(grep '^{' "$WORK/driver.out" || true)
  if [[ -n "$line" ]]; then
    echo "$line" >> "$OUT"
    echo "$line"
  fi
  if [[ $status -ne 0 ]]; then
    log "$target $workload clients=$clients exited $status; driver log $dlog ends:"
    grep -v -e 'TcpMetrics' -e 'Epoll available' "$dlog" | tail -n 20 >&2 || true
    FAILED=1
  fi
}

# ---------------------------------------------------------------- the matrix
log "duration $DURATION after a $WARMUP warm-up; data under $WORK ($(df -T "$WORK" | awk 'NR==2{print $2}')); output $OUT"
for target in "${targets[@]}"; do
  log "starting $target: $(peer_version "$target")"
  "start_${target//-/_}"
  for c in "${W1_CLIENTS[@]+"${W1_CLIENTS[@]}"}"; do run_driver "$target" W1 "$c"; done
  for c in "${W2_CLIENTS[@]+"${W2_CLIENTS[@]}"}"; do run_driver "$target" W2 "$c"; done
  if [[ ${#W6_CLIENTS[@]} -gt 0 && "$(driver_of "$target")" == etcd ]]; then
    log "$target W6 skipped: jetcd's concurrency package has no semaphore recipe"
  else
    for c in "${W6_CLIENTS[@]+"${W6_CLIENTS[@]}"}"; do run_driver "$target" W6 "$c" --limit "$W6_LIMIT"; done
  fi
  if [[ ${#W7_CLIENTS[@]} -gt 0 && "$(driver_of "$target")" == etcd ]]; then
    log "$target W7 skipped: jetcd has no read/write lock recipe"
  else
    for c in "${W7_CLIENTS[@]+"${W7_CLIENTS[@]}"}"; do run_driver "$target" W7 "$c" --reads "$W7_READS"; done
  fi
  for c in "${W8_CLIENTS[@]+"${W8_CLIENTS[@]}"}"; do run_driver "$target" W8 "$c"; done
  for c in "${W9_CLIENTS[@]+"${W9_CLIENTS[@]}"}"; do run_driver "$target" W9 "$c"; done
  if [[ ${#W10_CLIENTS[@]} -gt 0 && "$(driver_of "$target")" == etcd ]]; then
    log "$target W10 skipped: etcd has no queue (jetcd has no queue recipe)"
  else
    for c in "${W10_CLIENTS[@]+"${W10_CLIENTS[@]}"}"; do run_driver "$target" W10 "$c"; done
  fi
  if [[ $W3 -eq 1 && ( "$target" == etcd || ( "$target" == etcd-3 && "$W3_ETCD3" == 1 ) ) ]]; then
    run_driver "$target" W3 1 --leases "$W3_LEASES" --ttl "$W3_TTL"
  fi
  log "stopping $target: PIDs ${PEER_PIDS[*]}"
  for pid in "${PEER_PIDS[@]}"; do forget "$pid"; done
  PEER_PIDS=()
done

log "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$FAILED"
