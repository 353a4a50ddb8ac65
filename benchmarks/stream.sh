#!/usr/bin/env bash
# The streaming benchmark: request bodies read as streams and server-sent events, cosched's blocking style
# (an InputStream argument, an EventStream) against pure WebFlux (Flux<DataBuffer>, a Flux of events) and
# Spring MVC on Tomcat with virtual threads (the servlet's InputStream, an SseEmitter fed by a virtual thread).
#
#   benchmarks/stream.sh           3 rounds (about 30 minutes)
#   benchmarks/stream.sh --quick   1 round, short windows (about 5 minutes), for a rough look
#   STREAM_VARIANTS="cosched reactive" STREAM_SCENARIOS="upload" benchmarks/stream.sh   a subset
#   STREAM_SERVER_ARGS="--cosched.web.stream.read-timeout=0" benchmarks/stream.sh   more arguments for every server
#   (STREAM_ROUNDS and STREAM_SSE_CONNECTIONS override the rounds and sse-slow's 1,000 connections)
#
# Scenarios, each in a fresh JVM per variant and round, the variants interleaved (A B C, B C A, C A B):
#   sse-slow  1,000 connections (STREAM_SSE_CONNECTIONS) to GET /sse?hz=1000, each taking one event a second
#             with a 16 KiB receive buffer, while its producer could make 1,000 a second: the producers must
#             park. The window opens once they have (the server's count of events made grows no faster than
#             twice what the clients take, three seconds in a row; "settle" is how long that took from the
#             start of the load), after a
#             warm-up under the same load, and lasts 60 s.
#   sse-fast  100 connections to GET /sse?hz=1000 taking the events as fast as they come: 100,000 events a
#             second offered, more than one core makes, so events per second and CPU per event of a paced
#             producer's whole path (its sleep included: each stack's timer decides how close to 1 ms
#             a sleep of 1 ms is). 10 s warm-up under the same load, then 20 s measured.
#   upload    POST /upload of 100 MiB bodies, one after the other on one connection: 10 s warm-up under
#             the same load, then 20 s measured; then, in the same warm JVM, one upload of 1 GiB
#             (scenario upload-1g), the heap sampled each 100 ms.
#   parts     the same with each body one multipart/form-data file part (POST /upload-parts): cosched's
#             MultipartStream against Spring's streaming parser (a Flux<PartEvent>); scenarios parts and
#             parts-1g. Not in the default set; the mvc variant has no such endpoint and is skipped.
# The load (benchmarks' StreamLoad: plain sockets, a virtual thread per connection) checks every event id
# and every answered byte count.
#
# Per window, of the server JVM: CPU time (utime + stime, /proc/PID/stat) per event or per MiB, context
# switches per event or MiB (all threads, voluntary and not), heap allocated per event or MiB (estimated from
# eden's use between jstat samples), the live heap after a full GC (jcmd GC.run) before and after the window,
# the peak of the used heap (jstat -gc each second, each 250 ms for uploads, each 100 ms for the 1 GiB one:
# garbage not yet collected included) and its growth over the live heap at the start, the old generation's
# growth, and the RSS's; for SSE the events per second the clients took, the events per second the producers
# made, the producers still running at the end, and over the load's whole run ids skipped (an event lost),
# failed connections and stalls (a client that waited more than 0.5 s for an event it had room for); for
# uploads MiB/s. The host's steal time, and the load's CPU (near one core: the client limits the rate), are
# recorded per window. Results: benchmarks/results/stream-<timestamp>/ (runs.csv, summary.md, the
# servers' logs, the load's JSON and timelines).
#
# The servers' sockets get a fixed 32 KiB send buffer in the SSE scenarios (bench.stream.send-buffer): Linux
# otherwise grows each to 4 MiB while the client's window is closed, some 35,000 events per slow connection
# in the kernel before any stack sees backpressure. With about 750 events buffered between producer and client,
# a producer waits minutes for the next demand of a client that reads one a second: Tomcat's limit on a write
# that waits (its connection timeout, 60 s) would close the stream mid-window, so it is an hour here
# (STREAM_SSE_LIMITS=defaults keeps it, to see that happen: producers at the end < connections). cosched has no
# such limit by default (cosched.web.stream.write-timeout).
#
# Pinning as in benchmarks/run.sh: the server on core 0; the load, jcmd and jstat on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

