#!/usr/bin/env bash
# Graceful shutdown with open server-sent-events streams: 1,000 connections (SHUTDOWN_CONNECTIONS) to GET /sse?hz=1
# (an event a second each, read as they come), every one streaming, then SIGTERM to the server (Spring Boot's
# graceful shutdown, its defaults: 30 s per phase). Per run, from the signal: how many streams ended cleanly (their
# body's last chunk) and how many were cut (the connection closed mid-body), when half and when the last had
# ended, and when the JVM was gone. The load is benchmarks' StreamLoad (shutdown mode: plain sockets, a virtual
# thread per connection), which sends the signal itself once every stream has had its first event.
#
#   benchmarks/shutdown.sh          3 rounds of cosched, reactive WebFlux and Spring MVC on virtual threads
#   SHUTDOWN_VARIANTS="cosched cosched-baseline" BENCH_BASELINE_APP=/tmp/before.jar benchmarks/shutdown.sh
#                                   this build against another (benchmarks/http-common.sh's variants)
#   (SHUTDOWN_ROUNDS and SHUTDOWN_CONNECTIONS override the rounds and the connections)
#
# Results: benchmarks/results/shutdown-<timestamp>/ (runs.csv, summary.md, the servers' logs, the load's JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

rounds=${SHUTDOWN_ROUNDS:-3}
conns=${SHUTDOWN_CONNECTIONS:-1000}
read -r -a variants <<< "${SHUTDOWN_VARIANTS:-cosched reactive mvc-virtual-threads}"
for v in "${variants[@]}"; do bench_spec "$v" > /dev/null; done

bench_build
out="benchmarks/results/shutdown-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
  echo "command: benchmarks/shutdown.sh${SHUTDOWN_VARIANTS:+ SHUTDOWN_VARIANTS=\"$SHUTDOWN_VARIANTS\"} rounds=$rounds connections=$conns"
  echo "pinning: server on core $server_core; load on core $load_core"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/; then
  echo "shutdown: port 18080 is taken; stop what listens there first" >&2; exit 1
fi
trap 'for p in ${server-}; do kill -9 "$p" 2>/dev/null || true; done' EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

json() { grep -o "\"$2\":[0-9a-z.-]*" "$1" | head -n 1 | cut -d: -f2; }

echo "round,variant,connections,streaming,clean,cut,failed,end_p50_ms,end_max_ms,exit_ms" > "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  # the variants rotated each round: A B C, B C A, C A B
  n=${#variants[@]}
  for i in $(seq 0 $((n - 1))); do
    name=${variants[$(((i + round - 1) % n))]}
    log=$out/load-$name-$round
    bench_start "$name" "$out/server-$name-$round.log" --bench.stream.send-buffer=32768
    "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.StreamLoad shutdown --url=http://127.0.0.1:18080 \
      --path="/sse?hz=1" --connections="$conns" --pid="$server" > "$log.json" 2> "$log.err" \
      || echo "  ($name: the load failed, see $log.err)"
    # the load waited for the JVM up to 2 minutes; one still there is killed, and counted so (exit_ms -1)
    if kill -0 "$server" 2>/dev/null; then kill -9 "$server" 2>/dev/null || true; fi
    wait "$server" 2>/dev/null || true
    server=
    streaming=$(json "$log.json" allStreaming)
    exit_ms=$(json "$log.json" exitMs)
    [ "$(json "$log.json" exited)" = true ] || exit_ms=-1
    echo "$round,$name,$conns,$streaming,$(json "$log.json" clean),$(json "$log.json" cut),$(json "$log.json" failed),$(json "$log.json" endP50Ms),$(json "$log.json" endMaxMs),$exit_ms" \
      | tee -a "$out/runs.csv"
  done
done

{
  echo "# Graceful shutdown with $conns open SSE streams"
  echo
  echo "Medians over $rounds round(s), times from SIGTERM (min-max in brackets). Clean: the stream's body ended with"
  echo "its last chunk; cut: the connection closed mid-body."
  echo
  echo "| variant | clean | cut | half the streams ended (ms) | last stream ended (ms) | JVM gone (ms) |"
  echo "|---|---|---|---|---|---|"
  for name in "${variants[@]}"; do
    awk -F, -v v="$name" '
      function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      function rng(a, n) { return " [" a[1] "-" a[n] "]" }
      $2 == v { n++; c[n] = $5; x[n] = $6; p[n] = $8; m[n] = $9; e[n] = $10 }
      END { if (n) printf "| %s | %s | %s | %s%s | %s%s | %s%s |\n", v, med(c, n), med(x, n), med(p, n), rng(p, n), med(m, n), rng(m, n), med(e, n), rng(e, n) }' "$out/runs.csv"
  done
} | tee "$out/summary.md"
