/**
 * `npm run edge`: the edge Worker under `wrangler dev --local` on EDGE_PORT (8787), off the network.
 * ORIGIN_URL, USER_TOKEN_SECRET, TICKET_KEYS, EDGE_ORIGIN_SECRET (and the optional ORIGIN_TIMEOUT_MS,
 * USER_GATE_SHARDS, TICKET_TTL_SECONDS) come from the process environment, else from dev defaults —
 * the same defaults the origin uses in dev. Production secrets go through `wrangler secret put`.
 *
 * The secrets reach wrangler through an owner-only env file (scripts/wrangler-offline.ts), never its
 * command line; plain vars (ORIGIN_URL, timeouts) go as `--var`. wrangler's inspector listens on
 * 127.0.0.1:EDGE_INSPECTOR_PORT (9229).
 */
import { EDGE_DEV_DEFAULTS, EDGE_SECRET_NAMES } from './dev-defaults.js';
import { runWrangler } from './wrangler-offline.js';

const OPTIONAL = ['ORIGIN_TIMEOUT_MS', 'USER_GATE_SHARDS', 'TICKET_TTL_SECONDS'] as const;

const port = process.env.EDGE_PORT ?? '8787';
const inspectorPort = process.env.EDGE_INSPECTOR_PORT || '9229';
const vars: string[] = [];
const secrets: Record<string, string> = {};
for (const [name, fallback] of Object.entries(EDGE_DEV_DEFAULTS)) {
  // Empty = unset, as the origin reads it.
  if (!process.env[name]) console.error(`[edge] ${name} not set; using the dev default`);
  const value = process.env[name] || fallback;
  if ((EDGE_SECRET_NAMES as readonly string[]).includes(name)) {
    secrets[name] = value;
    // wrangler also reads required secrets from its environment (owner-only too); keep it in step.
    process.env[name] = value;
  } else vars.push('--var', `${name}:${value}`);
}
for (const name of OPTIONAL) {
  const value = process.env[name];
  if (value) vars.push('--var', `${name}:${value}`);
}

process.exit(
  await runWrangler(
    ['dev', '--local', '--ip', '127.0.0.1', '--port', port, '--inspector-port', inspectorPort, ...vars],
    { secrets },
  ),
);
