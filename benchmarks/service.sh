#!/usr/bin/env bash
# The realistic service's benchmark: sample-service (Spring Data JPA on PostgreSQL, Spring Security
# with HTTP basic and method security, Actuator with its defaults) with cosched against the same
# binary on Spring's own virtual threads (cosched.enabled=false).
#
#   benchmarks/service.sh            3 rounds; per scenario 40 s warm-up (60 s for the first after a
#                                    start) + 20 s measured (about 25 min)
#   benchmarks/service.sh --quick    1 round, 10 s (20 s) + 10 s, for a rough look
#   BENCH_VARIANTS="cosched virtual-threads" BENCH_SCENARIOS="jpa" benchmarks/service.sh   a subset
#
# Scenarios, each an authenticated GET with 100 connections:
#   jpa      /api/accounts/7: a @Transactional(readOnly) service method guarded by @PreAuthorize,
#            Spring Data JPA's findById on PostgreSQL (HikariCP, 20 connections)
#   quote    /api/quote: Boot's RestClient to a stub that answers after 5 ms
# Variants (the same jar, a fresh JVM each, interleaved every round):
#   cosched              cosched's defaults (password checked on cosched's compute pool)
#   cosched-loop-check   cosched.security.password-check=loop: no hand-off for the (noop) password check
#   virtual-threads      Spring's virtual threads, cosched off; the service's bridge puts the security
#                        context where method security looks (what a team writes without cosched)
# Passwords are stored with the noop encoder (sample.password-encoding=noop), so that what is measured
# is the stack and not bcrypt, which costs tens of milliseconds a request whatever runs it;
# BENCH_PASSWORD_ENCODING=bcrypt measures with it. The first
# figure is the server's CPU time per request (utime + stime of the process over the window's requests),
# then context switches per request, req/s and latency; the host's steal time per window is recorded,
# and a window with more than 5 % steal is repeated once. Results: benchmarks/results/service-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

if $quick; then rounds=1; warm=10; measure=10; else rounds=3; warm=40; measure=20; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
first_warm=$((warm * 3 / 2))

. benchmarks/http-common.sh
bench_need_wrk
bench_need_postgres
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

service_app=sample-service/target/cosched-sample-service-0.1.0-SNAPSHOT.jar
rm -f "$service_app"
./mvnw -q -B -pl benchmarks,sample-service -am package -DskipTests

# name | extra JVM flags | application arguments
all_variants=(
  "cosched|--add-opens java.base/java.lang=ALL-UNNAMED|--cosched.io.threads=$bench_loops"
  "cosched-loop-check|--add-opens java.base/java.lang=ALL-UNNAMED|--cosched.io.threads=$bench_loops --cosched.security.password-check=loop"
  "virtual-threads||--cosched.enabled=false"
)
# name | path
scenarios=(
  "jpa|/api/accounts/7"
  "quote|/api/quote"
)
picked=$(bench_pick BENCH_VARIANTS "${BENCH_VARIANTS-}" "${all_variants[@]}") || exit 1
mapfile -t variants <<< "$picked"
picked=$(bench_pick BENCH_SCENARIOS "${BENCH_SCENARIOS-}" "${scenarios[@]}") || exit 1
mapfile -t chosen <<< "$picked"

out="benchmarks/results/service-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
  echo "command: benchmarks/service.sh $*$($quick && echo --quick)${BENCH_VARIANTS:+ BENCH_VARIANTS=$BENCH_VARIANTS}${BENCH_SCENARIOS:+ BENCH_SCENARIOS=$BENCH_SCENARIOS}${BENCH_PASSWORD_ENCODING:+ BENCH_PASSWORD_ENCODING=$BENCH_PASSWORD_ENCODING}"
  echo "pinning: server on core $server_core ($bench_loops event loop), wrk and the stub on core $load_core; 100 connections"
  echo "timing: $rounds rounds; per scenario ${warm}s warm-up (${first_warm}s for the first after a start), ${measure}s measured"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "bench: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
"${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 5 1 > "$out/stub.log" 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

auth="Authorization: Basic $(printf 'user:secret' | base64)"
clk=$(getconf CLK_TCK)
ms() {
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}

