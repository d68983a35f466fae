#!/usr/bin/env bash
# Runs the peer side of issue 7's matrix: etcd, ZooKeeper and Redis from Debian, each on 127.0.0.1
# with its DEFAULT durability (etcd fsyncs its WAL per commit; ZooKeeper forceSync=yes; Redis is
# run without persistence, as issue 7's table says), in a fresh temp data dir, one peer at a time
# so they never compete for this machine's two cores. Writes one JSON line per run.
#
#   bench-peers/run-peers.sh [--quick] [--duration 20s] [--warmup 60s] [--out FILE]
#                            [--targets etcd,zookeeper,redis] [--no-build] [--w3]
#
# --quick: 10 s runs after a 30 s warm-up. Default: 20 s after a 60 s warm-up (the same as
# `tenure bench --matrix quick|full`, so that ZooKeeper's JVM, like Tenure's, is measured past its JIT).
# Matrix: W1 with 1, 16, 64 clients; W2 with 8 and 64 clients. --w3 adds, for etcd only, 10,000
# leases at TTL 6 s kept alive by jetcd for the same duration (W3_LEASES, W3_TTL override).
# Stops every process it started, by PID, on success, failure and Ctrl-C. Never kills by pattern.
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
W1_CLIENTS=(1 16 64)
W2_CLIENTS=(8 64)

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) DURATION=10s; WARMUP=30s; shift ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --targets) TARGETS="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --w3) W3=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 64 ;;
  esac
done

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

wait_until() {  # wait_until NAME PID SECONDS COMMAND...
  local name="$1" pid="$2" secs="$3"; shift 3
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$name exited before answering; its log:" >&2
      tail -n 30 "$WORK/$name.log" >&2 || true
      return 1
    fi
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
start_etcd() {
  local client peer dir="$WORK/etcd-data"
  client=$(free_port 23790); peer=$(free_port $((client + 10)))
  # Defaults otherwise: the WAL is fsynced on every commit (no --unsafe-no-fsync).
  etcd --name tenure-bench --data-dir "$dir" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "tenure-bench=http://127.0.0.1:$peer" \
    > "$WORK/etcd.log" 2>&1 &
  PEER_PID=$!; started "$PEER_PID"
  PEER_ENDPOINT="127.0.0.1:$client"
  wait_until etcd "$PEER_PID" 60 curl -fsS "http://127.0.0.1:$client/health"
}

# ZooKeeper answers "imok" without a newline and closes the connection.
zk_ok() { (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf ruok >&3 && [[ "$(timeout 2 cat <&3)" == imok ]]); }

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
  PEER_PID=$!; started "$PEER_PID"
  PEER_ENDPOINT="127.0.0.1:$port"
  wait_until zookeeper "$PEER_PID" 60 zk_ok "$port"
}

start_redis() {
  local port
  port=$(free_port 63790)
  mkdir -p "$WORK/redis"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" \
    > "$WORK/redis.log" 2>&1 &
  PEER_PID=$!; started "$PEER_PID"
  PEER_ENDPOINT="127.0.0.1:$port"
  wait_until redis "$PEER_PID" 30 redis-cli -h 127.0.0.1 -p "$port" ping
}

peer_version() {
  case "$1" in
    etcd) etcd --version 2>/dev/null | head -n1 ;;
    zookeeper) echo "zookeeper $(dpkg-query -W -f='${Version}' zookeeper)" ;;
    redis) redis-server --version | awk '{print $1, $2, $3}' ;;
  esac
}

main_class() {
  case "$1" in
    etcd) echo io.tenure.bench.peers.etcd.EtcdPeer ;;
    zookeeper) echo io.tenure.bench.peers.zookeeper.ZooKeeperPeer ;;
    redis) echo io.tenure.bench.peers.redis.RedisPeer ;;
  esac
}

run_driver() {  # run_driver TARGET WORKLOAD CLIENTS [EXTRA ARGS...]
  local target="$1" workload="$2" clients="$3" cp line status=0
  shift 3
  local dlog="$LOGS/$target-$workload-$clients.log"
  cp="$HERE/$target/target/classes:$(cat "$HERE/$target/target/classpath.txt")"
  log "$target $workload clients=$clients (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  # In the background and waited for, so Ctrl-C runs the trap at once and it stops the driver too.
  # The same 1 GiB heap as Tenure's driver (./tenure bench) and the members it starts.
  java -Xmx1g -cp "$cp" "$(main_class "$target")" --workload "$workload" --clients "$clients" \
    --duration "$DURATION" --warmup "$WARMUP" --endpoint "$PEER_ENDPOINT" "$@" \
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
IFS=',' read -r -a targets <<<"$TARGETS"
for target in "${targets[@]}"; do
  log "starting $target: $(peer_version "$target")"
  "start_$target"
  for c in "${W1_CLIENTS[@]}"; do run_driver "$target" W1 "$c"; done
  for c in "${W2_CLIENTS[@]}"; do run_driver "$target" W2 "$c"; done
  if [[ $W3 -eq 1 && "$target" == etcd ]]; then
    run_driver etcd W3 1 --leases "$W3_LEASES" --ttl "$W3_TTL"
  fi
  forget "$PEER_PID"
done

log "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$FAILED"
