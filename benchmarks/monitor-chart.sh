#!/usr/bin/env bash
# Draws docs/img/monitoring-burst.png: the autoconfigure test app under a load burst, as
# /actuator/cosched saw it. Needs wrk (Debian package "wrk"; installed when missing and possible).
#
#   benchmarks/monitor-chart.sh [out-dir]     default out-dir: docs/img
#
# Timeline: 3 s quiet, 10 s of wrk (200 connections on /sleep?ms=20, a blocking handler that
# parks its coroutine 20 ms), then quiet again. Server on core 0, wrk on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
out="${1:-docs/img}"
port=18090

. benchmarks/http-common.sh
bench_need_wrk

./mvnw -q -B -pl autoconfigure,benchmarks -am install -DskipTests
./mvnw -q -B -pl autoconfigure dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
cp="autoconfigure/target/classes:autoconfigure/target/test-classes:$(cat autoconfigure/target/test-classpath.txt)"

pin() { if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
# The server is started without the function: taskset execs java, so $! is the JVM and the trap stops it.
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then on_core0=(taskset -c 0); else on_core0=(); fi

"${on_core0[@]}" "$JAVA" --add-opens java.base/java.lang=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -Xmx1g -cp "$cp" \
  io.cosched.spring.boot.autoconfigure.web.WebTestApp --server.port=$port --cosched.io.threads=2 \
  --management.endpoints.web.exposure.include=cosched --logging.level.root=warn > benchmarks/target/monitor-chart-app.log 2>&1 &
app=$!
trap 'kill $app 2>/dev/null' EXIT
for _ in $(seq 1 120); do curl -sf "localhost:$port/actuator/cosched" >/dev/null && break; sleep 0.5; done
# warm up the JIT so the chart shows the scheduler, not the compiler
pin 1 wrk -t1 -c200 -d20s "http://127.0.0.1:$port/sleep?ms=20" >/dev/null

pin 1 "$JAVA" -cp benchmarks/target/benchmarks.jar io.cosched.bench.MonitorChart "http://127.0.0.1:$port" cosched-io 18 \
  "$out/monitoring-burst.csv" "$out/monitoring-burst.png" \
  "IOManager 'cosched-io' (2 loops): 10 s of wrk -c200 on a blocking handler that sleeps 20 ms" &
chart=$!
sleep 3
pin 1 wrk -t1 -c200 -d10s "http://127.0.0.1:$port/sleep?ms=20" | tee benchmarks/target/monitor-chart-wrk.txt
wait $chart
