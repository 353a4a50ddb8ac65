#!/usr/bin/env bash
# The pool benchmark: 256 clients on a query endpoint that streams its rows (JdbcClient...stream(), the way Spring's
# docs show it) over PostgreSQL, 10 pooled connections, at fixed rates below saturation and at saturation; cosched
# against Spring MVC + Tomcat + virtual threads (what most teams run) with the same pool, and optionally Spring's
# virtual threads on WebFlux.
#
#   benchmarks/pool.sh              a calibrating round, then 3 rounds (about 25 min)
#   benchmarks/pool.sh --quick      calibration and 1 round, shorter windows, for a rough look
#   BENCH_VARIANTS="cosched mvc-virtual-threads virtual-threads" benchmarks/pool.sh
#   BENCH_RATE=1500 benchmarks/pool.sh   the saturation rate given: no calibrating round
#   BENCH_RUNS=5 benchmarks/pool.sh      the whole run five times in a row (the zero-failure target)
#
# Per variant (a fresh JVM each, interleaved every round, server on one core, one event loop): one wrk run of
# warm-up and window at saturation (256 connections), then LoadGen at fixed rates (BENCH_FRACTIONS, default
# "0.3 0.6 0.9" of the slowest variant's saturation rate in the calibrating round) on 256 connections, latency
# counted from when each request was due. Every window reports the server's CPU time and context switches per
# request, p50/p99, answers by status and requests that got none, and how long the application waited for a
# pooled connection (p50/p99 of every getConnection() in the counted seconds, the line in front of the pool and
# the pool's own wait alike, timed the same way on every stack: GET /acquire-times). Results: benchmarks/results/pool-<timestamp>/
# (runs.csv, summary.md).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

if $quick; then rounds=1; warm=15; measure=10; rate_seconds=10; else rounds=3; warm=30; measure=15; rate_seconds=15; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
first_warm=$((warm * 2))
fractions=${BENCH_FRACTIONS-0.3 0.6 0.9}
connections=256
pool=10
path="/jdbc-stream?id=7"
runs=${BENCH_RUNS:-1}

. benchmarks/http-common.sh
bench_need_wrk
bench_need_postgres
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
rm -f "$bench_webflux_app" "$bench_mvc_app"
./mvnw -q -B -pl benchmarks,benchmarks/http-app,benchmarks/http-mvc-app -am package -DskipTests

picked=$(bench_pick BENCH_VARIANTS "${BENCH_VARIANTS:-cosched mvc-virtual-threads}" "${bench_variants[@]}") || exit 1
mapfile -t variants <<< "$picked"

clk=$(getconf CLK_TCK)
ms() {
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}
steal_of() { awk -v s0="$1" -v s1="$2" -v t0="$3" -v t1="$4" 'BEGIN {printf "%.1f", (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0}'; }
# the application's waits for a connection since the last call: "p50,p99" in ms
acquire_times() {
  local a
  a=$(curl -sf localhost:18080/acquire-times) || { echo "-,-"; return; }
  echo "$(grep -o '"p50":[0-9.]*' <<< "$a" | cut -d: -f2),$(grep -o '"p99":[0-9.]*' <<< "$a" | cut -d: -f2)"
}

