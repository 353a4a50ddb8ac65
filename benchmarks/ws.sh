#!/usr/bin/env bash
# The WebSocket benchmark: messages at a fixed rate over 100 connections (WsLoad), answered by cosched's blocking
# handlers (a coroutine per connection on its loop), by reactive WebFlux handlers (cosched off; R2DBC for the row),
# and by Spring MVC's TextWebSocketHandler on Tomcat with virtual threads. Scenarios: echo (each text message back)
# and jdbc (each message a PostgreSQL query for the row it names, JdbcClient or R2DBC).
#
#   benchmarks/ws.sh          3 rounds (about 15 minutes)
#   WS_VARIANTS="cosched mvc-virtual-threads" WS_SCENARIOS=jdbc WS_ROUNDS=5 benchmarks/ws.sh
#   (WS_ECHO_RATE, WS_JDBC_RATE: messages a second; 4,000 and 1,000 by default: 2,000 queries a second saturated the
#   reactive variant on one core)
#
# Per window (10 s warm-up in the same run, then 20 s counted): latency from when each message was due (p50, p99,
# p99.9), the server's CPU time per message (utime + stime over the window / messages due in it) and its context
# switches per message (all threads). Variants interleaved, a fresh JVM each. Results:
# benchmarks/results/ws-<timestamp>/ (runs.csv, summary.md, the servers' logs and the load's JSON).
# Pinning as in benchmarks/run.sh: the server on core 0, the load and PostgreSQL on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

rounds=${WS_ROUNDS:-3}
read -r -a variants <<< "${WS_VARIANTS:-cosched reactive mvc-virtual-threads}"
read -r -a scenarios <<< "${WS_SCENARIOS:-echo jdbc}"
echo_rate=${WS_ECHO_RATE:-4000}
jdbc_rate=${WS_JDBC_RATE:-1000}
warm=10; measure=20
if $quick; then rounds=1; warm=5; measure=8; fi
for v in "${variants[@]}"; do bench_spec "$v" > /dev/null; done
for s in "${scenarios[@]}"; do
  case $s in echo | jdbc) ;; *) echo "ws: unknown scenario '$s' (expected: echo or jdbc)" >&2; exit 1 ;; esac
done

bench_build
db_args=()
if [[ " ${scenarios[*]} " == *" jdbc "* ]]; then
  bench_need_postgres
  db_args=("${bench_pg_args[@]}")
  bench_pin_to_load postgres
fi
out="benchmarks/results/ws-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
  echo "command: benchmarks/ws.sh rounds=$rounds variants=\"${variants[*]}\" scenarios=\"${scenarios[*]}\" echo=$echo_rate/s jdbc=$jdbc_rate/s, ${warm}s + ${measure}s"
  echo "pinning: server on core $server_core; load and PostgreSQL on core $load_core; $bench_loops event loop per server"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/; then
  echo "ws: port 18080 is taken; stop what listens there first" >&2; exit 1
fi
trap 'for p in ${server-}; do kill "$p" 2>/dev/null || true; done' EXIT
json() { grep -o "\"$2\":[0-9.-]*" "$1" | head -n 1 | cut -d: -f2; }

echo "round,variant,scenario,rate,sent,failed,p50_ms,p99_ms,p999_ms,cpu_us_per_msg,cs_per_msg" > "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  for scenario in "${scenarios[@]}"; do
    if [ "$scenario" = echo ]; then rate=$echo_rate; else rate=$jdbc_rate; fi
    n=${#variants[@]}
    for i in $(seq 0 $((n - 1))); do
      name=${variants[$(((i + round - 1) % n))]}
      log=$out/load-$name-$scenario-$round
      bench_start "$name" "$out/server-$name-$scenario-$round.log" "${db_args[@]}"
      "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.WsLoad --url="ws://127.0.0.1:18080/ws/$scenario" \
        --rate="$rate" --connections=100 --warm="$warm" --seconds="$measure" --server-pid="$server" \
        --clk-tck="$(getconf CLK_TCK)" > "$log.json" 2> "$log.err" || echo "  ($name $scenario: the load failed, see $log.err)"
      kill "$server"; wait "$server" 2>/dev/null || true
      server=
      echo "$round,$name,$scenario,$rate,$(json "$log.json" sent),$(json "$log.json" failed),$(json "$log.json" p50Ms),$(json "$log.json" p99Ms),$(json "$log.json" p999Ms),$(json "$log.json" cpuUsPerMsg),$(json "$log.json" csPerMsg)" \
        | tee -a "$out/runs.csv"
    done
  done
done

{
  echo "# WebSocket: $rounds round(s), medians (min-max)"
  echo
  echo "| scenario | variant | rate/s | failed | p50 ms | p99 ms | CPU us/msg | switches/msg | CPU vs mvc-virtual-threads |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for scenario in "${scenarios[@]}"; do
    ref=$(awk -F, -v s="$scenario" '$3 == s && $2 == "mvc-virtual-threads" {print $10}' "$out/runs.csv" | sort -g | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}')
    for name in "${variants[@]}"; do
      awk -F, -v s="$scenario" -v v="$name" -v ref="$ref" '
        function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                         return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        function cell(a, n,   m) { m = med(a, n); return sprintf("%.3g (%.3g-%.3g)", m, a[1], a[n]) }
        $3 == s && $2 == v { n++; f += $6; p5[n] = $7; p9[n] = $8; c[n] = $10; w[n] = $11; r = $4 }
        END { if (n) { cm = med(c, n); printf "| %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", s, v, r, f, cell(p5, n), cell(p9, n), cell(c, n), cell(w, n), (ref > 0 ? sprintf("%.2fx", cm / ref) : "") } }' "$out/runs.csv"
    done
  done
} | tee "$out/summary.md"
