# The HTTP benchmark's servers, variants and pinning, sourced by benchmarks/run.sh, profile.sh,
# service.sh and lean-route.sh (after .mvn/jdk.sh, from the repository root), so that a profile runs a
# variant exactly as the benchmark does. Defines:
#   bench_need_wrk           installs wrk (Debian package) when it is missing
#   bench_build              builds both servers and the tools jar
#   bench_variants           "name|jar|extra JVM flags|application arguments", in run order; with
#                            BENCH_BASELINE_APP=<jar> (a WebFlux benchmark server built from another commit)
#                            also "cosched-baseline", that jar run as the cosched variant is, for before/after
#                            comparisons in one interleaved run
#   bench_spec NAME          prints variant NAME's line of bench_variants; fails, listing the names, if unknown
#   bench_start NAME LOG [ARGS]  starts variant NAME on port 18080 (ARGS: more application arguments),
#                            its pid in $server; fails if it does not answer
#   bench_need_postgres      starts PostgreSQL on loopback (Debian package) unless COSCHED_TEST_POSTGRES_URL
#                            is set, creates the benchmark's table there, and fills bench_pg_args: the
#                            arguments that point a server at it
#   bench_need_mariadb       the same for MariaDB (COSCHED_TEST_MARIADB_URL, bench_my_args; bench_mx_args: the
#                            same server through MySQL Connector/J)
#   bench_need_redis         Redis from .ci/redis.sh with the key bench:item set (bench_rd_args)
#   bench_ctxt PID           context switches of process PID so far, voluntary and not, over all its threads
#   bench_cpu_ticks PID      CPU time of process PID so far (utime + stime, /proc/PID/stat fields 14 and 15), in clock ticks
#   bench_jit_ticks PID      the part of it spent by the JIT's compiler threads ("C1/C2 CompilerThre..."), in clock ticks
#   bench_steal_ticks / bench_total_ticks   the host's steal time and all its CPU time so far (/proc/stat), in ticks
#   bench_received_bytes     the bytes the server has received so far over the connections open to port 18080
#                            (the kernel's tcp_info, read with ss): wrk sends the same request over and over, so
#                            their difference over a window, divided by the request's size, counts the requests
#                            the server took in that window, for any server, without a counter of its own
#   bench_fixed_rate PATH RATE SECONDS CONNECTIONS JSON [HEADER]   LoadGen against $server on port 18080 at RATE
#                            requests/s over CONNECTIONS, 5 s not counted then SECONDS; latency counted from when
#                            each request was due, the server's CPU time and context switches read by LoadGen from
#                            1 s before the counted part (reading /proc holds LoadGen's loop 30-70 ms, kept out of
#                            the latency) to its end and divided by the requests due then (the reconnection after wrk
#                            and the JIT's recompiling that follows fall in the 5 s); LoadGen's JSON line to file
#                            JSON; prints "rps,p50_ms,p99_ms,failed,ok,cpu_us_per_req,cs_per_req,steal_pct"; with
#                            BENCH_LATENCY_LOG=1 every answer's due time and latency to JSON's name with .latency.csv;
#                            with BENCH_SYSCALLS=1 the server's system calls and switches per request over the counted
#                            part (perf's tracepoints, started when LoadGen's 5 s lead-in ends) to JSON's name with
#                            .syscalls.txt (io.cosched.bench.SyscallCounts): which calls a request costs below saturation
#   bench_pin_to_load NAME.. the databases' processes (pgrep -x NAME) to the load core
#   on_server / on_load      the taskset prefixes: server on core 0, wrk and the stub on core 1

bench_loops=1   # the server has one core; every variant gets as many event loops (Reactor Netty's default would be 4)
bench_webflux_app=benchmarks/http-app/target/cosched-bench-http-app-0.1.0-SNAPSHOT.jar
bench_mvc_app=benchmarks/http-mvc-app/target/cosched-bench-http-mvc-app-0.1.0-SNAPSHOT.jar
bench_actuator_app=benchmarks/http-app-actuator/target/cosched-bench-http-app-actuator-0.1.0-SNAPSHOT.jar
bench_helidon_app=benchmarks/http-helidon-app/target/cosched-bench-http-helidon-app-0.1.0-SNAPSHOT.jar
bench_micronaut_app=benchmarks/http-micronaut-app/target/cosched-bench-http-micronaut-app-0.1.0-SNAPSHOT.jar
bench_tools=benchmarks/target/benchmarks.jar
# Reactor Netty's connection pools (the reactive variant's WebClient, Boot's RestClient factory on Spring's
# virtual threads) default to 500 connections and 1,000 waiting: at 2,000 server connections they refused
# the rest with PoolAcquirePendingLimitException, a 500 and a logged stack each, where cosched's client
# opens what it needs. The peers get as many downstream connections as the scenario has clients.
bench_common_jvm=(-Xms1g -Xmx1g -XX:+UseG1GC --enable-native-access=ALL-UNNAMED "-Dreactor.netty.ioWorkerCount=$bench_loops"
  -Dreactor.netty.pool.maxConnections=4000)
