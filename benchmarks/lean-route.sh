#!/usr/bin/env bash
# Where a hello's CPU goes, and what a coroutine route would cost without WebFlux (issue 25): one cosched
# server (the HTTP benchmark's cosched variant, one loop on core 0) answers four hellos, measured in the
# same JVM one after the other, a fresh JVM per round:
#   webflux-coroutine  GET /hello through WebFlux, a @RunAsCoroutine handler (what users run)
#   webflux-mono       GET /hello-mono through WebFlux, a Mono handler on the loop
#   lean-coroutine     GET /hello on a second Reactor Netty server on the same loops (LeanRoutePrototype, a
#                      throw-away prototype): a coroutine invokes the same controller method, the loop writes
#   bare-reactor-netty GET /hello-bare on that server: Reactor Netty alone, no coroutine
#
#   benchmarks/lean-route.sh           3 rounds, 40 s warm-up (60 s for the first) + 15 s measured per route
#   benchmarks/lean-route.sh --quick   1 round, 10 s + 5 s
# Prints CPU microseconds per request (the server process's user + system time over the window's
# requests), context switches per request, req/s and the host's steal time over the window;
# results in benchmarks/results/lean-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

if $quick; then rounds=1; warm=10; measure=5; else rounds=3; warm=40; measure=15; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
bench_need_wrk
bench_build
out="benchmarks/results/lean-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
routes=(
  "webflux-coroutine|http://127.0.0.1:18080/hello"
  "webflux-mono|http://127.0.0.1:18080/hello-mono"
  "lean-coroutine|http://127.0.0.1:18081/hello"
  "bare-reactor-netty|http://127.0.0.1:18081/hello-bare"
)
trap '[ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT
clk=$(getconf CLK_TCK)
echo "round,route,rps,requests,cpu_us_per_req,cs_per_req,steal_pct" | tee "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  bench_start cosched "$out/server-$round.log" --bench.lean-port=18081
  first=true
  for r in "${routes[@]}"; do
    IFS='|' read -r name url <<< "$r"
    if $first; then w=$((warm * 3 / 2)); first=false; else w=$warm; fi
    "${on_load[@]}" wrk -t1 -c100 -d"${w}s" "$url" > /dev/null 2>&1
    c0=$(bench_cpu_ticks "$server"); x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
    res=$("${on_load[@]}" wrk -t1 -c100 -d"${measure}s" "$url" 2>&1)
    c1=$(bench_cpu_ticks "$server"); x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
    n=$(awk '/requests in/ {print $1}' <<< "$res")
    rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
    awk -v r="$round" -v name="$name" -v rps="$rps" -v n="$n" -v c0="$c0" -v c1="$c1" -v hz="$clk" -v x0="$x0" -v x1="$x1" \
      -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" \
      'BEGIN {printf "%s,%s,%s,%d,%.1f,%.3f,%.1f\n", r, name, rps, n, (c1 - c0) / hz * 1e6 / n, (x1 - x0) / n,
              (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0}' | tee -a "$out/runs.csv"
  done
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
done
echo "results in $out"