# Saturation, warm-up $1 s: one wrk run; prints "rps,p50,p99,statuses,failed,requests,cpu_us_per_req,cs_per_req,steal_pct,acquire_p50,acquire_p99"
saturated() {
  local w=$1 url="http://127.0.0.1:18080$path" res load c0 c1 x0 x1 s0 s1 t0 t1 rx0 rx1 acq
  local request_bytes=$(( ${#path} + 40 ))
  "${on_load[@]}" wrk -t1 -c"$connections" -d"$((w + measure + 2))s" --timeout 10s --latency "$url" > "$out/wrk-running.txt" 2>&1 &
  load=$!
  sleep "$w"
  acquire_times > /dev/null
  rx0=$(bench_received_bytes); c0=$(bench_cpu_ticks "$server"); x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
  sleep "$measure"
  rx1=$(bench_received_bytes); c1=$(bench_cpu_ticks "$server"); x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
  acq=$(acquire_times)
  wait "$load" || true
  res=$(cat "$out/wrk-running.txt"); rm -f "$out/wrk-running.txt"
  echo "$res" > "$out/last-wrk.txt"
  local requests=$(( (rx1 - rx0) / request_bytes )) p50 p99 non2xx socket
  p50=$(ms "$(awk '$1 == "50%" {print $2}' <<< "$res")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
  non2xx=$(awk '/Non-2xx/ {n += $NF} END {print n + 0}' <<< "$res")
  socket=$(awk '/Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
  awk -v n="$requests" -v m="$measure" -v p50="$p50" -v p99="$p99" -v nx="$non2xx" -v se="$socket" -v c0="$c0" -v c1="$c1" -v hz="$clk" \
      -v x0="$x0" -v x1="$x1" -v st="$(steal_of "$s0" "$s1" "$t0" "$t1")" -v acq="$acq" 'BEGIN {
    if (n <= 0) { n = 1 }
    printf "%.1f,%s,%s,non-2xx=%d socket-errors=%d,%d,%d,%.1f,%.3f,%s,%s\n", n / m, p50, p99, nx, se, nx + se, n,
      (c1 - c0) / hz * 1e6 / n, (x1 - x0) / n, st, acq }'
}

# A fixed rate of $1 requests/s: LoadGen, 5 s not counted then rate_seconds; prints the same fields
fixed_rate() {
  local rate=$1 res c0 c1 x0 x1 s0 s1 t0 t1 acq
  c0=$(bench_cpu_ticks "$server"); x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
  # the connection waits of the counted seconds only: LoadGen's first 5 s open its 256 connections
  (sleep 5; acquire_times > /dev/null) &
  res=$("${on_load[@]}" "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$bench_tools" io.cosched.bench.LoadGen \
    --url=http://127.0.0.1:18080 --paths="$path" --connections="$connections" --rate="$rate" --warmup-seconds=5 \
    --seconds="$rate_seconds" --timeout-ms=10000 --label="$rate" 2>&1 | tail -n 1)
  c1=$(bench_cpu_ticks "$server"); x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
  acq=$(acquire_times)
  echo "$res" > "$out/last-loadgen.json"
  local answered ok p50 p99 failed statuses
  answered=$(grep -o '"answered":[0-9]*' <<< "$res" | cut -d: -f2)
  ok=$(grep -o '"ok":[0-9]*' <<< "$res" | cut -d: -f2)
  p50=$(grep -o '"okMs":{"p50":[0-9.]*' <<< "$res" | sed 's/.*://')
  p99=$(grep -o '"okMs":{[^}]*' <<< "$res" | grep -o '"p99":[0-9.]*' | cut -d: -f2)
  statuses=$(grep -o '"statuses":{[^}]*}' <<< "$res" | sed 's/"statuses":{//; s/}//; s/"//g; s/:/=/g; s/,/ /g')
  statuses="$statuses$(for k in timedOut lost unsent refused otherErrors; do
    v=$(grep -o "\"$k\":[0-9]*" <<< "$res" | cut -d: -f2); [ "${v:-0}" -gt 0 ] && printf ' %s=%s' "$k" "$v"; done; true)"
  failed=$(awk -v a="${answered:-0}" -v o="${ok:-0}" -v r="$res" 'BEGIN { n = a - o
    while (match(r, /"(timedOut|lost|unsent|refused|otherErrors)":[0-9]+/)) { s = substr(r, RSTART, RLENGTH); sub(/.*:/, "", s); n += s; r = substr(r, RSTART + RLENGTH) }
    print n }')
  # CPU and switches over the whole LoadGen run, its warm-up included: per request due in it
  awk -v rate="$rate" -v secs="$((rate_seconds + 5))" -v ok="${ok:-0}" -v m="$rate_seconds" -v p50="$p50" -v p99="$p99" -v e="$failed" \
      -v c0="$c0" -v c1="$c1" -v hz="$clk" -v x0="$x0" -v x1="$x1" -v st="$(steal_of "$s0" "$s1" "$t0" "$t1")" \
      -v sts="$statuses" -v acq="$acq" 'BEGIN {
    n = rate * secs
    printf "%.1f,%s,%s,%s,%d,%d,%.1f,%.3f,%s,%s\n", ok / m, p50, p99, sts, e, ok, (c1 - c0) / hz * 1e6 / n, (x1 - x0) / n, st, acq }'
}

for run in $(seq 1 "$runs"); do
  out="benchmarks/results/pool-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$out"
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
    echo "build: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' with changes')"
    echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
    echo "command: benchmarks/pool.sh $*$($quick && echo --quick) BENCH_FRACTIONS='$fractions'${BENCH_VARIANTS:+ BENCH_VARIANTS=$BENCH_VARIANTS}${BENCH_RATE:+ BENCH_RATE=$BENCH_RATE} (run $run of $runs)"
    echo "endpoint: GET $path, JdbcClient...stream() of 10 rows; HikariCP maximum-pool-size=$pool; $connections connections"
    echo "pinning: server on core $server_core ($bench_loops event loop), wrk and LoadGen on core $load_core"
    echo "timing: $rounds rounds after the calibrating one; ${warm}s warm-up (${first_warm}s after a start) and ${measure}s measured in one wrk run, then ${rate_seconds}s (after 5 s not counted) at each fixed rate"
  } | tee "$out/machine.txt"
  if curl -s -o /dev/null localhost:18080/; then echo "bench: port 18080 is taken; stop what listens there first" >&2; exit 1; fi
  trap '[ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

  echo "round,variant,load,rps,p50_ms,p99_ms,statuses,failed,requests,cpu_us_per_req,cs_per_req,steal_pct,acquire_p50_ms,acquire_p99_ms" > "$out/runs.csv"
  rate=${BENCH_RATE-}
  first_round=1
  if [ -z "$rate" ] && [ -n "$fractions" ]; then first_round=0; fi
  for round in $(seq "$first_round" "$rounds"); do
    # interleaved: each round starts one variant further on
    n=${#variants[@]}
    for i in $(seq 0 $((n - 1))); do
      v=${variants[$(( (i + round) % n ))]}
      name=${v%%|*}
      bench_start "$name" "$out/server-$name-$round.log" "${bench_pg_args[@]}" --bench.acquire-times=true \
        --spring.datasource.hikari.maximum-pool-size="$pool"
      curl -sf -o /dev/null "localhost:18080$path" || { echo "bench: $name does not answer $path" >&2; exit 1; }
      echo "round $round, $name: started"
      row=$(saturated "$first_warm")
      cp "$out/last-wrk.txt" "$out/wrk-$name-$round.txt"
      echo "$round,$name,saturated,$row" | tee -a "$out/runs.csv"
      if [ "$round" -gt 0 ] && [ -n "$rate" ]; then
        for f in $fractions; do
          r=$(awk -v r="$rate" -v f="$f" 'BEGIN {printf "%d", r * f}')
          row=$(fixed_rate "$r")
          cp "$out/last-loadgen.json" "$out/loadgen-$name-$f-$round.json"
          echo "$round,$name,rate-$f,$row" | tee -a "$out/runs.csv"
        done
      fi
      kill "$server"; wait "$server" 2>/dev/null || true
      server=
    done
    if [ "$round" = 0 ]; then
      rate=$(awk -F, '$1 == 0 && $3 == "saturated" && (m == "" || $4 < m) {m = $4} END {printf "%d", m}' "$out/runs.csv")
      echo "fixed rates: fractions ($fractions) of $rate requests/s, the slowest variant's saturation rate" | tee -a "$out/machine.txt"
      [ "$rate" -gt 0 ] || { echo "bench: the calibrating round measured no rate (see runs.csv and the server logs)" >&2; exit 1; }
    fi
  done
  rm -f "$out/last-wrk.txt" "$out/last-loadgen.json"

  # medians per load and variant over the rounds after the calibrating one; failures summed, with their statuses
  {
    echo "| load | variant | CPU us/req (range) | switches/req | req/s | p50 ms | p99 ms (range) | connection wait p50 / p99 ms | failed (statuses) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 && $1 > 0' "$out/runs.csv" | sort -t, -k3,3 -k2,2 | awk -F, '
      function median(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                          return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      function flush() { if (key == "") return
        printf "| %s | %s | %.1f (%.1f-%.1f) | %.2f | %.0f | %.1f | %.1f (%.1f-%.1f) | %.2f / %.2f | %d (%s) |\n", ld, va, median(cpu, n), clo, chi,
          median(cs, n), median(rps, n), median(p50, n), median(p99, n), plo, phi, median(a50, n), median(a99, n), fl, sts
        n = 0; fl = 0; sts = "" }
      { k = $3 "|" $2; if (k != key) { flush(); key = k; ld = $3; va = $2; clo = plo = 1e18; chi = phi = 0 }
        n++; rps[n] = $4; p50[n] = $5; p99[n] = $6; fl += $8; cpu[n] = $10; cs[n] = $11; a50[n] = $13; a99[n] = $14
        if ($8 > 0) sts = sts (sts == "" ? "" : "; ") $7
        if ($10 < clo) clo = $10; if ($10 > chi) chi = $10; if ($6 < plo) plo = $6; if ($6 > phi) phi = $6 }
      END { flush() }'
  } | tee "$out/summary.md"
  echo "results in $out"
done
