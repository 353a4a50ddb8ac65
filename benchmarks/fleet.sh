#!/usr/bin/env bash
# The fleet harness: three instances of the sample service (Spring Data JPA on PostgreSQL, Spring Security,
# Actuator) behind HAProxy (docs/haproxy/haproxy.cfg, Debian's package), a fixed rate of GETs and POSTs
# through the balancer (FleetLoad: nothing retried by the client), and events under that load:
#
#   rolling    each instance in turn: SIGTERM, wait for it to exit, start it again, wait until HAProxy has it
#              back UP, and FLEET_SETTLE seconds more (20: HAProxy's slowstart), then the next (what a
#              Deployment's rolling update with minReadySeconds does)
#   kill       SIGKILL one instance, start it again at once (what a crashed pod's restart looks like)
#   overload   one instance alone gets a burst of slow requests straight to its port (a slow query each,
#              more than its in-flight limit holds) for 15 s: it sheds, leaves readiness, comes back
#   postgres   PostgreSQL restarted under the fleet
#
#   benchmarks/fleet.sh                          every variant and scenario once (about 20 min)
#   FLEET_RUNS=5 FLEET_SCENARIOS=rolling FLEET_VARIANTS=cosched benchmarks/fleet.sh
#   FLEET_RATE=100 (requests/s through the balancer)  FLEET_POST_SHARE=0.2 (deposits, as the admin user)
#
# Variants (the same jar, three fresh JVMs each):
#   cosched             cosched with cosched.shutdown.delay=3s (HAProxy needs 2 failed checks a second apart to
#                       take an instance out) and the shedding readiness contributor
#   cosched-no-delay    the same with cosched.shutdown.delay=0 (what a deployment without it gets)
#   cosched-adaptive    cosched with the adaptive limit (floor 12 for the pool of 10, ceiling max-in-flight=100)
#   virtual-threads     Spring's virtual threads, cosched off (the reference: Spring Boot's graceful shutdown)
# Per event: sent, 2xx, failed by status and by client error, p99 during it against the 15 s before it, and how
# long until HAProxy had the instance back. Results: benchmarks/results/fleet-<timestamp>/ (summary.md, the
# FleetLoad logs, the servers' and HAProxy's logs).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh
bench_need_postgres
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

haproxy_bin=$(command -v haproxy || echo /usr/sbin/haproxy)
if [ ! -x "$haproxy_bin" ]; then
  . .ci/postgres.sh # ci_apt_install
  . .ci/haproxy.sh
  ci_install_haproxy || { echo "fleet: no HAProxy (see above)" >&2; exit 1; }
  haproxy_bin=$COSCHED_TEST_HAPROXY
fi
restart_postgres=${COSCHED_TEST_POSTGRES_RESTART:-}
if [ -z "$restart_postgres" ]; then
  version="$(ls /usr/lib/postgresql | sort -n | tail -n 1)"
  restart_postgres="pg_ctlcluster $version main restart"
fi

rate=${FLEET_RATE:-100}
runs=${FLEET_RUNS:-1}
post_share=${FLEET_POST_SHARE:-0.2}
settle=${FLEET_SETTLE:-20}
service_app=sample-service/target/cosched-sample-service-0.1.0-SNAPSHOT.jar
if [ -z "${FLEET_NO_BUILD-}" ]; then
  rm -f "$service_app"
  ./mvnw -q -B -pl benchmarks,sample-service -am package -DskipTests
fi

readiness_cosched="management.endpoint.health.group.readiness.include=readinessState,cosched,coschedShedding"
common_args=(--management.endpoint.health.probes.enabled=true --management.endpoints.web.exposure.include=health
  --sample.password-encoding=noop --spring.datasource.hikari.maximum-pool-size=10 --cosched.web.request-timeout=10s
  --server.shutdown=graceful --spring.lifecycle.timeout-per-shutdown-phase=20s --logging.level.io.cosched=INFO)
cosched_args=(--$readiness_cosched --cosched.web.request-timeout-status=504 --cosched.web.max-in-flight=100 --cosched.web.readiness.enabled=true
  --cosched.web.readiness.hold=1s)
