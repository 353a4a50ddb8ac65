#!/usr/bin/env bash
# The HTTP benchmark: cosched against the stacks users would pick instead, side by side in one run.
#
#   benchmarks/run.sh            full: 3 rounds, per scenario 15 s warm-up (30 s for the first after a
#                                start) + 15 s measured (about 110 min with all eleven variants)
#   benchmarks/run.sh --quick    1 round, 4 s (8 s) + 4 s (about 13 min), for a rough look
#   BENCH_VARIANTS="cosched reactive" BENCH_SCENARIOS="postgres" benchmarks/run.sh   a subset
#   BENCH_FRACTIONS="0.3 0.6" ...    also fixed rates: after each saturation window, LoadGen at these fractions of
#                                the slowest chosen variant's saturation rate for the scenario (measured in a
#                                calibrating round 0 first, kept apart in calibration.csv; BENCH_RATES="hello=9000
#                                postgres=3000" gives the rates instead), BENCH_RATE_SECONDS (15) counted after 5 s
#                                not counted, latency counted from when each request was due; rates.csv and a
#                                second table in summary.md (the headline of docs/benchmarks.md)
#
# Variants (same endpoints): cosched (carrier mode, one loop), cosched on two loops, cosched without
# the add-opens flag (fallback), pure reactive WebFlux (WebClient, R2DBC), WebFlux + boundedElastic,
# WebFlux + Spring's virtual threads, Spring MVC on Tomcat + virtual threads, and the peers outside
# Spring: Helidon SE 4 (virtual thread per connection, Helidon's WebClient) and Micronaut's loom
# carrier (virtual threads on its Netty loop, Micronaut's HttpClient). Every blocking Spring variant
# calls the downstream stub with the RestClient from Spring Boot's builder (whatever request factory
# its stack gives it) and, in the downstream-jdk scenario, with the JDK's HTTP client; in the fanout scenario
# (GET /fanout) one request makes three such calls at once and answers when all three are back: cosched and
# its fallback with cosched's TaskScope, Spring's virtual threads with three CompletableFutures on a
# virtual-thread-per-task executor (virtual-threads-sts: with the JDK 25's preview StructuredTaskScope, for the
# build on JDK 25 only), the reactive variant with Mono.zip of three WebClient calls; it reads the
# database with JdbcClient on Spring Boot's HikariCP DataSource: H2 in memory, or a real PostgreSQL
# (the postgres scenario) or MariaDB (the mariadb scenario with MariaDB Connector/J, for every variant
# but cosched-actuator-noobs, the reactive one with MariaDB's R2DBC driver; the mysql
# scenario with MySQL Connector/J, the WebFlux application's blocking variants only) on loopback, and
# Redis (the redis scenario: a GET with Boot's StringRedisTemplate over Lettuce, the reactive variant with
# Lettuce's reactive API, Helidon with Lettuce's blocking API, Micronaut with Micronaut Redis's), started
# by this script from Debian's packages.
#
# Each variant is its own JVM with the same flags and heap, started fresh every round (once per
# database); variants are interleaved, each round starting one further on (A B C, B C A, C A B ...),
# and medians reported, because this machine is noisy. The server runs on core 0, wrk, the stub and PostgreSQL's clients on core 1
# (taskset), so they do not take the server's CPU. Besides req/s and latency, every run records the
# server JVM's context switches per request (summed over /proc/<pid>/task/*/status around the
# measured window): whether a request's wake-ups stayed on its thread. The first figure of every table
# and chart is the server's CPU time per request (utime + stime of the process over the window's
# requests): it moves far less than req/s between windows of one binary on a shared machine. The
# host's steal time is read per window, and a window with more than 5 % steal is measured again.
# The JIT's compiler threads' share of that CPU is recorded too: wrk's connections closing and opening
# again at the start of a window send Netty and Reactor down paths the warm-up never took, and the JIT
# deoptimizes and recompiles them during the window, a few us per request that belong to no variant's
# steady state (docs/benchmark-results.md, "The JIT in the measured window"). For the
# cosched variants, the loops' own count of who resumed the coroutines (GET /wakeups around the window):
# local wake-ups per request, and remote ones (another thread asked). Results:
# benchmarks/results/http-<timestamp>/ (runs.csv, wakeups.csv, summary.md, *.png).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh

