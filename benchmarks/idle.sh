#!/usr/bin/env bash
# What an idle IOManager costs and how close to their word its sleeps wake (io.cosched.bench.IdleProbe): a
# one-loop IOManager with its stall watchdog and 1,000 coroutines parked with a timer each, its JVM's CPU and
# context switches a second over a window; then Coroutines.sleep of 1, 2, 5 and 20 ms on that idle loop, p50 /
# p99 / max, beside the JDK's Thread.sleep in a virtual thread and LockSupport.parkNanos on a platform thread,
# measured in the same JVM at the same time. Each round a fresh JVM on one core. Long: not part of the test run.
#
#   benchmarks/idle.sh           3 rounds, 30 s idle window each (~3 min)
#   benchmarks/idle.sh --quick   1 round, 10 s
#   IDLE_PARKED=10000 IDLE_THRESHOLD=PT0S benchmarks/idle.sh   more coroutines; the watchdog off
#
# Results land in benchmarks/results/idle-<timestamp>/ (machine.txt, round-N.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

./mvnw -q -B -pl benchmarks -am package -DskipTests
jar=benchmarks/target/benchmarks.jar
out="benchmarks/results/idle-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
if $quick; then rounds=1; seconds=10; else rounds=3; seconds=30; fi
args=("${IDLE_PARKED:-1000}" "$seconds")
if [ -n "${IDLE_THRESHOLD-}" ]; then args+=("$IDLE_THRESHOLD"); fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "timer slack: $(cat /proc/self/timerslack_ns 2>/dev/null || echo unknown) ns"
  echo "command: benchmarks/idle.sh $*$($quick && echo --quick) (IdleProbe ${args[*]})"
} | tee "$out/machine.txt"

for round in $(seq 1 "$rounds"); do
  echo "round $round"
  taskset -c 0 "$JAVA" --add-opens java.base/java.lang=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
    -cp "$jar" io.cosched.bench.IdleProbe "${args[@]}" 2>&1 | grep -v '^WARNING' | tee "$out/round-$round.txt"
done
echo "results: $out"
