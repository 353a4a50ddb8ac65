#!/usr/bin/env bash
# The fault and soak suite: the demo app under a misbehaving handler, overload, a failing downstream,
# a database restart, a SIGTERM under load, and a long steady load. Each case prints its figures and
# a PASS or FAIL line per bound; the script exits non-zero when any bound is broken.
#
#   benchmarks/soak.sh                          every case (about 20 minutes, the soak being 10 of them)
#   SOAK_CASES="hog timer burst" benchmarks/soak.sh   some of them
#   SOAK_SECONDS=120 benchmarks/soak.sh         a shorter soak
#   SOAK_DEMO_ARGS="--cosched.web.shed-before-webflux=false" SOAK_CASES=overload benchmarks/soak.sh   a setting compared
#
# Cases: hog (a 3 s CPU hog on one of two loops: new connections' requests answered, p99 <= 200 ms),
# timer (a sleep homed on a loop that gets stuck ends within threshold + 20 ms of its due time),
# burst (2,000 requests at 200 concurrency beside two CPU burners: no stall logged; a 300 ms spin
# still is), overload (10x max-in-flight: sheds, accepted p99 bounded, recovers within a second),
# downstream (the pricing service stalls, then resets connections: timeouts fire, nothing leaks),
# postgres (PostgreSQL restarts mid-load: errors, then recovery without restarting the app),
# sigterm (SIGTERM under load: no accepted request lost), soak (SOAK_SECONDS at 70 % of the measured
# capacity: no errors, heap after GC and live coroutines flat).
#
# The demo and the load generator (benchmarks' LoadGen, which tells refused, timed-out and lost
# requests apart) share this machine's cores, unpinned, as an app and its clients would. Each load
# run's JSON starts with the demo's CPU time per answer (serverCpuUsPerAnswer). Results:
# benchmarks/results/soak-<timestamp>/ (one JSON per load run, the demo logs, summary.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

cases=${SOAK_CASES:-"hog timer burst overload downstream postgres sigterm soak"}
soak_seconds=${SOAK_SECONDS:-600}
port=18181
stub_port=18199
base="http://127.0.0.1:$port"
demo=demo-app/target/cosched-demo-app-0.1.0-SNAPSHOT.jar
tools=benchmarks/target/benchmarks.jar
out=benchmarks/results/soak-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
summary=$out/summary.txt
failed=0
pid=

echo "soak: building the demo and the tools"
rm -f "$demo" # see bench_build: a stale repackaged jar would keep old cosched code
./mvnw -q -B -pl demo-app,benchmarks -am package -DskipTests

say() { echo "$*" | tee -a "$summary"; }

# check NAME VALUE OP BOUND: one bound, PASS or FAIL
check() {
  if python3 -c "import sys; v=float('$2'); b=float('$4'); sys.exit(0 if {'<=': v <= b, '>=': v >= b, '==': v == b, '>': v > b}['$3'] else 1)"; then
    say "  PASS $1: $2 $3 $4"
  else
    say "  FAIL $1: $2 (expected $3 $4)"; failed=$((failed + 1))
  fi
}

# field FILE PATH: a number from a JSON file (PATH like okMs.p99 or statuses.503), 0 when absent
field() {
  python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    v = v.get(k) if isinstance(v, dict) else None
print(0 if v is None else v)
PY
}

cosched() { # cosched PATH: a number from /actuator/cosched (schedulers.cosched-io.coroutines, web.inFlight)
  curl -sf "$base/actuator/cosched" > "$out/cosched.json" && field "$out/cosched.json" "$1"
}

start_demo() { # start_demo LOG [ARGS]
  local log=$1; shift
  # shellcheck disable=SC2086 # SOAK_DEMO_ARGS: more arguments for every start, e.g. to compare a setting
  "$JAVA" -Xms512m -Xmx512m -jar "$demo" --server.port=$port "$@" ${SOAK_DEMO_ARGS-} > "$out/$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 120); do curl -sf "$base/actuator/health" > /dev/null && return 0; sleep 0.5; done
  echo "soak: the demo did not start, see $out/$log" >&2; exit 1
}

stop_demo() {
  if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then kill "$pid"; wait "$pid" 2> /dev/null || true; fi
  pid=
}
trap 'stop_demo; pkill -f "io.cosched.bench.FaultStub" 2> /dev/null || true; pkill -x yes 2> /dev/null || true' EXIT

demo_ticks() { if [ -n "${pid-}" ] && [ -r "/proc/$pid/stat" ]; then awk '{print $14 + $15}' "/proc/$pid/stat"; else echo 0; fi; }

