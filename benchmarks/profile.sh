#!/usr/bin/env bash
# Profiles variants of the HTTP benchmark under load with JFR and compares them per request.
#
#   benchmarks/profile.sh                          cosched against reactive on /hello
#   benchmarks/profile.sh cosched virtual-threads  any two variants of run.sh (not mvc-virtual-threads)
#   PROFILE_PATH=/jdbc?id=7 PROFILE_CONNECTIONS=100 benchmarks/profile.sh cosched elastic
#
# Each variant runs as in benchmarks/run.sh (same flags, server on core 0, wrk on core 1): 20 s of
# warm-up load, then 15 s of load with a JFR recording (settings=profile). Prints each variant's
# req/s and hottest methods, then where the first spends more CPU per request than the second
# (io.cosched.bench.JfrProfile). Recordings: benchmarks/results/profile-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. .mvn/jdk.sh
JAVA="$JAVA_HOME/bin/java"

a=${1:-cosched}; b=${2:-reactive}
path=${PROFILE_PATH:-/hello}; conns=${PROFILE_CONNECTIONS:-100}
command -v wrk >/dev/null || { echo "profile: wrk is missing; benchmarks/run.sh installs it" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

./mvnw -q -B -pl benchmarks,benchmarks/http-app -am package -DskipTests
app=benchmarks/http-app/target/cosched-bench-http-app-0.1.0-SNAPSHOT.jar
tools=benchmarks/target/benchmarks.jar
out="benchmarks/results/profile-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

flags_of() { # JVM flags | application arguments, as in run.sh
  case $1 in
    cosched) echo "--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=1" ;;
    cosched-fallback) echo "|--bench.variant=cosched --cosched.io.threads=1" ;;
    reactive) echo "|--bench.variant=reactive --cosched.enabled=false" ;;
    elastic) echo "|--bench.variant=elastic --cosched.enabled=false" ;;
    virtual-threads) echo "|--bench.variant=virtual --cosched.enabled=false --spring.threads.virtual.enabled=true" ;;
    *) echo "profile: unknown variant '$1' (expected: cosched, cosched-fallback, reactive, elastic, virtual-threads)" >&2; return 1 ;;
  esac
}
flags_of "$a" >/dev/null && flags_of "$b" >/dev/null

stub=
if [[ $path == /downstream* ]]; then
  taskset -c 1 "$JAVA" -cp "$tools" io.cosched.bench.DownstreamStub 18099 20 1 > "$out/stub.log" 2>&1 &
  stub=$!
fi
trap '[ -n "$stub" ] && kill $stub 2>/dev/null; [ -n "${server-}" ] && kill $server 2>/dev/null; true' EXIT

declare -A rps
for v in "$a" "$b"; do
  IFS='|' read -r jvm args <<< "$(flags_of "$v")"
  # shellcheck disable=SC2086
  taskset -c 0 "$JAVA" -Xms1g -Xmx1g -XX:+UseG1GC --enable-native-access=ALL-UNNAMED -Dreactor.netty.ioWorkerCount=1 \
    $jvm -jar "$app" --server.port=18080 --bench.downstream-url=http://127.0.0.1:18099/ $args > "$out/server-$v.log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do curl -sf localhost:18080/hello >/dev/null && break; sleep 0.5; done
  taskset -c 1 wrk -t1 -c"$conns" -d20s --timeout 10s "http://127.0.0.1:18080$path" > /dev/null
  "$JAVA_HOME/bin/jcmd" "$server" JFR.start name=profile settings=profile duration=15s filename="$PWD/$out/$v.jfr" > /dev/null
  taskset -c 1 wrk -t1 -c"$conns" -d15s --timeout 10s --latency "http://127.0.0.1:18080$path" > "$out/wrk-$v.txt"
  for _ in $(seq 1 40); do [ -s "$out/$v.jfr" ] && break; sleep 0.5; done   # JFR writes the file when the recording ends
  kill "$server"; wait "$server" 2>/dev/null || true
  server=
  rps[$v]=$(awk '/Requests\/sec/ {print $2}' "$out/wrk-$v.txt")
  echo "== $v: ${rps[$v]} req/s"
  "$JAVA" -cp "$tools" io.cosched.bench.JfrProfile top "$out/$v.jfr" "" 25
done
echo "== where $a spends more per request than $b"
"$JAVA" -cp "$tools" io.cosched.bench.JfrProfile diff "$out/$a.jfr" "${rps[$a]}" "$out/$b.jfr" "${rps[$b]}" 40 | tee "$out/diff.txt"
echo "recordings in $out"
