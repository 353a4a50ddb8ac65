#!/usr/bin/env bash
# The database slows down under load: one sample service (Spring Data JPA on PostgreSQL, Spring Security, a pool of
# 10 connections) at a fixed rate of GETs and deposits (FleetLoad, straight to the instance, nothing retried), and
# for SLOW_FOR seconds every transaction first holds its connection in PostgreSQL for SLOW_MS (the sample's
# slow-database switch, pg_sleep): the pool then serves fewer requests a second than arrive. Per variant: what was
# answered 2xx during the slowdown and how fast (p50, p99 against the 15 s before it), what was refused and how fast
# it was told, and the server's CPU per request before and during it.
#
#   benchmarks/slow-database.sh                      every variant, SLOW_RUNS rounds (about 30 min)
#   SLOW_RATE=150 SLOW_MS=100 SLOW_FOR=30 SLOW_RUNS=3 SLOW_VARIANTS="adaptive fixed" benchmarks/slow-database.sh
#
# The defaults fit two shared cores, where the sample service serves 150 requests a second at about half of them and
# a transaction takes about 5 ms: held 100 ms more, the pool of 10 serves about 95 a second, and a third of what
# arrives cannot be served in time by anyone. (SLOW_MS=40, ten times slower, leaves the pool enough for 150 a
# second: a slower answer for everyone, no overload.)
#
# Variants (fresh JVM each, interleaved, each round starting one further on):
#   unlimited        cosched as it comes: no in-flight limit (every request is admitted and waits for the pool)
#   fixed            cosched.web.max-in-flight=100
#   adaptive         cosched.web.admission.limit=adaptive, min-limit 10 (the pool), ceiling 100
#   virtual-threads  Spring's virtual threads, cosched off (the reference: no admission of its own)
# Every variant: cosched.web.request-timeout=10s (timed-out requests answered 504), the client gives up after 10 s.
# Results: benchmarks/results/slow-database-<timestamp>/ (summary.md, FleetLoad's logs, the servers' logs).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh
bench_need_postgres

rate=${SLOW_RATE:-150}
slow_ms=${SLOW_MS:-100}
slow_for=${SLOW_FOR:-30}
runs=${SLOW_RUNS:-3}
warm=${SLOW_WARM:-45}
port=18090
service_app=sample-service/target/cosched-sample-service-0.1.0-SNAPSHOT.jar
if [ -z "${SLOW_NO_BUILD-}" ]; then
  rm -f "$service_app"
  ./mvnw -q -B -pl benchmarks,sample-service -am package -DskipTests
fi
if curl -s -o /dev/null "localhost:$port/"; then echo "slow-database: port $port is taken" >&2; exit 1; fi

common_args=(--server.port=$port --sample.password-encoding=noop --sample.slow-database-switch=true
  --spring.datasource.hikari.maximum-pool-size=10 --cosched.web.request-timeout=10s
  --cosched.web.request-timeout-status=504 --management.endpoints.web.exposure.include=health,cosched)
cosched_jvm="--add-opens java.base/java.lang=ALL-UNNAMED"
all_variants=(
  "unlimited|$cosched_jvm|"
  "fixed|$cosched_jvm|--cosched.web.max-in-flight=100"
  "adaptive|$cosched_jvm|--cosched.web.admission.limit=adaptive --cosched.web.admission.min-limit=10 --cosched.web.max-in-flight=100"
  "virtual-threads||--cosched.enabled=false"
)
picked=$(bench_pick SLOW_VARIANTS "${SLOW_VARIANTS-}" "${all_variants[@]}") || exit 1
mapfile -t variants <<< "$picked"

out="benchmarks/results/slow-database-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
  echo "command: benchmarks/slow-database.sh SLOW_RATE=$rate SLOW_MS=$slow_ms SLOW_FOR=$slow_for SLOW_RUNS=$runs SLOW_WARM=$warm${SLOW_VARIANTS:+ SLOW_VARIANTS=\"$SLOW_VARIANTS\"}"
} | tee "$out/machine.txt"

