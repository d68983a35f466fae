#!/usr/bin/env bash
# Runs every cell of the engine spike (engine × members × workload), each in a fresh JVM, one after
# another, and prints one JSON line per cell, then the results and the JRaft/Ratis ratios as
# markdown. Usage: spikes/engine/run.sh [--warmup S] [--seconds S]   (defaults 20 and 20)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
warmup=20
seconds=20
while [ $# -gt 0 ]; do
  case "$1" in
    --warmup) warmup="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    *) echo "usage: $0 [--warmup S] [--seconds S]" >&2; exit 2 ;;
  esac
done

[ -f "$here/target/engine-spike.jar" ] || mvn -B -ntp -q -f "$here/pom.xml" package
out="$here/target/runs/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
# The members' data directories: the JVMs create theirs in here; gone at exit, even after a kill.
data="$(mktemp -d /tmp/tenure-engine-spike.XXXXXX)"
trap 'rm -rf "$data"' EXIT
# A cell that takes this much longer than its window has hung.
limit=$(awk -v w="$warmup" -v s="$seconds" 'BEGIN { printf "%d", w + s + 120 }')

failed=0
for members in 1 3; do
  for cell in "W1 64" "W2 8" "W2 64"; do
    set -- $cell
    # The two engines back to back, so that both see the machine in the same state.
    for engine in ratis jraft; do
      log="$out/$engine-$members-$1-$2.log"
      if line=$(timeout "$limit" java -Xmx2g -XX:+UseZGC -Djava.io.tmpdir="$data" -cp "$here/target/engine-spike.jar:$here/target/lib/*" \
          io.tenure.spike.engine.Main --engine "$engine" --members "$members" --workload "$1" --clients "$2" \
          --warmup "$warmup" --seconds "$seconds" 2>"$log" | grep '^{"engine"'); then
        echo "$line" | tee -a "$out/results.jsonl"
      else
        failed=1
        echo "FAILED: $engine, $members member(s), $1 with $2 clients; the end of $log:" >&2
        tail -n 20 "$log" >&2
      fi
    done
  done
done

[ -s "$out/results.jsonl" ] && awk '
  function field(k,   m) {
    if (!match($0, "\"" k "\":\"?[^,\"}]*")) return ""
    m = substr($0, RSTART, RLENGTH); sub("^\"" k "\":\"?", "", m); return m
  }
  function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
  NR == 1 {
    print "\n| members | workload | clients | engine | ops/s | latency | p50 ms | p99 ms | CPU us/op | CPU cores | commands/entry |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  }
  {
    key = field("members") " | " field("workload") " | " field("clients")
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    e = field("engine")
    ops[key, e] = field("ops_per_s") + 0; p99[key, e] = field("p99_ms") + 0; cpu[key, e] = field("cpu_us_per_op") + 0
    printf "| %s | %s | %.0f | %s | %s | %s | %.1f | %.2f | %.1f |\n", key, e, field("ops_per_s"), field("latency"), \
      field("p50_ms"), field("p99_ms"), field("cpu_us_per_op"), field("cpu_cores"), field("commands_per_entry")
  }
  END {
    print "\n| members | workload | clients | ops/s JRaft ÷ Ratis | p99 Ratis ÷ JRaft | CPU/op Ratis ÷ JRaft | ops/s gain ≥ 2× |"
    print "| --- | --- | --- | --- | --- | --- | --- |"
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (!((k, "ratis") in ops) || !((k, "jraft") in ops)) { print "| " k " | a cell failed | | | |"; continue }
      printf "| %s | %s | %s | %s | %s |\n", k, ratio(ops[k, "jraft"], ops[k, "ratis"]), ratio(p99[k, "ratis"], p99[k, "jraft"]), \
        ratio(cpu[k, "ratis"], cpu[k, "jraft"]), (ops[k, "jraft"] >= 2 * ops[k, "ratis"] ? "yes" : "no")
    }
  }' "$out/results.jsonl" | tee "$out/results.md"
echo "results and logs: $out"
exit "$failed"
