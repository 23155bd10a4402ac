#!/usr/bin/env bash
# `npm test`'s static checks: the type-check (`npm run typecheck`) and the linter (`npm run lint`)
# side by side, one core each — both are CPU-bound and independent. Each one's output is printed
# whole once it ends (not interleaved); fails when either fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run -s typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
npm run -s lint >"$out/lint" 2>&1 &
lint=$!
wait "$typecheck"; typecheck_rc=$?
wait "$lint"; lint_rc=$?
for step in typecheck lint; do
  rc_var="${step}_rc"
  if [ "${!rc_var}" = 0 ]; then echo "$step: ok"; else echo "$step: FAILED"; fi
  cat "$out/$step"
done
[ "$typecheck_rc" = 0 ] && [ "$lint_rc" = 0 ]