server=
cleanup() { [ -n "$server" ] && kill -9 "$server" 2>/dev/null; true; }
trap cleanup EXIT
now_ms() { date +%s%3N; }
slow() { curl -sf -X PUT -u admin:secret "localhost:$port/api/admin/slow-database?ms=$1" > /dev/null; }
load() { # SECONDS EVENTS NAME: FleetLoad in the background ($load_pid)
  "$JAVA" -cp "$bench_tools" io.cosched.bench.FleetLoad --url="http://127.0.0.1:$port" --rate="$rate" --seconds="$1" \
    --post-share=0.2 --user=admin:secret --events="$2" --log="$3.csv" > "$3.json" 2> "$3.err" &
  load_pid=$!
}
cpu_ms() { echo $(( $(bench_cpu_ticks "$server") * 1000 / $(getconf CLK_TCK) )); }

echo "| variant | run | sent | 2xx | failed by | p50 / p99 2xx ms (before) | p50 / p99 failed ms | CPU us/req before, during |" > "$out/summary.md"
echo "|---|---|---|---|---|---|---|---|" >> "$out/summary.md"
n=${#variants[@]}
for run in $(seq 1 "$runs"); do
  for k in $(seq 0 $((n - 1))); do
    v=${variants[$(( (k + run - 1) % n ))]}
    IFS='|' read -r name jvm args <<< "$v"
    echo "== $name, run $run"
    log="$out/server-$name-$run.log"
    # shellcheck disable=SC2086
    "$JAVA" -Xms512m -Xmx512m -XX:+UseG1GC --enable-native-access=ALL-UNNAMED $jvm -jar "$service_app" \
      "${bench_pg_args[@]}" "${common_args[@]}" $args > "$log" 2>&1 &
    server=$!
    for _ in $(seq 1 240); do curl -sf -o /dev/null "localhost:$port/actuator/health" && break; sleep 0.25; done
    curl -sf -o /dev/null "localhost:$port/actuator/health" || { echo "slow-database: $name did not start" >&2; exit 1; }
    slow 0
    events="$out/warm-$name-$run.events"; : > "$events"
    load "$warm" "$events" "$out/warm-$name-$run"; wait "$load_pid" || true
    events="$out/$name-$run.events"; : > "$events"
    measure=$((15 + slow_for + 30))
    load "$measure" "$events" "$out/load-$name-$run"
    sleep 5; c0=$(cpu_ms); t0=$(now_ms)
    sleep 10; c1=$(cpu_ms); t1=$(now_ms)
    slow "$slow_ms"; echo "$(now_ms) begin slow" >> "$events"
    sleep "$slow_for"
    echo "$(now_ms) end slow" >> "$events"; c2=$(cpu_ms); t2=$(now_ms)
    for _ in 1 2 3 4 5 6 7 8 9 10; do slow 0 && break; sleep 0.5; done
    wait "$load_pid" || true
    curl -s "localhost:$port/actuator/cosched" > "$out/endpoint-$name-$run.json" || true
    kill "$server"; wait "$server" 2>/dev/null || true; server=
    # CPU per request: the server's CPU time over a window divided by the requests due in it (FleetLoad's rate)
    before_us=$(awk -v c="$((c1 - c0))" -v t="$((t1 - t0))" -v r="$rate" 'BEGIN {printf "%.0f", c * 1000 / (t / 1000 * r)}')
    during_us=$(awk -v c="$((c2 - c1))" -v t="$((t2 - t1))" -v r="$rate" 'BEGIN {printf "%.0f", c * 1000 / (t / 1000 * r)}')
    line=$(grep '"event":"slow"' "$out/load-$name-$run.json" || true)
    if [ -z "$line" ]; then echo "slow-database: no summary for $name run $run (see $out/load-$name-$run.err)" >&2; continue; fi
    python3 - "$name" "$run" "$line" "$before_us" "$during_us" >> "$out/summary.md" <<'EOF'
import json, sys
name, run, line, before, during = sys.argv[1:6]
s = json.loads(line)
failed = ", ".join(f"{k} {v}" for k, v in s["failedBy"].items()) or "-"
print(f"| {name} | {run} | {s['sent']} | {s['ok']} | {failed} | {s['p50Ms']:.0f} / {s['p99Ms']:.0f} "
      f"({s['p50BeforeMs']:.0f} / {s['p99BeforeMs']:.0f}) | {s['failedP50Ms']:.1f} / {s['failedP99Ms']:.1f} | {before}, {during} |")
EOF
    tail -n 1 "$out/summary.md"
  done
done
tar czf "$out/logs.tgz" -C "$out" $(cd "$out" && ls | grep -E '\.(log|csv|err)$') && (cd "$out" && rm -f -- *.log *.csv *.err)
echo "results: $out/summary.md"