if $quick; then rounds=1; warm=4; measure=4; else rounds=3; warm=15; measure=15; fi
# for trying the harness itself: BENCH_ROUNDS, BENCH_WARM, BENCH_MEASURE (seconds) override the above
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
# BENCH_CONTINUOUS=1: warm-up and window in one wrk run, so that no connection is closed and opened again
# at the window's start (the JIT recompiles what a reconnection deoptimizes, a few us per request that
# belong to no steady state: docs/benchmark-results.md, "The JIT in the measured window"). The window's requests
# are counted from the bytes the server received (bench_received_bytes); its latency percentiles are
# wrk's over the whole run, warm-up included; a window with steal is recorded, not measured again.
continuous=false
if [ "${BENCH_CONTINUOUS:-0}" = 1 ]; then continuous=true; fi
first_warm=$((warm * 2)) # a JVM just started is still compiling: the first scenario after a start warms longer
fractions=${BENCH_FRACTIONS-}
rate_seconds=${BENCH_RATE_SECONDS:-15}
declare -A rate_of=()
for r in ${BENCH_RATES-}; do rate_of[${r%%=*}]=${r#*=}; done
first_round=1
if [ -n "$fractions" ] && [ ${#rate_of[@]} -eq 0 ]; then first_round=0; fi

. benchmarks/http-common.sh
bench_need_wrk
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# name | path | connections | database
scenarios=(
  "hello|/hello|100|h2"
  "hello-mono|/hello-mono|100|h2"
  "downstream-200|/downstream|200|h2"
  "downstream-2000|/downstream|2000|h2"
  "downstream-jdk-200|/downstream-jdk|200|h2"
  "downstream-webclient-200|/downstream-webclient|200|h2"
  "fanout|/fanout|100|h2"
  "jdbc|/jdbc?id=7|100|h2"
  "postgres|/jdbc?id=7|100|pg"
  "mariadb|/jdbc?id=7|100|my"
  "mysql|/jdbc?id=7|100|mx"
  "redis|/redis|100|rd"
)

# Whether variant $1 runs scenario $2: the reactive stack has neither a JDK-client endpoint nor an H2
# driver; the two-loop cosched checks the context switches where the I/O matters.
bench_runs() {
  case "$1:$2" in
    # the blocking WebClient over Reactor Netty's client (cosched.web-client.loop-client=false), as before
    # the loop connector
    cosched-reactor-client:downstream-webclient-200) ;;
    cosched-reactor-client:*) return 1 ;;
    reactive:jdbc | reactive:downstream-jdk-200) return 1 ;;
    # three downstream calls at once: each stack's own way to fork and join (TaskScope, CompletableFuture, Mono.zip)
    cosched:fanout | cosched-fallback:fanout | virtual-threads:fanout | reactive:fanout | mvc-virtual-threads:fanout) ;;
    cosched-baseline:fanout) ;; # this build against another (BENCH_BASELINE_APP): the fan-out is TaskScope's hot path
    virtual-threads-sts:fanout) ;; # the fan-out with the JDK's preview StructuredTaskScope; nothing else differs
    virtual-threads-sts:*) return 1 ;;
    *:fanout) return 1 ;;
    # Spring's virtual threads with Actuator's defaults, the peer of cosched-actuator
    virtual-threads-actuator:hello | virtual-threads-actuator:postgres | virtual-threads-actuator:redis) ;;
    virtual-threads-actuator:mariadb | virtual-threads-actuator:downstream-webclient-200) ;;
    virtual-threads-actuator:*) return 1 ;;
    # MariaDB, through MariaDB Connector/J and MySQL Connector/J: the WebFlux application's blocking
    # variants (it has both drivers), MariaDB's driver with Actuator on, the blocking peers with MariaDB's
    # driver, and the reactive variant with MariaDB's R2DBC driver
    cosched:mariadb | cosched-2loops:mariadb | cosched-fallback:mariadb | elastic:mariadb | virtual-threads:mariadb) ;;
    cosched-actuator:mariadb | mvc-virtual-threads:mariadb | helidon:mariadb | micronaut-loom:mariadb | reactive:mariadb) ;;
    cosched:mysql | cosched-2loops:mysql | cosched-fallback:mysql | elastic:mysql | virtual-threads:mysql) ;;
    *:mariadb | *:mysql) return 1 ;;
    # Redis through Spring Data Redis and Lettuce: every Spring variant (the reactive one with Lettuce's
    # reactive API), cosched with Actuator too; Helidon with Lettuce's blocking API, Micronaut with Micronaut Redis
    cosched-actuator-noobs:redis) return 1 ;;
    *:redis) ;;
    # WebClient used blocking: the WebFlux application's blocking handlers, on cosched or Spring's virtual threads,
    # with Actuator's defaults too
    cosched:downstream-webclient-200 | cosched-2loops:downstream-webclient-200 | virtual-threads:downstream-webclient-200) ;;
    cosched-actuator:downstream-webclient-200) ;;
    *:downstream-webclient-200) return 1 ;;
    cosched:hello-mono | cosched-actuator:hello-mono | virtual-threads:hello-mono) ;; # a Mono handler beside the blocking one
    *:hello-mono) return 1 ;;
    cosched-2loops:downstream-200 | cosched-2loops:postgres) ;;
    cosched-2loops:*) return 1 ;;
    cosched-actuator*:hello | cosched-actuator*:downstream-200 | cosched-actuator*:postgres) ;;
    cosched-actuator*:*) return 1 ;; # what observation costs: the cheapest request, and two with I/O
  esac
  [ -z "${BENCH_SCENARIOS-}" ] || [[ " $BENCH_SCENARIOS " == *" $2 "* ]]
}

