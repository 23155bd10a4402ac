/**
 * `npm run edge`: the edge Worker under `wrangler dev --local` on EDGE_PORT (8787), off the network.
 * ORIGIN_URL, USER_TOKEN_SECRET, TICKET_KEYS, EDGE_ORIGIN_SECRET (and the optional ORIGIN_TIMEOUT_MS,
 * USER_GATE_SHARDS, TICKET_TTL_SECONDS) come from the process environment, else from dev defaults —
 * the same defaults the origin uses in dev. Production secrets go through `wrangler secret put`.
 */
import { EDGE_DEV_DEFAULTS } from './dev-defaults.js';
import { runWrangler } from './wrangler-offline.js';

const OPTIONAL = ['ORIGIN_TIMEOUT_MS', 'USER_GATE_SHARDS', 'TICKET_TTL_SECONDS'] as const;

const port = process.env.EDGE_PORT ?? '8787';
const vars: string[] = [];
for (const [name, fallback] of Object.entries(EDGE_DEV_DEFAULTS)) {
  // Empty = unset, as the origin reads it.
  if (!process.env[name]) console.error(`[edge] ${name} not set; using the dev default`);
  const value = process.env[name] || fallback;
  // Also in wrangler's environment: it looks there for wrangler.toml's required secrets (else it warns).
  process.env[name] = value;
  vars.push('--var', `${name}:${value}`);
}
for (const name of OPTIONAL) {
  const value = process.env[name];
  if (value) vars.push('--var', `${name}:${value}`);
}

process.exit(await runWrangler(['dev', '--local', '--ip', '127.0.0.1', '--port', port, ...vars]));
