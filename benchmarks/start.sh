# The start every benchmark script shares. Sourced (without arguments) right after
# `set -euo pipefail` and `cd` to the repository root: selects a JDK 21+ (.mvn/jdk.sh) as $JAVA, and
# takes a leading --quick off the caller's arguments into $quick (true or false).
. .mvn/jdk.sh
JAVA="$JAVA_HOME/bin/java"
quick=false
if [ "${1-}" = "--quick" ]; then quick=true; shift; fi
