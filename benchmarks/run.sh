#!/usr/bin/env bash
# The HTTP benchmark: cosched against the stacks users would pick instead, side by side in one run.
#
#   benchmarks/run.sh            full: 3 rounds, 20 s warm-up + 15 s measured per scenario (~45 min)
#   benchmarks/run.sh --quick    2 rounds, 6 s warm-up + 5 s measured (~10 min), for a rough look
#
# Variants (same endpoints /hello, /downstream, /jdbc): cosched (carrier mode), cosched without the
# add-opens flag (fallback), pure reactive WebFlux, WebFlux + boundedElastic, WebFlux + Spring's
# virtual threads, Spring MVC on Tomcat + virtual threads.
#
# Each variant is its own JVM with the same flags and heap, started fresh every round; variants
# are interleaved (A B C ... A B C ...) and medians reported, because this machine is noisy. The
# server runs on core 0, wrk and the downstream stub on core 1 (taskset), so they do not take the
# server's CPU. Results: benchmarks/results/http-<timestamp>/ (runs.csv, summary.md, *.png).
set -euo pipefail
cd "$(dirname "$0")/.."
. .mvn/jdk.sh
JAVA="$JAVA_HOME/bin/java"

quick=false
if [ "${1-}" = "--quick" ]; then quick=true; shift; fi
if $quick; then rounds=2; warm=6; measure=5; else rounds=3; warm=20; measure=15; fi
# for trying the harness itself: BENCH_ROUNDS, BENCH_WARM, BENCH_MEASURE (seconds) override the above
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}

. benchmarks/http-common.sh
bench_need_wrk
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

bench_build
out="benchmarks/results/http-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "wrk: $(wrk -v 2>&1 | head -n 1)"
  echo "command: benchmarks/run.sh $*$($quick && echo --quick)"
  echo "pinning: server on core $server_core, wrk and downstream stub on core $load_core; $bench_loops event loop(s) per server"
  echo "timing: $rounds rounds; per scenario ${warm}s warm-up then ${measure}s measured"
} | tee "$out/machine.txt"

# name | path | connections
scenarios=(
  "hello|/hello|100"
  "downstream-200|/downstream|200"
  "downstream-2000|/downstream|2000"
  "jdbc|/jdbc?id=7|100"
)

if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "bench: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
"${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 20 1 > "$out/stub.log" 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

echo "round,variant,scenario,connections,rps,p50_ms,p90_ms,p99_ms,errors,cpu_s,rss_peak_mb" > "$out/runs.csv"
clk=$(getconf CLK_TCK)
cpu_of() { awk -v t="$clk" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
ms() { # wrk latency like 1.23ms / 456.00us / 2.10s -> milliseconds
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}

for round in $(seq 1 "$rounds"); do
  for v in "${bench_variants[@]}"; do
    name=${v%%|*}
    bench_start "$name" "$out/server-$name-$round.log"
    echo "round $round, $name: $(curl -s localhost:18080/thread)"
    for s in "${scenarios[@]}"; do
      IFS='|' read -r scenario path conns <<< "$s"
      if [ "$name" = reactive ] && [ "$scenario" = jdbc ]; then continue; fi   # no reactive JDBC driver here
      url="http://127.0.0.1:18080$path"
      "${on_load[@]}" wrk -t1 -c"$conns" -d"${warm}s" --timeout 10s "$url" > /dev/null 2>&1 || true
      cpu0=$(cpu_of "$server")
      res=$("${on_load[@]}" wrk -t1 -c"$conns" -d"${measure}s" --timeout 10s --latency "$url" 2>&1 || true)
      cpu1=$(cpu_of "$server")
      rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
      p50=$(ms "$(awk '$1 == "50%" {print $2}' <<< "$res")")
      p90=$(ms "$(awk '$1 == "90%" {print $2}' <<< "$res")")
      p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
      errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
      rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status")
      cpu=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}')
      echo "$round,$name,$scenario,$conns,$rps,$p50,$p90,$p99,$errors,$cpu,$rss" | tee -a "$out/runs.csv"
      echo "$res" > "$out/wrk-$name-$scenario-$round.txt"
    done
    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
done

"$JAVA" -cp "$bench_tools" io.cosched.bench.HttpSummary "$out" | tee "$out/summary.md"
echo "results in $out"
