# Redis on 127.0.0.1 from Debian's packages, for the tests of Redis on the loop (.ci/services.sh) and
# the benchmark. Sourcing it defines ci_start_redis, which installs the server when it is missing and
# starts one of its own (not the Debian service: a configuration of ours, a password, TLS on a second
# port with a self-signed certificate); it exports COSCHED_TEST_REDIS_URL (redis://, password in it),
# COSCHED_TEST_REDIS_TLS_URL (rediss://, when TLS could be set up) and _RESTART, the command that
# restarts the server. It also starts a Sentinel (redis-server in Sentinel mode, from the same package)
# that monitors that server as master "cosched", and exports COSCHED_TEST_REDIS_SENTINEL (host:port).
# Needs root or passwordless sudo to install, and ci_apt_install from postgres.sh.

COSCHED_REDIS_DIR=/var/lib/cosched-redis
COSCHED_REDIS_PORT=6390
COSCHED_REDIS_TLS_PORT=6391
COSCHED_REDIS_SENTINEL_PORT=26390

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
  ci_start_redis_sentinel || echo "ci: no Redis Sentinel ($COSCHED_REDIS_DIR/sentinel.log); its test will skip" >&2
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