# BENCH_JVM_EXTRA: more flags for every server JVM, for a look inside a run (GC logging, a JFR recording from the
# start); %p in a file name is the server's pid. Figures from such a run are not comparable with the others.
# shellcheck disable=SC2206
bench_common_jvm+=(${BENCH_JVM_EXTRA-})
# bench_pick WHAT NAMES SPEC...: the specs ("name|...") that the space-separated NAMES name (all when NAMES is
# empty), one a line; fails naming WHAT and the names it knows when NAMES names none of them
bench_pick() {
  local what=$1 names=$2 s found=false
  shift 2
  for s in "$@"; do
    if [ -z "$names" ] || [[ " $names " == *" ${s%%|*} "* ]]; then printf '%s\n' "$s"; found=true; fi
  done
  $found || { echo "bench: $what ($names) names none of: ${*%%|*}" >&2; return 1; }
}
bench_variants=(
  "cosched|webflux|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=$bench_loops"
  "cosched-2loops|webflux|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=2"
  "cosched-actuator|actuator|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=$bench_loops"
  "cosched-actuator-noobs|actuator|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=$bench_loops --management.observations.enable.http.server.requests=false"
  "cosched-fallback|webflux||--bench.variant=cosched --cosched.io.threads=$bench_loops"
  "cosched-reactor-client|webflux|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=$bench_loops --cosched.web-client.loop-client=false"
  "reactive|webflux||--bench.variant=reactive --cosched.enabled=false"
  "elastic|webflux||--bench.variant=elastic --cosched.enabled=false"
  "virtual-threads|webflux||--bench.variant=virtual --cosched.enabled=false --spring.threads.virtual.enabled=true"
  "virtual-threads-sts|webflux|--enable-preview|--bench.variant=virtual --bench.fanout=structured --cosched.enabled=false --spring.threads.virtual.enabled=true"
  "virtual-threads-actuator|actuator||--bench.variant=virtual --cosched.enabled=false --spring.threads.virtual.enabled=true"
  "mvc-virtual-threads|mvc||"
  "helidon|helidon||"
  "micronaut-loom|micronaut|--add-opens java.base/java.lang=ALL-UNNAMED|"
)
if [ -n "${BENCH_BASELINE_APP-}" ]; then
  [ -f "$BENCH_BASELINE_APP" ] || { echo "bench: BENCH_BASELINE_APP=$BENCH_BASELINE_APP is not a file (expected: a copy of $bench_webflux_app built from another commit)" >&2; exit 1; }
  bench_variants+=("cosched-baseline|baseline|--add-opens java.base/java.lang=ALL-UNNAMED|--bench.variant=cosched --cosched.io.threads=$bench_loops")
fi

server_core=0; load_core=1
if [ "$(nproc)" -lt 2 ]; then load_core=0; fi
# taskset execs its command, so a process started as `"${on_server[@]}" java ... &` has the JVM's pid in $!
if command -v taskset >/dev/null; then
  on_server=(taskset -c "$server_core"); on_load=(taskset -c "$load_core")
else
  on_server=(); on_load=()
fi

bench_need_wrk() {
  command -v wrk >/dev/null && return 0
  echo "bench: installing wrk (Debian package)"
  if [ "$(id -u)" = 0 ]; then apt-get install -y -q wrk >/dev/null; else sudo apt-get install -y -q wrk >/dev/null; fi
}

bench_build() {
  # Without the old jars: the jar plugin keeps a jar whose module did not change (here: a repackaged
  # one), and Spring Boot's repackage skips a jar that is already repackaged, so a change to cosched
  # itself would silently not reach the servers.
  rm -f "$bench_webflux_app" "$bench_mvc_app" "$bench_actuator_app" "$bench_helidon_app" "$bench_micronaut_app"
  ./mvnw -q -B -pl benchmarks,benchmarks/http-app,benchmarks/http-mvc-app,benchmarks/http-app-actuator,benchmarks/http-helidon-app,benchmarks/http-micronaut-app \
    -am package -DskipTests
}

bench_spec() {
  local spec
  for spec in "${bench_variants[@]}"; do
    if [ "${spec%%|*}" = "$1" ]; then echo "$spec"; return 0; fi
  done
  echo "bench: unknown variant '$1' (expected one of: $(printf '%s ' "${bench_variants[@]%%|*}"))" >&2
  return 1
}

