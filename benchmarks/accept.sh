#!/usr/bin/env bash
# How fast a server admits connections while it is busy (issue 28): the HTTP benchmark's downstream
# scenario (a 20 ms stub) at 2,000 connections, server on core 0, wrk and the stub on core 1, a fresh JVM
# per variant and round, variants interleaved. Two windows per JVM after a 40 s warm-up at 2,000:
#   fresh     wrk opens 2,000 connections at once and keeps them busy for 15 s
#   joining   1,000 connections load the server; 5 s in, 1,000 more connect and run for 15 s
# Per window: responses/s, p99 and the slowest response (wrk's Max: a connection's first response
# includes its wait in the listen queue, so the slowest response bounds the longest wait), server CPU
# microseconds per response, the listen queue's largest length seen (ss, every 50 ms: connections the
# kernel completed and the server had not accepted yet) and the host's ListenOverflows during the window
# (connections the kernel dropped because the queue was full).
#
#   benchmarks/accept.sh           3 rounds; variants cosched, virtual-threads, mvc-virtual-threads (Tomcat)
#   benchmarks/accept.sh --quick   1 round, 10 s warm-up, 5 s windows
#   BENCH_VARIANTS="cosched helidon" benchmarks/accept.sh   other variants of benchmarks/http-common.sh
# Results in benchmarks/results/accept-<timestamp>/ (runs.csv, summary.txt, wrk output).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

if $quick; then rounds=1; warm=10; measure=5; lead=2; else rounds=3; warm=40; measure=15; lead=5; fi
rounds=${BENCH_ROUNDS:-$rounds}; warm=${BENCH_WARM:-$warm}; measure=${BENCH_MEASURE:-$measure}
read -r -a variants <<< "${BENCH_VARIANTS:-cosched virtual-threads mvc-virtual-threads}"
for v in "${variants[@]}"; do bench_spec "$v" > /dev/null; done
bench_need_wrk
bench_build
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
out="benchmarks/results/accept-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(uname -sr); jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "command: benchmarks/accept.sh$($quick && echo ' --quick') variants: ${variants[*]}"
  echo "timing: $rounds rounds; ${warm}s warm-up at 2000 connections, ${measure}s windows"
} | tee "$out/machine.txt"
if curl -s -o /dev/null localhost:18080/ || curl -s -o /dev/null localhost:18099/; then
  echo "bench: port 18080 or 18099 is taken; stop what listens there first" >&2; exit 1
fi
"${on_load[@]}" "$JAVA" -cp "$bench_tools" io.cosched.bench.DownstreamStub 18099 20 1 > "$out/stub.log" 2>&1 &
stub=$!
sampler=
base=
trap 'for p in $stub ${sampler:-} ${base:-} ${server:-}; do kill $p 2>/dev/null; done; true' EXIT
clk=$(getconf CLK_TCK)
url=http://127.0.0.1:18080/downstream

overflows() { awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) f[i] = $i; h = 1 } else for (i = 1; i <= NF; i++) if (f[i] == "ListenOverflows") print $i }' /proc/net/netstat; }
start_sampler() { # the listen queue of port 18080 every 50 ms into $1
  ( while :; do ss -ltnH 'sport = :18080' | awk '{print $2; exit}'; sleep 0.05; done ) > "$1" &
  sampler=$!
}
ms() { # wrk latency like 1.23ms / 456.00us / 2.10s -> milliseconds
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v + 0 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1000 } else print "" }'
}
# record ROUND VARIANT WINDOW WRK_OUTPUT QUEUE_FILE CPU0 CPU1 OVF0 OVF1 (CPU over all of the server's responses
# in the window: for "joining" the loading connections' too, which wrk's second run does not count)
record() {
  local res=$4 n rps p99 max errors queue
  n=$(awk '/requests in/ {print $1}' <<< "$res")
  rps=$(awk '/Requests\/sec/ {print $2}' <<< "$res")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' <<< "$res")")
  max=$(ms "$(awk '/Latency / {print $4}' <<< "$res")")
  errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<< "$res")
  queue=$(awk '{ if ($1 > m) m = $1 } END { print m + 0 }' "$5")
  echo "$1,$2,$3,$rps,$p99,$max,$errors,$queue,$(($9 - $8)),$n,$(awk -v a="$6" -v b="$7" -v t="$clk" -v n="$n" -v x="${10:-0}" \
    'BEGIN {printf "%.1f", (b - a) / t * 1e6 / (n + x)}')" | tee -a "$out/runs.csv"
}

