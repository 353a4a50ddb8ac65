# Redis on 127.0.0.1 from Debian's packages, for the tests of Redis on the loop (.ci/services.sh) and
# the benchmark. Sourcing it defines ci_start_redis, which installs the server when it is missing and
# starts one of its own (not the Debian service: a configuration of ours, a password, TLS on a second
# port with a self-signed certificate); it exports COSCHED_TEST_REDIS_URL (redis://, password in it),
# COSCHED_TEST_REDIS_TLS_URL (rediss://, when TLS could be set up) and _RESTART, the command that
# restarts the server. It also starts a Sentinel (redis-server in Sentinel mode, from the same package)
# that monitors that server as master "cosched", and exports COSCHED_TEST_REDIS_SENTINEL (host:port);
# and a master with a replica of its own (ports 6392 and 6393) that the same Sentinel watches as master
# "cosched-ha", for the failover test: COSCHED_TEST_REDIS_FAILOVER_MASTER=cosched-ha.
# Needs root or passwordless sudo to install, and ci_apt_install from postgres.sh.

COSCHED_REDIS_DIR=/var/lib/cosched-redis
COSCHED_REDIS_PORT=6390
COSCHED_REDIS_TLS_PORT=6391
COSCHED_REDIS_SENTINEL_PORT=26390
COSCHED_REDIS_HA_PORTS="6392 6393"

ci_start_redis() {
  if ! command -v redis-server >/dev/null; then
    echo "ci: installing Redis (Debian package redis-server)"
    ci_apt_install redis-server || return 1
  fi
  mkdir -p "$COSCHED_REDIS_DIR" || return 1
  local conf="$COSCHED_REDIS_DIR/redis.conf" tls=""
  if [ ! -f "$COSCHED_REDIS_DIR/server.crt" ] && command -v openssl >/dev/null; then
    openssl req -new -x509 -days 3650 -nodes -subj "/CN=localhost" \
      -keyout "$COSCHED_REDIS_DIR/server.key" -out "$COSCHED_REDIS_DIR/server.crt" >/dev/null 2>&1
  fi
  if [ -f "$COSCHED_REDIS_DIR/server.crt" ]; then
    tls="tls-port $COSCHED_REDIS_TLS_PORT
tls-cert-file $COSCHED_REDIS_DIR/server.crt
tls-key-file $COSCHED_REDIS_DIR/server.key
tls-auth-clients no"
  fi
  cat > "$conf" <<CONF
bind 127.0.0.1
port $COSCHED_REDIS_PORT
requirepass cosched
save ""
appendonly no
dir $COSCHED_REDIS_DIR
pidfile $COSCHED_REDIS_DIR/redis.pid
logfile $COSCHED_REDIS_DIR/redis.log
daemonize yes
$tls
CONF
  if ! redis-cli -p "$COSCHED_REDIS_PORT" -a cosched --no-auth-warning ping >/dev/null 2>&1; then
    redis-server "$conf" >/dev/null 2>&1 || true
  fi
  local i
  for i in $(seq 1 30); do
    redis-cli -p "$COSCHED_REDIS_PORT" -a cosched --no-auth-warning ping >/dev/null 2>&1 && break
    sleep 0.2
  done
  if ! redis-cli -p "$COSCHED_REDIS_PORT" -a cosched --no-auth-warning ping >/dev/null 2>&1; then
    echo "ci: Redis did not start ($COSCHED_REDIS_DIR/redis.log)" >&2; return 1
  fi
  export COSCHED_TEST_REDIS_URL="redis://:cosched@127.0.0.1:$COSCHED_REDIS_PORT"
  if [ -n "$tls" ]; then
    export COSCHED_TEST_REDIS_TLS_URL="rediss://:cosched@127.0.0.1:$COSCHED_REDIS_TLS_PORT"
  fi
  # the same configuration, the same ports: a restart the tests can wait through
  export COSCHED_TEST_REDIS_RESTART="redis-cli -p $COSCHED_REDIS_PORT -a cosched --no-auth-warning shutdown nosave; redis-server $conf"
  echo "ci: $(redis-server --version | awk '{print $1" "$2" "$3}') on 127.0.0.1:$COSCHED_REDIS_PORT${tls:+ (TLS on $COSCHED_REDIS_TLS_PORT)}"
  if ci_start_redis_sentinel; then
    ci_start_redis_replicated || echo "ci: no replicated Redis for Sentinel ($COSCHED_REDIS_DIR/ha-*.log); the failover test will skip" >&2
  else
    echo "ci: no Redis Sentinel ($COSCHED_REDIS_DIR/sentinel.log); its tests will skip" >&2
  fi
}