bench_start() {
  local spec name jar jvm args app log=$2
  spec=$(bench_spec "$1") || return 1
  shift 2
  IFS='|' read -r name jar jvm args <<< "$spec"
  case $jar in
    mvc) app=$bench_mvc_app ;;
    actuator) app=$bench_actuator_app ;;
    helidon) app=$bench_helidon_app ;;
    micronaut) app=$bench_micronaut_app ;;
    baseline) app=$BENCH_BASELINE_APP ;;
    *) app=$bench_webflux_app ;;
  esac
  # shellcheck disable=SC2086
  "${on_server[@]}" "$JAVA" "${bench_common_jvm[@]}" $jvm -jar "$app" --server.port=18080 \
    --bench.downstream-url=http://127.0.0.1:18099/ $args "$@" > "$log" 2>&1 &
  server=$!
  for _ in $(seq 1 120); do curl -sf localhost:18080/hello >/dev/null && break; sleep 0.5; done
  if ! kill -0 "$server" 2>/dev/null; then echo "bench: $name did not start, see $log" >&2; return 1; fi
}

# bench_pin_to_load NAME...: moves every thread of the local processes named NAME (the databases the harness started)
# to the load core, so that the server's core runs the server alone, as a database on another machine would leave it:
# left to the kernel, a backend woken by the server's query lands on the server's core when that core idles (below
# saturation), and its work and cache misses land in the server's figures
bench_pin_to_load() {
  command -v taskset >/dev/null || return 0
  local name p
  for name in "$@"; do
    for p in $(pgrep -x "$name" || true); do taskset -a -p -c "$load_core" "$p" >/dev/null 2>&1 || true; done
  done
}