# name | extra JVM flags | application arguments
all_variants=(
  "cosched|--add-opens java.base/java.lang=ALL-UNNAMED|${cosched_args[*]} --cosched.shutdown.delay=3s"
  "cosched-no-delay|--add-opens java.base/java.lang=ALL-UNNAMED|${cosched_args[*]} --cosched.shutdown.delay=0s"
  "cosched-adaptive|--add-opens java.base/java.lang=ALL-UNNAMED|${cosched_args[*]} --cosched.shutdown.delay=3s --cosched.web.admission.limit=adaptive --cosched.web.admission.min-limit=12"
  "virtual-threads||--cosched.enabled=false --management.endpoint.health.group.readiness.include=readinessState"
)
picked=$(bench_pick FLEET_VARIANTS "${FLEET_VARIANTS-}" "${all_variants[@]}") || exit 1
mapfile -t variants <<< "$picked"
all_scenarios=("rolling|" "kill|" "overload|" "postgres|")
picked=$(bench_pick FLEET_SCENARIOS "${FLEET_SCENARIOS-}" "${all_scenarios[@]}") || exit 1
mapfile -t scenarios <<< "$picked"

out="benchmarks/results/fleet-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out_abs=$(cd "$out" && pwd)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "haproxy: $("$haproxy_bin" -v | head -n 1)"
  echo "postgresql: $(psql --version 2>/dev/null | head -n 1), $COSCHED_TEST_POSTGRES_URL"
  echo "command: benchmarks/fleet.sh FLEET_RATE=$rate FLEET_RUNS=$runs FLEET_POST_SHARE=$post_share FLEET_SETTLE=$settle${FLEET_VARIANTS:+ FLEET_VARIANTS=$FLEET_VARIANTS}${FLEET_SCENARIOS:+ FLEET_SCENARIOS=$FLEET_SCENARIOS}"
} | tee "$out/machine.txt"

export FLEET_DIR=$out_abs FLEET_PORT=18180 FLEET_PORT1=18181 FLEET_PORT2=18182 FLEET_PORT3=18183
ports=("$FLEET_PORT1" "$FLEET_PORT2" "$FLEET_PORT3")
for p in "$FLEET_PORT" "${ports[@]}"; do
  if curl -s -o /dev/null "localhost:$p/"; then echo "fleet: port $p is taken; stop what listens there first" >&2; exit 1; fi
done
declare -a pids=("" "" "")
haproxy_pid=
cleanup() {
  for p in "${pids[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  [ -n "$haproxy_pid" ] && kill "$haproxy_pid" 2>/dev/null
  true
}
trap cleanup EXIT
auth="Authorization: Basic $(printf 'user:secret' | base64)"
now_ms() { date +%s%3N; }

