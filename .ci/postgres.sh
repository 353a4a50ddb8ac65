# PostgreSQL on 127.0.0.1 from Debian's packages, for the tests (.ci/services.sh) and the benchmark
# (benchmarks/run.sh). Sourcing it defines ci_start_postgres, which installs the server when it is
# missing, starts the cluster, creates database/user/password "cosched" and switches TLS on (a
# self-signed certificate, for sslmode=require); it exports COSCHED_TEST_POSTGRES_URL/_USER/_PASSWORD
# and _RESTART, the command that restarts the server. Needs root or passwordless sudo.

ci_apt_install() {
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "ci: cannot install $* (not root, no passwordless sudo)" >&2; return 1; fi
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive $sudo apt-get update -q >/dev/null 2>&1 \
         && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" >/dev/null; }
}

ci_start_postgres() {
  if ! command -v pg_lsclusters >/dev/null || [ -z "$(ls /usr/lib/postgresql 2>/dev/null)" ]; then
    echo "ci: installing PostgreSQL (Debian package postgresql)"
    ci_apt_install postgresql || return 1
  fi
  local version
  version="$(ls /usr/lib/postgresql | sort -n | tail -n 1)"
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
    pg_createcluster "$version" main >/dev/null
  fi
  pg_ctlcluster "$version" main start 2>/dev/null || true
  local port
  port="$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')"
  if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' | grep -q online; then
    echo "ci: PostgreSQL $version did not start" >&2; return 1
  fi
  su postgres -c "psql -q -p $port -v ON_ERROR_STOP=1" >/dev/null <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cosched') THEN
    CREATE ROLE cosched LOGIN PASSWORD 'cosched';
  END IF;
END $$;
SQL
  if ! su postgres -c "psql -p $port -tAc \"SELECT 1 FROM pg_database WHERE datname = 'cosched'\"" | grep -q 1; then
    su postgres -c "createdb -p $port -O cosched cosched"
  fi
  ci_postgres_tls "$port"
  export COSCHED_TEST_POSTGRES_URL="jdbc:postgresql://127.0.0.1:$port/cosched"
  export COSCHED_TEST_POSTGRES_USER=cosched
  export COSCHED_TEST_POSTGRES_PASSWORD=cosched
  export COSCHED_TEST_POSTGRES_RESTART="pg_ctlcluster $version main restart"
  echo "ci: PostgreSQL $version on 127.0.0.1:$port, database cosched"
}

# TLS for sslmode=require: a self-signed certificate in the data directory, switched on by a reload.
ci_postgres_tls() {
  local port=$1 data
  if [ "$(su postgres -c "psql -p $port -tAc 'SHOW ssl'")" = on ]; then return 0; fi
  if ! command -v openssl >/dev/null; then echo "ci: no openssl; PostgreSQL stays without TLS" >&2; return 0; fi
  data="$(su postgres -c "psql -p $port -tAc 'SHOW data_directory'")"
  openssl req -new -x509 -days 3650 -nodes -subj "/CN=localhost" \
    -keyout "$data/cosched-server.key" -out "$data/cosched-server.crt" >/dev/null 2>&1
  chown postgres:postgres "$data/cosched-server.key" "$data/cosched-server.crt"
  chmod 600 "$data/cosched-server.key"
  su postgres -c "psql -q -p $port -v ON_ERROR_STOP=1" >/dev/null <<SQL
ALTER SYSTEM SET ssl_cert_file = '$data/cosched-server.crt';
ALTER SYSTEM SET ssl_key_file = '$data/cosched-server.key';
ALTER SYSTEM SET ssl = on;
SELECT pg_reload_conf();
SQL
  echo "ci: PostgreSQL TLS on (self-signed certificate)"
}