bench_need_postgres() {
  if [ -z "${COSCHED_TEST_POSTGRES_URL-}" ]; then
    . .ci/postgres.sh
    ci_start_postgres || { echo "bench: no PostgreSQL (see above)" >&2; return 1; }
  fi
  bench_pin_to_load postgres
  local user=${COSCHED_TEST_POSTGRES_USER:-cosched} password=${COSCHED_TEST_POSTGRES_PASSWORD:-cosched}
  local hostport=${COSCHED_TEST_POSTGRES_URL#jdbc:postgresql://}; hostport=${hostport%%/*}
  local db=${COSCHED_TEST_POSTGRES_URL##*/}; db=${db%%\?*}
  PGPASSWORD=$password psql -q -v ON_ERROR_STOP=1 -h "${hostport%:*}" -p "${hostport##*:}" -U "$user" -d "$db" \
    -f benchmarks/postgres-items.sql > /dev/null \
    || { echo "bench: could not create the benchmark's table in $COSCHED_TEST_POSTGRES_URL" >&2; return 1; }
  # the table exists once for every server: none re-creates it at start
  bench_pg_args=("--spring.datasource.url=$COSCHED_TEST_POSTGRES_URL" "--spring.datasource.username=$user"
    "--spring.datasource.password=$password" "--spring.sql.init.mode=never")
}

bench_need_mariadb() {
  if [ -z "${COSCHED_TEST_MARIADB_URL-}" ]; then
    . .ci/postgres.sh # ci_apt_install
    . .ci/mariadb.sh
    ci_start_mariadb || { echo "bench: no MariaDB (see above)" >&2; return 1; }
  fi
  bench_pin_to_load mariadbd mysqld
  local user=${COSCHED_TEST_MARIADB_USER:-cosched} password=${COSCHED_TEST_MARIADB_PASSWORD:-cosched}
  local hostport=${COSCHED_TEST_MARIADB_URL#jdbc:mariadb://}; hostport=${hostport%%/*}
  local db=${COSCHED_TEST_MARIADB_URL##*/}; db=${db%%\?*}
  mariadb -h "${hostport%:*}" -P "${hostport##*:}" -u "$user" -p"$password" "$db" < benchmarks/mariadb-items.sql \
    || { echo "bench: could not create the benchmark's table in $COSCHED_TEST_MARIADB_URL" >&2; return 1; }
  bench_my_args=("--spring.datasource.url=$COSCHED_TEST_MARIADB_URL" "--spring.datasource.username=$user"
    "--spring.datasource.password=$password" "--spring.sql.init.mode=never")
  # the same server through MySQL Connector/J
  bench_mx_args=("--spring.datasource.url=jdbc:mysql:${COSCHED_TEST_MARIADB_URL#jdbc:mariadb:}"
    "--spring.datasource.username=$user" "--spring.datasource.password=$password" "--spring.sql.init.mode=never")
}

bench_need_redis() {
  if [ -z "${COSCHED_TEST_REDIS_URL-}" ]; then
    . .ci/postgres.sh # ci_apt_install
    . .ci/redis.sh
    ci_start_redis || { echo "bench: no Redis (see above)" >&2; return 1; }
  fi
  bench_pin_to_load redis-server
  . .ci/redis.sh # the port
  redis-cli -p "$COSCHED_REDIS_PORT" -a cosched --no-auth-warning SET bench:item "item-7" >/dev/null \
    || { echo "bench: could not set the benchmark's key in $COSCHED_TEST_REDIS_URL" >&2; return 1; }
  bench_rd_args=("--spring.data.redis.url=$COSCHED_TEST_REDIS_URL")
}

bench_cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
bench_steal_ticks() { awk '/^cpu / {print $9}' /proc/stat; }
bench_total_ticks() { awk '/^cpu / {n = 0; for (i = 2; i <= NF; i++) n += $i; print n}' /proc/stat; }

bench_jit_ticks() {
  # per thread: /proc/PID/task/TID/stat, utime and stime are fields 14 and 15 (12 and 13 after the name)
  { cat /proc/"$1"/task/*/stat 2>/dev/null || true; } \
    | awk '/\((C1|C2) CompilerThre/ {sub(/.*\) /, ""); n += $12 + $13} END {print n + 0}'
}

bench_received_bytes() {
  ss -tinH state established '( sport = :18080 )' | grep -o 'bytes_received:[0-9]*' | awk -F: '{n += $2} END {print n + 0}'
}

bench_ctxt() {
  # threads come and go while the files are read: one that is gone is simply not counted
  { cat /proc/"$1"/task/*/status 2>/dev/null || true; } | awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {n += $2} END {print n + 0}'
}

bench_fixed_rate() {
  local path=$1 rate=$2 secs=$3 conns=$4 json=$5 header=${6-} res s0 s1 t0 t1 extra=()
  [ -z "$header" ] || extra=("--header=$header")
  # BENCH_LATENCY_LOG=1: every answer's due time and latency beside the JSON (io.cosched.bench.LatencyEpisodes)
  [ "${BENCH_LATENCY_LOG:-0}" != 1 ] || extra+=("--latency-log=${json%.json}.latency.csv")
  s0=$(bench_steal_ticks); t0=$(bench_total_ticks)
  local perf_pid=
  if [ "${BENCH_SYSCALLS:-0}" = 1 ]; then
    command -v perf > /dev/null || { echo "bench: BENCH_SYSCALLS=1 needs perf (Debian package linux-perf)" >&2; return 1; }
    # LoadGen's JVM starts in well under a second and counts after its 5 s lead-in: the count starts then, on the load core
    { sleep 5.5; exec "${on_load[@]}" perf stat -x, -e 'syscalls:sys_enter_*' -e sched:sched_switch -p "$server" \
        -o "${json%.json}.perf.csv" -- sleep "$secs"; } > /dev/null 2>&1 &
    perf_pid=$!
  fi
  res=$("${on_load[@]}" "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$bench_tools" io.cosched.bench.LoadGen \
    --url=http://127.0.0.1:18080 --paths="$path" --connections="$conns" --rate="$rate" --warmup-seconds=5 \
    --seconds="$secs" --timeout-ms=10000 --server-pid="$server" --clock-ticks="$(getconf CLK_TCK)" \
    --label="$rate" "${extra[@]}" 2>&1 | tail -n 1)
  s1=$(bench_steal_ticks); t1=$(bench_total_ticks)
  echo "$res" > "$json"
  if [ -n "$perf_pid" ]; then
    wait "$perf_pid" || true
    "$JAVA" -cp "$bench_tools" io.cosched.bench.SyscallCounts "${json%.json}.perf.csv" "$(awk -v r="$rate" -v s="$secs" 'BEGIN {print r * s}')" \
      > "${json%.json}.syscalls.txt" 2>&1 || true
  fi
  awk -v r="$res" -v secs="$secs" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" '
    function num(key, from,    i, v) { i = index(from, "\"" key "\":"); if (i == 0) return ""
      v = substr(from, i + length(key) + 3); sub(/[,}].*/, "", v); return v }
    BEGIN { ok = num("ok", r) + 0; failed = num("answered", r) - ok
      n = split("timedOut lost unsent refused otherErrors", k, " "); for (i = 1; i <= n; i++) failed += num(k[i], r)
      okms = substr(r, index(r, "\"okMs\":")); i = index(r, "\"server\":"); server = i ? substr(r, i) : ""
      printf "%.1f,%s,%s,%d,%d,%s,%s,%.1f\n", ok / secs, num("p50", okms), num("p99", okms), failed, ok,
        num("cpuUsPerRequest", server), num("switchesPerRequest", server), (t1 > t0) ? 100 * (s1 - s0) / (t1 - t0) : 0 }'
}
