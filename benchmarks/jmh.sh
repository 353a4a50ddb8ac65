#!/usr/bin/env bash
# Runs cosched's runtime benchmarks (JMH) and the parked-footprint probe, then prints the
# markdown tables for docs/benchmark-results.md. Long: not part of the test run.
#
#   benchmarks/jmh.sh            full run: 3 forks x 5 iterations of 2 s per variant (~15 min)
#   benchmarks/jmh.sh --quick    1 fork x 3 iterations of 1 s (~5 min), for a rough look
#   benchmarks/jmh.sh --quick Timer    only benchmarks matching a JMH regex
#
# Results land in benchmarks/results/<timestamp>/ (jmh.json, footprint.txt, summary.md).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

filter="${1-}"

./mvnw -q -B -pl benchmarks -am package -DskipTests
jar=benchmarks/target/benchmarks.jar
out="benchmarks/results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

if $quick; then
  jmh_args=(-f 1 -wi 2 -w 1 -i 3 -r 1)
  footprint_n=200000; footprint_runs=1
else
  jmh_args=()   # the benchmarks' own annotations: 3 forks, 4 warm-up and 5 measured iterations of 2 s
  footprint_n=1000000; footprint_runs=3
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "command: benchmarks/jmh.sh $*"
} | tee "$out/machine.txt"

"$JAVA" -jar "$jar" "${jmh_args[@]}" -rf json -rff "$out/jmh.json" ${filter:+"$filter"} | tee "$out/jmh.log"

if [ -z "$filter" ] || [[ "ParkedFootprint" =~ $filter ]]; then
  for run in $(seq 1 "$footprint_runs"); do
    for runner in cosched vthread; do
      "$JAVA" --add-opens java.base/java.lang=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -Xms6g -Xmx6g \
        -cp "$jar" io.cosched.bench.ParkedFootprint "$runner" "$footprint_n" | grep '^runner=' | tee -a "$out/footprint.txt"
    done
  done
fi

footprint=()
[ -f "$out/footprint.txt" ] && footprint=("$out/footprint.txt")
"$JAVA" -cp "$jar" io.cosched.bench.Summarize "$out/jmh.json" "${footprint[@]}" | tee "$out/summary.md"
echo "results in $out"