load() { # load NAME ARGS: LoadGen against the demo, its JSON in $out/NAME.json, with the demo's CPU per answer
  local name=$1 c0 c1; shift
  c0=$(demo_ticks)
  "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$tools" io.cosched.bench.LoadGen --url="$base" --label="$name" "$@" \
    2> /dev/null > "$out/$name.json"
  c1=$(demo_ticks)
  # the demo's CPU time (user + system) over the run's answers: the first figure of a load run
  python3 - "$out/$name.json" "$c0" "$c1" "$(getconf CLK_TCK)" << 'PY'
import json, sys
path, c0, c1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(path) as f:
    run = json.load(f)
answered = run.get("answered") or 0
run = {"serverCpuUsPerAnswer": round((c1 - c0) / hz * 1e6 / answered, 1) if answered and c1 > c0 else None, **run}
with open(path, "w") as f:
    json.dump(run, f, separators=(",", ":"))
PY
  say "  $name: $(cat "$out/$name.json")"
}

stalls_logged() { grep -c 'has been stuck for' "$out/$1" || true; }

warm() { # the first requests of a fresh JVM: class loading and compilation, nothing measured
  load warm-up --paths=/api/orders/1,/api/faults/nap?ms=1,/api/quote/w --connections=20 --seconds=8 > /dev/null
  load warm-up-new-connections --paths=/api/orders/1 --new-connections --connections=8 --seconds=4 > /dev/null
}

# spin_on LOOP MS: starts /api/faults/spin on loop LOOP: new connections until one lands there (a
# request that landed elsewhere is answered at once), its curl's pid in $spin_pid
spin_on() {
  local i k spin
  for i in $(seq 1 40); do
    curl -s "$base/api/faults/spin?ms=$2&loop=$1" > "$out/spin.json" &
    spin=$!
    for k in $(seq 1 10); do
      sleep 0.02
      kill -0 "$spin" 2> /dev/null || continue 2
    done
    spin_pid=$spin
    return 0
  done
  echo "soak: could not land a spin on $1" >&2; return 1
}

case_hog() {
  say "== hog: a 3.5 s CPU hog on one of two loops; requests on new connections meanwhile"
  start_demo hog.log --cosched.io.threads=2
  warm
  local loop lg
  for loop in cosched-io-0 cosched-io-1; do
    # The load generator warms up (a JVM of its own) for 4 s, and counts the 2.5 s after: by then the
    # hog, started at about 3 s, spins.
    load "hog-$loop" --paths=/api/orders/1 --new-connections --connections=8 --warmup-seconds=4 --seconds=2.5 \
      --timeout-ms=5000 &
    lg=$!
    sleep 3
    spin_on "$loop" 3500
    wait "$lg"
    wait "$spin_pid" || true
    check "hog on $loop: requests answered 2xx" "$(field "$out/hog-$loop.json" ok)" ">" 0
    check "hog on $loop: requests not answered 2xx" "$(( $(field "$out/hog-$loop.json" answered) - $(field "$out/hog-$loop.json" ok) + $(field "$out/hog-$loop.json" timedOut) + $(field "$out/hog-$loop.json" lost) + $(field "$out/hog-$loop.json" refused) ))" "==" 0
    check "hog on $loop: p99 of new connections' requests, ms" "$(field "$out/hog-$loop.json" okMs.p99)" "<=" 200
  done
  check "hog: stalls reported (one per hog)" "$(stalls_logged hog.log)" ">=" 2
  stop_demo
}

case_timer() {
  say "== timer: a sleep homed on a loop that gets stuck (threshold 100 ms)"
  start_demo timer.log --cosched.io.threads=2
  warm
  local nap_ms tries nap landed
  # Due before the watchdog can have seen the stall (it fires when it does, up to a threshold late),
  # and well after (it fires on time). A try counts when the nap slept on loop 0 and the spin held
  # loop 0 at its due time, which shows as waking on loop 1.
  for nap_ms in 80 400; do
    landed=0
    for tries in $(seq 1 12); do
      curl -s "$base/api/faults/nap?ms=$nap_ms" > "$out/nap.json" &
      nap=$!
      spin_on cosched-io-0 1500
      wait "$nap" || true
      wait "$spin_pid" || true
      if python3 -c "import json,sys; n=json.load(open('$out/nap.json')); sys.exit(0 if (n['slept'], n['woke']) == ('cosched-io-0', 'cosched-io-1') else 1)"; then
        landed=1; break
      fi
      curl -s "$base/api/orders/1" > /dev/null # one more new connection: the next nap lands on the next loop
    done
    say "  nap ${nap_ms} ms (try $tries): $(cat "$out/nap.json")"
    check "nap $nap_ms ms: slept on the loop that got stuck and woke on the other" "$landed" "==" 1
    check "nap $nap_ms ms: ms late" "$(field "$out/nap.json" lateMs)" "<=" 120
  done
  stop_demo
}

