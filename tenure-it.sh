#!/usr/bin/env bash
# The safety suite (issue 6, docs/safety.md): real `tenure server` members and client processes on
# 127.0.0.1 (members in network namespaces for F6/F11) under a seeded nemesis (kills, pauses,
# partitions of members and clients, clock skew, membership changes, snapshot catch-up), everything
# recorded in a run directory, checked at the end.
#
#   ./tenure-it.sh --time 600 --faults all
#   ./tenure-it.sh --time 120 --faults f1,f4,f5 --seed 7 --members 5 --clients 6 --out /tmp/run1
#
# Options (defaults in brackets): --time SECONDS [600], --faults f1,f2,...|all [all], --seed N [1],
# --members 3|5 [3], --clients N (3-8) [6], --out DIR [tenure-it/target/safety/<time>-seed<N>];
# also --electionTimeoutMs, --ttlMs, --snapshotEvery, --fence at-least|above, --auditLog true|false,
# --minRounds N, --secured true|false (TLS on the client and peer ports, authentication on, the
# clients a user's). Exit status: 0 nothing found, 1 a safety violation, 2 the harness could not do
# all it was asked (see the PROBLEM lines).
#
# Builds first (test-compile of tenure-it and the modules it needs; nothing is installed), then runs
# io.tenure.it.safety.SafetyRun on a private copy of the compiled classes, so that a rebuild during
# a long run cannot change the classes under running members.
set -euo pipefail
cd "$(dirname "$0")"

usage() {
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
}

args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --time|--faults|--seed|--members|--clients|--out|--electionTimeoutMs|--ttlMs|--snapshotEvery|--fence|--auditLog|--minRounds|--secured)
      [ $# -ge 2 ] || { echo "tenure-it.sh: $1 needs a value" >&2; exit 64; }
      value="$2"
      if [ "$1" = "--out" ]; then
        mkdir -p "$value"
        value="$(cd "$value" && pwd)"
      fi
      args+=("$1" "$value"); shift 2 ;;
    *) echo "tenure-it.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
  esac
done

command -v java >/dev/null || { echo "tenure-it.sh: needs a JDK 17 (java)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "tenure-it.sh: needs Maven (mvn); ./run-tests installs both on Debian" >&2; exit 1; }
if ! command -v faketime >/dev/null; then
  echo "tenure-it.sh: libfaketime is missing (Debian package faketime): F8 (clock skew) will be skipped" >&2
fi

echo "tenure-it.sh: building (test-compile of tenure-it and its modules)..." >&2
mvn -B -ntp -q ${MAVEN_OFFLINE:+-o} test-compile dependency:build-classpath -pl tenure-it -am \
  -Dmdep.outputFile=target/safety.classpath -Dmdep.includeScope=test >&2

# A private copy of this repository's compiled classes; jars from the local repository stay where they are.
classes="$(mktemp -d "${TMPDIR:-/tmp}/tenure-safety-classes.XXXXXX")"
trap 'rm -rf "$classes"' EXIT
cp_entries=()
IFS=":" read -r -a deps < tenure-it/target/safety.classpath || true  # no newline at its end
for entry in "$PWD/tenure-it/target/test-classes" "$PWD/tenure-it/target/classes" "${deps[@]}"; do
  case "$entry" in
    "$PWD"/*/target/*classes)
      copy="$classes/$(basename "$(dirname "$(dirname "$entry")")")-$(basename "$entry")"
      [ -d "$entry" ] && cp -r "$entry" "$copy" || mkdir -p "$copy"
      cp_entries+=("$copy") ;;
    *) cp_entries+=("$entry") ;;
  esac
done
classpath="$(IFS=':'; echo "${cp_entries[*]}")"

set +e
java -Xmx512m -cp "$classpath" -Dtenure.safety.root="$PWD/tenure-it/target/safety" \
  io.tenure.it.safety.SafetyRun "${args[@]}"
status=$?
set -e
exit $status
