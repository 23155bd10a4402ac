#!/usr/bin/env bash
# `npm test` after its set-up (`pretest`): the static checks and the bundle check
# (scripts/static-checks.sh, then `npm run edge:check`) side by side with `vitest run`.
#
# The test files spend part of their time waiting (on a browser, a child process, a window that opens
# on the clock), so the two cores are not always busy. The checks run at the lowest CPU priority
# (`nice -n 19`): they take the cores only while the test files leave them idle, so they add little to
# the suite's wall time and little load the tests would feel. The checks' output is printed whole once they
# end, the tests' as they run. A failing check stops the tests at once, so a type
# error is reported in minutes, not after the suite; the exit code is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
nice -n 19 bash -c 'bash scripts/static-checks.sh && npm run -s edge:check' >"$out" 2>&1 &
checks=$!
node_modules/.bin/vitest run "$@" &
tests=$!
trap 'kill -TERM "$checks" "$tests" 2>/dev/null; rm -f "$out"' EXIT
trap 'exit 130' INT TERM

# The checks' output, whole, as soon as they end (between two test files' lines), so the tests'
# summary stays the last thing printed.
if wait "$checks"; then
  echo "── static checks and bundle check: ok ──"
  cat "$out"
else
  checks_rc=$?
  cat "$out"
  echo "── static checks and bundle check: FAILED (rc $checks_rc); stopping the tests ──" >&2
  kill -TERM "$tests" 2>/dev/null
  wait "$tests"
  exit "$checks_rc"
fi
wait "$tests"