case_burst() {
  say "== burst: 2,000 requests, 200 at a time, beside two CPU burners (default threshold)"
  start_demo burst.log
  local s
  burst() {
    curl -sf -XPOST "$base/api/burst?requests=2000&concurrency=200" > /dev/null
    for _ in $(seq 1 600); do
      s=$(curl -s "$base/api/burst"); [[ "$s" == *'"running":false'* ]] && break; sleep 0.5
    done
    say "  $1: $s"
  }
  burst "warm-up burst (the JVM's first requests: class loading stalls are real, not counted)"
  local before after
  before=$(stalls_logged burst.log)
  yes > /dev/null & local y1=$!
  yes > /dev/null & local y2=$!
  burst "burst beside the burners"
  after=$(stalls_logged burst.log)
  check "burst beside the burners: stalls logged" "$((after - before))" "==" 0
  say "  starvations counted: $(cosched schedulers.cosched-io.starvations)"
  curl -s "$base/api/faults/spin?ms=300" > /dev/null
  for _ in $(seq 1 50); do [ "$(stalls_logged burst.log)" -gt "$after" ] && break; sleep 0.1; done # the log line may trail the answer
  check "a 300 ms spin beside the burners: stalls logged" "$(( $(stalls_logged burst.log) - after ))" ">=" 1
  kill "$y1" "$y2"
  stop_demo
}

case_overload() {
  say "== overload: 10x max-in-flight (50) on a 50 ms handler"
  start_demo overload.log --cosched.web.max-in-flight=50
  warm
  load overload --paths=/api/faults/nap?ms=50 --connections=500 --seconds=20 --timeout-ms=10000
  check "overload: shed (503)" "$(field "$out/overload.json" statuses.503)" ">" 0
  check "overload: accepted (2xx) p99, ms" "$(field "$out/overload.json" okMs.p99)" "<=" 1000
  check "overload: timed out or lost" "$(( $(field "$out/overload.json" timedOut) + $(field "$out/overload.json" lost) ))" "==" 0
  local t0 t1 ok=0
  t0=$(date +%s%N)
  for _ in $(seq 1 100); do
    if [ "$(cosched web.inFlight)" = 0 ] && curl -sf "$base/api/faults/nap?ms=1" > /dev/null; then ok=1; break; fi
    sleep 0.02
  done
  t1=$(date +%s%N)
  check "overload: recovered (nothing in flight, a request answered)" "$ok" "==" 1
  check "overload: recovery, ms" "$(( (t1 - t0) / 1000000 ))" "<=" 1000
  stop_demo
}

case_downstream() {
  say "== downstream: the pricing service answers, stalls, resets connections, answers again"
  "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$tools" io.cosched.bench.FaultStub "$stub_port" 20 > "$out/stub.log" 2>&1 &
  local stub=$!
  start_demo downstream.log --demo.downstream.base-url=http://127.0.0.1:$stub_port
  warm
  load downstream-warm --paths=/api/quote/d --rate=50 --connections=200 --seconds=5 > /dev/null
  local fds0 fds1 mode
  fds0=$(ls /proc/"$pid"/fd | wc -l)
  for mode in ok stall reset ok; do
    curl -sf "http://127.0.0.1:$stub_port/mode/$mode" > /dev/null
    load "downstream-$mode" --paths=/api/quote/d --rate=50 --connections=200 --seconds=10 --timeout-ms=10000
    check "downstream $mode: timed out at the client or lost" "$(( $(field "$out/downstream-$mode.json" timedOut) + $(field "$out/downstream-$mode.json" lost) ))" "==" 0
    case $mode in
      ok) check "downstream ok: answers not 2xx" "$(( $(field "$out/downstream-$mode.json" answered) - $(field "$out/downstream-$mode.json" ok) ))" "==" 0 ;;
      stall) check "downstream stall: slowest answer (the 504 after 3 timed-out attempts), ms" "$(field "$out/downstream-$mode.json" allMs.max)" "<=" 3000 ;;
      reset) check "downstream reset: slowest answer (502), ms" "$(field "$out/downstream-$mode.json" allMs.max)" "<=" 1500 ;;
    esac
  done
  sleep 1
  fds1=$(ls /proc/"$pid"/fd | wc -l)
  check "downstream: coroutines left" "$(cosched schedulers.cosched-io.coroutines)" "==" 0
  check "downstream: requests in flight left" "$(cosched web.inFlight)" "==" 0
  say "  open files of the demo: $fds0 before the faults, $fds1 after"
  check "downstream: open files grown" "$((fds1 - fds0))" "<=" 20
  stop_demo
  kill "$stub"
}

