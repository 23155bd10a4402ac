/**
 * `npm run token -- --user 42 [--ttl 86400]`: prints a user JWT (HS256, `sub` = user id, `exp`) that
 * the edge accepts (docs/design.md §3) — what the shop's login would issue. Signed with USER_TOKEN_SECRET
 * from the environment, else the edge's dev default, so it matches `npm run edge` / `npm start`.
 */
import { sign } from 'hono/jwt';
import { parseArgs } from 'node:util';
import { isId } from '../contract/ids.js';
import { EDGE_DEV_DEFAULTS } from './dev-defaults.js';

/** Default token lifetime: a day, long enough for a local session. */
export const DEV_TOKEN_TTL_SECONDS = 86_400;

export function userTokenSecret(env: NodeJS.ProcessEnv = process.env): string {
  return env.USER_TOKEN_SECRET || EDGE_DEV_DEFAULTS.USER_TOKEN_SECRET;
}

export async function mintUserToken(
  userId: string,
  opts: { ttlSeconds?: number; secret?: string } = {},
): Promise<string> {
  if (!isId(userId)) throw new Error(`user id must be a decimal positive 64-bit integer, got "${String(userId)}"`);
  const exp = Math.floor(Date.now() / 1000) + (opts.ttlSeconds ?? DEV_TOKEN_TTL_SECONDS);
  return sign({ sub: userId, exp }, opts.secret ?? userTokenSecret(), 'HS256');
}

async function main() {
  const { values } = parseArgs({
    options: { user: { type: 'string' }, ttl: { type: 'string' } },
  });
  const ttlSeconds = values.ttl === undefined ? DEV_TOKEN_TTL_SECONDS : Number(values.ttl);
  if (!values.user || !Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    console.error('usage: npm run token -- --user <id> [--ttl <seconds>]');
    process.exit(2);
  }
  if (!process.env.USER_TOKEN_SECRET) console.error('[token] USER_TOKEN_SECRET not set; using the dev default');
  try {
    console.log(await mintUserToken(values.user, { ttlSeconds }));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
