#!/usr/bin/env bash
# Issue 7's whole benchmark matrix in one command: Tenure (1 member and 3 members) and then etcd,
# ZooKeeper and Redis as single nodes and etcd and ZooKeeper as 3-member clusters on 127.0.0.1
# (etcd-3, zookeeper-3: bench-peers/run-peers.sh --clusters), one target at a time on this machine,
# then one table with Tenure-to-peer ratios (docs/benchmarks.md): tenure-1 against the single
# nodes, tenure-3 against the peer of the same size (etcd-3, zookeeper-3; Redis stays single).
#
#   ./bench-matrix.sh            # the quick matrix: about 30 minutes (30 s warm-ups)
#   ./bench-matrix.sh --full     # issue 7's matrix (W3 with 100,000 leases, W5 10 rounds, 60 s warm-ups): about 1 h 15 min
#   ./bench-matrix.sh --out DIR  # where results go [bench-results/<date-time>]
#
# Writes DIR/tenure.jsonl, DIR/peers.jsonl (and DIR/peers-logs/), DIR/table.md and DIR/machine.txt
# (CPU, kernel, JDK, load average before and after: the figures move with the neighbours' load).
# Installs what is missing (Maven through ./tenure; etcd-server, zookeeper, redis-server through
# bench-peers/run-peers.sh, as root). Stops every process it started. Exits non-zero when any run
# failed or saw an overlap or a lost lease; the table is printed in any case.
set -euo pipefail
cd "$(dirname "$0")"

MODE=quick
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --full) MODE=full; shift ;;
    --quick) MODE=quick; shift ;;
    --out) [[ $# -ge 2 ]] || { echo "bench-matrix.sh: --out needs a directory" >&2; exit 64; }; OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-matrix.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
OUT="${OUT:-bench-results/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

machine() {
  {
    echo "## $1: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [[ "$1" == before ]]; then
      echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
      echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
      echo "kernel: $(uname -r)"
      echo "java: $(java -version 2>&1 | head -1)"
      echo "temp file system: $(df -T "${TMPDIR:-/tmp}" | awk 'NR == 2 {print $2}')"
    fi
  } >> "$OUT/machine.txt"
}

status=0
machine before
echo "bench-matrix: Tenure, --matrix $MODE (results in $OUT)" >&2
./tenure bench --matrix "$MODE" > "$OUT/tenure.jsonl" || status=1

peer_args=(--out "$OUT/peers.jsonl" --w3 --clusters)
[[ "$MODE" == quick ]] && peer_args+=(--quick)
echo "bench-matrix: etcd, ZooKeeper, Redis, then 3-member etcd and ZooKeeper" >&2
bench-peers/run-peers.sh "${peer_args[@]}" || status=1
machine after

./tenure bench --table "$OUT/tenure.jsonl" "$OUT/peers.jsonl" | tee "$OUT/table.md"
echo >&2
cat "$OUT/machine.txt" >&2
[[ $status -eq 0 ]] || echo "bench-matrix: some runs failed (see the lines above and $OUT)" >&2
exit "$status"