if $quick; then
  rounds=1; slow_warm=3; slow_measure=8; fast_warm=3; fast_measure=5; up_warm=3; up_measure=5; settle_max=40
else
  rounds=3; slow_warm=10; slow_measure=60; fast_warm=10; fast_measure=20; up_warm=10; up_measure=20; settle_max=120
fi
rounds=${STREAM_ROUNDS:-$rounds}
sse_connections=${STREAM_SSE_CONNECTIONS:-1000}
read -r -a variants <<< "${STREAM_VARIANTS:-cosched reactive mvc}"
read -r -a scenarios <<< "${STREAM_SCENARIOS:-sse-slow sse-fast upload}"
send_buffer=32768
sse_limits_off=(--server.tomcat.connection-timeout=1h)
if [ "${STREAM_SSE_LIMITS:-off}" = defaults ]; then sse_limits_off=(); fi

# the variants of benchmarks/http-common.sh that this benchmark runs, under shorter names
spec_of() {
  case $1 in
    cosched | reactive) echo "$1" ;;
    mvc) echo mvc-virtual-threads ;;
    *) echo "stream: unknown variant '$1' (expected: cosched, reactive or mvc)" >&2; return 1 ;;
  esac
}
for v in "${variants[@]}"; do spec_of "$v" > /dev/null; done
for s in "${scenarios[@]}"; do
  case $s in sse-slow | sse-fast | upload | parts) ;; *) echo "stream: unknown scenario '$s' (expected: sse-slow, sse-fast, upload or parts)" >&2; exit 1 ;; esac
done

bench_build
out="benchmarks/results/stream-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
tmp=$(mktemp -d)
jcmd_bin="$JAVA_HOME/bin/jcmd"
jstat_bin="$JAVA_HOME/bin/jstat"
clk=$(getconf CLK_TCK)

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "command: benchmarks/stream.sh $*$($quick && echo --quick)${STREAM_VARIANTS:+ STREAM_VARIANTS=$STREAM_VARIANTS}${STREAM_SCENARIOS:+ STREAM_SCENARIOS=$STREAM_SCENARIOS}${STREAM_SSE_LIMITS:+ STREAM_SSE_LIMITS=$STREAM_SSE_LIMITS}${STREAM_SERVER_ARGS:+ STREAM_SERVER_ARGS=\"$STREAM_SERVER_ARGS\"}"
  echo "pinning: server on core $server_core; load, jcmd, jstat on core $load_core; $bench_loops event loop per server"
  echo "timing: $rounds round(s); sse-slow: $sse_connections connections, settle (at most ${settle_max}s) + ${slow_warm}s warm-up + ${slow_measure}s measured;" \
    "sse-fast: ${fast_warm}s + ${fast_measure}s; upload: ${up_warm}s + ${up_measure}s, then one 1 GiB upload"
  echo "sse servers: send buffer $send_buffer bytes; Tomcat's write-wait limit ${STREAM_SSE_LIMITS:-off}"
} | tee "$out/machine.txt"

if curl -s -o /dev/null localhost:18080/; then
  echo "stream: port 18080 is taken; stop what listens there first" >&2; exit 1
fi
# errexit holds in the trap too: a kill of a process already gone must not end it before the server's
trap 'for p in ${load-} ${jstat_pid-} ${rss_pid-} ${server-}; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

cols="round,variant,scenario,connections,unit,work,seconds,rate,cpu_s,cpu_us_per_unit,cs_per_unit,alloc_kb_per_unit"
cols+=",heap_start_mb,heap_end_mb,peak_heap_mb,peak_heap_growth_mb,old_growth_mb,rss_growth_mb"
cols+=",produced_per_s,producers_end,skipped,failed,stalls,settle_s,steal_pct,load_cpu_pct"
echo "$cols" > "$out/runs.csv"

# The server's live heap in MiB: a full GC first, so that only what is reachable is counted.
live_heap() {
  "${on_load[@]}" "$jcmd_bin" "$server" GC.run > /dev/null
  "${on_load[@]}" "$jcmd_bin" "$server" GC.heap_info \
    | awk '{for (i = 1; i < NF; i++) if ($i == "used") {v = $(i + 1); sub(/K.*/, "", v); printf "%.1f", v / 1024; exit}}'
}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }

