#!/usr/bin/env bash
# What a shed request costs the server (issue 28): the HTTP benchmark's cosched variant (one loop on core 0,
# wrk on core 1), a fresh JVM per variant and round, interleaved:
#   served        GET /hello answered 200 by its coroutine handler, no in-flight limit: the yardstick
#   shed-early    cosched.web.max-in-flight=1 and the one slot held by a sleeping request: every GET /hello
#                 is answered 503 in the connection's pipeline, before WebFlux (the default)
#   shed-webflux  the same with cosched.web.shed-before-webflux=false: answered 503 by WebFlux's adapter
# and what a JDK Flight Recorder recording costs (started with jcmd after the server is up, JDK's default
# settings), where cosched records nothing (served) and where it records an event per response (shed):
#   served-jfr            served, with a recording
#   shed-early-jfr        shed-early, with a recording: one io.cosched.RequestShed event per response
#   shed-early-jfr-quiet  the same recording with io.cosched.RequestShed disabled: what the events cost
#
#   benchmarks/shed.sh           3 rounds, 40 s warm-up + 15 s measured per variant (~20 min)
#   benchmarks/shed.sh --quick   1 round, 10 s + 5 s
#   SHED_VARIANTS="served shed-early" benchmarks/shed.sh   some of them
# Prints server CPU microseconds per response (user + system time of the server over the window's
# responses; each of the two also apart), context switches per response, responses/s, the share of 503s and the host's steal time;
# results in benchmarks/results/shed-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

if $quick; then rounds=1; warm=10; measure=5; else rounds=3; warm=40; measure=15; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
bench_need_wrk
bench_build
out="benchmarks/results/shed-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
# name | application arguments | JFR.start options (none: no recording)
all_variants=(
  "served||"
  "served-jfr||settings=default"
  "shed-early|--cosched.web.max-in-flight=1|"
  "shed-early-jfr|--cosched.web.max-in-flight=1|settings=default"
  "shed-early-jfr-quiet|--cosched.web.max-in-flight=1|settings=default +io.cosched.RequestShed#enabled=false"
  "shed-webflux|--cosched.web.max-in-flight=1 --cosched.web.shed-before-webflux=false|"
)
variants=()
for v in "${all_variants[@]}"; do
  if [ -z "${SHED_VARIANTS-}" ] || [[ " $SHED_VARIANTS " == *" ${v%%|*} "* ]]; then variants+=("$v"); fi
done
[ ${#variants[@]} -gt 0 ] || { echo "shed: SHED_VARIANTS names no variant (expected some of: ${all_variants[*]%%|*})" >&2; exit 1; }
holder=
trap '[ -n "$holder" ] && kill $holder 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT
clk=$(getconf CLK_TCK)
echo "round,variant,rps,responses,share_503,cpu_us_per_response,cs_per_response,steal_pct,user_us_per_response,system_us_per_response" | tee "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  n_variants=${#variants[@]}
  for i in $(seq 0 $((n_variants - 1))); do
    IFS='|' read -r name args jfr <<< "${variants[$(((i + round - 1) % n_variants))]}"
    # shellcheck disable=SC2086
    bench_start cosched "$out/server-$name-$round.log" $args
    if [ -n "$jfr" ]; then
      # shellcheck disable=SC2086
      "$JAVA_HOME/bin/jcmd" "$server" JFR.start name=shed $jfr > "$out/jfr-$name-$round.log"
    fi
    if [ -n "$args" ]; then
      curl -s -o /dev/null "http://127.0.0.1:18080/hold?ms=3600000" &
      holder=$!
      for _ in $(seq 1 50); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18080/hello)" = 503 ] && break
        sleep 0.1
      done
    fi
    "${on_load[@]}" wrk -t1 -c100 -d"${warm}s" "http://127.0.0.1:18080/hello" > /dev/null 2>&1
    # user and system time apart (the kernel's share), their sum the server's CPU as bench_cpu_ticks reads it
    read -r u0 k0 < <(awk '{print $14, $15}' "/proc/$server/stat")
    x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
    res=$("${on_load[@]}" wrk -t1 -c100 -d"${measure}s" "http://127.0.0.1:18080/hello" 2>&1)
    read -r u1 k1 < <(awk '{print $14, $15}' "/proc/$server/stat")
    x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
    n=$(awk '/requests in/ {print $1}' <<< "$res")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<< "$res"); non2xx=${non2xx:-0}
    rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
    awk -v r="$round" -v name="$name" -v rps="$rps" -v n="$n" -v bad="$non2xx" -v hz="$clk" \
      -v x0="$x0" -v x1="$x1" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" -v u0="$u0" -v u1="$u1" -v k0="$k0" -v k1="$k1" \
      'BEGIN {printf "%s,%s,%s,%d,%.3f,%.1f,%.3f,%.1f,%.2f,%.2f\n", r, name, rps, n, bad / n, (u1 - u0 + k1 - k0) / hz * 1e6 / n,
              (x1 - x0) / n, (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0, (u1 - u0) / hz * 1e6 / n, (k1 - k0) / hz * 1e6 / n}' | tee -a "$out/runs.csv"
    [ -n "$holder" ] && { kill "$holder" 2>/dev/null || true; holder=; }
    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
done
awk -F, 'NR > 1 {v[$2] = v[$2] " " $6} END {for (k in v) print k ":" v[k]}' "$out/runs.csv" | sort > "$out/summary.txt"
echo "CPU us per response by variant (one per round):"; cat "$out/summary.txt"
echo "results in $out"
