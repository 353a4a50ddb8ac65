#!/usr/bin/env bash
# synchronized against ReentrantLock in a handler: GET /lock?kind=monitor|reentrant&holdMs=1 holds one lock of the
# application's across a 1 ms call, at a fixed rate below what the lock lets through, so that requests often wait on
# each other. Per kind: the server's CPU and context switches per request, p50/p99, and who resumed the coroutines
# (cosched's own counts: local, remote and monitor wake-ups per request, GET /wakeups around the window).
#
#   benchmarks/locks.sh                        3 rounds, both kinds, cosched on one loop and on two (about 15 min)
#   LOCKS_RATE=300 LOCKS_ROUNDS=3 LOCKS_VARIANTS="cosched" benchmarks/locks.sh
#
# Kinds interleaved, fresh JVM each, each round starting with the other kind; per run 20 s at the rate not counted
# (JIT), then LoadGen's 5 s lead-in and 30 s counted. Results: benchmarks/results/locks-<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/start.sh
. benchmarks/http-common.sh

rate=${LOCKS_RATE:-300}
rounds=${LOCKS_ROUNDS:-3}
secs=30
variant_names=${LOCKS_VARIANTS:-cosched cosched-2loops}
[ -n "${LOCKS_NO_BUILD-}" ] || bench_build
if curl -s -o /dev/null "localhost:18080/"; then echo "locks: port 18080 is taken" >&2; exit 1; fi

out="benchmarks/results/locks-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "jdk: $("$JAVA" -version 2>&1 | head -n 1)"
  echo "command: benchmarks/locks.sh LOCKS_RATE=$rate LOCKS_ROUNDS=$rounds LOCKS_VARIANTS=\"$variant_names\""
} | tee "$out/machine.txt"

server=
cleanup() { [ -n "$server" ] && kill -9 "$server" 2>/dev/null; true; }
trap cleanup EXIT

echo "round,variant,kind,rps,p50_ms,p99_ms,failed,ok,cpu_us_per_req,cs_per_req,steal_pct,local_per_req,remote_per_req,monitor_per_req" > "$out/runs.csv"
kinds=(monitor reentrant)
for round in $(seq 1 "$rounds"); do
  for variant in $variant_names; do
    for k in 0 1; do
      kind=${kinds[$(( (k + round) % 2 ))]}
      path="/lock?kind=$kind&holdMs=1"
      echo "== round $round, $variant, $kind"
      bench_start "$variant" "$out/server-$variant-$kind-$round.log"
      bench_fixed_rate "$path" "$rate" 20 50 "$out/warm-$variant-$kind-$round.json" > /dev/null
      w0=$(curl -s -f localhost:18080/wakeups || echo "0 0 0")
      row=$(bench_fixed_rate "$path" "$rate" "$secs" 50 "$out/loadgen-$variant-$kind-$round.json")
      w1=$(curl -s -f localhost:18080/wakeups || echo "0 0 0")
      kill "$server"; wait "$server" 2>/dev/null || true; server=
      # the wake-ups over LoadGen's whole run (5 s lead-in and the counted part), per request due in it
      wk=$(awk -v a="$w0" -v b="$w1" -v n="$((rate * (secs + 5)))" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        printf "%.3f,%.3f,%.3f", (y[1] - x[1]) / n, (y[2] - x[2]) / n, (y[3] - x[3]) / n }')
      echo "$round,$variant,$kind,$row,$wk" | tee -a "$out/runs.csv"
    done
  done
done

python3 - "$out/runs.csv" > "$out/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| variant | kind | CPU us/req | switches/req | p50 ms | p99 ms | wake-ups/req local, remote, monitor |")
print("|---|---|---|---|---|---|---|")
def cell(xs):
    xs = sorted(float(x) for x in xs)
    return f"{statistics.median(xs):g} [{', '.join(f'{x:g}' for x in xs)}]"
for v in dict.fromkeys(r["variant"] for r in rows):
    for k in ("monitor", "reentrant"):
        rs = [r for r in rows if r["variant"] == v and r["kind"] == k]
        if not rs:
            continue
        wk = ", ".join(f"{statistics.median(float(r[c]) for r in rs):.2f}" for c in ("local_per_req", "remote_per_req", "monitor_per_req"))
        print(f"| {v} | {k} | {cell(r['cpu_us_per_req'] for r in rs)} | {cell(r['cs_per_req'] for r in rs)} | "
              f"{cell(r['p50_ms'] for r in rs)} | {cell(r['p99_ms'] for r in rs)} | {wk} |")
EOF
cat "$out/summary.md"
tar czf "$out/logs.tgz" -C "$out" $(cd "$out" && ls | grep -E '\.log$') && (cd "$out" && rm -f -- *.log)
echo "results: $out/summary.md"
