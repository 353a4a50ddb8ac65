# Sourced by .ci/run: installs and starts what the demo's tests need, from Debian's packages.
#  - PostgreSQL on 127.0.0.1, database/user/password "cosched"; exports COSCHED_TEST_POSTGRES_*.
#  - Chromium and ChromeDriver for the dashboard's browser test.
# Each step says what it did; a step that cannot be done (no root, no package) says why, and the
# tests that need it skip with a reason instead of failing.

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
  export COSCHED_TEST_POSTGRES_URL="jdbc:postgresql://127.0.0.1:$port/cosched"
  export COSCHED_TEST_POSTGRES_USER=cosched
  export COSCHED_TEST_POSTGRES_PASSWORD=cosched
  echo "ci: PostgreSQL $version on 127.0.0.1:$port, database cosched"
}

ci_install_chromium() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "ci: $(/usr/bin/chromium --version 2>/dev/null | head -n 1) and chromedriver present"; return 0
  fi
  echo "ci: installing Chromium and ChromeDriver (Debian packages chromium, chromium-driver)"
  ci_apt_install chromium chromium-driver
}

ci_start_postgres || echo "ci: no PostgreSQL; the real-database tests will skip" >&2
ci_install_chromium || echo "ci: no Chromium; the browser test will skip" >&2
