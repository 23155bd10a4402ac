/**
 * `npm run edge`: the edge Worker under `wrangler dev --local` on EDGE_PORT (8787), off the network.
 * ORIGIN_URL, USER_TOKEN_SECRET, TICKET_KEYS, EDGE_ORIGIN_SECRET (and the optional ORIGIN_TIMEOUT_MS,
 * USER_GATE_SHARDS, TICKET_TTL_SECONDS, BOT_CHECK_URL, BOT_CHECK_TIMEOUT_MS and the optional secret
 * BOT_CHECK_SECRET) come from the process environment, else from dev defaults — the same defaults
 * the origin uses in dev. Production secrets go through `wrangler secret put`.
 *
 * The secrets reach wrangler through an owner-only env file (scripts/wrangler-offline.ts), never its
 * command line; plain vars (ORIGIN_URL, timeouts) go as `--var`. wrangler's inspector listens on
 * 127.0.0.1:EDGE_INSPECTOR_PORT (9229).
 *
 * An optional secret needs one more step: wrangler.toml declares `[secrets] required`, and with that
 * list present `wrangler dev` hands the Worker only the secrets it names, silently dropping the rest
 * of the env file — so BOT_CHECK_SECRET never arrived and, with BOT_CHECK_URL set, every request
 * was a 500. It cannot simply join `required`: `wrangler deploy` would then demand it of
 * every deployment, bot check or not. So when an optional secret is set, wrangler runs on a copy of
 * wrangler.toml (in the owner-only throw-away folder) whose `required` list also names it
 * (scripts/edge-dev-config.ts), with the Worker, its assets and its local state where the original has them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDGE_DEV_DEFAULTS, EDGE_SECRET_NAMES, OPTIONAL_SECRET_NAMES } from './dev-defaults.js';
import { devConfigWith } from './edge-dev-config.js';
import { runWrangler } from './wrangler-offline.js';

const OPTIONAL = [
  'ORIGIN_TIMEOUT_MS',
  'USER_GATE_SHARDS',
  'TICKET_TTL_SECONDS',
  'BOT_CHECK_URL',
  'BOT_CHECK_TIMEOUT_MS',
] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

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
const optionalSecrets = OPTIONAL_SECRET_NAMES.filter((name) => process.env[name]);
for (const name of optionalSecrets) secrets[name] = process.env[name]!;
// The Worker would answer every request 500 (edge/settings.ts): say so once, here, instead.
if (process.env.BOT_CHECK_URL && !process.env.BOT_CHECK_SECRET) {
  console.error('[edge] BOT_CHECK_URL is set but BOT_CHECK_SECRET is not: set both, or neither');
  process.exit(2);
}
const devConfig =
  optionalSecrets.length === 0
    ? undefined
    : devConfigWith(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'), ROOT, optionalSecrets);
const persist = devConfig ? ['--persist-to', join(ROOT, '.wrangler', 'state')] : [];
process.exit(
  await runWrangler(
    ['dev', '--local', '--ip', '127.0.0.1', '--port', port, '--inspector-port', inspectorPort, ...persist, ...vars],
    { secrets, config: devConfig },
  ),
);
