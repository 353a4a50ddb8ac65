#!/usr/bin/env bash
# The heavy service's benchmark (benchmarks/heavy-service): a secured, traced service, measured with cosched,
# with Spring's virtual threads on WebFlux (cosched off, the bridge method security needs) and on Spring MVC +
# Tomcat + virtual threads (what most teams run today).
#
#   benchmarks/heavy.sh              a calibrating round, then 3 rounds (about 45 min)
#   benchmarks/heavy.sh --quick      calibration and 1 round, shorter windows, for a rough look
#   BENCH_SAMPLING=0.1 BENCH_FRACTIONS= benchmarks/heavy.sh   tracing at 10 %, saturation only
#   BENCH_VARIANTS="cosched virtual-threads" BENCH_SCENARIOS="query" benchmarks/heavy.sh   a subset
#   BENCH_RATES="query=300 quote=400" benchmarks/heavy.sh       fixed rates given: no calibrating round
#   BENCH_JFR=1 BENCH_FRACTIONS= BENCH_ROUNDS=1 benchmarks/heavy.sh   a JFR recording (settings=profile) of each
#                                    saturation window, compared per request between the first two variants
#                                    (io.cosched.bench.JfrProfile phases, owners, diff); the recording costs CPU:
#                                    not for the figures
#   BENCH_JFR=rates BENCH_ROUNDS=1 BENCH_RATES="query=1710" BENCH_SCENARIOS=query benchmarks/heavy.sh   the same, and
#                                    each fixed rate's LoadGen run recorded too, compared per request with the same
#                                    JVM's saturation window (profile-<scenario>-rates.txt): what a request costs more
#                                    below saturation, in user code (perf sees the kernel: BENCH_SYSCALLS=1 counts calls)
#   BENCH_BASELINE_APP=/tmp/before.jar BENCH_VARIANTS="cosched cosched-baseline" benchmarks/heavy.sh   this build
#                                    against another build's heavy-service jar, interleaved
#   BENCH_EXTRA_VARIANTS="cosched-pool20=--spring.datasource.hikari.maximum-pool-size=20" BENCH_VARIANTS="cosched
#     cosched-pool20" benchmarks/heavy.sh   the cosched jar once more with more application arguments (comma-separated)
#   BENCH_LATENCY_LOG=1 BENCH_JVM_EXTRA="-Xlog:gc:file=/tmp/gc-%p.log:time" BENCH_RATES="query=1800"
#     BENCH_FRACTIONS=0.6 BENCH_SCENARIOS=query benchmarks/heavy.sh   every answer at a fixed rate logged
#                                    (loadgen-*.latency.csv), for io.cosched.bench.LatencyEpisodes with the GC log
#
# The service: an OAuth2 resource server (RS256 tokens checked against the keys of a jwk-set-uri that the stub
# serves), method security on the token's scopes, OpenTelemetry tracing through Micrometer (sampling
# BENCH_SAMPLING, default 1.0) with spans exported over OTLP to the stub, Spring Security's observations,
# Actuator with Prometheus, Spring Data JDBC and Spring Data JPA on PostgreSQL (HikariCP, 10 connections).
# Scenarios, each a GET with a bearer token, 100 connections:
#   query      /api/accounts/7: one row through Spring Data JDBC
#   quote      /api/quote: Boot's RestClient to the stub, which answers after 5 ms
#   transfers  /api/accounts/7/transfers: Spring Data JPA in a read-only transaction (not run by default)
# Variants (a fresh JVM each, interleaved every round, each round starting one further on, server on one core,
# one event loop):
#   cosched              heavy-service with cosched (every blocking handler a coroutine: cosched.web.mode=all)
#   virtual-threads      the same jar, cosched.enabled=false: WebFlux on Spring's virtual threads
#   mvc-virtual-threads  heavy-service-mvc: the same service on Spring MVC, Tomcat, virtual threads
# Per variant and scenario: one wrk run of warm-up and window (no connection closed and opened at the window's
# start; the window's requests counted from the bytes the server received), reporting the server's CPU time and
# context switches per request at saturation; then LoadGen at fixed rates (BENCH_FRACTIONS, default "0.3 0.6",
# of the slowest variant's saturation rate in the calibrating round), latency counted from when each request was
# due. After each variant: its reactor-http threads and, with cosched, requests that continued off their loop.
# Results: benchmarks/results/heavy-<timestamp>/ (runs.csv, rates.csv, threads.csv, summary.md with RateSummary's tables).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