# start_instance I VARIANT-JVM VARIANT-ARGS LOG [NICE]: starts instance I (0-2) and records its pid. Under load it
# starts at nice 10, so that its JIT and start-up do not take the CPU of the instances serving (on a fleet they
# have machines of their own; here three JVMs share two cores); serving() puts it back at 0 once it is UP.
start_instance() {
  local i=$1 jvm=$2 args=$3 log=$4 niceness=${5:-0}
  # shellcheck disable=SC2086
  nice -n "$niceness" "$JAVA" -Xms256m -Xmx512m -XX:+UseG1GC --enable-native-access=ALL-UNNAMED $jvm -jar "$service_app" \
    --server.port="${ports[$i]}" "${bench_pg_args[@]}" "${common_args[@]}" $args >> "$log" 2>&1 &
  pids[i]=$!
}
wait_instance_ready() {
  local i=$1
  for _ in $(seq 1 240); do
    curl -sf -o /dev/null "localhost:${ports[$i]}/actuator/health/readiness" && return 0
    kill -0 "${pids[$i]}" 2>/dev/null || { echo "fleet: instance $((i + 1)) exited" >&2; return 1; }
    sleep 0.25
  done
  echo "fleet: instance $((i + 1)) not ready after 60 s" >&2; return 1
}
# the state HAProxy gives server appN (UP, DOWN, ...), from its stats socket
haproxy_state() {
  echo "show stat" | socat stdio "unix-connect:$FLEET_DIR/haproxy.sock" 2>/dev/null \
    | awk -F, -v s="app$1" '$1 == "service" && $2 == s {print $18}'
}
haproxy_sessions() {
  echo "show stat" | socat stdio "unix-connect:$FLEET_DIR/haproxy.sock" 2>/dev/null \
    | awk -F, -v s="app$1" '$1 == "service" && $2 == s {print $5}'
}
# wait_haproxy_left N: until HAProxy has appN out of rotation (the instance's readiness refused, or its port did)
wait_haproxy_left() {
  for _ in $(seq 1 300); do
    [ "$(haproxy_state "$1")" != UP ] && return 0
    sleep 0.1
  done
  echo "fleet: HAProxy still has app$1 UP 30 s after its stop began" >&2; return 1
}
# watch_state N FILE: appends "epoch-ms STATE" to FILE each time HAProxy's state of appN changes (in the background)
watch_state() {
  local last="" st
  while true; do
    st=$(haproxy_state "$1")
    if [ -n "$st" ] && [ "$st" != "$last" ]; then echo "$(now_ms) $st" >> "$2"; last=$st; fi
    sleep 0.1
  done
}
serving() { renice -n 0 -p "${pids[$1]}" > /dev/null; }
wait_haproxy_up() {
  local n=$1 limit=${2:-120}
  for _ in $(seq 1 $((limit * 10))); do
    [ "$(haproxy_state "$n")" = UP ] && return 0
    sleep 0.1
  done
  echo "fleet: HAProxy does not have app$n UP after ${limit} s" >&2; return 1
}
command -v socat >/dev/null || { echo "fleet: installing socat (Debian package)"; . .ci/postgres.sh; ci_apt_install socat; }

# load SECONDS EVENTS LOG: FleetLoad through the balancer, in the background ($load_pid), its summary in LOG.json
load() {
  "$JAVA" -cp "$bench_tools" io.cosched.bench.FleetLoad --url="http://127.0.0.1:$FLEET_PORT" --rate="$rate" \
    --seconds="$1" --post-share="$post_share" --user=admin:secret --events="$2" --log="$3.csv" > "$3.json" 2> "$3.err" &
  load_pid=$!
}
event() { echo "$(now_ms) $1 $2" >> "$events"; }

