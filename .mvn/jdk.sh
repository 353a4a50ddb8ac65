# Selects a JDK 21+ for cosched's build and scripts. POSIX sh; sourced by ./mvnw,
# .ci/run and the benchmark scripts so they all agree on one rule:
#   1. JAVA_HOME, when it points at a JDK 21 or newer;
#   2. else the newest JDK 21+ found under /usr/lib/jvm, /usr/java, ~/.sdkman or
#      /Library/Java/JavaVirtualMachines (exported as JAVA_HOME, reported on stderr);
#   3. else nothing is changed and the Maven enforcer stops the build with a message.

cosched_jdk_major() {
  # prints the feature release of the JDK at $1 (e.g. 25), or nothing
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  if [ -f "$1/release" ]; then
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" | sed 's/^1$//'
  else
    "$1/bin/java" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1
  fi
}

cosched_select_jdk() {
  cosched_min=21
  if [ -n "${JAVA_HOME-}" ]; then
    cosched_v=$(cosched_jdk_major "$JAVA_HOME")
    if [ -n "$cosched_v" ] && [ "$cosched_v" -ge "$cosched_min" ]; then
      return 0
    fi
  fi
  cosched_best=
  cosched_best_v=0
  cosched_restore_f=false
  case $- in *f*) cosched_restore_f=true; set +f ;; esac
  for cosched_dir in /usr/lib/jvm/* /usr/java/* "${HOME-}"/.sdkman/candidates/java/* \
      /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -d "$cosched_dir" ] || continue
    [ -L "$cosched_dir" ] && continue
    cosched_v=$(cosched_jdk_major "$cosched_dir")
    if [ -n "$cosched_v" ] && [ "$cosched_v" -ge "$cosched_min" ] && [ "$cosched_v" -gt "$cosched_best_v" ]; then
      cosched_best=$cosched_dir
      cosched_best_v=$cosched_v
    fi
  done
  if $cosched_restore_f; then set -f; fi
  if [ -n "$cosched_best" ]; then
    if [ -n "${JAVA_HOME-}" ]; then
      echo "cosched: JAVA_HOME=$JAVA_HOME is older than JDK $cosched_min; using JDK $cosched_best_v at $cosched_best" >&2
    elif [ -z "${COSCHED_QUIET_JDK-}" ]; then
      echo "cosched: using JDK $cosched_best_v at $cosched_best" >&2
    fi
    JAVA_HOME=$cosched_best
    export JAVA_HOME
  fi
}

cosched_select_jdk