echo "round,variant,window,rps,p99_ms,max_ms,errors,listen_queue_max,listen_overflows,requests,cpu_us_per_response" > "$out/runs.csv"
for round in $(seq 1 "$rounds"); do
  shift_by=$(( (round - 1) % ${#variants[@]} ))
  for name in "${variants[@]:shift_by}" "${variants[@]:0:shift_by}"; do
    bench_start "$name" "$out/server-$name-$round.log"
    "${on_load[@]}" wrk -t1 -c2000 -d"${warm}s" --timeout 10s "$url" > /dev/null 2>&1 || true

    # fresh: 2,000 connections at once
    o0=$(overflows); c0=$(bench_cpu_ticks "$server"); start_sampler "$out/queue-$name-fresh-$round.txt"
    res=$("${on_load[@]}" wrk -t1 -c2000 -d"${measure}s" --timeout 10s --latency "$url" 2>&1 || true)
    kill "$sampler"; sampler=; c1=$(bench_cpu_ticks "$server"); o1=$(overflows)
    echo "$res" > "$out/wrk-$name-fresh-$round.txt"
    record "$round" "$name" fresh "$res" "$out/queue-$name-fresh-$round.txt" "$c0" "$c1" "$o0" "$o1"

    # joining: 1,000 more while 1,000 keep it busy
    "${on_load[@]}" wrk -t1 -c1000 -d$((measure + lead + 5))s --timeout 10s "$url" > "$out/wrk-$name-base-$round.txt" 2>&1 &
    base=$!
    sleep "$lead"
    o0=$(overflows); c0=$(bench_cpu_ticks "$server"); start_sampler "$out/queue-$name-joining-$round.txt"
    res=$("${on_load[@]}" wrk -t1 -c1000 -d"${measure}s" --timeout 10s --latency "$url" 2>&1 || true)
    kill "$sampler"; sampler=; c1=$(bench_cpu_ticks "$server"); o1=$(overflows)
    echo "$res" > "$out/wrk-$name-joining-$round.txt"
    # the loading connections' responses in the same window: their wrk's rate times the window
    while kill -0 "$base" 2>/dev/null; do sleep 0.5; done
    base=
    extra=$(awk -v m="$measure" '/Requests\/sec/ {printf "%d", $2 * m}' "$out/wrk-$name-base-$round.txt")
    record "$round" "$name" joining "$res" "$out/queue-$name-joining-$round.txt" "$c0" "$c1" "$o0" "$o1" "${extra:-0}"

    kill "$server"; wait "$server" 2>/dev/null || true
    server=
  done
done
# medians per variant and window, with the spread
awk -F, 'NR > 1 { k = $2 " " $3; rps[k] = rps[k] " " $4; p99[k] = p99[k] " " $5; mx[k] = mx[k] " " $6; q[k] = q[k] " " $8;
                  o[k] = o[k] " " $9; cpu[k] = cpu[k] " " $11; e[k] = e[k] " " $7 }
     END { for (k in rps) printf "%-32s rps%s | p99 ms%s | max ms%s | errors%s | listen queue max%s | overflows%s | cpu us/resp%s\n",
           k, rps[k], p99[k], mx[k], e[k], q[k], o[k], cpu[k] }' "$out/runs.csv" | sort | tee "$out/summary.txt"
echo "results in $out"