if $quick; then rounds=1; warm=15; measure=10; rate_seconds=10; else rounds=3; warm=30; measure=15; rate_seconds=15; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
# the first scenario after a start warms three times as long: on one core this stack's CPU per request
# settles only after about 75 s of load (the JIT compiling Security, tracing and Spring Data on the same core)
first_warm=$((warm * 3))
sampling=${BENCH_SAMPLING:-1.0}
fractions=${BENCH_FRACTIONS-0.3 0.6}

. benchmarks/http-common.sh
bench_need_wrk
bench_need_postgres
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

flux_app=benchmarks/heavy-service/target/cosched-bench-heavy-service-0.1.0-SNAPSHOT.jar
mvc_app=benchmarks/heavy-service-mvc/target/cosched-bench-heavy-service-mvc-0.1.0-SNAPSHOT.jar
rm -f "$flux_app" "$mvc_app"
./mvnw -q -B -pl benchmarks,benchmarks/heavy-service,benchmarks/heavy-service-mvc -am package -DskipTests

# name | jar | extra JVM flags | application arguments
all_variants=(
  "cosched|$flux_app|--add-opens java.base/java.lang=ALL-UNNAMED|--cosched.io.threads=$bench_loops"
  "virtual-threads|$flux_app||--cosched.enabled=false"
  "mvc-virtual-threads|$mvc_app||"
)
if [ -n "${BENCH_BASELINE_APP-}" ]; then
  # another build of heavy-service (check the commit out, package benchmarks/heavy-service, copy the jar away), run as
  # the cosched variant is, interleaved with it: before/after in one run
  [ -f "$BENCH_BASELINE_APP" ] || { echo "bench: BENCH_BASELINE_APP=$BENCH_BASELINE_APP is not a file (expected: a copy of $flux_app built from another commit)" >&2; exit 1; }
  all_variants+=("cosched-baseline|$BENCH_BASELINE_APP|--add-opens java.base/java.lang=ALL-UNNAMED|--cosched.io.threads=$bench_loops")
fi
# BENCH_EXTRA_VARIANTS="name=--arg=value,--arg=value ...": more variants of the cosched jar with application arguments
# added, for a look at a setting (e.g. cosched-pool20=--spring.datasource.hikari.maximum-pool-size=20)
for x in ${BENCH_EXTRA_VARIANTS-}; do
  all_variants+=("${x%%=*}|$flux_app|--add-opens java.base/java.lang=ALL-UNNAMED|--cosched.io.threads=$bench_loops ${x#*=}")
done
all_variants=("${all_variants[@]//,--/ --}")
# name | path
scenarios=(
  "query|/api/accounts/7"
  "quote|/api/quote"
  "transfers|/api/accounts/7/transfers"
)
picked=$(bench_pick BENCH_VARIANTS "${BENCH_VARIANTS-}" "${all_variants[@]}") || exit 1
mapfile -t variants <<< "$picked"
picked=$(bench_pick BENCH_SCENARIOS "${BENCH_SCENARIOS:-query quote}" "${scenarios[@]}") || exit 1
mapfile -t chosen <<< "$picked"

out="benchmarks/results/heavy-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
"$JAVA" -cp "$bench_tools" io.cosched.bench.BenchTokens "$out/tokens"
token=$(cat "$out/tokens/token")
auth="Authorization: Bearer $token"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "build: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' with changes')"
  echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
  echo "command: benchmarks/heavy.sh $*$($quick && echo --quick) BENCH_SAMPLING=$sampling BENCH_FRACTIONS='$fractions'${BENCH_BASELINE_APP:+ BENCH_BASELINE_APP=$BENCH_BASELINE_APP}${BENCH_EXTRA_VARIANTS:+ BENCH_EXTRA_VARIANTS='$BENCH_EXTRA_VARIANTS'}${BENCH_VARIANTS:+ BENCH_VARIANTS=$BENCH_VARIANTS}${BENCH_SCENARIOS:+ BENCH_SCENARIOS=$BENCH_SCENARIOS}${BENCH_RATES:+ BENCH_RATES=$BENCH_RATES}${BENCH_JVM_EXTRA:+ BENCH_JVM_EXTRA='$BENCH_JVM_EXTRA'}"
  echo "pinning: server on core $server_core ($bench_loops event loop), wrk, LoadGen and the stub on core $load_core; 100 connections"
  echo "timing: $rounds rounds after the calibrating one; per scenario ${warm}s warm-up (${first_warm}s for the first after a start) and ${measure}s measured in one wrk run, then ${rate_seconds}s (after 5 s not counted) at each fixed rate"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "bench: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