picked=$(bench_pick BENCH_VARIANTS "${BENCH_VARIANTS-}" "${bench_variants[@]}") || exit 1
variants=()
while IFS= read -r v; do variants+=("${v%%|*}"); done <<< "$picked"
needs_pg=false
needs_my=false
needs_rd=false
for v in "${variants[@]}"; do
  bench_runs "$v" postgres && needs_pg=true
  bench_runs "$v" redis && needs_rd=true
  if bench_runs "$v" mariadb || bench_runs "$v" mysql; then needs_my=true; fi
done
if $needs_pg; then bench_need_postgres; fi
if $needs_my; then bench_need_mariadb; fi
if $needs_rd; then bench_need_redis; fi

bench_build
out="benchmarks/results/http-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "wrk: $(wrk -v 2>&1 | head -n 1)"
  $needs_pg && echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
  $needs_my && echo "mariadb: $(mariadb --version 2>/dev/null | head -n 1), $COSCHED_TEST_MARIADB_URL"
  $needs_rd && echo "redis: $(redis-server --version 2>/dev/null | awk '{print $3}'), 127.0.0.1:$COSCHED_REDIS_PORT"
  echo "command: benchmarks/run.sh $*$($quick && echo --quick)${BENCH_VARIANTS:+ BENCH_VARIANTS=$BENCH_VARIANTS}${BENCH_SCENARIOS:+ BENCH_SCENARIOS=$BENCH_SCENARIOS}$($continuous && echo " BENCH_CONTINUOUS=1")${fractions:+ BENCH_FRACTIONS='$fractions'}${BENCH_RATES:+ BENCH_RATES='$BENCH_RATES'}"
  echo "pinning: server on core $server_core, wrk, LoadGen, the downstream stub and the databases on core $load_core; $bench_loops event loop(s) per server unless the variant says otherwise"
  # DAMON's kernel thread samples memory every 500 ms; under load its walk stalls a core for tens of ms (issue 49)
  if [ "$(cat /sys/kernel/mm/damon/admin/kdamonds/0/state 2>/dev/null)" = on ]; then echo "host: DAMON on (kdamond, sampling every $(( $(cat /sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us 2>/dev/null || echo 0) / 1000 )) ms)"; fi
  echo "timing: $rounds rounds; per scenario ${warm}s warm-up (${first_warm}s for the first after a start) then ${measure}s measured$($continuous && echo ", both in one wrk run (BENCH_CONTINUOUS=1)")"
  [ -z "$fractions" ] || echo "fixed rates: ${fractions// /, } of the slowest variant's saturation rate, ${rate_seconds}s counted after 5 s not counted$([ "$first_round" = 0 ] && echo ", the rates from a calibrating round 0")"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "bench: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
"${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 20 1 > "$out/stub.log" 2>&1 &
stub=$!
trap 'kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

echo "round,variant,scenario,connections,rps,p50_ms,p90_ms,p99_ms,errors,cpu_s,rss_peak_mb,requests,cs_per_req,cpu_us_per_req,steal_pct,jit_us_per_req" > "$out/runs.csv"
echo "round,variant,scenario,requests,local_wakeups_per_req,remote_wakeups_per_req" > "$out/wakeups.csv"
[ "$first_round" = 1 ] || head -n 1 "$out/runs.csv" > "$out/calibration.csv"
[ -z "$fractions" ] || echo "round,variant,scenario,load,rate,rps,p50_ms,p99_ms,failed,ok,cpu_us_per_req,cs_per_req,steal_pct" > "$out/rates.csv"
clk=$(getconf CLK_TCK)
ms() { # wrk latency like 1.23ms / 456.00us / 2.10s -> milliseconds
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}