# A Sentinel watching the server above as master "cosched": it answers where the master is, which is
# what Spring Data Redis asks it. Sentinel rewrites its file with what it learns, so the file is written
# only when no Sentinel runs. No replica: a master that goes away (the restart test) stays the master.
ci_start_redis_sentinel() {
  local conf="$COSCHED_REDIS_DIR/sentinel.conf" i
  if ! redis-cli -p "$COSCHED_REDIS_SENTINEL_PORT" ping >/dev/null 2>&1; then
    cat > "$conf" <<CONF
bind 127.0.0.1
port $COSCHED_REDIS_SENTINEL_PORT
daemonize yes
dir $COSCHED_REDIS_DIR
pidfile $COSCHED_REDIS_DIR/sentinel.pid
logfile $COSCHED_REDIS_DIR/sentinel.log
sentinel monitor cosched 127.0.0.1 $COSCHED_REDIS_PORT 1
sentinel auth-pass cosched cosched
sentinel down-after-milliseconds cosched 5000
CONF
    redis-server "$conf" --sentinel >/dev/null 2>&1 || return 1
  fi
  for i in $(seq 1 30); do
    [ "$(redis-cli -p "$COSCHED_REDIS_SENTINEL_PORT" sentinel get-master-addr-by-name cosched 2>/dev/null | tail -n 1)" = "$COSCHED_REDIS_PORT" ] && break
    sleep 0.2
  done
  [ "$(redis-cli -p "$COSCHED_REDIS_SENTINEL_PORT" sentinel get-master-addr-by-name cosched 2>/dev/null | tail -n 1)" = "$COSCHED_REDIS_PORT" ] || return 1
  export COSCHED_TEST_REDIS_SENTINEL="127.0.0.1:$COSCHED_REDIS_SENTINEL_PORT"
  echo "ci: Redis Sentinel on $COSCHED_TEST_REDIS_SENTINEL, master cosched"
}

# Two more servers, the second a replica of the first, watched by the Sentinel above as master
# "cosched-ha": what the failover test promotes. A server's file is written only when it does not run
# (after a failover the servers have rewritten theirs: the replica is the master now), and the Sentinel
# is told to watch whichever of the two is the master. Called after ci_start_redis_sentinel.
ci_start_redis_replicated() {
  local port conf i master=""
  for port in $COSCHED_REDIS_HA_PORTS; do
    conf="$COSCHED_REDIS_DIR/ha-$port.conf"
    if ! redis-cli -p "$port" -a cosched --no-auth-warning ping >/dev/null 2>&1; then
      if [ ! -f "$conf" ]; then
        cat > "$conf" <<CONF
bind 127.0.0.1
port $port
requirepass cosched
masterauth cosched
save ""
appendonly no
dir $COSCHED_REDIS_DIR
dbfilename ha-$port.rdb
pidfile $COSCHED_REDIS_DIR/ha-$port.pid
logfile $COSCHED_REDIS_DIR/ha-$port.log
daemonize yes
CONF
        # the first port starts as the master, the others as its replicas
        [ "$port" = "${COSCHED_REDIS_HA_PORTS%% *}" ] || echo "replicaof 127.0.0.1 ${COSCHED_REDIS_HA_PORTS%% *}" >> "$conf"
      fi
      redis-server "$conf" >/dev/null 2>&1 || return 1
    fi
  done
  local info
  for i in $(seq 1 50); do
    for port in $COSCHED_REDIS_HA_PORTS; do
      info=$(redis-cli -p "$port" -a cosched --no-auth-warning info replication 2>/dev/null)
      if grep -q '^role:master' <<< "$info" && grep -q '^connected_slaves:1' <<< "$info"; then
        master=$port
      fi
    done
    [ -n "$master" ] && break
    sleep 0.2
  done
  [ -n "$master" ] || return 1
  local sentinel=(redis-cli -p "$COSCHED_REDIS_SENTINEL_PORT")
  if [ "$("${sentinel[@]}" sentinel get-master-addr-by-name cosched-ha 2>/dev/null | tail -n 1)" != "$master" ]; then
    "${sentinel[@]}" sentinel remove cosched-ha >/dev/null 2>&1 || true
    "${sentinel[@]}" sentinel monitor cosched-ha 127.0.0.1 "$master" 1 >/dev/null || return 1
    "${sentinel[@]}" sentinel set cosched-ha auth-pass cosched down-after-milliseconds 5000 failover-timeout 10000 >/dev/null || return 1
  fi
  # the Sentinel learns of the replica from the master's INFO, which it asks for every 10 s at first
  for i in $(seq 1 150); do
    "${sentinel[@]}" sentinel replicas cosched-ha 2>/dev/null | grep -qx 'slave' && break
    sleep 0.2
  done
  "${sentinel[@]}" sentinel replicas cosched-ha 2>/dev/null | grep -qx 'slave' || return 1
  export COSCHED_TEST_REDIS_FAILOVER_MASTER=cosched-ha
  echo "ci: Redis master cosched-ha on 127.0.0.1:$master with a replica, watched by the Sentinel"
}