echo "| variant | scenario | run | event | sent | 2xx | failed | failed by | p99 during (before) ms | back in rotation after s |" > "$out/summary.md"
echo "|---|---|---|---|---|---|---|---|---|---|" >> "$out/summary.md"
for v in "${variants[@]}"; do
  IFS='|' read -r name jvm args <<< "$v"
  echo "== $name"
  for i in 0 1 2; do start_instance "$i" "$jvm" "$args" "$out/server-$name-app$((i + 1)).log"; done
  for i in 0 1 2; do wait_instance_ready "$i"; done
  "$haproxy_bin" -db -f docs/haproxy/haproxy.cfg > "$out/haproxy-$name.log" 2>&1 &
  haproxy_pid=$!
  for n in 1 2 3; do wait_haproxy_up "$n" 30; done
  # warm-up through the balancer: the first requests of each JVM are not what is measured
  events="$out/warm-$name.events"; : > "$events"
  load 60 "$events" "$out/warm-$name"; wait "$load_pid" || true
  for s in "${scenarios[@]}"; do
    scenario=${s%%|*}
    for run in $(seq 1 "$runs"); do
      events="$out/$name-$scenario-$run.events"; : > "$events"
      case $scenario in
        rolling) seconds=$((180 + 3 * settle)) ;;
        *) seconds=60 ;;
      esac
      load "$seconds" "$events" "$out/load-$name-$scenario-$run"
      sleep 15
      case $scenario in
        rolling)
          event begin rolling
          for i in 0 1 2; do
            n=$((i + 1))
            event begin "restart-app$n"
            kill -TERM "${pids[$i]}"; wait_haproxy_left "$n" || true; wait "${pids[$i]}" 2>/dev/null || true
            start_instance "$i" "$jvm" "$args" "$out/server-$name-app$n.log" 10
            wait_haproxy_up "$n"; serving "$i"
            event end "restart-app$n"
            # the next one only once this one is warm and has its full share (HAProxy's slowstart; a
            # Deployment's minReadySeconds): two cold instances beside a third restarting shed
            sleep "$settle"
          done
          event end rolling ;;
        kill)
          echo "  app2 had $(haproxy_sessions 2) sessions open at the kill" | tee -a "$out/notes.txt"
          event begin kill-app2
          kill -KILL "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true; wait_haproxy_left 2 || true
          start_instance 1 "$jvm" "$args" "$out/server-$name-app2.log" 10
          wait_haproxy_up 2; serving 1
          event end kill-app2 ;;
        overload)
          states="$out/$name-overload-$run.app1-states"; : > "$states"
          watch_state 1 "$states" &
          watcher=$!
          event begin overload-app1
          # niced: its JVM starting on these two shared cores would take CPU from all three instances at once
          nice -n 10 "$JAVA" -cp "$bench_tools" io.cosched.bench.FleetLoad --url="http://127.0.0.1:${ports[0]}" --rate=100 \
            --seconds=15 --post-share=0 --get-path='/api/accounts/{id}/slow?ms=3000' --timeout-ms=20000 \
            --log="$out/overload-$name-$run.csv" > "$out/overload-$name-$run.json" 2>&1 || true
          event end overload-app1
          sleep 15; kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null || true
          # when app1 left rotation after it shed its first request (the overload's JVM takes a while to start, and
          # the slots a while to fill), when it was back after the overload's last request was sent (the instance may
          # come back while the last slow ones still run, once it has a free slot), and how often HAProxy took it
          # out (more than once is flapping). HAProxy needs two failed checks a second apart (inter 1s fall 2) to
          # take it out, two good ones (rise 2) to have it back
          read -r first_shed last_due last_answer < <(awk -F, 'NR > 1 { t = $1 + $2; if (t > last) last = t
              if ($1 > due) due = $1
              if ($4 == "503" && (first == "" || t < first)) first = t }
            END { printf "%d %d %d\n", first, due, last }' "$out/overload-$name-$run.csv")
          awk -v b="$(awk '$2 == "begin" {print $1}' "$events")" -v shed="$first_shed" -v due="$last_due" \
              -v answered="$last_answer" -v who="$name overload run $run" '
            $2 == "DOWN" && $3 == "" { outs++; if (left == "") left = $1 }
            $2 == "UP" && $3 == "" && left != "" && back == "" && $1 > left { back = $1 }
            END { printf "  %s: app1 shed first %.1f s after the overload began; out of rotation %s s after that; back %s s after the overload'"'"'s last request was sent (its last answer %.1f s after that); out %d time(s)\n",
                    who, (shed > 0) ? (shed - b) / 1000 : -1, (left == "" || shed == 0) ? "never" : sprintf("%.1f", (left - shed) / 1000),
                    (back == "") ? "(not yet)" : sprintf("%.1f", (back - due) / 1000), (answered - due) / 1000, outs }' "$states" \
            | tee -a "$out/notes.txt" ;;
        postgres)
          event begin postgres-restart
          $restart_postgres
          event end postgres-restart ;;
      esac
      wait "$load_pid" || true
      grep -v '"event":"run"' "$out/load-$name-$scenario-$run.json" | while read -r line; do
        python3 - "$name" "$scenario" "$run" "$line" >> "$out/summary.md" <<'PY'
import json, sys
name, scenario, run, line = sys.argv[1:5]
e = json.loads(line)
by = ", ".join(f"{k} {v}" for k, v in e["failedBy"].items()) or "-"
print(f"| {name} | {scenario} | {run} | {e['event']} | {e['sent']} | {e['ok']} | {e['failed']} | {by} | "
      f"{e['p99Ms']:.1f} ({e['p99BeforeMs']:.1f}) | {e['seconds']:.1f} |")
PY
      done
      tail -n 1 "$out/load-$name-$scenario-$run.json"
    done
  done
  kill "$haproxy_pid" 2>/dev/null; wait "$haproxy_pid" 2>/dev/null || true; haproxy_pid=
  for i in 0 1 2; do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  for i in 0 1 2; do wait "${pids[$i]}" 2>/dev/null || true; pids[i]=""; done
done
cat "$out/summary.md"
echo "results: $out"