"${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 5 1 "$out/tokens/jwks.json" > "$out/stub.log" 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT
clk=$(getconf CLK_TCK)
ms() {
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}
log_size() { wc -c < "$server_log"; }
# spans OpenTelemetry's BatchSpanProcessor dropped between log offsets $1 and $2 (it logs each drop as a WARN)
dropped_spans() { tail -c +"$(($1 + 1))" "$server_log" | head -c "$(($2 - $1))" | grep -o 'dropped [0-9]* span' | awk '{n += $2} END {print n + 0}'; }
steal_of() { awk -v s0="$1" -v s1="$2" -v t0="$3" -v t1="$4" 'BEGIN {printf "%.1f", (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0}'; }

# Saturation, path $1, warm-up $2 s: one wrk run; prints "rps,p50,p99,errors,requests,cpu_us_per_req,cs_per_req,steal_pct,spans_dropped_per_req"
saturated() {
  local path=$1 w=$2 url="http://127.0.0.1:18080$1" res load c0 c1 x0 x1 s0 s1 t0 t1 rx0 rx1 l0 l1
  # the request as wrk sends it: request line, Host, the bearer header, an empty line
  local request_bytes=$(( ${#path} + 40 + ${#auth} + 2 ))
  "${on_load[@]}" wrk -t1 -c100 -d"$((w + measure + 2))s" --timeout 10s --latency -H "$auth" "$url" > "$out/wrk-running.txt" 2>&1 &
  load=$!
  sleep "$w"
  if [ "${BENCH_JFR:-0}" != 0 ]; then
    "$JAVA_HOME/bin/jcmd" "$server" JFR.start name=window settings=profile filename="$(pwd)/$out/$3.jfr" > /dev/null
  fi
  l0=$(log_size); rx0=$(bench_received_bytes); c0=$(bench_cpu_ticks "$server"); x0=$(bench_ctxt "$server"); s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
  sleep "$measure"
  rx1=$(bench_received_bytes); c1=$(bench_cpu_ticks "$server"); l1=$(log_size); x1=$(bench_ctxt "$server"); s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
  if [ "${BENCH_JFR:-0}" != 0 ]; then "$JAVA_HOME/bin/jcmd" "$server" JFR.stop name=window > /dev/null; fi
  wait "$load" || true
  res=$(cat "$out/wrk-running.txt"); rm -f "$out/wrk-running.txt"
  echo "$res" > "$out/last-wrk.txt"
  local requests=$(( (rx1 - rx0) / request_bytes )) p50 p99 errors
  # the count holds while no connection closes: a connection closed and opened again takes its bytes along
  local whole
  whole=$(awk '/requests in/ {print $1}' <<< "$res")
  if [ $(( (rx1 - rx0) % request_bytes )) -ne 0 ] \
      || awk -v n="$requests" -v a="${whole:-0}" -v f="$measure" -v t="$((w + measure + 2))" 'BEGIN {exit !(n < 0.5 * a * f / t)}'; then
    echo "  (the received bytes ($((rx1 - rx0))) are not whole requests of $request_bytes bytes, or far fewer than wrk's answers ($whole in the run): connections were closed in the window, its count is off)" >&2
  fi
  p50=$(ms "$(awk '$1 == "50%" {print $2}' <<< "$res")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
  errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
  awk -v n="$requests" -v m="$measure" -v p50="$p50" -v p99="$p99" -v e="$errors" -v c0="$c0" -v c1="$c1" -v hz="$clk" \
      -v x0="$x0" -v x1="$x1" -v st="$(steal_of "$s0" "$s1" "$t0" "$t1")" -v d="$(dropped_spans "$l0" "$l1")" 'BEGIN {
    if (n <= 0) { n = 1 }
    printf "%.1f,%s,%s,%s,%d,%.1f,%.3f,%s,%.2f\n", n / m, p50, p99, e, n, (c1 - c0) / hz * 1e6 / n, (x1 - x0) / n, st, d / n }'
}

# A fixed rate, path $1, $2 requests/s: bench_fixed_rate, 5 s not counted then rate_seconds; prints the same fields.
# With BENCH_JFR=rates the whole LoadGen run is recorded to $3.jfr (lead-in included: a profile, not a figure)
fixed_rate() {
  local l0 l1 row
  l0=$(log_size)
  if [ "${BENCH_JFR:-0}" = rates ]; then
    "$JAVA_HOME/bin/jcmd" "$server" JFR.start name=rate settings=profile filename="$(pwd)/$out/$3.jfr" > /dev/null
  fi
  row=$(bench_fixed_rate "$1" "$2" "$rate_seconds" 100 "$out/last-loadgen.json" "$auth")
  if [ "${BENCH_JFR:-0}" = rates ]; then "$JAVA_HOME/bin/jcmd" "$server" JFR.stop name=rate > /dev/null; fi
  l1=$(log_size)
  awk -v row="$row" -v d="$(dropped_spans "$l0" "$l1")" 'BEGIN { split(row, f, ","); printf "%s,%.2f\n", row, (f[5] > 0) ? d / f[5] : 0 }'
}

# Starts variant $1 (its spec line) for round $2
start_variant() {
  local name jar jvm args path
  IFS='|' read -r name jar jvm args <<< "$1"
  server_log="$out/server-$name-$2.log"
  # shellcheck disable=SC2086
  "${on_server[@]}" "$JAVA" "${bench_common_jvm[@]}" $jvm -jar "$jar" --server.port=18080 "${bench_pg_args[@]}" \
    --management.tracing.sampling.probability="$sampling" $args > "$server_log" 2>&1 &
  server=$!
  for s in "${chosen[@]}"; do
    path=${s#*|}
    for _ in $(seq 1 120); do curl -sf -o /dev/null -H "$auth" "localhost:18080$path" && break; sleep 0.5; done
    kill -0 "$server" 2>/dev/null || { echo "bench: $name did not start, see $out/server-$name-$2.log" >&2; exit 1; }
    curl -sf -o /dev/null -H "$auth" "localhost:18080$path" || { echo "bench: $name does not answer $path" >&2; exit 1; }
    # a token without the scope must be refused by method security, or the stack under test is not the one meant
    local denied
    denied=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$out/tokens/token-no-scope")" "localhost:18080$path")
    [ "$denied" = 403 ] || { echo "bench: $name answers $denied to a token without the scope on $path (expected: 403)" >&2; exit 1; }
  done
}

# After a variant's run: its Reactor Netty threads and, with cosched, requests that continued off their loop
threads_of() {
  local rh offloop stalls
  rh=$({ cat /proc/"$server"/task/*/comm 2>/dev/null || true; } | grep -c '^reactor-http' || true)
  offloop=$(curl -s localhost:18080/actuator/cosched | grep -o '"offLoop":[0-9]*' | cut -d: -f2 || true)
  stalls=$(curl -s localhost:18080/actuator/cosched | grep -o '"stalls":[0-9]*' | head -n 1 | cut -d: -f2 || true)
  echo "$1,$2,$rh,${offloop:--},${stalls:--}" >> "$out/threads.csv"
}

declare -A rate_of=()
for r in ${BENCH_RATES-}; do rate_of[${r%%=*}]=${r#*=}; done

echo "round,variant,scenario,load,rps,p50_ms,p99_ms,errors,requests,cpu_us_per_req,cs_per_req,steal_pct,spans_dropped_per_req" > "$out/runs.csv"
echo "round,variant,reactor_http_threads,off_loop,stalls" > "$out/threads.csv"
echo "round,variant,scenario,load,rate,rps,p50_ms,p99_ms,failed,ok,cpu_us_per_req,cs_per_req,steal_pct" > "$out/rates.csv"
first_round=1
if [ ${#rate_of[@]} -eq 0 ] && [ -n "$fractions" ]; then first_round=0; fi
for round in $(seq "$first_round" "$rounds"); do
  # each round starts one variant further on (A B C, B C A, C A B): a noisy window of the host does not fall on the
  # same variant's turn every round
  order=()
  for ((k = 0; k < ${#variants[@]}; k++)); do order+=("${variants[$(((round + k) % ${#variants[@]}))]}"); done
  for v in "${order[@]}"; do
    name=${v%%|*}
    start_variant "$v" "$round"
    echo "round $round, $name: started"
    first=true
    for s in "${chosen[@]}"; do
      IFS='|' read -r scenario path <<< "$s"
      if $first; then w=$first_warm; first=false; else w=$warm; fi
      row=$(saturated "$path" "$w" "jfr-$name-$scenario-$round")
      cp "$out/last-wrk.txt" "$out/wrk-$name-$scenario-$round.txt"
      echo "$round,$name,$scenario,saturated,$row" | tee -a "$out/runs.csv"
      if [ "$round" -gt 0 ] && [ -n "${rate_of[$scenario]-}" ]; then
        for f in $fractions; do
          rate=$(awk -v r="${rate_of[$scenario]}" -v f="$f" 'BEGIN {printf "%d", r * f}')
          row=$(fixed_rate "$path" "$rate" "jfr-$name-$scenario-$f-$round")
          cp "$out/last-loadgen.json" "$out/loadgen-$name-$scenario-$f-$round.json"
          for x in latency.csv syscalls.txt perf.csv; do
            [ ! -f "$out/last-loadgen.$x" ] || mv "$out/last-loadgen.$x" "$out/loadgen-$name-$scenario-$f-$round.$x"
          done
          echo "$round,$name,$scenario,rate-$f,$row" | tee -a "$out/runs.csv"
          echo "$round,$name,$scenario,rate-$f,$rate,${row%,*}" >> "$out/rates.csv" # for RateSummary: no spans column
        done
      fi
    done
    threads_of "$round" "$name"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
  if [ "$round" = 0 ]; then
    # the fixed rates: the slowest variant's saturation rate in this round, per scenario
    for s in "${chosen[@]}"; do
      scenario=${s%%|*}
      rate_of[$scenario]=$(awk -F, -v s="$scenario" '$1 == 0 && $3 == s && $4 == "saturated" && (m == "" || $5 < m) {m = $5} END {printf "%d", m}' "$out/runs.csv")
      echo "$scenario: fixed rates are fractions ($fractions) of ${rate_of[$scenario]} requests/s" | tee -a "$out/machine.txt"
      [ "${rate_of[$scenario]}" -gt 0 ] || { echo "bench: the calibrating round measured no rate for $scenario (see runs.csv and the server logs)" >&2; exit 1; }
    done
  fi
done
rm -f "$out/last-wrk.txt" "$out/last-loadgen.json"

# medians per scenario, load and variant, over the rounds after the calibrating one (its saturation windows count too)
{
  echo "| scenario | load | variant | CPU us/req (range) | switches/req | req/s | p50 ms | p99 ms (range) | errors | spans dropped/req |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  tail -n +2 "$out/runs.csv" | sort -t, -k3,3 -k4,4 -k2,2 | awk -F, '
    function median(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    function flush() { if (key == "") return
      printf "| %s | %s | %s | %.1f (%.1f-%.1f) | %.2f | %.0f | %.1f | %.1f (%.1f-%.1f) | %d | %.2f |\n", sc, ld, va, median(cpu, n), clo, chi,
        median(cs, n), median(rps, n), median(p50, n), median(p99, n), plo, phi, err, median(dr, n)
      n = 0; err = 0 }
    { k = $3 "|" $4 "|" $2; if (k != key) { flush(); key = k; sc = $3; ld = $4; va = $2; clo = plo = 1e18; chi = phi = 0 }
      n++; cpu[n] = $10; cs[n] = $11; rps[n] = $5; p50[n] = $6; p99[n] = $7; err += $8; dr[n] = $13 + 0
      if ($10 < clo) clo = $10; if ($10 > chi) chi = $10; if ($7 < plo) plo = $7; if ($7 > phi) phi = $7 }
    END { flush() }'
  echo
  echo "Threads after each run (round, variant, reactor-http threads, requests continued off their loop, stalls):"
  tail -n +2 "$out/threads.csv" | sed 's/^/    /'
} | tee "$out/summary.md"
# the fixed rates again with cosched's ratios, and where each variant's CPU goes there, per group of threads
[ "$(wc -l < "$out/rates.csv")" -le 1 ] || "$JAVA" -cp "$bench_tools" io.cosched.bench.RateSummary "$out/rates.csv" | tee -a "$out/summary.md"
if [ "${BENCH_JFR:-0}" != 0 ] && [ ${#variants[@]} -ge 2 ]; then
  a=${variants[0]%%|*}; b=${variants[1]%%|*}
  for s in "${chosen[@]}"; do
    scenario=${s%%|*}
    ra=$(awk -F, -v v="$a" -v s="$scenario" '$2 == v && $3 == s && $4 == "saturated" {r = $5} END {print r}' "$out/runs.csv")
    rb=$(awk -F, -v v="$b" -v s="$scenario" '$2 == v && $3 == s && $4 == "saturated" {r = $5} END {print r}' "$out/runs.csv")
    fa=$(ls "$out"/jfr-"$a"-"$scenario"-*.jfr | tail -n 1); fb=$(ls "$out"/jfr-"$b"-"$scenario"-*.jfr | tail -n 1)
    for v in "$a|$fa" "$b|$fb"; do
      echo "== $scenario, ${v%%|*}: phases" ; "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile phases "${v#*|}"
    done > "$out/profile-$scenario.txt"
    { echo "== $scenario: which library runs, per request ($a against $b)"
      "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile owners "$fa" "$ra" "$fb" "$rb" 40
      # inclusive: a coroutine runs the handler inside the operator that hands it over, a virtual thread does not,
      # so the request chain's rows count the handler under cosched only; the owners above are the fair comparison
      echo "== $scenario: where $a spends more per request than $b (inclusive)"
      "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile diff "$fa" "$ra" "$fb" "$rb" 40; } >> "$out/profile-$scenario.txt"
    echo "profile of $scenario: $out/profile-$scenario.txt"
  done
fi
if [ "${BENCH_JFR:-0}" = rates ]; then
  # per variant: what a request costs more at each fixed rate than in the same JVM's saturation window (its last round)
  for s in "${chosen[@]}"; do
    scenario=${s%%|*}
    for v in "${variants[@]}"; do
      name=${v%%|*}
      # the saturated windows' recordings end in -<round>.jfr; the fixed rates' in -<fraction>-<round>.jfr
      fs=$(ls "$out"/jfr-"$name"-"$scenario"-[0-9]*.jfr 2>/dev/null | grep -E -- "-$scenario-[0-9]+\.jfr$" | sort -V | tail -n 1) || true
      [ -n "$fs" ] || continue
      round=${fs##*-}; round=${round%.jfr}
      rs=$(awk -F, -v v="$name" -v s="$scenario" -v r="$round" '$1 == r && $2 == v && $3 == s && $4 == "saturated" {print $5}' "$out/runs.csv")
      for f in $fractions; do
        fr="$out/jfr-$name-$scenario-$f-$round.jfr"
        [ -f "$fr" ] || continue
        rr=$(awk -F, -v v="$name" -v s="$scenario" -v r="$round" -v l="rate-$f" '$1 == r && $2 == v && $3 == s && $4 == l {print $5}' "$out/runs.csv")
        { echo "== $scenario, $name: which library runs, per request, at $f of saturation against saturated"
          "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile owners "$fr" "$rr" "$fs" "$rs" 40
          echo "== $scenario, $name: where a request at $f of saturation spends more than saturated (inclusive)"
          "$JAVA" -cp "$bench_tools" io.cosched.bench.JfrProfile diff "$fr" "$rr" "$fs" "$rs" 60; } >> "$out/profile-$scenario-rates.txt"
      done
    done
    [ ! -f "$out/profile-$scenario-rates.txt" ] || echo "profile of $scenario at fixed rates: $out/profile-$scenario-rates.txt"
  done
fi
echo "results in $out"
