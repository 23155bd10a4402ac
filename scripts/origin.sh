#!/bin/sh
# `npm run origin`: the compiled origin (`node dist/origin/main.js`, from `npm run build`) when
# NODE_ENV=production, otherwise the TypeScript source through tsx (dev, tests). `exec` so that a
# SIGTERM sent to npm reaches the origin and it drains (origin/main.ts).
if [ "$NODE_ENV" = production ]; then
  if [ ! -f dist/origin/main.js ]; then
    echo "dist/origin/main.js is missing: run \`npm run build\` first (production runs the compiled origin)" >&2
    exit 2
  fi
  exec node dist/origin/main.js "$@"
fi
exec tsx origin/main.ts "$@"