# sampler_start MS / sampler_stop: jstat -gc and the RSS every MS ms over a window; sampler_stop sets
# peak_heap, old_growth, alloc_mb (eden filled between samples, a collection's reset bridged by the eden's
# capacity) and rss_growth (MiB, over the RSS when the sampling began)
sampler_start() {
  "${on_load[@]}" "$jstat_bin" -gc "$server" "$1" > "$tmp/jstat.txt" 2>&1 &
  jstat_pid=$!
  rss0=$(rss_kb)
  local every
  every=$(awk -v m="$1" 'BEGIN {printf "%.3f", m / 1000}')
  (while kill -0 "$server" 2>/dev/null; do rss_kb; sleep "$every"; done) > "$tmp/rss.txt" 2>/dev/null &
  rss_pid=$!
}
sampler_stop() {
  kill "$jstat_pid" "$rss_pid" 2>/dev/null || true
  wait "$jstat_pid" "$rss_pid" 2>/dev/null || true
  jstat_pid=; rss_pid=
  read -r peak_heap old_growth alloc_mb < <(awk '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $1 ~ /^[0-9.]+$/ {
      used = $c["S0U"] + $c["S1U"] + $c["EU"] + $c["OU"]; if (used > peak) peak = used
      if (n == 0) old0 = $c["OU"]; if ($c["OU"] > oldPeak) oldPeak = $c["OU"]
      if (n > 0) {
        if ($c["FGC"] != pfgc) alloc += $c["EU"] # a full GC (jcmd GC.run) is not one eden filled: what came before it is not counted
        else if ($c["YGC"] == pygc) { d = $c["EU"] - peu; if (d > 0) alloc += d }
        else alloc += (pec - peu) + $c["EU"] + ($c["YGC"] - pygc - 1) * pec
      }
      peu = $c["EU"]; pec = $c["EC"]; pygc = $c["YGC"]; pfgc = $c["FGC"]; n++
    }
    END { printf "%.1f %.1f %.1f\n", peak / 1024, (oldPeak - old0) / 1024, alloc / 1024 }' "$tmp/jstat.txt")
  rss_growth=$(awk -v a="$rss0" '$1 > m {m = $1} END {printf "%.1f", (m > a ? m - a : 0) / 1024}' "$tmp/rss.txt")
}

# the load's CPU too ($load_cpu, in percent of one core: near 100, the client may be what limits the rate)
window_open() {
  cpu0=$(bench_cpu_ticks "$server"); cs0=$(bench_ctxt "$server"); st0=$(bench_steal_ticks); tt0=$(bench_total_ticks)
  lc0=; if [ -n "${load-}" ]; then lc0=$(bench_cpu_ticks "$load"); fi
  t0=$(date +%s%3N)
}
window_close() {
  t1=$(date +%s%3N)
  cpu1=$(bench_cpu_ticks "$server"); cs1=$(bench_ctxt "$server"); st1=$(bench_steal_ticks); tt1=$(bench_total_ticks)
  lc1=; if [ -n "${load-}" ]; then lc1=$(bench_cpu_ticks "$load"); fi
  steal=$(awk -v a="$st0" -v b="$st1" -v c="$tt0" -v d="$tt1" 'BEGIN {printf "%.1f", (d > c) ? 100 * (b - a) / (d - c) : 0}')
  load_cpu=$(awk -v a="$lc0" -v b="$lc1" -v t="$clk" -v ms=$((t1 - t0)) 'BEGIN {if (a != "" && b != "" && ms > 0) printf "%.0f", (b - a) / t * 100000 / ms}')
}

# units_at TIMELINE EPOCH_MS: the load's count (events, or body bytes written) at that moment, interpolated
# between the two timeline lines (100 ms apart) around it
units_at() {
  awk -F, -v t="$2" '$1 <= t {t0 = $1; u0 = $2; next} !hi {t1 = $1; u1 = $2; hi = 1}
    END {if (!hi || t1 == t0) printf "%.0f", u0; else printf "%.0f", u0 + (u1 - u0) * (t - t0) / (t1 - t0)}' "$1"
}

# json FILE KEY: a number from the load's JSON line
json() { grep -o "\"$2\":[0-9.]*" "$1" | head -n 1 | cut -d: -f2; }

