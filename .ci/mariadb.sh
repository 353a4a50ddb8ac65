# MariaDB on 127.0.0.1 from Debian's packages, for the tests of MariaDB and MySQL JDBC on the loop
# (.ci/services.sh) and the benchmark. Sourcing it defines ci_start_mariadb, which installs the
# server when it is missing, starts it, creates database/user/password "cosched" and switches TLS on
# (a self-signed certificate, for sslMode=trust / sslMode=REQUIRED); it exports
# COSCHED_TEST_MARIADB_URL/_USER/_PASSWORD (a jdbc:mariadb: URL; the MySQL driver's tests use the same
# host and port with jdbc:mysql:) and _RESTART, the command that restarts the server. Needs root or
# passwordless sudo, and ci_apt_install from postgres.sh.

ci_start_mariadb() {
  if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
    echo "ci: installing MariaDB (Debian package mariadb-server)"
    ci_apt_install mariadb-server || return 1
  fi
  ci_mariadb_tls
  if ! mariadb-admin ping >/dev/null 2>&1; then
    service mariadb start >/dev/null 2>&1 || service mariadb restart >/dev/null 2>&1 || true
  fi
  local i
  for i in $(seq 1 30); do
    mariadb-admin ping >/dev/null 2>&1 && break
    sleep 1
  done
  if ! mariadb-admin ping >/dev/null 2>&1; then
    echo "ci: MariaDB did not start" >&2; return 1
  fi
  mariadb -u root >/dev/null <<'SQL'
CREATE DATABASE IF NOT EXISTS cosched;
CREATE USER IF NOT EXISTS 'cosched'@'127.0.0.1' IDENTIFIED BY 'cosched';
CREATE USER IF NOT EXISTS 'cosched'@'localhost' IDENTIFIED BY 'cosched';
GRANT ALL ON cosched.* TO 'cosched'@'127.0.0.1';
GRANT ALL ON cosched.* TO 'cosched'@'localhost';
-- KILL QUERY of another connection of the same user needs no more; PROCESS lets the tests see them
GRANT PROCESS ON *.* TO 'cosched'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
  local port
  port="$(mariadb -u root -N -e 'SELECT @@port' 2>/dev/null)"
  export COSCHED_TEST_MARIADB_URL="jdbc:mariadb://127.0.0.1:${port:-3306}/cosched"
  export COSCHED_TEST_MARIADB_USER=cosched
  export COSCHED_TEST_MARIADB_PASSWORD=cosched
  export COSCHED_TEST_MARIADB_RESTART="service mariadb restart"
  echo "ci: $(mariadb -u root -N -e 'SELECT VERSION()' 2>/dev/null) on 127.0.0.1:${port:-3306}, database cosched"
}

# TLS: a self-signed certificate and a configuration file that names it, read at the next start.
ci_mariadb_tls() {
  local dir=/etc/mysql/cosched-tls conf=/etc/mysql/mariadb.conf.d/99-cosched.cnf
  [ -f "$conf" ] && return 0
  if ! command -v openssl >/dev/null; then echo "ci: no openssl; MariaDB stays without TLS" >&2; return 0; fi
  mkdir -p "$dir"
  openssl req -new -x509 -days 3650 -nodes -subj "/CN=localhost" \
    -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1
  chown -R mysql:mysql "$dir" 2>/dev/null || true
  chmod 600 "$dir/server.key"
  cat > "$conf" <<CNF
[mariadbd]
bind-address = 127.0.0.1
ssl-cert = $dir/server.crt
ssl-key = $dir/server.key
max_connections = 300
CNF
  # a server that runs already reads it at its restart
  if mariadb-admin ping >/dev/null 2>&1; then service mariadb restart >/dev/null 2>&1 || true; fi
  echo "ci: MariaDB TLS on (self-signed certificate)"
}
