#!/usr/bin/env bash
# `npm test`'s static checks, side by side: the type-check (`npm run typecheck`), the linter
# (`npm run lint`), the unused-code check (`npm run knip`: no unused file, export or dependency;
# its entries in knip.jsonc) and the formatting (`npm run format:check`, Prettier). All are
# CPU-bound and independent. Each one's output is printed whole once it ends (not interleaved);
# fails when any fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
steps=(typecheck lint knip format:check)
declare -A pids
for step in "${steps[@]}"; do
  npm run -s "$step" >"$out/${step//:/-}" 2>&1 &
  pids[$step]=$!
done
failed=0
for step in "${steps[@]}"; do
  if wait "${pids[$step]}"; then echo "$step: ok"; else echo "$step: FAILED"; failed=1; fi
  cat "$out/${step//:/-}"
done
exit "$failed"
