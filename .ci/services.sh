# Sourced by .ci/run: installs and starts what the demo's tests need, from Debian's packages.
#  - PostgreSQL on 127.0.0.1, database/user/password "cosched", TLS on (a self-signed certificate for
#    sslmode=require); exports COSCHED_TEST_POSTGRES_URL/_USER/_PASSWORD, and _RESTART, the command
#    that restarts the server (for the tests of a restart under load).
#  - MariaDB on 127.0.0.1, database/user/password "cosched", TLS on; exports COSCHED_TEST_MARIADB_URL/
#    _USER/_PASSWORD/_RESTART, for the MariaDB and MySQL drivers' tests (.ci/mariadb.sh).
#  - Redis on 127.0.0.1 (port 6390, password "cosched", TLS on 6391), a Sentinel (26390), a master with a
#    replica (6392, 6393); exports COSCHED_TEST_REDIS_URL/_TLS_URL/_RESTART/_SENTINEL/_FAILOVER_MASTER, for
#    the Redis tests (.ci/redis.sh).
#  - HAProxy (the binary only) for the fleet test; exports COSCHED_TEST_HAPROXY (.ci/haproxy.sh).
#  - Chromium and ChromeDriver for the dashboard's browser test.
# Each step says what it did; a step that cannot be done (no root, no package) says why, and the
# tests that need it skip with a reason instead of failing.

. "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
. "$(dirname "${BASH_SOURCE[0]}")/mariadb.sh"
. "$(dirname "${BASH_SOURCE[0]}")/redis.sh"
. "$(dirname "${BASH_SOURCE[0]}")/haproxy.sh"

ci_install_chromium() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "ci: $(/usr/bin/chromium --version 2>/dev/null | head -n 1) and chromedriver present"; return 0
  fi
  echo "ci: installing Chromium and ChromeDriver (Debian packages chromium, chromium-driver)"
  ci_apt_install chromium chromium-driver
}

ci_start_postgres || echo "ci: no PostgreSQL; the real-database tests will skip" >&2
ci_start_mariadb || echo "ci: no MariaDB; the MariaDB and MySQL driver tests will skip" >&2
ci_start_redis || echo "ci: no Redis; the Redis tests against a real server will skip" >&2
ci_install_haproxy || echo "ci: no HAProxy; the fleet test will skip" >&2
ci_install_chromium || echo "ci: no Chromium; the browser test will skip" >&2