# One measured window of scenario path $1 against $server: prints "rps,p50,p99,errors,requests,cpu_us_per_req,cs_per_req,steal_pct"
window() {
  local url="http://127.0.0.1:18080$1" res c0 c1 s0 s1 t0 t1 x0 x1
  c0=$(bench_cpu_ticks "$server"); x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
  res=$("${on_load[@]}" wrk -t1 -c100 -d"${measure}s" --timeout 10s --latency -H "$auth" "$url" 2>&1 || true)
  c1=$(bench_cpu_ticks "$server"); x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
  echo "$res" > "$out/last-wrk.txt"
  local rps requests p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
  requests=$(awk '/requests in/ {print $1}' <<< "$res")
  p50=$(ms "$(awk '$1 == "50%" {print $2}' <<< "$res")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
  errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
  awk -v rps="$rps" -v p50="$p50" -v p99="$p99" -v e="$errors" -v n="${requests:-0}" -v c0="$c0" -v c1="$c1" -v hz="$clk" \
      -v x0="$x0" -v x1="$x1" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" 'BEGIN {
    if (n <= 0) { n = 1 }
    printf "%s,%s,%s,%s,%d,%.1f,%.3f,%.1f\n", rps, p50, p99, e, n, (c1 - c0) / hz * 1e6 / n, (x1 - x0) / n,
      (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0 }'
}

echo "round,variant,scenario,rps,p50_ms,p99_ms,errors,requests,cpu_us_per_req,cs_per_req,steal_pct" > "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    IFS='|' read -r name jvm args <<< "$v"
    log="$out/server-$name-$round.log"
    # shellcheck disable=SC2086
    "${on_server[@]}" "$JAVA" "${bench_common_jvm[@]}" $jvm -jar "$service_app" --server.port=18080 \
      "${bench_pg_args[@]}" --sample.password-encoding="${BENCH_PASSWORD_ENCODING:-noop}" --sample.downstream-url=http://127.0.0.1:18099 \
      --spring.datasource.hikari.maximum-pool-size=20 $args > "$log" 2>&1 &
    server=$!
    for _ in $(seq 1 120); do curl -sf -H "$auth" localhost:18080/api/accounts/7 >/dev/null && break; sleep 0.5; done
    kill -0 "$server" 2>/dev/null || { echo "bench: $name did not start, see $log" >&2; exit 1; }
    echo "round $round, $name: $(curl -s -H "$auth" localhost:18080/api/me)"
    first=true
    for s in "${chosen[@]}"; do
      IFS='|' read -r scenario path <<< "$s"
      if $first; then w=$first_warm; first=false; else w=$warm; fi
      "${on_load[@]}" wrk -t1 -c100 -d"${w}s" --timeout 10s -H "$auth" "http://127.0.0.1:18080$path" > /dev/null 2>&1 || true
      row=$(window "$path")
      steal=${row##*,}
      if awk -v s="$steal" 'BEGIN {exit !(s > 5)}'; then
        echo "  ($name $scenario: ${steal}% steal, window repeated)"
        row=$(window "$path")
      fi
      cp "$out/last-wrk.txt" "$out/wrk-$name-$scenario-$round.txt"
      echo "$round,$name,$scenario,$row" | tee -a "$out/runs.csv"
    done
    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
done
rm -f "$out/last-wrk.txt"

# medians per variant and scenario, with the range over the rounds
{
  echo "| scenario | variant | CPU us/req (range) | switches/req | req/s | p99 ms | errors |"
  echo "|---|---|---|---|---|---|---|"
  tail -n +2 "$out/runs.csv" | sort -t, -k3,3 -k2,2 | awk -F, '
    function median(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    function flush() { if (key == "") return
      printf "| %s | %s | %.1f (%.1f-%.1f) | %.2f | %.0f | %.1f | %d |\n", sc, va, median(cpu, n), lo, hi, median(cs, n), median(rps, n), median(p99, n), err
      n = 0; err = 0 }
    { k = $3 "|" $2; if (k != key) { flush(); key = k; sc = $3; va = $2; lo = 1e18; hi = 0 }
      n++; cpu[n] = $9; cs[n] = $10; rps[n] = $4; p99[n] = $6; err += $7; if ($9 < lo) lo = $9; if ($9 > hi) hi = $9 }
    END { flush() }'
} | tee "$out/summary.md"
echo "results in $out"
