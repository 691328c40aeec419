#!/bin/sh
# Runs the C unit test binaries given as arguments, TEST_JOBS (default 2) at a
# time: each is single-threaded host work plus small compiles, so two share
# two cores. Each binary's output is kept and printed whole, in the order
# given; the script fails if any binary fails (all of them still run).
set -u
jobs=${TEST_JOBS:-2}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c '
  log="$1/$(basename "$2").log"
  if "$2" > "$log" 2>&1; then echo ok > "$log.rc"; else echo "failed (exit $?)" > "$log.rc"; fi
' sh "$logs" {}
status=0
for t in "$@"; do
  log="$logs/$(basename "$t").log"
  echo "== $t"
  cat "$log"
  rc=$(cat "$log.rc" 2>/dev/null || echo "did not run")
  if [ "$rc" != ok ]; then
    echo "== $t: $rc"
    status=1
  fi
done
exit $status
