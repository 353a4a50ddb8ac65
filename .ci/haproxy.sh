# Sourced by .ci/services.sh: installs HAProxy (Debian package haproxy) for the fleet test, which starts
# its own HAProxy with its own configuration on loopback; the package's service is not used. Exports
# COSCHED_TEST_HAPROXY, the binary's path.

ci_install_haproxy() {
  if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
    echo "ci: installing HAProxy (Debian package haproxy)"
    ci_apt_install haproxy || return 1
  fi
  local bin
  bin="$(command -v haproxy || echo /usr/sbin/haproxy)"
  [ -x "$bin" ] || { echo "ci: HAProxy did not install" >&2; return 1; }
  export COSCHED_TEST_HAPROXY="$bin"
  echo "ci: $("$bin" -v | head -n 1) at $bin"
}