case_postgres() {
  say "== postgres: PostgreSQL restarts mid-load"
  bench_need_postgres
  local restart=${COSCHED_TEST_POSTGRES_RESTART:-"pg_ctlcluster 15 main restart"}
  start_demo postgres.log --spring.profiles.active=postgres "${bench_pg_args[@]:0:3}" # not the benchmark's sql.init
  warm
  local demo_pid=$pid
  load postgres-restart --paths=/api/orders/1 --rate=200 --connections=100 --seconds=30 --timeout-ms=10000 &
  local lg=$!
  sleep 10
  say "  restarting PostgreSQL: $restart"
  $restart
  wait "$lg"
  check "postgres restart: timed out or lost (nothing hangs)" "$(( $(field "$out/postgres-restart.json" timedOut) + $(field "$out/postgres-restart.json" lost) ))" "==" 0
  load postgres-after --paths=/api/orders/1 --rate=200 --connections=100 --seconds=10 --timeout-ms=10000
  check "postgres after the restart: answers not 2xx" "$(( $(field "$out/postgres-after.json" answered) - $(field "$out/postgres-after.json" ok) + $(field "$out/postgres-after.json" timedOut) ))" "==" 0
  check "postgres: the same app process" "$(kill -0 "$demo_pid" 2> /dev/null && echo 1 || echo 0)" "==" 1
  stop_demo
}

case_sigterm() {
  say "== sigterm: SIGTERM while 100 connections wait on 200 ms requests"
  start_demo sigterm.log
  warm
  load sigterm --paths=/api/faults/nap?ms=200 --connections=100 --seconds=12 --timeout-ms=30000 &
  local lg=$!
  sleep 5
  local t0 code=0
  t0=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid" || code=$?
  say "  the demo exited with $code after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  pid=
  wait "$lg"
  check "sigterm: accepted requests lost (no answer on a connection of their own)" "$(field "$out/sigterm.json" lost)" "==" 0
  check "sigterm: requests timed out" "$(field "$out/sigterm.json" timedOut)" "==" 0
  check "sigterm: requests answered before the exit" "$(field "$out/sigterm.json" ok)" ">" 0
  check "sigterm: exit status (0, or 143 for the signal)" "$( [ "$code" = 0 ] || [ "$code" = 143 ] && echo 1 || echo 0)" "==" 1
}

case_soak() {
  say "== soak: ${soak_seconds} s at 70 % of the measured capacity"
  start_demo soak.log
  warm
  load capacity --paths=/api/quote/s,/api/orders/1 --connections=100 --seconds=15
  local capacity rate
  capacity=$(field "$out/capacity.json" okPerSecond)
  rate=$(python3 -c "print(round($capacity * 0.7))")
  say "  capacity $capacity req/s; soaking at $rate req/s"
  load soak --paths=/api/quote/s,/api/orders/1 --rate="$rate" --connections=200 --seconds="$soak_seconds" --timeout-ms=10000 &
  local lg=$! samples=() live=() t
  for t in $(seq 60 60 $((soak_seconds - 30))); do # samples while the load runs
    sleep 60
    "$JAVA_HOME/bin/jcmd" "$pid" GC.run > /dev/null
    local used
    used=$("$JAVA_HOME/bin/jcmd" "$pid" GC.heap_info | python3 -c "import re,sys; m=re.search(r'used (\d+)K', sys.stdin.read()); print(int(m.group(1))//1024)")
    samples+=("$used"); live+=("$(cosched schedulers.cosched-io.coroutines)")
    say "  t=${t}s heap after GC ${used} MB, live coroutines ${live[-1]}"
  done
  wait "$lg"
  check "soak: answers not 2xx, timed out or lost" "$(( $(field "$out/soak.json" answered) - $(field "$out/soak.json" ok) + $(field "$out/soak.json" timedOut) + $(field "$out/soak.json" lost) ))" "==" 0
  check "soak: requests sent at the rate (not left unsent)" "$(field "$out/soak.json" unsent)" "==" 0
  if [ "${#samples[@]}" -ge 2 ]; then
    local late_max=0 i
    for ((i = ${#samples[@]} / 2; i < ${#samples[@]}; i++)); do
      [ "${samples[i]}" -gt "$late_max" ] && late_max=${samples[i]}
    done
    check "soak: heap after GC, the second half's largest vs the first minute's, MB" "$late_max" "<=" "$(( samples[0] + samples[0] / 5 + 16 ))"
  fi
  local left=1
  for _ in $(seq 1 50); do left=$(cosched schedulers.cosched-io.coroutines); [ "$left" = 0 ] && break; sleep 0.1; done
  check "soak: live coroutines once the load stopped" "$left" "==" 0
  stop_demo
}

for c in $cases; do
  declare -F "case_$c" > /dev/null || { echo "soak: unknown case '$c'" >&2; exit 2; }
  "case_$c"
done
say "soak: $failed bound(s) broken; results in $out"
[ "$failed" = 0 ]
