#!/usr/bin/env bash
# Whether a fresh instance starts quietly: the sample service (H2, Spring Security, Actuator) started from its
# jar, then its first requests, two rounds of 27 at once over nine endpoints, and what the stall watchdog said
# meanwhile: each warm-up stall (one INFO line, with its cause: the stuck code loading classes, the JVM loading
# classes, the JIT compiling) and each stall logged with its stack. A fresh instance should log warm-up lines
# only; a stack here is either a real hog or a warm-up the watchdog did not recognise (docs/monitoring.md,
# "Warm-up stalls"). Each start is a fresh JVM. Not part of the test run.
#
#   benchmarks/quiet-start.sh                    4 starts on core 0 with one event loop
#   QUIET_CPUS=0,1 QUIET_LOOPS=2 QUIET_STARTS=2 benchmarks/quiet-start.sh   two cores, two loops
#
# Prints per start one line per stall line of the log; the logs land in benchmarks/results/quiet-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

cpus=${QUIET_CPUS:-0}
loops=${QUIET_LOOPS:-1}
starts=${QUIET_STARTS:-4}
port=${QUIET_PORT:-18555}
./mvnw -q -B -pl sample-service -am package -DskipTests
jar=sample-service/target/cosched-sample-service-0.1.0-SNAPSHOT.jar
out="benchmarks/results/quiet-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
paths="/api/accounts/1 /api/accounts/1/statement /api/accounts/1/overview /api/me /api/quote /actuator/prometheus
  /api/accounts/2 /api/admin/report /api/accounts/export"

for s in $(seq 1 "$starts"); do
  log="$out/start-$s.log"
  taskset -c "$cpus" "$JAVA" --add-opens java.base/java.lang=ALL-UNNAMED -jar "$jar" --server.port="$port" \
    --cosched.io.threads="$loops" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do grep -q "Started" "$log" && break; sleep 0.5; done
  grep -q "Started" "$log" || { kill -9 "$pid"; echo "start $s: the service did not start, see $log" >&2; exit 1; }
  for round in 1 2; do
    for p in $paths; do for k in 1 2 3; do echo "http://127.0.0.1:$port$p"; done; done \
      | xargs -P 27 -n 1 curl -s -o /dev/null --max-time 20 -u user:secret || true
  done
  sleep 1
  kill -9 "$pid"
  wait "$pid" 2> /dev/null || true
  echo "start $s ($cpus, $loops loop(s)):"
  grep -E "was stuck for|has been stuck for" "$log" \
    | sed -E 's/.*(carrier [^ ]+ (was|has been) stuck for [0-9]+ ms).*(while warming up \([^)]*\)|, running|, blocked).*/  \1 \3/' \
    || echo "  no stall"
done
echo "logs in $out"