# record ROUND VARIANT SCENARIO CONNECTIONS UNIT WORK [SECONDS]: one line of runs.csv from the window's readings
# (work: events, or MiB; SECONDS: what the rate is over, the window's by default; the heap, SSE and failure
# fields from the variables of the same names)
record() {
  local round=$1 name=$2 scenario=$3 conns=$4 unit=$5 work=$6 seconds=${7:-} line
  [ -n "$seconds" ] || seconds=$(awk -v ms=$((t1 - t0)) 'BEGIN {printf "%.3f", ms / 1000}')
  line=$(awk -v w="$work" -v s="$seconds" -v a="$cpu0" -v b="$cpu1" -v t="$clk" -v x="$cs0" -v y="$cs1" -v al="$alloc_mb" '
    BEGIN { printf "%.2f,%.1f,%.2f,%.1f,%.3f,%.3f", s, (s > 0 ? w / s : 0), (b - a) / t,
            (w > 0 ? (b - a) / t * 1e6 / w : 0), (w > 0 ? (y - x) / w : 0), (w > 0 ? al * 1024 / w : 0) }')
  local growth
  growth=$(awk -v p="$peak_heap" -v h="$heap_start" 'BEGIN {printf "%.1f", p - h}')
  echo "$round,$name,$scenario,$conns,$unit,$work,$line,$heap_start,$heap_end,$peak_heap,$growth,$old_growth,$rss_growth,${produced_rate-},${producers_end-},${skipped-},${failed-},${stalls-},${settle-},$steal,$load_cpu" \
    | tee -a "$out/runs.csv"
}

# stats: "<events produced so far> <producers running>" from the server; blank if it does not answer within
# 5 s (a carrier that busy virtual threads never give up would keep it waiting)
stats() { curl -sf --max-time 5 localhost:18080/stream-stats || echo " "; }

run_sse() { # ROUND VARIANT SCENARIO
  local round=$1 name=$2 scenario=$3 conns path read_ms warm measure log=$out/load-$2-$3-$1
  if [ "$scenario" = sse-slow ]; then
    conns=$sse_connections; path="/sse?hz=1000"; read_ms=1000; warm=$slow_warm; measure=$slow_measure
  else
    conns=100; path="/sse?hz=1000"; read_ms=0; warm=$fast_warm; measure=$fast_measure
  fi
  # shellcheck disable=SC2086 # STREAM_SERVER_ARGS: words, as on a command line
  bench_start "$(spec_of "$name")" "$out/server-$name-$scenario-$round.log" --bench.stream.send-buffer=$send_buffer \
    "${sse_limits_off[@]}" ${STREAM_SERVER_ARGS-}
  rm -f "$tmp/stop"
  "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.StreamLoad sse --url=http://127.0.0.1:18080 --path="$path" \
    --connections="$conns" --read-every-ms="$read_ms" --rcvbuf=16384 --seconds=$((settle_max + warm + measure + 120)) \
    --until-file="$tmp/stop" --timeline="$log.timeline.csv" > "$log.json" 2> "$log.err" &
  load=$!
  settle=
  if [ "$scenario" = sse-slow ]; then
    # the producers have parked when they make no more events than the clients take (one a second each),
    # twice that allowed for the bursts in which the TCP windows reopen, three seconds in a row: one calm
    # second (a GC, producers still starting) opened windows in which the streams were still filling
    local began=$SECONDS prev now calm=0
    prev=$(stats | cut -d' ' -f1)
    while [ $((SECONDS - began)) -lt "$settle_max" ]; do
      sleep 1
      now=$(stats | cut -d' ' -f1)
      if [ -n "$now" ] && [ -n "$prev" ] && [ $((now - prev)) -le $((2 * conns)) ]; then
        calm=$((calm + 1))
      else
        calm=0
      fi
      if [ $((SECONDS - began)) -ge 3 ] && [ "$calm" -ge 3 ]; then break; fi
      prev=$now
    done
    settle=$((SECONDS - began))
    [ "$settle" -lt "$settle_max" ] || echo "  ($name $scenario: the producers had not parked after ${settle_max}s)"
  fi
  sleep "$warm"
  heap_start=$(live_heap)
  local s0 s1
  s0=$(stats)
  sampler_start 1000
  window_open
  sleep "$measure"
  window_close
  sampler_stop
  s1=$(stats)
  heap_end=$(live_heap)
  touch "$tmp/stop"
  wait "$load" || echo "  ($name $scenario: the load failed, see $log.err)"
  load=
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
  local events
  events=$(( $(units_at "$log.timeline.csv" "$t1") - $(units_at "$log.timeline.csv" "$t0") ))
  produced_rate=$(awk -v a="${s0%% *}" -v b="${s1%% *}" -v ms=$((t1 - t0)) 'BEGIN {if (a != "" && b != "") printf "%.1f", (b - a) * 1000 / ms}')
  producers_end=${s1##* }
  skipped=$(json "$log.json" skipped); failed=$(json "$log.json" failed); stalls=$(json "$log.json" stalls)
  record "$round" "$name" "$scenario" "$conns" event "$events"
  echo "  $(cat "$log.json")"
}

run_upload() { # ROUND VARIANT [upload|parts]
  local round=$1 name=$2 kind=${3:-upload} log=$out/load-$2-${3:-upload}-$1
  local how=(--path=/upload)
  if [ "$kind" = parts ]; then how=(--path=/upload-parts --multipart); fi
  # shellcheck disable=SC2086
  bench_start "$(spec_of "$name")" "$out/server-$name-$kind-$round.log" ${STREAM_SERVER_ARGS-}
  rm -f "$tmp/stop"
  "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.StreamLoad upload --url=http://127.0.0.1:18080 --mb=100 \
    "${how[@]}" --connections=1 --seconds=$((up_warm + up_measure + 120)) --until-file="$tmp/stop" \
    --timeline="$log.timeline.csv" > "$log.json" 2> "$log.err" &
  load=$!
  sleep "$up_warm"
  heap_start=$(live_heap)
  sampler_start 250
  window_open
  sleep "$up_measure"
  window_close
  sampler_stop
  heap_end=$(live_heap)
  touch "$tmp/stop"
  wait "$load" || echo "  ($name $kind: the load failed, see $log.err)"
  load=
  local bytes mib
  bytes=$(( $(units_at "$log.timeline.csv" "$t1") - $(units_at "$log.timeline.csv" "$t0") ))
  mib=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
  produced_rate=; producers_end=; skipped=; stalls=; settle=
  failed=$(json "$log.json" failed)
  record "$round" "$name" "$kind" 1 MiB "$mib"
  echo "  $(cat "$log.json")"

  # one 1 GiB body in the same warm JVM, the heap sampled each 100 ms
  log=$out/load-$name-$kind-1g-$round
  heap_start=$(live_heap)
  sampler_start 100
  load=
  window_open
  "${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.StreamLoad upload --url=http://127.0.0.1:18080 --mb=1024 \
    "${how[@]}" --connections=1 --count=1 --seconds=600 --timeline="$log.timeline.csv" > "$log.json" 2> "$log.err" &
  load=$!
  wait "$load" || echo "  ($name $kind-1g: the load failed, see $log.err)"
  load=
  window_close
  load_cpu=
  sampler_stop
  heap_end=$(live_heap)
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
  failed=$(json "$log.json" failed)
  mib=$(awk -v b="$(json "$log.json" bytes)" 'BEGIN {printf "%.1f", b / 1048576}')
  # the CPU window is the load's whole run (its JVM's start included, the server idle then); the rate is over
  # the upload's own time
  record "$round" "$name" "$kind-1g" 1 MiB "$mib" "$(grep -o '"uploadSeconds":\[[0-9.]*' "$log.json" | grep -o '[0-9.]*$')"
  echo "  $(cat "$log.json")"
}

for round in $(seq 1 "$rounds"); do
  shift_by=$(( (round - 1) % ${#variants[@]} ))
  order=("${variants[@]:shift_by}" "${variants[@]:0:shift_by}")
  for scenario in "${scenarios[@]}"; do
    for name in "${order[@]}"; do
      echo "round $round, $name, $scenario"
      case $scenario in
        upload) run_upload "$round" "$name" ;;
        parts)
          if [ "$name" = mvc ]; then echo "  (mvc: no multipart endpoint, skipped)"; else run_upload "$round" "$name" parts; fi ;;
        *) run_sse "$round" "$name" "$scenario" ;;
      esac
    done
  done
done

"$JAVA" -cp "$bench_tools" io.cosched.bench.StreamSummary "$out" | tee "$out/summary.md"
echo "results in $out"