# The server's counters at both ends of a measured window: CPU, the JIT's part, context switches, and
# the host's steal time over the window in percent ($steal).
window_open() {
  cpu0=$(bench_cpu_ticks "$server"); jit0=$(bench_jit_ticks "$server"); cs0=$(bench_ctxt "$server"); st0=$(bench_steal_ticks); tt0=$(bench_total_ticks)
}
window_close() {
  cpu1=$(bench_cpu_ticks "$server"); jit1=$(bench_jit_ticks "$server"); cs1=$(bench_ctxt "$server"); st1=$(bench_steal_ticks); tt1=$(bench_total_ticks)
  steal=$(awk -v a="$st0" -v b="$st1" -v c="$tt0" -v d="$tt1" 'BEGIN {printf "%.1f", (d > c) ? 100 * (b - a) / (d - c) : 0}')
}

for round in $(seq "$first_round" "$rounds"); do
  # each round starts one variant further on (A B C, B C A, C A B): a variant measured right after
  # another on the same database ran about a tenth cheaper on postgres, whichever build it was
  # (docs/benchmark-results.md), so no variant is always first
  shift_by=$(( (round + ${#variants[@]} - 1) % ${#variants[@]} ))
  # the calibrating round's saturation figures go apart: they only set the fixed rates
  if [ "$round" = 0 ]; then runs=$out/calibration.csv; else runs=$out/runs.csv; fi
  order=("${variants[@]:shift_by}" "${variants[@]:0:shift_by}")
  for name in "${order[@]}"; do
    for db in h2 pg my mx rd; do
      mine=()
      for s in "${scenarios[@]}"; do
        IFS='|' read -r scenario _ _ sdb <<< "$s"
        if [ "$sdb" = "$db" ] && bench_runs "$name" "$scenario"; then mine+=("$s"); fi
      done
      [ ${#mine[@]} -gt 0 ] || continue
      case $db in
        pg) db_args=("${bench_pg_args[@]}") ;;
        my) db_args=("${bench_my_args[@]}") ;;
        mx) db_args=("${bench_mx_args[@]}") ;;
        rd) db_args=("${bench_rd_args[@]}") ;;
        *) db_args=() ;;
      esac
      bench_start "$name" "$out/server-$name-$db-$round.log" "${db_args[@]}"
      echo "round $round, $name on $db: $(curl -s localhost:18080/thread)"
      first=true
      for s in "${mine[@]}"; do
        IFS='|' read -r scenario path conns _ <<< "$s"
        url="http://127.0.0.1:18080$path"
        if $first; then w=$first_warm; first=false; else w=$warm; fi
        if $continuous; then
          # the request as wrk sends it: "GET <path> HTTP/1.1", "Host: 127.0.0.1:18080", an empty line
          request_bytes=$(( ${#path} + 40 ))
          "${on_load[@]}" wrk -t1 -c"$conns" -d"$((w + measure + 2))s" --timeout 10s --latency "$url" > "$out/wrk-running.txt" 2>&1 &
          load=$!
          # cosched's wake-up counts are read 15 s before the window: the one request to /wakeups, on a new
          # connection and another path, makes the JIT deoptimize and recompile the hot request path (about
          # 2 s of compiling on the server's core), which must not land in the window
          lead=$(( w > 30 ? 15 : w / 2 ))
          sleep "$((w - lead))"
          rxw=$(bench_received_bytes)
          wk0=$(curl -s -f localhost:18080/wakeups || true)
          sleep "$lead"
          rx0=$(bench_received_bytes)
          window_open
          sleep "$measure"
          window_close
          rx1=$(bench_received_bytes)
          wk1=$(curl -s -f localhost:18080/wakeups || true)
          wait "$load" || true
          res=$(cat "$out/wrk-running.txt"); rm -f "$out/wrk-running.txt"
          requests=$(( (rx1 - rx0) / request_bytes ))
          wk_requests=$(( (rx1 - rxw) / request_bytes ))
          rps=$(awk -v n="$requests" -v m="$measure" 'BEGIN {printf "%.2f", n / m}')
          whole=$(awk '/requests in/ {print $1}' <<< "$res")
          # the bytes count what the server received; wrk counts answers over the whole run: a wrk connection
          # closed and opened again within the window would take its bytes out of the count
          if [ $(( (rx1 - rx0) % request_bytes )) -ne 0 ] || [ "${whole:-0}" -lt "$requests" ]; then
            echo "  ($name $scenario: the received bytes ($((rx1 - rx0))) are not whole requests of $request_bytes bytes, or more than wrk's $whole answers: the window's count is off)"
          fi
        else
          "${on_load[@]}" wrk -t1 -c"$conns" -d"${w}s" --timeout 10s "$url" > /dev/null 2>&1 || true
          for attempt in 1 2; do
            wk0=$(curl -s -f localhost:18080/wakeups || true)
            window_open
            res=$("${on_load[@]}" wrk -t1 -c"$conns" -d"${measure}s" --timeout 10s --latency "$url" 2>&1 || true)
            window_close
            wk1=$(curl -s -f localhost:18080/wakeups || true)
            if [ "$attempt" = 1 ] && awk -v s="$steal" 'BEGIN {exit !(s > 5)}'; then
              echo "  ($name $scenario: ${steal}% steal, window measured again)"
              continue
            fi
            break
          done
          rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
          requests=$(awk '/requests in/ {print $1}' <<< "$res")
          wk_requests=$requests
        fi
        p50=$(ms "$(awk '$1 == "50%" {print $2}' <<< "$res")")
        p90=$(ms "$(awk '$1 == "90%" {print $2}' <<< "$res")")
        p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
        errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
        rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status")
        cpu=$(awk -v a="$cpu0" -v b="$cpu1" -v t="$clk" 'BEGIN {printf "%.2f", (b - a) / t}')
        cs=$(awk -v a="$cs0" -v b="$cs1" -v n="${requests:-0}" 'BEGIN {if (n > 0) printf "%.3f", (b - a) / n}')
        cpu_us=$(awk -v a="$cpu0" -v b="$cpu1" -v t="$clk" -v n="${requests:-0}" 'BEGIN {if (n > 0) printf "%.1f", (b - a) / t * 1e6 / n}')
        jit_us=$(awk -v a="$jit0" -v b="$jit1" -v t="$clk" -v n="${requests:-0}" 'BEGIN {if (n > 0) printf "%.1f", (b - a) / t * 1e6 / n}')
        echo "$round,$name,$scenario,$conns,$rps,$p50,$p90,$p99,$errors,$cpu,$rss,$requests,$cs,$cpu_us,$steal,$jit_us" | tee -a "$runs"
        echo "$res" > "$out/wrk-$name-$scenario-$round.txt"
        if [ "$round" -gt 0 ] && [ -n "${rate_of[$scenario]-}" ]; then
          for f in $fractions; do
            rate=$(awk -v r="${rate_of[$scenario]}" -v f="$f" 'BEGIN {printf "%d", r * f}')
            row=$(bench_fixed_rate "$path" "$rate" "$rate_seconds" "$conns" "$out/loadgen-$name-$scenario-$f-$round.json")
            echo "$round,$name,$scenario,rate-$f,$rate,$row" | tee -a "$out/rates.csv"
          done
        fi
        if [ "$round" -gt 0 ] && [ -n "$wk0" ] && [ -n "$wk1" ] && [ "${wk_requests:-0}" -gt 0 ] 2>/dev/null; then
          # cosched's own count of who resumed the coroutines: its loops (local) or other threads (remote)
          awk -v r="$round" -v v="$name" -v s="$scenario" -v a="$wk0" -v b="$wk1" -v n="$wk_requests" 'BEGIN {
            split(a, x, " "); split(b, y, " ");
            printf "%s,%s,%s,%d,%.3f,%.4f\n", r, v, s, n, (y[1] - x[1]) / n, (y[2] - x[2]) / n }' >> "$out/wakeups.csv"
          echo "  wake-ups per request (local, remote): $(tail -n 1 "$out/wakeups.csv" | cut -d, -f5,6)"
        fi
      done
      kill "$server"; wait "$server" 2>/dev/null || true
      server=
    done
  done
  if [ "$round" = 0 ]; then
    # the fixed rates: per scenario, the slowest chosen variant's saturation rate in the calibrating round
    for s in "${scenarios[@]}"; do
      scenario=${s%%|*}
      r=$(awk -F, -v s="$scenario" 'NR > 1 && $3 == s && (m == "" || $5 < m) {m = $5} END {if (m != "") printf "%d", m}' "$out/calibration.csv")
      [ -n "$r" ] || continue
      [ "$r" -gt 0 ] || { echo "bench: the calibrating round measured no rate for $scenario (see calibration.csv and the server logs)" >&2; exit 1; }
      rate_of[$scenario]=$r
      echo "$scenario: fixed rates are fractions ($fractions) of $r requests/s" | tee -a "$out/machine.txt"
    done
  fi
done

"$JAVA" -cp "$bench_tools" io.cosched.bench.HttpSummary "$out" | tee "$out/summary.md"
[ -z "$fractions" ] || "$JAVA" -cp "$bench_tools" io.cosched.bench.RateSummary "$out/rates.csv" | tee -a "$out/summary.md"
echo "results in $out"
