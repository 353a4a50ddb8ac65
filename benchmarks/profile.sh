#!/usr/bin/env bash
# Profiles variants of the HTTP benchmark under load with JFR and compares them per request.
#
#   benchmarks/profile.sh                          cosched against reactive on /hello
#   benchmarks/profile.sh cosched virtual-threads  any two variants of run.sh
#   PROFILE_PATH=/jdbc?id=7 PROFILE_CONNECTIONS=100 benchmarks/profile.sh cosched elastic
#   PROFILE_DB=pg PROFILE_PATH=/jdbc?id=7 benchmarks/profile.sh cosched virtual-threads   (on PostgreSQL)
#   PROFILE_WARM=80 ...                            longer warm-up (seconds), for paths still compiling
#
# Each variant runs as in benchmarks/run.sh (same flags, server on core 0, wrk on core 1): 20 s
# (PROFILE_WARM) of warm-up load, then 15 s of load with a JFR recording (settings=profile). Prints each variant's
# server CPU per request (over that window, recording included) and req/s, its hottest methods,
# its samples by phase of the request (Netty, Reactor Netty, WebFlux's exchange, filters, handler
# mapping, arguments, the handler, encoding, observation, cosched), then where the first spends more
# CPU per request than the second
# (io.cosched.bench.JfrProfile). Recordings: benchmarks/results/profile-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

. benchmarks/http-common.sh

a=${1:-cosched}; b=${2:-reactive}
path=${PROFILE_PATH:-/hello}; conns=${PROFILE_CONNECTIONS:-100}; warm=${PROFILE_WARM:-20}
bench_spec "$a" > /dev/null; bench_spec "$b" > /dev/null
if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "profile: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
bench_need_wrk
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
db_args=()
if [ "${PROFILE_DB:-h2}" = pg ]; then bench_need_postgres; db_args=("${bench_pg_args[@]}"); fi

bench_build
out="benchmarks/results/profile-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

stub=
if [[ $path == /downstream* ]]; then
  "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 20 1 > "$out/stub.log" 2>&1 &
  stub=$!
fi
trap '[ -n "$stub" ] && kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

declare -A rps cpu_us
for v in "$a" "$b"; do
  bench_start "$v" "$out/server-$v.log" "${db_args[@]}"
  "${on_load[@]}" wrk -t1 -c"$conns" -d"${warm}s" --timeout 10s "http://127.0.0.1:18080$path" > /dev/null
  "$JAVA_HOME/bin/jcmd" "$server" JFR.start name=profile settings=profile duration=15s filename="$PWD/$out/$v.jfr" > /dev/null
  cpu0=$(bench_cpu_ticks "$server")
  "${on_load[@]}" wrk -t1 -c"$conns" -d15s --timeout 10s --latency "http://127.0.0.1:18080$path" > "$out/wrk-$v.txt"
  cpu1=$(bench_cpu_ticks "$server")
  cpu_us[$v]=$(awk -v a="$cpu0" -v b="$cpu1" -v t="$(getconf CLK_TCK)" -v n="$(awk '/requests in/ {print $1}' "$out/wrk-$v.txt")" \
    'BEGIN {if (n > 0) printf "%.1f", (b - a) / t * 1e6 / n}')
  for _ in $(seq 1 40); do [ -s "$out/$v.jfr" ] && break; sleep 0.5; done   # JFR writes the file when the recording ends
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
  rps[$v]=$(awk '/Requests\/sec/ {print $2}' "$out/wrk-$v.txt")
  echo "== $v: ${cpu_us[$v]} us of server CPU per request (JFR on), ${rps[$v]} req/s"
  "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile top "$out/$v.jfr" "" 25
  "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile phases "$out/$v.jfr" "${cpu_us[$v]}" | tee "$out/phases-$v.txt"
done
echo "== where $a spends more per request than $b"
"$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile diff "$out/$a.jfr" "${rps[$a]}" "$out/$b.jfr" "${rps[$b]}" 40 | tee "$out/diff.txt"
echo "recordings in $out"
